#pragma once
// The typed contract of the representation audit's results.json (issue 38), as lvlm_results.h is
// the lvlm-counterfactual audit's: each section as a struct with ONE to_json (used by the audit
// that writes it) and ONE lenient from_json (used by whoever reads it back), so that the
// section's keys are named in src/report/representation_results.cpp only. Sections so far:
// analyses.distribution, written by the audit
// (src/audits/representation/representation_audit_distribution.cpp) and read by power
// (power_pilot.h: representation_power_answers).
//
// from_json is lenient, as lvlm_results.h's: a missing number reads as NaN, a missing object as
// absent (std::nullopt), a missing array as empty; it never throws on a well-formed Json.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/io/json.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

// The name of the distribution section: its spec key and its key in results.json's analyses.
extern const char* const kDistributionSection;

struct ShareInterval {
  double lower = stats::kNaN, upper = stats::kNaN;
};

// One prompt's labelled observations of one attribute.
struct DistributionPrompt {
  std::string prompt, group, key;
  double images = stats::kNaN;           // a count
  double labelled_images = stats::kNaN;  // written as a real number (14.0), as the audit has it
  double no_face_rate = stats::kNaN;     // NaN: null (whole-image labels)
  double several_faces_rate = stats::kNaN;
  double n = stats::kNaN;      // observations labelled with a class (a count)
  double other = stats::kNaN;  // observations with another label (a count)
  double other_rate = stats::kNaN;
  std::vector<double> counts;  // per class (counts)
  bool small = false;
  // Per class; absent (written null) when no observation has a class.
  std::optional<std::vector<double>> shares;
  std::vector<ShareInterval> wilson, simultaneous;  // with shares only
};

struct DistributionAttribute {
  std::string attribute;
  std::vector<std::string> classes;
  std::vector<std::pair<std::string, double>> other_labels;  // label, count
  std::vector<DistributionPrompt> prompts;
};

// analyses.distribution.
struct DistributionSection {
  std::string interval;
  double ci = stats::kNaN;
  std::string unit, labeller;
  std::vector<DistributionAttribute> attributes;
};

// The section as results.json holds it.
Json to_json(const DistributionSection& section);
// The section of a results.json's analyses object (std::nullopt when it has none).
std::optional<DistributionSection> distribution_from_json(const Json& analyses);
// The JSON pointer of prompt p of attribute a of the section.
std::string distribution_prompt_pointer(std::size_t a, std::size_t p);

}  // namespace vlbias
