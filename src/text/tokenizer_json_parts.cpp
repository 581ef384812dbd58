// Readers of tokenizer.json sections (see tokenizer_json_parts.h).
#include "tokenizer_json_parts.h"

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>

#include "text_files.h"
#include "vlbias/core/error.h"
#include "vlbias/io/base64.h"
#include "vlbias/text/unicode_text.h"

namespace vlbias::text_internal {
namespace {

using json = nlohmann::json;
using V = json::value_t;

std::int32_t token_id(const json& value, const std::string& where) {
  VLBIAS_CHECK(value.is_number_integer() && value.get<std::int64_t>() >= 0 &&
                   value.get<std::int64_t>() <= std::numeric_limits<std::int32_t>::max(),
               InputError, "{} is {}; expected an integer id in [0, 2^31)", where,
               excerpt(value.dump()));
  return value.get<std::int32_t>();
}

std::u32string utf32(const std::string& s, const std::string& where) {
  return unicode::decode_utf8(s, where);
}

}  // namespace

TokenIds read_vocab_object(const json& vocab, const std::string& where) {
  // Said as it is: `[]` or `"x"` is no vocabulary at all, not an empty one.
  VLBIAS_CHECK(vocab.is_object(), InputError,
               "{} is a JSON {}, not an object; expected {{\"token\": id, ...}}", where,
               vocab.type_name());
  TokenIds ids;
  ids.reserve(vocab.size());
  std::unordered_map<std::int32_t, const std::string*> owner;
  owner.reserve(vocab.size());
  for (const auto& [token, value] : vocab.items()) {
    const std::int32_t id = token_id(value, where + " '" + excerpt(token) + "'");
    auto [it, fresh] = ids.emplace(token, id);
    const auto [o, unique] = owner.emplace(id, &it->first);
    VLBIAS_CHECK(unique, InputError,
                 "{} gives the id {} to both '{}' and '{}'; expected one token per id", where, id,
                 excerpt(*o->second), excerpt(token));
    (void)fresh;  // keys are unique: parse_json refuses a repeated key
  }
  VLBIAS_CHECK(!ids.empty(), InputError, "{} is empty; expected {{\"token\": id, ...}}", where);
  return ids;
}

void read_merges(const json& merges, const std::string& where, BpeVocab& vocab) {
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    const std::string at = where + " entry " + std::to_string(i);
    std::string left;
    std::string right;
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      const std::size_t space = s.find(' ');
      VLBIAS_CHECK(space != std::string::npos && space > 0 && space + 1 < s.size() &&
                       s.find(' ', space + 1) == std::string::npos,
                   InputError, "{} is '{}'; expected two tokens separated by one space", at,
                   excerpt(s));
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else {
      VLBIAS_CHECK(m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string(),
                   InputError, "{} is {}; expected \"left right\" or [\"left\", \"right\"]", at,
                   excerpt(m.dump()));
      left = m[0].get<std::string>();
      right = m[1].get<std::string>();
    }
    add_merge(vocab, left, right, at);
  }
}

void read_unigram_vocab(const json& vocab, const std::string& where, UnigramVocab& out) {
  out.pieces.reserve(vocab.size());
  out.scores.reserve(vocab.size());
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    const json& e = vocab[i];
    VLBIAS_CHECK(e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_number(), InputError,
                 "{} entry {} is {}; expected [\"piece\", score]", where, i, excerpt(e.dump()));
    out.pieces.push_back(e[0].get<std::string>());
    out.scores.push_back(e[1].get<double>());
  }
}

