// Secrets out of stored and printed text (include/vlbias/generate/redact.h).
#include "vlbias/generate/redact.h"

#include <algorithm>
#include <functional>

#include "vlbias/io/json.h"

namespace vlbias {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoded (and '+' as a space when `plus_is_space`, as HTML forms encode queries).
std::string percent_decoded(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
        hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else {
      out += plus_is_space && text[i] == '+' ? ' ' : text[i];
    }
  }
  return out;
}

// Whether text[at, at + n) overlaps an occurrence of Redactor::kMark: a short secret such as
// "act" is not looked for inside an earlier replacement ("[redacted]" hides nothing).
bool overlaps_mark(std::string_view text, std::size_t at, std::size_t n) {
  // A mark starting in [at - 9, at + n - 1] ends by at + n + 9: only that window is searched, so
  // each match costs its own length (a one-letter secret in 1 MB of text stays linear).
  const std::size_t from = at >= Redactor::kMark.size() ? at - Redactor::kMark.size() + 1 : 0;
  const std::size_t end = std::min(text.size(), at + n - 1 + Redactor::kMark.size());
  return text.substr(from, end - from).find(Redactor::kMark) != std::string_view::npos;
}

}  // namespace

void Redactor::add_form(std::string form) {
  if (form.empty()) return;  // hides nothing (and would match between every two bytes)
  if (std::find(secrets_.begin(), secrets_.end(), form) != secrets_.end()) return;
  secrets_.push_back(std::move(form));
  std::stable_sort(secrets_.begin(), secrets_.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

void Redactor::add(std::string_view secret) {
  if (secret.size() >= kMinKeyLength) add_forms(secret);
}

void Redactor::add_forms(std::string_view secret) {
  for (const std::string& form :
       {std::string(secret), percent_decoded(secret, false), percent_decoded(secret, true)}) {
    add_form(form);
    // Inside a JSON string: quotes, backslashes and control characters escaped, and '/' as
    // some servers write it ("\/"). Bytes that are not UTF-8 cannot be in a JSON string.
    const std::string dumped = Json(form).dump(-1, ' ', false, Json::error_handler_t::ignore);
    const std::string escaped = dumped.substr(1, dumped.size() - 2);
    add_form(escaped);
    std::string slashes;
    for (const char c : escaped) slashes += c == '/' ? std::string("\\/") : std::string(1, c);
    add_form(slashes);
  }
}

void Redactor::add_url_query(std::string_view url) {
  const auto mark = url.find('?');
  if (mark == std::string_view::npos) return;
  std::string_view query = url.substr(mark + 1);
  query = query.substr(0, query.find('#'));
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    const auto eq = param.find('=');
    add_forms(eq == std::string_view::npos ? param : param.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
}

std::size_t Redactor::apply(std::string& text) const {
  std::size_t count = 0;
  for (const std::string& secret : secrets_) {
    if (text.size() < secret.size()) continue;
    // Boyer-Moore-Horspool: a 15 MB base64 image is scanned at a skip of the key's length.
    const std::boyer_moore_horspool_searcher search(secret.begin(), secret.end());
    auto at = std::search(text.cbegin(), text.cend(), search);
    if (at == text.cend()) continue;
    std::string out;
    out.reserve(text.size());
    auto from = text.cbegin();
    while (at != text.cend()) {
      if (overlaps_mark(text, static_cast<std::size_t>(at - text.cbegin()), secret.size())) {
        at = std::search(at + 1, text.cend(), search);
        continue;
      }
      out.append(from, at);
      out.append(kMark);
      ++count;
      from = at + static_cast<std::ptrdiff_t>(secret.size());
      at = std::search(from, text.cend(), search);
    }
    out.append(from, text.cend());
    text = std::move(out);
  }
  return count;
}

}  // namespace vlbias
