// The distribution metrics of the geo-diversity audit (geo_audit_internal.h), beyond the
// paper: FID and KID between the real and the generated images of each region and form, and
// the Vendi score of each set.
#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <vector>

#include "geo_audit_internal.h"
#include "table_builder.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/metrics/distribution_bootstrap.h"
#include "vlbias/metrics/distribution_metrics.h"
#include "vlbias/report/metric_json.h"
#include "vlbias/stats/stats.h"

namespace vlbias::audits_internal {

namespace {

struct Task {
  Form form;
  std::size_t region;
};

struct Result {
  std::size_t n_real = 0, n_gen = 0;
  double fid = stats::kNaN, kid = stats::kNaN, kid_sd = stats::kNaN;
  double vendi_gen = stats::kNaN;
  std::string note;
  // bootstrap > 0 (distribution_bootstrap.h; resamples of the generated images):
  stats::Interval fid_ci, kid_ci, vendi_ci;
  double kid_all_rows = stats::kNaN;  // the estimate kid_ci is centred on
  FidInfResult fid_inf;               // fid_inf: true (fid_inf NaN when not computed)
};

void add_note(std::string& note, const std::string& more) {
  note += note.empty() ? more : "; " + more;
}

// The intervals and FID_inf of one cell (the cell has at least 2 rows on each side).
void cell_intervals(const GeoAuditSpec::Distribution& d, const GaussianFit& real_fit,
                    MatrixView real, MatrixView fake, std::uint64_t boot_seed,
                    std::uint64_t fid_inf_seed, Result& res) {
  if (d.bootstrap > 0) {
    DistributionBootstrapOptions o;
    o.resamples = d.bootstrap;
    o.level = d.ci;
    o.seed = boot_seed;  // the same resamples for FID, KID and Vendi
    if (d.fid) res.fid_ci = fid_bootstrap(real_fit, fake, o).ci;
    if (d.vendi) res.vendi_ci = vendi_bootstrap(fake, 1.0, o).ci;
    if (d.kid && fake.rows > kKidBootstrapMaxRows) {
      add_note(res.note, fmt::format("no KID interval: {} generated images, at most {}", fake.rows,
                                     kKidBootstrapMaxRows));
    } else if (d.kid) {
      const DistributionBootstrap k = kid_bootstrap(real, fake, KidOptions{}, o);
      res.kid_ci = k.ci;
      res.kid_all_rows = k.estimate;
    }
  }
  if (d.fid && d.fid_inf) {
    const std::size_t lo =
        d.fid_inf_min == 0 ? std::max<std::size_t>(2, fake.rows / 10) : d.fid_inf_min;
    if (fake.rows < 3 || lo >= fake.rows) {
      add_note(res.note,
               fmt::format("no FID_inf: {} generated images, smallest size {}", fake.rows, lo));
    } else {
      FidInfOptions o;
      o.points = d.fid_inf_points;
      o.min_size = d.fid_inf_min;
      o.seed = fid_inf_seed;
      res.fid_inf = fid_infinity(real_fit, fake, o);
    }
  }
}

// The interval columns of one metric: `name`_lower/_upper in the table, `name`_ci in the JSON.
void put_interval(TableBuilder& t, Json& j, const std::string& name, const stats::Interval& ci) {
  t.put(name + "_lower", ci.lower);
  t.put(name + "_upper", ci.upper);
  j[name + "_ci"] = bounds_json(ci);
}

// The section and table: one cell per task, with the Vendi score of the region's real set.
AnalysisOutput distribution_section(const GeoAuditSpec::Distribution& d, const RealData& real,
                                    const std::vector<Task>& tasks,
                                    const std::vector<Result>& results,
                                    const std::vector<double>& vendi_real) {
  AnalysisOutput s;
  TableBuilder t("geo_distribution");
  Json rows = Json::array();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const Result& r = results[i];
    const std::string region = real.regions->names[tasks[i].region];
    t.row();
    t.put("form", form_name(tasks[i].form));
    t.put("region", region);
    t.put("n_real", static_cast<double>(r.n_real));
    t.put("n_generated", static_cast<double>(r.n_gen));
    t.put("fid", r.fid);
    t.put("kid", r.kid);
    t.put("kid_sd", r.kid_sd);
    t.put("vendi_generated", r.vendi_gen);
    t.put("vendi_real", vendi_real[tasks[i].region]);
    Json j{{"form", form_name(tasks[i].form)},
           {"region", region},
           {"n_real", r.n_real},
           {"n_generated", r.n_gen}};
    if (d.fid) j["fid"] = json_number(r.fid);
    if (d.kid) {
      j["kid"] = json_number(r.kid);
      j["kid_sd"] = json_number(r.kid_sd);
    }
    if (d.vendi) {
      j["vendi_generated"] = json_number(r.vendi_gen);
      j["vendi_real"] = json_number(vendi_real[tasks[i].region]);
    }
    // bootstrap: 0 writes no interval keys (as the consistency analysis).
    if (d.bootstrap > 0) {
      if (d.fid) put_interval(t, j, "fid", r.fid_ci);
      if (d.kid) {
        put_interval(t, j, "kid", r.kid_ci);
        t.put("kid_all_rows", r.kid_all_rows);
        j["kid_all_rows"] = json_number(r.kid_all_rows);
      }
      if (d.vendi) put_interval(t, j, "vendi_generated", r.vendi_ci);
    }
    if (d.fid && d.fid_inf) {
      t.put("fid_inf", r.fid_inf.fid_inf);
      t.put("fid_inf_slope", r.fid_inf.slope);
      j["fid_inf"] = r.fid_inf.sizes.empty() ? Json(nullptr) : fid_inf_json(r.fid_inf);
    }
    t.put("note", r.note);
    if (!r.note.empty()) j["note"] = r.note;
    rows.push_back(j);
  }
  s.json = Json{{"fid", d.fid}, {"kid", d.kid}, {"vendi", d.vendi}, {"cells", rows}};
  if (d.kid) {
    s.json["kid_subsets"] = d.kid_subsets;
    s.json["kid_subset_size"] = d.kid_subset_size;
  }
  if (d.vendi) s.json["vendi_kernel"] = "cosine";
  if (d.bootstrap > 0) {
    s.json["bootstrap"] = d.bootstrap;
    s.json["ci"] = d.ci;
    s.json["interval_method"] =
        "percentile bootstrap of the cell's generated images (real images fixed), replicates "
        "recentred on the estimate; KID's interval is of the all-rows unbiased MMD^2 "
        "(kid_all_rows)";
  }
  if (d.fid && d.fid_inf) s.json["fid_inf_points"] = d.fid_inf_points;
  s.tables.emplace_back("geo_distribution", t.build());
  return s;
}

}  // namespace