void read_unigram_normalizer(const json& normalizer, const std::string& where,
                             std::vector<NormalizerStep>& steps) {
  const std::string type = member(normalizer, "type", V::string, where);
  NormalizerStep step;
  if (type == "Sequence") {
    for (const json& n : member(normalizer, "normalizers", V::array, where)) {
      VLBIAS_CHECK(n.is_object(), InputError, "{}: a Sequence entry is {}; expected an object",
                   where, excerpt(n.dump()));
      read_unigram_normalizer(n, where, steps);
    }
    return;
  }
  if (type == "Precompiled") {
    step.kind = NormalizerStep::Kind::Precompiled;
    const std::string& b64 = member(normalizer, "precompiled_charsmap", V::string, where);
    const std::string what = where + " precompiled_charsmap";
    step.charsmap = PrecompiledCharsmap::parse(base64_decode_strict(b64, what), what);
  } else if (type == "Replace") {
    step.kind = NormalizerStep::Kind::Replace;
    step.source = where + " Replace";
    const json& pattern = member(normalizer, "pattern", V::object, where);
    step.content = utf32(member(normalizer, "content", V::string, where), where + " content");
    if (const json* s = optional_member(pattern, "String", V::string, where + " pattern")) {
      step.pattern = utf32(s->get<std::string>(), where + " pattern");
      VLBIAS_CHECK(!step.pattern.empty(), InputError, "{}: the Replace pattern is empty", where);
    } else {
      const std::string& regex = member(pattern, "Regex", V::string, where + " pattern");
      VLBIAS_CHECK(regex == " {2,}", InputError,
                   "{}: the Replace regex '{}' is not supported; expected \" {{2,}}\" (the one "
                   "transformers' SentencePiece converter writes)",
                   where, excerpt(regex));
      step.pattern_spaces = true;
    }
  } else if (type == "Strip") {
    step.kind = NormalizerStep::Kind::Strip;
    step.left = bool_member(normalizer, "strip_left", true, where);
    step.right = bool_member(normalizer, "strip_right", true, where);
  } else {
    VLBIAS_FAIL(InputError,
                "{}: type '{}' is not supported with Unigram; expected Precompiled, Replace, "
                "Strip or a Sequence of them",
                where, excerpt(type));
  }
  steps.push_back(std::move(step));
}

MetaspaceOptions read_metaspace(const json* pre, const std::string& where) {
  const std::string type = pre == nullptr ? "null" : member(*pre, "type", V::string, where);
  VLBIAS_CHECK(type == "Metaspace", InputError,
               "{}: type '{}' is not supported with Unigram; expected Metaspace", where,
               excerpt(type));
  MetaspaceOptions m;
  const std::u32string replacement =
      utf32(member(*pre, "replacement", V::string, where), where + " replacement");
  VLBIAS_CHECK(replacement.size() == 1, InputError,
               "{}: replacement has {} characters; expected one", where, replacement.size());
  m.replacement = replacement[0];
  if (const json* scheme = optional_member(*pre, "prepend_scheme", V::string, where)) {
    const std::string& s = scheme->get_ref<const std::string&>();
    VLBIAS_CHECK(s == "always" || s == "first" || s == "never", InputError,
                 "{}: prepend_scheme is '{}'; expected always, first or never", where, excerpt(s));
    m.prepend = s == "always"  ? MetaspaceOptions::Prepend::Always
                : s == "first" ? MetaspaceOptions::Prepend::First
                               : MetaspaceOptions::Prepend::Never;
  } else {
    m.prepend = bool_member(*pre, "add_prefix_space", true, where)
                    ? MetaspaceOptions::Prepend::Always
                    : MetaspaceOptions::Prepend::Never;
  }
  m.split = bool_member(*pre, "split", true, where);
  return m;
}

