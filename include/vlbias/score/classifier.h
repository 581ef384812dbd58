#pragma once
// Native sequence classifiers (issue 21): the Hugging Face sequence-classification models
// Detoxify and its successors ship, run in float32 on the nn stage's transformer runtime
// (include/vlbias/nn/layers.h), with the text tokenizers of include/vlbias/text/tokenizer.h.
//
//   BertForSequenceClassification        (Detoxify "original", unitary/toxic-bert)
//       post-LN encoder; head: classifier(tanh(pooler.dense(h[CLS])))
//   RobertaForSequenceClassification     (Detoxify "unbiased")
//   XLMRobertaForSequenceClassification  (Detoxify "multilingual")
//       position ids from padding_idx + 1 (create_position_ids_from_input_ids);
//       head: out_proj(tanh(dense(h[<s>])))
//   DistilBertForSequenceClassification
//       no token types; head: classifier(relu(pre_classifier(h[CLS])))
//
// A model folder holds config.json (architectures, sizes, hidden_act, layer_norm_eps,
// id2label, problem_type), model.safetensors (F32, F16 or BF16, the transformers parameter
// names; every tensor checked for name, dtype, shape and finiteness, none left over) and the
// tokenizer files. Texts are packed without padding: each runs over its own tokens only, so a
// text's scores do not depend on the other texts of its batch beyond float rounding (OpenBLAS
// picks its kernels by matrix shape: ~1e-7 on the fixtures); the same batch gives the same bits
// on every run and for every thread count (the threads only split fixed blocks of work).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/nn/kernels.h"
#include "vlbias/text/tokenizer.h"

namespace vlbias {

enum class ClassifierArchitecture { Bert, Roberta, XlmRoberta, DistilBert };
// The transformers class name, e.g. "BertForSequenceClassification".
const char* to_string(ClassifierArchitecture architecture);

// How logits become scores: a sigmoid per label (multi-label; Detoxify) or a softmax over them.
enum class ScoreActivation { Sigmoid, Softmax };
const char* to_string(ScoreActivation activation);
// "sigmoid" / "softmax"; UsageError otherwise.
ScoreActivation parse_score_activation(std::string_view name);

struct ClassifierConfig {
  ClassifierArchitecture architecture = ClassifierArchitecture::Bert;
  std::size_t hidden = 0;        // hidden_size / dim
  std::size_t layers = 0;        // num_hidden_layers / n_layers
  std::size_t heads = 0;         // num_attention_heads / n_heads; hidden % heads == 0
  std::size_t intermediate = 0;  // intermediate_size / hidden_dim
  std::size_t vocab_size = 0;
  std::size_t max_positions = 0;    // max_position_embeddings
  std::size_t type_vocab_size = 0;  // 0 for DistilBERT
  std::int32_t pad_token_id = 0;
  float layer_norm_eps = 1e-12f;
  Activation hidden_act = Activation::Gelu;  // gelu (erf) or gelu_new (tanh)
  std::vector<std::string> labels;           // id2label in id order
  std::string problem_type;                  // "" when absent
};

struct ClassifierOptions {
  // Tokens per text, special tokens included (default: the tokenizer's, from config.json).
  std::optional<std::size_t> max_length;
  // Default: sigmoid for problem_type multi_label_classification, softmax otherwise.
  std::optional<ScoreActivation> activation;
  TokenizerSource tokenizer_source = TokenizerSource::Auto;
};

// Scores of a batch of texts, rows in input order.
struct ClassifierScores {
  Matrix logits;                      // texts x labels
  std::vector<double> probabilities;  // texts x labels, row-major
  std::vector<std::size_t> tokens;    // ids per text, special tokens included
  std::vector<bool> truncated;        // content ids were cut to max_length
  std::size_t truncated_count = 0;
};

class SequenceClassifier {
 public:
  // Loads a Hugging Face sequence-classification folder. InputError (one sentence naming the
  // file and the key or tensor) for a missing file, malformed or inconsistent config.json, an
  // architecture not listed above (named), a missing, misshapen, non-float, non-finite or
  // left-over tensor, or a tokenizer the model cannot take; UsageError for a max_length the
  // position embeddings cannot hold.
  static SequenceClassifier load(const std::filesystem::path& dir,
                                 const ClassifierOptions& options = {});

  SequenceClassifier(SequenceClassifier&&) noexcept;
  SequenceClassifier& operator=(SequenceClassifier&&) noexcept;
  ~SequenceClassifier();

  const ClassifierConfig& config() const;
  const TextTokenizer& tokenizer() const;
  const std::vector<std::string>& labels() const;
  ScoreActivation activation() const;
  std::size_t max_length() const;
  const std::filesystem::path& weights_path() const;

  // Logits (ids.size() x labels) of token ids that already hold the special tokens, each 1 to
  // max_length() ids below vocab_size (InputError naming the text and position otherwise).
  Matrix logits(const std::vector<std::vector<std::int32_t>>& ids) const;
  // Tokenizes, runs the forward and applies activation() to every text (an empty text is
  // scored: it is its special tokens).
  ClassifierScores score(const std::vector<std::string>& texts) const;
  // activation() applied to one row of logits.
  void activate(const float* logits, double* out) const;

  struct Impl;

 private:
  explicit SequenceClassifier(std::unique_ptr<const Impl> impl);
  std::unique_ptr<const Impl> impl_;
};

}  // namespace vlbias
