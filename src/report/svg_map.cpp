// The choropleth world map of svg_chart.h on the shipped Natural Earth geometry
// (data/world/countries.csv, compiled in by CMake as builtin_world_csv()).
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "svg_chart.h"
#include "svg_chart_primitives.h"
#include "vlbias/io/table/table.h"

namespace vlbias::report_internal {

std::string_view builtin_world_csv();

using namespace svg;  // NOLINT(build/namespaces): the primitives are this file's vocabulary

namespace {

constexpr double kCanvasWidth = 1440, kCanvasHeight = 568;  // tools/make_world_geometry.py
constexpr const char* kNoData = "#d9d9d9";

// Lower case without spaces, hyphens, dots or a leading "the": "South-East Asia",
// "SouthEastAsia" and "southeast asia" are one key.
std::string area_key(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80)
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (out.starts_with("the") && out.size() > 3 && name.size() > 4 && name[3] == ' ')
    out.erase(0, 3);
  return out;
}

// Region names -> the M49 sub-regions they join. SeeGULL's nine regions follow
// data/seegull/REGIONS.md (the Caucasus states and Cyprus are in Europe there: handled in
// map_area_countries); DIG-In/GeoDE's six and Dollar Street's four are the continents cut at
// M49 sub-region borders (Southern and Central Asia are in none of GeoDE's).
const std::map<std::string, std::vector<std::string>>& region_table() {
  static const std::map<std::string, std::vector<std::string>> table = [] {
    const std::vector<std::pair<std::string, std::vector<std::string>>> regions = {
        {"Africa", {"Northern Africa", "Sub-Saharan Africa"}},
        {"Americas", {"Northern America", "Latin America and the Caribbean"}},
        {"America", {"Northern America", "Latin America and the Caribbean"}},
        {"Asia",
         {"Central Asia", "Eastern Asia", "South-eastern Asia", "Southern Asia", "Western Asia"}},
        {"East Asia", {"Eastern Asia"}},
        {"South-East Asia", {"South-eastern Asia"}},
        {"West Asia", {"Western Asia"}},
        {"South Asia", {"Southern Asia"}},
        {"North America", {"Northern America"}},
        {"Middle East and North Africa", {"Northern Africa", "Western Asia"}},
    };
    std::map<std::string, std::vector<std::string>> t;
    for (const auto& r : regions) t[area_key(r.first)] = r.second;
    return t;
  }();
  return table;
}

// SeeGULL's regions.csv moves these M49 Western Asia countries to Europe.
bool seegull_caucasus(const std::string& iso3) {
  return iso3 == "ARM" || iso3 == "AZE" || iso3 == "GEO" || iso3 == "CYP" || iso3 == "CYN";
}

// matplotlib's viridis at t = 0, 1/8, ..., 1 (cm.viridis(k / 8) x 255, rounded; matplotlib 3.6).
constexpr std::array<std::array<int, 3>, 9> kViridis = {{{68, 1, 84},
                                                         {71, 45, 123},
                                                         {59, 82, 139},
                                                         {44, 114, 142},
                                                         {33, 145, 140},
                                                         {40, 174, 128},
                                                         {94, 201, 98},
                                                         {173, 220, 48},
                                                         {253, 231, 37}}};

}  // namespace

const std::vector<MapCountry>& world_countries() {
  static const std::vector<MapCountry> countries = [] {
    const Table t = parse_csv(builtin_world_csv(), "<built-in data/world/countries.csv>");
    const Column &iso = t.column("iso3"), &name = t.column("name");
    const Column &sub = t.column("subregion"), &path = t.column("path");
    std::vector<MapCountry> out;
    for (std::size_t r = 0; r < t.rows; ++r)
      out.push_back({iso.text(r), name.text(r), sub.text(r), path.text(r)});
    return out;
  }();
  return countries;
}

std::vector<std::string> map_area_countries(const std::string& name) {
  const std::string key = area_key(name);
  std::vector<std::string> out;
  if (key.empty()) return out;
  for (const MapCountry& c : world_countries()) {
    if (area_key(c.iso3) == key || area_key(c.name) == key) return {c.iso3};
  }
  const auto& table = region_table();
  const auto it = table.find(key);
  const bool europe = key == "europe";
  const bool mena = key == area_key("Middle East and North Africa");
  for (const MapCountry& c : world_countries()) {
    bool in = area_key(c.subregion) == key;
    if (it != table.end())
      in = in || std::any_of(it->second.begin(), it->second.end(),
                             [&](const std::string& s) { return s == c.subregion; });
    if (europe && seegull_caucasus(c.iso3)) in = true;
    if (mena && seegull_caucasus(c.iso3)) in = false;
    if (in) out.push_back(c.iso3);
  }
  return out;
}

