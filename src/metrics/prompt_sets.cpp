// Prompt manifests (include/vlbias/metrics/prompt_sets.h): the social-perception prompts of
// Hausladen et al. (paper 001, docs/methods.md#prompts-001; word lists and templates from the
// authors' clip-face-bias code, attribute_models.py and precalculate_cossims.py) and
// the trait-pair captions of Baherwani and Vincent (paper 004, docs/methods.md#trait-pairs).
//
// Empty cells: the manifest's word/dimension/valence cells are "" for neutral and
// group prompts. They are stored as missing (Column::kMissing), exactly what
// read_table gives for an empty CSV cell, so a manifest read back from its CSV equals
// the in-memory one and Column::text() gives "" either way.
#include "vlbias/metrics/prompt_sets.h"
#include "vlbias/io/file_text.h"

#include <array>
#include <set>
#include <unordered_map>

#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"
#include "vlbias/io/json.h"

namespace vlbias {

namespace {

constexpr std::array<const char*, 7> kColumns = {"text",     "word", "dimension", "valence",
                                                 "template", "role", "model"};

// Rows of the manifest as text, turned into dictionary-encoded String columns.
class ManifestBuilder {
 public:
  ManifestBuilder() {
    for (const char* name : kColumns) {
      Column col;
      col.name = name;
      col.type = ColumnType::String;
      columns_.push_back(std::move(col));
    }
    index_.resize(kColumns.size());
  }

  void add(const std::array<std::string, 7>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      Column& col = columns_[c];
      if (cells[c].empty()) {
        col.codes.push_back(Column::kMissing);
        continue;
      }
      auto [it, inserted] =
          index_[c].try_emplace(cells[c], static_cast<std::uint32_t>(col.levels.size()));
      if (inserted) col.levels.push_back(cells[c]);
      col.codes.push_back(it->second);
    }
    ++rows_;
  }

  Table finish(std::string source) {
    Table table;
    table.source = std::move(source);
    table.rows = rows_;
    table.columns = std::move(columns_);
    table.line_of_row.resize(rows_);
    // As if written to CSV: header on line 1, row r on line r + 2.
    for (std::size_t r = 0; r < rows_; ++r) table.line_of_row[r] = r + 2;
    return table;
  }

 private:
  std::vector<Column> columns_;
  std::vector<std::unordered_map<std::string, std::uint32_t>> index_;
  std::size_t rows_ = 0;
};

std::size_t count_placeholders(std::string_view text) {
  std::size_t n = 0;
  for (std::size_t pos = text.find("{}"); pos != std::string_view::npos;
       pos = text.find("{}", pos + 2)) {
    ++n;
  }
  return n;
}

void check_templates(const std::vector<std::string>& templates) {
  VLBIAS_CHECK(!templates.empty(), UsageError, "no prompt templates given; at least one is needed");
  std::set<std::string> seen;
  for (const auto& t : templates) {
    VLBIAS_CHECK(count_placeholders(t) == 1, UsageError,
                 "template '{}' must contain \"{{}}\" exactly once (where the word goes)", t);
    VLBIAS_CHECK(seen.insert(t).second, UsageError, "template '{}' is given twice", t);
  }
}

// "{attribute}" (the authors' placeholder) -> "{}".
std::string convert_placeholder(const std::string& text) {
  std::string out = text;
  const std::string from = "{attribute}";
  for (std::size_t pos = out.find(from); pos != std::string::npos; pos = out.find(from, pos)) {
    out.replace(pos, from.size(), "{}");
    pos += 2;
  }
  return out;
}

bool blank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// A list of non-empty strings at json[key] (inside object `where`), or an InputError
// naming `source` and the key.
std::vector<std::string> string_list(const Json& object, const std::string& where,
                                     const std::string& key, const std::string& source) {
  VLBIAS_CHECK(object.contains(key), InputError, "{}: key \"{}\" is missing from \"{}\"", source,
               key, where);
  const Json& list = object.at(key);
  VLBIAS_CHECK(list.is_array(), InputError, "{}: \"{}\".\"{}\" must be a list of words", source,
               where, key);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    VLBIAS_CHECK(list[i].is_string(), InputError,
                 "{}: \"{}\".\"{}\" item {} is not a string; expected a list of words", source,
                 where, key, i + 1);
    std::string word = list[i].get<std::string>();
    VLBIAS_CHECK(!blank(word), InputError, "{}: \"{}\".\"{}\" item {} is an empty word", source,
                 where, key, i + 1);
    out.push_back(std::move(word));
  }
  return out;
}

