// CLIP zero-shot class embeddings and probabilities (include/vlbias/labels/clip_labels.h;
// docs/methods.md#clip-zero-shot-labels).
#include <algorithm>
#include <cmath>
#include <string>

#include "vlbias/core/error.h"
#include "vlbias/labels/clip_labels.h"

namespace vlbias {

namespace {

// The Euclidean norm of n floats, in double; InputError naming `what` when it is 0 or not finite.
double zero_shot_norm(const float* x, std::size_t n, const std::string& what) {
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  const double norm = std::sqrt(s);
  VLBIAS_CHECK(std::isfinite(norm) && norm > 0.0, InputError,
               "{}: its embedding has norm {}; expected a finite, non-zero vector.", what, norm);
  return norm;
}

}  // namespace

ClipZeroShot make_clip_zero_shot(MatrixView prompt_embeddings,
                                 const std::vector<LabelAttribute>& attributes,
                                 double logit_scale) {
  VLBIAS_CHECK(std::isfinite(logit_scale) && logit_scale > 0.0, UsageError,
               "the logit scale is {}; expected a finite number > 0.", logit_scale);
  ClipZeroShot z;
  z.attributes = attributes;
  z.logit_scale = logit_scale;
  z.width = prompt_embeddings.cols;
  std::size_t row = 0;
  for (const LabelAttribute& a : attributes) {
    for (const LabelClass& c : a.classes) {
      // CLIP's zero-shot ImageNet notebook (openai/CLIP, Prompt_Engineering_for_ImageNet.ipynb,
      // zeroshot_classifier): normalise each template's embedding, average, renormalise.
      std::vector<double> mean(z.width, 0.0);
      for (std::size_t p = 0; p < c.prompts.size(); ++p, ++row) {
        VLBIAS_CHECK(row < prompt_embeddings.rows, InternalError, "{} prompt embeddings",
                     prompt_embeddings.rows);
        const float* e = prompt_embeddings.row(row);
        const double norm = zero_shot_norm(e, z.width, "prompt \"" + c.prompts[p] + "\"");
        for (std::size_t j = 0; j < z.width; ++j) mean[j] += e[j] / norm;
      }
      double s = 0.0;
      for (double v : mean) s += v * v;
      const double norm = std::sqrt(s);
      VLBIAS_CHECK(norm > 0.0, InputError,
                   "class \"{}\" of {}: its prompts' embeddings cancel out (mean of norm 0).",
                   c.name, a.name);
      for (double v : mean) z.class_embeddings.push_back(v / norm);
    }
  }
  VLBIAS_CHECK(row == prompt_embeddings.rows, InternalError, "{} of {} prompt embeddings used", row,
               prompt_embeddings.rows);
  return z;
}

ClipZeroShot make_clip_zero_shot(const ClipEncoder& encoder,
                                 const std::vector<LabelAttribute>& attributes,
                                 double logit_scale) {
  std::vector<std::string> texts;
  for (const LabelAttribute& a : attributes) {
    for (const LabelClass& c : a.classes)
      texts.insert(texts.end(), c.prompts.begin(), c.prompts.end());
  }
  const Matrix e = encoder.encode_texts(texts, false);  // every prompt of the run, once
  return make_clip_zero_shot(MatrixView(e), attributes, logit_scale);
}

std::vector<std::vector<double>> clip_zero_shot_probabilities(const ClipZeroShot& z,
                                                              const float* image_embedding,
                                                              std::size_t width) {
  VLBIAS_CHECK(width == z.width, InputError,
               "an image embedding of width {}; the class embeddings have width {}.", width,
               z.width);
  const double norm = zero_shot_norm(image_embedding, width, "an image");
  std::vector<std::vector<double>> out;
  const double* u = z.class_embeddings.data();
  for (const LabelAttribute& a : z.attributes) {
    // Softmax over the attribute's classes of s <e / |e|, u_c> (DALL-Eval's score_clip.py:
    // logit_scale * image_features @ text_features.t(), then softmax), in double.
    std::vector<double> logits;
    for (std::size_t c = 0; c < a.classes.size(); ++c, u += width) {
      double dot = 0.0;
      for (std::size_t j = 0; j < width; ++j) dot += image_embedding[j] * u[j];
      logits.push_back(z.logit_scale * dot / norm);
    }
    double top = logits[0];
    for (double l : logits) top = std::max(top, l);
    double sum = 0.0;
    for (double& l : logits) sum += (l = std::exp(l - top));
    for (double& l : logits) l /= sum;
    out.push_back(std::move(logits));
  }
  return out;
}

}  // namespace vlbias
