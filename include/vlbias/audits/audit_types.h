#pragma once
// Types every audit kind shares: the kinds, the spec's common keys, an analysis' on/off switch,
// an embedding file, and an analysis' output. They sit below audit.h and the per-kind headers
// (dual_encoder_audit.h, geo_audit.h, lvlm_audit.h, visual_audit.h, representation_audit.h):
// audit.h's AuditSpec holds one kind's spec, and each kind's code reads the common keys here and
// its own spec, never audit.h (scripts/check_stages.py holds src/audits/<kind>/ to that).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/io/table/table.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/pilot_sections.h"

namespace vlbias {

enum class AuditKind {
  SocialPerception,
  TraitPairs,
  GeoDiversity,
  LvlmCounterfactual,
  VisualStereotypes,
  Representation
};
// "social-perception", "trait-pairs", "geo-diversity", "lvlm-counterfactual",
// "visual-stereotypes", "representation"
const char* to_string(AuditKind kind);

// An analysis is run when `enabled`; `explicit_` records that the spec named it
// (so a failure to apply it is an error rather than a skipped note).
struct AnalysisToggle {
  bool enabled = true;
  bool explicit_ = false;
};

// analyses.power of a spec (every kind with a test power_pilot.h supports): the minimum
// detectable effect of every null test, simulated with `replicates` replicates.
struct PowerSpec {
  AnalysisToggle toggle{false, false};
  double power = 0.8;
  double alpha = 0.05;
  std::size_t replicates = 200;
};

// One entry of `scores:` in a representation or geo-diversity spec (issue 44;
// src/audits/scores_by_group.h): a table of per-image scores (vlbias score image-head's
// SCORES.csv, or any table read_table reads) whose `columns` are reported per prompt and group.
// `key` is the table's image column, joined to the kind's image column; `kinds` gives a column
// rate (0/1 values) or mean, per column (default: rate when every matched value is 0 or 1).
struct ScoreTableSpec {
  std::filesystem::path table;
  std::vector<std::string> columns;
  std::string key = "image";
  std::vector<std::pair<std::string, std::string>> kinds;  // column -> "rate" | "mean"
};

// report: {images: false|N, image_budget: BYTES, image_root: DIR} of a spec (geo-diversity,
// visual-stereotypes, lvlm-counterfactual): up to N exemplar thumbnails per cell of the report's
// image grids (a seeded sample, and each kind's lowest- or highest-scored images;
// src/audits/exemplars.h), embedded in results.json and report.html within `budget` bytes of JPEG
// data URIs for the whole report. per_cell 0 = no grids (the default; `images: false`).
struct ReportImagesSpec {
  std::size_t per_cell = 0;
  std::size_t budget = 5'000'000;
  // image_root: the folder relative image paths are read from (resolved against the spec's
  // folder); "" = the folder of the table that names them.
  std::filesystem::path root;
};

// The keys every kind accepts at a spec's root (audit.h lists them), and the kind. Each kind's
// runner takes these and its own spec (e.g. run_geo_audit(common, geo, run_dir)).
struct AuditCommonSpec {
  std::filesystem::path spec_path;  // the YAML file (for provenance); "" when parsed from text
  AuditKind kind = AuditKind::SocialPerception;
  std::uint64_t seed = 0;
  std::size_t min_group_size = 2;
  // Shown at the top of report.html (and written to results.json): a title, and what the
  // data are (e.g. "synthetic, with a planted effect"). "" = none.
  std::string title;
  std::string about;
  // report: {images, image_budget, image_root} (ReportImagesSpec above): the exemplar image grids
  // of the kinds that have them (geo-diversity, visual-stereotypes, lvlm-counterfactual).
  ReportImagesSpec report_images;
};

struct EmbeddingSource {
  std::filesystem::path path;  // resolved against the spec's folder
  std::string tensor;          // safetensors tensor name ("" = the only tensor)
};

// One analysis' result: a JSON section, named CSV tables ("association_groups") and the
// per-unit tables behind summary.json's estimates (RUN_DIR/units/<name>.csv, names from
// units_table_name in vlbias/report/summary.h).
struct AnalysisOutput {
  Json json = Json::object();
  std::vector<std::pair<std::string, Table>> tables;
  std::vector<std::string> notes;
  std::vector<std::pair<std::string, Table>> units;
  // The typed sections power reads that this analysis built (power_pilot.h), handed to the
  // audit's power analysis without reading `json` back.
  PilotSections pilot;
};

}  // namespace vlbias
