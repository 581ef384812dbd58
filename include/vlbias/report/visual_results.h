#pragma once
// The typed contract of the visual-stereotypes audit's results.json (paper 000, ViSAGe; issue
// 38): each section as a struct with ONE to_json (used by the audit that writes it,
// src/audits/visual/visual_audit_sections.cpp) and ONE lenient from_json (used by the report
// page, visual_page.cpp, and summary.json, summary_kinds.cpp), so that the sections' keys are
// named in src/report/visual_results.cpp only. Sections: analyses.stereotypes, likelihood,
// salience and pull.
//
// from_json is lenient, as lvlm_results.h's: a missing number reads as NaN, a missing object as
// absent (std::nullopt), a missing array as empty; it never throws on a well-formed Json.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vlbias/io/json.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

// The sections' names: their keys in results.json's analyses, their spec keys under `analyses`
// (likelihood, salience, pull) and their report sections. The one place each word is written.
extern const char* const kVisualStereotypesSection;
extern const char* const kVisualLikelihoodSection;
extern const char* const kVisualSalienceSection;
extern const char* const kVisualPullSection;

// A bootstrap interval as the sections hold it: a bound that is not finite (theta's upper bound
// when L(random) = 0) is NaN (written null) with its flag set.
struct VisualInterval {
  stats::Interval ci;
  bool lower_infinite = false, upper_infinite = false;
};
// The interval of a computed one (its infinite bounds as NaN and a flag).
VisualInterval visual_interval(const stats::Interval& ci);

// analyses.stereotypes: the visual stereotypes taken from SeeGULL. Counts are whole numbers in
// an audit's own results; read back, whatever the file holds (NaN when absent).
struct VisualStereotypesResult {
  double attribute_rows = stats::kNaN, attributes_distinct = stats::kNaN;
  double attributes_repeated = stats::kNaN, attributes_visual = stats::kNaN;
  std::vector<std::string> rating_columns;
  double seegull_rows = stats::kNaN, stereotype_rows = stats::kNaN;
  double visual_stereotypes = stats::kNaN, attributes_used = stats::kNaN;
  double identities = stats::kNaN, identities_with_one = stats::kNaN;
  double identities_with_more_than_one = stats::kNaN, identities_with_at_least_min = stats::kNaN;
  double offensiveness_from_merged_column = stats::kNaN;
};

// An identity's bootstrap intervals. (The structs held in a std::optional stand at namespace
// scope: clang finds a nested one with member initializers not default-constructible inside its
// enclosing class.)
struct VisualLikelihoodIntervals {
  VisualInterval l_stereo, l_random, theta, offensiveness;
};

// One identity of analyses.likelihood: its likelihoods, theta and offensiveness.
struct VisualLikelihoodIdentity {
  std::string identity, region;
  bool included = false;
  double visual_stereotypes = stats::kNaN, shown_stereotypes = stats::kNaN;
  double shown_random = stats::kNaN, images = stats::kNaN, present_stereotypes = stats::kNaN;
  double l_stereo = stats::kNaN, l_random = stats::kNaN, theta = stats::kNaN;
  std::string theta_status;  // finite, infinite or undefined
  double offensiveness = stats::kNaN, mean_offensiveness = stats::kNaN;
  std::optional<VisualLikelihoodIntervals> ci;  // absent: no bootstrap
};

// One region of analyses.likelihood: means over its included identities, its pooled ratio.
struct VisualLikelihoodRegion {
  std::string region;
  double identities = stats::kNaN;
  double mean_l_stereo = stats::kNaN, mean_l_random = stats::kNaN, pooled_ratio = stats::kNaN;
  double mean_finite_theta = stats::kNaN;
  double infinite = stats::kNaN, undefined = stats::kNaN;
  double mean_offensiveness = stats::kNaN;
};

// The likelihood ratio pooled over the included identities.
struct VisualLikelihoodPooled {
  double identities = stats::kNaN, finite = stats::kNaN, infinite = stats::kNaN;
  double undefined = stats::kNaN;
  double ratio = stats::kNaN, mean_finite_theta = stats::kNaN, median_theta = stats::kNaN;
  bool median_theta_infinite = false;
  std::optional<VisualInterval> ci_ratio;  // absent: no bootstrap
};

