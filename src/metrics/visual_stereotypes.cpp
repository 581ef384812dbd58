// Inputs of the visual-stereotype study (paper 000, ViSAGe; visual_stereotypes.h): visual
// attributes, SeeGULL stereotypes and offensiveness, regions, and ViSAGe's annotation export.
#include "vlbias/metrics/visual_stereotypes.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/io/finite.h"

namespace vlbias {

namespace {

std::string trim_caption(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

std::string lower_caption_word(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// The cell as trimmed text ("" when missing).
std::string cell(const Column& c, std::size_t row) {
  return trim_caption(c.text(row));
}

}  // namespace

// ------------------------------------------------------------ visual attributes

bool VisualAttributes::contains(std::string_view attribute) const {
  return std::binary_search(attributes.begin(), attributes.end(), attribute);
}

VisualAttributes read_visual_attributes(const std::string& path) {
  return visual_attributes_from_table(read_table(path));
}

VisualAttributes visual_attributes_from_table(const Table& table) {
  VisualAttributes out;
  const Column& attr = table.column("attribute");
  std::vector<const Column*> ratings;
  for (const Column& c : table.columns) {
    if (starts_with(c.name, "rating_")) {
      ratings.push_back(&c);
      out.rating_columns.push_back(c.name);
    }
  }
  VLBIAS_CHECK(table.rows > 0, InputError, "'{}' has no rows: expected one row per attribute",
               table.source);
  // attribute -> visual in every repeat so far
  std::map<std::string, bool> seen;
  for (std::size_t r = 0; r < table.rows; ++r) {
    const std::string a = cell(attr, r);
    VLBIAS_CHECK(!a.empty(), InputError, "'{}' line {}: the attribute cell is empty", table.source,
                 table.line_of_row[r]);
    bool visual = true;
    for (const Column* c : ratings) {
      const std::string v = lower_caption_word(cell(*c, r));
      if (v != "agree" && v != "strongly agree") visual = false;
    }
    const auto [it, fresh] = seen.emplace(a, visual);
    if (!fresh) {
      ++out.repeated;
      it->second = it->second && visual;
    }
  }
  out.rows = table.rows;
  out.distinct = seen.size();
  for (const auto& [a, visual] : seen) {
    if (visual) out.attributes.push_back(a);
  }
  return out;
}

// ----------------------------------------------------------------- stereotypes

std::size_t VisualStereotypes::identities_with_at_least(std::size_t n) const {
  std::size_t count = 0;
  for (const auto& [id, list] : by_identity) count += list.size() >= n ? 1 : 0;
  return count;
}

const Stereotype* VisualStereotypes::find(const std::string& identity,
                                          const std::string& attribute) const {
  const auto it = by_identity.find(identity);
  if (it == by_identity.end()) return nullptr;
  const auto s =
      std::lower_bound(it->second.begin(), it->second.end(), attribute,
                       [](const Stereotype& x, const std::string& a) { return x.attribute < a; });
  return s != it->second.end() && s->attribute == attribute ? &*s : nullptr;
}

std::size_t VisualStereotypes::count(const std::string& identity) const {
  const auto it = by_identity.find(identity);
  return it == by_identity.end() ? 0 : it->second.size();
}

VisualStereotypes build_visual_stereotypes(const Table& seegull, const VisualAttributes& visual,
                                           const StereotypeOptions& options) {
  VisualStereotypes out;
  const Column& identity = seegull.column("identity");
  const Column& attribute = seegull.column("attribute");
  std::vector<const std::vector<double>*> votes;
  for (const std::string& c : options.vote_columns) votes.push_back(&seegull.numeric(c, true));
  std::vector<const std::vector<double>*> annotation;
  for (const char* c : {"Annotation1", "Annotation2", "Annotation3"}) {
    if (seegull.find(c)) annotation.push_back(&seegull.numeric(c, true));
  }
  const std::vector<double>* merged = nullptr;
  for (const char* c : {"mean offensiveness_score", "offensiveness_score"}) {
    if (seegull.find(c)) {
      merged = &seegull.numeric(c, true);
      break;
    }
  }
  std::set<std::string> attributes_used;
  std::set<std::pair<std::string, std::string>> pairs_seen;
  for (std::size_t r = 0; r < seegull.rows; ++r) {
    const std::string id = cell(identity, r);
    const std::string a = cell(attribute, r);
    VLBIAS_CHECK(!id.empty() && !a.empty(), InputError,
                 "'{}' line {}: the identity or attribute cell is empty", seegull.source,
                 seegull.line_of_row[r]);
    bool pass = options.rule == VoteRule::All;
    for (const auto* v : votes) {
      const double x = (*v)[r];
      const bool ok = !std::isnan(x) && x >= options.min_votes;
      pass = options.rule == VoteRule::All ? pass && ok : pass || ok;
    }
    if (votes.empty()) pass = true;
    if (!pass) continue;
    ++out.stereotype_rows;
    if (!visual.contains(a)) continue;
    VLBIAS_CHECK(pairs_seen.emplace(id, a).second, InputError,
                 "'{}' line {}: the pair ({}, {}) appears twice", seegull.source,
                 seegull.line_of_row[r], id, a);
    double sum = 0;
    std::size_t n = 0;
    for (const auto* v : annotation) {
      if (!std::isnan((*v)[r])) {
        sum += (*v)[r];
        ++n;
      }
    }
    double off = 0;
    if (n > 0) {
      off = sum / static_cast<double>(n);
    } else {
      VLBIAS_CHECK(merged != nullptr && !std::isnan((*merged)[r]), InputError,
                   "'{}' line {}: ({}, {}) has no offensiveness (Annotation1..3 and the mean "
                   "offensiveness_score column are all missing)",
                   seegull.source, seegull.line_of_row[r], id, a);
      off = (*merged)[r];
      ++out.offensiveness_from_merged;
    }
    out.by_identity[id].push_back({a, off});
    attributes_used.insert(a);
    ++out.visual_pairs;
  }
  for (auto& [id, list] : out.by_identity) {
    std::sort(list.begin(), list.end(),
              [](const Stereotype& x, const Stereotype& y) { return x.attribute < y.attribute; });
  }
  out.seegull_rows = seegull.rows;
  out.attributes_used = attributes_used.size();
  return out;
}

// ------------------------------------------------------------------ names

std::string identity_from_image_name(std::string_view image) {
  const std::size_t slash = image.find_last_of("/\\");
  std::string_view name = slash == std::string_view::npos ? image : image.substr(slash + 1);
  const std::size_t dot = name.find_last_of('.');
  if (dot != std::string_view::npos) name = name.substr(0, dot);
  while (!name.empty() && std::isdigit(static_cast<unsigned char>(name.back()))) {
    name.remove_suffix(1);
  }
  while (!name.empty() && (name.back() == ' ' || name.back() == '_' || name.back() == '-')) {
    name.remove_suffix(1);
  }
  VLBIAS_CHECK(!name.empty(), InputError,
               "cannot tell the identity from the image name '{}': expected a name such as "
               "'Mexican5.png' (identity, then an image number), or give an identity column",
               image);
  return std::string(name);
}

const char* indefinite_article(std::string_view next_word) {
  const std::string w = lower_caption_word(std::string(next_word.substr(0, 3)));
  for (const char* p : {"uni", "uk", "us", "eu", "one"}) {
    if (starts_with(w, p)) return "a";
  }
  return !w.empty() && std::string_view("aeiou").find(w[0]) != std::string_view::npos ? "an" : "a";
}

// ------------------------------------------------------------------ regions

std::map<std::string, std::string> read_regions(const std::string& path) {
  const Table t =
      path.empty() ? parse_csv(builtin_regions_csv(), "<built-in regions.csv>") : read_table(path);
  const Column& id = t.column("identity");
  const Column& region = t.column("region");
  std::map<std::string, std::string> out;
  for (std::size_t r = 0; r < t.rows; ++r) {
    const std::string i = cell(id, r), g = cell(region, r);
    VLBIAS_CHECK(!i.empty() && !g.empty(), InputError,
                 "'{}' line {}: the identity or region cell is empty", t.source, t.line_of_row[r]);
    const auto [it, fresh] = out.emplace(i, g);
    VLBIAS_CHECK(fresh || it->second == g, InputError,
                 "'{}' line {}: identity '{}' is in region '{}' and also '{}'", t.source,
                 t.line_of_row[r], i, it->second, g);
  }
  return out;
}

// ------------------------------------------------------------------ annotations

const char* to_string(Aggregation a) {
  return a == Aggregation::Majority ? "majority" : "annotation";
}

Annotations read_annotations(const std::string& path, const AnnotationOptions& options) {
  return annotations_from_table(read_table(path), options);
}

namespace {

bool parse_present(const std::string& text, const Table& t, std::size_t row,
                   const std::string& column) {
  const std::string v = lower_caption_word(text);
  if (v == "yes" || v == "true" || v == "y" || v == "1") return true;
  if (v == "no" || v == "false" || v == "n" || v == "0") return false;
  VLBIAS_FAIL(InputError,
              "'{}' line {}: column '{}' holds '{}'; expected yes/no, true/false or 1/0", t.source,
              t.line_of_row[row], column, text);
}

// The columns of an annotation table; task, identity and coords are optional (nullptr).
struct AnnotationColumns {
  const Column& image;
  const Column& attribute;
  const Column& present;
  const Column* task;
  const Column* identity;
  const Column* coords;
};

// One kept annotation row.
struct AnnotationRow {
  std::string image, attribute;
  bool present;
  std::size_t run;
};

// Pass 1: the kept rows, run by run (duplicate runs dropped), counting empty rows, runs and
// duplicates into `out`.
std::vector<AnnotationRow> kept_rows(const Table& t, const AnnotationColumns& col,
                                     const AnnotationOptions& o, Annotations& out) {
  std::vector<AnnotationRow> rows;
  rows.reserve(t.rows);
  // (task, image) -> the contents of its runs so far (a set: searching a list of them was
  // quadratic in the runs of one image)
  std::map<std::pair<std::string, std::string>, std::set<std::string>> runs_of;
  std::size_t r = 0;
  while (r < t.rows) {
    const std::string img = cell(col.image, r), attr = cell(col.attribute, r);
    if (img.empty() && attr.empty()) {
      ++out.empty_rows;
      ++r;
      continue;
    }
    VLBIAS_CHECK(!img.empty() && !attr.empty(), InputError,
                 "'{}' line {}: the {} cell is empty (a row needs both an image and an attribute)",
                 t.source, t.line_of_row[r], img.empty() ? o.image_column : o.attribute_column);
    // The run: consecutive rows with this (task, image); without a task column, one row.
    const std::string tk = col.task != nullptr ? cell(*col.task, r) : std::string();
    std::size_t end = r + 1;
    if (col.task != nullptr) {
      while (end < t.rows && cell(col.image, end) == img && cell(*col.task, end) == tk) ++end;
    }
    std::string content;
    for (std::size_t i = r; i < end; ++i) {
      content += cell(col.attribute, i);
      content.push_back('\x1f');
      content += cell(col.present, i);
      content.push_back('\x1f');
      if (col.coords != nullptr) content += cell(*col.coords, i);
      content.push_back('\x1e');
    }
    if (col.task != nullptr) {
      if (!runs_of[{tk, img}].insert(std::move(content)).second) {
        ++out.duplicate_runs;
        out.duplicate_rows += end - r;
        r = end;
        continue;
      }
    }
    ++out.runs;  // kept runs
    for (std::size_t i = r; i < end; ++i) {
      const std::string a = cell(col.attribute, i);
      VLBIAS_CHECK(!a.empty(), InputError, "'{}' line {}: the {} cell is empty", t.source,
                   t.line_of_row[i], o.attribute_column);
      rows.push_back(
          {img, a, parse_present(cell(col.present, i), t, i, o.present_column), out.runs - 1});
    }
    r = end;
  }
  VLBIAS_CHECK(!rows.empty(), InputError, "'{}' has no annotation rows", t.source);
  return rows;
}

// The identity is per image: from its name, once per image, or from the identity column,
// which must agree on every row of the image.
std::map<std::string, std::string> identity_of_images(const Table& t, const AnnotationColumns& col,
                                                      const AnnotationOptions& o) {
  std::map<std::string, std::string> image_identity;
  for (std::size_t i = 0; i < t.rows; ++i) {
    const std::string img = cell(col.image, i);
    if (img.empty()) continue;
    if (col.identity == nullptr) {
      if (!image_identity.count(img)) image_identity.emplace(img, identity_from_image_name(img));
      continue;
    }
    const std::string id = cell(*col.identity, i);
    VLBIAS_CHECK(!id.empty(), InputError, "'{}' line {}: the {} cell is empty", t.source,
                 t.line_of_row[i], o.identity_column);
    const auto [it, fresh] = image_identity.emplace(img, id);
    VLBIAS_CHECK(fresh || it->second == id, InputError,
                 "'{}' line {}: image '{}' is labelled '{}' here and '{}' before", t.source,
                 t.line_of_row[i], img, id, it->second);
  }
  return image_identity;
}

std::uint32_t index_in(const std::vector<std::string>& sorted, const std::string& x) {
  return static_cast<std::uint32_t>(std::lower_bound(sorted.begin(), sorted.end(), x) -
                                    sorted.begin());
}

// Images, identities and attributes, sorted, and each image's identity.
void index_levels(const std::vector<AnnotationRow>& rows,
                  const std::map<std::string, std::string>& image_identity, Annotations& out) {
  std::set<std::string> attrs;
  std::set<std::string> images;
  for (const AnnotationRow& x : rows) {
    attrs.insert(x.attribute);
    images.insert(x.image);
  }
  std::set<std::string> ids;
  for (const std::string& img : images) ids.insert(image_identity.at(img));
  out.images.assign(images.begin(), images.end());
  out.attributes.assign(attrs.begin(), attrs.end());
  out.identities.assign(ids.begin(), ids.end());
  out.image_identity.resize(out.images.size());
  for (std::size_t i = 0; i < out.images.size(); ++i) {
    out.image_identity[i] = index_in(out.identities, image_identity.at(out.images[i]));
  }
}

// Judgements: one per row, or one per (run, attribute) by majority (per (image, attribute)
// without runs); sorted by (image, attribute).
void add_judgements(const std::vector<AnnotationRow>& rows, bool runs, Aggregation aggregation,
                    Annotations& out) {
  if (aggregation == Aggregation::PerAnnotation) {
    out.judgements.reserve(rows.size());
    for (const AnnotationRow& x : rows) {
      out.judgements.push_back(
          {index_in(out.images, x.image), index_in(out.attributes, x.attribute), x.present});
    }
  } else {
    // (run or image, attribute) -> yes, total; in first-appearance order.
    struct Votes {
      std::uint32_t image, attribute;
      std::size_t yes = 0, total = 0;
    };
    std::vector<Votes> items;
    std::map<std::tuple<std::size_t, std::uint32_t, std::uint32_t>, std::size_t> where;
    for (const AnnotationRow& x : rows) {
      const std::uint32_t im = index_in(out.images, x.image);
      const std::uint32_t at = index_in(out.attributes, x.attribute);
      const std::size_t unit = runs ? x.run : 0;
      const auto [it, fresh] = where.emplace(std::make_tuple(unit, im, at), items.size());
      if (fresh) items.push_back({im, at});
      Votes& v = items[it->second];
      v.yes += x.present ? 1 : 0;
      ++v.total;
    }
    out.judgements.reserve(items.size());
    for (const Votes& v : items)
      out.judgements.push_back({v.image, v.attribute, 2 * v.yes > v.total});
  }
  std::stable_sort(out.judgements.begin(), out.judgements.end(),
                   [](const Judgement& a, const Judgement& b) {
                     return a.image != b.image ? a.image < b.image : a.attribute < b.attribute;
                   });
}

}  // namespace

Annotations annotations_from_table(const Table& t, const AnnotationOptions& o) {
  const Column* coords = nullptr;
  if (!o.coords_column.empty() && t.find(o.coords_column)) coords = &t.column(o.coords_column);
  const AnnotationColumns col{t.column(o.image_column),
                              t.column(o.attribute_column),
                              t.column(o.present_column),
                              o.task_column.empty() ? nullptr : &t.column(o.task_column),
                              o.identity_column.empty() ? nullptr : &t.column(o.identity_column),
                              coords};

  Annotations out;
  out.rows = t.rows;
  out.aggregation = o.aggregation;
  out.none_option = o.none_option;
  const std::vector<AnnotationRow> rows = kept_rows(t, col, o, out);
  index_levels(rows, identity_of_images(t, col, o), out);
  add_judgements(rows, col.task != nullptr, o.aggregation, out);
  return out;
}

}  // namespace vlbias