const Json& section(const Json& root, const std::string& key, const std::string& source) {
  VLBIAS_CHECK(root.contains(key), InputError, "{}: key \"{}\" is missing; expected an object",
               source, key);
  const Json& s = root.at(key);
  VLBIAS_CHECK(s.is_object(), InputError, "{}: \"{}\" must be an object of word lists", source,
               key);
  return s;
}

Json parse_lexicon(std::string_view text, const std::string& source) {
  const Json root = parse_json(text, source);
  VLBIAS_CHECK(root.is_object(), InputError,
               "{}: expected a JSON object in the attribute_lists.json layout", source);
  return root;
}

struct WordList {
  const char* section;
  const char* key;
  const char* dimension;
  const char* valence;
  const char* model;
};

// Order of the attribute rows (prompt_sets.h): SCM warmth, competence, then ABC.
constexpr std::array<WordList, 8> kWordLists = {{
    {"StereotypeContentModel", "warm", "warmth", "+", "scm"},
    {"StereotypeContentModel", "comp", "competence", "+", "scm"},
    {"ABCModel", "agency_pos", "agency", "+", "abc"},
    {"ABCModel", "agency_neg", "agency", "-", "abc"},
    {"ABCModel", "belief_pos", "belief", "+", "abc"},
    {"ABCModel", "belief_neg", "belief", "-", "abc"},
    {"ABCModel", "communion_pos", "communion", "+", "abc"},
    {"ABCModel", "communion_neg", "communion", "-", "abc"},
}};

