#pragma once
// Internal to the SVG chart writer (svg_chart.cpp: these primitives; svg_chart_kinds.cpp: the
// chart kinds of svg_chart.h built from them): the page geometry, number formats, scales and
// ranges, the <svg> element, text, lines, axes and legends.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "svg_chart.h"

namespace vlbias::report_internal::svg {

inline constexpr double kWidth = 760;
inline constexpr double kRow = 22;  // height of one categorical row
inline constexpr double kTitleHeight = 28;
inline constexpr double kLegendHeight = 20;
inline constexpr double kAxisHeight = 46;  // ticks, tick labels and the axis label
inline constexpr double kCharWidth = 7.0;  // a generous glyph width at 12px, for label layout

bool finite(double v);
// A value in a title: 4 significant digits.
std::string num(double v);
// Coordinates are written with 2 decimals: sub-pixel precision without bloat.
std::string px(double v);

// A linear or log10 mapping from data to pixels.
struct Scale {
  double d0 = 0, d1 = 1, r0 = 0, r1 = 1;
  bool log = false;
  double operator()(double v) const {
    double a = d0, b = d1;
    if (log) {
      v = std::log10(v);
      a = std::log10(a);
      b = std::log10(b);
    }
    if (b == a) return (r0 + r1) / 2;
    return r0 + (v - a) / (b - a) * (r1 - r0);
  }
  // Clamps to the drawing range (infinite values end at the edge).
  double clamped(double v) const {
    if (std::isinf(v)) return v > 0 ? std::max(r0, r1) : std::min(r0, r1);
    if (log && v <= 0) return std::min(r0, r1);
    const double p = (*this)(v);
    return std::clamp(p, std::min(r0, r1), std::max(r0, r1));
  }
};

// The data range [lo, hi] of the finite values (and `include`), widened when degenerate.
struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!finite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
  void settle(bool log) {
    if (empty()) {
      lo = log ? 0.1 : 0.0;
      hi = log ? 10.0 : 1.0;
    }
    if (log) {
      if (lo == hi) {
        lo /= 2;
        hi *= 2;
      }
      return;
    }
    if (lo == hi) {
      const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
      lo -= pad;
      hi += pad;
    }
  }
};

// A horizontal value axis over a settled range, widened to whole ticks (linear: multiples of

// A horizontal value axis over a settled range, widened to whole ticks (linear: multiples of
// the nice step; log: powers of ten) so the axis starts and ends on a labelled tick.
Scale value_scale(const Range& range, double left, double right, bool log);

// The <svg> element's opening (kind in data-chart, the title as <title> and heading).
std::string svg_open(const std::string& kind, const std::string& title, double height);
std::string text(double x, double y, const std::string& s, const char* anchor = "start",
                 const char* extra = "");
std::string line(double x1, double y1, double x2, double y2, const char* stroke, double width = 1.0,
                 const char* extra = "");

// Left margin wide enough for the longest category label (capped; longer labels are cut).
double label_margin(const std::vector<std::string>& labels);
// The label cut (with an ellipsis) to fit the margin.
std::string clip_label(const std::string& label, double margin);

// A horizontal value axis along y = `y` with ticks, vertical grid lines up to `top`,
// and its label below.
std::string x_axis(const Scale& s, double y, double top, const std::string& label);
// A vertical value axis along x = `x` with ticks and horizontal grid lines to `right`.
std::string y_axis(const Scale& s, double x, double right, const std::string& label);

// A row of colour swatches with the series names, starting at (x, y).
std::string legend(const std::vector<std::string>& names, double x, double y,
                   const char* shape = "rect");
// How many legend lines `legend` will use (the same wrapping rule).
int legend_lines(const std::vector<std::string>& names, double x);

std::vector<std::string> series_names(const auto& series) {
  std::vector<std::string> names;
  for (const auto& s : series) names.push_back(s.name);
  return names;
}

// "what: v [lo, hi]", or "what: v" without an interval.
// The part [x0, x1] (narrowed in place) of the line y = intercept + slope x whose y lies in
// [ylo, yhi]; false when none does or the line is not finite (svg_chart_stacked.cpp).
bool clip_line(double intercept, double slope, double ylo, double yhi, double& x0, double& x1);
std::string interval_title(const std::string& what, double v, double lo, double hi);

}  // namespace vlbias::report_internal::svg
