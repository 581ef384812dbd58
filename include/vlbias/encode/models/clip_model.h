#pragma once
// Native CLIP encoder: loads CLIP weights (Hugging Face transformers or open_clip layout,
// .safetensors with F32, F16 or BF16 tensors) and runs both towers' transformer forward in
// float32 (no Python at run time: docs/design.md#native-clip).
//
// The forward is the pre-LayerNorm ViT / causal text transformer of Radford et al. 2021
// ("Learning Transferable Visual Models From Natural Language Supervision"), matching
// transformers' models/clip/modeling_clip.py and open_clip's transformer.py / model.py:
//   image: conv patch embedding (no bias), [class token; patches] + positions, pre-LN,
//          L x {x += attn(LN1(x)); x += MLP(LN2(x))}, LN of the class token, projection
//   text:  token + position embeddings, the same blocks with a causal mask, final LN of the
//          pooled token (argmax of the ids, or the first EOS: see ClipConfig::pool_argmax),
//          projection
// Embeddings come back projected and NOT L2-normalised.
//
// Determinism (docs/design.md#determinism): results do not depend on the thread count (sgemm's
// fixed partition, attention per (sequence, head) task). They can differ in the last bits with the
// batch composition (a row's place in a GEMM tile), as in PyTorch.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/nn/kernels.h"

namespace vlbias {

// Which checkpoint layout a model directory holds.
//   HuggingFace: config.json (CLIPConfig) + model.safetensors
//   OpenClip:    open_clip_config.json ({"model_cfg": ..., "preprocess_cfg": ...})
//                + open_clip_model.safetensors
enum class ClipLayout { HuggingFace, OpenClip };

// One transformer tower.
struct ClipTowerConfig {
  std::size_t width = 0;      // hidden size (d_model)
  std::size_t layers = 0;     // residual blocks
  std::size_t heads = 0;      // attention heads; width % heads == 0
  std::size_t mlp_width = 0;  // MLP hidden size (intermediate_size, int(width * mlp_ratio))
  float layer_norm_eps = 1e-5f;
  Activation activation = Activation::QuickGelu;
};

struct ClipConfig {
  ClipLayout layout = ClipLayout::HuggingFace;
  ClipTowerConfig vision, text;
  std::size_t image_size = 0;      // square input images, pixels per side
  std::size_t patch_size = 0;      // image_size % patch_size == 0
  std::size_t embed_dim = 0;       // projection output size (projection_dim / embed_dim)
  std::size_t context_length = 0;  // max tokens per text (max_position_embeddings)
  std::size_t vocab_size = 0;
  // The text token pooled when pool_argmax is false (HF configs; -1 for open_clip).
  std::int32_t eos_token_id = -1;
  // true: pool the first position holding the largest id (open_clip; HF configs with the legacy
  // eos_token_id == 2). false: pool the first position whose id == eos_token_id, or position 0
  // when there is none (transformers >= 4.31 with a corrected eos_token_id).
  bool pool_argmax = true;
  // exp() of the stored log value (set by ClipModel::load from the logit_scale tensor; 0 from
  // read_clip_config, which reads no weights).
  float logit_scale = 0.0f;

  std::size_t grid() const { return patch_size == 0 ? 0 : image_size / patch_size; }
  // Tokens per image: one class token + grid()^2 patches.
  std::size_t image_tokens() const { return grid() * grid() + 1; }
};

// The layout of a model directory, from the files present: config.json + model.safetensors
// (HuggingFace) or open_clip_config.json + open_clip_model.safetensors (OpenClip). When both
// are present open_clip's own files win (hub repositories of open_clip models carry both, and
// they hold the same weights). InputError naming the directory and what was looked for when
// neither is complete, or when only PyTorch .bin / sharded weights are there.
ClipLayout detect_clip_layout(const std::filesystem::path& dir);

// The config file of `dir` for `layout`, parsed and checked without reading weights.
// InputError naming the file for malformed JSON, a missing or mistyped field, an inconsistent
// shape (e.g. width not divisible by heads) or an option this encoder does not implement (named).
ClipConfig read_clip_config(const std::filesystem::path& dir, ClipLayout layout);
ClipConfig read_clip_config(const std::filesystem::path& dir);
// The same over JSON text (tests, tools); `source` names it in messages.
ClipConfig parse_clip_config(std::string_view json_text, ClipLayout layout,
                             std::string_view source);

class ClipModel {  // movable, immutable after load; encode_* are const and thread-safe
 public:
  // Loads `dir` (layout detected by detect_clip_layout unless given). Tensors are checked
  // against the config: a missing tensor, a wrong shape (expected vs found), a dtype other than
  // F32 / F16 / BF16, a non-finite weight or a truncated file is an InputError naming the tensor
  // and file. Weights are converted to float32; the file is not kept open.
  static ClipModel load(const std::filesystem::path& dir,
                        std::optional<ClipLayout> layout = std::nullopt);

  ClipModel(ClipModel&&) noexcept;
  ClipModel& operator=(ClipModel&&) noexcept;
  ~ClipModel();

  const ClipConfig& config() const;
  // The .safetensors file the weights came from (the CLI hashes it).
  const std::filesystem::path& weights_path() const;

  // pixels: n images, each 3 x image_size x image_size float32 CHW (normalised), contiguous.
  // Returns n x embed_dim projected embeddings (NOT L2-normalised). A non-finite pixel is an
  // InputError naming the image index.
  Matrix encode_images(const float* pixels, std::size_t n) const;

  // ids: one sequence per text, each [SOT ... EOT], 1 <= len <= context_length, 0 <= id <
  // vocab_size (else InputError naming the text index). Texts are packed without padding: the
  // causal mask makes positions after the pooled one irrelevant, so each sequence is run only up
  // to its pooled position (not padded to context_length as open_clip does). Returns
  // n x embed_dim (not normalised).
  Matrix encode_texts(const std::vector<std::vector<std::int32_t>>& ids) const;

  // The position encode_texts pools for one sequence (argmax or first EOS, per the config).
  std::size_t pooled_position(const std::vector<std::int32_t>& ids) const;

  struct Impl;
  // The weights and config, for the encode stage's own code (the explainers of clip_cam.h);
  // Impl is defined in a private header of src/encode.
  const Impl& impl() const;

 private:
  explicit ClipModel(std::unique_ptr<const Impl> impl);
  std::unique_ptr<const Impl> impl_;
};

}  // namespace vlbias
