#pragma once
// Scoring heads on CLIP image embeddings (issue 44): small published models that read the
// CLIP ViT-L/14 image embedding `vlbias encode --images` writes, so that images are encoded
// once for every head (src/score/image_heads.cpp, image_heads_weights.cpp, image_heads_job.cpp;
// docs/methods.md#image-heads). Every head L2-normalises the image embedding first (the
// cosine heads are scale-invariant anyway), so encode's --normalize does not matter; an
// all-zero embedding is an InputError. Widths: the published weights are 768 wide (ViT-L/14's
// projection); the loaders accept any width the weights agree on (the test fixtures are 32
// wide), and the embeddings must have that width.
//
// Heads (the formula comments in image_heads.cpp name each source file):
//   safety-checker   diffusers' StableDiffusionSafetyChecker.forward (safety_checker.py):
//                    concept_embeds [17, D], special_care_embeds [3, D] and their thresholds
//                    concept_embeds_weights [17], special_care_embeds_weights [3]
//                    (model.safetensors or pytorch_model.bin of
//                    CompVis/stable-diffusion-safety-checker; the CLIP tower beside them is
//                    ignored: `encode` is that tower).
//   laion-aesthetic  LAION's improved aesthetic predictor (christophschuhmann/
//                    improved-aesthetic-predictor, simple_inference.py): Linear layers
//                    layers.{0,2,4,6,7}.{weight,bias}, D -> 1024 -> 128 -> 64 -> 16 -> 1 as
//                    published, no activations (dropout is the identity at inference), e.g.
//                    sac+logos+ava1-l14-linearMSE.pth.
//   heim-aesthetic   HEIM's aesthetics scorer (helm, aesthetics_scorer.py): LAION's first
//                    predictor, one Linear D -> 1 (`weight` [1, D], `bias` [1]), e.g.
//                    sa_0_4_vit_l_14_linear.pth.
//   q16              Q16 (ml-research/Q16; helm q16_toxicity_detector.py): two learned prompt
//                    embeddings [2, D], a pickled numpy array (prompts.p); class 1 is
//                    inappropriate.
//   clip-iqa         torchmetrics' CLIPImageQualityAssessment (clip_iqa.py): prompt pairs'
//                    text embeddings (positive, negative) from `vlbias encode --texts`.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/core/matrix.h"

