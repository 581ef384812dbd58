// tokenizer.json (the tokenizers library's serialization) to a Pipeline: the model
// and the components BERT, DistilBERT, RoBERTa and XLM-RoBERTa use; anything else
// is refused by name. Component semantics: wordpiece.h, byte_bpe.h, unigram.h.
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "byte_bpe.h"
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

using json = nlohmann::json;
using V = json::value_t;

// The "type" of a component object, or "" for null.
std::string type_of(const json* component, const std::string& where) {
  if (component == nullptr) return "";
  return member(*component, "type", V::string, where).get<std::string>();
}

std::unique_ptr<SegmentModel> wordpiece_model(const json& root, const json& model,
                                              const std::string& source) {
  const std::string where = fmt::format("'{}' normalizer", source);
  const json* normalizer =
      optional_member(root, "normalizer", V::object, fmt::format("'{}'", source));
  BertNormalization norm;  // a null normalizer changes nothing
  norm.clean_text = norm.handle_chinese_chars = norm.lowercase = false;
  norm.strip_accents = false;
  const std::string ntype = type_of(normalizer, where);
  if (ntype == "BertNormalizer") {
    norm.strip_accents.reset();
    norm.clean_text = bool_member(*normalizer, "clean_text", true, where);
    norm.handle_chinese_chars = bool_member(*normalizer, "handle_chinese_chars", true, where);
    norm.lowercase = bool_member(*normalizer, "lowercase", true, where);
    if (const json* s = optional_member(*normalizer, "strip_accents", V::boolean, where)) {
      norm.strip_accents = s->get<bool>();
    }
  } else {
    VLBIAS_CHECK(ntype.empty(), InputError,
                 "{}: type '{}' is not supported with WordPiece; expected BertNormalizer or null",
                 where, excerpt(ntype));
  }
  const json* pre = optional_member(root, "pre_tokenizer", V::object, fmt::format("'{}'", source));
  const std::string ptype = type_of(pre, fmt::format("'{}' pre_tokenizer", source));
  VLBIAS_CHECK(ptype == "BertPreTokenizer", InputError,
               "'{}' pre_tokenizer: type '{}' is not supported with WordPiece; expected "
               "BertPreTokenizer",
               source, excerpt(ptype.empty() ? "null" : ptype));
  const std::string mwhere = fmt::format("'{}' model", source);
  WordPieceVocab vocab;
  vocab.ids = read_vocab_object(member(model, "vocab", V::object, mwhere), mwhere + " vocab");
  vocab.continuing_prefix = member(model, "continuing_subword_prefix", V::string, mwhere);
  const json& max_chars = member(model, "max_input_chars_per_word", V::number_integer, mwhere);
  VLBIAS_CHECK(max_chars.get<std::int64_t>() >= 0, InputError,
               "{}: max_input_chars_per_word is {}; expected a count", mwhere,
               max_chars.get<std::int64_t>());
  vocab.max_input_chars_per_word = max_chars.get<std::size_t>();
  const std::string unk = member(model, "unk_token", V::string, mwhere);
  auto it = vocab.ids.find(unk);
  VLBIAS_CHECK(it != vocab.ids.end(), InputError, "{}: unk_token '{}' is not in the vocabulary",
               mwhere, excerpt(unk));
  vocab.unk_id = it->second;
  return make_wordpiece_model(BertFlavor::Tokenizers, norm, std::move(vocab));
}

std::unique_ptr<SegmentModel> bpe_model(const json& root, const json& model,
                                        const std::string& source) {
  const json* normalizer =
      optional_member(root, "normalizer", V::object, fmt::format("'{}'", source));
  const std::string ntype = type_of(normalizer, fmt::format("'{}' normalizer", source));
  VLBIAS_CHECK(ntype.empty(), InputError,
               "'{}' normalizer: type '{}' is not supported with BPE; expected null (RoBERTa "
               "has no normalizer)",
               source, excerpt(ntype));
  const std::string pwhere = fmt::format("'{}' pre_tokenizer", source);
  const json* pre = optional_member(root, "pre_tokenizer", V::object, fmt::format("'{}'", source));
  const std::string ptype = type_of(pre, pwhere);
  VLBIAS_CHECK(ptype == "ByteLevel", InputError,
               "{}: type '{}' is not supported with BPE; expected ByteLevel", pwhere,
               excerpt(ptype.empty() ? "null" : ptype));
  ByteLevelOptions options;
  options.add_prefix_space = bool_member(*pre, "add_prefix_space", true, pwhere);
  options.use_regex = bool_member(*pre, "use_regex", true, pwhere);
  const std::string mwhere = fmt::format("'{}' model", source);
  VLBIAS_CHECK(optional_member(model, "dropout", V::number_float, mwhere) == nullptr, InputError,
               "{}: dropout is set; expected null (dropout makes tokenization random)", mwhere);
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json* affix = optional_member(model, key, V::string, mwhere);
    VLBIAS_CHECK(affix == nullptr || affix->get<std::string>().empty(), InputError,
                 "{}: {} is '{}'; expected null or \"\" (byte-level BPE has none)", mwhere, key,
                 excerpt(affix == nullptr ? "" : affix->get<std::string>()));
  }
  VLBIAS_CHECK(!bool_member(model, "byte_fallback", false, mwhere), InputError,
               "{}: byte_fallback is true; expected false for byte-level BPE", mwhere);
  options.ignore_merges = bool_member(model, "ignore_merges", false, mwhere);
  BpeVocab vocab;
  vocab.ids = read_vocab_object(member(model, "vocab", V::object, mwhere), mwhere + " vocab");
  set_byte_ids(vocab, mwhere + " vocab");
  read_merges(member(model, "merges", V::array, mwhere), mwhere + " merges", vocab);
  return make_byte_bpe_model(options, std::move(vocab));
}

