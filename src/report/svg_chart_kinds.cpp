// The chart kinds of svg_chart.h, drawn with the primitives of svg_chart_primitives.h.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "svg_chart.h"
#include "svg_chart_primitives.h"

namespace vlbias::report_internal {

using namespace svg;  // NOLINT(build/namespaces): the primitives are this file's vocabulary

// ---------------------------------------------------------------- bars

std::string svg_bar_chart(const BarChart& chart) {
  const std::size_t rows = chart.categories.size();
  const std::size_t ns = std::max<std::size_t>(1, chart.series.size());
  const bool with_legend = chart.series.size() > 1;
  const double left = label_margin(chart.categories);
  const double legend_h =
      with_legend ? kLegendHeight * legend_lines(series_names(chart.series), left) : 0;
  const double top = kTitleHeight + legend_h + 6;
  const double row_h = std::max(kRow, 8.0 * static_cast<double>(ns) + 8);
  const double plot_h = row_h * static_cast<double>(std::max<std::size_t>(1, rows));
  const double height = top + plot_h + kAxisHeight;
  const double right = kWidth - 24;

  Range range;
  if (!chart.log_x && !chart.points) range.add(chart.reference);
  for (const BarSeries& s : chart.series) {
    for (std::size_t i = 0; i < s.value.size(); ++i) {
      auto keep = [&](double v) {
        if (!chart.log_x || v > 0) range.add(v);
      };
      keep(s.value[i]);
      if (i < s.lower.size()) keep(s.lower[i]);
      if (i < s.upper.size()) keep(s.upper[i]);
    }
  }
  if (chart.log_x && !chart.points) range.add(chart.reference);
  range.settle(chart.log_x);
  const Scale x = value_scale(range, left, right, chart.log_x);

  std::string out = svg_open("bar", chart.title, height);
  if (with_legend) out += legend(series_names(chart.series), left, kTitleHeight + 14);
  out += x_axis(x, top + plot_h, top, chart.x_label);
  const double base = x.clamped(chart.log_x ? std::max(chart.reference, x.d0) : chart.reference);
  out += "<g class=\"marks\">\n";
  const double bar_h = (row_h - 8) / static_cast<double>(ns);
  for (std::size_t r = 0; r < rows; ++r) {
    const double y0 = top + row_h * static_cast<double>(r);
    out += text(left - 8, y0 + row_h / 2 + 4, clip_label(chart.categories[r], left), "end",
                " fill=\"#222\"");
    for (std::size_t si = 0; si < chart.series.size(); ++si) {
      const BarSeries& s = chart.series[si];
      if (r >= s.value.size()) continue;
      const double v = s.value[r];
      const double lo = r < s.lower.size() ? s.lower[r] : NAN;
      const double hi = r < s.upper.size() ? s.upper[r] : NAN;
      const double y = y0 + 4 + bar_h * static_cast<double>(si);
      const std::string what = chart.series.size() > 1
                                   ? fmt::format("{}, {}", chart.categories[r], s.name)
                                   : chart.categories[r];
      if (std::isnan(v) || (chart.log_x && v <= 0)) {
        // A value a log axis cannot show is written out instead.
        out += text(base + 4, y + bar_h / 2 + 4,
                    std::isnan(v) ? std::string("n/a") : num(v) + " (off the log axis)", "start",
                    " fill=\"#777\" font-size=\"11\"");
        continue;
      }
      const double xv = x.clamped(v);
      if (!chart.points) {
        out += fmt::format(
            "<rect class=\"mark\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
            "fill-opacity=\"0.85\"><title>{}</title></rect>\n",
            px(std::min(base, xv)), px(y), px(std::max(0.5, std::abs(xv - base))),
            px(std::max(1.0, bar_h - 1)), palette_colour(si),
            xml_escape(interval_title(what, v, lo, hi)));
      }
      if (!std::isnan(lo) && !std::isnan(hi)) {
        const double xl = x.clamped(lo), xh = x.clamped(hi), ym = y + bar_h / 2;
        out += line(xl, ym, xh, ym, "#222", 1.2, " class=\"whisker\"");
        if (!std::isinf(lo)) out += line(xl, ym - 3, xl, ym + 3, "#222", 1.2);
        if (!std::isinf(hi)) out += line(xh, ym - 3, xh, ym + 3, "#222", 1.2);
      }
      if (chart.points) {
        out += fmt::format(
            "<circle class=\"mark\" cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" stroke=\"#222\" "
            "stroke-width=\"0.6\"><title>{}</title></circle>\n",
            px(xv), px(y + bar_h / 2), px(std::clamp(bar_h / 2, 3.0, 5.0)), palette_colour(si),
            xml_escape(interval_title(what, v, lo, hi)));
      }
    }
  }
  const bool reference_inside =
      chart.reference >= std::min(x.d0, x.d1) && chart.reference <= std::max(x.d0, x.d1);
  if (!chart.points || reference_inside)
    out += line(base, top, base, top + plot_h, "#333", 1.0, " stroke-dasharray=\"3 2\"");
  out += "</g>\n</svg>\n";
  return out;
}

// ---------------------------------------------------------------- boxes

std::string svg_box_chart(const BoxChart& chart) {
  std::vector<std::string> labels;
  for (const BoxItem& b : chart.items) labels.push_back(b.label);
  const double left = label_margin(labels);
  const double top = kTitleHeight + 6;
  const double row_h = 26;
  const double plot_h = row_h * static_cast<double>(std::max<std::size_t>(1, chart.items.size()));
  const double height = top + plot_h + kAxisHeight;
  Range range;
  for (const BoxItem& b : chart.items) {
    for (double v : {b.whisker_low, b.q25, b.median, b.q75, b.whisker_high, b.mean}) range.add(v);
    for (double v : b.fliers) range.add(v);
  }
  range.settle(false);
  const Scale x = value_scale(range, left, kWidth - 24, false);
  std::string out = svg_open("box", chart.title, height);
  out += x_axis(x, top + plot_h, top, chart.x_label);
  out += "<g class=\"marks\">\n";
  for (std::size_t i = 0; i < chart.items.size(); ++i) {
    const BoxItem& b = chart.items[i];
    const double y0 = top + row_h * static_cast<double>(i), ym = y0 + row_h / 2;
    out += text(left - 8, ym + 4, clip_label(b.label, left), "end", " fill=\"#222\"");
    if (std::isnan(b.median)) continue;
    const char* colour = palette_colour(0);
    out += line(x.clamped(b.whisker_low), ym, x.clamped(b.q25), ym, "#333");
    out += line(x.clamped(b.q75), ym, x.clamped(b.whisker_high), ym, "#333");
    out += line(x.clamped(b.whisker_low), ym - 5, x.clamped(b.whisker_low), ym + 5, "#333");
    out += line(x.clamped(b.whisker_high), ym - 5, x.clamped(b.whisker_high), ym + 5, "#333");
    out += fmt::format(
        "<rect class=\"mark\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
        "fill-opacity=\"0.35\" stroke=\"{}\"><title>{}: whiskers {} to {}, quartiles {} to {}, "
        "median {}, mean {}</title></rect>\n",
        px(x.clamped(b.q25)), px(y0 + 5), px(std::max(0.5, x.clamped(b.q75) - x.clamped(b.q25))),
        px(row_h - 10), colour, colour, xml_escape(b.label), num(b.whisker_low),
        num(b.whisker_high), num(b.q25), num(b.q75), num(b.median), num(b.mean));
    out += line(x.clamped(b.median), y0 + 5, x.clamped(b.median), y0 + row_h - 5, "#222", 2.0);
    for (double v : b.fliers) {
      out += fmt::format(
          "<circle class=\"flier\" cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"none\" stroke=\"#333\">"
          "<title>{}: {}</title></circle>\n",
          px(x.clamped(v)), px(ym), xml_escape(b.label), num(v));
    }
    if (finite(b.mean)) {
      const double mx = x.clamped(b.mean);
      out += fmt::format("<path d=\"M{} {} l4 4 l-4 4 l-4 -4 z\" fill=\"#D55E00\"/>\n", px(mx),
                         px(ym - 4));
    }
  }
  out += "</g>\n</svg>\n";
  return out;
}

// ---------------------------------------------------------------- lines and scatter

namespace {

struct Plot2d {
  Scale x, y;
  double top, bottom, left, right;
};

Plot2d plot_area(Range rx, Range ry, double top, double height) {
  rx.settle(false);
  ry.settle(false);
  Plot2d p;
  p.left = 84;
  p.right = kWidth - 24;
  p.top = top;
  p.bottom = height - kAxisHeight;
  // Pad by 5% so points do not sit on the frame.
  const double px_ = (rx.hi - rx.lo) * 0.05, py_ = (ry.hi - ry.lo) * 0.05;
  p.x = Scale{rx.lo - px_, rx.hi + px_, p.left, p.right, false};
  p.y = Scale{ry.lo - py_, ry.hi + py_, p.bottom, p.top, false};
  return p;
}

// y-axis scale with d0 < d1 for the tick routine (Scale maps d0 to the bottom pixel).
std::string axes(const Plot2d& p, const std::string& x_label, const std::string& y_label) {
  Scale ys = p.y;
  return x_axis(p.x, p.bottom, p.top, x_label) + y_axis(ys, p.left, p.right, y_label);
}

// One circle per finite (x, y), titled with the series name (and the point's label, which is
// also written beside it) and the point.
std::string point_marks(const Plot2d& p, const std::string& name, const std::vector<double>& x,
                        const std::vector<double>& y, const char* colour,
                        const std::vector<std::string>& labels = {}) {
  std::string out;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (!finite(x[i]) || !finite(y[i])) continue;
    const std::string label = i < labels.size() ? labels[i] : "";
    out += fmt::format(
        "<circle class=\"mark\" cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"><title>{}: ({}, "
        "{})</title></circle>\n",
        px(p.x(x[i])), px(p.y(y[i])), colour,
        xml_escape(label.empty() ? name : label + " (" + name + ")"), num(x[i]), num(y[i]));
    if (!label.empty())
      out += text(p.x(x[i]) + 6, p.y(y[i]) - 5, label, "start", " fill=\"#333\" font-size=\"11\"");
  }
  return out;
}

// The diagonal y = x across the part of the plot where both axes cover it.
std::string diagonal_line(const Plot2d& p) {
  const double lo = std::max(p.x.d0, p.y.d0), hi = std::min(p.x.d1, p.y.d1);
  if (!(lo < hi)) return "";
  return line(p.x(lo), p.y(lo), p.x(hi), p.y(hi), "#555", 1.0,
              " class=\"diagonal\" stroke-dasharray=\"4 3\"");
}

}  // namespace

std::string svg_line_chart(const LineChart& chart) {
  const double top =
      kTitleHeight + kLegendHeight * legend_lines(series_names(chart.series), 84) + 8;
  const double height = top + 300 + kAxisHeight;
  Range rx, ry;
  for (const LineSeries& s : chart.series) {
    for (double v : s.x) rx.add(v);
    for (double v : s.y) ry.add(v);
  }
  // The fitted curves must fit too.
  auto poly = [](const std::vector<double>& c, double x) {
    double y = 0, p = 1;
    for (double k : c) {
      y += k * p;
      p *= x;
    }
    return y;
  };
  constexpr int kCurvePoints = 40;
  for (const LineSeries& s : chart.series) {
    if (s.coefficients.empty() || s.x.empty()) continue;
    const auto [mn, mx] = std::minmax_element(s.x.begin(), s.x.end());
    for (int k = 0; k <= kCurvePoints; ++k)
      ry.add(poly(s.coefficients, *mn + (*mx - *mn) * k / kCurvePoints));
  }
  const Plot2d p = plot_area(rx, ry, top, height);
  std::string out = svg_open("line", chart.title, height);
  out += legend(series_names(chart.series), 84, kTitleHeight + 14, "circle");
  out += axes(p, chart.x_label, chart.y_label);
  out += "<g class=\"marks\">\n";
  for (std::size_t si = 0; si < chart.series.size(); ++si) {
    const LineSeries& s = chart.series[si];
    const char* colour = palette_colour(si);
    std::string path;
    if (!s.coefficients.empty() && !s.x.empty()) {
      const auto [mn, mx] = std::minmax_element(s.x.begin(), s.x.end());
      for (int k = 0; k <= kCurvePoints; ++k) {
        const double xv = *mn + (*mx - *mn) * k / kCurvePoints;
        const double yv = poly(s.coefficients, xv);
        if (!finite(yv)) continue;
        path += fmt::format("{}{} {} ", path.empty() ? "M" : "L", px(p.x(xv)), px(p.y.clamped(yv)));
      }
    } else {
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
        if (!finite(s.x[i]) || !finite(s.y[i])) continue;
        path += fmt::format("{}{} {} ", path.empty() ? "M" : "L", px(p.x(s.x[i])), px(p.y(s.y[i])));
      }
    }
    if (!path.empty()) {
      out += fmt::format(
          "<path class=\"fit\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"/>\n", path,
          colour);
    }
    out += point_marks(p, s.name, s.x, s.y, colour);
  }
  out += "</g>\n</svg>\n";
  return out;
}

