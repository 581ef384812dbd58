// Reading YAML specs (spec_yaml.h).
#include "vlbias/io/spec_yaml.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"
#include "vlbias/core/utf8.h"
#include "vlbias/io/parquet/parquet.h"

namespace vlbias::yaml {

namespace {

// Ignores every event: used only to count documents.
class NullEvents : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// 0, 1 or 2 (= more than one). Not YAML::LoadAll: on some malformed text (",'")
// yaml-cpp 0.7 reports an endless run of empty documents without consuming input,
// so LoadAll never returns; asking for at most two documents always ends.
int count_documents(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  NullEvents events;
  int n = 0;
  while (n < 2 && parser.HandleNextDocument(events)) ++n;
  return n;
}

}  // namespace

YAML::Node load_document(const std::string& yaml_text, const std::string& source,
                         const char* expected) {
  VLBIAS_CHECK(yaml_text.size() <= kMaxSpecBytes, UsageError,
               "{}: the spec is {} bytes; a spec may be at most {} bytes.", source,
               yaml_text.size(), kMaxSpecBytes);
  YAML::Node root;
  int documents = 0;
  try {
    root = YAML::Load(yaml_text);
    documents = count_documents(yaml_text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's DepthGuard (see src/audits/audit_yaml.cpp); its own message is "bad file".
    VLBIAS_FAIL(UsageError,
                "{} line {} column {}: malformed YAML: nested too deeply (a spec needs five "
                "levels).",
                source, e.mark.line + 1, e.mark.column + 1);
  } catch (const YAML::Exception& e) {
    // e.msg is the bare message; e.mark the 0-based position.
    if (e.mark.is_null()) {
      VLBIAS_FAIL(UsageError, "{}: malformed YAML: {}.", source, e.msg);
    }
    VLBIAS_FAIL(UsageError, "{} line {} column {}: malformed YAML: {}.", source, e.mark.line + 1,
                e.mark.column + 1, e.msg);
  }
  VLBIAS_CHECK(documents == 1, UsageError, "{}: expected one YAML document ({}), found {}.", source,
               expected,
               documents == 0 ? "none" : "more than one (or unreadable text after the first)");
  return root;
}

std::string read_spec_file(const std::filesystem::path& path, const char* what) {
  std::error_code ec;
  VLBIAS_CHECK(std::filesystem::is_regular_file(path, ec), InputError,
               "{}: cannot read the {} (not a readable file).", path.string(), what);
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  VLBIAS_CHECK(!ec, InputError, "{}: cannot read the {} ({}).", path.string(), what, ec.message());
  VLBIAS_CHECK(size <= kMaxSpecBytes, InputError,
               "{}: the spec is {} bytes; a spec may be at most {} bytes.", path.string(), size,
               kMaxSpecBytes);
  // Opened by the one input policy: a file swapped for a pipe or device since is refused.
  InputFile in = open_input_file(path.string(), what, PipeRule::Refuse);
  std::string text = in.read_all(kMaxSpecBytes, what);
  VLBIAS_CHECK(text.find_first_not_of(" \t\r\n") != std::string::npos, InputError,
               "{}: the {} is empty.", path.string(), what);
  return text;
}

// "spec.yaml line 12" (yaml-cpp's marks are 0-based), or just the source.
std::string where(const Context& ctx, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null() || mark.line < 0) return ctx.source;
  return fmt::format("{} line {}", ctx.source, mark.line + 1);
}

std::string join_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// A short, printable rendering of a scalar for messages.
std::string shown(const std::string& text) {
  std::string out;
  for (const char c : text.substr(0, 40)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f) ? c : '?';
  }
  if (text.size() > 40) out += "...";
  return out;
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return fmt::format("'{}'", shown(node.Scalar()));
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Undefined:
      break;
  }
  return "an undefined value";
}

[[noreturn]] void fail(const Context& ctx, const YAML::Node& node, const std::string& path,
                       const std::string& what) {
  VLBIAS_FAIL(UsageError, "{}: {} {}.", where(ctx, node), path, what);
}

void count_value(Context& ctx, const YAML::Node& node, const std::string& path) {
  if (++ctx.values > kMaxValues) {
    fail(ctx, node, path,
         fmt::format("pushes the spec past {} values (aliases repeating long lists?)", kMaxValues));
  }
}