std::unique_ptr<SegmentModel> unigram_model(const json& root, const json& model,
                                            const std::string& source) {
  const json* normalizer =
      optional_member(root, "normalizer", V::object, fmt::format("'{}'", source));
  std::vector<NormalizerStep> steps;
  if (normalizer != nullptr)
    read_unigram_normalizer(*normalizer, fmt::format("'{}' normalizer", source), steps);
  const json* pre = optional_member(root, "pre_tokenizer", V::object, fmt::format("'{}'", source));
  const MetaspaceOptions metaspace = read_metaspace(pre, fmt::format("'{}' pre_tokenizer", source));
  const std::string mwhere = fmt::format("'{}' model", source);
  UnigramVocab vocab;
  read_unigram_vocab(member(model, "vocab", V::array, mwhere), mwhere + " vocab", vocab);
  const json& unk = member(model, "unk_id", V::number_integer, mwhere);
  VLBIAS_CHECK(unk.get<std::int64_t>() >= 0 &&
                   unk.get<std::int64_t>() < static_cast<std::int64_t>(vocab.pieces.size()),
               InputError, "{}: unk_id {} is not an index of the {} pieces", mwhere,
               unk.get<std::int64_t>(), vocab.pieces.size());
  vocab.unk_id = unk.get<std::int32_t>();
  vocab.byte_fallback = bool_member(model, "byte_fallback", false, mwhere);
  return make_tokenizers_unigram_model(std::move(steps), metaspace, std::move(vocab), mwhere);
}

void read_truncation(const json& root, const std::string& source, Pipeline& p) {
  const std::string where = fmt::format("'{}' truncation", source);
  const json* truncation =
      optional_member(root, "truncation", V::object, fmt::format("'{}'", source));
  if (truncation == nullptr) return;
  if (const json* direction = optional_member(*truncation, "direction", V::string, where)) {
    VLBIAS_CHECK(direction->get<std::string>() == "Right", InputError,
                 "{}: direction is '{}'; expected Right (the first tokens are kept)", where,
                 excerpt(direction->get<std::string>()));
  }
  const json& max_length = member(*truncation, "max_length", V::number_integer, where);
  VLBIAS_CHECK(max_length.get<std::int64_t>() > 0, InputError,
               "{}: max_length is {}; expected a positive count", where,
               max_length.get<std::int64_t>());
  p.stated_max_length = max_length.get<std::size_t>();
  p.stated_max_length_source = "tokenizer.json truncation.max_length";
}

}  // namespace

Pipeline load_tokenizer_json(const std::filesystem::path& file) {
  const std::string source = file.string();
  const json root = parse_json(read_file_text(file, "a Hugging Face tokenizer.json"), source);
  VLBIAS_CHECK(root.is_object(), InputError, "'{}' is not a JSON object; expected a tokenizer.json",
               source);
  const json& model = member(root, "model", V::object, fmt::format("'{}'", source));
  const std::string type = member(model, "type", V::string, fmt::format("'{}' model", source));
  Pipeline p;
  p.source = "tokenizer.json";
  if (type == "WordPiece") {
    p.kind = TokenizerKind::WordPiece;
    p.model = wordpiece_model(root, model, source);
  } else if (type == "BPE") {
    p.kind = TokenizerKind::ByteLevelBpe;
    p.model = bpe_model(root, model, source);
  } else if (type == "Unigram") {
    p.kind = TokenizerKind::Unigram;
    p.model = unigram_model(root, model, source);
  } else {
    VLBIAS_FAIL(InputError,
                "'{}' model: type '{}' is not supported; expected WordPiece (BERT, DistilBERT), "
                "BPE (RoBERTa) or Unigram (XLM-RoBERTa)",
                source, excerpt(type));
  }
  read_added_tokens(root, source, p);
  read_post_processor(root, source, p);
  read_truncation(root, source, p);
  return p;
}

}  // namespace vlbias::text_internal