std::string viridis_hex(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 8;
  const auto i = std::min<std::size_t>(7, static_cast<std::size_t>(t));
  const double f = t - static_cast<double>(i);
  std::array<int, 3> c{};
  for (std::size_t k = 0; k < 3; ++k)
    c[k] =
        static_cast<int>(std::lround(kViridis[i][k] + f * (kViridis[i + 1][k] - kViridis[i][k])));
  return fmt::format("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]);
}

namespace {

// The colour bar under the map: 40 steps, 5 labelled values, and the "no data" swatch.
std::string map_legend(double lo, double hi, bool diverging, const std::string& label, double y) {
  std::string out = "<g class=\"legend\">\n";
  const double x0 = 60, w = 360, h = 12;
  constexpr int kSteps = 40;
  auto colour = [&](double v) {
    if (diverging) return diverging_hex(hi > 0 ? v / hi : 0.0);
    return viridis_hex(hi > lo ? (v - lo) / (hi - lo) : 0.5);
  };
  for (int k = 0; k < kSteps; ++k) {
    const double v = lo + (hi - lo) * (k + 0.5) / kSteps;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
                       px(x0 + w * k / kSteps), px(y), px(w / kSteps + 0.3), px(h), colour(v));
  }
  // Round values along the bar (the data table holds each area's exact value).
  const std::vector<double> ticks = nice_ticks(lo, hi, 4);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1.0;
  for (double t : ticks) {
    const double x = hi > lo ? x0 + w * (t - lo) / (hi - lo) : x0 + w / 2;
    out += line(x, y + h, x, y + h + 4, "#555");
    out += text(x, y + h + 16, tick_label(t, step), "middle", " fill=\"#333\" font-size=\"11\"");
  }
  out += text(x0 + w / 2, y + h + 32, label, "middle", " fill=\"#222\"");
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"18\" height=\"{}\" fill=\"{}\" stroke=\"#999\"/>\n",
      px(x0 + w + 40), px(y), px(h), kNoData);
  out += text(x0 + w + 64, y + 10, "no data", "start", " fill=\"#222\"");
  out += "</g>\n";
  return out;
}

}  // namespace

std::string svg_choropleth(const Choropleth& chart) {
  // Country -> (value, area); the first area naming a country keeps it.
  std::map<std::string, std::pair<double, std::string>> fill;
  std::vector<std::string> unplaced;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const MapArea& a : chart.areas) {
    const std::vector<std::string> codes = map_area_countries(a.name);
    if (codes.empty()) unplaced.push_back(a.name);
    if (!finite(a.value)) continue;
    lo = std::min(lo, a.value);
    hi = std::max(hi, a.value);
    for (const std::string& c : codes) fill.emplace(c, std::make_pair(a.value, a.name));
  }
  if (lo > hi) lo = hi = 0;
  if (chart.diverging) {  // symmetric around 0, so white is 0
    hi = std::max(std::abs(lo), std::abs(hi));
    lo = -hi;
  }
  const double scale = (kWidth - 16) / kCanvasWidth;
  const double top = kTitleHeight + 4, map_h = kCanvasHeight * scale;
  const double unplaced_h = unplaced.empty() ? 0 : kLegendHeight;
  const double height = top + map_h + 8 + 48 + unplaced_h;
  std::string out = svg_open("map", chart.title, height);
  // A nested <svg> on the canvas' coordinates clips the copies of rings that cross the
  // antimeridian (data/world/README.md) to the map.
  out += fmt::format(
      "<svg x=\"8\" y=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "overflow=\"hidden\">\n<g class=\"marks\" stroke=\"#fff\" stroke-width=\"{:.2f}\" "
      "stroke-linejoin=\"round\">\n",
      px(top), px(kWidth - 16), px(map_h), kCanvasWidth, kCanvasHeight, 0.6 / scale);
  for (const MapCountry& c : world_countries()) {
    const auto it = fill.find(c.iso3);
    if (it == fill.end()) {
      out += fmt::format("<path d=\"{}\" fill=\"{}\"><title>{}: no data</title></path>\n", c.path,
                         kNoData, xml_escape(c.name));
      continue;
    }
    const double v = it->second.first;
    const std::string colour = chart.diverging ? diverging_hex(hi > 0 ? v / hi : 0.0)
                                               : viridis_hex(hi > lo ? (v - lo) / (hi - lo) : 0.5);
    const std::string area = it->second.second;
    out += fmt::format(
        "<path class=\"mark\" data-iso3=\"{}\" d=\"{}\" fill=\"{}\"><title>{}{}: "
        "{}</title></path>\n",
        c.iso3, c.path, colour, xml_escape(c.name),
        area_key(area) == area_key(c.name) || area == c.iso3 ? "" : " (" + xml_escape(area) + ")",
        num(v));
  }
  out += "</g>\n</svg>\n";
  out += map_legend(lo, hi, chart.diverging, chart.value_label, top + map_h + 8);
  if (!unplaced.empty()) {
    std::string names;
    for (const std::string& n : unplaced) names += (names.empty() ? "" : ", ") + n;
    out += text(8, height - 6, "Not on the map (unknown country or region): " + names, "start",
                " fill=\"#777\" font-size=\"11\"");
  }
  out += "</svg>\n";
  return out;
}

}  // namespace vlbias::report_internal
