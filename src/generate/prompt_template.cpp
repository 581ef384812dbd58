// Prompt templates filled from a table's row (job.h): the judge's prompt and the lvlm / llm
// prompts.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "job.h"
#include "vlbias/core/error.h"

namespace vlbias::generate_internal {

namespace fs = std::filesystem;

namespace {

std::string column_names(const Table& table) {
  std::string names;
  for (const auto& col : table.columns) names += (names.empty() ? "" : ", ") + col.name;
  return names;
}

}  // namespace

PromptTemplate::PromptTemplate(std::string_view text, const Table& table, std::size_t text_column,
                               const fs::path& table_path) {
  compile(text, table, table_path, "prompt", text_column);
  bool uses_text = false;
  for (const Part& p : parts_) uses_text = uses_text || p.column == text_column;
  VLBIAS_CHECK(uses_text, UsageError,
               "prompt: the template never names the text to judge; write {{text}} where it goes");
}

PromptTemplate::PromptTemplate(std::string_view text, const Table& table,
                               const fs::path& table_path, const std::string& what) {
  compile(text, table, table_path, what, std::nullopt);
}

void PromptTemplate::compile(std::string_view text, const Table& table, const fs::path& table_path,
                             const std::string& what, std::optional<std::size_t> text_column) {
  std::string literal;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal += c;  // {{ and }}
      i += 2;
      continue;
    }
    VLBIAS_CHECK(c != '}', UsageError,
                 "{}: the '}}' at character {} closes nothing; write }}}} for a brace", what,
                 i + 1);
    if (c != '{') {
      literal += c;
      ++i;
      continue;
    }
    const std::size_t close = text.find('}', i + 1);
    VLBIAS_CHECK(close != std::string_view::npos, UsageError,
                 "{}: the '{{' at character {} is not closed; write {{{{ for a brace", what, i + 1);
    const std::string name(text.substr(i + 1, close - i - 1));
    const std::optional<std::size_t> column =
        text_column && name == "text" ? text_column : table.find(name);
    if (!column && text_column) {
      VLBIAS_FAIL(UsageError, "{}: {{{}}} is neither {{text}} nor a column of {} (its columns: {})",
                  what, name, table_path.string(), column_names(table));
    }
    VLBIAS_CHECK(column.has_value(), UsageError,
                 "{}: {{{}}} is not a column of {} (its columns: {}); write {{{{ for a brace", what,
                 name, table_path.string(), column_names(table));
    parts_.push_back({std::move(literal), std::string::npos});
    literal.clear();
    parts_.push_back({"", *column});
    i = close + 1;
  }
  if (!literal.empty()) parts_.push_back({std::move(literal), std::string::npos});
}

std::vector<std::size_t> PromptTemplate::columns() const {
  std::vector<std::size_t> out;
  for (const Part& p : parts_) {
    if (p.column != std::string::npos) out.push_back(p.column);
  }
  return out;
}

std::string PromptTemplate::render(const Table& table, std::size_t row) const {
  std::string out;
  for (const Part& p : parts_)
    out += p.column == std::string::npos ? p.literal : table.columns[p.column].text(row);
  return out;
}

}  // namespace vlbias::generate_internal
