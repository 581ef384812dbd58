#pragma once
// The typed contract of the dual-encoder audits' results.json (social-perception and
// trait-pairs), as lvlm_results.h is the lvlm-counterfactual audit's: each section as a struct
// with ONE to_json (used by the audit that writes it) and ONE lenient from_json (used by
// whoever reads it back), so that the section's keys are named in
// src/report/dual_encoder_results.cpp only. Sections so far: analyses.confidence (trait-pairs),
// written by src/audits/dual_encoder/dual_encoder_audit_confidence.cpp, and analyses.association
// (both kinds, and `vlbias metric associate`), written by
// src/audits/dual_encoder/dual_encoder_audit_analyses.cpp; both read by power (power_pilot.h).
//
// from_json is lenient, as lvlm_results.h's: a missing number reads as NaN, a missing object as
// absent (std::nullopt), a missing array as empty; it never throws on a well-formed Json.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "vlbias/io/json.h"
#include "vlbias/report/power_results.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

// The name of the trait-pairs confidence section: its spec key (analyses.confidence), its key in
// results.json's analyses and power's analysis of it (`vlbias power --analysis confidence`).
extern const char* const kConfidenceSection;

// One group's mean confidence in a pair's first trait.
struct ConfidenceGroup {
  Json key;                // the group's key object
  double n = stats::kNaN;  // a count (NaN when read back without one)
  double mean = stats::kNaN, sd = stats::kNaN;
  std::optional<stats::Interval> ci;  // with a bootstrap only
  bool small = false;
};

struct ConfidencePair {
  std::string pair, first, second;
  double mean = stats::kNaN;  // over every image
  std::vector<ConfidenceGroup> groups;
};

// One test across the levels of a factor (ANOVA, Welch, Student), with Holm and BH over every
// test of the section; each level's n and sd are the pilot variance power reads.
struct ConfidenceTest {
  std::string pair, factor, within, within_level;
  stats::TestResult result;
  double p_holm = stats::kNaN, p_bh = stats::kNaN;
  struct Group {
    std::string level;
    double n = stats::kNaN;  // a count (NaN when read back without one)
    double mean = stats::kNaN, sd = stats::kNaN;
  };
  std::vector<Group> groups;
  std::optional<TestPower> power;  // a null test's, with analyses.power (power_results.h)
};

// analyses.confidence.
struct ConfidenceSection {
  std::string definition, scale;
  std::optional<double> logit_scale;  // the logit scale only
  std::vector<ConfidencePair> pairs;
  std::vector<ConfidenceTest> tests;
  std::string adjustment;
};

// The section as results.json holds it.
Json to_json(const ConfidenceSection& section);
// The section of a results.json's analyses object (std::nullopt when it has none).
std::optional<ConfidenceSection> confidence_from_json(const Json& analyses);
// The JSON pointers of test i and of group g of pair p of the section.
std::string confidence_test_pointer(std::size_t i);
std::string confidence_group_pointer(std::size_t p, std::size_t g);

// The name of the association section: its spec key, its key in results.json's analyses and
// power's analysis of it (`vlbias power --analysis association`).
extern const char* const kAssociationSection;

// One group's scores on one dimension. The group's sd is of the section's main score: Delta cos
// with has_delta (written delta_cos_sd), cos otherwise (written cos_sd): the contrasts' pilot
// variance power reads.
struct AssociationGroup {
  Json key;                // the group's key object
  double n = stats::kNaN;  // a count (NaN when read back without one)
  double cos_mean = stats::kNaN;
  double delta_cos_mean = stats::kNaN;  // with has_delta only
  double sd = stats::kNaN;
  std::optional<stats::Interval> ci;  // with a bootstrap only
  bool small = false;
};

struct AssociationDimension {
  std::string dimension, name, valence;
  double prompts = stats::kNaN;  // a count
  double cos_mean = stats::kNaN;
  double delta_cos_mean = stats::kNaN;  // with has_delta only
  std::vector<AssociationGroup> groups;
};

// A group's mean against the unweighted mean of the other groups' means, within a dimension.
struct AssociationContrast {
  Json key;
  std::string dimension;
  double n = stats::kNaN;  // a count
  double estimate = stats::kNaN;
  double ci_lower = stats::kNaN, ci_upper = stats::kNaN, ci_level = stats::kNaN;
  double se = stats::kNaN, df = stats::kNaN, t = stats::kNaN;
  double p_value = stats::kNaN, p_holm = stats::kNaN, p_bh = stats::kNaN;
  std::string note;                // written when not empty
  std::optional<TestPower> power;  // a null contrast's, with analyses.power (power_results.h)
};

// analyses.association.
struct AssociationSection {
  std::vector<Json> empty_groups;  // the key objects of empty cells; written when not empty
  double images = stats::kNaN;     // a count
  std::vector<std::string> templates;
  std::string contrasts_definition;
  std::vector<AssociationContrast> contrasts;
  bool has_delta = false;
  std::vector<std::string> by;
  std::vector<AssociationDimension> dimensions;
};

// The section as results.json holds it.
Json to_json(const AssociationSection& section);
// The section of a results.json's analyses object (std::nullopt when it has none).
std::optional<AssociationSection> association_from_json(const Json& analyses);
// The JSON pointers of contrast i and of group g of dimension d of the section.
std::string association_contrast_pointer(std::size_t i);
std::string association_group_pointer(std::size_t d, std::size_t g);
// The pointer of the section's dimensions (named in errors).
std::string association_dimensions_pointer();

}  // namespace vlbias