std::string svg_scatter_chart(const ScatterChart& chart) {
  const double top =
      kTitleHeight + kLegendHeight * legend_lines(series_names(chart.series), 84) + 8;
  const double height = top + 380 + kAxisHeight;
  Range rx, ry;
  for (const EllipseSeries& s : chart.series) {
    for (double v : s.x) rx.add(v);
    for (double v : s.y) ry.add(v);
    if (s.has_ellipse) {  // the ellipse's bounding box
      const double c = std::cos(s.angle), sn = std::sin(s.angle);
      const double hx = std::hypot(s.semi_major * c, s.semi_minor * sn);
      const double hy = std::hypot(s.semi_major * sn, s.semi_minor * c);
      rx.add(s.cx - hx);
      rx.add(s.cx + hx);
      ry.add(s.cy - hy);
      ry.add(s.cy + hy);
    }
  }
  if (chart.diagonal) {  // equal ranges, so the diagonal is the plot's
    rx.add(ry.lo);
    rx.add(ry.hi);
    ry = rx;
  }
  const Plot2d p = plot_area(rx, ry, top, height);
  std::string out = svg_open("scatter", chart.title, height);
  out += legend(series_names(chart.series), 84, kTitleHeight + 14, "circle");
  out += axes(p, chart.x_label, chart.y_label);
  if (chart.diagonal) out += diagonal_line(p);
  double x0 = rx.lo, x1 = rx.hi;  // the fitted line, cut where it leaves the y range
  if (clip_line(chart.fit_intercept, chart.fit_slope, ry.lo, ry.hi, x0, x1)) {
    out += fmt::format(
        "<line class=\"fit\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#d55e00\" "
        "stroke-width=\"1.5\"><title>fitted: y = {} + {} x</title></line>\n",
        px(p.x(x0)), px(p.y(chart.fit_intercept + chart.fit_slope * x0)), px(p.x(x1)),
        px(p.y(chart.fit_intercept + chart.fit_slope * x1)), num(chart.fit_intercept),
        num(chart.fit_slope));
  }
  out += "<g class=\"marks\">\n";
  for (std::size_t si = 0; si < chart.series.size(); ++si) {
    const EllipseSeries& s = chart.series[si];
    const char* colour = palette_colour(si);
    if (s.has_ellipse && finite(s.semi_major) && finite(s.semi_minor)) {
      // The ellipse as a polygon in data space: exact under unequal x/y pixel scales.
      std::string path;
      constexpr int kPoints = 64;
      for (int k = 0; k <= kPoints; ++k) {
        const double t = 2 * M_PI * k / kPoints;
        const double ex = s.semi_major * std::cos(t), ey = s.semi_minor * std::sin(t);
        const double xv = s.cx + ex * std::cos(s.angle) - ey * std::sin(s.angle);
        const double yv = s.cy + ex * std::sin(s.angle) + ey * std::cos(s.angle);
        path += fmt::format("{}{} {} ", k == 0 ? "M" : "L", px(p.x(xv)), px(p.y(yv)));
      }
      out += fmt::format(
          "<path class=\"mark ellipse\" d=\"{}Z\" fill=\"{}\" fill-opacity=\"0.12\" stroke=\"{}\" "
          "stroke-width=\"1.5\"><title>{}: centre ({}, {}), semi-axes {} and {}</title></path>\n",
          path, colour, colour, xml_escape(s.name), num(s.cx), num(s.cy), num(s.semi_major),
          num(s.semi_minor));
    }
    out += point_marks(p, s.name, s.x, s.y, colour, s.labels);
  }
  out += "</g>\n</svg>\n";
  return out;
}

