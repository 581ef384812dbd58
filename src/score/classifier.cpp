// SequenceClassifier: loading, input checks, tokenization and scores. See
// include/vlbias/score/classifier.h.
#include "vlbias/score/classifier.h"

#include <cmath>

#include <fmt/format.h>

#include "classifier_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"

namespace vlbias {

namespace fs = std::filesystem;

struct SequenceClassifier::Impl {
  ClassifierConfig config;
  score_internal::ClassifierWeights weights;
  TextTokenizer tokenizer;
  ScoreActivation activation = ScoreActivation::Sigmoid;
  fs::path weights_path;
};

const char* to_string(ClassifierArchitecture architecture) {
  switch (architecture) {
    case ClassifierArchitecture::Bert:
      return "BertForSequenceClassification";
    case ClassifierArchitecture::Roberta:
      return "RobertaForSequenceClassification";
    case ClassifierArchitecture::XlmRoberta:
      return "XLMRobertaForSequenceClassification";
    case ClassifierArchitecture::DistilBert:
      return "DistilBertForSequenceClassification";
  }
  return "?";
}

const char* to_string(ScoreActivation activation) {
  return activation == ScoreActivation::Sigmoid ? "sigmoid" : "softmax";
}

ScoreActivation parse_score_activation(std::string_view name) {
  if (name == "sigmoid") return ScoreActivation::Sigmoid;
  if (name == "softmax") return ScoreActivation::Softmax;
  VLBIAS_FAIL(UsageError, "activation '{}' is not known; expected sigmoid or softmax", name);
}

namespace {

// The most ids a text may have: what the position table holds (RoBERTa's positions start at
// pad_token_id + 1).
std::size_t position_capacity(const ClassifierConfig& c) {
  const bool roberta = c.architecture == ClassifierArchitecture::Roberta ||
                       c.architecture == ClassifierArchitecture::XlmRoberta;
  return roberta ? c.max_positions - static_cast<std::size_t>(c.pad_token_id) - 1 : c.max_positions;
}

}  // namespace

SequenceClassifier::SequenceClassifier(std::unique_ptr<const Impl> impl) : impl_(std::move(impl)) {}
SequenceClassifier::SequenceClassifier(SequenceClassifier&&) noexcept = default;
SequenceClassifier& SequenceClassifier::operator=(SequenceClassifier&&) noexcept = default;
SequenceClassifier::~SequenceClassifier() = default;

SequenceClassifier SequenceClassifier::load(const fs::path& dir, const ClassifierOptions& o) {
  ClassifierConfig config = score_internal::read_classifier_config(dir);
  const std::size_t capacity = position_capacity(config);
  if (o.max_length) {
    VLBIAS_CHECK(*o.max_length >= 1 && *o.max_length <= capacity, UsageError,
                 "--max-length {} does not fit the model in '{}': its position embeddings hold "
                 "1 to {} tokens",
                 *o.max_length, dir.string(), capacity);
  }
  TokenizerOptions to;
  to.source = o.tokenizer_source;
  to.max_length = o.max_length;
  TextTokenizer tokenizer = TextTokenizer::from_folder(dir, to);
  VLBIAS_CHECK(tokenizer.max_length() <= capacity, InputError,
               "the tokenizer of '{}' allows {} tokens ({}) but the model's position embeddings "
               "hold {}; pass a --max-length of at most {}",
               dir.string(), tokenizer.max_length(), tokenizer.max_length_source(), capacity,
               capacity);
  VLBIAS_CHECK(tokenizer.vocab_size() <= config.vocab_size, InputError,
               "the tokenizer of '{}' has ids up to {} but the model's vocab_size is {}; the "
               "tokenizer files and config.json belong to different models",
               dir.string(), tokenizer.vocab_size() - 1, config.vocab_size);
  auto impl = std::make_unique<Impl>(Impl{std::move(config),
                                          {},
                                          std::move(tokenizer),
                                          ScoreActivation::Sigmoid,
                                          dir / "model.safetensors"});
  impl->weights = score_internal::load_classifier_weights(impl->weights_path, impl->config);
  impl->activation = o.activation ? *o.activation
                     : impl->config.problem_type == "multi_label_classification"
                         ? ScoreActivation::Sigmoid
                         : ScoreActivation::Softmax;
  return SequenceClassifier(std::move(impl));
}

const ClassifierConfig& SequenceClassifier::config() const {
  return impl_->config;
}
const TextTokenizer& SequenceClassifier::tokenizer() const {
  return impl_->tokenizer;
}
const std::vector<std::string>& SequenceClassifier::labels() const {
  return impl_->config.labels;
}
ScoreActivation SequenceClassifier::activation() const {
  return impl_->activation;
}
std::size_t SequenceClassifier::max_length() const {
  return impl_->tokenizer.max_length();
}
const fs::path& SequenceClassifier::weights_path() const {
  return impl_->weights_path;
}

namespace score_internal {

void check_finite_logits(const float* row, std::size_t n, const std::string& whose,
                         const std::string& remedy) {
  for (std::size_t j = 0; j < n; ++j) {
    VLBIAS_CHECK(std::isfinite(row[j]), InputError,
                 "the logits of {} are not finite (label {} is {}): {}", whose, j, row[j], remedy);
  }
}

}  // namespace score_internal

Matrix SequenceClassifier::logits(const std::vector<std::vector<std::int32_t>>& ids) const {
  const ClassifierConfig& c = impl_->config;
  const std::size_t capacity = position_capacity(c);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::vector<std::int32_t>& t = ids[i];
    VLBIAS_CHECK(!t.empty() && t.size() <= capacity, InputError,
                 "text {} has {} tokens; expected 1 to {} (the model's position embeddings)", i,
                 t.size(), capacity);
    for (std::size_t j = 0; j < t.size(); ++j) {
      VLBIAS_CHECK(t[j] >= 0 && static_cast<std::size_t>(t[j]) < c.vocab_size, InputError,
                   "text {} has token id {} at position {}; expected 0 <= id < {} (the model's "
                   "vocabulary size)",
                   i, t[j], j, c.vocab_size);
    }
  }
  Matrix out = score_internal::classifier_forward(c, impl_->weights, ids);
  for (std::size_t i = 0; i < out.rows; ++i) {
    score_internal::check_finite_logits(out.row(i), out.cols, fmt::format("text {}", i),
                                        "the forward overflowed float32 (are the weights sane?)");
  }
  return out;
}