// analyses.likelihood.
struct VisualLikelihoodResult {
  std::string definition, aggregation;
  bool none_as_random = false;
  double min_stereotypes = stats::kNaN;
  struct AnnotationCounts {
    double rows = stats::kNaN, empty_rows_skipped = stats::kNaN, runs = stats::kNaN;
    double duplicate_runs_dropped = stats::kNaN, duplicate_rows_dropped = stats::kNaN;
    double judgements = stats::kNaN, images = stats::kNaN, identities = stats::kNaN;
    double attributes = stats::kNaN;
  } annotations;
  std::optional<VisualLikelihoodPooled> pooled;  // absent in a section read back without
  std::vector<VisualLikelihoodIdentity> identities;
  std::vector<VisualLikelihoodRegion> regions;
};

// One stereotype among an identity's most salient ones in the captions.
struct VisualSalienceTop {
  std::string attribute;
  double rank = stats::kNaN, salience = stats::kNaN, count = stats::kNaN;
  std::optional<double> likelihood;  // L(a, id) when the audit has annotations
};

struct VisualSalienceIdentity {
  std::string identity, region;
  double captions = stats::kNaN;
  std::vector<VisualSalienceTop> top_stereotypes;
};

// With annotations: how many top stereotypes were annotated and marked present.
struct VisualSalienceAnnotated {
  double top_stereotypes_annotated = stats::kNaN, top_stereotypes_marked_present = stats::kNaN;
  double share_marked_present = stats::kNaN;
};

// analyses.salience.
struct VisualSalienceResult {
  std::string definition;
  double smoothing = stats::kNaN, top = stats::kNaN;
  double captions = stats::kNaN, identities = stats::kNaN, vocabulary = stats::kNaN;
  double matches = stats::kNaN, top_stereotypes = stats::kNaN;
  std::vector<VisualSalienceIdentity> identities_detail;
  std::optional<VisualSalienceAnnotated> annotated;  // absent: no annotations
};

// One identity of analyses.pull: its similarities, pull and permutation test.
struct VisualPullIdentity {
  std::string identity, region;
  double n_default = stats::kNaN, n_stereotypical = stats::kNaN;
  double n_non_stereotypical = stats::kNaN;
  double s_d_s = stats::kNaN, s_d_ns = stats::kNaN, s_s_ns = stats::kNaN;
  double mean_similarity = stats::kNaN, pull = stats::kNaN;
  double s_d_d = stats::kNaN, s_s_s = stats::kNaN, s_ns_ns = stats::kNaN;
  struct Test {
    double p_value = stats::kNaN, p_holm = stats::kNaN, p_bh = stats::kNaN;
    std::string alternative, method;
    double resamples = stats::kNaN;
    std::uint64_t seed = 0;
  } test;
};

// One region of analyses.pull: means over its identities with a pull.
struct VisualPullRegion {
  std::string region;
  double identities = stats::kNaN, positive_pull = stats::kNaN;
  double significant_holm_05 = stats::kNaN;
  double mean_s_d_s = stats::kNaN, mean_s_d_ns = stats::kNaN, mean_s_s_ns = stats::kNaN;
  double mean_similarity = stats::kNaN, mean_pull = stats::kNaN;
};

// analyses.pull.
struct VisualPullResult {
  std::string definition;
  double identities = stats::kNaN, tested = stats::kNaN, positive_pull = stats::kNaN;
  double permutations = stats::kNaN;
  std::string alternative;
  std::vector<VisualPullIdentity> per_identity;
  std::vector<VisualPullRegion> regions;
};

// The sections as results.json holds them.
Json to_json(const VisualStereotypesResult& section);
Json to_json(const VisualLikelihoodResult& section);
Json to_json(const VisualSalienceResult& section);
Json to_json(const VisualPullResult& section);
// The section of a results.json's analyses object (std::nullopt when it has none).
std::optional<VisualStereotypesResult> visual_stereotypes_from_json(const Json& analyses);
std::optional<VisualLikelihoodResult> visual_likelihood_from_json(const Json& analyses);
std::optional<VisualSalienceResult> visual_salience_from_json(const Json& analyses);
std::optional<VisualPullResult> visual_pull_from_json(const Json& analyses);

// JSON pointers into results.json: a section's own ("/analyses/likelihood"), its identity i
// (likelihood's identities, pull's per_identity), its region i, salience's identity i's top
// stereotype k.
std::string visual_section_pointer(const char* section);
std::string visual_identity_pointer(const char* section, std::size_t i);
std::string visual_region_pointer(const char* section, std::size_t i);
std::string visual_salience_top_pointer(std::size_t i, std::size_t k);

}  // namespace vlbias
