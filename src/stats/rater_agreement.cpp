// Agreement of several raters: Krippendorff's alpha, Fleiss' kappa, pairwise Cohen's kappa,
// each with a percentile bootstrap over units (include/vlbias/stats/rater_agreement.h, where
// the formulas are; docs/methods.md#rater-agreement).
#include <algorithm>
#include <cmath>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/stats/rater_agreement.h"

namespace vlbias::stats {

namespace {

// The category counts of a set of units: unit u holds (category[i], count[i]) for
// i in [offsets[u], offsets[u + 1]) and m[u] ratings.
struct UnitCounts {
  std::vector<std::size_t> offsets{0};
  std::vector<std::uint32_t> category;
  std::vector<double> count;
  std::vector<double> m;
  std::size_t size() const { return m.size(); }
};

// The units of `data` whose number of ratings passes `keep`, as category counts.
UnitCounts unit_counts(const RatingData& data, const std::function<bool(std::size_t)>& keep) {
  UnitCounts out;
  std::vector<std::uint32_t> cats;
  for (std::size_t u = 0; u < data.unit_count(); ++u) {
    const std::size_t begin = data.offsets[u], end = data.offsets[u + 1];
    if (!keep(end - begin)) continue;
    cats.assign(data.category_of.begin() + begin, data.category_of.begin() + end);
    std::sort(cats.begin(), cats.end());
    for (std::size_t i = 0; i < cats.size(); ++i) {
      if (i == 0 || cats[i] != cats[i - 1]) {
        out.category.push_back(cats[i]);
        out.count.push_back(0.0);
      }
      out.count.back() += 1.0;
    }
    out.offsets.push_back(out.category.size());
    out.m.push_back(static_cast<double>(end - begin));
  }
  return out;
}

std::vector<std::uint32_t> all_units(std::size_t n) {
  std::vector<std::uint32_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<std::uint32_t>(i);
  return idx;
}

struct Disagreements {
  double observed = kNaN, expected = kNaN;  // D_o, D_e
  double estimate() const { return expected > 0.0 ? 1.0 - observed / expected : kNaN; }
};

// Krippendorff's D_o and D_e over the units idx (repeats allowed) of the pairable units.
Disagreements alpha_parts(const UnitCounts& units, std::span<const std::uint32_t> idx,
                          RatingScale scale, const std::vector<double>& values) {
  const std::size_t k = values.size();
  std::vector<double> n_c(k, 0.0), x(k, 0.0);
  for (std::uint32_t u : idx) {
    for (std::size_t i = units.offsets[u]; i < units.offsets[u + 1]; ++i) {
      n_c[units.category[i]] += units.count[i];
    }
  }
  double n = 0.0;
  for (double c : n_c) n += c;
  Disagreements d;
  if (n < 2.0) return d;
  double expected = 0.0;
  if (scale == RatingScale::Nominal) {
    for (double c : n_c) expected += c * (n - c);  // n^2 - sum n_c^2
  } else {
    double cumulative = 0.0;  // ordinal: the midrank position M_c of category c
    for (std::size_t c = 0; c < k; ++c) {
      x[c] = scale == RatingScale::Interval ? values[c] : cumulative + n_c[c] / 2.0;
      cumulative += n_c[c];
    }
    double mean = 0.0;
    for (std::size_t c = 0; c < k; ++c) mean += n_c[c] * x[c];
    mean /= n;
    for (std::size_t c = 0; c < k; ++c) expected += n_c[c] * (x[c] - mean) * (x[c] - mean);
    expected *= 2.0 * n;
  }
  double observed = 0.0;
  for (std::uint32_t u : idx) {
    const std::size_t begin = units.offsets[u], end = units.offsets[u + 1];
    if (end - begin < 2) continue;  // one category: no disagreement in this unit
    const double m = units.m[u];
    double f = 0.0;
    if (scale == RatingScale::Nominal) {
      for (std::size_t i = begin; i < end; ++i) f += units.count[i] * (m - units.count[i]);
    } else {
      double mean_u = 0.0;
      for (std::size_t i = begin; i < end; ++i) mean_u += units.count[i] * x[units.category[i]];
      mean_u /= m;
      for (std::size_t i = begin; i < end; ++i) {
        const double dx = x[units.category[i]] - mean_u;
        f += units.count[i] * dx * dx;
      }
      f *= 2.0 * m;
    }
    observed += f / (m - 1.0);
  }
  d.observed = observed / n;
  d.expected = expected / (n * (n - 1.0));
  return d;
}

// Fleiss' D_o and D_e over the units idx of `units` (all with m ratings).
Disagreements fleiss_parts(const UnitCounts& units, std::span<const std::uint32_t> idx,
                           std::size_t categories) {
  std::vector<double> n_c(categories, 0.0);
  double observed = 0.0, m = 0.0;
  for (std::uint32_t u : idx) {
    m = units.m[u];
    double f = 0.0;  // m^2 - sum_c n_uc^2
    for (std::size_t i = units.offsets[u]; i < units.offsets[u + 1]; ++i) {
      n_c[units.category[i]] += units.count[i];
      f += units.count[i] * (m - units.count[i]);
    }
    observed += f / (m * (m - 1.0));
  }
  Disagreements d;
  const double n_units = static_cast<double>(idx.size());
  if (idx.empty()) return d;
  const double total = n_units * m;
  double expected = 0.0;  // 1 - sum_c p_c^2 = sum_c p_c (1 - p_c)
  for (double c : n_c) expected += (c / total) * ((total - c) / total);
  d.observed = observed / n_units;
  d.expected = expected;
  return d;
}

// Cohen's weighted D_o and D_e over the rating pairs idx of (a_cat, b_cat).
Disagreements cohen_parts(const std::vector<std::uint32_t>& a_cat,
                          const std::vector<std::uint32_t>& b_cat,
                          std::span<const std::uint32_t> idx, std::size_t categories,
                          KappaWeights weights) {
  std::vector<double> r(categories, 0.0), s(categories, 0.0);
  double observed = 0.0;
  for (std::uint32_t p : idx) {
    const double i = a_cat[p], j = b_cat[p];
    r[a_cat[p]] += 1.0;
    s[b_cat[p]] += 1.0;
    observed += weights == KappaWeights::None     ? (i != j ? 1.0 : 0.0)
                : weights == KappaWeights::Linear ? std::fabs(i - j)
                                                  : (i - j) * (i - j);
  }
  const double n = static_cast<double>(idx.size());
  Disagreements d;
  if (idx.empty()) return d;
  double expected = 0.0;  // sum_ij w_ij r_i s_j / n
  if (weights == KappaWeights::None) {
    for (std::size_t c = 0; c < categories; ++c) expected += r[c] * (n - s[c]);
    expected /= n;
  } else if (weights == KappaWeights::Linear) {
    // sum_j |i - j| s_j from the counts and position sums below and above i (exact integers).
    double s_total = 0.0, s_positions = 0.0, below = 0.0, below_positions = 0.0;
    for (std::size_t c = 0; c < categories; ++c) {
      s_total += s[c];
      s_positions += static_cast<double>(c) * s[c];
    }
    for (std::size_t c = 0; c < categories; ++c) {
      const double i = static_cast<double>(c);
      const double above = s_total - below - s[c];
      const double above_positions = s_positions - below_positions - i * s[c];
      expected += r[c] * (i * below - below_positions + above_positions - i * above);
      below += s[c];
      below_positions += i * s[c];
    }
    expected /= n;
  } else {
    // sum_ij r_i s_j (i - j)^2 / n = SS_r + SS_s + n (mean_r - mean_s)^2.
    double mean_r = 0.0, mean_s = 0.0, ss = 0.0;
    for (std::size_t c = 0; c < categories; ++c) {
      mean_r += static_cast<double>(c) * r[c];
      mean_s += static_cast<double>(c) * s[c];
    }
    mean_r /= n;
    mean_s /= n;
    for (std::size_t c = 0; c < categories; ++c) {
      const double i = static_cast<double>(c);
      ss += r[c] * (i - mean_r) * (i - mean_r) + s[c] * (i - mean_s) * (i - mean_s);
    }
    expected = ss + n * (mean_r - mean_s) * (mean_r - mean_s);
  }
  d.observed = observed / n;
  d.expected = expected / n;
  return d;
}

// Fills estimate, disagreements and the bootstrap interval of `out` from `parts`, which
// computes the coefficient's parts over a list of unit indices.
void finish_coefficient(AgreementCoefficient& out, std::size_t n_units,
                        const BootstrapRequest& bootstrap,
                        const std::function<Disagreements(std::span<const std::uint32_t>)>& parts) {
  out.units = n_units;
  out.ci.level = bootstrap.level;
  out.ci.seed = bootstrap.seed;
  const std::vector<std::uint32_t> idx = all_units(n_units);
  const Disagreements d = parts(idx);
  out.observed_disagreement = d.observed;
  out.expected_disagreement = d.expected;
  out.estimate = d.estimate();
  if (std::isnan(out.estimate)) {
    out.ci.note = "the estimate is undefined";
    return;
  }
  if (bootstrap.resamples == 0) {
    out.ci.note = "no bootstrap requested";
    return;
  }
  out.ci = bootstrap_ci(
      n_units, [&](std::span<const std::uint32_t> sample) { return parts(sample).estimate(); },
      bootstrap.resamples, bootstrap.level, bootstrap.seed);
}

// The note of a coefficient whose expected disagreement is 0.
std::string single_category_note(const Disagreements& d, const char* what) {
  if (!(d.expected == 0.0)) return "";
  return fmt::format(
      "every rating{} is in one category: the raters agree completely but chance agreement is "
      "1 too, so the coefficient is 0 / 0 (undefined)",
      what);
}

void check_numbers(const RatingData& data, const char* what) {
  VLBIAS_CHECK(data.numeric(), InputError,
               "{} needs numeric ratings (an order and distances); the ratings are text such as "
               "'{}': use the nominal scale and no weights, or numbers",
               what, data.categories.empty() ? "" : data.categories.front());
}

}  // namespace

bool RatingData::numeric() const {
  return std::none_of(values.begin(), values.end(), [](double v) { return std::isnan(v); });
}

AgreementCoefficient krippendorff_alpha(const RatingData& data, RatingScale scale,
                                        const BootstrapRequest& bootstrap) {
  if (scale != RatingScale::Nominal) check_numbers(data, "ordinal or interval alpha");
  const UnitCounts units = unit_counts(data, [](std::size_t m) { return m >= 2; });
  AgreementCoefficient out;
  for (double m : units.m) out.ratings += static_cast<std::size_t>(m);
  const auto parts = [&](std::span<const std::uint32_t> idx) {
    return alpha_parts(units, idx, scale, data.values);
  };
  finish_coefficient(out, units.size(), bootstrap, parts);
  if (units.size() == 0) {
    out.note = "no unit has 2 or more ratings: alpha needs pairable values";
  } else {
    out.note = single_category_note(parts(all_units(units.size())), " in the pairable units");
  }
  return out;
}

AgreementCoefficient fleiss_kappa(const RatingData& data, const BootstrapRequest& bootstrap) {
  std::size_t m = 0, rated = 0;
  for (std::size_t u = 0; u < data.unit_count(); ++u) {
    const std::size_t size = data.offsets[u + 1] - data.offsets[u];
    m = std::max(m, size);
    rated += size > 0;
  }
  AgreementCoefficient out;
  if (m < 2) {
    out.note = "no unit has 2 or more ratings: Fleiss' kappa needs at least 2 per unit";
    out.ci.note = "the estimate is undefined";
    return out;
  }
  const UnitCounts units = unit_counts(data, [m](std::size_t size) { return size == m; });
  out.ratings = units.size() * m;
  const auto parts = [&](std::span<const std::uint32_t> idx) {
    return fleiss_parts(units, idx, data.categories.size());
  };
  finish_coefficient(out, units.size(), bootstrap, parts);
  std::string note = single_category_note(parts(all_units(units.size())), "");
  if (units.size() < rated) {
    note += fmt::format(
        "{}{} of {} rated units have fewer than {} ratings and are left out (Fleiss' kappa "
        "needs the same number of ratings per unit; Krippendorff's alpha uses them all)",
        note.empty() ? "" : "; ", rated - units.size(), rated, m);
  }
  out.note = note;
  return out;
}

AgreementCoefficient cohen_kappa_pair(const RatingData& data, std::size_t rater_a,
                                      std::size_t rater_b, KappaWeights weights,
                                      const BootstrapRequest& bootstrap) {
  VLBIAS_CHECK(rater_a < data.raters.size() && rater_b < data.raters.size() && rater_a != rater_b,
               InternalError, "cohen_kappa_pair: raters {} and {} of {}", rater_a, rater_b,
               data.raters.size());
  if (weights != KappaWeights::None) check_numbers(data, "weighted kappa");
  std::vector<std::uint32_t> a_cat, b_cat;  // per unit both rated, in unit order
  for (std::size_t u = 0; u < data.unit_count(); ++u) {
    std::uint32_t a = Column::kMissing, b = Column::kMissing;
    for (std::size_t i = data.offsets[u]; i < data.offsets[u + 1]; ++i) {
      if (data.rater_of[i] == rater_a) a = data.category_of[i];
      if (data.rater_of[i] == rater_b) b = data.category_of[i];
    }
    if (a == Column::kMissing || b == Column::kMissing) continue;
    a_cat.push_back(a);
    b_cat.push_back(b);
  }
  AgreementCoefficient out;
  out.ratings = 2 * a_cat.size();
  const std::size_t k = data.categories.size();
  const auto parts = [&](std::span<const std::uint32_t> idx) {
    return cohen_parts(a_cat, b_cat, idx, k, weights);
  };
  finish_coefficient(out, a_cat.size(), bootstrap, parts);
  if (a_cat.empty()) {
    out.note = fmt::format("no unit was rated by both '{}' and '{}'", data.raters[rater_a],
                           data.raters[rater_b]);
  } else {
    out.note = single_category_note(parts(all_units(a_cat.size())), " of the two raters");
  }
  return out;
}

RaterAgreement rater_agreement(const RatingData& data, const RaterAgreementOptions& options) {
  RaterAgreement out;
  out.units = data.unit_count();
  out.raters = data.raters.size();
  out.ratings = data.size();
  out.ratings_per_unit_min = out.units == 0 ? 0 : data.size();
  for (std::size_t u = 0; u < data.unit_count(); ++u) {
    const std::size_t m = data.offsets[u + 1] - data.offsets[u];
    out.units_unrated += m == 0;
    out.units_single_rating += m == 1;
    out.ratings_per_unit_min = std::min(out.ratings_per_unit_min, m);
    out.ratings_per_unit_max = std::max(out.ratings_per_unit_max, m);
  }
  if (out.raters < 2) {
    const std::string note = fmt::format(
        "{} rater(s): agreement needs at least 2 raters, so every coefficient is undefined",
        out.raters);
    out.notes.push_back(note);
    for (AgreementCoefficient* c : {&out.alpha, &out.fleiss}) {
      c->note = note;
      c->ci.level = options.bootstrap.level;
      c->ci.note = "the estimate is undefined";
    }
    out.cohen_note = note;
    return out;
  }
  out.alpha = krippendorff_alpha(data, options.scale, options.bootstrap);
  out.fleiss = fleiss_kappa(data, options.bootstrap);
  if (out.units_single_rating > 0) {
    out.notes.push_back(fmt::format(
        "{} unit(s) have a single rating: Krippendorff's alpha drops them (no pair to compare)",
        out.units_single_rating));
  }
  const std::size_t pairs = out.raters * (out.raters - 1) / 2;
  if (pairs > options.max_pairs) {
    out.cohen_note = fmt::format(
        "{} raters make {} pairs: pairwise Cohen's kappa is reported up to {} pairs (use "
        "Krippendorff's alpha or Fleiss' kappa for many raters)",
        out.raters, pairs, options.max_pairs);
    return out;
  }
  double sum = 0.0;
  std::size_t defined = 0;
  for (std::size_t a = 0; a < out.raters; ++a) {
    for (std::size_t b = a + 1; b < out.raters; ++b) {
      PairKappa p{a, b, cohen_kappa_pair(data, a, b, options.weights, options.bootstrap)};
      if (!std::isnan(p.kappa.estimate)) {
        sum += p.kappa.estimate;
        ++defined;
      }
      out.cohen.push_back(std::move(p));
    }
  }
  if (defined > 0) {
    out.cohen_mean = sum / static_cast<double>(defined);
    if (defined < out.cohen.size()) {
      out.cohen_note = fmt::format("the mean is over the {} of {} pairs whose kappa is defined",
                                   defined, out.cohen.size());
    }
  } else {
    out.cohen_note = "no pair of raters has a defined kappa";
  }
  return out;
}

}  // namespace vlbias::stats