// ---------------------------------------------------------------- forest

std::string svg_forest_chart(const ForestChart& full) {
  ForestChart chart = full;
  if (full.rows.size() > kForestMaxRows) {
    std::vector<std::size_t> order(full.rows.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto size_of = [&](std::size_t i) {
      const double d = std::abs(full.rows[i].estimate - full.reference);
      return std::isnan(d) ? -1.0 : d;
    };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (full.rows[a].highlighted != full.rows[b].highlighted) return full.rows[a].highlighted;
      return size_of(a) > size_of(b);
    });
    order.resize(kForestMaxRows);
    std::sort(order.begin(), order.end());
    chart.rows.clear();
    for (std::size_t i : order) chart.rows.push_back(full.rows[i]);
    chart.title = fmt::format("{} ({} of {} shown: significant first, then the largest)",
                              full.title, kForestMaxRows, full.rows.size());
  }
  std::vector<std::string> labels;
  for (const ForestRow& r : chart.rows) labels.push_back(r.label);
  const double left = label_margin(labels);
  const double top = kTitleHeight + kLegendHeight + 6;
  const double plot_h = kRow * static_cast<double>(std::max<std::size_t>(1, chart.rows.size()));
  const double height = top + plot_h + kAxisHeight;
  Range range;
  range.add(chart.reference);
  for (const ForestRow& r : chart.rows) {
    for (double v : {r.estimate, r.lower, r.upper}) {
      if (!chart.log_x || v > 0) range.add(v);
    }
  }
  range.settle(chart.log_x);
  const Scale x = value_scale(range, left, kWidth - 24, chart.log_x);
  std::string out = svg_open("forest", chart.title, height);
  out += "<g class=\"legend\">\n";
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"9\" height=\"9\" fill=\"#0072B2\"/>\n",
                     px(left), px(kTitleHeight + 5));
  out +=
      text(left + 14, kTitleHeight + 14, "significant after correction", "start", " fill=\"#222\"");
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"9\" height=\"9\" fill=\"#fff\" stroke=\"#888\"/>\n",
      px(left + 210), px(kTitleHeight + 5));
  out += text(left + 224, kTitleHeight + 14, "not significant", "start", " fill=\"#222\"");
  out += "</g>\n";
  out += x_axis(x, top + plot_h, top, chart.x_label);
  out += "<g class=\"marks\">\n";
  for (std::size_t i = 0; i < chart.rows.size(); ++i) {
    const ForestRow& r = chart.rows[i];
    const double ym = top + kRow * static_cast<double>(i) + kRow / 2;
    out += text(left - 8, ym + 4, clip_label(r.label, left), "end", " fill=\"#222\"");
    if (std::isnan(r.estimate) || (chart.log_x && r.estimate <= 0)) {
      out += text(left + 4, ym + 4, "n/a", "start", " fill=\"#777\" font-size=\"11\"");
      continue;
    }
    const char* colour = r.highlighted ? "#0072B2" : "#888";
    if (!std::isnan(r.lower) && !std::isnan(r.upper))
      out += line(x.clamped(r.lower), ym, x.clamped(r.upper), ym, colour, 1.6);
    const double cx = x.clamped(r.estimate);
    out += fmt::format(
        "<rect class=\"mark\" x=\"{}\" y=\"{}\" width=\"9\" height=\"9\" fill=\"{}\" "
        "stroke=\"{}\"><title>{}</title></rect>\n",
        px(cx - 4.5), px(ym - 4.5), r.highlighted ? "#0072B2" : "#fff", colour,
        xml_escape(interval_title(r.label, r.estimate, r.lower, r.upper)));
  }
  const double rx = x.clamped(chart.reference);
  out += line(rx, top, rx, top + plot_h, "#333", 1.0, " stroke-dasharray=\"3 2\"");
  out += "</g>\n</svg>\n";
  return out;
}