// The entries of a map after checking that every key is a unique string allowed here.
Entries check_map(Context& ctx, const YAML::Node& node, const std::string& path,
                  std::initializer_list<const char*> allowed) {
  const std::string allowed_list = fmt::format("{}", fmt::join(allowed, ", "));
  const std::string name = path.empty() ? std::string("the top level") : path;
  if (!node.IsMap()) {
    VLBIAS_FAIL(UsageError, "{}: {} must be a map with keys {}, got {}.", where(ctx, node), name,
                allowed_list, describe(node));
  }
  Entries entries;
  std::set<std::string> seen;
  for (const auto& kv : node) {
    count_value(ctx, kv.first, path);
    if (!kv.first.IsScalar()) {
      VLBIAS_FAIL(UsageError, "{}: {} has a key that is {}, expected one of {}.",
                  where(ctx, kv.first), name, describe(kv.first), allowed_list);
    }
    const std::string key = kv.first.Scalar();
    const std::string key_path = join_path(path, shown(key));
    if (std::find_if(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; }) ==
        allowed.end()) {
      VLBIAS_FAIL(UsageError, "{}: unknown key {}; the keys allowed in {} are {}.",
                  where(ctx, kv.first), key_path, name, allowed_list);
    }
    if (!seen.insert(key).second) {
      VLBIAS_FAIL(UsageError, "{}: duplicate key {}; each key may appear once.",
                  where(ctx, kv.first), key_path);
    }
    entries.emplace_back(key, kv.second);
  }
  return entries;
}

const YAML::Node* find(const Entries& entries, const std::string& key) {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

const YAML::Node& require(const Context& ctx, const YAML::Node& map, const Entries& entries,
                          const std::string& path, const std::string& key) {
  const YAML::Node* node = find(entries, key);
  if (node == nullptr) {
    VLBIAS_FAIL(UsageError, "{}: missing required key {}.", where(ctx, map), join_path(path, key));
  }
  return *node;
}

// A plain (unquoted, untagged) scalar or one tagged !!int / !!float: the only
// forms a number may take.
bool is_plain_number_scalar(const YAML::Node& node) {
  if (!node.IsScalar()) return false;
  const std::string& tag = node.Tag();
  return tag == "?" || tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float";
}

std::string as_string(Context& ctx, const YAML::Node& node, const std::string& path) {
  count_value(ctx, node, path);
  if (!node.IsScalar())
    fail(ctx, node, path, fmt::format("must be a string, got {}", describe(node)));
  if (node.Scalar().empty()) fail(ctx, node, path, "must be a non-empty string");
  // Every text of a spec ends up in JSON (results.json, run.json), which must be UTF-8.
  const std::string& text = node.Scalar();
  const std::size_t bad = first_invalid_utf8(text);
  if (bad != text.size()) {
    fail(ctx, node, path,
         fmt::format("is not valid UTF-8 (byte {} is 0x{:02X}); save the spec as UTF-8 text",
                     bad + 1, static_cast<unsigned char>(text[bad])));
  }
  return text;
}

std::uint64_t as_uint64(Context& ctx, const YAML::Node& node, const std::string& path) {
  count_value(ctx, node, path);
  if (!is_plain_number_scalar(node)) {
    fail(ctx, node, path,
         fmt::format("must be a non-negative integer (unquoted), got {}", describe(node)));
  }
  std::string_view text = node.Scalar();
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (!text.empty() && text.front() == '-' && text.size() > 1 &&
      std::all_of(text.begin() + 1, text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    fail(ctx, node, path, fmt::format("must be non-negative, got {}", describe(node)));
  }
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    fail(ctx, node, path, fmt::format("must be a non-negative integer, got {}", describe(node)));
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    fail(ctx, node, path,
         fmt::format("is out of range (at most {}), got {}",
                     std::numeric_limits<std::uint64_t>::max(), describe(node)));
  }
  if (ec != std::errc() || end != text.data() + text.size()) {
    fail(ctx, node, path, fmt::format("must be a non-negative integer, got {}", describe(node)));
  }
  return value;
}

std::size_t as_size(Context& ctx, const YAML::Node& node, const std::string& path) {
  const std::uint64_t v = as_uint64(ctx, node, path);
  if (v > std::numeric_limits<std::size_t>::max()) {
    fail(ctx, node, path, fmt::format("is out of range, got {}", describe(node)));
  }
  return static_cast<std::size_t>(v);
}

std::size_t as_positive_size(Context& ctx, const YAML::Node& node, const std::string& path) {
  const std::size_t v = as_size(ctx, node, path);
  if (v == 0) fail(ctx, node, path, "must be a positive integer, got 0");
  return v;
}

std::size_t as_size_in_range(Context& ctx, const YAML::Node& node, const std::string& path,
                             std::size_t min, std::size_t max, std::string_view meaning) {
  count_value(ctx, node, path);
  const std::string range = fmt::format("an integer from {} to {}{}", min, max, meaning);
  if (!is_plain_number_scalar(node)) {
    fail(ctx, node, path, fmt::format("must be {} (unquoted), got {}", range, describe(node)));
  }
  std::string_view text = node.Scalar();
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  std::uint64_t value = 0;
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; });
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // "1e12", "-3", "2.5" and values past 2^64 all fail here, with the range in the message.
  if (!digits || ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    fail(ctx, node, path, fmt::format("must be {}, got {}", range, describe(node)));
  }
  return static_cast<std::size_t>(value);
}

