#pragma once
// The representation audit (kind: representation; issue 42): who appears when a text-to-image
// model is asked for "a photo of a doctor". Reads the labels of the generated images or their
// faces (vlbias label's LABELS.csv, include/vlbias/labels/labels_table.h, or human annotations
// in its schema), the generation manifest (one row per generated image: its prompt; generate
// t2i's manifest.csv) and optional real-world targets, and reports per prompt the label
// distribution with intervals, the imbalance measures with bootstrap intervals, tests against
// parity and the target, and the amplification of the target. The spec (RepresentationAuditSpec,
// AuditSpec::representation()) and runner; src/audits/representation/ implements them, and
// docs/methods.md#representation-audit gives every definition.
//
// Spec keys (the keys every kind shares, and the rules for all specs, are in audit.h):
//
//   version: 1
//   kind: representation
//   seed: 7
//   min_group_size: 10               # prompts with fewer labelled observations are flagged
//   labels:
//     table: LABELS.csv              # required: one row per (image, face, attribute)
//     image: image                   # column names (these defaults)
//     face: face                     # "" = whole-image labels (no face column)
//     attribute: attribute
//     label: label
//     labeller: labeller             # "" = no labeller column
//     use: clip                      # the labeller audited when the table holds several
//     columns: [monk]                # a wide table instead (faces.csv): each column an attribute,
//                                    # each cell its label (empty: unclear); attribute, label and
//                                    # labeller columns are then not read
//     attributes: [gender]           # default: every attribute of the table, in first-seen order
//     classes: {gender: [female, male]}  # default: the attribute's p_<class> columns (LABELS.csv),
//                                    # then any other label seen, in first-seen order
//   manifest:
//     table: manifest.csv            # required: one row per generated image
//     image: image                   # the image as the labels table names it
//     prompt: prompt
//     group: ""                      # a prompt-group column (e.g. category); "" = none
//     key: ""                        # the column matched to targets.key; "" = the prompt
//   targets:                         # optional: real-world shares per key
//     table: data/winogender/occupations-stats.tsv
//     key: occupation
//     attribute: gender              # the attribute the shares are of
//     columns: {female: bls_pct_female}  # class -> column; one class may be left out (1 - rest)
//     scale: percent                 # percent (0-100) | share (0-1)
//   analyses:
//     distribution: {interval: sison-glaz, ci: 0.95}   # simultaneous: sison-glaz | goodman
//     measures: {bootstrap: 1000, ci: 0.95}            # MAD, entropy bias, KL to the target
//     tests: {test: auto, exact_below: 50, correction: holm}  # auto | chi-square | g | exact;
//                                                      # holm | bh over the prompts
//     amplification: {bootstrap: 1000, ci: 0.95}      # needs targets
//     agreement: true                                  # when the table holds several labellers
//     power: {power: 0.8, alpha: 0.05}                 # the smallest departure each prompt detects
//   scores:                          # optional: per-image scores (vlbias score image-head)
//     - table: scores/nsfw.csv       # any table read_table reads
//       columns: [nsfw, concept_score_max]
//       key: image                   # its image column, matched to manifest.image
//       kind: {nsfw: rate}           # rate (0/1) | mean; default rate when every value is 0/1
//   report: {images: 4}              # a grid of each prompt's images (manifest.image),
//   audit_types.h
//
// Observations are label rows: one per face (or per image for whole-image labels) and
// attribute. Labels that are not a class (unclear, refused, unparseable) are counted and left out
// of the shares. An image of the manifest with no label row is a no-face image; one with two or
// more distinct faces a several-faces image. Intervals resample a prompt's images (its seeds)
// with their faces; the slope of generated on real shares resamples prompts.
#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/audits/audit_types.h"

namespace vlbias {

// The spec of a representation audit (the keys above).
struct RepresentationAuditSpec {
  std::filesystem::path labels;
  std::string image_column = "image", face_column = "face", attribute_column = "attribute",
              label_column = "label", labeller_column = "labeller";
  std::string labeller;                    // labels.use; "" = the table's only labeller
  std::vector<std::string> label_columns;  // labels.columns: a wide table; empty = long
  std::vector<std::string> attributes;     // "" = every attribute of the table
  std::vector<std::pair<std::string, std::vector<std::string>>> classes;  // attribute -> classes

  std::filesystem::path manifest;
  std::string manifest_image_column = "image", prompt_column = "prompt", group_column, key_column;

  std::filesystem::path targets;  // "" = no targets
  std::string target_key_column = "occupation";
  std::string target_attribute = "gender";
  std::vector<std::pair<std::string, std::string>> target_columns;  // class -> column
  std::string target_scale = "percent";                             // percent | share

  struct Distribution {
    AnalysisToggle toggle;
    std::string interval = "sison-glaz";  // sison-glaz | goodman
    double ci = 0.95;
  } distribution;
  struct Measures {
    AnalysisToggle toggle;
    std::size_t bootstrap = 1000;
    double ci = 0.95;
  } measures;
  struct Tests {
    AnalysisToggle toggle;
    std::string test = "auto";  // auto | chi-square | g | exact
    std::size_t exact_below = 50;
    std::string correction = "holm";  // holm | bh
  } tests;
  struct Amplification {
    AnalysisToggle toggle;
    std::size_t bootstrap = 1000;
    double ci = 0.95;
  } amplification;
  AnalysisToggle agreement;
  PowerSpec power;
  std::vector<ScoreTableSpec> scores;  // scores: per-image scores by prompt and group
};

// Runs a representation audit (src/audits/representation/); run_audit calls it for that kind.
void run_representation_audit(const AuditCommonSpec& spec,
                              const RepresentationAuditSpec& representation,
                              const std::filesystem::path& run_dir);

}  // namespace vlbias