void SequenceClassifier::activate(const float* logits, double* out) const {
  const std::size_t n = impl_->config.labels.size();
  if (impl_->activation == ScoreActivation::Sigmoid) {
    for (std::size_t j = 0; j < n; ++j) out[j] = 1.0 / (1.0 + std::exp(-double{logits[j]}));
    return;
  }
  double mx = logits[0];
  for (std::size_t j = 1; j < n; ++j) mx = std::max(mx, double{logits[j]});
  double sum = 0.0;
  for (std::size_t j = 0; j < n; ++j) sum += (out[j] = std::exp(double{logits[j]} - mx));
  for (std::size_t j = 0; j < n; ++j) out[j] /= sum;
}

ClassifierScores SequenceClassifier::score(const std::vector<std::string>& texts) const {
  const std::size_t n = texts.size(), labels = impl_->config.labels.size();
  ClassifierScores s;
  std::vector<std::vector<std::int32_t>> ids(n);
  std::vector<char> cut(n, 0);
  parallel_for(n, [&](std::size_t i) {
    TokenizedText t = impl_->tokenizer.encode(texts[i]);
    cut[i] = t.truncated ? 1 : 0;
    ids[i] = std::move(t.ids);
  });
  s.tokens.resize(n);
  s.truncated.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    s.tokens[i] = ids[i].size();
    s.truncated[i] = cut[i] != 0;
    s.truncated_count += cut[i];
  }
  s.logits = logits(ids);
  s.probabilities.resize(n * labels);
  for (std::size_t i = 0; i < n; ++i)
    activate(s.logits.row(i), s.probabilities.data() + i * labels);
  return s;
}

}  // namespace vlbias
