// `vlbias dataset visage-labels --annotations FILE --out LABELS.csv`: ViSAGe's human annotations
// of generated images (paper 000; Sheet1.csv or full_set_annotations.csv) as LABELS.csv rows
// (include/vlbias/labels/labels_table.h), labeller `human`, so that a VLM's yes/no answers
// (`vlbias label --labeller vlm --spec`, data/visage/questions.yaml) compare with them in one
// `metric agreement` call. The rows are read by annotations_from_table
// (include/vlbias/metrics/visual_stereotypes.h; docs/methods.md#visage-annotations): its tasks,
// duplicate runs, empty rows, `present` values and aggregation, as the visual-stereotypes audit
// reads them. A dataset subcommand because it reads a published release file and labels no image.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/sha256.h"
#include "vlbias/core/terminal.h"
#include "vlbias/io/table/table.h"
#include "vlbias/labels/labels_table.h"
#include "vlbias/metrics/visual_stereotypes.h"

namespace vlbias::cli_internal {

namespace {

namespace fs = std::filesystem;

struct VisageLabelsArgs {
  std::string annotations, out, aggregate = "majority", image_root;
};

// The release's two layouts: the columns each has (required, then optional).
struct VisageLayout {
  const char* name;
  AnnotationOptions options;
  std::vector<std::string> required, optional;
};

VisageLayout sheet1_layout() {
  VisageLayout l{"sheet1", {}, {}, {}};
  l.options.task_column = "Annotator_id";
  l.options.identity_column = "identity";
  l.options.present_column = "present_in_the_image";
  l.options.coords_column = "co_ordinates";
  l.required = {"Annotator_id", "img_path", "identity", "attribute", "present_in_the_image"};
  l.optional = {"co_ordinates"};
  return l;
}

VisageLayout full_set_layout() {
  VisageLayout l{"full_set", {}, {}, {}};  // AnnotationOptions' defaults are this layout's
  l.required = {"worker_id", "img_path", "attribute", "present"};
  l.optional = {"coords"};
  return l;
}

// Sheet1.csv's layout when the table has its present column (or its task column), else
// full_set_annotations.csv's. InputError for a missing column of the layout, or a column that
// neither layout has, except a spreadsheet's unnamed tail ("Unnamed: i") left empty.
VisageLayout visage_layout_of(const Table& t) {
  VisageLayout l = t.find("present_in_the_image") || t.find("Annotator_id") ? sheet1_layout()
                                                                            : full_set_layout();
  const auto listed = [&] {
    return fmt::format("{}", fmt::join(l.required, ", ")) +
           (l.optional.empty() ? "" : fmt::format(" (and optionally {})", l.optional[0]));
  };
  for (const std::string& name : l.required) {
    VLBIAS_CHECK(t.find(name).has_value(), InputError,
                 "'{}' has no column '{}'; expected ViSAGe's {} layout: {}.", t.source, name,
                 l.name == std::string("sheet1") ? "Sheet1.csv" : "full_set_annotations.csv",
                 listed());
  }
  for (const Column& c : t.columns) {
    const bool known = std::count(l.required.begin(), l.required.end(), c.name) +
                           std::count(l.optional.begin(), l.optional.end(), c.name) >
                       0;
    if (known) continue;
    VLBIAS_CHECK(c.name.rfind("Unnamed: ", 0) == 0, InputError,
                 "'{}' has a column '{}' that ViSAGe's {} layout does not have (its columns: {}).",
                 t.source, c.name, l.name, listed());
    for (std::size_t r = 0; r < t.rows; ++r) {
      VLBIAS_CHECK(c.missing(r), InputError,
                   "'{}' line {}: the unnamed column {} holds '{}'; expected the empty tail of a "
                   "spreadsheet export.",
                   t.source, t.line_of_row[r], c.name, c.text(r));
    }
  }
  return l;
}

// LABELS.csv's image name of an img_path cell: the path after `prefix` (--image-root ending in one
// '/': as `vlbias label --images ROOT` names the file), or without one the file name (after the
// last '/' or '\\').
std::string visage_image_name(const std::string& image, const std::string& prefix,
                              const std::string& source) {
  if (prefix.empty()) {
    const std::size_t slash = image.find_last_of("/\\");
    return slash == std::string::npos ? image : image.substr(slash + 1);
  }
  const bool under = image.size() > prefix.size() && image.compare(0, prefix.size(), prefix) == 0;
  VLBIAS_CHECK(under, InputError, "'{}': image '{}' is not under --image-root {}.", source, image,
               prefix);
  return image.substr(prefix.size());
}

struct VisageLabelsResult {
  Annotations annotations;
  std::size_t rows = 0, none_rows = 0, images = 0, attributes = 0;
  std::string layout;
};

VisageLabelsResult write_visage_labels(const VisageLabelsArgs& a) {
  VLBIAS_CHECK(!a.out.empty() && !fs::is_directory(a.out), UsageError,
               "--out {}: expected a file path for LABELS.csv.", a.out);
  const Table t = read_table(a.annotations);
  const VisageLayout layout = visage_layout_of(t);
  AnnotationOptions options = layout.options;
  options.aggregation =
      a.aggregate == "majority" ? Aggregation::Majority : Aggregation::PerAnnotation;
  VisageLabelsResult result;
  result.layout = layout.name;
  result.annotations = annotations_from_table(t, options);
  const Annotations& ann = result.annotations;

  std::string root = a.image_root;  // as a prefix ending in one '/' ("/" stays "/")
  while (!root.empty() && root.back() == '/') root.pop_back();
  if (!a.image_root.empty()) root += '/';
  std::vector<std::string> names(ann.images.size());
  std::map<std::string, std::size_t> first_of;
  for (std::size_t i = 0; i < ann.images.size(); ++i) {
    names[i] = visage_image_name(ann.images[i], root, t.source);
    const auto [it, fresh] = first_of.emplace(names[i], i);
    VLBIAS_CHECK(fresh, InputError,
                 "'{}': images '{}' and '{}' are both named '{}' in LABELS.csv; pass --image-root "
                 "with the folder they are under so that they keep their folders.",
                 t.source, ann.images[it->second], ann.images[i], names[i]);
  }
  LabelsSchema schema;
  std::vector<std::size_t> attribute_of(ann.attributes.size(), 0);
  for (std::size_t k = 0; k < ann.attributes.size(); ++k) {
    if (ann.attributes[k] == ann.none_option) continue;
    attribute_of[k] = schema.attributes.size();
    schema.attributes.push_back(ann.attributes[k]);
    schema.classes.push_back({"yes", "no"});  // the header of a yes/no label-vlm run
  }
  std::vector<LabelRow> rows;
  std::set<std::uint32_t> images;
  for (const Judgement& j : ann.judgements) {
    if (ann.attributes[j.attribute] == ann.none_option) {
      ++result.none_rows;
      continue;
    }
    LabelRow row;
    row.image = names[j.image];
    row.attribute = attribute_of[j.attribute];
    row.label = j.present ? "yes" : "no";
    rows.push_back(std::move(row));
    images.insert(j.image);
  }
  VLBIAS_CHECK(!rows.empty(), InputError, "'{}' has no annotation of an attribute (only '{}').",
               t.source, ann.none_option);
  LabelsProvenance p;
  p.labeller = "human";
  p.model = a.annotations;
  p.weights_sha256 = sha256_file(a.annotations);
  p.options = {{"aggregate", to_string(ann.aggregation)},
               {"image_root", root},
               {"layout", layout.name},
               {"none_option", "left out"}};
  write_labels_table(a.out, schema, p, rows);
  result.rows = rows.size();
  result.images = images.size();
  result.attributes = schema.attributes.size();
  return result;
}

}  // namespace

void add_visage_labels_command(CLI::App* dataset) {
  auto args = std::make_shared<VisageLabelsArgs>();
  CLI::App* cmd = dataset->add_subcommand(
      "visage-labels",
      "ViSAGe's human annotations of generated images (Sheet1.csv or\n"
      "full_set_annotations.csv) as LABELS.csv rows of labeller human (yes/no per image and\n"
      "attribute), to compare with a VLM's answers in `metric agreement`");
  cmd->add_option("--annotations", args->annotations,
                  "The release's Sheet1.csv or full_set_annotations.csv")
      ->required();
  cmd->add_option("--out", args->out, "LABELS.csv to write")->required();
  cmd->add_option("--aggregate", args->aggregate,
                  "majority: one row per annotation task and attribute, yes when more than half\n"
                  "of its raters said present (a tie is no); annotation: one row per rater's\n"
                  "answer (as the visual-stereotypes audit's annotations.aggregate)")
      ->check(CLI::IsMember({"majority", "annotation"}))
      ->capture_default_str();
  cmd->add_option("--image-root", args->image_root,
                  "The folder the img_path cells are under: images are named by their path\n"
                  "relative to it, as `vlbias label --images FOLDER` names them (default: the\n"
                  "file name alone)");
  cmd->callback([args] {
    const VisageLabelsResult r = write_visage_labels(*args);
    if (quiet()) return;
    const Annotations& ann = r.annotations;
    eprint(
        "vlbias: visage-labels: {} rows ({} aggregation) of {} images and {} attributes from {} "
        "({} layout) -> {}\n",
        r.rows, to_string(ann.aggregation), r.images, r.attributes, args->annotations, r.layout,
        args->out);
    eprint(
        "  rows read {}, empty rows skipped {}, duplicate runs dropped {} ({} rows), '{}' "
        "judgements left out {}\n",
        ann.rows, ann.empty_rows, ann.duplicate_runs, ann.duplicate_rows, ann.none_option,
        r.none_rows);
  });
}

}  // namespace vlbias::cli_internal
