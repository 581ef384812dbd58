#pragma once
// Secrets kept out of everything a generation run stores or prints (src/generate). The API
// key and every value of the endpoint URL's query (`?key=...` as Perspective takes it,
// `?api-key=...`) are replaced by "[redacted]" in each server reply before a protocol reader
// sees it, in each verdict before the run store records it (driver.cpp: the one loop every
// driver runs), and in the spec that run.json copies. A server that echoes the
// Authorization header in a 401 therefore leaves "Bearer [redacted]" in store.sqlite,
// requests.jsonl and every export.
//
// Values shorter than kMinLength bytes are not redacted: no API key is that short, and
// replacing a value such as `json` (`?alt=json`) or a one-letter test key in every answer
// would corrupt the data while protecting nothing.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vlbias {

class Redactor {
 public:
  static constexpr std::size_t kMinLength = 8;
  static constexpr std::string_view kMark = "[redacted]";

  // A secret, with the forms a server may echo it in: as sent, percent-decoded (query
  // values), and escaped as inside a JSON string.
  void add(std::string_view secret);
  // Every value of the URL's query (after '?', up to '#'; a parameter without '=' counts
  // whole).
  void add_url_query(std::string_view url);

  // Replaces every occurrence of every secret in `text` by kMark; the count of replacements.
  std::size_t apply(std::string& text) const;
  std::string operator()(std::string text) const {
    apply(text);
    return text;
  }
  bool empty() const { return secrets_.empty(); }

 private:
  void add_form(std::string form);
  std::vector<std::string> secrets_;  // longest first: a secret inside another is not split
};

}  // namespace vlbias
