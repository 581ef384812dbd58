#pragma once
// Image-text association metrics over a prompt manifest (src/metrics/social_perception.cpp):
// cos and Delta cos per image x social dimension (paper 001), markedness (001),
// trait-pair confidence (004).
//
// Every function here starts from the prompt x image cosine matrix
//   cos(p, i) = cosine_matrix(prompts, images)   shape (prompts, images), row p = manifest row p
// so one GEMM serves every metric. Means are accumulated in double.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/io/table/table.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

// ------------------------------------------------------------ prompt manifest

enum class PromptRole { Attribute, Neutral, Group };

// A manifest (see prompt_sets.h for its columns) parsed for the metrics.
struct PromptManifest {
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  struct Dimension {
    // "warmth" when the manifest has one valence for this dimension name,
    // "agency+" / "agency-" when it has both.
    std::string label;
    std::string dimension;
    std::string valence;
    std::vector<std::size_t> rows;  // manifest rows of its prompts (words x templates)
  };
  struct GroupPrompt {
    std::string attribute;  // the dimension column: "race"
    std::string word;       // "white"
    std::size_t row = 0;
    std::size_t template_index = 0;
  };

  std::size_t rows = 0;
  std::vector<std::string> texts;                // per row
  std::vector<std::string> words;                // per row
  std::vector<PromptRole> roles;                 // per row
  std::vector<std::string> templates;            // distinct, first-appearance order
  std::vector<std::size_t> template_of_row;      // index into templates
  std::vector<Dimension> dimensions;             // attribute rows, first-appearance order
  std::vector<std::size_t> neutral_of_template;  // manifest row, kNone when absent
  std::vector<GroupPrompt> group_prompts;

  // Index of the dimension with this label; InputError listing the labels if absent.
  std::size_t dimension_index(std::string_view label) const;
};

// Requires columns text, word, dimension, valence, template (role optional).
// InputError (naming the file and row): a missing required column, an attribute
// row with an empty dimension, an unknown role, valence other than "+", "-", "",
// two neutral prompts for one template, no rows.
PromptManifest parse_prompt_manifest(const Table& manifest);

// Checks that `prompt_image_cos` has manifest.rows rows; InputError naming both.
void check_prompt_rows(MatrixView prompt_image_cos, const PromptManifest& manifest,
                       std::string_view prompts_name);

// The prompt x image cosine matrix, cos(p, i) at row p, column i, after checking that
// both have the same dimension and the prompts match the manifest's rows (InputError
// naming both files and shapes). A zero-length embedding row is an InputError.
Matrix prompt_image_cosines(MatrixView prompts, MatrixView images, const PromptManifest& manifest,
                            std::string_view prompts_name, std::string_view images_name);

// ------------------------------------------------------------------ associate

// Per image x dimension scores, row-major (image i, dimension d) at i * dims + d.
struct ImageDimensionScores {
  std::vector<std::string> dimensions;  // labels, in manifest order
  std::size_t images = 0;
  // cos(i, D) = mean over words d in D and templates t of cos(i, text(d, t)).
  std::vector<double> cos;
  // Delta cos(i, D) = mean over d, t of [cos(i, text(d,t)) - cos(i, text(neutral, t))].
  // Empty when has_delta is false.
  std::vector<double> delta_cos;
  bool has_delta = false;
  std::size_t dims() const { return dimensions.size(); }
};

// docs/methods.md#cos-delta-cos (Hausladen et al. Eq. 1 and 2): a mean of cosines, never the
// cosine of a mean embedding. Delta cos needs a neutral prompt for every template a
// dimension uses: with require_delta it is an InputError naming the template when
// one is missing; otherwise has_delta is false and delta_cos empty.
ImageDimensionScores associate(MatrixView prompt_image_cos, const PromptManifest& manifest,
                               bool require_delta = true);

// ----------------------------------------------------------------- markedness

struct MarkednessOptions {
  // Image table columns whose levels are named by group prompts ("race", "gender").
  // A level matches a group prompt whose word equals it ignoring ASCII case.
  std::vector<std::string> attributes;
  std::size_t bootstrap = 1000;  // percentile bootstrap of the share over images (0: none)
  double ci_level = 0.95;
  std::uint64_t seed = 0;
  std::size_t min_group_size = 2;
};

struct MarkednessGroup {
  std::string attribute;         // "race"
  std::string level;             // "White"
  std::string word;              // the group prompt's word, "white"; "" when none matched
  std::size_t n = 0;             // images of this level
  std::size_t marked = 0;        // images whose neutral score > group score (strictly)
  double percent = stats::kNaN;  // 100 * marked / n
  stats::Interval ci;            // of percent
  // Per template (manifest template order), the same share using that template's
  // neutral and group prompt only; NaN where the template lacks one of them.
  std::vector<double> percent_by_template;
  bool small = false;
  std::string note;  // e.g. no group prompt names this level
};

struct MarkednessReport {
  std::vector<std::string> templates;
  std::vector<MarkednessGroup> groups;  // attribute order, then level order (sorted)
  std::size_t rows_missing_key = 0;
};

// Markedness (%) (Wolfe and Caliskan 2022; Hausladen et al. App. B.2): for the
// images of one level, the share whose neutral-prompt score is strictly greater
// than the score of the prompt naming the level. A score is the mean over
// templates having both prompts of cos(i, prompt). `table` has one row per image
// (row i = column i of prompt_image_cos).
MarkednessReport markedness(MatrixView prompt_image_cos, const PromptManifest& manifest,
                            const Table& table, const MarkednessOptions& options);

// ------------------------------------------------------------ trait confidence

enum class ConfidenceScale { Raw, Logit };
ConfidenceScale parse_confidence_scale(std::string_view name);  // "raw" | "logit"
const char* to_string(ConfidenceScale scale);

struct TraitConfidence {
  std::vector<std::string> pairs;   // the dimension names, "smart/dumb"
  std::vector<std::string> first;   // the "+" words
  std::vector<std::string> second;  // the "-" words
  std::size_t images = 0;
  std::vector<double> confidence;  // images x pairs, row-major
};

// Baherwani and Vincent (paper 004): confidence in the first trait of a pair,
//   c = exp(s0) / (exp(s0) + exp(s1)) = 1 / (1 + exp(s1 - s0)),
// s = the mean over the pole's prompts of cos(i, prompt) (Raw, the paper) or
// logit_scale * that (Logit, as CLIP zero-shot classification: exp(logit_scale),
// about 100). Pairs are the manifest dimensions that have both a "+" and a "-"
// pole; InputError when there is none, or logit_scale is not finite and > 0.
TraitConfidence trait_confidence(MatrixView prompt_image_cos, const PromptManifest& manifest,
                                 ConfidenceScale scale, double logit_scale = 100.0);

}  // namespace vlbias
