#pragma once
// Internals of the native sequence classifiers (include/vlbias/score/classifier.h): the weights
// in one layout for the four architectures, the config and weight loaders, the forward.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/nn/layers.h"
#include "vlbias/score/classifier.h"
#include "vlbias/text/tokenizer.h"

namespace vlbias::score_internal {

// One post-LN encoder layer (transformers BertLayer / RobertaLayer / DistilBERT TransformerBlock):
//   x = LN_attn(x + attention(x) Wo^T + bo);  x = LN_out(x + act(x W1^T + b1) W2^T + b2)
// with q, k, v fused into qkv: rows [0, w) query, [w, 2w) key, [2w, 3w) value.
struct EncoderLayer {
  Linear qkv, out, fc1, fc2;
  LayerNormWeights ln_attn, ln_out;
};

// The head on the first token: out(act(dense(h[0]))), act tanh (BERT pooler, RoBERTa head)
// or ReLU (DistilBERT pre_classifier).
enum class HeadActivation { Tanh, Relu };

struct ClassifierWeights {
  std::vector<float> word_emb;  // [vocab, hidden]
  std::vector<float> pos_emb;   // [max_positions, hidden]
  std::vector<float> type_row;  // token type 0's embedding [hidden]; empty for DistilBERT
  LayerNormWeights ln_emb;
  std::vector<EncoderLayer> layers;
  Linear head_dense, head_out;
  HeadActivation head_act = HeadActivation::Tanh;
};

// config.json of `dir` (classifier_config.cpp).
ClassifierConfig read_classifier_config(const std::filesystem::path& dir);
// The same from the file's text; `where` names it in messages ("'dir/config.json'").
ClassifierConfig parse_classifier_config(std::string_view text, const std::string& where);

// Loads and checks every tensor of `path` for `config` (classifier_weights.cpp).
ClassifierWeights load_classifier_weights(const std::filesystem::path& path,
                                          const ClassifierConfig& config);

// InputError unless each of the `n` logits at `row` is finite: a score computed from an
// infinite or NaN logit is 1, 0 or null, not a score. `whose` names the text and where its
// logits came from ("text 3", "row 7 of checkpoint F"), `remedy` what to do. The live forward
// and a resumed run's checkpoints both pass through it (classifier.cpp, classifier_job.cpp).
void check_finite_logits(const float* row, std::size_t n, const std::string& whose,
                         const std::string& remedy);

// Logits (texts x labels) of token ids checked by the caller (classifier_forward.cpp).
Matrix classifier_forward(const ClassifierConfig& config, const ClassifierWeights& weights,
                          const std::vector<std::vector<std::int32_t>>& ids);

}  // namespace vlbias::score_internal
