// Skew@k, MaxSkew@k and NDKL (paper 001, docs/methods.md#skew; Geyik et al. 2019).
#include "vlbias/metrics/ranking_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace {

// Checks the shape of `items` and returns the number of items of each class.
std::vector<std::size_t> validated_class_counts(const RankedItems& items) {
  const std::size_t n = items.scores.size();
  const std::size_t classes = items.class_names.size();
  VLBIAS_CHECK(items.labels.size() == n, InputError,
               "Ranking input has {} scores but {} class labels; expected one label per item.", n,
               items.labels.size());
  VLBIAS_CHECK(n > 0, InputError, "Ranking input has no items; expected at least one to rank.");
  VLBIAS_CHECK(classes >= 2, InputError,
               "Ranking input has {} class(es); Skew@k and NDKL need at least two classes.",
               classes);
  std::vector<std::size_t> counts(classes, 0);
  for (std::size_t i = 0; i < n; ++i) {
    VLBIAS_CHECK(items.labels[i] < classes, InputError,
                 "Ranking item {} has class code {}; expected a code below {} (the number of "
                 "classes).",
                 i, items.labels[i], classes);
    ++counts[items.labels[i]];
  }
  for (std::size_t c = 0; c < classes; ++c) {
    VLBIAS_CHECK(counts[c] > 0, InputError,
                 "Ranking class '{}' has no item; every class must occur in the data.",
                 items.class_names[c]);
  }
  return counts;
}

std::vector<double> desired_from_counts(const std::vector<std::size_t>& counts, std::size_t n,
                                        DesiredDistribution desired) {
  std::vector<double> q(counts.size());
  for (std::size_t c = 0; c < counts.size(); ++c) {
    q[c] = desired == DesiredDistribution::Uniform
               ? 1.0 / static_cast<double>(counts.size())
               : static_cast<double>(counts[c]) / static_cast<double>(n);
  }
  return q;
}

}  // namespace

std::string to_string(DesiredDistribution d) {
  return d == DesiredDistribution::Uniform ? "uniform" : "base-rate";
}

std::string to_string(AbsentClass a) {
  return a == AbsentClass::NegativeInfinity ? "-inf" : "zero";
}

DesiredDistribution parse_desired_distribution(const std::string& text) {
  if (text == "uniform") return DesiredDistribution::Uniform;
  if (text == "base-rate") return DesiredDistribution::BaseRate;
  VLBIAS_FAIL(UsageError, "Unknown desired distribution '{}'; expected 'uniform' or 'base-rate'.",
              text);
}

AbsentClass parse_absent_class(const std::string& text) {
  if (text == "-inf") return AbsentClass::NegativeInfinity;
  if (text == "zero") return AbsentClass::Zero;
  VLBIAS_FAIL(UsageError, "Unknown absent-class rule '{}'; expected '-inf' or 'zero'.", text);
}

std::vector<std::size_t> rank_order(const std::vector<double>& scores) {
  for (std::size_t i = 0; i < scores.size(); ++i) {
    VLBIAS_CHECK(!std::isnan(scores[i]), InputError,
                 "Ranking item {} has a NaN score; expected a number to rank by.", i);
  }
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Descending by score; stable_sort keeps input order among equal scores.
  std::stable_sort(order.begin(), order.end(),
                   [&scores](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  return order;
}

std::vector<double> desired_distribution(const RankedItems& items, DesiredDistribution desired) {
  return desired_from_counts(validated_class_counts(items), items.scores.size(), desired);
}

SkewResult skew_at_k(const RankedItems& items, const SkewOptions& options) {
  SkewResult r;
  r.class_counts = validated_class_counts(items);
  r.n = items.scores.size();
  r.k = options.k;
  VLBIAS_CHECK(options.k >= 1 && options.k <= r.n, UsageError,
               "Skew@k needs k between 1 and {} (the number of ranked items); got k = {}.", r.n,
               options.k);
  const std::vector<std::size_t> order = rank_order(items.scores);
  r.desired = desired_from_counts(r.class_counts, r.n, options.desired);
  const std::size_t classes = items.class_names.size();
  r.topk_counts.assign(classes, 0);
  for (std::size_t i = 0; i < options.k; ++i) ++r.topk_counts[items.labels[order[i]]];
  // Skew@k(c) = ln(p_topk(c) / p_desired(c)), p_topk(c) = count_topk(c) / k
  // (Geyik et al. 2019, eq. 1); MaxSkew@k = max_c Skew@k(c) (eq. 2).
  r.skew.resize(classes);
  r.max_skew = -std::numeric_limits<double>::infinity();
  for (std::size_t c = 0; c < classes; ++c) {
    if (r.topk_counts[c] == 0) {
      r.skew[c] =
          options.absent == AbsentClass::Zero ? 0.0 : -std::numeric_limits<double>::infinity();
    } else {
      const double p = static_cast<double>(r.topk_counts[c]) / static_cast<double>(options.k);
      r.skew[c] = std::log(p / r.desired[c]);
    }
    r.max_skew = std::max(r.max_skew, r.skew[c]);
  }
  return r;
}

NdklResult ndkl(const RankedItems& items, DesiredDistribution desired) {
  NdklResult r;
  r.class_counts = validated_class_counts(items);
  r.n = items.scores.size();
  r.desired = desired_from_counts(r.class_counts, r.n, desired);
  const std::vector<std::size_t> order = rank_order(items.scores);
  const std::size_t classes = items.class_names.size();
  std::vector<std::size_t> prefix(classes, 0);
  // NDKL = (1/Z) sum_{i=1..n} KL(D_top_i || D_desired) / log2(i+1),
  // Z = sum_{i=1..n} 1/log2(i+1) (Geyik et al. 2019, eq. 4), with
  // KL(P || Q) = sum_c P(c) ln(P(c) / Q(c)) and 0 ln 0 = 0.
  double weighted = 0.0;
  double z = 0.0;
  for (std::size_t i = 1; i <= r.n; ++i) {
    ++prefix[items.labels[order[i - 1]]];
    double kl = 0.0;
    for (std::size_t c = 0; c < classes; ++c) {
      if (prefix[c] == 0) continue;
      const double p = static_cast<double>(prefix[c]) / static_cast<double>(i);
      kl += p * std::log(p / r.desired[c]);
    }
    const double discount = 1.0 / std::log2(static_cast<double>(i) + 1.0);
    weighted += kl * discount;
    z += discount;
  }
  r.ndkl = weighted / z;
  return r;
}

void set_classes(RankedItems& items, const Table& table, const std::string& attribute) {
  const Grouping grouping = group_by(table, {attribute});
  if (grouping.rows_with_missing_key > 0) {
    for (std::size_t row = 0; row < table.rows; ++row) {
      VLBIAS_CHECK(grouping.group_of_row[row] != Grouping::kNoGroup, InputError,
                   "{}: line {} has no value in attribute column '{}'; every ranked item needs "
                   "a class ({} row(s) lack one).",
                   table.source, table.line_of_row[row], attribute, grouping.rows_with_missing_key);
    }
  }
  items.labels = grouping.group_of_row;
  items.class_names.clear();
  for (const auto& key : grouping.keys) items.class_names.push_back(key.front());
  VLBIAS_CHECK(items.class_names.size() >= 2 || table.rows == 0, InputError,
               "{}: attribute column '{}' has {} class(es); ranking metrics need at least two.",
               table.source, attribute, items.class_names.size());
  VLBIAS_CHECK(table.rows > 0, InputError, "{}: the table has no rows to rank.", table.source);
}

}  // namespace vlbias