// ---------------------------------------------------------------- heatmap

namespace {

struct Rgb {
  double r, g, b;
};

Rgb mix(Rgb a, Rgb b, double t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

std::string hex(Rgb c) {
  auto k = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 255.0))); };
  return fmt::format("#{:02x}{:02x}{:02x}", k(c.r), k(c.g), k(c.b));
}

// PuOr (ColorBrewer, colour-blind safe): t in [-1, 1], purple negative, orange positive.
Rgb diverging(double t) {
  const Rgb neg{84, 39, 136}, mid{247, 247, 247}, pos{179, 88, 6};
  t = std::clamp(t, -1.0, 1.0);
  return t < 0 ? mix(mid, neg, -t) : mix(mid, pos, t);
}

// A sequential white-to-blue ramp (ColorBrewer Blues end points): t in [0, 1].
Rgb sequential(double t) {
  return mix({247, 251, 255}, {8, 48, 107}, std::clamp(t, 0.0, 1.0));
}

}  // namespace

std::string diverging_hex(double t) {
  return hex(diverging(t));
}

namespace {

bool dark(Rgb c) {
  return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b < 128;
}

}  // namespace

std::string svg_heatmap(const Heatmap& chart) {
  const std::size_t nr = chart.row_labels.size(), nc = chart.col_labels.size();
  const double left = label_margin(chart.row_labels);
  std::size_t longest_col = 1;
  for (const std::string& c : chart.col_labels) longest_col = std::max(longest_col, c.size());
  const double col_label_h =
      std::min(150.0, 12.0 + kCharWidth * 0.75 * static_cast<double>(longest_col));
  const double top = kTitleHeight + col_label_h + 4;
  const double cell_w = std::clamp(
      (kWidth - left - 110) / static_cast<double>(std::max<std::size_t>(1, nc)), 14.0, 80.0);
  const double cell_h = 20;
  const double height = top + cell_h * static_cast<double>(nr) + 24;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : chart.values) {
    if (!finite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo > hi) lo = hi = 0;
  const double extent = std::max(std::abs(lo), std::abs(hi));
  auto colour = [&](double v) {
    if (chart.diverging) return diverging(extent > 0 ? v / extent : 0.0);
    return sequential(hi > lo ? (v - lo) / (hi - lo) : 0.5);
  };
  std::string out = svg_open("heatmap", chart.title, std::max(height, top + 150));
  out += "<g class=\"labels\">\n";
  for (std::size_t c = 0; c < nc; ++c) {
    const double x = left + cell_w * (static_cast<double>(c) + 0.5);
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"start\" fill=\"#222\" "
        "transform=\"rotate(-45 {} {})\">{}</text>\n",
        px(x), px(top - 6), px(x), px(top - 6), xml_escape(clip_label(chart.col_labels[c], 170)));
  }
  for (std::size_t r = 0; r < nr; ++r) {
    out += text(left - 8, top + cell_h * static_cast<double>(r) + cell_h / 2 + 4,
                clip_label(chart.row_labels[r], left), "end", " fill=\"#222\"");
  }
  out += "</g>\n<g class=\"marks\">\n";
  for (std::size_t r = 0; r < nr; ++r) {
    for (std::size_t c = 0; c < nc; ++c) {
      const std::size_t i = r * nc + c;
      const double v = i < chart.values.size() ? chart.values[i] : NAN;
      const double x = left + cell_w * static_cast<double>(c);
      const double y = top + cell_h * static_cast<double>(r);
      const std::string mark = i < chart.marks.size() ? chart.marks[i] : "";
      if (!finite(v)) {
        out += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fff\" stroke=\"#ddd\"/>\n",
            px(x), px(y), px(cell_w), px(cell_h));
        continue;
      }
      const Rgb fill = colour(v);
      out += fmt::format(
          "<rect class=\"mark\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
          "stroke=\"#fff\"><title>{} / {}: {}{}</title></rect>\n",
          px(x), px(y), px(cell_w), px(cell_h), hex(fill), xml_escape(chart.row_labels[r]),
          xml_escape(chart.col_labels[c]), num(v),
          mark.empty() ? std::string() : fmt::format(" {}", xml_escape(mark)));
      if (!mark.empty()) {
        out += text(x + cell_w / 2, y + cell_h / 2 + 5, mark, "middle",
                    dark(fill) ? " fill=\"#fff\" font-weight=\"bold\""
                               : " fill=\"#000\" font-weight=\"bold\"");
      }
    }
  }
  out += "</g>\n";
  // The colour legend: a vertical ramp with its end (and middle) values.
  const double lx = std::min(kWidth - 80, left + cell_w * static_cast<double>(nc) + 24);
  const double ly = top, lh = std::max(100.0, std::min(200.0, cell_h * static_cast<double>(nr)));
  out += "<g class=\"legend\">\n";
  constexpr int kSteps = 20;
  for (int k = 0; k < kSteps; ++k) {
    const double t = 1.0 - (k + 0.5) / kSteps;  // top = high
    const double v = chart.diverging ? -extent + 2 * extent * t : lo + (hi - lo) * t;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"{}\" fill=\"{}\"/>\n", px(lx),
                       px(ly + lh * k / kSteps), px(lh / kSteps + 0.5), hex(colour(v)));
  }
  const double vmax = chart.diverging ? extent : hi, vmin = chart.diverging ? -extent : lo;
  out += text(lx + 18, ly + 10, num(vmax), "start", " fill=\"#333\" font-size=\"11\"");
  out += text(lx + 18, ly + lh, num(vmin), "start", " fill=\"#333\" font-size=\"11\"");
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#222\" font-size=\"11\" "
      "transform=\"rotate(-90 {} {})\">{}</text>\n",
      px(lx - 6), px(ly + lh / 2), px(lx - 6), px(ly + lh / 2), xml_escape(chart.value_label));
  out += "</g>\n</svg>\n";
  return out;
}

