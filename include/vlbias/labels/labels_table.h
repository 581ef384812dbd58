#pragma once
// LABELS.csv (issue 41): the one table every labeller writes (CLIP zero-shot, the FairFace
// classifier, VLM answers), so that their labels can be compared with `metric agreement`.
// One row per (image, face, attribute); columns in this order:
//   image            the image's path as the input table names it
//   face             the face index as faces.csv names it; empty for a whole image
//   attribute        e.g. gender, race, age
//   label            a class of the attribute, or "unclear" (abstained: margin < --margin), and
//                    for VLM answers also "refused" / "unparseable"
//   margin           top-1 minus top-2 probability; empty without probabilities
//   p_<class>...     one column per class of every attribute of the run (attribute order, then
//                    class order); empty where the class is not the row's attribute's.
//                    Attributes with the same class list share their columns (the yes/no
//                    questions of visual attributes: p_yes, p_no)
//   labeller         clip | fairface | vlm                          } the same on every row
//   model            the model path as given                        } of one run
//   weights_sha256   SHA-256 of the weights file(s) as read         }
//   prompt_set       a shipped set's name, or "<path> sha256:<hex>" }
//   options          "key=value;key=value", keys sorted             }
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace vlbias {

// The labels that are not a class of the attribute.
inline constexpr const char* kLabelUnclear = "unclear";
inline constexpr const char* kLabelRefused = "refused";
inline constexpr const char* kLabelUnparseable = "unparseable";

struct LabelsProvenance {
  std::string labeller, model, weights_sha256, prompt_set;
  std::map<std::string, std::string> options;  // written sorted by key
};

// The attributes of a run and their classes, in column order.
struct LabelsSchema {
  std::vector<std::string> attributes;
  std::vector<std::vector<std::string>> classes;  // per attribute
};

struct LabelRow {
  std::string image;
  std::optional<std::size_t> face;  // none: the whole image
  std::size_t attribute = 0;        // index into LabelsSchema::attributes
  std::string label;
  // The attribute's class probabilities in class order, or empty (no probabilities: margin and
  // p_ cells stay empty).
  std::vector<double> probabilities;
};

// What a labelling run did, for its summary line.
struct LabelRunCounts {
  std::size_t items = 0;     // images, or faces of a FACES_DIR
  std::size_t labelled = 0;  // items with rows in LABELS.csv
  std::size_t failed = 0;    // unreadable items: warned about and left out
  std::size_t rows = 0;
  std::size_t resumed = 0;  // items taken from an interrupted run's checkpoint (--resume)
  bool faces = false;       // the input was a FACES_DIR
  double seconds = 0.0;
};

// A class name's column: "p_" + the name as written in the class list.
std::string label_probability_column(const std::string& class_name);

// The options cell: "key=value" pairs joined by ';', keys in byte order.
std::string labels_options_text(const std::map<std::string, std::string>& options);

// The label of one attribute from its class probabilities (Radford et al. 2021's zero-shot
// prediction is the argmax; the first class wins a tie): the top class, or "unclear" when the top
// probability exceeds the second by less than `margin` (margin 0 never abstains). `gap` receives
// top-1 minus top-2. InternalError for fewer than two probabilities.
std::string label_from_probabilities(const std::vector<double>& probabilities,
                                     const std::vector<std::string>& classes, double margin,
                                     double& gap);

// The table's text (header, then the rows in the order given). UsageError for a class name used
// by two attributes whose class lists differ; InternalError for a row whose attribute or
// probability count does not fit the schema.
std::string labels_table_text(const LabelsSchema& schema, const LabelsProvenance& provenance,
                              const std::vector<LabelRow>& rows);

// Writes it atomically (AtomicWriter) to `path`.
void write_labels_table(const std::filesystem::path& path, const LabelsSchema& schema,
                        const LabelsProvenance& provenance, const std::vector<LabelRow>& rows);

}  // namespace vlbias
