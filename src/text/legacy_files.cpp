// The legacy tokenizer files of a Hugging Face model folder, read as transformers'
// Python tokenizers read them: vocab.txt (BertTokenizer), vocab.json + merges.txt
// (RobertaTokenizer), sentencepiece.bpe.model (XLMRobertaTokenizer), with the special
// tokens and options of tokenizer_config.json / special_tokens_map.json.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "byte_bpe.h"
#include "legacy_readers.h"
#include "sentencepiece_model.h"
#include "text_files.h"
#include "tokenizer_json_parts.h"
#include "tokenizer_pipeline.h"
#include "unigram.h"
#include "vlbias/core/error.h"
#include "vlbias/io/file_text.h"
#include "vlbias/text/unicode_text.h"
#include "wordpiece.h"

namespace vlbias::text_internal {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using V = json::value_t;

// tokenizer_config.json and special_tokens_map.json of the folder ({} when absent).
struct TokenizerConfig {
  json config = json::object();
  json special_map = json::object();
  std::string config_source;
};

TokenizerConfig read_config(const fs::path& dir) {
  TokenizerConfig c;
  const fs::path config = dir / "tokenizer_config.json";
  c.config_source = config.string();
  if (fs::exists(config)) {
    c.config = parse_json(read_file_text(config, "tokenizer options (JSON)"), c.config_source);
  }
  const fs::path map = dir / "special_tokens_map.json";
  if (fs::exists(map)) {
    c.special_map = parse_json(read_file_text(map, "the special tokens (JSON)"), map.string());
  }
  VLBIAS_CHECK(c.config.is_object() && c.special_map.is_object(), InputError,
               "'{}' or special_tokens_map.json is not a JSON object", c.config_source);
  VLBIAS_CHECK(!fs::exists(dir / "added_tokens.json"), InputError,
               "'{}' exists; added tokens beyond the special tokens are not supported",
               (dir / "added_tokens.json").string());
  return c;
}

// A special token: tokenizer_config.json, else special_tokens_map.json, else the
// class default; a string or an AddedToken object {"content", "lstrip", "rstrip"}.
AddedToken special_token(const TokenizerConfig& c, const std::string& key,
                         const std::string& fallback, bool default_lstrip) {
  const std::string where = fmt::format("'{}' {}", c.config_source, key);
  AddedToken t;
  t.lstrip = default_lstrip;
  std::string content = fallback;
  for (const json* source : {&c.config, &c.special_map}) {
    auto it = source->find(key);
    if (it == source->end() || it->is_null()) continue;
    if (it->is_string()) {
      content = it->get<std::string>();
    } else {
      VLBIAS_CHECK(it->is_object(), InputError, "{} is {}; expected a string or an AddedToken",
                   where, excerpt(it->dump()));
      content = member(*it, "content", V::string, where);
      t.lstrip = bool_member(*it, "lstrip", false, where);
      t.rstrip = bool_member(*it, "rstrip", false, where);
      VLBIAS_CHECK(!bool_member(*it, "single_word", false, where), InputError,
                   "{}: single_word true is not supported", where);
    }
    break;
  }
  t.content = unicode::decode_utf8(content, where);
  return t;
}

// The special tokens in transformers' SPECIAL_TOKENS_ATTRIBUTES order, ids from the
// model; tokenizer_config.json's added_tokens_decoder overrides ids and flags.
struct Special {
  const char* key;
  const char* fallback;
  bool lstrip;
};

struct Specials {
  std::vector<AddedToken> tokens;                              // each content once, in list order
  std::unordered_map<std::string, std::u32string> content_of;  // key -> content
  std::int32_t id(const std::string& key) const {
    const std::u32string& content = content_of.at(key);
    for (const AddedToken& t : tokens) {
      if (t.content == content) return t.id;
    }
    return -1;
  }
};

Specials special_tokens(const TokenizerConfig& c, const std::vector<Special>& list,
                        const SegmentModel& model) {
  Specials out;
  std::vector<AddedToken>& tokens = out.tokens;
  for (const Special& s : list) {
    AddedToken t = special_token(c, s.key, s.fallback, s.lstrip);
    out.content_of[s.key] = t.content;
    const std::string content = unicode::to_utf8(t.content);
    const bool seen = std::any_of(tokens.begin(), tokens.end(),
                                  [&](const AddedToken& x) { return x.content == t.content; });
    if (seen) continue;
    const std::optional<std::int32_t> id = model.token_to_id(content);
    VLBIAS_CHECK(id.has_value(), InputError,
                 "the {} '{}' of '{}' is not in the vocabulary; expected the model's special "
                 "tokens in it",
                 s.key, excerpt(content), c.config_source);
    t.id = *id;
    tokens.push_back(std::move(t));
  }
  const json* decoder = optional_member(c.config, "added_tokens_decoder", V::object,
                                        fmt::format("'{}'", c.config_source));
  if (decoder == nullptr) return out;
  for (const auto& [key, entry] : decoder->items()) {
    const std::string where = fmt::format("'{}' added_tokens_decoder {}", c.config_source, key);
    VLBIAS_CHECK(entry.is_object(), InputError, "{} is {}; expected an AddedToken object", where,
                 excerpt(entry.dump()));
    const std::string& text =
        member(entry, "content", V::string, where).get_ref<const std::string&>();
    const std::u32string content = unicode::decode_utf8(text, where);
    VLBIAS_CHECK(!bool_member(entry, "single_word", false, where), InputError,
                 "{}: single_word true is not supported", where);
    auto it = std::find_if(tokens.begin(), tokens.end(),
                           [&](const AddedToken& x) { return x.content == content; });
    VLBIAS_CHECK(it != tokens.end(), InputError,
                 "{} is not a special token; added tokens beyond the special tokens are not "
                 "supported",
                 where);
    VLBIAS_CHECK(
        key.find_first_not_of("0123456789") == std::string::npos && key.size() < 10 && !key.empty(),
        InputError, "{}: the key is not a token id", where);
    it->id = std::stoi(key);
    it->lstrip = bool_member(entry, "lstrip", false, where);
    it->rstrip = bool_member(entry, "rstrip", false, where);
  }
  return out;
}

void set_specials(const Specials& specials, Pipeline& p) {
  p.prefix = {specials.id("cls_token")};
  p.suffix = {specials.id("sep_token")};
  p.pad_id = specials.id("pad_token");
  for (const AddedToken& t : specials.tokens) p.added_ids[unicode::to_utf8(t.content)] = t.id;
  p.raw_tokens = AddedTokenSplitter(specials.tokens, SpaceRule::PythonIsspace);
}

Pipeline load_bert(const fs::path& dir, const TokenizerConfig& c) {
  const std::string where = fmt::format("'{}'", c.config_source);
  VLBIAS_CHECK(bool_member(c.config, "do_basic_tokenize", true, where), InputError,
               "{}: do_basic_tokenize false is not supported", where);
  const json* never_split = optional_member(c.config, "never_split", V::array, where);
  VLBIAS_CHECK(never_split == nullptr || never_split->empty(), InputError,
               "{}: never_split is not supported", where);
  BertNormalization norm;
  norm.lowercase = bool_member(c.config, "do_lower_case", true, where);
  norm.handle_chinese_chars = bool_member(c.config, "tokenize_chinese_chars", true, where);
  if (const json* s = optional_member(c.config, "strip_accents", V::boolean, where)) {
    norm.strip_accents = s->get<bool>();
  }
  WordPieceVocab vocab;
  vocab.ids = read_vocab_txt(dir / "vocab.txt");
  Pipeline p;
  p.kind = TokenizerKind::WordPiece;
  p.source = "vocab.txt";
  const AddedToken unk = special_token(c, "unk_token", "[UNK]", false);
  auto unk_it = vocab.ids.find(unicode::to_utf8(unk.content));
  VLBIAS_CHECK(unk_it != vocab.ids.end(), InputError,
               "the unk_token '{}' is not in '{}'; expected it in the vocabulary",
               excerpt(unicode::to_utf8(unk.content)), (dir / "vocab.txt").string());
  vocab.unk_id = unk_it->second;
  p.model = make_wordpiece_model(BertFlavor::Transformers, norm, std::move(vocab));
  const Specials specials = special_tokens(c,
                                           {{"unk_token", "[UNK]", false},
                                            {"sep_token", "[SEP]", false},
                                            {"pad_token", "[PAD]", false},
                                            {"cls_token", "[CLS]", false},
                                            {"mask_token", "[MASK]", false}},
                                           *p.model);
  p.lowercase_text = norm.lowercase;
  std::vector<std::u32string> specials_text;
  for (const AddedToken& t : specials.tokens) specials_text.push_back(t.content);
  p.lowercase_except = reversed_token_matcher(specials_text);
  set_specials(specials, p);
  return p;
}

// RoBERTa and XLM-R share their special tokens: <s> <pad> </s> <unk> <mask>, the
// mask taking the whitespace before it (lstrip).
const std::vector<Special>& roberta_specials() {
  static const std::vector<Special> list = {
      {"bos_token", "<s>", false},   {"eos_token", "</s>", false},  {"unk_token", "<unk>", false},
      {"sep_token", "</s>", false},  {"pad_token", "<pad>", false}, {"cls_token", "<s>", false},
      {"mask_token", "<mask>", true}};
  return list;
}

void finish_roberta_like(const TokenizerConfig& c, Pipeline& p) {
  set_specials(special_tokens(c, roberta_specials(), *p.model), p);
}

Pipeline load_roberta(const fs::path& dir, const TokenizerConfig& c) {
  const std::string where = fmt::format("'{}'", c.config_source);
  BpeVocab vocab;
  const fs::path vocab_file = dir / "vocab.json";
  vocab.ids = read_vocab_object(
      parse_json(read_file_text(vocab_file, "a BPE vocabulary (JSON)"), vocab_file.string()),
      fmt::format("'{}'", vocab_file.string()));
  set_byte_ids(vocab, fmt::format("'{}'", vocab_file.string()));
  read_merges_txt(dir / "merges.txt", vocab);
  Pipeline p;
  p.kind = TokenizerKind::ByteLevelBpe;
  p.source = "vocab.json + merges.txt";
  p.python_prefix_space = bool_member(c.config, "add_prefix_space", false, where);
  p.model = make_byte_bpe_model(ByteLevelOptions{}, std::move(vocab));
  finish_roberta_like(c, p);
  return p;
}

Pipeline load_xlm_roberta(const fs::path& dir, const TokenizerConfig& c) {
  const fs::path file = dir / "sentencepiece.bpe.model";
  const std::string bytes = read_file_text(file, "a SentencePiece model");
  Pipeline p;
  p.kind = TokenizerKind::Unigram;
  p.source = "sentencepiece.bpe.model";
  p.model =
      make_sentencepiece_model(parse_sentencepiece_model(bytes, file.string()), file.string());
  finish_roberta_like(c, p);
  return p;
}

}  // namespace

Pipeline load_legacy_files(const fs::path& dir) {
  const TokenizerConfig config = read_config(dir);
  Pipeline p;
  if (fs::exists(dir / "vocab.txt")) {
    p = load_bert(dir, config);
  } else if (fs::exists(dir / "vocab.json") || fs::exists(dir / "merges.txt")) {
    p = load_roberta(dir, config);
  } else if (fs::exists(dir / "sentencepiece.bpe.model")) {
    p = load_xlm_roberta(dir, config);
  } else {
    VLBIAS_FAIL(InputError,
                "'{}' has no tokenizer: expected tokenizer.json, vocab.txt (BERT), vocab.json + "
                "merges.txt (RoBERTa) or sentencepiece.bpe.model (XLM-RoBERTa)",
                dir.string());
  }
  return p;
}

}  // namespace vlbias::text_internal
