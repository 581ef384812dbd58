// Stacked share bars (svg_chart.h's StackedBarChart), drawn with svg_chart_primitives.h, and the
// clipping of a scatter's fitted line.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "svg_chart.h"
#include "svg_chart_primitives.h"

namespace vlbias::report_internal {

std::string svg_stacked_bar_chart(const StackedBarChart& chart) {
  using namespace svg;  // NOLINT(build/namespaces): the primitives are this file's vocabulary
  const std::size_t rows = chart.categories.size();
  const double left = label_margin(chart.categories);
  const double legend_h = kLegendHeight * legend_lines(series_names(chart.series), left);
  const double top = kTitleHeight + legend_h + 6;
  const double plot_h = kRow * static_cast<double>(std::max<std::size_t>(1, rows));
  const double height = top + plot_h + kAxisHeight;
  Range range;
  range.add(0.0);
  range.add(1.0);
  range.settle(false);
  const Scale x = value_scale(range, left, kWidth - 24, false);
  std::string out = svg_open("stacked", chart.title, height);
  out += legend(series_names(chart.series), left, kTitleHeight + 14);
  out += x_axis(x, top + plot_h, top, chart.x_label);
  out += "<g class=\"marks\">\n";
  for (std::size_t r = 0; r < rows; ++r) {
    const double y = top + kRow * static_cast<double>(r);
    out += text(left - 8, y + kRow / 2 + 4, clip_label(chart.categories[r], left), "end",
                " fill=\"#222\"");
    double at = 0;
    bool any = false;
    for (std::size_t si = 0; si < chart.series.size(); ++si) {
      const BarSeries& s = chart.series[si];
      const double v = r < s.value.size() ? s.value[r] : NAN;
      if (std::isnan(v) || v <= 0) {
        any = any || !std::isnan(v);
        continue;
      }
      any = true;
      const double x0 = x.clamped(at), x1 = x.clamped(std::min(1.0, at + v));
      out += fmt::format(
          "<rect class=\"mark\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
          "fill-opacity=\"0.85\"><title>{}</title></rect>\n",
          px(x0), px(y + 3), px(std::max(0.5, x1 - x0)), px(kRow - 6), palette_colour(si),
          xml_escape(fmt::format("{}, {}: {:.1f}%", chart.categories[r], s.name, 100 * v)));
      at += v;
    }
    if (!any) {
      out += text(x.clamped(0) + 4, y + kRow / 2 + 4, "n/a", "start",
                  " fill=\"#777\" font-size=\"11\"");
    }
  }
  out += line(x.clamped(0.5), top, x.clamped(0.5), top + plot_h, "#333", 1.0,
              " stroke-dasharray=\"3 2\"");
  out += "</g>\n</svg>\n";
  return out;
}

namespace svg {

bool clip_line(double intercept, double slope, double ylo, double yhi, double& x0, double& x1) {
  if (!finite(intercept) || !finite(slope) || !(x0 < x1)) return false;
  if (slope != 0) {
    const double xa = (ylo - intercept) / slope, xb = (yhi - intercept) / slope;
    x0 = std::max(x0, std::min(xa, xb));
    x1 = std::min(x1, std::max(xa, xb));
  } else if (intercept < ylo || intercept > yhi) {
    return false;
  }
  return x0 < x1;
}

}  // namespace svg

}  // namespace vlbias::report_internal