// ---------------------------------------------------------------- steps

std::string svg_step_chart(const StepChart& chart) {
  const double top =
      kTitleHeight + kLegendHeight * legend_lines(series_names(chart.series), 84) + 8;
  const double height = top + 260 + kAxisHeight;
  Range rx, ry;
  for (double v : chart.x) rx.add(v);
  ry.add(0);
  for (const StepSeries& s : chart.series) {
    for (double v : s.y) ry.add(v);
  }
  if (!chart.histogram) ry.add(1);
  Plot2d p = plot_area(rx, ry, top, height);
  p.y.d0 = 0;  // counts and shares start at 0
  std::string out = svg_open(chart.histogram ? "histogram" : "ecdf", chart.title, height);
  out += legend(series_names(chart.series), 84, kTitleHeight + 14);
  out += axes(p, chart.x_label, chart.y_label);
  out += "<g class=\"marks\">\n";
  for (std::size_t si = 0; si < chart.series.size(); ++si) {
    const StepSeries& s = chart.series[si];
    std::string path;
    if (chart.histogram) {
      // Outline of the bars: up and across each bin.
      for (std::size_t b = 0; b < s.y.size() && b + 1 < chart.x.size(); ++b) {
        const double x0 = p.x(chart.x[b]), x1 = p.x(chart.x[b + 1]), y = p.y(s.y[b]);
        path += fmt::format("{}{} {} L{} {} L{} {} ", b == 0 ? "M" : "L", px(x0),
                            b == 0 ? px(p.y(0)) : px(y), px(x0), px(y), px(x1), px(y));
        if (b + 2 == chart.x.size() || b + 1 == s.y.size())
          path += fmt::format("L{} {} ", px(x1), px(p.y(0)));
      }
    } else {
      for (std::size_t i = 0; i < s.y.size() && i < chart.x.size(); ++i) {
        const double x = p.x(chart.x[i]), y = p.y(s.y[i]);
        if (i == 0) {
          path += fmt::format("M{} {} L{} {} ", px(x), px(p.y(0)), px(x), px(y));
        } else {
          path += fmt::format("L{} {} L{} {} ", px(x), px(p.y(s.y[i - 1])), px(x), px(y));
        }
      }
    }
    if (path.empty()) continue;
    out += fmt::format(
        "<path class=\"mark\" d=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"1.8\"><title>{}</title></path>\n",
        path, palette_colour(si), xml_escape(s.name));
  }
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace vlbias::report_internal
