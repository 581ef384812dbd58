// Bad model folders given to the native sequence classifiers (src/score/classifier*.cpp): each
// refused with one InputError naming the file and what was expected, never a crash or a silent
// wrong model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/json.h"
#include "vlbias/score/classifier.h"

namespace vlbias {
namespace {
namespace in_classifier_errors_test {

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing_util::error_of;

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

// A fresh copy of a fixture folder.
fs::path copy_fixture(const std::string& name, const std::string& tag) {
  const fs::path src = fs::path(VLBIAS_SOURCE_DIR) / "tests" / "fixtures" / "classifier" / name;
  const fs::path dst = fs::temp_directory_path() / "vlbias_classifier_test" / tag;
  fs::remove_all(dst);
  fs::create_directories(dst.parent_path());
  fs::copy(src, dst, fs::copy_options::recursive);
  return dst;
}

void edit_config(const fs::path& dir, const std::function<void(Json&)>& edit) {
  Json c = parse_json(read_bytes(dir / "config.json"), "config.json");
  edit(c);
  write_bytes(dir / "config.json", c.dump());
}

// Rewrites model.safetensors: edit(header, data) may change the JSON header and the data bytes.
void edit_weights(const fs::path& dir, const std::function<void(Json&, std::string&)>& edit) {
  const std::string bytes = read_bytes(dir / "model.safetensors");
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  Json header = parse_json(bytes.substr(8, n), "header");
  std::string data = bytes.substr(8 + n);
  edit(header, data);
  std::string h = header.dump();
  while (h.size() % 8 != 0) h += ' ';
  std::string out(8, '\0');
  const std::uint64_t len = h.size();
  std::memcpy(out.data(), &len, 8);
  write_bytes(dir / "model.safetensors", out + h + data);
}

std::string load_error(const fs::path& dir) {
  return error_of<InputError>([&] { SequenceClassifier::load(dir); });
}

TEST(SequenceClassifierErrors, RefusesMissingFoldersAndFiles) {
  EXPECT_THAT(load_error(fs::temp_directory_path() / "vlbias_no_such_model"),
              HasSubstr("does not exist"));
  const fs::path no_config = copy_fixture("bert_multilabel", "no_config");
  fs::remove(no_config / "config.json");
  EXPECT_THAT(load_error(no_config), HasSubstr("has no config.json"));
  const fs::path no_weights = copy_fixture("bert_multilabel", "no_weights");
  fs::remove(no_weights / "model.safetensors");
  EXPECT_THAT(load_error(no_weights), HasSubstr("has no model.safetensors"));
  const fs::path no_tokenizer = copy_fixture("roberta_multilabel", "no_tokenizer");
  for (const char* f : {"tokenizer.json", "vocab.json", "merges.txt"}) fs::remove(no_tokenizer / f);
  EXPECT_FALSE(load_error(no_tokenizer).empty());
}

TEST(SequenceClassifierErrors, RefusesAnUnknownArchitectureByName) {
  const fs::path dir = copy_fixture("bert_multilabel", "gpt2");
  edit_config(dir,
              [](Json& c) { c["architectures"] = Json::array({"GPT2ForSequenceClassification"}); });
  const std::string e = load_error(dir);
  EXPECT_THAT(e, HasSubstr("architecture 'GPT2ForSequenceClassification' is not supported"));
  EXPECT_THAT(e, HasSubstr("config.json"));
  edit_config(dir, [](Json& c) { c.erase("architectures"); });
  EXPECT_THAT(load_error(dir), HasSubstr("has no 'architectures'"));
}

TEST(SequenceClassifierErrors, RefusesHostileConfigValues) {
  struct Case {
    const char* what;
    std::function<void(Json&)> edit;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"string size", [](Json& c) { c["hidden_size"] = "32"; }, "'hidden_size' is \"32\""},
      {"negative layers", [](Json& c) { c["num_hidden_layers"] = -1; },
       "'num_hidden_layers' is -1"},
      {"huge hidden", [](Json& c) { c["hidden_size"] = 1ll << 40; }, "'hidden_size' is"},
      {"float heads", [](Json& c) { c["num_attention_heads"] = 4.5; }, "'num_attention_heads'"},
      {"heads not dividing", [](Json& c) { c["num_attention_heads"] = 5; }, "not a multiple"},
      {"unknown activation", [](Json& c) { c["hidden_act"] = "swish"; }, "'hidden_act' is 'swish'"},
      {"nan eps", [](Json& c) { c["layer_norm_eps"] = -1.0; }, "'layer_norm_eps'"},
      {"id2label gap",
       [](Json& c) {
         c["id2label"] = Json{{"0", "a"}, {"2", "b"}};
       },
       "key \"2\""},
      {"id2label not strings",
       [](Json& c) {
         c["id2label"] = Json{{"0", 1}};
       },
       "maps 0 to 1"},
      {"num_labels disagrees", [](Json& c) { c["num_labels"] = 3; }, "'num_labels' is 3"},
      {"relative positions", [](Json& c) { c["position_embedding_type"] = "relative_key"; },
       "relative_key"},
      {"regression", [](Json& c) { c["problem_type"] = "regression"; }, "regression"},
      {"pad beyond vocab", [](Json& c) { c["pad_token_id"] = 1 << 30; }, "'pad_token_id'"},
      {"wrong hidden size", [](Json& c) { c["hidden_size"] = 64; }, "has shape [3000, 32]"},
      {"more layers", [](Json& c) { c["num_hidden_layers"] = 3; }, "bert.encoder.layer.2."},
      {"fewer layers", [](Json& c) { c["num_hidden_layers"] = 1; }, "does not have"},
      {"more labels",
       [](Json& c) {
         c["id2label"]["6"] = "extra";
         c.erase("label2id");
       },
       "'classifier.weight' has shape [6, 32]; expected [7, 32]"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    const fs::path dir = copy_fixture("bert_multilabel", "hostile");
    edit_config(dir, k.edit);
    EXPECT_THAT(load_error(dir), HasSubstr(k.message));
  }
  const fs::path dir = copy_fixture("bert_multilabel", "not_json");
  write_bytes(dir / "config.json", std::string(100000, '['));
  EXPECT_THAT(load_error(dir), HasSubstr("nested deeper"));
  write_bytes(dir / "config.json", "[1, 2]");
  EXPECT_THAT(load_error(dir), HasSubstr("not a JSON object"));
}

TEST(SequenceClassifierErrors, RefusesAWrongShapeAMissingTensorAndNanWeights) {
  const fs::path shape = copy_fixture("bert_multilabel", "shape");
  edit_weights(shape, [](Json& h, std::string&) {
    h["bert.encoder.layer.1.output.dense.bias"]["shape"] = Json::array({2, 16});
  });
  EXPECT_THAT(load_error(shape), HasSubstr("tensor 'bert.encoder.layer.1.output.dense.bias' has "
                                           "shape [2, 16]; expected [32]"));
  const fs::path missing = copy_fixture("roberta_multilabel", "missing");
  edit_weights(missing, [](Json& h, std::string&) {
    h["roberta.encoder.layer.0.attention.self.keys.weight"] =
        h["roberta.encoder.layer.0.attention.self.key.weight"];
    h.erase("roberta.encoder.layer.0.attention.self.key.weight");
  });
  EXPECT_THAT(load_error(missing),
              HasSubstr("no tensor 'roberta.encoder.layer.0.attention.self.key.weight'"));
  const fs::path nan = copy_fixture("distilbert_single", "nan");
  edit_weights(nan, [](Json& h, std::string& data) {
    const std::size_t at = h["distilbert.transformer.layer.1.ffn.lin1.weight"]["data_offsets"][0];
    const float q = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(data.data() + at + 4 * 7, &q, 4);
  });
  EXPECT_THAT(load_error(nan), HasSubstr("distilbert.transformer.layer.1.ffn.lin1.weight"));
  const fs::path dtype = copy_fixture("bert_multilabel", "dtype");
  edit_weights(dtype, [](Json& h, std::string&) { h["classifier.bias"]["dtype"] = "I32"; });
  EXPECT_THAT(load_error(dtype), HasSubstr("'classifier.bias' has dtype I32"));
}

}  // namespace in_classifier_errors_test
}  // namespace
}  // namespace vlbias
