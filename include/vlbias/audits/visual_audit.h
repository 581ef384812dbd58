#pragma once
// The visual-stereotypes audit (kind: visual-stereotypes; paper 000, ViSAGe; definitions in
// visual_stereotypes.h): its spec (VisualAuditSpec, AuditSpec::visual()) and its runner
// (src/audits/visual/visual_audit.cpp).
//
// Spec keys (the keys every kind shares, and the rules for all specs, are in audit.h). Each of
// annotations, captions and pull is optional (at least one is needed) and enables its analysis:
//
//   version: 1
//   kind: visual-stereotypes
//   seed: 7
//   seegull: stereotypes_global_v2.csv    # required
//   visual_attributes: all_visual_attr.csv  # required (Likert layout, or a plain list)
//   regions: regions.csv                  # identity,region (default: the built-in table)
//   stereotypes:
//     votes: [NA_stereo]                  # SeeGULL vote columns (default NA_stereo)
//     min_votes: 2
//     rule: all                           # all | any of the vote columns
//     min_per_identity: 2                 # fewer visual stereotypes: left out of theta
//   annotations:                          # ViSAGe's full_set_annotations.csv layout
//     table: full_set_annotations.csv
//     image: img_path                     # column names (these defaults)
//     attribute: attribute
//     present: present
//     task: worker_id                     # "" = no task column
//     identity: ""                        # "" = from the image file name
//     coords: coords
//     none_option: none of the above
//     aggregate: annotation               # annotation | majority
//     none_as_random: false               # true: the authors' L(random) (paper Tables 1-2)
//   captions:
//     table: captions.csv                 # one row per caption
//     image: image
//     caption: caption
//     identity: ""
//   pull:
//     table: pull.csv                     # one row per image: identity, set
//     embeddings: pull.npy                # row i = image i (.npy or .safetensors)
//     tensor: ""
//     identity: identity
//     set: set                            # default | stereotypical | non-stereotypical
//     image: path                         # each image's file, for report.images
//   analyses:
//     likelihood: {bootstrap: 1000, ci: 0.95}
//     salience: {smoothing: 1, top: 5}
//     pull: {permutations: 10000, alternative: greater}   # greater | less | two-sided
//   report: {images: 4, image_budget: 5000000}  # exemplar grids per identity x set of the pull
//                                       # table's images (a seeded sample; of the default set
//                                       # also the highest per-image pull), audit_types.h
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "vlbias/audits/audit_types.h"

namespace vlbias {

// The spec of a visual-stereotypes audit (the keys above).
struct VisualAuditSpec {
  std::filesystem::path seegull, visual_attributes, regions;  // regions "" = built-in
  std::vector<std::string> vote_columns = {"NA_stereo"};
  double min_votes = 2;
  std::string vote_rule = "all";  // all | any
  std::size_t min_stereotypes = 2;
  std::filesystem::path annotations;  // "" = no likelihood analysis
  std::string image_column = "img_path", attribute_column = "attribute", present_column = "present",
              task_column = "worker_id", identity_column, coords_column = "coords",
              none_option = "none of the above";
  std::string aggregation = "annotation";  // annotation | majority
  bool none_as_random = false;
  std::filesystem::path captions;  // "" = no salience
  std::string caption_image_column = "image", caption_column = "caption", caption_identity_column;
  std::filesystem::path pull_table;  // "" = no pull
  EmbeddingSource pull_embeddings;
  std::string pull_identity_column = "identity", pull_set_column = "set";
  // The pull table's image path column (relative paths: against the table's folder), read only
  // for report.images; "" or a column the table lacks: no grids, and a note says why.
  std::string pull_image_column = "path";
  struct Likelihood {
    AnalysisToggle toggle;
    std::size_t bootstrap = 1000;
    double ci = 0.95;
  } likelihood;
  struct Salience {
    AnalysisToggle toggle;
    double smoothing = 1.0;
    std::size_t top = 5;
  } salience;
  struct Pull {
    AnalysisToggle toggle;
    std::size_t permutations = 10000;
    std::string alternative = "greater";
  } pull;
};

// Runs a visual-stereotypes audit (src/audits/visual/visual_audit.cpp); run_audit calls it for that
// kind. Reads visual and the common fields.
void run_visual_audit(const AuditCommonSpec& spec, const VisualAuditSpec& visual,
                      const std::filesystem::path& run_dir);

}  // namespace vlbias
