#pragma once
// A finished audit as the pilot of a power analysis (src/audits/power_pilot.cpp;
// docs/methods.md#power): the tests of its results.json whose design the file states in full,
// each as a stats::PowerDesign with the pilot's own group sizes and standard deviations, its
// own test and its own correction family, and the power questions asked of each.
//
// Supported tests:
//   analyses.confidence.tests[]          trait-pairs: ANOVA or Welch (Student) on confidence
//                                        per group; Holm over every test of the table. The
//                                        effect is planted on the group with the largest sd^2/n
//                                        (the hardest to detect).
//   analyses.association.contrasts.results[]
//                                        a group's mean (Delta) cos against the unweighted mean
//                                        of the others (Welch contrast); Holm over every
//                                        contrast; the design is the dimension's groups with
//                                        n >= 2, as the audit formed it.
//   analyses.group_tests.results[]       lvlm-counterfactual: Friedman over the complete
//                                        counterfactual sets (stats::PowerTest::Friedman): G
//                                        groups, B = complete_sets blocks (with clusters: B =
//                                        clusters of m = round(complete_sets / clusters) sets),
//                                        pilot_variance {residual_sd, set_sd, cluster_sd};
//                                        Holm over every Friedman p of the table; the effect is
//                                        on group 0 (the groups are exchangeable in the model).
//   analyses.filtered.test               geo-diversity: the chi-square test of equal
//                                        refused-or-filtered rates (ChiSquare) with each
//                                        region's requested n, the pooled rate as the base
//                                        rate, the effect on the region with the fewest
//                                        requests; one test, no correction.
//   analyses.scores.columns[].by[].test  representation and geo-diversity scores by group: a
//                                        rate's chi-square (ChiSquare, each group's n, the
//                                        pooled rate, the effect on the smallest group); a
//                                        mean's Kruskal-Wallis simulated as ANOVA (each group's
//                                        n and sd; groups of one image or no variance: no
//                                        entry); Holm over every test of the section.
// Each test's family is the number of tests of its table with a p-value. The tests power
// cannot simulate from results.json are listed by unsupported_tests with the reason: the
// LVLM per-group permutation tests and paired MaxGap tests, the geo-diversity bootstrap gaps,
// a filtered-rate test with a pooled rate of 0 or 1, the visual-stereotypes pull tests. A
// pilot with none of the supported tests is an InputError naming the kind and those reasons.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/audits/audit_types.h"
#include "vlbias/io/json.h"
#include "vlbias/report/lvlm_results.h"
#include "vlbias/report/pilot_sections.h"
#include "vlbias/stats/power.h"

