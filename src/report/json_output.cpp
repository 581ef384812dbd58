#include "vlbias/report/json_output.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"
#include "vlbias/core/sha256.h"
#include "vlbias/core/timestamp.h"
#include "vlbias/io/input_identity.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/version.h"

namespace vlbias {

namespace {

Json key_object(const std::vector<std::string>& columns, const std::vector<std::string>& key) {
  Json out = Json::object();
  for (std::size_t c = 0; c < columns.size() && c < key.size(); ++c) out[columns[c]] = key[c];
  return out;
}

Json key_list(const std::vector<std::string>& columns,
              const std::vector<std::vector<std::string>>& keys) {
  Json out = Json::array();
  for (const auto& key : keys) out.push_back(key_object(columns, key));
  return out;
}

}  // namespace

Json json_number(double x) {
  return std::isfinite(x) ? Json(x) : Json(nullptr);
}

Json json_count(double x) {
  if (std::isfinite(x) && x >= 0 && x == std::floor(x) && x < 9007199254740992.0) {
    return Json(static_cast<std::uint64_t>(x));
  }
  return json_number(x);
}

void start_hashing_inputs(Provenance& p) {
  // Checked here, before any work: a device or folder is refused at once (and never opened,
  // so a thread reading /dev/zero forever cannot hold up the exit). A pipe is left to its
  // reader, which hashes what it reads; provenance_json asks for that hash at the end. A folder
  // of Parquet shards is one table (input_identity.h).
  std::vector<bool> piped;
  for (const auto& path : p.inputs) {
    piped.push_back(check_input_or_shards(path) == InputKind::Pipe);
  }
  p.input_hashes = std::async(std::launch::async, [paths = p.inputs, piped] {
                     std::vector<std::string> out;
                     for (std::size_t i = 0; i < paths.size(); ++i) {
                       out.push_back(piped[i] ? std::string() : input_sha256(paths[i]));
                     }
                     return out;
                   }).share();
}

Json provenance_json(const Provenance& p) {
  Json out = Json::object();
  out["vlbias_version"] = VLBIAS_VERSION;
  out["command"] = p.command;
  out["parameters"] = p.parameters;
  std::vector<std::string> hashes;
  if (p.input_hashes.valid()) {
    hashes = p.input_hashes.get();  // rethrows a hashing error
  } else {
    hashes.assign(p.inputs.size(), std::string());
  }
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    if (hashes[i].empty()) hashes[i] = sha256_file(p.inputs[i]);  // a pipe: as its reader read it
  }
  Json inputs = Json::array();
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    const std::string& path = p.inputs[i];
    const auto bytes = input_bytes(path);
    inputs.push_back(Json{
        {"path", path}, {"sha256", hashes[i]}, {"bytes", bytes ? Json(*bytes) : Json(nullptr)}});
  }
  out["inputs"] = inputs;
  if (!p.roles.empty()) {
    Json roles = Json::object();
    for (const auto& [role, path] : p.roles) roles[role] = path;
    out["roles"] = roles;
  }
  out["seed"] = p.seed ? Json(*p.seed) : Json(nullptr);
  out["created_utc"] = utc_now();
  return out;
}

void write_json(const Json& value, const std::string& path) {
  const std::string text = value.dump(2) + "\n";
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  write_file_atomically(path, text);
}

Json to_json(const stats::TestResult& r) {
  Json out = Json::object();
  out["test"] = r.test;
  out["statistic"] = json_number(r.statistic);
  Json df = Json::array();
  for (double d : r.df) df.push_back(json_number(d));
  out["df"] = df;
  out["p_value"] = json_number(r.p_value);
  out["effect_size"] = json_number(r.effect_size);
  out["effect_name"] = r.effect_name;
  if (!r.method.empty()) out["method"] = r.method;
  if (!r.note.empty()) out["note"] = r.note;
  return out;
}

