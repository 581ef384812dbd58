// The distribution metrics of the geo-diversity audit (geo_audit_internal.h), beyond the
// paper: FID and KID between the real and the generated images of each region and form, and
// the Vendi score of each set.
#include <string>
#include <vector>

#include "geo_audit_internal.h"
#include "table_builder.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/metrics/distribution_metrics.h"
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
};

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
    t.put("note", r.note);
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
    if (!r.note.empty()) j["note"] = r.note;
    rows.push_back(j);
  }
  s.json = Json{{"fid", d.fid}, {"kid", d.kid}, {"vendi", d.vendi}, {"cells", rows}};
  if (d.kid) {
    s.json["kid_subsets"] = d.kid_subsets;
    s.json["kid_subset_size"] = d.kid_subset_size;
  }
  if (d.vendi) s.json["vendi_kernel"] = "cosine";
  s.tables.emplace_back("geo_distribution", t.build());
  return s;
}

}  // namespace

AnalysisOutput distribution_analysis(const AuditSpec& spec, const RealData& real,
                                     const GeneratedData& gen, const GeneratedSets& sets) {
  const GeoAuditSpec::Distribution& d = spec.geo.distribution;
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
    }
    progress.advance();
  });
  progress.finish();
  return distribution_section(d, real, tasks, results, vendi_real);
}

}  // namespace vlbias::audits_internal
