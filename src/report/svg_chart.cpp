// Our SVG chart writer (src/report/svg_chart.h).
#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace vlbias::report_internal {

namespace {

constexpr double kWidth = 760;
constexpr double kRow = 22;  // height of one categorical row
constexpr double kTitleHeight = 28;
constexpr double kLegendHeight = 20;
constexpr double kAxisHeight = 46;  // ticks, tick labels and the axis label
constexpr double kCharWidth = 7.0;  // a generous glyph width at 12px, for label layout

// Okabe & Ito (2008), "Color Universal Design": distinguishable under the common
// colour-vision deficiencies. Black is last so it is used only for the 8th series.
constexpr const char* kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                    "#56B4E9", "#D55E00", "#F0E442", "#000000"};

bool finite(double v) {
  return std::isfinite(v);
}

std::string num(double v) {
  return fmt::format("{:.4g}", v);
}

// Coordinates are written with 2 decimals: sub-pixel precision without bloat.
std::string px(double v) {
  return fmt::format("{:.2f}", v);
}

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
// the nice step; log: powers of ten) so the axis starts and ends on a labelled tick.
Scale value_scale(const Range& range, double left, double right, bool log) {
  Scale x{range.lo, range.hi, left, right, log};
  if (log) {
    x.d0 = std::pow(10.0, std::floor(std::log10(range.lo) + 1e-9));
    x.d1 = std::pow(10.0, std::ceil(std::log10(range.hi) - 1e-9));
    return x;
  }
  const std::vector<double> t = nice_ticks(range.lo, range.hi, 6);
  if (t.size() > 1) {
    const double step = t[1] - t[0];
    x.d0 = std::min(range.lo, std::floor(range.lo / step + 1e-9) * step);
    x.d1 = std::max(range.hi, std::ceil(range.hi / step - 1e-9) * step);
  }
  return x;
}

std::string svg_open(const std::string& kind, const std::string& title, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"{}\" "
      "viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
      "<title>{}</title>\n"
      "<text x=\"{}\" y=\"18\" font-size=\"14\" font-weight=\"bold\" fill=\"#222\">{}</text>\n",
      kind, px(kWidth), px(height), px(kWidth), px(height), xml_escape(title), xml_escape(title),
      px(8), xml_escape(title));
}

std::string text(double x, double y, const std::string& s, const char* anchor = "start",
                 const char* extra = "") {
  return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\"{}>{}</text>\n", px(x), px(y),
                     anchor, extra, xml_escape(s));
}

std::string line(double x1, double y1, double x2, double y2, const char* stroke, double width = 1.0,
                 const char* extra = "") {
  return fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
      px(x1), px(y1), px(x2), px(y2), stroke, width, extra);
}

// Left margin wide enough for the longest category label (capped; longer labels are cut).
double label_margin(const std::vector<std::string>& labels) {
  std::size_t longest = 4;
  for (const std::string& l : labels) longest = std::max(longest, l.size());
  return std::min(300.0, 14.0 + kCharWidth * static_cast<double>(longest));
}

std::string clip_label(const std::string& label, double margin) {
  const auto max_chars = static_cast<std::size_t>((margin - 14.0) / kCharWidth + 0.5);
  if (label.size() <= max_chars || max_chars < 4) return label;
  std::size_t cut = max_chars - 1;
  while (cut > 0 && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  std::string out = label.substr(0, cut);
  out += "\u2026";
  return out;
}

// A horizontal value axis along y = `y` with ticks, vertical grid lines up to `top`,
// and its label below.
std::string x_axis(const Scale& s, double y, double top, const std::string& label) {
  std::string out = "<g class=\"axis x-axis\">\n";
  std::vector<double> ticks;
  double step = 0;
  if (s.log) {
    const int a = static_cast<int>(std::floor(std::log10(s.d0) + 1e-9));
    const int b = static_cast<int>(std::ceil(std::log10(s.d1) - 1e-9));
    const int stride = std::max(1, (b - a) / 8);
    for (int e = a; e <= b; e += stride) ticks.push_back(std::pow(10.0, e));
  } else {
    ticks = nice_ticks(s.d0, s.d1, 6);
    step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1.0;
  }
  for (double t : ticks) {
    if (t < std::min(s.d0, s.d1) - 1e-12 * std::abs(s.d1 - s.d0) ||
        t > std::max(s.d0, s.d1) + 1e-12 * std::abs(s.d1 - s.d0))
      continue;
    const double x = s(t);
    out += line(x, top, x, y, "#e3e3e3");
    out += line(x, y, x, y + 5, "#555");
    out += text(x, y + 18, s.log ? fmt::format("{:g}", t) : tick_label(t, step), "middle",
                " fill=\"#333\"");
  }
  out += line(s.r0, y, s.r1, y, "#555");
  out += text((s.r0 + s.r1) / 2, y + 38, label, "middle", " fill=\"#222\"");
  out += "</g>\n";
  return out;
}

// A vertical value axis along x = `x` with ticks and horizontal grid lines to `right`.
std::string y_axis(const Scale& s, double x, double right, const std::string& label) {
  std::string out = "<g class=\"axis y-axis\">\n";
  const std::vector<double> ticks = nice_ticks(s.d0, s.d1, 6);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1.0;
  for (double t : ticks) {
    if (t < s.d0 - 1e-12 * (s.d1 - s.d0) || t > s.d1 + 1e-12 * (s.d1 - s.d0)) continue;
    const double y = s(t);
    out += line(x, y, right, y, "#e3e3e3");
    out += line(x - 5, y, x, y, "#555");
    out += text(x - 8, y + 4, tick_label(t, step), "end", " fill=\"#333\"");
  }
  out += line(x, s.r0, x, s.r1, "#555");
  const double cy = (s.r0 + s.r1) / 2;
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#222\" "
      "transform=\"rotate(-90 {} {})\">{}</text>\n",
      px(16), px(cy), px(16), px(cy), xml_escape(label));
  out += "</g>\n";
  return out;
}

