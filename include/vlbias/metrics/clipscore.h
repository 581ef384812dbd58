#pragma once
// CLIPScore: image-text agreement of paired CLIP embeddings (docs/methods.md#clipscore,
// consistency indicator). Three variants, named in every output because papers
// mix them up:
//   raw           cos(image, text)                       (DIG-In code)
//   hessel        2.5 * max(cos, 0)                      (Hessel et al. 2021, CLIP-S, w = 2.5)
//   torchmetrics  max(100 * cos, 0), averaged per sample (torchmetrics CLIPScore docs)
#include <cstddef>
#include <string>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

enum class ClipScoreVariant { Raw, Hessel, Torchmetrics };

// "raw" | "hessel" | "torchmetrics"; anything else is a UsageError listing them.
ClipScoreVariant parse_clipscore_variant(const std::string& name);
std::string to_string(ClipScoreVariant variant);
// The variant's score of one cosine.
double clipscore_from_cosine(double cosine, ClipScoreVariant variant);

struct ClipScores {
  ClipScoreVariant variant = ClipScoreVariant::Raw;
  std::vector<double> cosine;  // one per image, true cosine (accumulated in double)
  std::vector<double> score;   // clipscore_from_cosine(cosine[i], variant)
};

// Scores image i against text text_row[i]. `images` is n x d, `texts` m x d
// (row-major, row = item; both not necessarily normalised). `text_row` empty:
// texts must have n rows (pairs) or 1 row (every image against that text).
// Otherwise text_row.size() == n and each entry < m. A zero-norm row, shape
// mismatches and empty inputs are InputErrors naming the row.
ClipScores clipscores(MatrixView images, MatrixView texts, const std::vector<std::size_t>& text_row,
                      ClipScoreVariant variant);

// Summary of scores: describe() plus the requested percentiles (numpy linear).
struct ClipScoreSummary {
  stats::Summary summary;
  std::vector<double> percentile_levels;  // e.g. {10, 50, 90}
  std::vector<double> percentile_values;
};
ClipScoreSummary summarize_clipscores(const std::vector<double>& scores,
                                      const std::vector<double>& percentile_levels);

}  // namespace vlbias
