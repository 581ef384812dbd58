// Real-world targets per prompt (targets:) and the amplification of them (analyses.amplification):
// per prompt the generated share minus the real share, and across prompts the slope of the
// generated share on the real one (Bianchi et al. 2023's occupation figure).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "representation_audit_internal.h"
#include "table_builder.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/summary.h"

namespace vlbias::audits_internal {

namespace {

// The least-squares line of y on x: slope, intercept and Pearson's r (NaN with fewer than two
// distinct x).
struct LineFit {
  double slope = stats::kNaN, intercept = stats::kNaN, r = stats::kNaN;
};

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  LineFit f;
  const double n = static_cast<double>(x.size());
  if (x.size() < 2) return f;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0) return f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.r = syy == 0 ? stats::kNaN : sxy / std::sqrt(sxx * syy);
  return f;
}

double target_cell(const Table& t, const Column& c, std::size_t row, const std::string& scale) {
  const double top = scale == "percent" ? 100.0 : 1.0;
  VLBIAS_CHECK(c.type == ColumnType::Numeric && !c.missing(row), InputError,
               "'{}' row {}: {} is '{}', not a number; targets need every share", t.source,
               t.line_of_row[row], c.name, c.text(row));
  const double v = c.numbers[row];
  VLBIAS_CHECK(v >= 0 && v <= top, InputError,
               "'{}' row {}: {} = {} is outside [0, {}] (targets.scale: {}{})", t.source,
               t.line_of_row[row], c.name, v, top, scale,
               scale == "share" && v <= 100 ? "; a percent? set targets.scale: percent" : "");
  return v / top;
}

// Across the prompts compared: the mean gap (its replicates: images resampled within each
// prompt) and the least-squares slope of generated on real share (its replicates: prompts
// resampled with replacement, Rng(derive_seed(slope_seed, class), b)).
std::pair<Json, Json> gap_summary_json(const std::vector<double>& real,
                                       const std::vector<double>& generated,
                                       const std::vector<std::vector<double>>& gap_replicates,
                                       double level, std::uint64_t seed, std::uint64_t slope_seed,
                                       std::size_t c, std::size_t B) {
  const auto mean_defined = [](const std::vector<double>& v) {
    double s = 0, m = 0;
    for (const double x : v) {
      if (!std::isnan(x)) s += x, m += 1;
    }
    return m > 0 ? s / m : stats::kNaN;
  };
  double mean_gap = 0;
  for (std::size_t i = 0; i < real.size(); ++i) mean_gap += generated[i] - real[i];
  mean_gap = real.empty() ? stats::kNaN : mean_gap / static_cast<double>(real.size());
  std::vector<double> mean_gaps(B), slopes(B);
  for (std::size_t b = 0; b < B; ++b) mean_gaps[b] = mean_defined(gap_replicates[b]);
  const LineFit fit = fit_line(real, generated);
  std::vector<double> xs(real.size()), ys(real.size());
  for (std::size_t b = 0; b < B && real.size() >= 3; ++b) {
    Rng rng(derive_seed(slope_seed, c), b);
    for (std::size_t i = 0; i < real.size(); ++i) {
      const std::size_t j = rng.uniform_index(real.size());
      xs[i] = real[j];
      ys[i] = generated[j];
    }
    slopes[b] = fit_line(xs, ys).slope;
  }
  Json mean_json{{"estimate", json_number(mean_gap)}};
  Json slope_json{{"estimate", json_number(fit.slope)},
                  {"intercept", json_number(fit.intercept)},
                  {"r", json_number(fit.r)},
                  {"prompts", real.size()}};
  if (B > 0 && !real.empty()) {
    stats::Interval mci = stats::percentile_interval(mean_gaps, level, seed);
    mci.resamples = B;
    mean_json["ci"] = to_json(mci);
  }
  if (B > 0 && real.size() >= 3 && !std::isnan(fit.slope)) {
    stats::Interval sci = stats::percentile_interval(slopes, level, slope_seed);
    sci.resamples = B;
    slope_json["ci"] = to_json(sci);
  } else {
    slope_json["note"] =
        "a slope with an interval needs at least 3 prompts with targets and two distinct real "
        "shares";
  }
  return {std::move(mean_json), std::move(slope_json)};
}

}  // namespace

