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
#include <cmath>
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

// Horizontal stacked bars of shares: one row per category, its segments (one per series, in
// series order, left to right) summing to at most 1 on a 0-1 axis labelled in percent. A row
// whose values are all NaN shows "n/a".
struct StackedBarChart {
  std::string title;
  std::string x_label;
  std::vector<std::string> categories;
  std::vector<BarSeries> series;  // value[i]: the share of series s in row i (lower/upper unused)
};
std::string svg_stacked_bar_chart(const StackedBarChart& chart);

// Horizontal box plots (Tukey boxes from precomputed quantiles): whiskers, the
// interquartile box, the median line and the mean as a diamond.
struct BoxItem {
  std::string label;
  double whisker_low, q25, median, q75, whisker_high, mean;
  std::vector<double> fliers = {};  // values beyond the whiskers, drawn as hollow circles
};
// One box from raw values (NaN left out): quartiles and median as numpy.percentile's default
// (method="linear": the value at position p/100 * (n - 1) of the sorted values, interpolated),
// whiskers as matplotlib's boxplot(whis=1.5): the most extreme values within 1.5 IQR of the
// box; the values beyond them are the fliers. No values: NaN everywhere.
BoxItem box_item(std::string label, std::vector<double> values);
// numpy.percentile(values, p) with the default linear method on sorted, finite values.
double linear_percentile(const std::vector<double>& sorted, double p);
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
  std::vector<std::string> labels = {};  // empty or one per point: beside it and in its title
};
struct ScatterChart {
  std::string title;
  std::string x_label, y_label;
  std::vector<EllipseSeries> series;
  // Draw the diagonal y = x on equal x and y ranges (a comparison of two measures of one
  // thing, e.g. paper 000 Fig. 5's S(d,s) against S(d,ns)).
  bool diagonal = false;
  // A fitted line y = intercept + slope x drawn across the x range (the representation audit's
  // generated-on-real slope); NaN = none.
  double fit_intercept = NAN, fit_slope = NAN;
};
std::string svg_scatter_chart(const ScatterChart& chart);

// A choropleth world map (svg_map.cpp, data/world/countries.csv): each area is a country
// (ISO 3166-1 alpha-3 or its Natural Earth name) or a region (map_area_countries), filled
// by value on a viridis scale (sequential) or PuOr centred on 0 (diverging, signed values);
// countries without a value are grey ("no data" in the legend). Areas the map cannot place
// are listed under it.
struct MapArea {
  std::string name;
  double value;
};
struct Choropleth {
  std::string title;
  std::string value_label;
  std::vector<MapArea> areas;
  bool diverging = false;
};
std::string svg_choropleth(const Choropleth& chart);
// The ISO alpha-3 codes an area name covers, matched without case, spaces, hyphens and a
// leading "the": a country code or name, a UN M49 sub-region, or a region of the schemes the
// audits use (SeeGULL's regions.csv; DIG-In/GeoDE: Africa, Americas, East Asia, Europe,
// South-East Asia, West Asia; Dollar Street: Africa, America, Asia, Europe), each the union
// of M49 sub-regions (documented in docs/reports.md). Empty when unknown.
std::vector<std::string> map_area_countries(const std::string& name);
// The shipped geometry: iso3 -> (name, M49 sub-region, SVG path on a 1440 x 568 canvas).
struct MapCountry {
  std::string iso3, name, subregion, path;
};
const std::vector<MapCountry>& world_countries();
// viridis (matplotlib) at t in [0, 1] and PuOr at t in [-1, 1], as "#rrggbb".
std::string viridis_hex(double t);
std::string diverging_hex(double t);

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
