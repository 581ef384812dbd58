#pragma once
// Our small SVG chart writer (src/report): each function returns one self-contained
// <svg> element (inline styles only, no scripts, no external references) for the HTML
// report. Every mark carries class="mark" and a <title> with its numbers, so a reader
// hovering in a browser (or a test walking the DOM) sees exactly what was drawn.
//
// Conventions shared by every chart:
// - Values are doubles; NaN means "missing" and draws nothing (the data table beside
//   the chart says "n/a"). Infinite values are clipped to the axis edge and drawn with
//   an arrow-like open end.
// - Colours come from the Okabe-Ito palette (colour-blind safe) in series order; the
//   heatmap uses a diverging purple-white-orange (PuOr) or a sequential blue scale.
// - Text is at least 11px, sized for reading at 100% zoom in an 800px-wide column.
#include <string>
#include <string_view>
#include <vector>

namespace vlbias::report_internal {

// The i-th colour of the categorical palette (wraps around after 8).
const char* palette_colour(std::size_t i);

// Horizontal bars: one row per category, one bar per series inside the row, each with an
// optional interval whisker (lower/upper empty, or NaN, for none). A vertical reference
// line is drawn at `reference` (0 for differences, 1 for ratios on a log axis).
struct BarSeries {
  std::string name;
  std::vector<double> value;  // one per category
  std::vector<double> lower;  // empty or one per category
  std::vector<double> upper;
};
struct BarChart {
  std::string title;
  std::string x_label;  // with units
  std::vector<std::string> categories;
  std::vector<BarSeries> series;
  bool log_x = false;  // values must be > 0; others are left out
  double reference = 0.0;
  // Points with whiskers instead of bars, on an axis fitted to the data (the reference
  // is drawn only when inside it): for means far from 0 whose differences matter.
  bool points = false;
};
std::string svg_bar_chart(const BarChart& chart);

// Horizontal box plots (Tukey boxes from precomputed quantiles): whiskers, the
// interquartile box, the median line and the mean as a diamond.
struct BoxItem {
  std::string label;
  double whisker_low, q25, median, q75, whisker_high, mean;
};
struct BoxChart {
  std::string title;
  std::string x_label;
  std::vector<BoxItem> items;
};
std::string svg_box_chart(const BoxChart& chart);

// Points over a numeric x per series, each with its fitted polynomial drawn as a
// smooth line over the series' x range (coefficients in ascending powers; empty = no
// fit, the points are joined instead).
struct LineSeries {
  std::string name;
  std::vector<double> x, y;
  std::vector<double> coefficients;
};
struct LineChart {
  std::string title;
  std::string x_label, y_label;
  std::vector<LineSeries> series;
};
std::string svg_line_chart(const LineChart& chart);

// Scatter of points per series with one ellipse each (centre, semi-axes and the
// major axis' angle in radians, counter-clockwise from the x axis, in data units).
struct EllipseSeries {
  std::string name;
  std::vector<double> x, y;
  double cx = 0, cy = 0, semi_major = 0, semi_minor = 0, angle = 0;
  bool has_ellipse = false;
};
struct ScatterChart {
  std::string title;
  std::string x_label, y_label;
  std::vector<EllipseSeries> series;
};
std::string svg_scatter_chart(const ScatterChart& chart);

// Forest plot: one row per effect, estimate with its interval, a reference line.
// Highlighted rows (significant after correction) are drawn filled and dark; the others
// hollow and grey. Past kForestMaxRows rows the chart keeps the highlighted rows, then the
// largest |estimate - reference|, in their original order, and says so in its title (the
// data table beside it keeps every row).
inline constexpr std::size_t kForestMaxRows = 80;
struct ForestRow {
  std::string label;
  double estimate, lower, upper;
  bool highlighted = false;
};
struct ForestChart {
  std::string title;
  std::string x_label;
  std::vector<ForestRow> rows;
  double reference = 0.0;
  bool log_x = false;
};
std::string svg_forest_chart(const ForestChart& chart);

// Heatmap over a rows x columns grid (values row-major, NaN = empty cell) with a colour
// legend; `marks` (empty or one per cell) is drawn in the cell, e.g. "*" for significant.
struct Heatmap {
  std::string title;
  std::string value_label;
  std::vector<std::string> row_labels, col_labels;
  std::vector<double> values;
  std::vector<std::string> marks;
  bool diverging = true;  // symmetric scale around 0; false: sequential min..max
};
std::string svg_heatmap(const Heatmap& chart);

// Step curves over a shared x: histograms (counts per bin, edges.size() = bins + 1) or
// ECDFs (y = cumulative share at each x).
struct StepSeries {
  std::string name;
  std::vector<double> y;
};
struct StepChart {
  std::string title;
  std::string x_label, y_label;
  std::vector<double> x;  // histogram: the bin edges; ECDF: the points
  std::vector<StepSeries> series;
  bool histogram = true;
};
std::string svg_step_chart(const StepChart& chart);

// Exposed for tests: "nice" tick positions (steps of 1, 2 or 5 x 10^k) covering
// [lo, hi], about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target);
// A tick label: shortest round-trip of the value at the ticks' precision.
std::string tick_label(double value, double step);

}  // namespace vlbias::report_internal

namespace vlbias::report_internal {
// Text for XML/HTML content and attributes: escapes & < > " ', drops control characters
// XML forbids and replaces invalid UTF-8 with U+FFFD, so any label keeps the document
// well-formed.
std::string xml_escape(std::string_view text);
}  // namespace vlbias::report_internal
