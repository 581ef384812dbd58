// `vlbias label --labeller vlm` (include/vlbias/labels/vlm_labels.h): the answers of a `score
// choice` run as LABELS.csv, in one table or as a shard of the chunked label job.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "label_items.h"
#include "label_job_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"
#include "vlbias/io/table/table.h"
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

namespace {

// What run_vlm_labels writes: the answers' rows as LABELS.csv rows, with the schema and the
// provenance.
struct VlmLabelTable {
  LabelsSchema schema;
  LabelsProvenance provenance;
  std::vector<LabelRow> rows;
  bool faces = false;
};

VlmLabelTable read_vlm_label_table(const VlmLabelOptions& o) {
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
  VlmLabelTable out;
  out.schema.attributes = attributes;
  out.schema.classes.assign(attributes.size(), choices);
  const Column* asked = o.attributes.empty() ? nullptr : &t.column(o.attribute_column);
  std::vector<std::string> p_names;
  for (const std::string& c : choices) p_names.push_back("p_" + c);
  std::vector<const std::string*> p_columns;
  for (const std::string& name : p_names) p_columns.push_back(t.find(name) ? &name : nullptr);
  out.faces = !o.face_column.empty();
  const Column* face = out.faces ? &t.column(o.face_column) : nullptr;
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
    out.rows.push_back(std::move(row));
  }
  LabelsProvenance& p = out.provenance;
  p.labeller = "vlm";
  p.model = t.find("model") ? t.column("model").text(0) : "";
  if (o.prompt_set.empty()) {
    p.prompt_set = t.find("prompt") ? t.column("prompt").text(0) : "";
    p.options["answers"] = o.answers.string();
  } else {
    p.prompt_set = o.prompt_set;
  }
  p.options["choices"] = fmt::format("{}", fmt::join(choices, ","));
  return out;
}

}  // namespace

LabelRunCounts run_vlm_labels(const VlmLabelOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const VlmLabelTable table = read_vlm_label_table(o);
  LabelRunCounts result;
  result.items = result.labelled = result.rows = table.rows.size();
  result.faces = table.faces;
  write_labels_table(o.out, table.schema, table.provenance, table.rows);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::vector<std::size_t> label_shard_item_indices(std::size_t items, const LabelJobOptions& job) {
  const std::size_t chunk = job.chunk == 0 ? kDefaultLabelChunk : job.chunk;
  VLBIAS_CHECK(chunk <= 1000000, UsageError,
               "--chunk {}: expected at most 1000000 items per checkpoint.", chunk);
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < items; ++k) {
    if (shard_of_chunk(k / chunk, job.shard.count) == job.shard.index) out.push_back(k);
  }
  return out;
}

LabelRunCounts run_vlm_label_shard(const VlmLabelShardOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  VlmLabelTable table;
  if (!o.answers.answers.empty()) {
    table = read_vlm_label_table(o.answers);
  } else {  // a shard that owns no item: its (empty) table as one with answers writes it
    labels_internal::check_label_out(o.answers.out);
    table.schema.attributes = o.answers.attributes.empty()
                                  ? std::vector<std::string>{o.answers.attribute}
                                  : o.answers.attributes;
    table.schema.classes.assign(table.schema.attributes.size(), o.choices);
    table.provenance.labeller = "vlm";
    table.provenance.model = o.model;
    table.provenance.prompt_set = o.answers.prompt_set;
    table.provenance.options["choices"] = fmt::format("{}", fmt::join(o.choices, ","));
  }
  const labels_internal::LabelItems items =
      labels_internal::read_label_items(o.input, o.column, o.image_root);
  // Each answered item's rows, by its name in the job's item list (image, or image#face<k>).
  std::map<std::string, std::vector<const LabelRow*>> rows_of;
  for (const LabelRow& r : table.rows) {
    rows_of[r.face ? fmt::format("{}#face{}", r.image, *r.face) : r.image].push_back(&r);
  }
  const std::vector<std::string> names = labels_internal::label_item_names(items);
  const labels_internal::LabelJobSpec spec{
      items, table.schema, table.provenance, o.input, o.answers.out, o.job, 0};
  LabelRunCounts r = labels_internal::run_label_job(
      spec,
      [&](std::size_t begin, std::size_t end, std::vector<LabelRow>& rows, LabelRunCounts& counts) {
        for (std::size_t k = begin; k < end; ++k) {
          const auto it = rows_of.find(names[k]);
          if (it == rows_of.end()) {
            ++counts.failed;  // no answer: the file is missing, or every request failed
            continue;
          }
          for (const LabelRow* row : it->second) rows.push_back(*row);
          ++counts.labelled;
        }
      });
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace vlbias
