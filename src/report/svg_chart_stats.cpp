// Box statistics for svg_box_chart (src/report/svg_chart.h): numpy's percentiles and
// matplotlib's whiskers, so a box drawn here matches plt.boxplot over the same values.
#include <algorithm>
#include <cmath>
#include <limits>

#include "svg_chart.h"

namespace vlbias::report_internal {

// numpy.percentile(a, p), method="linear" (its default): h = p/100 * (n - 1), then
// a[floor(h)] + (h - floor(h)) * (a[floor(h) + 1] - a[floor(h)]).
double linear_percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double h = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

// matplotlib.cbook.boxplot_stats(whis=1.5): the whiskers end at the lowest datum >= q1 - 1.5
// IQR and the highest datum <= q3 + 1.5 IQR (the box's edge when none is: matplotlib's rule);
// fliers are the values beyond the whiskers.
BoxItem box_item(std::string label, std::vector<double> values) {
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  std::sort(values.begin(), values.end());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  BoxItem b{std::move(label), nan, nan, nan, nan, nan, nan};
  if (values.empty()) return b;
  b.q25 = linear_percentile(values, 25);
  b.median = linear_percentile(values, 50);
  b.q75 = linear_percentile(values, 75);
  double sum = 0;
  for (double v : values) sum += v;
  b.mean = sum / static_cast<double>(values.size());
  const double iqr = b.q75 - b.q25;
  const double low_fence = b.q25 - 1.5 * iqr, high_fence = b.q75 + 1.5 * iqr;
  b.whisker_low = b.q25;
  b.whisker_high = b.q75;
  for (double v : values) {
    if (v >= low_fence) {
      b.whisker_low = std::min(v, b.q25);
      break;
    }
  }
  for (auto it = values.rbegin(); it != values.rend(); ++it) {
    if (*it <= high_fence) {
      b.whisker_high = std::max(*it, b.q75);
      break;
    }
  }
  for (double v : values) {
    if (v < b.whisker_low || v > b.whisker_high) b.fliers.push_back(v);
  }
  return b;
}

}  // namespace vlbias::report_internal
