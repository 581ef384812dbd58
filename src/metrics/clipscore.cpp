// CLIPScore variants (docs/methods.md#clipscore; Hessel et al. 2021; torchmetrics; DIG-In).
#include "vlbias/metrics/clipscore.h"

#include <algorithm>
#include <cmath>

#include "vlbias/core/error.h"

namespace vlbias {

ClipScoreVariant parse_clipscore_variant(const std::string& name) {
  if (name == "raw") return ClipScoreVariant::Raw;
  if (name == "hessel") return ClipScoreVariant::Hessel;
  if (name == "torchmetrics") return ClipScoreVariant::Torchmetrics;
  VLBIAS_FAIL(UsageError, "Unknown CLIPScore variant '{}'; expected raw, hessel or torchmetrics.",
              name);
}

std::string to_string(ClipScoreVariant variant) {
  switch (variant) {
    case ClipScoreVariant::Raw:
      return "raw";
    case ClipScoreVariant::Hessel:
      return "hessel";
    case ClipScoreVariant::Torchmetrics:
      return "torchmetrics";
  }
  return "raw";
}

double clipscore_from_cosine(double cosine, ClipScoreVariant variant) {
  switch (variant) {
    case ClipScoreVariant::Raw:
      return cosine;
    case ClipScoreVariant::Hessel:
      return 2.5 * std::max(cosine, 0.0);  // CLIP-S = w * max(cos, 0), w = 2.5
    case ClipScoreVariant::Torchmetrics:
      return std::max(100.0 * cosine, 0.0);  // torchmetrics: 100 * cos clamped at 0
  }
  return cosine;
}

namespace {

double row_norm(const float* x, std::size_t d) {
  double s = 0.0;
  for (std::size_t k = 0; k < d; ++k) s += static_cast<double>(x[k]) * x[k];
  return std::sqrt(s);
}

}  // namespace

ClipScores clipscores(MatrixView images, MatrixView texts, const std::vector<std::size_t>& text_row,
                      ClipScoreVariant variant) {
  const std::size_t n = images.rows;
  VLBIAS_CHECK(n > 0, InputError, "CLIPScore: the image embeddings have no rows.");
  VLBIAS_CHECK(texts.rows > 0, InputError, "CLIPScore: the text embeddings have no rows.");
  VLBIAS_CHECK(images.cols == texts.cols, InputError,
               "CLIPScore: image embeddings have {} columns but text embeddings {}; both must "
               "come from the same model.",
               images.cols, texts.cols);
  if (text_row.empty()) {
    VLBIAS_CHECK(texts.rows == n || texts.rows == 1, InputError,
                 "CLIPScore: {} images but {} texts; expected one text per image, a single text "
                 "for all images, or a text-row column.",
                 n, texts.rows);
  } else {
    VLBIAS_CHECK(text_row.size() == n, InputError,
                 "CLIPScore: {} images but {} text-row entries; expected one per image.", n,
                 text_row.size());
  }
  std::vector<double> text_norms(texts.rows);
  for (std::size_t j = 0; j < texts.rows; ++j) {
    text_norms[j] = row_norm(texts.row(j), texts.cols);
    VLBIAS_CHECK(text_norms[j] > 0.0, InputError,
                 "CLIPScore: text embedding row {} is all zeros; its cosine is undefined.", j);
  }
  ClipScores out;
  out.variant = variant;
  out.cosine.resize(n);
  out.score.resize(n);
  const std::size_t d = images.cols;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t j = 0;
    if (!text_row.empty()) {
      j = text_row[i];
      VLBIAS_CHECK(j < texts.rows, InputError,
                   "CLIPScore: image {} refers to text row {}, but there are only {} texts.", i, j,
                   texts.rows);
    } else if (texts.rows == n) {
      j = i;
    }
    const float* a = images.row(i);
    const float* b = texts.row(j);
    const double na = row_norm(a, d);
    VLBIAS_CHECK(na > 0.0, InputError,
                 "CLIPScore: image embedding row {} is all zeros; its cosine is undefined.", i);
    double dot = 0.0;
    for (std::size_t k = 0; k < d; ++k) dot += static_cast<double>(a[k]) * b[k];
    out.cosine[i] = dot / (na * text_norms[j]);
    out.score[i] = clipscore_from_cosine(out.cosine[i], variant);
  }
  return out;
}

ClipScoreSummary summarize_clipscores(const std::vector<double>& scores,
                                      const std::vector<double>& percentile_levels) {
  ClipScoreSummary s;
  s.summary = stats::describe(scores);
  s.percentile_levels = percentile_levels;
  s.percentile_values = stats::percentiles(scores, percentile_levels);
  return s;
}

}  // namespace vlbias