std::string group_dimension(const std::string& word) {
  if (word == "white" || word == "black" || word == "asian") return "race";
  if (word == "male" || word == "female") return "gender";
  if (word == "young" || word == "old") return "age";
  return "group";
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

std::string fill_template(std::string_view template_text, std::string_view word) {
  VLBIAS_CHECK(count_placeholders(template_text) == 1, UsageError,
               "template '{}' must contain \"{{}}\" exactly once (where the word goes)",
               template_text);
  const std::size_t pos = template_text.find("{}");
  std::string raw;
  raw.reserve(template_text.size() + word.size());
  raw.append(template_text.substr(0, pos));
  raw.append(word);
  raw.append(template_text.substr(pos + 2));
  // Collapse runs of spaces (the neutral prompt's "a  person") and trim the ends.
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out.push_back(c);
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

TemplateSet parse_template_set(std::string_view name) {
  if (name == "paper") return TemplateSet::Paper;
  if (name == "code") return TemplateSet::Code;
  if (name == "single") return TemplateSet::Single;
  VLBIAS_FAIL(UsageError, "unknown template set '{}'; expected paper, code or single", name);
}

const char* to_string(TemplateSet set) {
  switch (set) {
    case TemplateSet::Paper:
      return "paper";
    case TemplateSet::Code:
      return "code";
    case TemplateSet::Single:
      return "single";
  }
  return "unknown";
}

Table social_perception_prompts(const SocialPerceptionPromptOptions& options) {
  const std::string builtin_source = "<built-in attribute_lists.json>";
  const Json builtin = parse_lexicon(builtin_attribute_lists_json(), builtin_source);

  std::vector<std::string> templates = options.templates;
  if (templates.empty()) {
    switch (options.template_set) {
      case TemplateSet::Paper:
        // The four templates as printed in the paper (Hausladen et al., Section 3).
        templates = {"A photo of a {} person.", "A {} person.", "This is a {} person.",
                     "Cropped face photo of a {} person."};
        break;
      case TemplateSet::Code:
      case TemplateSet::Single: {
        const std::string key =
            options.template_set == TemplateSet::Code ? "templates_set_2" : "templates_set_1";
        for (auto& t : string_list(builtin, "(top level)", key, builtin_source)) {
          templates.push_back(convert_placeholder(t));
        }
        break;
      }
    }
  }
  check_templates(templates);

  const bool custom = !options.lexicon_path.empty();
  const std::string source = custom ? options.lexicon_path : builtin_source;
  const Json lexicon =
      custom ? parse_lexicon(read_file_text(options.lexicon_path, "a lexicon"), source) : builtin;

  ManifestBuilder rows;
  for (const auto& t : templates) {
    rows.add({fill_template(t, ""), "", "", "", t, "neutral", "control"});
  }
  std::size_t attribute_words = 0;
  for (const WordList& list : kWordLists) {
    const Json& sec = section(lexicon, list.section, source);
    for (const auto& word : string_list(sec, list.section, list.key, source)) {
      ++attribute_words;
      for (const auto& t : templates) {
        rows.add({fill_template(t, word), word, list.dimension, list.valence, t, "attribute",
                  list.model});
      }
    }
  }
  VLBIAS_CHECK(attribute_words > 0, InputError,
               "{}: every word list of \"StereotypeContentModel\" and \"ABCModel\" is empty",
               source);

  // Group-naming prompts, for markedness: the Control words other than "<blank>"
  // (which stands for the neutral prompt). A custom lexicon may leave Control out.
  if (options.group_prompts && (!custom || lexicon.contains("Control"))) {
    const Json& control = section(lexicon, "Control", source);
    for (const auto& word : string_list(control, "Control", "all_attributes", source)) {
      if (word == "<blank>") continue;
      for (const auto& t : templates) {
        rows.add({fill_template(t, word), word, group_dimension(word), "", t, "group", "control"});
      }
    }
  }
  return rows.finish("<social-perception prompts>");
}

Table geo_object_prompts(const std::vector<std::string>& objects,
                         const std::string& template_text) {
  check_templates({template_text});
  std::set<std::string> distinct;
  for (const std::string& o : objects) {
    if (!blank(o)) distinct.insert(o);
  }
  VLBIAS_CHECK(!distinct.empty(), UsageError, "no object names were given");
  std::vector<std::string> names(distinct.begin(), distinct.end()), texts;
  for (const std::string& o : names) texts.push_back(fill_template(template_text, o));
  Table t;
  t.source = "<geo object prompts>";
  t.rows = names.size();
  for (std::size_t r = 0; r < t.rows; ++r) t.line_of_row.push_back(r + 2);
  add_string_column(t, "object", names);
  add_string_column(t, "text", texts);
  return t;
}

Table trait_pair_prompts(const TraitPairPromptOptions& options) {
  std::vector<std::pair<std::string, std::string>> pairs = options.pairs;
  if (pairs.empty()) {
    // Baherwani and Vincent (paper 004), docs/methods.md#trait-pairs.
    pairs = {{"smart", "dumb"}, {"happy", "sad"},        {"hardworking", "lazy"},
             {"nice", "mean"},  {"dominant", "agentic"}, {"honest", "dishonest"}};
  }
  check_templates(options.templates);
  std::set<std::string> seen;
  for (const auto& [first, second] : pairs) {
    VLBIAS_CHECK(!blank(first) && !blank(second), UsageError,
                 "trait pair '{}/{}' has an empty trait", first, second);
    VLBIAS_CHECK(seen.insert(first + "/" + second).second, UsageError,
                 "trait pair '{}/{}' is given twice", first, second);
  }

  ManifestBuilder rows;
  if (options.neutral) {
    for (const auto& t : options.templates) {
      rows.add({fill_template(t, ""), "", "", "", t, "neutral", "trait-pairs"});
    }
  }
  for (const auto& [first, second] : pairs) {
    const std::string dimension = first + "/" + second;
    for (const auto& t : options.templates) {
      rows.add({fill_template(t, first), first, dimension, "+", t, "attribute", "trait-pairs"});
    }
    for (const auto& t : options.templates) {
      rows.add({fill_template(t, second), second, dimension, "-", t, "attribute", "trait-pairs"});
    }
  }
  return rows.finish("<trait-pair prompts>");
}

std::vector<std::pair<std::string, std::string>> parse_trait_pairs(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  VLBIAS_CHECK(!blank(text), UsageError,
               "no trait pairs given; expected e.g. 'smart/dumb,happy/sad'");
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = trim(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    VLBIAS_CHECK(!item.empty(), UsageError,
                 "trait pairs '{}' have an empty item; expected 'first/second' items separated by "
                 "commas",
                 text);
    const std::size_t slash = item.find('/');
    VLBIAS_CHECK(slash != std::string::npos && item.find('/', slash + 1) == std::string::npos,
                 UsageError,
                 "trait pair '{}' must be two traits separated by one '/', e.g. "
                 "'smart/dumb'",
                 item);
    std::string first = trim(std::string_view(item).substr(0, slash));
    std::string second = trim(std::string_view(item).substr(slash + 1));
    VLBIAS_CHECK(!first.empty() && !second.empty(), UsageError,
                 "trait pair '{}' has an empty trait; expected 'first/second', e.g. 'smart/dumb'",
                 item);
    VLBIAS_CHECK(first != second, UsageError, "trait pair '{}' names the same trait twice", item);
    out.emplace_back(std::move(first), std::move(second));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace vlbias
