// analyses.explain of a trait-pairs audit (issue 40, item 5; paper 004, Fig. 2 and A.3): the
// explain job (include/vlbias/explain/explain.h) over the audit's images, grouped by its group
// factors, into RUN_DIR/explain/; results.json gets what the report draws: the overlays of each
// group's most confident images as thumbnails, and with faces the CAM mass in the faces per
// group with its tests (cam_mass.json).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dual_encoder_audit_internal.h"
#include "exemplars.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/explain/explain.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"
#include "vlbias/io/table/table.h"

namespace vlbias::audits_internal {

namespace fs = std::filesystem;

namespace {

// The folder explain/ has inside RUN_DIR, for the paths results.json gives.
constexpr const char* kExplainFolder = "explain";

ExplainOptions explain_options(const AuditCommonSpec& spec, const DualEncoderAuditSpec& d,
                               const fs::path& folder, std::uint64_t seed) {
  const DualEncoderAuditSpec::Explain& e = d.explain;
  ExplainOptions o;
  o.model = e.model;
  o.images = d.image_table;
  o.column = d.image_path_column;
  o.image_root = spec.report_images.root;
  o.manifest = d.prompt_manifest;
  o.pair = e.pair;
  o.method = parse_cam_method(e.method);
  o.out = folder;
  o.top = e.top;
  o.by = d.group_factors;
  o.logit_scale = e.logit_scale;
  o.max_image_pixels = kPillowMaxImagePixels;
  o.faces = e.faces;
  o.bootstrap = e.bootstrap;
  o.seed = seed;
  return o;
}

// The overlays of each group as an exemplars block: one cell per group of rows.csv, its images
// the overlays the job drew (the most probable first), thumbnails within report.image_budget.
Json overlay_exemplars(const AuditCommonSpec& spec, const DualEncoderAuditSpec& dual_encoder,
                       const Table& rows, const fs::path& folder, const std::string& pair_words,
                       std::vector<std::string>& notes) {
  const std::vector<std::string>& by = dual_encoder.group_factors;
  const Grouping g = group_by(rows, by);
  const Column& overlay = rows.column("overlay");
  const std::vector<double>& probability = rows.numeric("probability", true);
  ExemplarImages images;
  images.score = probability;
  std::vector<ExemplarCell> cells(g.size());
  for (std::size_t k = 0; k < g.size(); ++k) {
    for (std::size_t c = 0; c < g.columns.size(); ++c) {
      cells[k].labels.emplace_back(g.columns[c], g.keys[k][c]);
    }
  }
  for (std::size_t r = 0; r < rows.rows; ++r) {
    const std::string name = overlay.missing(r) ? "" : overlay.text(r);
    images.path.push_back(name.empty() ? "" : std::string(kExplainFolder) + "/" + name);
    images.file.push_back(name.empty() ? fs::path() : folder / name);
    if (!name.empty() && g.group_of_row[r] != Grouping::kNoGroup) {
      cells[g.group_of_row[r]].rows.push_back(static_cast<std::uint32_t>(r));
    }
  }
  ReportImagesSpec shown = spec.report_images;
  shown.per_cell = dual_encoder.explain.top;
  const ExemplarScore score{"probability", "probability",
                            "the model's probability of " + pair_words, true, true};
  return exemplars_json(cells, images, shown, 0, &score, notes);
}

// The explained images per group: how many, and their mean probability of the first trait.
Json explain_groups(const Table& rows, const std::vector<std::string>& by) {
  const Grouping g = group_by(rows, by);
  const std::vector<double>& probability = rows.numeric("probability", true);
  std::vector<std::size_t> n(g.size(), 0);
  std::vector<double> sum(g.size(), 0.0);
  for (std::size_t r = 0; r < rows.rows; ++r) {
    if (g.group_of_row[r] == Grouping::kNoGroup || !std::isfinite(probability[r])) continue;
    ++n[g.group_of_row[r]];
    sum[g.group_of_row[r]] += probability[r];
  }
  Json out = Json::array();
  for (std::size_t k = 0; k < g.size(); ++k) {
    Json key = Json::object();
    for (std::size_t c = 0; c < g.columns.size(); ++c) key[g.columns[c]] = g.keys[k][c];
    out.push_back(Json{{"group", key},
                       {"explained", n[k]},
                       {"mean_probability", n[k] > 0 ? sum[k] / static_cast<double>(n[k])
                                                     : std::numeric_limits<double>::quiet_NaN()}});
  }
  return out;
}

}  // namespace

void check_explain_spec(const AuditCommonSpec& spec, const DualEncoderAuditSpec& d) {
  if (!d.explain.toggle.enabled) return;
  VLBIAS_CHECK(spec.kind == AuditKind::TraitPairs, UsageError,
               "analysis 'explain' is not part of a {} audit (it explains a trait pair of a "
               "trait-pairs audit); remove it from the spec",
               to_string(spec.kind));
  VLBIAS_CHECK(!d.image_path_column.empty(), UsageError,
               "analyses.explain needs images.image, the column of images.table that names each "
               "image's file");
}

void check_explain_inputs(const DualEncoderAuditSpec& d, const Study& study) {
  const DualEncoderAuditSpec::Explain& e = d.explain;
  if (!e.toggle.enabled) return;
  require_columns(study.images, {d.image_path_column}, "images.image");
  // The pair: a dimension of the manifest with both valences, as the confidence reads it.
  std::vector<std::string> pairs;
  bool plus = false, minus = false;
  for (const PromptManifest::Dimension& dim : study.manifest.dimensions) {
    if (dim.valence == "+" || dim.valence == "-") {
      if (std::find(pairs.begin(), pairs.end(), dim.dimension) == pairs.end()) {
        pairs.push_back(dim.dimension);
      }
      if (dim.dimension == e.pair) (dim.valence == "+" ? plus : minus) = true;
    }
  }
  VLBIAS_CHECK(plus && minus, UsageError,
               "analyses.explain.pair {}: prompts.manifest has no trait pair of that name (a "
               "dimension with '+' and '-' prompts); its pairs: {}.",
               e.pair,
               pairs.empty() ? std::string("none") : fmt::format("{}", fmt::join(pairs, ", ")));
  VLBIAS_CHECK(fs::is_directory(e.model), UsageError,
               "analyses.explain.model {}: is not a folder; expected a CLIP ViT folder (Hugging "
               "Face or open_clip)",
               e.model.string());
  VLBIAS_CHECK(e.faces.empty() || fs::is_regular_file(e.faces / "manifest.json"), UsageError,
               "analyses.explain.faces {}: holds no finished `vlbias faces` run (no manifest.json)",
               e.faces.string());
}

AnalysisOutput explain_analysis(const AuditCommonSpec& spec,
                                const DualEncoderAuditSpec& dual_encoder, const fs::path& folder,
                                std::uint64_t seed) {
  const DualEncoderAuditSpec::Explain& e = dual_encoder.explain;
  const ExplainResult r = run_explain(explain_options(spec, dual_encoder, folder, seed));
  // The job's lock file, released when it returned: the run folder has its own.
  std::error_code ignored;
  fs::remove(folder / ".lock", ignored);
  const Table rows = read_table((folder / kExplainRows).string());
  const Json manifest =
      parse_json(read_file_text(folder / kExplainManifest, "the explain manifest"),
                 (folder / kExplainManifest).string());
  const std::size_t slash = e.pair.find('/');
  // "\"smart\" over \"dumb\"" (`vlbias prompts trait-pairs` names a pair first/second).
  const std::string pair_words =
      slash == std::string::npos
          ? "the first pole of \"" + e.pair + "\""
          : "\"" + e.pair.substr(0, slash) + "\" over \"" + e.pair.substr(slash + 1) + "\"";

  AnalysisOutput out;
  out.json = Json{
      {"definition", fmt::format("Class activation maps ({}) of the model's probability of {} for "
                                 "each image (docs/methods.md#clip-cam); the overlays show each "
                                 "group's most probable images.",
                                 e.method, pair_words)},
      {"pair", e.pair},
      {"method", e.method},
      {"model", e.model.string()},
      {"folder", kExplainFolder},
      {"logit_scale", manifest.value("logit_scale", Json())},
      {"images", r.images},
      {"explained", r.explained},
      {"failed", r.failed},
      {"overlays", r.overlays}};
  if (r.failed > 0) {
    out.notes.push_back(fmt::format(
        "explain: {} of {} images could not be read; explain/{} lists them with the reason",
        r.failed, r.images, kExplainRows));
  }
  if (r.explained == 0) return out;  // rows.csv has no probability to group or show
  out.json["groups"] = explain_groups(rows, dual_encoder.group_factors);
  if (!e.faces.empty()) {
    out.json["cam_mass"] = parse_json(read_file_text(folder / kExplainCamMass, "the CAM mass"),
                                      (folder / kExplainCamMass).string());
  }
  out.json["exemplars"] =
      overlay_exemplars(spec, dual_encoder, rows, folder, pair_words, out.notes);
  return out;
}

}  // namespace vlbias::audits_internal
