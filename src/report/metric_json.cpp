// The JSON of each metric's result (include/vlbias/report/metric_json.h).
#include "vlbias/report/metric_json.h"

#include <cmath>

#include <fmt/format.h>

namespace vlbias {

namespace {

// A skew value for JSON, which has no infinities: -inf is written as "-inf".
Json skew_value(double v) {
  if (std::isinf(v) && v < 0) return Json("-inf");
  return json_number(v);
}

template <typename T, typename Convert>
Json per_class(const std::vector<std::string>& names, const std::vector<T>& values,
               Convert convert) {
  Json out = Json::object();
  for (std::size_t c = 0; c < names.size(); ++c) out[names[c]] = convert(values[c]);
  return out;
}

Json count(std::size_t v) {
  return Json(v);
}

}  // namespace

Json prdc_json(const PrdcResult& r, std::size_t dim) {
  Json out{{"precision", json_number(r.precision)},
           {"recall", json_number(r.recall)},
           {"density", json_number(r.density)},
           {"coverage", json_number(r.coverage)},
           {"k", r.k},
           {"ball", to_string(r.rule)},
           {"n_real", r.n_real},
           {"n_fake", r.n_fake},
           {"dim", dim},
           {"neighbours", "exact (k-th nearest other row by index; duplicates at distance 0)"}};
  if (!r.note.empty()) out["note"] = r.note;
  return out;
}

Json fid_json(const FidResult& r) {
  return Json{{"fid", json_number(r.fid)},
              {"mean_term", json_number(r.mean_term)},
              {"trace_real", json_number(r.trace_a)},
              {"trace_fake", json_number(r.trace_b)},
              {"trace_sqrt", json_number(r.trace_sqrt)},
              {"n_real", r.n_a},
              {"n_fake", r.n_b},
              {"dim", r.dim},
              {"covariance", "unbiased (n - 1)"}};
}

Json distribution_ci_json(const DistributionBootstrap& b, const std::string& statistic) {
  Json out = to_json(b.ci);
  out["method"] =
      "percentile bootstrap of the generated rows (real set fixed), replicates recentred on the "
      "estimate";
  out["statistic"] = statistic;
  out["shift"] = json_number(b.shift);
  out["raw"] = Json{{"lower", json_number(b.raw.lower)}, {"upper", json_number(b.raw.upper)}};
  return out;
}

Json fid_inf_json(const FidInfResult& r) {
  Json points = Json::array();
  for (std::size_t p = 0; p < r.sizes.size(); ++p) {
    points.push_back(Json{{"n", r.sizes[p]}, {"fid", json_number(r.fids[p])}});
  }
  return Json{{"fid_inf", json_number(r.fid_inf)},
              {"slope", json_number(r.slope)},
              {"points", points},
              {"min_size", r.min_size},
              {"seed", r.seed},
              {"method",
               "least-squares line FID_N = FID_inf + slope / N over N evenly spaced from min_size "
               "to n, N generated rows drawn without replacement (Chong & Forsyth 2020)"}};
}

Json kid_json(const KidResult& r, const KidOptions& options, double gamma) {
  Json out{{"kid", json_number(r.kid)},
           {"sd", json_number(r.sd)},
           {"subsets", r.subsets},
           {"subset_size", r.subset_size},
           {"kernel", fmt::format("({} x.y + {})^{}", gamma, options.coef0, options.degree)},
           {"estimator", "unbiased MMD^2 (diagonals of the within-set kernels left out)"},
           {"n_real", r.n_a},
           {"n_fake", r.n_b},
           {"dim", r.dim},
           {"per_subset", numbers_json(r.per_subset)}};
  if (!r.note.empty()) out["note"] = r.note;
  return out;
}

Json vendi_json(const VendiResult& r, double q) {
  return Json{{"vendi", json_number(r.score)},
              {"q", std::isinf(q) ? Json("inf") : Json(q)},
              {"kernel", "cosine"},
              {"n", r.n},
              {"dim", r.dim},
              {"rank", r.rank},
              {"eigenvalues_of", r.gram}};
}

Json scweat_json(const ScweatResult& r) {
  Json per_target = Json::array();
  for (const ScweatTarget& t : r.per_target) {
    per_target.push_back(Json{{"difference", json_number(t.difference)},
                              {"effect_size", json_number(t.effect_size)}});
  }
  Json out{{"effect_size", json_number(r.effect_size)},
           {"mean_difference", json_number(r.mean_difference)},
           {"per_target", per_target},
           {"n_a", r.n_a},
           {"n_b", r.n_b},
           {"p_value", json_number(r.test.p_value)},
           {"p_test", to_string(r.p_test)},
           {"permutations", r.test.resamples},
           {"method", r.test.method},
           {"seed", r.test.seed}};
  if (!r.note.empty()) out["note"] = r.note;
  return out;
}

Json skew_json(const SkewResult& r, const std::vector<std::string>& names) {
  Json out = Json::object();
  out["skew"] = per_class(names, r.skew, skew_value);
  out["max_skew"] = skew_value(r.max_skew);
  out["k"] = r.k;
  out["n"] = r.n;
  out["counts"] = per_class(names, r.topk_counts, count);
  out["desired"] = per_class(names, r.desired, json_number);
  out["class_n"] = per_class(names, r.class_counts, count);
  out["tie_rule"] = kTieRule;
  return out;
}

Json ndkl_json(const NdklResult& r, const std::vector<std::string>& names) {
  Json out = Json::object();
  out["ndkl"] = json_number(r.ndkl);
  out["n"] = r.n;
  out["desired"] = per_class(names, r.desired, json_number);
  out["class_n"] = per_class(names, r.class_counts, count);
  out["tie_rule"] = kTieRule;
  return out;
}

Json clipscore_summary_json(const ClipScoreSummary& s) {
  Json p = Json::object();
  for (std::size_t i = 0; i < s.percentile_levels.size(); ++i) {
    p[fmt::format("{}", s.percentile_levels[i])] = json_number(s.percentile_values[i]);
  }
  Json out{{"n", s.summary.n},
           {"mean", json_number(s.summary.mean)},
           {"sd", json_number(s.summary.sd)},
           {"min", json_number(s.summary.min)},
           {"max", json_number(s.summary.max)},
           {"percentiles", p}};
  if (!s.summary.note.empty()) out["note"] = s.summary.note;
  return out;
}

const char* clipscore_pairing(bool no_text_rows, std::size_t text_rows, std::size_t image_rows) {
  if (!no_text_rows) return "text-row column";
  return text_rows == image_rows ? "row i with row i" : "every image with the one text";
}

}  // namespace vlbias
