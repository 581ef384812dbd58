// LABELS.csv, the table every labeller writes (include/vlbias/labels/labels_table.h).
#include "vlbias/labels/labels_table.h"

#include <set>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/io/atomic_file.h"
#include "vlbias/io/table.h"

namespace vlbias {

namespace {

// A number cell: the shortest text that reads back as the same double.
void append_label_number(std::string& out, double value) {
  out += fmt::format("{}", value);
}

void append_labels_header(std::string& out, const LabelsSchema& schema) {
  out += "image,face,attribute,label,margin";
  std::set<std::string> seen;
  for (std::size_t a = 0; a < schema.attributes.size(); ++a) {
    for (const std::string& c : schema.classes[a]) {
      VLBIAS_CHECK(seen.insert(c).second, UsageError,
                   "the class \"{}\" of {} is also a class of another attribute of the run; class "
                   "names must be unique across a run's attributes (each is a p_<class> column).",
                   c, schema.attributes[a]);
      out += ',';
      append_csv_cell(out, label_probability_column(c));
    }
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
  std::string out;
  append_labels_header(out, schema);
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
    for (std::size_t a = 0; a < schema.attributes.size(); ++a) {
      for (std::size_t c = 0; c < schema.classes[a].size(); ++c) {
        out += ',';
        if (a == r.attribute && !r.probabilities.empty()) {
          append_label_number(out, r.probabilities[c]);
        }
      }
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
