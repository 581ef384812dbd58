// The Region and Object-Region indicators of the geo-diversity audit (geo_audit_internal.h):
// precision, recall, density and coverage of each cell's generated set against the real images
// of the cell, with bootstrap intervals, and the gaps between regions.
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "geo_audit_internal.h"
#include "table_builder.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/metrics/prdc.h"
#include "vlbias/stats/stats.h"

namespace vlbias::audits_internal {

namespace {

struct RegionCell {
  Form form = Form::Object;
  std::size_t region = 0;
  std::size_t n_real = 0, n_generated = 0;
  bool computed = false;
  PrdcResult prdc;
  PrdcIntervals intervals;
  std::string note;
};

// PRDC of one cell against precomputed real radii, with bootstrap intervals.
void measure_cell(RegionCell& c, const Matrix& real, const std::vector<double>& radii,
                  const Matrix& gen_features, const std::vector<std::uint32_t>& rows,
                  const GeoAuditSpec::Manifold& m, std::uint64_t seed) {
  c.n_generated = rows.size();
  if (rows.empty()) {
    c.note = "no generated images";
    return;
  }
  PrdcOptions o;
  o.k = m.k;
  o.rule = m.inclusive ? BallRule::Inclusive : BallRule::Strict;
  o.per_sample = true;
  o.ball_members = true;
  const Matrix fake = select_rows(gen_features, rows);
  c.prdc = prdc_with_real_radii(real, radii, fake, o);
  c.note = c.prdc.note;
  if (m.bootstrap > 0) c.intervals = prdc_bootstrap(c.prdc, m.bootstrap, m.ci, seed);
  c.computed = true;
  // The per-sample vectors are only needed for the bootstrap.
  c.prdc.members.clear();
  c.prdc.members.shrink_to_fit();
  c.prdc.members_offsets.clear();
  c.prdc.fake_ball_count.clear();
}

void put_cell(TableBuilder& t, const RegionCell& c, std::size_t min_size) {
  t.put("n_real", static_cast<double>(c.n_real));
  t.put("n_generated", static_cast<double>(c.n_generated));
  const auto v = [&](double x) { return c.computed ? x : stats::kNaN; };
  t.put("precision", v(c.prdc.precision));
  t.put("precision_lower", v(c.intervals.precision.lower));
  t.put("precision_upper", v(c.intervals.precision.upper));
  t.put("coverage", v(c.prdc.coverage));
  t.put("coverage_lower", v(c.intervals.coverage.lower));
  t.put("coverage_upper", v(c.intervals.coverage.upper));
  t.put("recall", v(c.prdc.recall));
  t.put("density", v(c.prdc.density));
  t.put("density_lower", v(c.intervals.density.lower));
  t.put("density_upper", v(c.intervals.density.upper));
  t.put("small", c.n_real < min_size || c.n_generated < min_size ? "true" : "false");
  t.put("note", c.note);
}

// Every cell has the same keys: the intervals (null bounds where a cell has no indicator) when
// the analysis bootstraps, none at all with bootstrap: 0, so a page never reads a missing key.
Json cell_json(const RegionCell& c, std::size_t min_size, bool intervals) {
  Json j{{"n_real", c.n_real}, {"n_generated", c.n_generated}};
  const auto v = [&](double x) { return c.computed ? json_number(x) : Json(nullptr); };
  const stats::Interval none;  // NaN bounds
  const auto ci = [&](const stats::Interval& x) { return bounds_json(c.computed ? x : none); };
  j["precision"] = v(c.prdc.precision);
  if (intervals) j["precision_ci"] = ci(c.intervals.precision);
  j["coverage"] = v(c.prdc.coverage);
  if (intervals) j["coverage_ci"] = ci(c.intervals.coverage);
  j["recall"] = v(c.prdc.recall);
  j["density"] = v(c.prdc.density);
  if (intervals) j["density_ci"] = ci(c.intervals.density);
  if (c.n_real < min_size || c.n_generated < min_size) j["small"] = true;
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

// The region indicator's cells: every region against each present form's set.
std::vector<RegionCell> measure_regions(const AuditCommonSpec& spec, const GeoAuditSpec& geo,
                                        const RealData& real, const GeneratedData& gen,
                                        const GeneratedSets& sets) {
  const GeoAuditSpec::Manifold& m = geo.region;
  const std::size_t nr = real.regions->names.size();
  const std::vector<std::vector<std::uint32_t>>& real_rows = real.rows_of_region;
  std::vector<RegionCell> cells;
  Progress progress("region indicator", nr);
  for (std::size_t r = 0; r < nr; ++r) {
    const Matrix real_r = select_rows(real.features, real_rows[r]);
    std::vector<double> radii;
    const bool enough = real_r.rows > m.k;
    if (enough) radii = knn_radii_squared(real_r, m.k, "real features");
    for (const Form f : kForms) {
      const int fi = static_cast<int>(f);
      if (!sets.form_present[fi]) continue;
      RegionCell c;
      c.form = f;
      c.region = r;
      c.n_real = real_r.rows;
      if (!enough) {
        c.n_generated = sets.region[fi][r].size();
        c.note = fmt::format("{} real images: the k-th neighbour (k = {}) needs at least {}",
                             real_r.rows, m.k, m.k + 1);
      } else {
        measure_cell(c, real_r, radii, gen.features, sets.region[fi][r], m,
                     cell_seed(spec.seed, kSeedRegionBootstrap, fi * nr + r));
      }
      cells.push_back(std::move(c));
    }
    progress.advance();
  }
  progress.finish();
  return cells;
}

// The region indicator's section and table, form by form.
AnalysisOutput region_section(const AuditCommonSpec& spec, const GeoAuditSpec& geo,
                              const RealData& real, const GeneratedSets& sets,
                              const std::vector<RegionCell>& cells) {
  const GeoAuditSpec::Manifold& m = geo.region;
  AnalysisOutput section;
  TableBuilder t("geo_region");
  Json forms = Json::array();
  for (const Form f : kForms) {
    const int fi = static_cast<int>(f);
    if (!sets.form_present[fi]) continue;
    Json regions = Json::array();
    for (const RegionCell& c : cells) {
      if (c.form != f) continue;
      t.row();
      t.put("form", form_name(f));
      t.put("region", real.regions->names[c.region]);
      put_cell(t, c, spec.min_group_size);
      Json j{{"region", real.regions->names[c.region]}};
      j.update(cell_json(c, spec.min_group_size, m.bootstrap > 0));
      regions.push_back(j);
    }
    forms.push_back(Json{{"form", form_name(f)},
                         {"prompt", form_template(f)},
                         {"generated_sets", sets.sampled[fi]},
                         {"regions", regions}});
  }
  section.json = Json{{"k", m.k},
                      {"ball", m.inclusive ? "inclusive (d <= r)" : "strict (d < r)"},
                      {"bootstrap", m.bootstrap},
                      {"ci", m.ci},
                      {"resampled", "generated images of each cell (real manifold fixed)"},
                      {"forms", forms}};
  section.tables.emplace_back("geo_region", t.build());
  return section;
}

// Precision and coverage gaps between every two measured regions of a form.
std::vector<GapRow> region_gaps(const std::vector<RegionCell>& cells, const RealData& real,
                                double ci) {
  std::vector<GapRow> gaps;
  for (const Form f : kForms) {
    for (const char* metric : {"precision", "coverage"}) {
      const bool precision = std::string(metric) == "precision";
      for (std::size_t a = 0; a < cells.size(); ++a) {
        for (std::size_t b = a + 1; b < cells.size(); ++b) {
          const RegionCell& ca = cells[a];
          const RegionCell& cb = cells[b];
          if (ca.form != f || cb.form != f || !ca.computed || !cb.computed) continue;
          GapRow g;
          g.form = form_name(f);
          g.metric = metric;
          g.a = real.regions->names[ca.region];
          g.b = real.regions->names[cb.region];
          g.value_a = precision ? ca.prdc.precision : ca.prdc.coverage;
          g.value_b = precision ? cb.prdc.precision : cb.prdc.coverage;
          g.gap = bootstrap_gap(
              g.value_a,
              precision ? ca.intervals.precision_replicates : ca.intervals.coverage_replicates,
              g.value_b,
              precision ? cb.intervals.precision_replicates : cb.intervals.coverage_replicates, ci);
          gaps.push_back(std::move(g));
        }
      }
    }
  }
  return gaps;
}

}  // namespace

Json bounds_json(const stats::Interval& ci) {
  return Json{{"lower", json_number(ci.lower)}, {"upper", json_number(ci.upper)}};
}

AnalysisOutput gap_section(std::vector<GapRow> rows, const std::string& table_name) {
  std::vector<double> p;
  for (const GapRow& r : rows) p.push_back(r.gap.p_value);
  const std::vector<double> holm = stats::holm(p), bh = stats::benjamini_hochberg(p);
  AnalysisOutput s;
  TableBuilder t(table_name);
  Json arr = Json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const GapRow& r = rows[i];
    t.row();
    t.put("form", r.form);
    t.put("metric", r.metric);
    t.put("region_a", r.a);
    t.put("region_b", r.b);
    t.put("value_a", r.value_a);
    t.put("value_b", r.value_b);
    t.put("difference", r.gap.difference);
    t.put("ci_lower", r.gap.ci.lower);
    t.put("ci_upper", r.gap.ci.upper);
    t.put("se", r.gap.se);
    t.put("p_value", r.gap.p_value);
    t.put("p_holm", holm[i]);
    t.put("p_bh", bh[i]);
    arr.push_back(Json{{"form", r.form},
                       {"metric", r.metric},
                       {"region_a", r.a},
                       {"region_b", r.b},
                       {"difference", json_number(r.gap.difference)},
                       {"ci", bounds_json(r.gap.ci)},
                       {"se", json_number(r.gap.se)},
                       {"p_value", json_number(r.gap.p_value)},
                       {"p_holm", json_number(holm[i])},
                       {"p_bh", json_number(bh[i])}});
  }
  s.json = arr;
  s.tables.emplace_back(table_name, t.build());
  return s;
}

RegionOutputs region_analysis(const AuditCommonSpec& spec, const GeoAuditSpec& geo,
                              const RealData& real, const GeneratedData& gen,
                              const GeneratedSets& sets, std::vector<std::string>& notes) {
  const GeoAuditSpec::Manifold& m = geo.region;
  const std::vector<RegionCell> cells = measure_regions(spec, geo, real, gen, sets);
  RegionOutputs out;
  out.section = region_section(spec, geo, real, sets, cells);
  std::vector<GapRow> gaps;
  if (m.bootstrap > 0) {
    gaps = region_gaps(cells, real, m.ci);
  } else {
    notes.push_back("region gaps skipped: analyses.region.bootstrap is 0");
  }
  const bool any_gap = !gaps.empty();
  out.gaps = gap_section(std::move(gaps), "geo_region_gaps");
  out.gaps.pilot.region_gaps = any_gap;  // tests power does not support
  return out;
}

AnalysisOutput object_region_analysis(const AuditCommonSpec& spec, const GeoAuditSpec& geo,
                                      const RealData& real, const GeneratedData& gen,
                                      const GeneratedSets& sets, std::vector<std::string>& notes) {
  const GeoAuditSpec::Manifold& m = geo.object_region;
  const std::size_t nr = real.regions->names.size(), no = real.objects->names.size();
  std::vector<std::vector<std::uint32_t>> real_rows(no * nr);
  for (std::size_t i = 0; i < real.features.rows; ++i) {
    real_rows[real.object_id[i] * nr + real.region_id[i]].push_back(static_cast<std::uint32_t>(i));
  }
  struct Task {
    std::size_t object, region;
    Form form;
  };
  std::vector<Task> tasks;
  std::size_t too_few = 0;
  for (std::size_t o = 0; o < no; ++o) {
    for (std::size_t r = 0; r < nr; ++r) {
      if (real_rows[o * nr + r].empty()) continue;
      if (real_rows[o * nr + r].size() <= m.k) ++too_few;
      for (const Form f : kForms) {
        if (sets.form_present[static_cast<int>(f)]) tasks.push_back({o, r, f});
      }
    }
  }
  std::vector<RegionCell> cells(tasks.size());
  Progress progress("object-region indicator", tasks.size());
  // One task per real cell and form; PRDC inside runs serially (nested parallel region).
  parallel_for(tasks.size(), [&](std::size_t t) {
    const Task& task = tasks[t];
    RegionCell& c = cells[t];
    c.form = task.form;
    c.region = task.region;
    const auto& rrows = real_rows[task.object * nr + task.region];
    const auto& grows = sets.cell[static_cast<int>(task.form)][task.object][task.region];
    c.n_real = rrows.size();
    c.n_generated = grows.size();
    if (rrows.size() <= m.k) {
      c.note = fmt::format("{} real images: the k-th neighbour (k = {}) needs at least {}",
                           rrows.size(), m.k, m.k + 1);
    } else {
      const Matrix real_c = select_rows(real.features, rrows);
      const std::vector<double> radii = knn_radii_squared(real_c, m.k, "real features");
      measure_cell(
          c, real_c, radii, gen.features, grows, m,
          cell_seed(spec.seed, kSeedObjectRegionBootstrap,
                    (static_cast<std::size_t>(task.form) * no + task.object) * nr + task.region));
    }
    progress.advance();
  });
  progress.finish();
  if (too_few > 0) {
    notes.push_back(fmt::format(
        "object-region: {} real (object, region) cells have k = {} or fewer images and get no "
        "indicator",
        too_few, m.k));
  }
  AnalysisOutput s;
  TableBuilder t("geo_object_region");
  Json rows = Json::array();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const Task& task = tasks[i];
    t.row();
    t.put("form", form_name(task.form));
    t.put("object", real.objects->names[task.object]);
    t.put("region", real.regions->names[task.region]);
    put_cell(t, cells[i], spec.min_group_size);
    Json j{{"form", form_name(task.form)},
           {"object", real.objects->names[task.object]},
           {"region", real.regions->names[task.region]}};
    j.update(cell_json(cells[i], spec.min_group_size, m.bootstrap > 0));
    rows.push_back(j);
  }
  s.json = Json{{"k", m.k},
                {"ball", m.inclusive ? "inclusive (d <= r)" : "strict (d < r)"},
                {"bootstrap", m.bootstrap},
                {"ci", m.ci},
                {"cells", rows}};
  s.tables.emplace_back("geo_object_region", t.build());
  return s;
}

}  // namespace vlbias::audits_internal
