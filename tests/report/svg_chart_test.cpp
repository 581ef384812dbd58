// Our SVG chart writer and the report's building blocks (src/report/svg_chart.h,
// report_page.h): every chart is well-formed XML (libxml2) with one mark per value, hostile
// labels stay well-formed, missing and infinite values draw no broken geometry, and the
// number formats are the documented ones.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "report_checks.h"
#include "report_page.h"
#include "svg_chart.h"
#include "svg_chart_primitives.h"
#include "vlbias/core/error.h"

namespace vlbias::report_internal {
namespace {
namespace in_svg_chart_test {

using report_checks::parse_xml;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Parses one chart, checks it is well-formed and has no NaN/inf coordinates; returns the
// number of marks.
std::size_t marks_of(const std::string& svg) {
  std::string error;
  const auto doc = parse_xml(svg, error);
  EXPECT_TRUE(doc) << error << "\n" << svg.substr(0, 400);
  if (!doc) return 0;
  for (const char* bad : {"nan", "inf\"", "=\"-inf"}) {
    EXPECT_EQ(svg.find(std::string("=\"") + bad), std::string::npos) << "bad coordinate: " << bad;
  }
  EXPECT_EQ(svg.find("NaN"), std::string::npos);
  std::size_t marks = 0;
  report_checks::walk(xmlDocGetRootElement(doc.get()), [&](xmlNode* e) {
    const std::string c = report_checks::attr(e, "class");
    if (c == "mark" || c.rfind("mark ", 0) == 0) ++marks;
  });
  return marks;
}

TEST(XmlEscape, EscapesMarkupAndRepairsBytes) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(xml_escape("caf\xC3\xA9"), "caf\xC3\xA9");            // valid UTF-8 kept
  EXPECT_EQ(xml_escape("bad\xFF"), "bad\xEF\xBF\xBD");            // invalid byte
  EXPECT_EQ(xml_escape("\xC3"), "\xEF\xBF\xBD");                  // truncated sequence
  EXPECT_EQ(xml_escape("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  EXPECT_EQ(xml_escape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(xml_escape(std::string("a\0b\x01\tc", 6)), "ab\tc");  // control characters
}

TEST(NiceTicks, StepsOfOneTwoFive) {
  const auto unit = nice_ticks(0, 1, 5);
  ASSERT_EQ(unit.size(), 6u);
  for (std::size_t i = 0; i < unit.size(); ++i) EXPECT_NEAR(unit[i], 0.2 * i, 1e-15);
  const auto t = nice_ticks(-0.148, -0.132, 6);
  ASSERT_GE(t.size(), 4u);
  for (std::size_t i = 1; i < t.size(); ++i) EXPECT_NEAR(t[i] - t[i - 1], 0.002, 1e-12);
  EXPECT_TRUE(nice_ticks(NAN, 1, 5).empty());
  EXPECT_EQ(nice_ticks(3, 3, 5).size(), 1u);
  EXPECT_EQ(tick_label(0.30000000000000004, 0.1), "0.3");
  EXPECT_EQ(tick_label(-0.146, 0.002), "-0.146");
}

TEST(FormatNumber, DocumentedFormats) {
  EXPECT_EQ(format_number(0.0213456, Fmt::g4), "0.02135");
  EXPECT_EQ(format_number(1234567.0, Fmt::g4), "1.235e+06");
  EXPECT_EQ(format_number(0.0123, Fmt::p), "0.0123");
  EXPECT_EQ(format_number(0.000123, Fmt::p), "1.23e-04");
  EXPECT_EQ(format_number(1.0, Fmt::p), "1");
  EXPECT_EQ(format_number(42, Fmt::integer), "42");
  EXPECT_EQ(format_number(0.6410256, Fmt::pct), "64.1%");
  EXPECT_EQ(format_number(NAN, Fmt::g4), "n/a");
  EXPECT_EQ(format_number(kInf, Fmt::g4), "inf");
  EXPECT_EQ(format_number(-kInf, Fmt::p), "-inf");
  for (Fmt f : {Fmt::g4, Fmt::p, Fmt::integer, Fmt::pct}) EXPECT_EQ(parse_fmt(fmt_name(f)), f);
  EXPECT_THROW(parse_fmt("g5"), InputError);
}

TEST(BarChart, OneMarkPerFiniteValueWithHostileLabels) {
  BarChart c;
  c.title = "t <script>&";
  c.x_label = "x \xFF";
  c.categories = {"a", "b & <c>", "\xC3", "d"};
  c.series.push_back({"s1", {0.1, -0.2, NAN, kInf}, {0.0, -0.3, NAN, 1.0}, {0.2, -0.1, NAN, kInf}});
  c.series.push_back({"s2", {0.3, 0.1, 0.2, 0.0}, {}, {}});
  EXPECT_EQ(marks_of(svg_bar_chart(c)), 7u);  // NaN draws "n/a", inf is clipped
  c.points = true;
  EXPECT_EQ(marks_of(svg_bar_chart(c)), 7u);
  BarChart log;
  log.log_x = true;
  log.reference = 1;
  log.categories = {"a", "b", "c"};
  log.series.push_back({"theta", {0.5, 30, 0}, {0.2, 10, 0}, {0.9, kInf, 0}});  // 0: no bar on log
  EXPECT_EQ(marks_of(svg_bar_chart(log)), 2u);
  BarChart empty;
  EXPECT_EQ(marks_of(svg_bar_chart(empty)), 0u);  // still well-formed
}

TEST(OtherCharts, WellFormedWithOneMarkPerItem) {
  BoxChart b;
  b.items = {{"age", 0, 0.01, 0.02, 0.03, 0.06, 0.021}, {"race", NAN, NAN, NAN, NAN, NAN, NAN}};
  EXPECT_EQ(marks_of(svg_box_chart(b)), 1u);

  LineChart l;
  l.series = {{"g1", {1, 2, 3}, {0.1, 0.2, NAN}, {0.0, 0.1, 0.0}}, {"g2", {1, 2}, {0.3, 0.1}, {}}};
  EXPECT_EQ(marks_of(svg_line_chart(l)), 4u);

  ScatterChart s;
  EllipseSeries e{"g", {0.1, 0.2, 0.3}, {0.3, 0.1, 0.2}, 0.2, 0.2, 0.1, 0.05, 0.5, true};
  s.series = {e};
  EXPECT_EQ(marks_of(svg_scatter_chart(s)), 4u);  // 3 points + the ellipse

  ForestChart f;
  f.rows = {
      {"a", 0.1, 0.0, 0.2, true}, {"b", NAN, NAN, NAN, false}, {"c", -0.1, -kInf, 0.0, false}};
  EXPECT_EQ(marks_of(svg_forest_chart(f)), 2u);

  Heatmap h;
  h.row_labels = {"r1", "r2"};
  h.col_labels = {"c1", "c2", "c3"};
  h.values = {0.1, -0.2, NAN, 0.0, 0.3, kInf};
  h.marks = {"*", "", "", "", "*", ""};
  EXPECT_EQ(marks_of(svg_heatmap(h)), 4u);
  h.diverging = false;
  h.values = {1, 1, 1, 1, 1, 1};  // a constant grid
  EXPECT_EQ(marks_of(svg_heatmap(h)), 6u);

  StepChart st;
  st.x = {0, 0.5, 1.0};
  st.series = {{"a", {3, 1}}, {"b", {0, 4}}};
  EXPECT_EQ(marks_of(svg_step_chart(st)), 2u);
  st.histogram = false;
  st.x = {0.5, 1.0};
  st.series = {{"a", {0.75, 1.0}}};
  EXPECT_EQ(marks_of(svg_step_chart(st)), 1u);
}

TEST(Node, PointersAndMissingKeys) {
  const Json j = Json::parse(R"({"a": {"b/c": [1, null, "x"], "t~": 2}})");
  const Node root(&j, "");
  EXPECT_EQ(root["a"]["b/c"][0].ptr(), "/a/b~1c/0");
  EXPECT_EQ(root["a"]["t~"].ptr(), "/a/t~0");
  EXPECT_EQ(root["a"]["b/c"][0].number(), 1.0);
  EXPECT_TRUE(std::isnan(root["a"]["b/c"][1].number()));
  EXPECT_TRUE(std::isnan(root["a"]["b/c"][2].number()));
  EXPECT_TRUE(root["missing"]["deeper"][3].null());
  EXPECT_EQ(root["a"]["b/c"][7].size(), 0u);
  EXPECT_EQ(group_label(Node(&j["a"], "/a")), "[1,null,\"x\"] 2");
}

TEST(StackedBarChart, OneMarkPerPositiveShareAndNaRowsSaySo) {
  StackedBarChart c;
  c.title = "gender per prompt";
  c.x_label = "share";
  c.categories = {"a photo of a nurse", "<b>empty</b>", "a photo of a pilot"};
  c.series = {{"female", {0.9, NAN, 0.0}, {}, {}}, {"male", {0.1, NAN, 1.0}, {}, {}}};
  const std::string svg = svg_stacked_bar_chart(c);
  EXPECT_EQ(marks_of(svg), 3u);  // 0.9 + 0.1, and 1.0: a share of 0 draws nothing
  EXPECT_NE(svg.find("n/a"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
}

TEST(ScatterChart, TheFittedLineKeepsItsSlopeWhereItIsCutToThePlot) {
  double x0 = 0, x1 = 1;
  // y = -0.1 + 1.2 x leaves [0, 1] at x = 1/12 and x = 11/12.
  ASSERT_TRUE(svg::clip_line(-0.1, 1.2, 0.0, 1.0, x0, x1));
  EXPECT_NEAR(x0, 1.0 / 12, 1e-15);
  EXPECT_NEAR(x1, 11.0 / 12, 1e-15);
  x0 = 0, x1 = 1;
  EXPECT_FALSE(svg::clip_line(2.0, 0.0, 0.0, 1.0, x0, x1));  // flat, above the plot
  EXPECT_FALSE(svg::clip_line(NAN, 1.0, 0.0, 1.0, x0, x1));
  ScatterChart c;
  c.title = "generated vs real";
  c.series = {{"prompts", {0.1, 0.5, 0.9}, {0.05, 0.5, 0.97}}};
  c.diagonal = true;
  c.fit_intercept = -0.1;
  c.fit_slope = 1.2;
  EXPECT_NE(svg_scatter_chart(c).find("<line class=\"fit\""), std::string::npos);
}

}  // namespace in_svg_chart_test
}  // namespace
}  // namespace vlbias::report_internal

namespace vlbias::report_internal {
namespace {
namespace in_svg_chart_test {

TEST(ForestChart, ManyRowsKeepTheSignificantAndTheLargest) {
  ForestChart f;
  for (std::size_t i = 0; i < 200; ++i) {
    f.rows.push_back({std::string("r").append(std::to_string(i)), 0.001 * static_cast<double>(i), 0,
                      0.3, i == 3});
  }
  const std::string svg = svg_forest_chart(f);
  EXPECT_EQ(marks_of(svg), kForestMaxRows);
  EXPECT_NE(svg.find("80 of 200 shown"), std::string::npos);
  EXPECT_NE(svg.find(">r3<"), std::string::npos);    // significant, though small
  EXPECT_NE(svg.find(">r199<"), std::string::npos);  // the largest
  EXPECT_EQ(svg.find(">r100<"), std::string::npos);  // neither
}
}  // namespace in_svg_chart_test
}  // namespace
}  // namespace vlbias::report_internal