double as_double(Context& ctx, const YAML::Node& node, const std::string& path) {
  count_value(ctx, node, path);
  if (!is_plain_number_scalar(node)) {
    fail(ctx, node, path, fmt::format("must be a number (unquoted), got {}", describe(node)));
  }
  std::string_view text = node.Scalar();
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  double value = 0;
  if (text == ".inf" || text == ".Inf" || text == ".INF") {
    value = std::numeric_limits<double>::infinity();
  } else if (text == ".nan" || text == ".NaN" || text == ".NAN") {
    value = std::numeric_limits<double>::quiet_NaN();
  } else {
    // from_chars alone would also take "inf", "nan" and hex-less oddities; allow
    // only digits, one '.', and an exponent.
    const bool charset_ok = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
      return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
    });
    const auto [end, ec] = charset_ok
                               ? std::from_chars(text.data(), text.data() + text.size(), value)
                               : std::from_chars_result{text.data(), std::errc::invalid_argument};
    if (ec == std::errc::result_out_of_range) {
      fail(ctx, node, path, fmt::format("must be a finite number, got {}", describe(node)));
    }
    if (ec != std::errc() || end != text.data() + text.size()) {
      fail(ctx, node, path, fmt::format("must be a number, got {}", describe(node)));
    }
  }
  return negative ? -value : value;
}

double as_finite_at_least_zero(Context& ctx, const YAML::Node& node, const std::string& path) {
  const double v = as_double(ctx, node, path);
  if (!std::isfinite(v) || v < 0) {
    fail(ctx, node, path, fmt::format("must be a finite number >= 0, got {}", describe(node)));
  }
  return v;
}

double as_finite_positive(Context& ctx, const YAML::Node& node, const std::string& path) {
  const double v = as_double(ctx, node, path);
  if (!std::isfinite(v) || v <= 0) {
    fail(ctx, node, path, fmt::format("must be a finite number > 0, got {}", describe(node)));
  }
  return v;
}

double as_ci(Context& ctx, const YAML::Node& node, const std::string& path) {
  const double v = as_double(ctx, node, path);
  if (!(v > 0 && v < 1)) {
    fail(ctx, node, path, fmt::format("must be a level in (0, 1), got {}", describe(node)));
  }
  return v;
}

// One of `allowed`, exactly.
std::string as_choice(Context& ctx, const YAML::Node& node, const std::string& path,
                      std::initializer_list<const char*> allowed) {
  const std::string v = as_string(ctx, node, path);
  for (const char* a : allowed) {
    if (v == a) return v;
  }
  fail(ctx, node, path,
       fmt::format("must be one of {}, got {}", fmt::join(allowed, ", "), describe(node)));
}

// A list of distinct non-empty strings; `allow_empty` false rejects [].
std::vector<std::string> as_string_list(Context& ctx, const YAML::Node& node,
                                        const std::string& path, bool allow_empty) {
  count_value(ctx, node, path);
  if (!node.IsSequence()) {
    fail(ctx, node, path, fmt::format("must be a list of strings, got {}", describe(node)));
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string item_path = fmt::format("{}[{}]", path, i);
    std::string v = as_string(ctx, item, item_path);
    if (!seen.insert(v).second) {
      fail(ctx, item, item_path, fmt::format("repeats '{}'; each entry may appear once", shown(v)));
    }
    out.push_back(std::move(v));
  }
  if (out.empty() && !allow_empty) fail(ctx, node, path, "must be a non-empty list of strings");
  return out;
}

std::filesystem::path as_path(Context& ctx, const YAML::Node& node, const std::string& path) {
  const std::filesystem::path p(as_string(ctx, node, path));
  if (p.is_absolute()) return p.lexically_normal();
  return (ctx.base_dir / p).lexically_normal();
}

std::filesystem::path as_input_file(Context& ctx, const YAML::Node& node, const std::string& path) {
  const std::filesystem::path p = as_path(ctx, node, path);
  // A device or folder is refused now, naming the key; a missing file is left to its reader. A
  // folder of Parquet shards is a table (input_identity.h): a key that wants another kind of
  // file refuses it when its reader opens it.
  std::error_code ec;
  if (std::filesystem::exists(p, ec) && !is_parquet_folder(p.string()))
    check_input_file(p.string(), fmt::format("{} ({})", path, where(ctx, node)));
  return p;
}

bool as_bool(Context& ctx, const YAML::Node& node, const std::string& path) {
  count_value(ctx, node, path);
  if (node.IsScalar() && node.Tag() == "?") {
    const std::string& s = node.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  fail(ctx, node, path, fmt::format("must be true or false, got {}", describe(node)));
}

}  // namespace vlbias::yaml
