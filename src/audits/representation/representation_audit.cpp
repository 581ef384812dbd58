// The representation audit (include/vlbias/audits/representation_audit.h): the labels joined
// to the manifest, then each analysis, written as a run (run_output.h).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "exemplars.h"
#include "representation_audit_internal.h"
#include "run_output.h"
#include "vlbias/audits/power_pilot.h"
#include "vlbias/core/log.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/representation_results.h"
#include "vlbias/stats/rater_agreement.h"

namespace vlbias {

namespace audits_internal {

namespace {

Json representation_spec_json(const AuditCommonSpec& spec, const RepresentationAuditSpec& r) {
  Json classes = Json::object();
  for (const auto& [a, c] : r.classes) classes[a] = c;
  Json j{{"kind", "representation"},
         {"seed", spec.seed},
         {"min_group_size", spec.min_group_size},
         {"labels",
          {{"table", r.labels.string()},
           {"image", r.image_column},
           {"face", r.face_column},
           {"attribute", r.attribute_column},
           {"label", r.label_column},
           {"labeller", r.labeller_column},
           {"use", r.labeller},
           {"columns", r.label_columns},
           {"attributes", r.attributes},
           {"classes", classes}}},
         {"manifest",
          {{"table", r.manifest.string()},
           {"image", r.manifest_image_column},
           {"prompt", r.prompt_column},
           {"group", r.group_column},
           {"key", r.key_column}}}};
  if (!r.targets.empty()) {
    Json columns = Json::object();
    for (const auto& [c, col] : r.target_columns) columns[c] = col;
    j["targets"] = {{"table", r.targets.string()},
                    {"key", r.target_key_column},
                    {"attribute", r.target_attribute},
                    {"columns", columns},
                    {"scale", r.target_scale}};
  }
  Json analyses = Json::object();
  if (r.distribution.toggle.enabled)
    analyses[kDistributionSection] = {{"interval", r.distribution.interval},
                                      {"ci", r.distribution.ci}};
  if (r.measures.toggle.enabled)
    analyses["measures"] = {{"bootstrap", r.measures.bootstrap}, {"ci", r.measures.ci}};
  if (r.tests.toggle.enabled)
    analyses["tests"] = {{"test", r.tests.test},
                         {"exact_below", r.tests.exact_below},
                         {"correction", r.tests.correction}};
  if (r.amplification.toggle.enabled)
    analyses["amplification"] = {{"bootstrap", r.amplification.bootstrap},
                                 {"ci", r.amplification.ci}};
  if (r.agreement.enabled) analyses["agreement"] = true;
  if (r.power.toggle.enabled)
    analyses["power"] = {{"power", r.power.power}, {"alpha", r.power.alpha}};
  j["analyses"] = analyses;
  if (spec.report_images.per_cell > 0) j["report"] = report_images_json(spec.report_images);
  if (!r.scores.empty()) {
    j["scores"] = scores_spec_json(r.scores);
    // The scores' tests are simulated (power_pilot.h) with this many replicates.
    if (r.power.toggle.enabled) j["analyses"]["power"]["replicates"] = r.power.replicates;
  }
  return j;
}

Json coefficient_json(const stats::AgreementCoefficient& c) {
  Json j{{"estimate", json_number(c.estimate)}, {"units", c.units}, {"ci", to_json(c.ci)}};
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

}  // namespace

AnalysisOutput representation_agreement(const AuditCommonSpec& spec,
                                        const RepresentationAuditSpec& r, const Table& t) {
  const Column& attribute = t.column(r.attribute_column);
  const bool faces = !r.face_column.empty() && t.find(r.face_column);
  std::vector<std::string> attributes = r.attributes;
  for (std::size_t row = 0; row < t.rows && r.attributes.empty(); ++row) {
    const std::string a = attribute.text(row);
    if (std::find(attributes.begin(), attributes.end(), a) == attributes.end())
      attributes.push_back(a);
  }
  AnalysisOutput out;
  Json list = Json::array();
  for (const std::string& a : attributes) {
    // The rows of this attribute, as a long table of ratings: unit = (image, face).
    std::vector<std::string> image, face, labeller, label;
    for (std::size_t row = 0; row < t.rows; ++row) {
      if (attribute.text(row) != a) continue;
      image.push_back(t.column(r.image_column).text(row));
      face.push_back(faces ? t.column(r.face_column).text(row) : "");
      labeller.push_back(t.column(r.labeller_column).text(row));
      label.push_back(t.column(r.label_column).text(row));
    }
    Table ratings;
    ratings.source = t.source;
    ratings.rows = image.size();
    for (std::size_t i = 0; i < ratings.rows; ++i) ratings.line_of_row.push_back(i + 2);
    add_string_column(ratings, "image", image);
    add_string_column(ratings, "face", face);
    add_string_column(ratings, "labeller", labeller);
    add_string_column(ratings, "label", label);
    stats::RaterAgreementOptions o;
    o.bootstrap = {1000, 0.95, derive_seed(spec.seed, 4)};
    const stats::RatingData names =
        stats::ratings_from_long_table(ratings, {"image", "face"}, "labeller", "label", false);
    const stats::RaterAgreement ag = stats::rater_agreement(names, o);
    Json pairs = Json::array();
    for (const stats::PairKappa& k : ag.cohen) {
      pairs.push_back({{"a", names.raters[k.rater_a]},
                       {"b", names.raters[k.rater_b]},
                       {"cohen_kappa", coefficient_json(k.kappa)}});
    }
    list.push_back({{"attribute", a},
                    {"units", ag.units},
                    {"labellers", names.raters},
                    {"krippendorff_alpha", coefficient_json(ag.alpha)},
                    {"pairs", std::move(pairs)}});
  }
  out.json = {{"attributes", std::move(list)},
              {"scale", "nominal (labels as categories, unclear included)"}};
  return out;
}

RepresentationScores read_representation_scores(const RepresentationAuditSpec& r,
                                                const RepresentationData& d) {
  RepresentationScores out;
  std::vector<std::string> images;
  ScoreGrouping prompts{"prompt", {}, {}}, groups{"group", {}, {}};
  std::map<std::string, std::uint32_t> group_index;
  for (std::size_t p = 0; p < d.prompts.size(); ++p) {
    const RepresentationPrompt& rp = d.prompts[p];
    prompts.names.push_back(rp.prompt);
    const auto [it, added] =
        group_index.emplace(rp.group, static_cast<std::uint32_t>(groups.names.size()));
    if (added) groups.names.push_back(rp.group);
    for (const std::string& image : rp.images) {
      images.push_back(image);
      prompts.of_unit.push_back(static_cast<std::uint32_t>(p));
      groups.of_unit.push_back(it->second);
    }
  }
  out.data = read_scores(r.scores, images, "manifest." + r.manifest_image_column);
  out.groupings.push_back(std::move(prompts));
  if (!r.group_column.empty()) out.groupings.push_back(std::move(groups));
  check_score_groups(out.data, out.groupings);
  return out;
}

// report.images: one grid per prompt of the manifest's images (its image column, relative to the
// manifest's folder or report.image_root), a seeded sample drawn with derive_seed(seed, 5).
Json representation_exemplars(const AuditCommonSpec& spec, const RepresentationAuditSpec& r,
                              std::vector<std::string>& notes) {
  const Table m = read_table(r.manifest.string());
  std::optional<ExemplarImages> images = table_images(m, r.manifest_image_column, r.manifest,
                                                      spec.report_images, "manifest.image", notes);
  if (!images) return Json();
  const Column& prompt = m.column(r.prompt_column);
  std::vector<ExemplarCell> cells;
  std::map<std::string, std::size_t> cell_of;
  for (std::size_t row = 0; row < m.rows; ++row) {
    const auto [it, added] = cell_of.emplace(prompt.text(row), cells.size());
    if (added) cells.push_back({{{"prompt", prompt.text(row)}}, {}});
    cells[it->second].rows.push_back(static_cast<std::uint32_t>(row));
  }
  return exemplars_json(cells, *images, spec.report_images, derive_seed(spec.seed, 5), nullptr,
                        notes);
}

}  // namespace audits_internal

void run_representation_audit(const AuditCommonSpec& spec, const RepresentationAuditSpec& r,
                              const std::filesystem::path& run_dir) {
  using namespace audits_internal;  // NOLINT(build/namespaces): representation_audit_internal.h
  RunOutput output(run_dir);        // locks the folder before any input is read
  Provenance provenance;
  provenance.command = "audit";
  if (!spec.spec_path.empty()) provenance.inputs.push_back(spec.spec_path.string());
  for (const auto* p : {&r.labels, &r.manifest, &r.targets}) {
    if (!p->empty()) provenance.inputs.push_back(p->string());
  }
  for (const ScoreTableSpec& s : r.scores) provenance.inputs.push_back(s.table.string());
  start_hashing_inputs(provenance);
  Progress progress("representation", 6);
  // The labels are read once: the data, then (with several labellers) their agreement, before the
  // table is let go.
  RepresentationData data;
  std::optional<AnalysisOutput> agreement;
  {
    const Table labels = read_labels_table(r);
    data = read_representation_data(r, labels);
    if (r.agreement.enabled && data.labellers.size() >= 2)
      agreement = representation_agreement(spec, r, labels);
  }
  std::optional<RepresentationTargets> targets;
  if (!r.targets.empty()) targets = read_representation_targets(r, data);
  const RepresentationTargets* t = targets ? &*targets : nullptr;
  std::optional<RepresentationScores> scores;
  if (!r.scores.empty()) scores = read_representation_scores(r, data);
  progress.advance(1);
  std::vector<std::pair<std::string, AnalysisOutput>> sections;
  if (r.distribution.toggle.enabled)
    sections.emplace_back(kDistributionSection, representation_distribution(spec, r, data));
  progress.advance(1);
  if (r.measures.toggle.enabled)
    sections.emplace_back("measures", representation_measures(spec, r, data, t));
  progress.advance(1);
  if (r.tests.toggle.enabled) sections.emplace_back("tests", representation_tests(r, data, t));
  if (t != nullptr && r.amplification.toggle.enabled)
    sections.emplace_back("amplification", representation_amplification(spec, r, data, *t));
  progress.advance(1);
  if (agreement) sections.emplace_back("agreement", std::move(*agreement));
  if (r.power.toggle.enabled) sections.emplace_back("power", representation_power(r, data, t));
  if (scores) {
    sections.emplace_back("scores",
                          scores_analysis(scores->data, scores->groupings, kScoresCi, "prompt"));
  }
  progress.advance(2);
  progress.finish();

  std::vector<std::string> notes = data.notes;
  Json exemplars;
  if (spec.report_images.per_cell > 0) exemplars = representation_exemplars(spec, r, notes);
  if (t != nullptr && !t->missing.empty()) {
    notes.push_back(fmt::format(
        "targets: {} prompt key{} had no row in '{}' (their target tests and amplification are "
        "left out): {}",
        t->missing.size(), t->missing.size() == 1 ? "" : "s", r.targets.string(),
        listed_names(t->missing, ", ")));
  }
  Json tables;
  Json analyses = output.add_sections(sections, tables, notes);
  const Json spec_json = representation_spec_json(spec, r);
  Json results{{"kind", to_string(spec.kind)},
               {"spec", spec_json},
               {"labellers", data.labellers},
               {"labeller", data.labeller},
               {"label_rows", data.label_rows},
               {"prompts", data.prompts.size()},
               {"analyses", analyses},
               {"tables", tables},
               {"notes", notes}};
  // The scores' tests as their own pilot: the minimum detectable effect of each null test
  // (power_pilot.h), with the spec's power options.
  if (scores && r.power.toggle.enabled) {
    PowerQuestions q;
    q.power = r.power.power;
    q.replicates = r.power.replicates;
    q.seed = derive_seed(spec.seed, kRepresentationSeedScoresPower);
    add_power_to_null_tests(results, pilot_sections_of(sections, to_string(spec.kind)),
                            r.power.alpha, q);
  }
  // Last: the thumbnails are the bulk of the file.
  if (!exemplars.is_null()) results["exemplars"] = std::move(exemplars);
  output.write(std::move(results), provenance, spec_json, spec);
}

}  // namespace vlbias