namespace vlbias {

enum class ImageHeadKind { SafetyChecker, LaionAesthetic, HeimAesthetic, Q16, ClipIqa };

// "safety-checker", "laion-aesthetic", "heim-aesthetic", "q16", "clip-iqa".
std::string_view image_head_name(ImageHeadKind kind);
// The kind named `name`; UsageError listing the kinds otherwise.
ImageHeadKind parse_image_head_kind(std::string_view name);

// One head's output for n images: score columns (doubles) and decision columns (0/1), in the
// order SCORES.csv writes them.
struct ImageHeadColumns {
  std::vector<std::string> score_names;
  std::vector<std::vector<double>> scores;  // [column][image]
  std::vector<std::string> decision_names;
  std::vector<std::vector<int>> decisions;  // [column][image], 0 or 1
};

// ---- weights (each reader: InputError naming the file for a missing tensor, with the tensors
// the file holds, an unexpected extra tensor where the head's file holds nothing else, a shape
// that disagrees, or NaN/inf; the existing readers refuse hostile safetensors and pickles) ----

struct SafetyCheckerWeights {
  Matrix concepts;                        // [17, D] concept_embeds
  std::vector<float> concept_thresholds;  // [17] concept_embeds_weights
  Matrix special;                         // [3, D] special_care_embeds
  std::vector<float> special_thresholds;  // [3] special_care_embeds_weights
};
// A .safetensors file, or a PyTorch checkpoint (.bin, .pth) read as data.
SafetyCheckerWeights read_safety_checker_weights(const std::filesystem::path& path);

struct ImageHeadLinear {
  Matrix weight;            // [out, in], as torch.nn.Linear stores it
  std::vector<float> bias;  // [out]
};

// The five Linear layers of LAION's MLP, in order (widths chained, last out = 1).
struct LaionAestheticWeights {
  std::vector<ImageHeadLinear> layers;
};
LaionAestheticWeights read_laion_aesthetic_weights(const std::filesystem::path& path);

// HEIM's Linear D -> 1.
ImageHeadLinear read_heim_aesthetic_weights(const std::filesystem::path& path);

// Q16's prompt embeddings [2, D] (a pickled numpy array: pickled_array.h).
Matrix read_q16_weights(const std::filesystem::path& path);

// CLIP-IQA's prompt pairs: `embeddings` (.npy / .safetensors of `vlbias encode --texts`) holds
// one row per row of `prompts` (a CSV with columns name, polarity, text; polarity positive or
// negative, one of each per name; data/clip_iqa/prompts.csv is torchmetrics' built-in list).
// When encode's rows file (EMB.rows.csv) lies beside the embeddings, its texts must equal the
// prompts' texts in order.
struct ClipIqaWeights {
  std::vector<std::string> names;  // pair names in order of first appearance
  Matrix positive, negative;       // [P, D]
};
ClipIqaWeights read_clip_iqa_weights(const std::filesystem::path& embeddings,
                                     const std::filesystem::path& prompts);

// ---- scoring: `images` is n x D; InputError naming `source` when D differs from the weights'
// width, or an embedding is all zeros ----

// diffusers' safety checker. Score columns concept_score_max, special_care_score_max, then
// concept_score_0..16 and special_care_score_0..2 (cos - threshold + adjustment, unrounded);
// decisions nsfw, special_care taken as diffusers takes them, on the scores rounded to 3
// decimals. `adjustment`: 0.0 in current diffusers (0.05 in the first release).
ImageHeadColumns safety_checker_scores(MatrixView images, const std::string& source,
                                       const SafetyCheckerWeights& w, double adjustment);
// `aesthetic` of LAION's MLP on the L2-normalised embedding.
ImageHeadColumns laion_aesthetic_scores(MatrixView images, const std::string& source,
                                        const LaionAestheticWeights& w);
// `aesthetic` of HEIM's linear head on the L2-normalised embedding.
ImageHeadColumns heim_aesthetic_scores(MatrixView images, const std::string& source,
                                       const ImageHeadLinear& w);
// `p_inappropriate` = softmax(100 cos(image, prompt_k))[1]; decision `inappropriate` (argmax).
ImageHeadColumns q16_scores(MatrixView images, const std::string& source, const Matrix& prompts);
// `clip_iqa__<name>` = softmax(100 cos(image, positive), 100 cos(image, negative))[0].
ImageHeadColumns clip_iqa_scores(MatrixView images, const std::string& source,
                                 const ClipIqaWeights& w);

// ---- the job: `vlbias score image-head` ----

struct ImageHeadJobOptions {
  ImageHeadKind kind = ImageHeadKind::SafetyChecker;
  std::filesystem::path embeddings;  // .npy / .safetensors from `vlbias encode --images`
  std::filesystem::path rows;        // encode's rows file (row, input_row, path)
  std::filesystem::path weights;     // the head's weights (clip-iqa: the prompts' embeddings)
  std::filesystem::path prompts;     // clip-iqa only: the prompts table
  std::filesystem::path out;         // SCORES.csv
  double adjustment = 0.0;           // safety-checker only
};

struct ImageHeadJobResult {
  std::size_t rows = 0;
  std::string weights_sha256;
  std::vector<std::size_t> flagged;  // per decision column: rows with 1
  std::vector<std::string> decision_names;
};

// Writes SCORES.csv: image (the rows file's path), the head's score columns, its decisions as
// 0/1, then head, weights (as given), weights_sha256 and options ("key=value;...", keys
// sorted), the same on every row. UsageError naming the file when the rows file's row count
// differs from the embeddings'.
ImageHeadJobResult run_image_head_job(const ImageHeadJobOptions& o);

}  // namespace vlbias