stats::TestResult test_result_from_json(const Json& j) {
  stats::TestResult r;
  if (!j.is_object()) return r;
  const auto number = [&](const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : stats::kNaN;
  };
  const auto text = [&](const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  r.test = text("test");
  r.statistic = number("statistic");
  if (const auto df = j.find("df"); df != j.end() && df->is_array()) {
    for (const Json& d : *df) r.df.push_back(d.is_number() ? d.get<double>() : stats::kNaN);
  }
  r.p_value = number("p_value");
  r.effect_size = number("effect_size");
  r.effect_name = text("effect_name");
  r.method = text("method");
  r.note = text("note");
  return r;
}

Json to_json(const stats::Interval& ci) {
  Json out = Json::object();
  out["lower"] = json_number(ci.lower);
  out["upper"] = json_number(ci.upper);
  out["level"] = ci.level;
  out["resamples"] = ci.resamples;
  out["seed"] = ci.seed;
  if (ci.undefined) out["undefined_resamples"] = ci.undefined;
  if (!ci.note.empty()) out["note"] = ci.note;
  return out;
}

namespace {

// A clustered comparison's permutation test: the comparison's p_value is its p.
Json cluster_json(const CompareOptions& o, const ClusterTest& t) {
  const stats::ResamplingResult& r = t.permutation;
  Json out = Json{{"columns", o.cluster},
                  {"clusters", t.clusters},
                  {"clusters_per_group", t.clusters_per_group},
                  {"scheme", is_paired_test(o.test) ? "pairs of a cluster swapped together"
                                                    : "clusters relabelled between groups"},
                  {"method", r.method},
                  {"resamples", r.resamples},
                  {"exceed", r.exceed},
                  {"p_unclustered", json_number(t.p_unclustered)}};
  if (r.method != "exact") out["seed"] = r.seed;
  if (r.undefined) out["undefined_resamples"] = r.undefined;
  if (!r.note.empty()) out["note"] = r.note;
  return out;
}

}  // namespace

Json to_json(const CompareReport& report) {
  const auto& o = report.options;
  Json comparisons = Json::array();
  for (const auto& cmp : report.comparisons) {
    Json c = Json::object();
    c["within"] = key_object(o.within, cmp.within);
    const Json test = to_json(cmp.result);
    for (const auto& item : test.items()) c[item.key()] = item.value();
    c["alternative"] = stats::to_string(o.alternative);
    c["p_holm"] = json_number(cmp.p_holm);
    c["p_bh"] = json_number(cmp.p_bh);
    if (is_paired_test(o.test)) {
      if (o.test == GroupTest::Wilcoxon) c["zero_method"] = stats::to_string(o.zero_method);
      c["pairing"] = Json{{"pair_key", o.pair_key},
                          {"pairs", cmp.pairing.pairs},
                          {"unmatched", cmp.pairing.unmatched},
                          {"unmatched_keys", cmp.pairing.unmatched_keys}};
    }
    if (!o.cluster.empty()) c["cluster"] = cluster_json(o, cmp.cluster);
    Json groups = Json::array();
    for (const auto& g : cmp.groups) {
      Json gj = Json::object();
      gj["key"] = key_object(o.by, g.key);
      gj["n"] = g.n;
      gj["mean"] = json_number(g.mean);
      gj["sd"] = json_number(g.sd);
      if (g.small) gj["small"] = true;
      groups.push_back(gj);
    }
    c["groups"] = groups;
    if (!cmp.absent_groups.empty()) c["absent_groups"] = key_list(o.by, cmp.absent_groups);
    comparisons.push_back(c);
  }
  Json out = Json::object();
  out["comparisons"] = comparisons;
  out["rows"] = Json{{"total", report.rows},
                     {"used", report.rows_used},
                     {"missing_value", report.rows_missing_value},
                     {"missing_key", report.rows_missing_key}};
  out["empty_cells"] = key_list(o.by, report.empty_cells);
  out["adjustment"] = "holm and benjamini-hochberg over all comparisons above";
  return out;
}

Json to_json(const DescribeReport& report) {
  const auto& o = report.options;
  Json groups = Json::array();
  for (const auto& g : report.groups) {
    Json gj = Json::object();
    gj["key"] = key_object(o.by, g.key);
    gj["n"] = g.summary.n;
    gj["mean"] = json_number(g.summary.mean);
    gj["sd"] = json_number(g.summary.sd);
    gj["min"] = json_number(g.summary.min);
    gj["max"] = json_number(g.summary.max);
    Json pct = Json::object();
    for (std::size_t i = 0; i < o.percentiles.size(); ++i) {
      pct[fmt::format("p{}", o.percentiles[i])] = json_number(g.percentiles[i]);
    }
    gj["percentiles"] = pct;
    if (o.bootstrap > 0) gj["mean_ci"] = to_json(g.mean_ci);
    if (g.small) gj["small"] = true;
    if (!g.summary.note.empty()) gj["note"] = g.summary.note;
    groups.push_back(gj);
  }
  Json out = Json::object();
  out["groups"] = groups;
  out["rows"] = Json{{"total", report.rows},
                     {"missing_value", report.rows_missing_value},
                     {"missing_key", report.rows_missing_key}};
  out["empty_cells"] = key_list(o.by, report.empty_cells);
  return out;
}

Json to_json(const AbsDiffCell& c) {
  return Json{{"factor", c.factor},
              {"dimension", c.dimension},
              {"n", c.n},
              {"valid_pairs", c.valid_pairs},
              {"enumerated", c.enumerated},
              {"mean", json_number(c.mean)},
              {"sd", json_number(c.sd)},
              {"median", json_number(c.median)},
              {"q25", json_number(c.q25)},
              {"q75", json_number(c.q75)},
              {"whisker_low", json_number(c.whisker_low)},
              {"whisker_high", json_number(c.whisker_high)}};
}

Json to_json(const AbsDiffComparison& c) {
  Json out{{"dimension", c.dimension},
           {"factor_a", c.factor_a},
           {"factor_b", c.factor_b},
           {"test", c.result.test},
           {"statistic", json_number(c.result.statistic)},
           {"p_value", json_number(c.result.p_value)},
           {"p_holm", json_number(c.p_holm)},
           {"p_bh", json_number(c.p_bh)},
           {"effect_size", json_number(c.result.effect_size)},
           {"effect_name", c.result.effect_name},
           {"method", c.result.method}};
  if (!c.result.note.empty()) out["note"] = c.result.note;
  return out;
}

Json key_json(const std::vector<std::string>& by, const std::vector<std::string>& key) {
  Json out = Json::object();
  for (std::size_t c = 0; c < by.size() && c < key.size(); ++c) out[by[c]] = key[c];
  return out;
}

Json numbers_json(const std::vector<double>& values) {
  Json out = Json::array();
  for (const double x : values) out.push_back(json_number(x));
  return out;
}

Json to_json(const TrendFit& f, const std::vector<std::string>& by) {
  Json j = Json::object();
  j["key"] = key_json(by, f.key);
  j["dimension"] = f.dimension;
  j["levels"] = numbers_json(f.levels);
  j["level_means"] = numbers_json(f.level_means);
  j["level_n"] = f.level_n;
  j["coefficients"] = numbers_json(f.fit.coefficients);
  j["standard_errors"] = numbers_json(f.fit.standard_errors);
  j["r_squared"] = json_number(f.fit.r_squared);
  j["residual_sd"] = json_number(f.fit.residual_sd);
  j["n"] = f.fit.n;
  if (!f.fit.note.empty()) j["note"] = f.fit.note;
  return j;
}

Json to_json(const GroupEllipse& g, const std::vector<std::string>& by) {
  const CovarianceEllipse& e = g.ellipse;
  Json j = Json::object();
  j["key"] = key_json(by, g.key);
  j["x_dimension"] = g.x_dimension;
  j["y_dimension"] = g.y_dimension;
  j["center"] = Json::array({json_number(e.center_x), json_number(e.center_y)});
  j["covariance"] = Json::array({Json::array({json_number(e.cov_xx), json_number(e.cov_xy)}),
                                 Json::array({json_number(e.cov_xy), json_number(e.cov_yy)})});
  j["semi_major"] = json_number(e.semi_major);
  j["semi_minor"] = json_number(e.semi_minor);
  j["angle_radians"] = json_number(e.angle);
  j["k_sigma"] = json_number(e.k_sigma);
  j["n"] = e.n;
  if (!e.note.empty()) j["note"] = e.note;
  return j;
}

}  // namespace vlbias
