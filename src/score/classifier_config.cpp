// config.json of a Hugging Face sequence-classification folder: the architecture, the encoder's
// sizes, the activation, the labels. See include/vlbias/score/classifier.h.
//
// Keys as transformers' BertConfig / RobertaConfig / XLMRobertaConfig / DistilBertConfig write
// them (DistilBERT has its own names: dim, n_layers, n_heads, hidden_dim, activation). Every
// value is checked for type and range here, so a hostile config.json cannot ask for a huge
// allocation: the weights' shapes are then compared with these sizes before anything is read.
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "classifier_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"

namespace vlbias::score_internal {

namespace fs = std::filesystem;

namespace {

struct ConfigReader {
  const Json& json;
  std::string where;  // "'dir/config.json'"

  const Json* find(const char* key) const {
    const auto it = json.find(key);
    return it == json.end() || it->is_null() ? nullptr : &*it;
  }

  // A required integer in [lo, hi].
  std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi) const {
    const Json* v = find(key);
    VLBIAS_CHECK(v != nullptr, InputError, "{} has no '{}'; expected an integer from {} to {}",
                 where, key, lo, hi);
    return checked_integer(*v, key, lo, hi);
  }

  std::int64_t integer_or(const char* key, std::int64_t fallback, std::int64_t lo,
                          std::int64_t hi) const {
    const Json* v = find(key);
    return v == nullptr ? fallback : checked_integer(*v, key, lo, hi);
  }

  std::int64_t checked_integer(const Json& v, const char* key, std::int64_t lo,
                               std::int64_t hi) const {
    const bool integral = v.is_number_integer() || v.is_number_unsigned();
    VLBIAS_CHECK(integral && (v.is_number_unsigned() ? v.get<std::uint64_t>() <= 1ull << 62 : true),
                 InputError, "{}: '{}' is {}; expected an integer from {} to {}", where, key,
                 v.dump(), lo, hi);
    const std::int64_t n = v.get<std::int64_t>();
    VLBIAS_CHECK(n >= lo && n <= hi, InputError,
                 "{}: '{}' is {}; expected an integer from {} to {}", where, key, n, lo, hi);
    return n;
  }

