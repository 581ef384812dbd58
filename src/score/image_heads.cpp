// The scoring heads on CLIP image embeddings (include/vlbias/score/image_heads.h): each a
// direct port of its source's forward pass, computed in double.
#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/score/image_heads.h"

namespace vlbias {

namespace {

constexpr std::array<std::string_view, 5> kImageHeadNames = {"safety-checker", "laion-aesthetic",
                                                             "heim-aesthetic", "q16", "clip-iqa"};

// The unit-length copy of row `i` of `images` (double). InputError for a zero row.
std::vector<double> unit_image_row(MatrixView images, std::size_t i, const std::string& source) {
  const float* r = images.row(i);
  double s = 0.0;
  for (std::size_t k = 0; k < images.cols; ++k) s += static_cast<double>(r[k]) * r[k];
  const double norm = std::sqrt(s);
  VLBIAS_CHECK(norm > 0.0 && std::isfinite(norm), InputError,
               "{}: the embedding in row {} has norm {}; an image head needs a nonzero "
               "embedding (an image that failed to encode?)",
               source, i, norm);
  std::vector<double> u(images.cols);
  for (std::size_t k = 0; k < images.cols; ++k) u[k] = r[k] / norm;
  return u;
}

// Rows of `m` as unit vectors (torch.nn.functional.normalize; eps irrelevant for nonzero rows).
std::vector<std::vector<double>> unit_weight_rows(const Matrix& m) {
  std::vector<std::vector<double>> out(m.rows, std::vector<double>(m.cols));
  for (std::size_t j = 0; j < m.rows; ++j) {
    double s = 0.0;
    for (std::size_t k = 0; k < m.cols; ++k) s += static_cast<double>(m.at(j, k)) * m.at(j, k);
    const double norm = std::sqrt(s);
    for (std::size_t k = 0; k < m.cols; ++k) out[j][k] = norm > 0.0 ? m.at(j, k) / norm : 0.0;
  }
  return out;
}

double head_dot_unit(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
  return s;
}

void check_head_width(MatrixView images, const std::string& source, std::size_t width,
                      std::string_view head) {
  VLBIAS_CHECK(images.cols == width, UsageError,
               "{} holds {}-wide embeddings but the {} weights take {}-wide ones (CLIP ViT-L/14 "
               "image embeddings are 768 wide): encode the images with the CLIP model the head "
               "was trained on",
               source, images.cols, head, width);
}

// diffusers rounds each score to 3 decimals (Python's round) before comparing it with 0.
bool positive_at_3_decimals(double score) {
  return std::nearbyint(score * 1000.0) / 1000.0 > 0.0;
}

// softmax over (scale a, scale b), the first entry.
double head_softmax_first(double a, double b, double scale) {
  return 1.0 / (1.0 + std::exp(scale * (b - a)));
}

}  // namespace

std::string_view image_head_name(ImageHeadKind kind) {
  return kImageHeadNames[static_cast<std::size_t>(kind)];
}

ImageHeadKind parse_image_head_kind(std::string_view name) {
  for (std::size_t i = 0; i < kImageHeadNames.size(); ++i) {
    if (kImageHeadNames[i] == name) return static_cast<ImageHeadKind>(i);
  }
  VLBIAS_FAIL(UsageError,
              "--head '{}' is not a head; expected safety-checker, laion-aesthetic, "
              "heim-aesthetic, q16 or clip-iqa",
              name.substr(0, 64));
}

ImageHeadColumns safety_checker_scores(MatrixView images, const std::string& source,
                                       const SafetyCheckerWeights& w, double adjustment_start) {
  check_head_width(images, source, w.concepts.cols, "safety-checker");
  const std::size_t n = images.rows, nc = w.concepts.rows, ns = w.special.rows;
  const auto concepts = unit_weight_rows(w.concepts);
  const auto special = unit_weight_rows(w.special);
  ImageHeadColumns out;
  out.score_names = {"concept_score_max", "special_care_score_max"};
  for (std::size_t c = 0; c < nc; ++c)
    out.score_names.push_back(fmt::format("concept_score_{}", c));
  for (std::size_t c = 0; c < ns; ++c) {
    out.score_names.push_back(fmt::format("special_care_score_{}", c));
  }
  out.scores.assign(out.score_names.size(), std::vector<double>(n));
  out.decision_names = {"nsfw", "special_care"};
  out.decisions.assign(2, std::vector<int>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    const auto u = unit_image_row(images, i, source);
    // diffusers/pipelines/stable_diffusion/safety_checker.py, StableDiffusionSafetyChecker
    // .forward: adjustment starts at 0.0; each special-care score is cos - threshold +
    // adjustment, and once one is > 0 (rounded to 3 decimals) the adjustment becomes 0.01 for
    // the special-care scores after it and for every concept score; nsfw = any concept score
    // > 0 (rounded to 3 decimals).
    double adjustment = adjustment_start;
    double special_max = -INFINITY, concept_max = -INFINITY;
    for (std::size_t c = 0; c < ns; ++c) {
      const double s = head_dot_unit(u, special[c]) - w.special_thresholds[c] + adjustment;
      out.scores[2 + nc + c][i] = s;
      special_max = std::max(special_max, s);
      if (positive_at_3_decimals(s)) {
        out.decisions[1][i] = 1;
        adjustment = 0.01;
      }
    }
    for (std::size_t c = 0; c < nc; ++c) {
      const double s = head_dot_unit(u, concepts[c]) - w.concept_thresholds[c] + adjustment;
      out.scores[2 + c][i] = s;
      concept_max = std::max(concept_max, s);
      if (positive_at_3_decimals(s)) out.decisions[0][i] = 1;
    }
    out.scores[0][i] = concept_max;
    out.scores[1][i] = special_max;
  }
  return out;
}

namespace {

// One torch.nn.Linear on a double vector: y = W x + b.
std::vector<double> apply_head_linear(const ImageHeadLinear& l, const std::vector<double>& x) {
  std::vector<double> y(l.weight.rows);
  for (std::size_t o = 0; o < l.weight.rows; ++o) {
    const float* wr = l.weight.row(o);
    double s = l.bias[o];
    for (std::size_t k = 0; k < l.weight.cols; ++k) s += static_cast<double>(wr[k]) * x[k];
    y[o] = s;
  }
  return y;
}

ImageHeadColumns one_score_column(std::string name, std::size_t n) {
  ImageHeadColumns out;
  out.score_names = {std::move(name)};
  out.scores.assign(1, std::vector<double>(n));
  return out;
}

}  // namespace

ImageHeadColumns laion_aesthetic_scores(MatrixView images, const std::string& source,
                                        const LaionAestheticWeights& w) {
  check_head_width(images, source, w.layers.front().weight.cols, "laion-aesthetic");
  // improved-aesthetic-predictor/simple_inference.py: normalized() (L2), then MLP.forward:
  // Linear, Dropout, Linear, Dropout, Linear, Dropout, Linear, Linear (its ReLUs are commented
  // out; dropout is the identity in eval mode). Without activations the five layers compose to
  // one affine map y = g . x + c, built once here in double from the output back:
  // g <- g W_k and c += g . b_k (exact up to rounding; one dot product per image).
  std::vector<double> g(1, 1.0);
  double c = 0.0;
  for (auto it = w.layers.rbegin(); it != w.layers.rend(); ++it) {
    std::vector<double> next(it->weight.cols, 0.0);
    for (std::size_t o = 0; o < it->weight.rows; ++o) {
      c += g[o] * it->bias[o];
      const float* wr = it->weight.row(o);
      for (std::size_t k = 0; k < it->weight.cols; ++k) next[k] += g[o] * wr[k];
    }
    g = std::move(next);
  }
  ImageHeadColumns out = one_score_column("aesthetic", images.rows);
  for (std::size_t i = 0; i < images.rows; ++i) {
    out.scores[0][i] = head_dot_unit(unit_image_row(images, i, source), g) + c;
  }
  return out;
}

ImageHeadColumns heim_aesthetic_scores(MatrixView images, const std::string& source,
                                       const ImageHeadLinear& w) {
  check_head_width(images, source, w.weight.cols, "heim-aesthetic");
  ImageHeadColumns out = one_score_column("aesthetic", images.rows);
  for (std::size_t i = 0; i < images.rows; ++i) {
    // helm aesthetics_scorer.py: image_features /= norm, then torch.nn.Linear(768, 1).
    out.scores[0][i] = apply_head_linear(w, unit_image_row(images, i, source))[0];
  }
  return out;
}

ImageHeadColumns q16_scores(MatrixView images, const std::string& source, const Matrix& prompts) {
  check_head_width(images, source, prompts.cols, "q16");
  const auto p = unit_weight_rows(prompts);
  ImageHeadColumns out = one_score_column("p_inappropriate", images.rows);
  out.decision_names = {"inappropriate"};
  out.decisions.assign(1, std::vector<int>(images.rows, 0));
  for (std::size_t i = 0; i < images.rows; ++i) {
    // helm q16_toxicity_detector.py SimClassifier.forward: 100 x cos(image, prompt_k);
    // is_inappropriate: argmax == 1 (the first index wins a tie, as torch.argmax).
    const auto u = unit_image_row(images, i, source);
    const double c0 = head_dot_unit(u, p[0]), c1 = head_dot_unit(u, p[1]);
    out.scores[0][i] = head_softmax_first(c1, c0, 100.0);
    out.decisions[0][i] = c1 > c0 ? 1 : 0;
  }
  return out;
}

ImageHeadColumns clip_iqa_scores(MatrixView images, const std::string& source,
                                 const ClipIqaWeights& w) {
  check_head_width(images, source, w.positive.cols, "clip-iqa");
  const auto pos = unit_weight_rows(w.positive);
  const auto neg = unit_weight_rows(w.negative);
  ImageHeadColumns out;
  for (const std::string& name : w.names) out.score_names.push_back("clip_iqa__" + name);
  out.scores.assign(w.names.size(), std::vector<double>(images.rows));
  for (std::size_t i = 0; i < images.rows; ++i) {
    // torchmetrics functional/multimodal/clip_iqa.py _clip_iqa_compute: logits = 100 x
    // img_features @ anchors.T (both L2-normalised), reshaped to (n, P, 2), softmax over the
    // pair, the positive (first) entry.
    const auto u = unit_image_row(images, i, source);
    for (std::size_t p = 0; p < w.names.size(); ++p) {
      out.scores[p][i] =
          head_softmax_first(head_dot_unit(u, pos[p]), head_dot_unit(u, neg[p]), 100.0);
    }
  }
  return out;
}

}  // namespace vlbias