void read_added_tokens(const json& root, const std::string& source, Pipeline& p) {
  const std::string where = fmt::format("'{}' added_tokens", source);
  const json* added = optional_member(root, "added_tokens", V::array, fmt::format("'{}'", source));
  std::vector<AddedToken> raw;
  std::vector<AddedToken> normalized;
  for (std::size_t i = 0; added != nullptr && i < added->size(); ++i) {
    const json& t = (*added)[i];
    const std::string at = where + " entry " + std::to_string(i);
    VLBIAS_CHECK(t.is_object(), InputError, "{} is {}; expected an object", at, excerpt(t.dump()));
    const std::string content = member(t, "content", V::string, at);
    VLBIAS_CHECK(!content.empty(), InputError, "{}: content is empty", at);
    VLBIAS_CHECK(!bool_member(t, "single_word", false, at), InputError,
                 "{}: '{}' has single_word true, which is not supported", at, excerpt(content));
    AddedToken token;
    token.id = token_id(member(t, "id", V::number_integer, at), at + " id");
    token.lstrip = bool_member(t, "lstrip", false, at);
    token.rstrip = bool_member(t, "rstrip", false, at);
    token.normalized = bool_member(t, "normalized", !bool_member(t, "special", false, at), at);
    token.content = utf32(content, at + " content");
    if (token.normalized) token.content = p.model->normalize(token.content);
    p.added_ids[content] = token.id;
    (token.normalized ? normalized : raw).push_back(std::move(token));
  }
  p.raw_tokens = AddedTokenSplitter(std::move(raw), SpaceRule::WhiteSpace);
  p.normalized_tokens = AddedTokenSplitter(std::move(normalized), SpaceRule::WhiteSpace);
}

namespace {

// ["token", id] of BertProcessing / RobertaProcessing.
std::int32_t processing_token(const json& processor, const char* key, const std::string& where) {
  const json& pair = member(processor, key, V::array, where);
  VLBIAS_CHECK(pair.size() == 2 && pair[0].is_string(), InputError,
               "{}: {} is {}; expected [\"token\", id]", where, key, excerpt(pair.dump()));
  return token_id(pair[1], where + " " + key + " id");
}

void read_template(const json& processor, const std::string& where, Pipeline& p) {
  const json& single = member(processor, "single", V::array, where);
  const json* specials = optional_member(processor, "special_tokens", V::object, where);
  bool seen_a = false;
  for (const json& item : single) {
    VLBIAS_CHECK(item.is_object() && item.size() == 1, InputError,
                 "{}: single has {}; expected {{\"SpecialToken\": ...}} or {{\"Sequence\": ...}}",
                 where, excerpt(item.dump()));
    if (const json* seq = optional_member(item, "Sequence", V::object, where + " single")) {
      const std::string& id = member(*seq, "id", V::string, where + " single Sequence");
      VLBIAS_CHECK(id == "A" && !seen_a, InputError,
                   "{}: single has the sequence '{}'; expected $A once", where, excerpt(id));
      seen_a = true;
      continue;
    }
    const json& special = member(item, "SpecialToken", V::object, where + " single");
    const std::string& name = member(special, "id", V::string, where + " single SpecialToken");
    VLBIAS_CHECK(specials != nullptr && specials->contains(name), InputError,
                 "{}: '{}' is not in special_tokens", where, excerpt(name));
    const json& ids = member((*specials)[name], "ids", V::array, where + " special_tokens");
    for (const json& id : ids) {
      (seen_a ? p.suffix : p.prefix).push_back(token_id(id, where + " special_tokens ids"));
    }
  }
  VLBIAS_CHECK(seen_a, InputError, "{}: single has no $A; expected the sequence once", where);
}

}  // namespace

void read_post_processor(const json& root, const std::string& source, Pipeline& p) {
  const std::string where = fmt::format("'{}' post_processor", source);
  const json* processor =
      optional_member(root, "post_processor", V::object, fmt::format("'{}'", source));
  if (processor == nullptr) return;
  const std::string type = member(*processor, "type", V::string, where);
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    p.prefix = {processing_token(*processor, "cls", where)};
    p.suffix = {processing_token(*processor, "sep", where)};
  } else if (type == "TemplateProcessing") {
    read_template(*processor, where, p);
  } else {
    VLBIAS_FAIL(InputError,
                "{}: type '{}' is not supported; expected BertProcessing, RobertaProcessing, "
                "TemplateProcessing or null",
                where, excerpt(type));
  }
}

}  // namespace vlbias::text_internal