namespace vlbias {

struct PilotTest {
  std::string analysis;  // "confidence" or "association"
  std::string label;     // what is compared, in words (HTML-free)
  std::string pointer;   // JSON pointer of the test's entry in results.json
  double p_holm = 0;     // as results.json holds it (NaN: the test was undefined)
  stats::PowerDesign design;
};

// The supported tests of an audit's typed sections (report/pilot_sections.h: an audit's own, or
// pilot_sections_from_json of a results.json; `source` names it in errors), with design.alpha =
// alpha. InputError when a supported table lacks the group sizes or standard deviations (a
// results.json written before they were recorded: rerun the audit), when the results.json read
// was not an object, or when there is no supported test at all; UsageError for alpha outside
// (0, 1). Power reads no Json: every section comes typed.
std::vector<PilotTest> pilot_tests(const PilotSections& sections, double alpha,
                                   const std::string& source);
// The same for a parsed results.json (pilot_sections_from_json).
std::vector<PilotTest> pilot_tests(const Json& results, double alpha, const std::string& source);

struct PowerQuestions {
  double effect = 0;   // > 0: power and n per group at this effect; 0: not asked
  double power = 0.8;  // the target power
  std::size_t replicates = 1000;
  std::uint64_t seed = 0;   // test t draws with derive_seed(seed, t)
  bool sample_size = true;  // with an effect: also the n per group needed
};

// A representation audit's pilot (sections of kind representation): its goodness-of-fit
// tests of each prompt's class counts (analyses.distribution's n per prompt and attribute, K
// classes) have a closed-form power (noncentral chi-square, stats/goodness_of_fit.h), so they are
// answered analytically, not simulated: per prompt and attribute {analysis: "tests", label,
// pointer (the prompt's distribution entry), n, classes, alpha (the level / prompts: the first
// step of Holm), mde: {cohens_w, share_gap_from_parity (two classes: w / 2)}, and with
// q.effect > 0, read as Cohen's w: at_effect: {effect, power}, sample_size: {n, power}}. A
// prompt without a labelled observation gets mde null and a note. Empty for other kinds.
std::vector<Json> representation_power_answers(const PilotSections& sections, double alpha,
                                               const PowerQuestions& q);

// One test's answers as JSON (to_json of a TestPower, include/vlbias/report/power_results.h):
// {analysis, label, pointer, test, correction, family, alpha, groups: [{n, sd}], target, p_holm,
// significant, (chi_square) base_rate, (friedman) blocks ("sets" or "clusters"),
// sets_per_cluster, set_sd, cluster_sd, mde: {effect, power, se, analytic_power, note?}, and
// with an effect: at_effect: {effect, power, se, analytic_power}, sample_size: {n_per_group,
// power, se, note?}}. Power and se are simulated with `replicates` replicates; analytic_power is
// stats::analytic_power at the same effect.
Json answer_power_questions(const PilotTest& test, std::size_t index,
                            const PowerQuestions& questions);

// The tests of the sections that power does not support, each {tests: JSON pointer pattern,
// reason}.
std::vector<Json> unsupported_tests(const PilotSections& sections);

// The lvlm-counterfactual audit's pilot from its typed sections (lvlm_results.h), as the audit
// holds them: its Friedman tests (as pilot_tests finds them in its results.json) and its tests
// power does not support (`group_tests`: nullptr when the section did not run; `paired`: whether
// analyses.paired ran).
std::vector<PilotTest> lvlm_pilot_tests(const LvlmGroupTests& group_tests, double alpha,
                                        const std::string& source);
std::vector<Json> lvlm_unsupported_tests(const LvlmGroupTests* group_tests, bool paired);

// The seed stream of analyses.power: add_power_section's seed is derive_seed(spec.seed,
// kPowerSeedStream) in the geo-diversity and lvlm-counterfactual audits ("power" in ASCII). The
// dual-encoder audits number their streams 1 to 8 (kSeedPower = 7 in dual_encoder_audit.cpp)
// and keep that number: a new value would change every power result they have written.
inline constexpr std::uint64_t kPowerSeedStream = 0x706f776572;

// The typed sections an audit's analyses built (each AnalysisOutput::pilot, moved out and
// merged), as its power analysis reads them; `kind` is the audit's kind.
PilotSections pilot_sections_of(std::vector<std::pair<std::string, AnalysisOutput>>& sections,
                                const std::string& kind);

// analyses.power of an audit (audit_types.h's PowerSpec), its own sections as the pilot (the
// AnalysisOutput::pilot parts it built, merged): the `power` entry of every null test of
// `results` (add_power_to_null_tests, seeded with `seed`) and analyses.power {definition, power,
// alpha, replicates, null_tests, not_supported}; a note instead when the audit ran no supported
// test.
void add_power_section(Json& results, const PilotSections& sections, const PowerSpec& spec,
                       std::uint64_t seed);
// The same with the pilot's tests and unsupported tests given (an audit that holds its sections
// typed, e.g. lvlm_pilot_tests with spec.alpha), not read back from `results`.
void add_power_section(Json& results, const std::vector<PilotTest>& tests,
                       std::vector<Json> not_supported, const PowerSpec& spec, std::uint64_t seed);

// For an audit's own results and sections: writes `power` (the answer above, without the design's
// groups) into the entry of every supported test that is not significant at `alpha` after Holm, so
// the report can say how large a gap the study could have found. Returns how many (0 when the
// audit ran no supported test).
std::size_t add_power_to_null_tests(Json& results, const PilotSections& sections, double alpha,
                                    const PowerQuestions& questions);

}  // namespace vlbias
