// The charts the papers use (src/report/svg_chart.h): the scatter's diagonal and labelled
// points at hand-computed pixels, box statistics against numpy/matplotlib
// (tools/make_box_fixtures.py), and the choropleth's shipped world geometry and region names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "report_checks.h"
#include "svg_chart.h"
#include "test_util.h"

namespace vlbias::report_internal {
namespace {
namespace in_svg_paper_charts_test {

// The value of attribute `name` in the first element of `svg` matching `element_regex`.
double attribute_of(const std::string& svg, const std::string& element_regex,
                    const std::string& name) {
  std::smatch m;
  const std::regex e(element_regex);
  if (!std::regex_search(svg, m, e)) {
    ADD_FAILURE() << "no element " << element_regex;
    return NAN;
  }
  const std::string el = m.str(0);
  std::smatch a;
  if (!std::regex_search(el, a, std::regex(" " + name + "=\"([^\"]*)\""))) return NAN;
  return std::stod(a[1].str());
}

// Bounding box (min x, min y, max x, max y) of path data written with M/m and l/z only (as
// tools/make_world_geometry.py writes it): absolute first move, relative after.
std::vector<double> path_bbox(const std::string& d) {
  std::vector<double> box = {1e9, 1e9, -1e9, -1e9};
  double x = 0, y = 0, start_x = 0, start_y = 0;
  char command = 0;
  const char* p = d.c_str();
  while (*p != '\0') {
    if (std::isalpha(static_cast<unsigned char>(*p))) {
      command = *p++;
      if (command == 'z') {
        x = start_x;
        y = start_y;
      }
      continue;
    }
    char* end = nullptr;
    const double dx = std::strtod(p, &end);
    if (*end == ' ') ++end;
    const double dy = std::strtod(end, &end);
    p = end;
    if (*p == ' ') ++p;
    if (command == 'M') {
      x = dx;
      y = dy;
    } else {
      x += dx;
      y += dy;
    }
    if (command == 'M' || command == 'm') {
      start_x = x;
      start_y = y;
      command = 'l';  // further pairs after a move are lines
    }
    box = {std::min(box[0], x), std::min(box[1], y), std::max(box[2], x), std::max(box[3], y)};
  }
  return box;
}

TEST(ScatterChart, DiagonalAndPointsSitAtHandComputedPixels) {
  ScatterChart chart;
  chart.diagonal = true;
  EllipseSeries s;
  s.name = "Europe";
  s.x = {0, 1};
  s.y = {0, 2};
  s.labels = {"Welsh", "Swiss"};
  chart.series = {s};
  const std::string svg = svg_scatter_chart(chart);
  // One legend line: top = 28 + 20 + 8 = 56, height 56 + 380 + 46, bottom 436; left 84,
  // right 736. Equal ranges [0, 2] padded by 5%: [-0.1, 2.1] on both axes.
  const double left = 84, right = 736, top = 56, bottom = 436;
  auto px_x = [&](double v) { return left + (v + 0.1) / 2.2 * (right - left); };
  auto px_y = [&](double v) { return bottom + (v + 0.1) / 2.2 * (top - bottom); };
  EXPECT_NEAR(attribute_of(svg, "<line [^>]*class=\"diagonal\"[^>]*>", "x1"), left, 0.01);
  EXPECT_NEAR(attribute_of(svg, "<line [^>]*class=\"diagonal\"[^>]*>", "y1"), bottom, 0.01);
  EXPECT_NEAR(attribute_of(svg, "<line [^>]*class=\"diagonal\"[^>]*>", "x2"), right, 0.01);
  EXPECT_NEAR(attribute_of(svg, "<line [^>]*class=\"diagonal\"[^>]*>", "y2"), top, 0.01);
  const std::string second = "<circle class=\"mark\" [^>]*><title>Swiss \\(Europe\\)";
  EXPECT_NEAR(attribute_of(svg, second, "cx"), px_x(1), 0.01);
  EXPECT_NEAR(attribute_of(svg, second, "cy"), px_y(2), 0.01);
  EXPECT_NE(svg.find(">Welsh</text>"), std::string::npos) << "labels are written beside points";
}

TEST(ScatterChart, WithoutDiagonalKeepsTheDataRanges) {
  ScatterChart chart;
  chart.series = {EllipseSeries{"g", {0, 1}, {0, 2}}};
  EXPECT_EQ(svg_scatter_chart(chart).find("class=\"diagonal\""), std::string::npos);
}

TEST(BoxItem, MatchesNumpyPercentilesAndMatplotlibWhiskers) {
  const auto& cases = testing_util::fixture_json("report/box_stats.json");
  ASSERT_GE(cases.size(), 5u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const BoxItem b = box_item("x", c["values"].get<std::vector<double>>());
    EXPECT_NEAR(b.q25, c["q25"].get<double>(), 1e-12);
    EXPECT_NEAR(b.median, c["median"].get<double>(), 1e-12);
    EXPECT_NEAR(b.q75, c["q75"].get<double>(), 1e-12);
    EXPECT_NEAR(b.mean, c["mean"].get<double>(), 1e-12);
    EXPECT_EQ(b.whisker_low, c["whisker_low"].get<double>());
    EXPECT_EQ(b.whisker_high, c["whisker_high"].get<double>());
    std::vector<double> fliers = b.fliers;
    std::sort(fliers.begin(), fliers.end());
    EXPECT_EQ(fliers, c["fliers"].get<std::vector<double>>());
  }
}

TEST(BoxItem, NoFiniteValuesGiveAnEmptyBox) {
  const BoxItem b = box_item("x", {NAN, INFINITY});
  EXPECT_TRUE(std::isnan(b.median));
  EXPECT_TRUE(b.fliers.empty());
}

TEST(BoxChart, BoxAndFliersSitAtHandComputedPixels) {
  BoxChart chart;
  BoxItem b = box_item("a", {0, 0.25, 0.5, 0.75, 1.0, 0.45, 0.55});
  b.fliers = {0.9};  // drawn wherever given
  chart.items = {b};
  const std::string svg = svg_box_chart(chart);
  // label_margin({"a"}) = 14 + 7 x 4 = 42; right = 760 - 24; the axis is [0, 1] (ticks of 0.2).
  const double left = 42, right = 736;
  auto px_x = [&](double v) { return left + v * (right - left); };
  EXPECT_NEAR(attribute_of(svg, "<rect class=\"mark\"[^>]*>", "x"), px_x(b.q25), 0.01);
  EXPECT_NEAR(attribute_of(svg, "<rect class=\"mark\"[^>]*>", "width"), px_x(b.q75) - px_x(b.q25),
              0.02);
  EXPECT_NEAR(attribute_of(svg, "<circle class=\"flier\"[^>]*>", "cx"), px_x(0.9), 0.01);
}

TEST(WorldGeometry, HasEveryCountryOnceWithKnownExtents) {
  const auto& world = world_countries();
  EXPECT_EQ(world.size(), 176u);  // Natural Earth 110m's 177 less Antarctica
  std::set<std::string> codes;
  for (const MapCountry& c : world) {
    EXPECT_TRUE(codes.insert(c.iso3).second) << c.iso3;
    EXPECT_EQ(c.path.front(), 'M') << c.iso3;
  }
  // Italy spans about 6.6 to 18.5 E and 36.6 to 47.1 N: at 4 px per degree from 180 W and
  // 84 N, x 747 to 794 and y 148 to 190 (a pixel of rounding and thinning allowed).
  const auto italy =
      std::find_if(world.begin(), world.end(), [](const MapCountry& c) { return c.iso3 == "ITA"; });
  ASSERT_NE(italy, world.end());
  const std::vector<double> box = path_bbox(italy->path);
  EXPECT_NEAR(box[0], (6.6 + 180) * 4, 3);
  EXPECT_NEAR(box[2], (18.5 + 180) * 4, 3);
  EXPECT_NEAR(box[1], (84 - 47.1) * 4, 3);
  EXPECT_NEAR(box[3], (84 - 36.6) * 4, 3);
}

TEST(WorldGeometry, RingsCrossingTheAntimeridianAreUnwrapped) {
  // Russia and Fiji cross 180 degrees: drawn naively, a ring would jump across the whole map
  // (a horizontal band); unwrapped, no ring is wider than half the canvas.
  for (const MapCountry& c : world_countries()) {
    SCOPED_TRACE(c.iso3);
    std::size_t start = 0;
    while (start < c.path.size()) {
      std::size_t end = c.path.find_first_of("Mm", start + 1);
      if (end == std::string::npos) end = c.path.size();
      std::string ring = c.path.substr(start, end - start);
      ring[0] = 'M';  // the ring's own extent, from its start
      const std::vector<double> box = path_bbox(ring);
      EXPECT_LT(box[2] - box[0], 720) << ring.substr(0, 80);
      start = end;
    }
  }
}

TEST(MapAreas, RegionNamesOfEverySchemeReachTheirCountries) {
  auto has = [](const std::string& area, const std::string& iso3) {
    const auto c = map_area_countries(area);
    return std::find(c.begin(), c.end(), iso3) != c.end();
  };
  EXPECT_EQ(map_area_countries("France"), std::vector<std::string>{"FRA"});
  EXPECT_EQ(map_area_countries("fra"), std::vector<std::string>{"FRA"});
  for (const char* name : {"South-East Asia", "SouthEastAsia", "Southeast Asia"}) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(has(name, "IDN"));
    EXPECT_FALSE(has(name, "CHN"));
  }
  EXPECT_TRUE(has("the Americas", "BRA"));
  EXPECT_TRUE(has("Americas", "USA"));
  EXPECT_TRUE(has("Africa", "EGY"));
  EXPECT_TRUE(has("West Asia", "TUR"));
  EXPECT_TRUE(has("Asia", "IND"));  // Dollar Street's Asia
  EXPECT_FALSE(has("West Asia", "IND"));
  // SeeGULL's regions (data/seegull/REGIONS.md): the Caucasus is in Europe, not MENA.
  EXPECT_TRUE(has("Middle East and North Africa", "MAR"));
  EXPECT_FALSE(has("Middle East and North Africa", "ARM"));
  EXPECT_TRUE(has("Europe", "ARM"));
  EXPECT_TRUE(has("Sub-Saharan Africa", "NGA"));
  EXPECT_TRUE(has("Latin America and the Caribbean", "MEX"));
  EXPECT_TRUE(map_area_countries("Atlantis").empty());
}

TEST(Choropleth, FillsAreasOnTheScaleAndGreysTheRest) {
  Choropleth map;
  map.areas = {{"Europe", 1.0}, {"Japan", 0.0}, {"Atlantis", 0.5}};
  const std::string svg = svg_choropleth(map);
  std::string error;
  EXPECT_TRUE(report_checks::parse_xml(svg, error)) << error;
  EXPECT_NE(svg.find("data-iso3=\"FRA\" d=\"M"), std::string::npos);
  EXPECT_NE(svg.find("data-iso3=\"JPN\""), std::string::npos);
  const std::string france = svg.substr(svg.find("data-iso3=\"FRA\""), 4000);
  EXPECT_NE(france.find("fill=\"" + viridis_hex(1.0) + "\""), std::string::npos);
  const std::string japan = svg.substr(svg.find("data-iso3=\"JPN\""), 4000);
  EXPECT_NE(japan.find("fill=\"" + viridis_hex(0.0) + "\""), std::string::npos);
  EXPECT_NE(svg.find("<title>Brazil: no data</title>"), std::string::npos);
  EXPECT_NE(svg.find(">no data</text>"), std::string::npos);
  EXPECT_NE(svg.find("Atlantis"), std::string::npos) << "unplaced areas are named";
}

TEST(Choropleth, SignedValuesUseTheDivergingScaleCentredOnZero) {
  Choropleth map;
  map.diverging = true;
  map.areas = {{"France", -2.0}, {"Spain", 0.0}, {"Italy", 1.0}};
  const std::string svg = svg_choropleth(map);
  const std::string spain = svg.substr(svg.find("data-iso3=\"ESP\""), 2000);
  EXPECT_NE(spain.find("fill=\"#f7f7f7\""), std::string::npos) << "0 is the scale's middle";
  const std::string france = svg.substr(svg.find("data-iso3=\"FRA\""), 4000);
  EXPECT_NE(france.find("fill=\"" + diverging_hex(-1.0) + "\""), std::string::npos);
  const std::string italy = svg.substr(svg.find("data-iso3=\"ITA\""), 2000);
  EXPECT_NE(italy.find("fill=\"" + diverging_hex(0.5) + "\""), std::string::npos);
}

TEST(ColourScales, ViridisAndPuOrEndPoints) {
  EXPECT_EQ(viridis_hex(0.0), "#440154");
  EXPECT_EQ(viridis_hex(0.5), "#21918c");  // matplotlib's cm.viridis(0.5)
  EXPECT_EQ(viridis_hex(1.0), "#fde725");
  EXPECT_EQ(viridis_hex(NAN), "#440154");
  EXPECT_EQ(diverging_hex(-1.0), "#542788");
  EXPECT_EQ(diverging_hex(1.0), "#b35806");
}

}  // namespace in_svg_paper_charts_test
}  // namespace
}  // namespace vlbias::report_internal
