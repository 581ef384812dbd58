#pragma once
// Model weights from a .safetensors file by name, with the checks every weight gets: the tensor
// exists, its dtype is F32, F16 or BF16, its shape is the one the model's config implies, its
// values are finite; converted to float32. Records what was read, so that a tensor left over
// (the config and the weights disagree: an extra layer, a part the runtime does not implement)
// is refused instead of silently ignored. CLIP (src/encode) and the sequence classifiers
// (src/score) read their weights through it.
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "vlbias/io/tensor/safetensors.h"
#include "vlbias/nn/kernels.h"

namespace vlbias {

// What the weights belong to, for messages and the leftover check.
struct WeightsContext {
  // The model as messages name it after "for" / "which ... does not have", naming the config
  // the expected shapes come from: "the model described by config.json",
  // "a CLIP model as configured in 'open_clip_config.json'".
  std::string model;
  // Tensors some checkpoints hold that are not parameters (transformers' position_ids buffers,
  // a pooler the architecture drops): require_all_used accepts them unread.
  std::set<std::string> ignored;
};

class WeightsReader {
 public:
  // `file` must outlive the reader. Converted tensors' pages of a mapped file are released as
  // they are read (SafetensorsFile::release_pages), so loading peaks near the float32 weights.
  WeightsReader(const SafetensorsFile& file, WeightsContext context);

  // The tensor `name` of shape `shape` as float32, row-major. InputError (one sentence naming
  // the file and the tensor) when it is missing, has another dtype or shape, or holds NaN / inf.
  std::vector<float> read(const std::string& name, const std::vector<std::size_t>& shape);

  // A scalar tensor (shape [] or [1]).
  float scalar(const std::string& name);

  // prefix.weight [width] and prefix.bias [width].
  LayerNormWeights layer_norm(const std::string& prefix, std::size_t width);

  // prefix.weight [out, in] and, when `bias`, prefix.bias [out] (torch.nn.Linear).
  Linear linear(const std::string& prefix, std::size_t out, std::size_t in, bool bias = true);

  // The linear layers `prefixes` (each [out, in] with bias) stacked into one
  // [prefixes.size() * out, in] layer: q, k and v as one GEMM.
  Linear stacked_linear(const std::vector<std::string>& prefixes, std::size_t out, std::size_t in);

  // InputError naming the first tensor of the file neither read nor ignored.
  void require_all_used() const;

 private:
  const SafetensorsFile& file_;
  WeightsContext context_;
  std::set<std::string> used_;
};

}  // namespace vlbias