// A row of colour swatches with the series names, starting at (x, y).
std::string legend(const std::vector<std::string>& names, double x, double y,
                   const char* shape = "rect") {
  std::string out = "<g class=\"legend\">\n";
  double cx = x;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const double w = 30 + kCharWidth * static_cast<double>(names[i].size());
    if (cx > x && cx + w > kWidth - 8) {  // wrap before an item that would not fit
      cx = x;
      y += kLegendHeight;
    }
    if (std::string(shape) == "rect") {
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n",
                         px(cx), px(y - 10), palette_colour(i));
    } else {
      out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"/>\n", px(cx + 6),
                         px(y - 4), palette_colour(i));
    }
    out += text(cx + 16, y, names[i], "start", " fill=\"#222\"");
    cx += w;
  }
  out += "</g>\n";
  return out;
}

// How many legend lines `legend` will use (the same wrapping rule).
int legend_lines(const std::vector<std::string>& names, double x) {
  int lines = 1;
  double cx = x;
  for (const std::string& name : names) {
    const double w = 30 + kCharWidth * static_cast<double>(name.size());
    if (cx > x && cx + w > kWidth - 8) {
      cx = x;
      ++lines;
    }
    cx += w;
  }
  return lines;
}

std::vector<std::string> series_names(const auto& series) {
  std::vector<std::string> names;
  for (const auto& s : series) names.push_back(s.name);
  return names;
}

std::string interval_title(const std::string& what, double v, double lo, double hi) {
  if (finite(lo) || finite(hi) || std::isinf(lo) || std::isinf(hi))
    return fmt::format("{}: {} [{}, {}]", what, num(v), num(lo), num(hi));
  return fmt::format("{}: {}", what, num(v));
}

}  // namespace

const char* palette_colour(std::size_t i) {
  return kPalette[i % 8];
}

std::string xml_escape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  const auto* s = reinterpret_cast<const unsigned char*>(in.data());
  const std::size_t n = in.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      switch (c) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&#39;";
          break;
        default:
          if (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (no overlongs, no surrogates, <= U+10FFFF) is copied;
    // anything else becomes U+FFFD, one byte at a time.
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    }
    bool ok = len > 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if (ok) {
      static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kMin[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) && cp != 0xFFFE &&
           cp != 0xFFFF;
    }
    if (ok) {
      out.append(reinterpret_cast<const char*>(s + i), len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!finite(lo) || !finite(hi)) return {};
  if (lo > hi) std::swap(lo, hi);
  if (lo == hi) return {lo};
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  const double step = (r < 1.5 ? 1.0 : r < 3.0 ? 2.0 : r < 7.0 ? 5.0 : 10.0) * mag;
  std::vector<double> ticks;
  // Multiples of the step (not a running sum, so no drift).
  const double first = std::ceil(lo / step - 1e-9);
  for (double k = first; k * step <= hi + step * 1e-9 && ticks.size() < 100; k += 1) {
    const double t = k * step;
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

std::string tick_label(double value, double step) {
  if (value == 0) return "0";
  const int decimals =
      step > 0 ? std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9))) : 3;
  if (std::abs(value) >= 1e5 || (std::abs(value) < 1e-3 && decimals > 6))
    return fmt::format("{:.2g}", value);
  return fmt::format("{:.{}f}", value, decimals);
}

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

// One circle per finite (x, y), titled with the series name and the point.
std::string point_marks(const Plot2d& p, const std::string& name, const std::vector<double>& x,
                        const std::vector<double>& y, const char* colour) {
  std::string out;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (!finite(x[i]) || !finite(y[i])) continue;
    out += fmt::format(
        "<circle class=\"mark\" cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"><title>{}: ({}, "
        "{})</title></circle>\n",
        px(p.x(x[i])), px(p.y(y[i])), colour, xml_escape(name), num(x[i]), num(y[i]));
  }
  return out;
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
  const Plot2d p = plot_area(rx, ry, top, height);
  std::string out = svg_open("scatter", chart.title, height);
  out += legend(series_names(chart.series), 84, kTitleHeight + 14, "circle");
  out += axes(p, chart.x_label, chart.y_label);
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
    out += point_marks(p, s.name, s.x, s.y, colour);
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
