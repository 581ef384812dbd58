// Agreement between two scorers (include/vlbias/metrics/agreement.h; docs/methods.md#agreement):
// correlations with Fisher z intervals, Cohen's kappa with the Fleiss-Cohen-Everitt standard
// error and a percentile bootstrap, mean differences, and the same per group with a
// Kruskal-Wallis test of whether b - a depends on the group. O(n log n) (the ranks of
// Spearman and Kruskal-Wallis) plus O(B n) for kappa's bootstrap.
#include "vlbias/metrics/agreement.h"

#include <algorithm>
#include <cmath>

#include "vlbias/core/error.h"
#include "vlbias/stats/intervals.h"

namespace vlbias {

namespace {

void check_pairs(std::span<const double> a, std::span<const double> b, const std::string& name_a,
                 const std::string& name_b) {
  VLBIAS_CHECK(a.size() == b.size(), InputError,
               "agreement: '{}' has {} scores and '{}' {}; expected one pair per text", name_a,
               a.size(), name_b, b.size());
  VLBIAS_CHECK(!a.empty(), InputError, "agreement: no pair of scores; expected at least one");
  for (std::size_t i = 0; i < a.size(); ++i) {
    VLBIAS_CHECK(std::isfinite(a[i]) && std::isfinite(b[i]), InputError,
                 "agreement: score {} of '{}' at position {} is not finite (NaN or infinite "
                 "scores are refused)",
                 std::isfinite(a[i]) ? b[i] : a[i], std::isfinite(a[i]) ? name_b : name_a, i);
  }
}

// The cell of a pair in the 2x2 table: 2 * (A positive) + (B positive).
std::size_t cell_of(double a, double b, const AgreementOptions& o) {
  return 2 * static_cast<std::size_t>(a >= o.threshold_a) +
         static_cast<std::size_t>(b >= o.threshold_b);
}

struct KappaPoint {
  double po = stats::kNaN, pe = stats::kNaN, kappa = stats::kNaN;
  double var = stats::kNaN, var_null = stats::kNaN;
};

// Kappa and its two variances from the cell counts (agreement.h for the formulas). Kappa is
// computed as 1 - q_o / q_e with the disagreement proportions q_o = p01 + p10 and
// q_e = 1 - pe = pA0 pB1 + pA1 pB0, which avoids the cancellation in 1 - pe. Undefined
// (NaN) when q_e = 0: both scorers give every text one and the same label.
KappaPoint kappa_from_cells(const std::array<std::size_t, 4>& cells) {
  KappaPoint k;
  const double n = static_cast<double>(cells[0] + cells[1] + cells[2] + cells[3]);
  if (n == 0) return k;
  const double p00 = cells[0] / n, p01 = cells[1] / n, p10 = cells[2] / n, p11 = cells[3] / n;
  const double a0 = p00 + p01, a1 = p10 + p11;  // A's margins (rows)
  const double b0 = p00 + p10, b1 = p01 + p11;  // B's margins (columns)
  k.po = p00 + p11;
  k.pe = a0 * b0 + a1 * b1;
  const double qe = a0 * b1 + a1 * b0;
  if (!(qe > 0)) return k;
  k.kappa = 1.0 - (p01 + p10) / qe;
  const double u = 1.0 - k.kappa;
  // Fleiss, Cohen and Everitt (1969), as statsmodels' cohens_kappa computes them.
  const double term_a =
      p00 * std::pow(1.0 - (a0 + b0) * u, 2) + p11 * std::pow(1.0 - (a1 + b1) * u, 2);
  const double term_b = u * u * (p01 * std::pow(b0 + a1, 2) + p10 * std::pow(b1 + a0, 2));
  const double term_c = std::pow(k.kappa - k.pe * u, 2);
  k.var = std::max(0.0, term_a + term_b - term_c) / (qe * qe * n);
  const double margin_term = a0 * b0 * (a0 + b0) + a1 * b1 * (a1 + b1);
  k.var_null = std::max(0.0, k.pe + k.pe * k.pe - margin_term) / (qe * qe * n);
  return k;
}

// Kappa's percentile bootstrap: stats::bootstrap_ci's draws over the rows ordered by cell, so
// the cell of resampled row i is the number of cell boundaries at or below i.
stats::Interval kappa_bootstrap(const std::array<std::size_t, 4>& cells,
                                const AgreementOptions& o) {
  const std::size_t n = cells[0] + cells[1] + cells[2] + cells[3];
  const std::size_t e0 = cells[0], e1 = e0 + cells[1], e2 = e1 + cells[2];
  return stats::bootstrap_ci(
      n,
      [=](std::span<const std::uint32_t> idx) {
        std::array<std::size_t, 4> c{};
        for (const std::uint32_t i : idx) {
          ++c[static_cast<std::size_t>(i >= e0) + (i >= e1) + (i >= e2)];
        }
        return kappa_from_cells(c).kappa;
      },
      o.bootstrap, o.level, o.seed);
}

CorrelationAgreement correlation_agreement(std::span<const double> a, std::span<const double> b,
                                           double level, bool rank) {
  const stats::TestResult t = rank ? stats::spearman(a, b) : stats::pearson(a, b);
  CorrelationAgreement out;
  out.estimate = t.statistic;
  out.p_value = t.p_value;
  out.note = t.note;
  const double n = static_cast<double>(a.size());
  double se = stats::kNaN;
  if (a.size() >= 4) {
    // Bonett and Wright (2000) for Spearman's rho; Fisher's 1 / sqrt(n - 3) for Pearson's r.
    se = rank ? std::sqrt((1.0 + t.statistic * t.statistic / 2.0) / (n - 3.0))
              : 1.0 / std::sqrt(n - 3.0);
  }
  out.ci = stats::fisher_z_interval(t.statistic, se, level);
  if (a.size() < 4 && !std::isnan(t.statistic)) {
    out.ci.note = fmt::format("{} pairs: the Fisher z interval needs at least 4", a.size());
  }
  return out;
}

MeanDifference mean_difference(std::span<const double> a, std::span<const double> b, double level) {
  MeanDifference out;
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = b[i] - a[i];
  out.mean_a = stats::mean(a);
  out.mean_b = stats::mean(b);
  out.estimate = stats::mean(d);
  out.sd = std::sqrt(stats::variance(d));
  out.ci = stats::t_mean_interval(d, level);
  const stats::TestResult t = stats::paired_t(b, a);
  out.t = t.statistic;
  out.p_value = t.p_value;
  out.note = t.note;
  return out;
}

// "every score of 'x' is below its threshold 0.5 (all negative)", or "" when both labels occur.
std::string one_label_note(std::size_t positives, std::size_t n, const std::string& name,
                           double threshold) {
  if (positives != 0 && positives != n) return "";
  return fmt::format(
      "every score of '{}' is {} its threshold {} (all {}): kappa compares "
      "one label with the other scorer's",
      name, positives == 0 ? "below" : "at or above", threshold,
      positives == 0 ? "negative" : "positive");
}

}  // namespace

KappaAgreement cohen_kappa(std::span<const double> a, std::span<const double> b,
                           const AgreementOptions& options, bool with_bootstrap) {
  check_pairs(a, b, "a", "b");
  KappaAgreement out;
  for (std::size_t i = 0; i < a.size(); ++i) ++out.cells[cell_of(a[i], b[i], options)];
  const KappaPoint k = kappa_from_cells(out.cells);
  out.observed = k.po;
  out.expected = k.pe;
  out.kappa = k.kappa;
  out.ci.level = out.bootstrap.level = options.level;
  out.bootstrap.seed = options.seed;
  out.bootstrap.note = "no bootstrap requested";
  if (std::isnan(k.kappa)) {
    out.note = "both scorers give every text the same label: kappa is undefined (0 / 0)";
    out.ci.note = out.bootstrap.note = out.note;
    return out;
  }
  out.se = std::sqrt(k.var);
  out.se_null = std::sqrt(k.var_null);
  const auto& c = out.cells;
  if (c[0] + c[1] == 0 || c[2] + c[3] == 0 || c[0] + c[2] == 0 || c[1] + c[3] == 0) {
    // One scorer has a single label: pe = po, so kappa = 0 and both variances are 0.
    out.note =
        "one scorer gives every text the same label: kappa is 0 by construction, its "
        "standard errors are 0 and there is no test";
  } else if (out.se_null > 0) {
    out.z = out.kappa / out.se_null;
    out.p_value = stats::normal_two_sided_p(out.z);
  }
  if (a.size() < 2) {
    out.ci.note = "1 text: the interval needs at least 2";
  } else {
    const double z = stats::normal_quantile(0.5 + options.level / 2.0);
    out.ci.lower = out.kappa - z * out.se;
    out.ci.upper = out.kappa + z * out.se;
  }
  if (with_bootstrap && options.bootstrap > 0) out.bootstrap = kappa_bootstrap(out.cells, options);
  return out;
}

AgreementSummary score_agreement(std::span<const double> a, std::span<const double> b,
                                 const AgreementOptions& options, bool with_bootstrap,
                                 const std::string& name_a, const std::string& name_b) {
  check_pairs(a, b, name_a, name_b);
  AgreementSummary s;
  s.n = a.size();
  s.pearson = correlation_agreement(a, b, options.level, false);
  s.spearman = correlation_agreement(a, b, options.level, true);
  s.kappa = cohen_kappa(a, b, options, with_bootstrap);
  const auto& c = s.kappa.cells;
  const double n = static_cast<double>(s.n);
  s.percent_agreement = static_cast<double>(c[0] + c[3]) / n;
  s.positive_rate_a = static_cast<double>(c[2] + c[3]) / n;
  s.positive_rate_b = static_cast<double>(c[1] + c[3]) / n;
  s.difference = mean_difference(a, b, options.level);
  for (const std::string& note : {one_label_note(c[2] + c[3], s.n, name_a, options.threshold_a),
                                  one_label_note(c[1] + c[3], s.n, name_b, options.threshold_b)}) {
    if (!note.empty()) s.notes.push_back(note);
  }
  return s;
}

namespace {

void check_options(const AgreementOptions& o) {
  VLBIAS_CHECK(std::isfinite(o.threshold_a) && std::isfinite(o.threshold_b), InputError,
               "agreement: thresholds {} and {}; expected finite numbers", o.threshold_a,
               o.threshold_b);
  VLBIAS_CHECK(o.level > 0.0 && o.level < 1.0, InputError,
               "agreement: confidence level {} is outside (0, 1)", o.level);
  stats::check_resamples(o.bootstrap, "agreement bootstrap");
}

// The score column `name` (NaN = missing). An infinite value can only come from a table built
// in memory (the readers refuse it), and is refused with its row.
const std::vector<double>& score_column(const Table& table, const std::string& name) {
  const std::vector<double>& v = table.numeric(name, /*allow_missing=*/true);
  for (std::size_t r = 0; r < v.size(); ++r) {
    VLBIAS_CHECK(!std::isinf(v[r]), InputError,
                 "'{}' row {} holds {} in column '{}'; expected a finite score", table.source,
                 r < table.line_of_row.size() ? table.line_of_row[r] : r + 1, v[r], name);
  }
  return v;
}

GroupAgreement group_agreement(std::span<const double> a, std::span<const double> b,
                               const AgreementOptions& o) {
  GroupAgreement g;
  g.n = a.size();
  g.difference = mean_difference(a, b, o.level);
  g.kappa = cohen_kappa(a, b, o, /*with_bootstrap=*/false);
  const auto& c = g.kappa.cells;
  const double n = static_cast<double>(g.n);
  g.positive_rate_a = static_cast<double>(c[2] + c[3]) / n;
  g.positive_rate_b = static_cast<double>(c[1] + c[3]) / n;
  g.disagreements = c[1] + c[2];
  g.disagreement_rate = static_cast<double>(g.disagreements) / n;
  g.disagreement_ci = stats::wilson_interval(g.disagreements, g.n, o.level);
  if (g.n == 1) {
    g.disagreement_ci.lower = g.disagreement_ci.upper = stats::kNaN;
    g.note = "1 row: no interval";
    g.disagreement_ci.note = g.note;
  }
  return g;
}

// Per group: agreement of its rows, and Kruskal-Wallis of b - a over the groups.
void add_groups(AgreementReport& report, const Table& table, const std::vector<bool>& complete,
                const std::vector<double>& col_a, const std::vector<double>& col_b,
                const AgreementOptions& o) {
  const Grouping grouping = group_by(table, report.group_columns, complete);
  report.rows_without_group = grouping.rows_with_missing_key;
  const std::size_t k = grouping.size();
  // Rows of each group, in table order (a counting sort: O(n)).
  std::vector<std::size_t> start(k + 1, 0);
  for (const std::uint32_t g : grouping.group_of_row) {
    if (g != Grouping::kNoGroup) ++start[g + 1];
  }
  for (std::size_t g = 0; g < k; ++g) start[g + 1] += start[g];
  std::vector<double> a(start[k]), b(start[k]), d(start[k]);
  std::vector<std::uint32_t> label(start[k]);
  std::vector<std::size_t> next(start.begin(), start.end() - 1);
  for (std::size_t r = 0; r < table.rows; ++r) {
    const std::uint32_t g = grouping.group_of_row[r];
    if (g == Grouping::kNoGroup) continue;
    const std::size_t i = next[g]++;
    a[i] = col_a[r];
    b[i] = col_b[r];
    d[i] = col_b[r] - col_a[r];
    label[i] = g;
  }
  for (std::size_t g = 0; g < k; ++g) {
    const std::size_t len = start[g + 1] - start[g];
    GroupAgreement ga = group_agreement(std::span(a).subspan(start[g], len),
                                        std::span(b).subspan(start[g], len), o);
    ga.key = grouping.keys[g];
    report.groups.push_back(std::move(ga));
  }
  if (k < 2) {
    report.group_test.test = "kruskal";
    report.group_test.note =
        fmt::format("{} group(s): comparing b - a across groups needs at least 2", k);
    return;
  }
  report.group_test = stats::kruskal_wallis(stats::GroupedValues{d, label, k});
}

}  // namespace

AgreementReport agreement_analysis(const Table& table, const std::string& score_a,
                                   const std::string& score_b,
                                   const std::vector<std::string>& group_columns,
                                   const AgreementOptions& options) {
  check_options(options);
  VLBIAS_CHECK(score_a != score_b, InputError,
               "agreement: both scorers are column '{}'; expected two different columns", score_a);
  AgreementReport report;
  report.score_a = score_a;
  report.score_b = score_b;
  report.group_columns = group_columns;
  report.rows = table.rows;
  const std::vector<double>& col_a = score_column(table, score_a);
  const std::vector<double>& col_b = score_column(table, score_b);
  std::vector<bool> complete(table.rows);
  std::vector<double> a, b;
  for (std::size_t r = 0; r < table.rows; ++r) {
    complete[r] = !std::isnan(col_a[r]) && !std::isnan(col_b[r]);
    if (!complete[r]) continue;
    a.push_back(col_a[r]);
    b.push_back(col_b[r]);
  }
  report.excluded = table.rows - a.size();
  VLBIAS_CHECK(a.size() >= 3, InputError,
               "agreement: '{}' has {} row(s) with both '{}' and '{}' present ({} of {} excluded "
               "for a missing score); expected at least 3",
               table.source, a.size(), score_a, score_b, report.excluded, table.rows);
  report.overall = score_agreement(a, b, options, true, score_a, score_b);
  if (report.excluded > 0) {
    report.notes.push_back(fmt::format("{} of {} rows excluded: '{}' or '{}' is missing",
                                       report.excluded, table.rows, score_a, score_b));
  }
  if (!group_columns.empty()) {
    add_groups(report, table, complete, col_a, col_b, options);
    if (report.rows_without_group > 0) {
      report.notes.push_back(fmt::format(
          "{} complete row(s) have no group (a missing group cell): in the overall results only",
          report.rows_without_group));
    }
  }
  return report;
}

}  // namespace vlbias