RepresentationTargets read_representation_targets(const RepresentationAuditSpec& r,
                                                  const RepresentationData& d) {
  RepresentationTargets out;
  const auto attr = std::find_if(d.attributes.begin(), d.attributes.end(),
                                 [&](const auto& a) { return a.name == r.target_attribute; });
  VLBIAS_CHECK(attr != d.attributes.end(), UsageError,
               "targets.attribute: '{}' is not an audited attribute of '{}'", r.target_attribute,
               r.labels.string());
  out.attribute = static_cast<std::size_t>(attr - d.attributes.begin());
  const std::vector<std::string>& classes = attr->classes;
  for (const auto& [cls, column] : r.target_columns) {
    const auto c = std::find(classes.begin(), classes.end(), cls);
    VLBIAS_CHECK(c != classes.end(), UsageError,
                 "targets.columns: '{}' is not a class of '{}' ({})", cls, attr->name,
                 fmt::join(classes, ", "));
    out.given_classes.push_back(static_cast<std::size_t>(c - classes.begin()));
  }
  VLBIAS_CHECK(out.given_classes.size() + 1 >= classes.size(), UsageError,
               "targets.columns names {} of the {} classes of '{}' ({}); name all, or all but "
               "one (which gets the rest)",
               out.given_classes.size(), classes.size(), attr->name, fmt::join(classes, ", "));
  const Table t = read_table(r.targets.string());
  const Column& key = t.column(r.target_key_column);
  std::vector<const Column*> columns;
  for (const auto& [cls, column] : r.target_columns) columns.push_back(&t.column(column));
  std::unordered_map<std::string, std::vector<double>> by_key;
  for (std::size_t row = 0; row < t.rows; ++row) {
    std::vector<double> shares(classes.size(), stats::kNaN);
    double sum = 0;
    for (std::size_t j = 0; j < columns.size(); ++j) {
      shares[out.given_classes[j]] = target_cell(t, *columns[j], row, r.target_scale);
      sum += shares[out.given_classes[j]];
    }
    if (columns.size() < classes.size()) {
      VLBIAS_CHECK(sum <= 1 + 1e-9, InputError,
                   "'{}' row {}: the target shares sum to {} (more than 1)", t.source,
                   t.line_of_row[row], sum);
      for (double& s : shares) {
        if (std::isnan(s)) s = std::max(0.0, 1 - sum);
      }
    } else {
      VLBIAS_CHECK(std::fabs(sum - 1) <= 1e-6, InputError,
                   "'{}' row {}: the target shares of every class sum to {}, not 1", t.source,
                   t.line_of_row[row], sum);
      for (double& s : shares) s /= sum;
    }
    VLBIAS_CHECK(by_key.emplace(key.text(row), shares).second, InputError,
                 "'{}' row {}: key '{}' appears twice in {}", t.source, t.line_of_row[row],
                 key.text(row), r.target_key_column);
  }
  for (const RepresentationPrompt& p : d.prompts) {
    const auto found = by_key.find(p.key);
    if (found == by_key.end()) {
      out.shares.emplace_back();
      if (std::find(out.missing.begin(), out.missing.end(), p.key) == out.missing.end())
        out.missing.push_back(p.key);
    } else {
      out.shares.emplace_back(found->second);
    }
  }
  return out;
}

