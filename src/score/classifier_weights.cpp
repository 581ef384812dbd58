// Classifier weights from model.safetensors: the transformers parameter names of the four
// architectures (checks and conversion by include/vlbias/nn/weights.h), q/k/v stacked into one
// layer. See include/vlbias/score/classifier.h.
//
// Names follow transformers' modeling_bert.py, modeling_roberta.py (XLM-R shares it) and
// modeling_distilbert.py. Every tensor of the file must be used: one left over means the config
// and the weights disagree (an extra layer, a different head), which would otherwise be ignored.
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "classifier_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/io/tensor/safetensors.h"
#include "vlbias/io/tensor/torch_checkpoint.h"
#include "vlbias/nn/weights.h"

namespace vlbias::score_internal {

namespace {

// Buffers transformers keeps in some checkpoints; not parameters.
const std::set<std::string> kIgnoredTensors = {
    "bert.embeddings.position_ids", "roberta.embeddings.position_ids",
    "distilbert.embeddings.position_ids", "bert.embeddings.token_type_ids",
    "roberta.embeddings.token_type_ids",
    // RobertaForSequenceClassification builds its encoder without the pooler; checkpoints saved
    // from a RobertaModel keep it, and transformers drops it on load with a warning.
    "roberta.pooler.dense.weight", "roberta.pooler.dense.bias"};

void load_distilbert(WeightsReader& r, const ClassifierConfig& c, ClassifierWeights& w) {
  const std::size_t h = c.hidden, n = c.labels.size();
  const std::string p = "distilbert.";
  w.word_emb = r.read(p + "embeddings.word_embeddings.weight", {c.vocab_size, h});
  w.pos_emb = r.read(p + "embeddings.position_embeddings.weight", {c.max_positions, h});
  w.ln_emb = r.layer_norm(p + "embeddings.LayerNorm", h);
  for (std::size_t i = 0; i < c.layers; ++i) {
    const std::string q = fmt::format("{}transformer.layer.{}.", p, i);
    EncoderLayer l;
    l.qkv = r.stacked_linear({q + "attention.q_lin", q + "attention.k_lin", q + "attention.v_lin"},
                             h, h);
    l.out = r.linear(q + "attention.out_lin", h, h);
    l.ln_attn = r.layer_norm(q + "sa_layer_norm", h);
    l.fc1 = r.linear(q + "ffn.lin1", c.intermediate, h);
    l.fc2 = r.linear(q + "ffn.lin2", h, c.intermediate);
    l.ln_out = r.layer_norm(q + "output_layer_norm", h);
    w.layers.push_back(std::move(l));
  }
  w.head_dense = r.linear("pre_classifier", h, h);
  w.head_out = r.linear("classifier", n, h);
  w.head_act = HeadActivation::Relu;
}

void load_bert_like(WeightsReader& r, const ClassifierConfig& c, ClassifierWeights& w) {
  const std::size_t h = c.hidden, n = c.labels.size();
  const bool bert = c.architecture == ClassifierArchitecture::Bert;
  const std::string p = bert ? "bert." : "roberta.";
  w.word_emb = r.read(p + "embeddings.word_embeddings.weight", {c.vocab_size, h});
  w.pos_emb = r.read(p + "embeddings.position_embeddings.weight", {c.max_positions, h});
  const std::vector<float> types =
      r.read(p + "embeddings.token_type_embeddings.weight", {c.type_vocab_size, h});
  w.type_row.assign(types.begin(), types.begin() + static_cast<std::ptrdiff_t>(h));
  w.ln_emb = r.layer_norm(p + "embeddings.LayerNorm", h);
  for (std::size_t i = 0; i < c.layers; ++i) {
    const std::string q = fmt::format("{}encoder.layer.{}.", p, i);
    EncoderLayer l;
    l.qkv = r.stacked_linear(
        {q + "attention.self.query", q + "attention.self.key", q + "attention.self.value"}, h, h);
    l.out = r.linear(q + "attention.output.dense", h, h);
    l.ln_attn = r.layer_norm(q + "attention.output.LayerNorm", h);
    l.fc1 = r.linear(q + "intermediate.dense", c.intermediate, h);
    l.fc2 = r.linear(q + "output.dense", h, c.intermediate);
    l.ln_out = r.layer_norm(q + "output.LayerNorm", h);
    w.layers.push_back(std::move(l));
  }
  if (bert) {
    w.head_dense = r.linear(p + "pooler.dense", h, h);
    w.head_out = r.linear("classifier", n, h);
  } else {
    w.head_dense = r.linear("classifier.dense", h, h);
    w.head_out = r.linear("classifier.out_proj", n, h);
  }
  w.head_act = HeadActivation::Tanh;
}

}  // namespace

ClassifierWeights load_classifier_weights(const std::filesystem::path& path,
                                          const ClassifierConfig& config) {
  const std::filesystem::path weights =
      model_weights_file(path.parent_path(), path.filename().string(), "pytorch_model.bin");
  VLBIAS_CHECK(!weights.empty(), InputError,
               "the model folder '{}' has no model.safetensors or pytorch_model.bin",
               path.parent_path().string());
  const SafetensorsFile file = open_weights_file(weights);  // .safetensors, or PyTorch's .bin
  WeightsReader r(file, {"the model described by config.json", kIgnoredTensors});
  ClassifierWeights w;
  if (config.architecture == ClassifierArchitecture::DistilBert) {
    load_distilbert(r, config, w);
  } else {
    load_bert_like(r, config, w);
  }
  r.require_all_used();
  return w;
}

}  // namespace vlbias::score_internal
