#pragma once
// Secrets kept out of everything a generation run stores or prints (src/generate). The API
// key and every value of the endpoint URL's query (`?key=...` as Perspective takes it,
// `?api-key=...`) are replaced by "[redacted]" in each server reply before a protocol reader
// sees it, in each verdict before the run store records it (driver.cpp: the one loop every
// driver runs), and in the spec that run.json copies. A server that echoes the
// Authorization header in a 401 therefore leaves "Bearer [redacted]" in store.sqlite,
// requests.jsonl and every export.
//
// Every query value is redacted whatever its length (only an empty one, which hides nothing,
// is not): a value short enough to appear in answers by chance (`?alt=json`) is replaced there
// too, so keys belong in the environment (api_key_env), not in the URL. The API key itself
// is redacted from kMinKeyLength bytes: placeholder keys that local servers accept (`EMPTY`,
// `x`) hide nothing, and replacing every "x" of every answer would corrupt the data.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vlbias {

class Redactor {
 public:
  static constexpr std::size_t kMinKeyLength = 8;
  static constexpr std::string_view kMark = "[redacted]";

  // The API key (from kMinKeyLength bytes), with the forms a server may echo it in: as sent,
  // percent-decoded, and escaped as inside a JSON string.
  void add(std::string_view secret);
  // Every value of the URL's query (after '?', up to '#'; a parameter without '=' counts
  // whole), whatever its length, in the same forms.
  void add_url_query(std::string_view url);

  // Replaces every occurrence of every secret in `text` by kMark; the count of replacements.
  std::size_t apply(std::string& text) const;
  std::string operator()(std::string text) const {
    apply(text);
    return text;
  }
  bool empty() const { return secrets_.empty(); }

 private:
  void add_forms(std::string_view secret);
  void add_form(std::string form);
  std::vector<std::string> secrets_;  // longest first: a secret inside another is not split
};

}  // namespace vlbias
