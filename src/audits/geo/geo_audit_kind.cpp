// The geo-diversity kind (paper 002, DIG-In): `vlbias audit --check` (audit.h's check_audit_inputs)
// and the kind's entry in the table of kinds (audit_kind.h). The checks repeat the run's own, with
// the same words (src/audits/audit_check.cpp says how tests/cli/audit_check_test.cpp holds them
// together).
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "audit_kind.h"
#include "geo_audit_internal.h"
#include "vlbias/audits/geo_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/embeddings.h"

namespace vlbias::audits_internal {

namespace {

std::size_t check_geo_inputs(const AuditCommonSpec& spec, const GeoAuditSpec& g) {
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
  for (const ScoreTableSpec& s : g.scores) inputs.push_back(s.table);
  const std::size_t checked = check_input_files(inputs);
  // The runner's loaders: shapes, dimensions and the columns of the real and generated sets.
  std::vector<std::string> notes;
  const RealData real = load_real(spec, g, notes);
  const GeneratedData gen = load_generated(g, real.features.cols, notes);
  const std::size_t clip_dim = gen.clip.cols;
  if (!g.scores.empty()) read_geo_scores(g, gen);
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

}  // namespace

const AuditKindOps kGeoDiversityKind =
    kind_ops<GeoAuditSpec, parse_geo_root, check_geo_inputs, run_geo_audit>(AuditKind::GeoDiversity,
                                                                            "geo-diversity");

}  // namespace vlbias::audits_internal