AnalysisOutput distribution_analysis(const AuditCommonSpec& spec, const GeoAuditSpec& geo,
                                     const RealData& real, const GeneratedData& gen,
                                     const GeneratedSets& sets) {
  const GeoAuditSpec::Distribution& d = geo.distribution;
  const std::size_t nr = real.regions->names.size();
  const std::vector<std::vector<std::uint32_t>>& real_rows = real.rows_of_region;
  std::vector<Task> tasks;
  for (const Form f : kForms) {
    if (!sets.form_present[static_cast<int>(f)]) continue;
    for (std::size_t r = 0; r < nr; ++r) tasks.push_back({f, r});
  }
  std::vector<Result> results(tasks.size());
  std::vector<double> vendi_real(nr, stats::kNaN);
  std::vector<GaussianFit> real_fit(nr);
  Progress progress("distribution metrics", tasks.size() + nr);
  // First every region's real set (its Vendi score and Gaussian fit, shared by the forms).
  parallel_for(nr, [&](std::size_t r) {
    if (real_rows[r].size() >= 2) {
      const Matrix re = select_rows(real.features, real_rows[r]);
      if (d.vendi) vendi_real[r] = vendi(re).score;
      if (d.fid) real_fit[r] = fit_gaussian(re);
    }
    progress.advance();
  });
  parallel_for(tasks.size(), [&](std::size_t t) {
    const Task& task = tasks[t];
    Result& res = results[t];
    const auto& grows = sets.region[static_cast<int>(task.form)][task.region];
    res.n_real = real_rows[task.region].size();
    res.n_gen = grows.size();
    if (res.n_gen < 2 || res.n_real < 2) {
      res.note = "fewer than 2 images on a side";
    } else {
      const Matrix fake = select_rows(gen.features, grows);
      if (d.fid) res.fid = fid(real_fit[task.region], fit_gaussian(fake)).fid;
      if (d.vendi) res.vendi_gen = vendi(fake).score;
      if (d.kid) {
        KidOptions o;
        o.subsets = d.kid_subsets;
        o.subset_size = d.kid_subset_size;
        o.seed =
            cell_seed(spec.seed, kSeedKid, static_cast<std::size_t>(task.form) * nr + task.region);
        const KidResult k = kid(select_rows(real.features, real_rows[task.region]), fake, o);
        res.kid = k.kid;
        res.kid_sd = k.sd;
        if (!k.note.empty()) res.note = k.note;
      }
      if (d.bootstrap > 0 || d.fid_inf) {
        const std::uint64_t cell = static_cast<std::size_t>(task.form) * nr + task.region;
        const Matrix re = d.kid ? select_rows(real.features, real_rows[task.region]) : Matrix();
        cell_intervals(d, real_fit[task.region], re, fake,
                       cell_seed(spec.seed, kSeedDistributionBootstrap, cell),
                       cell_seed(spec.seed, kSeedFidInf, cell), res);
      }
    }
    progress.advance();
  });
  progress.finish();
  return distribution_section(d, real, tasks, results, vendi_real);
}

}  // namespace vlbias::audits_internal
