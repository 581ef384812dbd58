// LABELS.csv, the table every labeller writes (include/vlbias/labels/labels_table.h).
#include "vlbias/labels/labels_table.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace {

// A number cell: the shortest text that reads back as the same double.
void append_label_number(std::string& out, double value) {
  out += fmt::format("{}", value);
}

// The p_<class> columns: each class name once, in attribute then class order. Attributes with
// the same class list (the yes/no questions of visual attributes) share their columns; a class
// name of two attributes whose lists differ is refused. `columns[a][c]`: the column of class c of
// attribute a.
struct LabelColumns {
  std::vector<std::string> names;
  std::vector<std::vector<std::size_t>> columns;
};

LabelColumns label_columns(const LabelsSchema& schema) {
  LabelColumns out;
  std::map<std::string, std::size_t> owner;  // class name -> the first attribute naming it
  for (std::size_t a = 0; a < schema.attributes.size(); ++a) {
    out.columns.emplace_back();
    for (const std::string& c : schema.classes[a]) {
      const auto [it, fresh] = owner.emplace(c, a);
      VLBIAS_CHECK(fresh || schema.classes[it->second] == schema.classes[a], UsageError,
                   "the class \"{}\" of {} is also a class of another attribute of the run; class "
                   "names must be unique across a run's attributes (each is a p_<class> column) "
                   "unless the attributes have the same classes.",
                   c, schema.attributes[a]);
      if (fresh) out.names.push_back(c);
      out.columns.back().push_back(static_cast<std::size_t>(
          std::find(out.names.begin(), out.names.end(), c) - out.names.begin()));
    }
  }
  return out;
}

void append_labels_header(std::string& out, const LabelColumns& columns) {
  out += "image,face,attribute,label,margin";
  for (const std::string& c : columns.names) {
    out += ',';
    append_csv_cell(out, label_probability_column(c));
  }
  out += ",labeller,model,weights_sha256,prompt_set,options\n";
}

}  // namespace

std::string label_probability_column(const std::string& class_name) {
  return "p_" + class_name;
}

std::string labels_options_text(const std::map<std::string, std::string>& options) {
  std::string out;
  for (const auto& [key, value] : options) {  // std::map: keys in byte order
    if (!out.empty()) out += ';';
    out += key + "=" + value;
  }
  return out;
}

std::string label_from_probabilities(const std::vector<double>& probabilities,
                                     const std::vector<std::string>& classes, double margin,
                                     double& gap) {
  VLBIAS_CHECK(probabilities.size() >= 2 && probabilities.size() == classes.size(), InternalError,
               "{} probabilities for {} classes", probabilities.size(), classes.size());
  std::size_t top = 0;
  for (std::size_t c = 1; c < probabilities.size(); ++c) {
    if (probabilities[c] > probabilities[top]) top = c;
  }
  double second = -1.0;
  for (std::size_t c = 0; c < probabilities.size(); ++c) {
    if (c != top && probabilities[c] > second) second = probabilities[c];
  }
  gap = probabilities[top] - second;
  return gap < margin ? kLabelUnclear : classes[top];
}

std::string labels_table_text(const LabelsSchema& schema, const LabelsProvenance& provenance,
                              const std::vector<LabelRow>& rows) {
  VLBIAS_CHECK(schema.classes.size() == schema.attributes.size(), InternalError,
               "{} class lists for {} attributes", schema.classes.size(), schema.attributes.size());
  const LabelColumns columns = label_columns(schema);
  std::string out;
  append_labels_header(out, columns);
  std::string tail;  // the provenance cells, the same on every row
  for (const std::string* cell : {&provenance.labeller, &provenance.model,
                                  &provenance.weights_sha256, &provenance.prompt_set}) {
    tail += ',';
    append_csv_cell(tail, *cell);
  }
  tail += ',';
  append_csv_cell(tail, labels_options_text(provenance.options));
  tail += '\n';
  for (const LabelRow& r : rows) {
    VLBIAS_CHECK(r.attribute < schema.attributes.size(), InternalError,
                 "label row of attribute {} of {}", r.attribute, schema.attributes.size());
    const std::vector<std::string>& classes = schema.classes[r.attribute];
    VLBIAS_CHECK(r.probabilities.empty() || r.probabilities.size() == classes.size(), InternalError,
                 "{} probabilities for the {} classes of {}", r.probabilities.size(),
                 classes.size(), schema.attributes[r.attribute]);
    append_csv_cell(out, r.image);
    out += ',';
    if (r.face) out += fmt::format("{}", *r.face);
    out += ',';
    append_csv_cell(out, schema.attributes[r.attribute]);
    out += ',';
    append_csv_cell(out, r.label);
    out += ',';
    if (!r.probabilities.empty()) {
      double gap = 0.0;
      label_from_probabilities(r.probabilities, classes, 0.0, gap);
      append_label_number(out, gap);
    }
    std::vector<const double*> cells(columns.names.size(), nullptr);
    for (std::size_t c = 0; c < r.probabilities.size(); ++c) {
      cells[columns.columns[r.attribute][c]] = &r.probabilities[c];
    }
    for (const double* cell : cells) {
      out += ',';
      if (cell != nullptr) append_label_number(out, *cell);
    }
    out += tail;
  }
  return out;
}

void write_labels_table(const std::filesystem::path& path, const LabelsSchema& schema,
                        const LabelsProvenance& provenance, const std::vector<LabelRow>& rows) {
  write_file_atomically(path, labels_table_text(schema, provenance, rows));
}

}  // namespace vlbias
