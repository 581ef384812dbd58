// TextTokenizer (include/vlbias/text/tokenizer.h): choosing the tokenizer files of a
// model folder, the maximum length, and the special tokens and truncation around a
// pipeline's content ids.
#include "vlbias/io/file_text.h"
#include "vlbias/text/tokenizer.h"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "text_files.h"
#include "tokenizer_pipeline.h"
#include "vlbias/core/error.h"
#include "vlbias/text/unicode_text.h"

namespace vlbias {

namespace fs = std::filesystem;
using nlohmann::json;
using text_internal::optional_member;

const char* to_string(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::WordPiece:
      return "WordPiece";
    case TokenizerKind::ByteLevelBpe:
      return "byte-level BPE";
    case TokenizerKind::Unigram:
      return "Unigram";
  }
  return "?";
}

struct TextTokenizer::Impl {
  text_internal::Pipeline pipeline;
  std::size_t max_length = 0;
  std::string max_length_source;
};

namespace {

struct ModelConfig {
  std::optional<std::size_t> max_length;
  std::string max_length_source;
  std::optional<std::int32_t> pad_token_id;
};

// config.json: max_position_embeddings, less RoBERTa's position offset (position ids
// start at padding_idx + 1 = pad_token_id + 1) for roberta and xlm-roberta.
ModelConfig read_model_config(const fs::path& dir) {
  ModelConfig m;
  const fs::path file = dir / "config.json";
  if (!fs::exists(file)) return m;
  const std::string where = fmt::format("'{}'", file.string());
  const json config = text_internal::parse_json(
      read_file_text(file, "the model configuration (JSON)"), file.string());
  VLBIAS_CHECK(config.is_object(), InputError, "{} is not a JSON object", where);
  const json* pad = optional_member(config, "pad_token_id", json::value_t::number_integer, where);
  if (pad != nullptr && pad->get<std::int64_t>() >= 0 && pad->get<std::int64_t>() < (1ll << 31)) {
    m.pad_token_id = pad->get<std::int32_t>();
  }
  const json* positions =
      optional_member(config, "max_position_embeddings", json::value_t::number_integer, where);
  if (positions == nullptr) return m;
  const std::int64_t n = positions->get<std::int64_t>();
  const json* type = optional_member(config, "model_type", json::value_t::string, where);
  const std::string model_type = type != nullptr ? type->get<std::string>() : "";
  std::int64_t offset = 0;
  if (model_type == "roberta" || model_type == "xlm-roberta") {
    offset = m.pad_token_id.value_or(1) + 1;
  }
  VLBIAS_CHECK(n > offset, InputError,
               "{}: max_position_embeddings is {}; expected more than the position offset {}",
               where, n, offset);
  m.max_length = static_cast<std::size_t>(n - offset);
  m.max_length_source =
      offset > 0 ? fmt::format("config.json max_position_embeddings {} - {} ({} position offset)",
                               n, offset, model_type)
                 : fmt::format("config.json max_position_embeddings {}", n);
  return m;
}

// tokenizer_config.json's model_max_length, unless absent or transformers' "no limit"
// (int(1e30)).
std::optional<std::size_t> tokenizer_config_max_length(const fs::path& dir) {
  const fs::path file = dir / "tokenizer_config.json";
  if (!fs::exists(file)) return std::nullopt;
  const json config =
      text_internal::parse_json(read_file_text(file, "tokenizer options (JSON)"), file.string());
  if (!config.is_object()) return std::nullopt;
  auto it = config.find("model_max_length");
  if (it == config.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (v < 1 || v >= 1e6) return std::nullopt;
  return static_cast<std::size_t>(v);
}

// The pad token's id: config.json's pad_token_id, else the tokenizer's pad token.
std::int32_t resolve_pad_id(const ModelConfig& config, const text_internal::Pipeline& p) {
  if (config.pad_token_id) return *config.pad_token_id;
  if (p.pad_id >= 0) return p.pad_id;
  for (const char* token : {"[PAD]", "<pad>"}) {
    auto it = p.added_ids.find(token);
    if (it != p.added_ids.end()) return it->second;
  }
  return -1;
}

}  // namespace

TextTokenizer::TextTokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

TextTokenizer TextTokenizer::from_folder(const fs::path& dir, const TokenizerOptions& options) {
  std::error_code ec;
  VLBIAS_CHECK(fs::is_directory(dir, ec), InputError,
               "'{}' is not a folder; expected a Hugging Face model folder", dir.string());
  auto impl = std::make_shared<Impl>();
  const fs::path tokenizer_json = dir / "tokenizer.json";
  const bool use_json = options.source == TokenizerSource::TokenizerJson ||
                        (options.source == TokenizerSource::Auto && fs::exists(tokenizer_json));
  impl->pipeline = use_json ? text_internal::load_tokenizer_json(tokenizer_json)
                            : text_internal::load_legacy_files(dir);
  text_internal::Pipeline& p = impl->pipeline;
  const ModelConfig config = read_model_config(dir);
  p.pad_id = resolve_pad_id(config, p);
  if (options.max_length) {
    impl->max_length = *options.max_length;
    impl->max_length_source = "given";
  } else if (config.max_length) {
    impl->max_length = *config.max_length;
    impl->max_length_source = config.max_length_source;
  } else if (p.stated_max_length) {
    impl->max_length = *p.stated_max_length;
    impl->max_length_source = p.stated_max_length_source;
  } else if (const auto stated = tokenizer_config_max_length(dir)) {
    impl->max_length = *stated;
    impl->max_length_source = "tokenizer_config.json model_max_length";
  } else {
    VLBIAS_FAIL(UsageError,
                "'{}' states no maximum sequence length (config.json max_position_embeddings, "
                "tokenizer.json truncation, tokenizer_config.json model_max_length); give one",
                dir.string());
  }
  const std::size_t specials = p.prefix.size() + p.suffix.size();
  VLBIAS_CHECK(impl->max_length > specials, UsageError,
               "a maximum length of {} leaves no room for content beside the {} special tokens; "
               "expected at least {}",
               impl->max_length, specials, specials + 1);
  return TextTokenizer(std::move(impl));
}

std::vector<std::int32_t> TextTokenizer::content_ids(std::string_view utf8_text) const {
  std::vector<std::int32_t> ids;
  impl_->pipeline.encode_content(utf8_text, ids);
  return ids;
}

TokenizedText TextTokenizer::encode(std::string_view utf8_text) const {
  return encode(utf8_text, impl_->max_length);
}

TokenizedText TextTokenizer::encode(std::string_view utf8_text, std::size_t max_length) const {
  const text_internal::Pipeline& p = impl_->pipeline;
  const std::size_t specials = p.prefix.size() + p.suffix.size();
  VLBIAS_CHECK(max_length > specials, UsageError,
               "a maximum length of {} leaves no room for content beside the {} special tokens; "
               "expected at least {}",
               max_length, specials, specials + 1);
  TokenizedText out;
  out.ids = p.prefix;
  p.encode_content(utf8_text, out.ids);
  out.content_length = out.ids.size() - p.prefix.size();
  const std::size_t room = max_length - specials;
  out.truncated = out.content_length > room;
  if (out.truncated) out.ids.resize(p.prefix.size() + room);
  out.ids.insert(out.ids.end(), p.suffix.begin(), p.suffix.end());
  return out;
}

std::size_t TextTokenizer::max_length() const {
  return impl_->max_length;
}
const std::string& TextTokenizer::max_length_source() const {
  return impl_->max_length_source;
}
TokenizerKind TextTokenizer::kind() const {
  return impl_->pipeline.kind;
}
const std::string& TextTokenizer::source() const {
  return impl_->pipeline.source;
}
const std::vector<std::int32_t>& TextTokenizer::prefix_ids() const {
  return impl_->pipeline.prefix;
}
const std::vector<std::int32_t>& TextTokenizer::suffix_ids() const {
  return impl_->pipeline.suffix;
}
std::int32_t TextTokenizer::pad_id() const {
  return impl_->pipeline.pad_id;
}

std::size_t TextTokenizer::vocab_size() const {
  std::size_t bound = impl_->pipeline.model->vocab_size();
  for (const auto& entry : impl_->pipeline.added_ids) {
    bound = std::max(bound, static_cast<std::size_t>(entry.second) + 1);
  }
  return bound;
}

std::optional<std::int32_t> TextTokenizer::token_to_id(std::string_view token) const {
  auto it = impl_->pipeline.added_ids.find(std::string(token));
  if (it != impl_->pipeline.added_ids.end()) return it->second;
  return impl_->pipeline.model->token_to_id(token);
}

std::string TextTokenizer::unicode_version() {
  return fmt::format("unicodedata {}, regex {}", unicode::unicode_data_version(),
                     unicode::regex_unicode_version());
}

}  // namespace vlbias