AnalysisOutput representation_amplification(const AuditCommonSpec& spec,
                                            const RepresentationAuditSpec& representation,
                                            const RepresentationData& d,
                                            const RepresentationTargets& targets) {
  const RepresentationAuditSpec::Amplification& o = representation.amplification;
  const std::size_t a = targets.attribute, B = o.bootstrap;
  const std::size_t k = d.attributes[a].classes.size(), width = k + 1;
  const std::uint64_t seed = derive_seed(spec.seed, kRepresentationSeedAmplification);
  AnalysisOutput out;
  TableBuilder table("representation_amplification");
  // The prompts compared: a target and at least one observation with a class.
  std::vector<std::size_t> compared;
  std::vector<std::vector<std::uint32_t>> drawn;  // per compared prompt: B * width
  for (std::size_t p = 0; p < d.prompts.size(); ++p) {
    const std::vector<std::uint64_t> all = prompt_counts(d, a, p);
    std::uint64_t n = 0;
    for (std::size_t c = 0; c < k; ++c) n += all[c];
    if (!targets.shares[p] || n == 0) continue;
    compared.push_back(p);
    drawn.push_back(std::move(resample_prompt(d, p, B, seed)[a]));
  }
  Json classes = Json::array();
  for (const std::size_t c : targets.given_classes) {
    const std::string& name = d.attributes[a].classes[c];
    std::vector<double> real, generated;
    std::vector<std::vector<double>> gap_replicates(B);  // [b][prompt]
    Json prompts = Json::array();
    TableBuilder units("units");  // summary.json's mean gap, per prompt (compare-runs pairs them)
    for (std::size_t i = 0; i < compared.size(); ++i) {
      const std::size_t p = compared[i];
      const std::vector<std::uint64_t> all = prompt_counts(d, a, p);
      double n = 0;
      for (std::size_t j = 0; j < k; ++j) n += static_cast<double>(all[j]);
      const double q = (*targets.shares[p])[c], g = static_cast<double>(all[c]) / n;
      real.push_back(q);
      generated.push_back(g);
      std::vector<double> gaps(B);
      for (std::size_t b = 0; b < B; ++b) {
        double nb = 0;
        for (std::size_t j = 0; j < k; ++j) nb += drawn[i][b * width + j];
        gaps[b] = nb > 0 ? drawn[i][b * width + c] / nb - q : stats::kNaN;
        gap_replicates[b].push_back(gaps[b]);
      }
      Json gap{{"estimate", g - q}};
      if (B > 0) {
        stats::Interval ci = stats::percentile_interval(gaps, o.ci, derive_seed(seed, p));
        ci.resamples = B;
        gap["ci"] = to_json(ci);
      }
      prompts.push_back({{"prompt", d.prompts[p].prompt},
                         {"key", d.prompts[p].key},
                         {"n", n},
                         {"real", q},
                         {"generated", g},
                         {"gap", std::move(gap)}});
      table.row();
      table.put("class", name);
      table.put("prompt", d.prompts[p].prompt);
      table.put("key", d.prompts[p].key);
      table.put("n", n);
      table.put("real", q);
      table.put("generated", g);
      table.put("gap", g - q);
      units.row();
      units.put("prompt", d.prompts[p].prompt);
      units.put("gap", g - q);
    }
    if (!compared.empty())
      out.units.emplace_back(units_table_name("gap", {d.attributes[a].name, name}), units.build());
    const auto [mean_json, slope_json] =
        gap_summary_json(real, generated, gap_replicates, o.ci, seed,
                         derive_seed(spec.seed, kRepresentationSeedSlope), c, B);
    classes.push_back({{"class", name},
                       {"prompts", std::move(prompts)},
                       {"mean_gap", std::move(mean_json)},
                       {"slope", std::move(slope_json)}});
  }
  out.json = {{"attribute", d.attributes[a].name},
              {"bootstrap", B},
              {"ci", o.ci},
              {"classes", std::move(classes)},
              {"missing_targets", targets.missing}};
  out.tables.emplace_back("representation_amplification", table.build());
  return out;
}

}  // namespace vlbias::audits_internal
