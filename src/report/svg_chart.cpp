// Our SVG chart writer (src/report/svg_chart.h): the primitives (svg_chart_primitives.h) and
// the stage-wide helpers; the chart kinds are in svg_chart_kinds.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "svg_chart.h"
#include "svg_chart_primitives.h"

namespace vlbias::report_internal {

namespace {

// Okabe & Ito (2008), "Color Universal Design": distinguishable under the common
// colour-vision deficiencies. Black is last so it is used only for the 8th series.
constexpr const char* kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                    "#56B4E9", "#D55E00", "#F0E442", "#000000"};

}  // namespace

namespace svg {

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

std::string text(double x, double y, const std::string& s, const char* anchor, const char* extra) {
  return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\"{}>{}</text>\n", px(x), px(y),
                     anchor, extra, xml_escape(s));
}

std::string line(double x1, double y1, double x2, double y2, const char* stroke, double width,
                 const char* extra) {
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
std::string legend(const std::vector<std::string>& names, double x, double y, const char* shape) {
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

std::string interval_title(const std::string& what, double v, double lo, double hi) {
  if (finite(lo) || finite(hi) || std::isinf(lo) || std::isinf(hi))
    return fmt::format("{}: {} [{}, {}]", what, num(v), num(lo), num(hi));
  return fmt::format("{}: {}", what, num(v));
}

}  // namespace svg

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

}  // namespace vlbias::report_internal
