// The labels joined to the generation manifest (representation_audit_internal.h).
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "representation_audit_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/labels/labels_table.h"

namespace vlbias::audits_internal {

namespace {

bool is_other_label(const std::string& label) {
  return label == kLabelUnclear || label == kLabelRefused || label == kLabelUnparseable;
}

// A column's cells as codes into `texts`: a String column's own dictionary (a missing cell is
// the code of ""), a Numeric column's texts interned here. Joins and label lookups then work on
// each distinct text once instead of once per row (a labels table has a row per face and
// attribute: millions).
struct CodedColumn {
  std::vector<std::uint32_t> codes;
  std::vector<std::string> texts;
};

CodedColumn coded_column(const Column& c) {
  CodedColumn out;
  if (c.type == ColumnType::String) {
    out.texts = c.levels;
    out.texts.emplace_back();  // missing
    out.codes = c.codes;
    const auto missing = static_cast<std::uint32_t>(c.levels.size());
    for (std::uint32_t& code : out.codes) {
      if (code == Column::kMissing) code = missing;
    }
    return out;
  }
  std::unordered_map<std::string, std::uint32_t> index;
  out.codes.resize(c.size());
  for (std::size_t row = 0; row < c.size(); ++row) {
    const auto [it, added] =
        index.emplace(c.text(row), static_cast<std::uint32_t>(out.texts.size()));
    if (added) out.texts.push_back(it->first);
    out.codes[row] = it->second;
  }
  return out;
}

constexpr std::uint32_t kNotFound = 0xFFFFFFFFu;

// The prompts and their images; `where` maps an image to (prompt, index within the prompt).
void read_manifest_prompts(
    const RepresentationAuditSpec& r, RepresentationData& d,
    std::unordered_map<std::string, std::pair<std::uint32_t, std::uint32_t>>& where) {
  const Table m = read_table(r.manifest.string());
  VLBIAS_CHECK(m.rows > 0, InputError, "'{}' has no rows: there are no generated images", m.source);
  const Column& image = m.column(r.manifest_image_column);
  const Column& prompt = m.column(r.prompt_column);
  const Column* group = r.group_column.empty() ? nullptr : &m.column(r.group_column);
  const Column* key = r.key_column.empty() ? nullptr : &m.column(r.key_column);
  std::unordered_map<std::string, std::uint32_t> prompt_index;
  for (std::size_t row = 0; row < m.rows; ++row) {
    const std::string id = image.text(row), text = prompt.text(row);
    VLBIAS_CHECK(!id.empty() && !text.empty(), InputError,
                 "'{}' row {}: an empty {} cell; every generated image needs its {} and its {}",
                 m.source, m.line_of_row[row], id.empty() ? "image" : "prompt",
                 r.manifest_image_column, r.prompt_column);
    auto [it, added] = prompt_index.emplace(text, static_cast<std::uint32_t>(d.prompts.size()));
    if (added) {
      RepresentationPrompt p;
      p.prompt = text;
      p.group = group ? group->text(row) : "";
      p.key = key ? key->text(row) : text;
      d.prompts.push_back(std::move(p));
    }
    RepresentationPrompt& p = d.prompts[it->second];
    const auto at = std::make_pair(it->second, static_cast<std::uint32_t>(p.images.size()));
    VLBIAS_CHECK(where.emplace(id, at).second, InputError,
                 "'{}' row {}: image '{}' is listed twice; each generated image needs one row",
                 m.source, m.line_of_row[row], id);
    p.images.push_back(id);
  }
}

// The labeller audited: labels.use, or the table's only one.
std::vector<bool> audited_rows(const RepresentationAuditSpec& r, const Table& t,
                               RepresentationData& d) {
  std::vector<bool> keep(t.rows, true);
  if (r.labeller_column.empty() || !t.find(r.labeller_column)) {
    VLBIAS_CHECK(r.labeller.empty(), UsageError,
                 "labels.use names labeller '{}' but '{}' has no {} column", r.labeller, t.source,
                 r.labeller_column.empty() ? "labeller" : r.labeller_column);
    return keep;
  }
  const Column& c = t.column(r.labeller_column);
  for (std::size_t row = 0; row < t.rows; ++row) {
    const std::string l = c.text(row);
    if (std::find(d.labellers.begin(), d.labellers.end(), l) == d.labellers.end())
      d.labellers.push_back(l);
  }
  if (r.labeller.empty()) {
    VLBIAS_CHECK(d.labellers.size() <= 1, UsageError,
                 "'{}' holds the labels of {} labellers ({}); choose the one to audit with "
                 "labels.use",
                 t.source, d.labellers.size(), fmt::join(d.labellers, ", "));
    d.labeller = d.labellers.empty() ? "" : d.labellers[0];
    return keep;
  }
  VLBIAS_CHECK(std::find(d.labellers.begin(), d.labellers.end(), r.labeller) != d.labellers.end(),
               UsageError, "labels.use: '{}' has no rows of labeller '{}' (it has {})", t.source,
               r.labeller, fmt::join(d.labellers, ", "));
  d.labeller = r.labeller;
  for (std::size_t row = 0; row < t.rows; ++row) keep[row] = c.text(row) == r.labeller;
  return keep;
}

// The classes of attribute `name`: the spec's, else its rows' non-empty p_<class> columns, then
// any other label seen.
std::vector<std::string> attribute_classes(const RepresentationAuditSpec& r, const Table& t,
                                           const std::string& name,
                                           const std::vector<std::size_t>& rows,
                                           const CodedColumn& label) {
  for (const auto& [a, classes] : r.classes) {
    if (a == name) return classes;
  }
  std::vector<std::string> classes;
  for (const std::size_t row : rows) {
    for (const Column& c : t.columns) {
      if (c.name.rfind("p_", 0) != 0 || c.missing(row)) continue;
      const std::string cls = c.name.substr(2);
      if (std::find(classes.begin(), classes.end(), cls) == classes.end()) classes.push_back(cls);
    }
    if (!classes.empty()) break;
  }
  std::vector<bool> seen(label.texts.size(), false);
  for (const std::size_t row : rows) {
    const std::uint32_t code = label.codes[row];
    if (seen[code]) continue;
    seen[code] = true;
    const std::string& l = label.texts[code];
    if (!l.empty() && !is_other_label(l) &&
        std::find(classes.begin(), classes.end(), l) == classes.end())
      classes.push_back(l);
  }
  VLBIAS_CHECK(classes.size() >= 2, InputError,
               "'{}': attribute '{}' has {} class{} ({}); shares need at least two: list them in "
               "labels.classes",
               t.source, name, classes.size(), classes.size() == 1 ? "" : "es",
               fmt::join(classes, ", "));
  return classes;
}

// d.faces from the (image number, face) keys of every label row; whole_images when no row
// named a face.
void count_faces(std::vector<std::uint64_t>& face_keys, const std::vector<std::size_t>& first_image,
                 RepresentationData& d) {
  std::sort(face_keys.begin(), face_keys.end());
  face_keys.erase(std::unique(face_keys.begin(), face_keys.end()), face_keys.end());
  for (std::size_t p = 0, j = 0; p < d.prompts.size(); ++p) {
    const std::uint64_t end = first_image[p] + d.prompts[p].images.size();
    for (; j < face_keys.size() && (face_keys[j] >> 32) < end; ++j)
      ++d.faces[p][(face_keys[j] >> 32) - first_image[p]];
  }
  d.whole_images = face_keys.empty();
}

}  // namespace

// The labels table in the long layout the audit reads: as written, or, with labels.columns (a
// wide table such as faces.csv with its monk column), one row per (row, column) whose attribute
// is the column's name and whose label is the cell (an empty cell: unclear, e.g. a face without
// skin pixels, which HEIM leaves out of its skin-tone shares).
Table read_labels_table(const RepresentationAuditSpec& r) {
  Table wide = read_table(r.labels.string());
  if (r.label_columns.empty()) return wide;
  const Column& image = wide.column(r.image_column);
  const Column* face =
      !r.face_column.empty() && wide.find(r.face_column) ? &wide.column(r.face_column) : nullptr;
  std::vector<const Column*> columns;
  for (const std::string& c : r.label_columns) columns.push_back(&wide.column(c));
  std::vector<std::string> images, faces, attributes, labels;
  Table t;
  t.source = wide.source;
  for (std::size_t row = 0; row < wide.rows; ++row) {
    for (const Column* c : columns) {
      images.push_back(image.text(row));
      if (face != nullptr) faces.push_back(face->text(row));
      attributes.push_back(c->name);
      labels.push_back(c->missing(row) ? std::string(kLabelUnclear) : c->text(row));
      t.line_of_row.push_back(wide.line_of_row[row]);
    }
  }
  t.rows = images.size();
  add_string_column(t, r.image_column, images);
  if (face != nullptr) add_string_column(t, r.face_column, faces);
  add_string_column(t, r.attribute_column, attributes);
  add_string_column(t, r.label_column, labels);
  return t;
}

RepresentationData read_representation_data(const RepresentationAuditSpec& r, const Table& t) {
  RepresentationData d;
  std::unordered_map<std::string, std::pair<std::uint32_t, std::uint32_t>> where;
  read_manifest_prompts(r, d, where);
  const Column& image = t.column(r.image_column);
  const Column& attribute = t.column(r.attribute_column);
  const Column& label = t.column(r.label_column);
  const Column* face =
      !r.face_column.empty() && t.find(r.face_column) ? &t.column(r.face_column) : nullptr;
  const std::vector<bool> keep = audited_rows(r, t, d);
  const CodedColumn attribute_codes = coded_column(attribute), label_codes = coded_column(label),
                    image_codes = coded_column(image);
  // The attributes and their rows.
  std::vector<std::string> names = r.attributes;
  std::vector<std::uint32_t> attribute_of(attribute_codes.texts.size(), kNotFound);
  std::vector<bool> attribute_seen(attribute_codes.texts.size(), false);
  std::vector<std::vector<std::size_t>> rows_of(names.size());
  for (std::size_t row = 0; row < t.rows; ++row) {
    if (!keep[row]) continue;
    const std::uint32_t code = attribute_codes.codes[row];
    if (!attribute_seen[code]) {
      attribute_seen[code] = true;
      const std::string& a = attribute_codes.texts[code];
      auto it = std::find(names.begin(), names.end(), a);
      if (it == names.end() && r.attributes.empty()) {
        names.push_back(a);
        rows_of.emplace_back();
        it = names.end() - 1;
      }
      if (it != names.end()) attribute_of[code] = static_cast<std::uint32_t>(it - names.begin());
    }
    if (attribute_of[code] == kNotFound) continue;
    rows_of[attribute_of[code]].push_back(row);
    ++d.label_rows;
  }
  // Each distinct image text's place in the manifest, looked up once.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> image_at(image_codes.texts.size(),
                                                                {kNotFound, 0});
  for (std::size_t code = 0; code < image_codes.texts.size(); ++code) {
    const auto found = where.find(image_codes.texts[code]);
    if (found != where.end()) image_at[code] = found->second;
  }
  VLBIAS_CHECK(d.label_rows > 0, InputError, "'{}' has no label rows{}", t.source,
               r.attributes.empty() ? "" : fmt::format(" of {}", fmt::join(r.attributes, ", ")));
  d.counts.resize(names.size());
  d.faces.resize(d.prompts.size());
  for (std::size_t p = 0; p < d.prompts.size(); ++p)
    d.faces[p].assign(d.prompts[p].images.size(), 0);
  std::vector<std::uint64_t> face_keys;  // (image number over every prompt, face cell)
  std::vector<std::size_t> first_image(d.prompts.size(), 0);
  for (std::size_t p = 1; p < d.prompts.size(); ++p)
    first_image[p] = first_image[p - 1] + d.prompts[p - 1].images.size();
  for (std::size_t a = 0; a < names.size(); ++a) {
    VLBIAS_CHECK(!rows_of[a].empty(), InputError, "'{}' has no label rows of attribute '{}'",
                 t.source, names[a]);
    RepresentationAttribute attr;
    attr.name = names[a];
    attr.classes = attribute_classes(r, t, names[a], rows_of[a], label_codes);
    const std::size_t width = attr.classes.size() + 1;
    for (std::size_t p = 0; p < d.prompts.size(); ++p)
      d.counts[a].emplace_back(d.prompts[p].images.size() * width, 0);
    // Each distinct label text's class (K: not a class; kNotFound: not allowed), once.
    std::vector<std::uint32_t> class_of(label_codes.texts.size(), kNotFound);
    for (std::size_t code = 0; code < label_codes.texts.size(); ++code) {
      const std::string& l = label_codes.texts[code];
      const auto cls = std::find(attr.classes.begin(), attr.classes.end(), l);
      if (cls != attr.classes.end()) {
        class_of[code] = static_cast<std::uint32_t>(cls - attr.classes.begin());
      } else if (is_other_label(l)) {
        class_of[code] = static_cast<std::uint32_t>(attr.classes.size());
      }
    }
    for (const std::size_t row : rows_of[a]) {
      const auto [p, i] = image_at[image_codes.codes[row]];
      VLBIAS_CHECK(p != kNotFound, InputError,
                   "'{}' row {}: image '{}' is not in the manifest '{}' (its {} column)", t.source,
                   t.line_of_row[row], image.text(row), r.manifest.string(),
                   r.manifest_image_column);
      const std::uint32_t k = class_of[label_codes.codes[row]];
      VLBIAS_CHECK(k != kNotFound, InputError,
                   "'{}' row {}: label '{}' is not a class of '{}' ({}) nor unclear, refused or "
                   "unparseable",
                   t.source, t.line_of_row[row], label.text(row), attr.name,
                   fmt::join(attr.classes, ", "));
      if (k == attr.classes.size()) ++attr.other_labels[label_codes.texts[label_codes.codes[row]]];
      ++d.counts[a][p][i * width + k];
      if (face != nullptr && !face->missing(row)) {
        double code = 0;
        if (face->type == ColumnType::Numeric) {
          code = face->numbers[row];
          VLBIAS_CHECK(code >= 0 && code < 4294967296.0 &&
                           code == static_cast<double>(static_cast<std::uint64_t>(code)),
                       InputError, "'{}' row {}: face '{}' is not a face index (0, 1, ...)",
                       t.source, t.line_of_row[row], face->text(row));
        } else {
          code = face->codes[row];
        }
        face_keys.push_back((static_cast<std::uint64_t>(first_image[p] + i) << 32) |
                            static_cast<std::uint64_t>(code));
      }
    }
    d.attributes.push_back(std::move(attr));
  }
  count_faces(face_keys, first_image, d);
  if (face == nullptr) d.whole_images = true;
  return d;
}

std::vector<std::uint64_t> prompt_counts(const RepresentationData& d, std::size_t a,
                                         std::size_t p) {
  const std::size_t width = d.attributes[a].classes.size() + 1;
  std::vector<std::uint64_t> out(width, 0);
  const std::vector<std::uint32_t>& c = d.counts[a][p];
  for (std::size_t j = 0; j < c.size(); ++j) out[j % width] += c[j];
  return out;
}

}  // namespace vlbias::audits_internal
