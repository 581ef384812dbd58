// `vlbias audit --check SPEC`: every input the run would read, opened with the run's loaders and
// held to the run's checks (readable files, the columns the spec names, table and embedding row
// counts, dimensions), in the run's order, so the first fault gives the run's own message:
// first the up-front check of every provenance input (start_hashing_inputs' check_input_file,
// in the order each runner lists them), then the loads. Nothing is computed beyond loading,
// and nothing is written: no run folder, no lock.
//
// The checks the runners make themselves (not in a shared loader) are repeated here with the
// same words; tests/cli/audit_check_test.cpp runs each broken input through both `--check`
// and the real run and compares the messages, so the two cannot drift apart unnoticed.
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "dual_encoder_audit_internal.h"
#include "geo_audit_internal.h"
#include "visual_audit_internal.h"
#include "vlbias/audits/audit.h"
#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"
#include "vlbias/io/embeddings.h"
#include "vlbias/io/record_stream.h"
#include "vlbias/io/row_filter.h"
#include "vlbias/io/table.h"
#include "vlbias/metrics/visual_stereotypes.h"
#include "vlbias/score/text_measures.h"

namespace vlbias {

namespace {

// What start_hashing_inputs does before any work: every input is a readable file (or a pipe).
// Returns their number.
std::size_t check_inputs(const std::vector<std::filesystem::path>& inputs) {
  for (const auto& p : inputs) check_input_file(p.string());
  return inputs.size();
}

// Columns an analysis groups or splits by: Table::column's message, as the analysis gives it.
void require_table_columns(const Table& table, const std::vector<std::string>& columns) {
  for (const std::string& c : columns) table.column(c);
}

std::size_t check_dual_encoder(const AuditSpec& spec) {
  const DualEncoderAuditSpec& d = spec.dual_encoder;
  const bool traits = spec.kind == AuditKind::TraitPairs;
  audits_internal::refuse_other_kind_analyses(spec);
  const StudyFiles files = audits_internal::study_files(d);
  std::vector<std::filesystem::path> inputs;
  for (const std::string& p : audits_internal::provenance_inputs(spec, files)) {
    if (p != spec.spec_path.string()) inputs.push_back(p);
  }
  const std::size_t checked = check_inputs(inputs);
  // The run's loader: shapes, dimensions, the id join and the manifest, as the run checks them.
  const Study study = load_study(files);
  audits_internal::check_factor_columns(study, d);

  if (traits && d.confidence.toggle.enabled) {
    const std::string across =
        d.confidence.across.empty() ? d.group_factors[0] : d.confidence.across;
    std::string within = d.confidence.within;
    for (std::size_t g = 0; within.empty() && g < d.group_factors.size(); ++g) {
      if (d.group_factors[g] != across) within = d.group_factors[g];
    }
    VLBIAS_CHECK(within != across, UsageError,
                 "analyses.confidence: across and within are both '{}'", across);
    audits_internal::require_columns(study.images, {across}, "confidence.across");
    if (!within.empty())
      audits_internal::require_columns(study.images, {within}, "confidence.within");
  }
  if (d.scweat.toggle.enabled) {
    for (const auto& grouping : d.scweat.groupings) require_table_columns(study.images, grouping);
  }
  if (!traits) {
    if (d.markedness.toggle.enabled) {
      require_table_columns(study.images, d.markedness.attributes);
    }
    if (d.ranking.toggle.enabled) require_table_columns(study.images, d.ranking.attributes);
    if (d.trends.toggle.enabled) require_table_columns(study.images, d.trends.x);
    if (d.ellipses.toggle.enabled && !d.ellipses.points_by.empty()) {
      require_table_columns(study.images, {d.ellipses.points_by});
    }
  }
  return checked;
}

std::size_t check_geo(const AuditSpec& spec) {
  const GeoAuditSpec& g = spec.geo;
  const bool any_clip = std::any_of(g.generated.begin(), g.generated.end(),
                                    [](const GeoSource& s) { return !s.clip.path.empty(); });
  const bool can_score = any_clip && !g.objects_table.empty();
  VLBIAS_CHECK(!(g.consistency.toggle.explicit_ && g.consistency.toggle.enabled && !can_score),
               UsageError,
               "analysis 'consistency' was requested but cannot run: it needs generated.clip "
               "(CLIP image embeddings) and objects (the object text embeddings)");
  // Features files where given (features_model computes the others from the tables' images).
  std::vector<std::filesystem::path> inputs = {g.real_table};
  if (!g.real_features.path.empty()) inputs.push_back(g.real_features.path);
  for (const GeoSource& s : g.generated) {
    inputs.push_back(s.table);
    if (!s.features.path.empty()) inputs.push_back(s.features.path);
    if (!s.clip.path.empty()) inputs.push_back(s.clip.path);
  }
  if (can_score) {
    inputs.push_back(g.objects_table);
    inputs.push_back(g.objects_embeddings.path);
  }
  const std::size_t checked = check_inputs(inputs);
  // The runner's loaders: shapes, dimensions and the columns of the real and generated sets.
  std::vector<std::string> notes;
  const audits_internal::RealData real = audits_internal::load_real(spec, notes);
  const audits_internal::GeneratedData gen =
      audits_internal::load_generated(spec, real.features.cols, notes);
  const std::size_t clip_dim = gen.clip.cols;
  // The object texts, read only when the consistency indicator runs (consistency_analysis).
  if (g.consistency.toggle.enabled && can_score) {
    const Table objects = read_table(g.objects_table.string());
    const Matrix texts = read_embeddings(g.objects_embeddings.path, g.objects_embeddings.tensor);
    VLBIAS_CHECK(objects.rows == texts.rows, InputError,
                 "{} has {} rows but {} has {}; expected one text embedding per object.",
                 objects.source, objects.rows, g.objects_embeddings.path.string(), texts.rows);
    VLBIAS_CHECK(texts.cols == clip_dim, InputError,
                 "{} has {} columns but the generated CLIP embeddings have {}; both must come "
                 "from the same CLIP model.",
                 g.objects_embeddings.path.string(), texts.cols, clip_dim);
    objects.column(g.objects_column);
  }
  return checked;
}

std::size_t check_lvlm(const AuditSpec& spec) {
  const LvlmAuditSpec& l = spec.lvlm;
  // Stop words and the lexicon's split apply only with a lexicon (run_lvlm_audit's config).
  const bool lexicon = l.lexicon.toggle.enabled;
  const std::string stop_words = lexicon ? l.lexicon.stop_words : "none";
  const std::string lexicon_by = lexicon ? l.lexicon.by : "";
  // The run reads the lexicon first (into its scan configuration), then checks its inputs.
  if (lexicon) read_lexicon(l.lexicon.file.string(), l.lexicon.word_column);
  std::vector<std::filesystem::path> inputs = l.generations;
  if (lexicon) inputs.push_back(l.lexicon.file);
  const std::size_t checked = check_inputs(inputs);
  // The scan's columns, in lvlm_scan's order (its message names the first one missing).
  std::vector<std::string> columns;
  const auto add = [&](const std::string& c) {
    if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
  };
  for (const auto* list : {&l.set_key, &l.group, &l.by, &l.scores}) {
    for (const auto& c : *list) add(c);
  }
  for (const std::string* c : {&l.text, &l.responses.refusal_column, &lexicon_by}) {
    if (!c->empty()) add(*c);
  }
  for (const RatingSpecYaml& r : l.ratings) {
    if (!r.where_column.empty()) add(r.where_column);
    if (!r.where_expression.empty()) {
      const RowFilter filter = RowFilter::parse(r.where_expression, r.where_origin);
      for (const std::string& c : filter.columns()) add(c);
    }
  }
  StopWords::from_spec(stop_words);
  // Score cells must be numbers where the scan reads them: rows with every group and by cell.
  const auto at = [&](const std::vector<std::string>& names) {
    std::vector<std::size_t> out;
    for (const auto& n : names) {
      out.push_back(
          static_cast<std::size_t>(std::find(columns.begin(), columns.end(), n) - columns.begin()));
    }
    return out;
  };
  const std::vector<std::size_t> keyed = at(l.group), by = at(l.by), scores = at(l.scores);
  for (const auto& path : l.generations) {
    for_each_record(path.string(), columns, [&](const Record& row) {
      const auto missing = [&](std::size_t i) { return row.missing(i); };
      if (std::any_of(keyed.begin(), keyed.end(), missing) ||
          std::any_of(by.begin(), by.end(), missing)) {
        return;
      }
      for (const std::size_t i : scores) row.number(i);
    });
  }
  return checked;
}

std::size_t check_visual(const AuditSpec& spec) {
  const VisualAuditSpec& v = spec.visual;
  std::vector<std::filesystem::path> inputs;
  for (const auto* p : {&v.seegull, &v.visual_attributes, &v.regions, &v.annotations, &v.captions,
                        &v.pull_table, &v.pull_embeddings.path}) {
    if (!p->empty()) inputs.push_back(*p);
  }
  const std::size_t checked = check_inputs(inputs);
  // run_visual_stereotypes_audit's order: attributes, SeeGULL, regions, then each section's.
  const VisualAttributes visual = read_visual_attributes(v.visual_attributes.string());
  StereotypeOptions so;
  so.vote_columns = v.vote_columns;
  so.min_votes = v.min_votes;
  so.rule = v.vote_rule == "any" ? VoteRule::Any : VoteRule::All;
  build_visual_stereotypes(read_table(v.seegull.string()), visual, so);
  read_regions(v.regions.string());
  if (!v.annotations.empty()) {
    const AnnotationOptions ao = audits_internal::annotation_options(v);
    read_annotations(v.annotations.string(), ao);
  }
  if (v.salience.toggle.enabled) {
    // caption_salience's checks.
    const Table captions = read_table(v.captions.string());
    VLBIAS_CHECK(!visual.attributes.empty(), InputError, "there are no visual attributes to find");
    VLBIAS_CHECK(captions.rows > 0, InputError, "'{}' has no captions", captions.source);
    captions.column(v.caption_image_column);
    captions.column(v.caption_column);
    if (!v.caption_identity_column.empty()) captions.column(v.caption_identity_column);
  }
  if (v.pull.toggle.enabled) {
    // stereotypical_pull's checks.
    const Matrix embeddings = read_embeddings(v.pull_embeddings.path, v.pull_embeddings.tensor);
    const Table table = read_table(v.pull_table.string());
    VLBIAS_CHECK(table.rows == embeddings.rows, InputError,
                 "'{}' has {} rows but the embeddings have {}; row i of the table must be "
                 "embedding row i",
                 table.source, table.rows, embeddings.rows);
    VLBIAS_CHECK(table.rows > 0 && embeddings.cols > 0, InputError, "'{}': no images to compare",
                 table.source);
    table.column(v.pull_identity_column);
    table.column(v.pull_set_column);
  }
  return checked;
}

}  // namespace

std::size_t check_audit_inputs(const AuditSpec& spec) {
  switch (spec.kind) {
    case AuditKind::SocialPerception:
    case AuditKind::TraitPairs:
      return check_dual_encoder(spec);
    case AuditKind::GeoDiversity:
      return check_geo(spec);
    case AuditKind::LvlmCounterfactual:
      return check_lvlm(spec);
    case AuditKind::VisualStereotypes:
      return check_visual(spec);
  }
  VLBIAS_FAIL(InternalError, "check_audit_inputs: unknown audit kind");
}

}  // namespace vlbias