  std::string string_or(const char* key, const std::string& fallback) const {
    const Json* v = find(key);
    if (v == nullptr) return fallback;
    VLBIAS_CHECK(v->is_string(), InputError, "{}: '{}' is {}; expected a string", where, key,
                 v->dump());
    return v->get<std::string>();
  }
};

ClassifierArchitecture architecture_of(const ConfigReader& r) {
  const Json* a = r.find("architectures");
  VLBIAS_CHECK(a != nullptr && a->is_array() && !a->empty() && (*a)[0].is_string(), InputError,
               "{} has no 'architectures' list naming the model class; expected one of "
               "BertForSequenceClassification, RobertaForSequenceClassification, "
               "XLMRobertaForSequenceClassification, DistilBertForSequenceClassification",
               r.where);
  const std::string name = (*a)[0].get<std::string>();
  for (ClassifierArchitecture c :
       {ClassifierArchitecture::Bert, ClassifierArchitecture::Roberta,
        ClassifierArchitecture::XlmRoberta, ClassifierArchitecture::DistilBert}) {
    if (name == to_string(c)) return c;
  }
  VLBIAS_FAIL(InputError,
              "{}: architecture '{}' is not supported; expected one of "
              "BertForSequenceClassification, RobertaForSequenceClassification, "
              "XLMRobertaForSequenceClassification, DistilBertForSequenceClassification",
              r.where, name.substr(0, 200));
}

Activation activation_of(const std::string& name, const char* key, const std::string& where) {
  if (name == "gelu") return Activation::Gelu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::GeluTanh;
  VLBIAS_FAIL(InputError,
              "{}: '{}' is '{}'; expected gelu, gelu_new or gelu_pytorch_tanh (the activations "
              "this runtime implements)",
              where, key, name.substr(0, 200));
}

// id2label in id order: keys "0" .. "n-1", each once, values strings.
std::vector<std::string> labels_of(const ConfigReader& r) {
  const Json* m = r.find("id2label");
  if (m == nullptr) {
    // transformers' default: num_labels (2) labels named LABEL_i.
    const std::int64_t n = r.integer_or("num_labels", 2, 1, 4096);
    std::vector<std::string> labels;
    for (std::int64_t i = 0; i < n; ++i) labels.push_back(fmt::format("LABEL_{}", i));
    return labels;
  }
  VLBIAS_CHECK(m->is_object() && !m->empty() && m->size() <= 4096, InputError,
               "{}: 'id2label' is not an object of 1 to 4096 labels (\"0\": \"name\", ...)",
               r.where);
  std::vector<std::string> labels(m->size());
  std::vector<bool> seen(m->size(), false);
  for (auto it = m->begin(); it != m->end(); ++it) {
    const std::string& key = it.key();
    std::size_t id = 0;
    bool numeric = !key.empty() && key.size() <= 5 && (key == "0" || key[0] != '0');
    for (char ch : key) {
      numeric = numeric && ch >= '0' && ch <= '9';
      if (numeric) id = id * 10 + static_cast<std::size_t>(ch - '0');
    }
    VLBIAS_CHECK(numeric && id < labels.size() && !seen[id], InputError,
                 "{}: 'id2label' has the key \"{}\"; expected the ids 0 to {}, each once", r.where,
                 key.substr(0, 100), labels.size() - 1);
    VLBIAS_CHECK(it.value().is_string() && !it.value().get<std::string>().empty(), InputError,
                 "{}: 'id2label' maps {} to {}; expected a non-empty string", r.where, id,
                 it.value().dump().substr(0, 100));
    seen[id] = true;
    labels[id] = it.value().get<std::string>();
  }
  if (r.find("num_labels") != nullptr) {
    const std::int64_t n = r.integer("num_labels", 1, 4096);
    VLBIAS_CHECK(static_cast<std::size_t>(n) == labels.size(), InputError,
                 "{}: 'num_labels' is {} but 'id2label' has {} labels", r.where, n, labels.size());
  }
  return labels;
}

void read_sizes(const ConfigReader& r, ClassifierConfig& c) {
  const bool distil = c.architecture == ClassifierArchitecture::DistilBert;
  c.hidden = static_cast<std::size_t>(r.integer(distil ? "dim" : "hidden_size", 1, 65536));
  c.layers =
      static_cast<std::size_t>(r.integer(distil ? "n_layers" : "num_hidden_layers", 1, 1024));
  c.heads = static_cast<std::size_t>(r.integer(distil ? "n_heads" : "num_attention_heads", 1,
                                               static_cast<std::int64_t>(c.hidden)));
  VLBIAS_CHECK(c.hidden % c.heads == 0, InputError,
               "{}: the hidden size {} is not a multiple of the {} attention heads", r.where,
               c.hidden, c.heads);
  c.intermediate =
      static_cast<std::size_t>(r.integer(distil ? "hidden_dim" : "intermediate_size", 1, 1 << 20));
  c.vocab_size = static_cast<std::size_t>(r.integer("vocab_size", 1, 1 << 24));
  c.max_positions = static_cast<std::size_t>(r.integer("max_position_embeddings", 1, 1 << 20));
  const bool roberta = c.architecture == ClassifierArchitecture::Roberta ||
                       c.architecture == ClassifierArchitecture::XlmRoberta;
  c.pad_token_id = static_cast<std::int32_t>(r.integer_or(
      "pad_token_id", roberta ? 1 : 0, 0, static_cast<std::int64_t>(c.vocab_size) - 1));
  if (distil) {
    c.type_vocab_size = 0;
    c.layer_norm_eps = 1e-12f;  // fixed in modeling_distilbert.py
    c.hidden_act = activation_of(r.string_or("activation", "gelu"), "activation", r.where);
    return;
  }
  c.type_vocab_size = static_cast<std::size_t>(r.integer_or("type_vocab_size", 2, 1, 65536));
  c.hidden_act = activation_of(r.string_or("hidden_act", "gelu"), "hidden_act", r.where);
  const Json* eps = r.find("layer_norm_eps");
  if (eps != nullptr) {
    VLBIAS_CHECK(eps->is_number() && std::isfinite(eps->get<double>()) &&
                     eps->get<double>() > 0.0 && eps->get<double>() < 1.0,
                 InputError, "{}: 'layer_norm_eps' is {}; expected a number in (0, 1)", r.where,
                 eps->dump());
    c.layer_norm_eps = static_cast<float>(eps->get<double>());
  }
  const std::string pos = r.string_or("position_embedding_type", "absolute");
  VLBIAS_CHECK(pos == "absolute", InputError,
               "{}: 'position_embedding_type' is '{}'; only absolute position embeddings are "
               "supported",
               r.where, pos.substr(0, 100));
  if (roberta) {
    // Position ids run from pad_token_id + 1: the table needs at least one more row.
    VLBIAS_CHECK(c.max_positions > static_cast<std::size_t>(c.pad_token_id) + 1, InputError,
                 "{}: 'max_position_embeddings' is {}; expected more than pad_token_id + 1 = {} "
                 "(RoBERTa's positions start after the padding index)",
                 r.where, c.max_positions, c.pad_token_id + 1);
  }
}

}  // namespace

ClassifierConfig read_classifier_config(const fs::path& dir) {
  const fs::path file = dir / "config.json";
  VLBIAS_CHECK(fs::is_directory(dir), InputError,
               "the model folder '{}' does not exist or is not a folder", dir.string());
  VLBIAS_CHECK(fs::is_regular_file(file), InputError,
               "the model folder '{}' has no config.json (a Hugging Face sequence-classification "
               "folder holds config.json, model.safetensors and the tokenizer files)",
               dir.string());
  return parse_classifier_config(
      read_file_text(file, "a model configuration", std::uintmax_t{16} << 20),
      fmt::format("'{}'", file.string()));
}

ClassifierConfig parse_classifier_config(std::string_view text, const std::string& where) {
  const Json json = parse_json(text, where);
  VLBIAS_CHECK(json.is_object(), InputError, "{} is not a JSON object", where);
  const ConfigReader r{json, where};
  ClassifierConfig c;
  c.architecture = architecture_of(r);
  read_sizes(r, c);
  c.labels = labels_of(r);
  c.problem_type = r.string_or("problem_type", "");
  VLBIAS_CHECK(c.problem_type.empty() || c.problem_type == "multi_label_classification" ||
                   c.problem_type == "single_label_classification",
               InputError,
               "{}: 'problem_type' is '{}'; expected multi_label_classification or "
               "single_label_classification (regression heads are not supported)",
               where, c.problem_type.substr(0, 100));
  return c;
}

}  // namespace vlbias::score_internal
