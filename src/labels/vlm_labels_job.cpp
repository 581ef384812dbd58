// `vlbias label --labeller vlm` (include/vlbias/labels/vlm_labels.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "label_items.h"
#include "vlbias/core/error.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"
#include "vlbias/io/table.h"
#include "vlbias/labels/vlm_labels.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

// The choices of the `score choice` run, in the order its p_<choice> columns have them.
std::vector<std::string> vlm_choices(const fs::path& manifest) {
  const Json m = parse_json(read_file_text(manifest, "a score choice manifest"), manifest.string());
  VLBIAS_CHECK(m.is_object() && m.value("command", "") == "score choice" && m.contains("choices") &&
                   m["choices"].is_array() && m["choices"].size() >= 2,
               InputError,
               "{}: not the manifest of a `vlbias score choice` run (expected \"command\": \"score "
               "choice\" and at least two \"choices\").",
               manifest.string());
  std::vector<std::string> choices;
  for (const Json& c : m["choices"]) {
    VLBIAS_CHECK(c.is_string(), InputError, "{}: a choice is not a string.", manifest.string());
    choices.push_back(c.get<std::string>());
  }
  return choices;
}

// A number cell (JSONL may hold numbers in a column whose other cells are null).
double vlm_number(const Table& t, const std::string& column, std::size_t row) {
  const std::string text = t.column(column).text(row);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  VLBIAS_CHECK(used == text.size() && std::isfinite(v), InputError,
               "{}, row {}: {} is '{}'; expected a number.", t.source, row + 1, column, text);
  return v;
}

// The row's probabilities of the choices (`p_columns`: each choice's p_<choice> column, null when
// the answers lack it), or none when any cell is empty.
std::vector<double> vlm_probabilities(const Table& t,
                                      const std::vector<const std::string*>& p_columns,
                                      std::size_t row) {
  std::vector<double> p;
  for (const std::string* name : p_columns) {
    if (name == nullptr || t.column(*name).missing(row)) return {};
    p.push_back(vlm_number(t, *name, row));
  }
  return p;
}

}  // namespace

LabelImageFiles label_image_files(const fs::path& input, const std::string& column,
                                  const fs::path& image_root) {
  const labels_internal::LabelItems items =
      labels_internal::read_label_items(input, column, image_root);
  VLBIAS_CHECK(!items.table_images, UsageError,
               "--images {}: its images are cells of a Parquet table; --labeller vlm --spec sends "
               "image files (write them out with `vlbias dataset extract-images` first).",
               input.string());
  return LabelImageFiles{items.path, items.image, items.face, items.faces};
}

LabelRunCounts run_vlm_labels(const VlmLabelOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> attributes =
      o.attributes.empty() ? std::vector<std::string>{o.attribute} : o.attributes;
  VLBIAS_CHECK(!attributes[0].empty(), UsageError,
               "--labeller vlm needs --attributes with the one attribute the question asked "
               "about (e.g. gender).");
  labels_internal::check_label_out(o.out);
  const std::vector<std::string> choices = vlm_choices(o.answers / "manifest.json");
  const Table t = read_table((o.answers / "scored.jsonl").string());
  VLBIAS_CHECK(t.rows > 0, InputError, "{}: has no answer.", t.source);
  const Column& image = t.column(o.image_column);
  const Column& label = t.column("choice_label");
  LabelsSchema schema;
  schema.attributes = attributes;
  schema.classes.assign(attributes.size(), choices);
  const Column* asked = o.attributes.empty() ? nullptr : &t.column(o.attribute_column);
  std::vector<std::string> p_names;
  for (const std::string& c : choices) p_names.push_back("p_" + c);
  std::vector<const std::string*> p_columns;
  for (const std::string& name : p_names) p_columns.push_back(t.find(name) ? &name : nullptr);
  const bool faces = !o.face_column.empty();
  const Column* face = faces ? &t.column(o.face_column) : nullptr;
  LabelRunCounts result;
  result.items = t.rows;
  result.faces = faces;
  std::vector<LabelRow> rows;
  for (std::size_t r = 0; r < t.rows; ++r) {
    LabelRow row;
    row.image = image.text(r);
    if (face != nullptr && !face->missing(r)) {
      const double f = vlm_number(t, o.face_column, r);
      VLBIAS_CHECK(f >= 0 && f == std::floor(f) && f < 1e9, InputError,
                   "{}, row {}: face {} is not a face index (a whole number >= 0).", t.source,
                   r + 1, f);
      row.face = static_cast<std::size_t>(f);
    }
    if (asked != nullptr) {
      const std::string a = asked->text(r);
      const auto at = std::find(attributes.begin(), attributes.end(), a);
      VLBIAS_CHECK(at != attributes.end(), InputError,
                   "{}, row {}: {} '{}' is none of the attributes asked about ({}).", t.source,
                   r + 1, o.attribute_column, a, fmt::join(attributes, ", "));
      row.attribute = static_cast<std::size_t>(at - attributes.begin());
    }
    row.label = label.text(r);
    row.probabilities = vlm_probabilities(t, p_columns, r);
    rows.push_back(std::move(row));
    ++result.labelled;
  }
  LabelsProvenance p;
  p.labeller = "vlm";
  p.model = t.find("model") ? t.column("model").text(0) : "";
  p.prompt_set = t.find("prompt") ? t.column("prompt").text(0) : "";
  p.options["answers"] = o.answers.string();
  p.options["choices"] = fmt::format("{}", fmt::join(choices, ","));
  result.rows = rows.size();
  write_labels_table(o.out, schema, p, rows);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace vlbias
