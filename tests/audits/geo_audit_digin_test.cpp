// The geo-diversity audit's grouping logic on the real shapes of DIG-In's prompt lists
// (facebookresearch/DIG-In, CC-BY-NC: never shipped with vlbias). When the lists are present
// (VLBIAS_DIGIN_DIR, or ../shared/data/dig-in beside the checkout) the test reads them with
// vlbias's own CSV reader (pandas' unnamed index column included), writes a small extract of
// a few objects into a temporary folder, gives every row synthetic features, and checks that
// forms are inferred from the real columns (an {object} row has no region, a country row has a
// country), that country prompts merge by region, that DIG-In's region spellings alias onto
// GeoDE's, and that every set has the size the lists imply. Without the lists it is skipped.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audits/geo_study.h"
#include "cli/cli_util.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_geo_audit_digin_test {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path digin_dir() {
  if (const char* env = std::getenv("VLBIAS_DIGIN_DIR")) return env;
  return fs::path(VLBIAS_SOURCE_DIR) / ".." / "shared" / "data" / "dig-in";
}

// The rows of `t` whose object is in `objects`, as a CSV with the same columns (text cells).
std::size_t write_extract(const Table& t, const std::set<std::string>& objects,
                          const fs::path& out) {
  const Column& object = t.column("object");
  std::string csv;
  for (std::size_t c = 1; c < t.columns.size(); ++c) {
    csv += ",";  // the first (pandas index) name stays empty
    csv += t.columns[c].name;
  }
  csv += "\n";
  std::size_t rows = 0;
  for (std::size_t r = 0; r < t.rows; ++r) {
    if (!objects.count(object.text(r))) continue;
    ++rows;
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      if (c > 0) csv += ",";
      csv += "\"";
      csv += t.columns[c].text(r);
      csv += "\"";
    }
    csv += "\n";
  }
  std::ofstream(out, std::ios::binary) << csv;
  return rows;
}

void write_features(const fs::path& p, std::size_t rows, std::uint64_t seed) {
  Matrix m(rows, 8);
  Rng rng(seed);
  for (float& v : m.data) v = static_cast<float>(synthetic::gaussian(rng));
  write_npy(p, m);
}

// Real data: `per_cell` rows for each (object, region).
void write_real(const fs::path& dir, const std::vector<std::string>& regions,
                const std::set<std::string>& objects, std::size_t per_cell) {
  std::string csv = "region,object\n";
  std::size_t rows = 0;
  for (const auto& o : objects)
    for (const auto& r : regions)
      for (std::size_t i = 0; i < per_cell; ++i, ++rows) csv += fmt::format("{},\"{}\"\n", r, o);
  std::ofstream(dir / "real.csv") << csv;
  write_features(dir / "real.npy", rows, 1);
}

// n_generated per region for one form, from results.json.
std::map<std::string, std::size_t> generated_per_region(const json& results, const char* form) {
  std::map<std::string, std::size_t> out;
  for (const json& f : results["analyses"]["region"]["forms"]) {
    if (f["form"] != form) continue;
    for (const json& c : f["regions"]) out[c["region"]] = c["n_generated"].get<std::size_t>();
  }
  return out;
}

TEST(GeoDigIn, DollarStreetPromptListsGroupAsTheyShould) {
  const fs::path src = digin_dir();
  if (!fs::exists(src / "ds_prompts_regions_fulldataset.csv")) {
    GTEST_SKIP() << "DIG-In prompt lists not found at " << src
                 << " (CC-BY-NC, not shipped; set VLBIAS_DIGIN_DIR)";
  }
  const Table regions_list = read_table((src / "ds_prompts_regions_fulldataset.csv").string());
  const Table countries_list = read_table((src / "ds_prompts_countries_fulldataset.csv").string());
  // pandas' index column is read, not refused.
  ASSERT_EQ(regions_list.columns[0].name, "Unnamed: 0");
  const std::set<std::string> objects = {"refrigerator", "car keys", "cooking pots", "bedroom"};
  const fs::path dir = cli_util::temp_dir();
  const std::size_t n_regions = write_extract(regions_list, objects, dir / "regions.csv");
  const std::size_t n_countries = write_extract(countries_list, objects, dir / "countries.csv");
  write_features(dir / "regions.npy", n_regions, 2);
  write_features(dir / "countries.npy", n_countries, 3);
  const std::vector<std::string> real_regions = {"Africa", "Americas", "Asia", "Europe"};
  write_real(dir, real_regions, objects, 30);
  std::ofstream(dir / "spec.yaml")
      << "kind: geo-diversity\nseed: 1\n"
      << "real: {table: real.csv, features: real.npy}\n"
      << "generated:\n"
      << "  - {table: regions.csv, features: regions.npy}\n"
      << "  - {table: countries.csv, features: countries.npy}\n"
      << "aliases: {region: {\"the Americas\": Americas}}\n"
      << "analyses: {region: {bootstrap: 20}, object_region: false, distribution: false}\n";
  const cli_util::CliResult r = cli_util::run_cli("--quiet audit '" + (dir / "spec.yaml").string() +
                                                  "' --out '" + (dir / "run").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(cli_util::read_file(dir / "run/results.json"));

  // Expected counts straight from the lists.
  std::size_t object_rows = 0;
  std::map<std::string, std::size_t> region_rows, country_rows;
  const auto alias = [](const std::string& v) { return v == "the Americas" ? "Americas" : v; };
  for (std::size_t i = 0; i < regions_list.rows; ++i) {
    if (!objects.count(regions_list.column("object").text(i))) continue;
    const std::string reg = regions_list.column("region").text(i);
    if (reg.empty()) {
      ++object_rows;
    } else {
      ++region_rows[alias(reg)];
    }
  }
  for (std::size_t i = 0; i < countries_list.rows; ++i) {
    if (objects.count(countries_list.column("object").text(i))) {
      ++country_rows[alias(countries_list.column("region").text(i))];
    }
  }
  std::size_t region_total = 0, country_total = 0;
  for (const auto& [k, v] : region_rows) region_total += v;
  for (const auto& [k, v] : country_rows) country_total += v;
  EXPECT_GT(object_rows, 0u);
  EXPECT_EQ(out["generated"]["by_form"]["object"], object_rows);
  EXPECT_EQ(out["generated"]["by_form"]["object-region"], region_total);
  EXPECT_EQ(out["generated"]["by_form"]["object-country"], country_total);
  EXPECT_EQ(out["generated"]["matching"]["left_out"], 0);
  EXPECT_EQ(generated_per_region(out, "object-region"), region_rows);
  // Countries merge by their region: 16 countries, 4 regions.
  EXPECT_EQ(generated_per_region(out, "object-country"), country_rows);
  // {object} generations: each region's matched sample copies its real object mix (30 per
  // object; every object has at least 30 {object} prompts in the list).
  for (const auto& [region, n] : generated_per_region(out, "object")) {
    EXPECT_EQ(n, 30u * objects.size()) << region;
  }
}

TEST(GeoDigIn, GeodeCountryListAliasesOntoGeodeRegions) {
  const fs::path src = digin_dir();
  if (!fs::exists(src / "geode_prompts_countries_fulldataset.csv")) {
    GTEST_SKIP() << "DIG-In prompt lists not found at " << src
                 << " (CC-BY-NC, not shipped; set VLBIAS_DIGIN_DIR)";
  }
  const Table list = read_table((src / "geode_prompts_countries_fulldataset.csv").string());
  const std::set<std::string> objects = {"bag", "dog", "stove"};
  const fs::path dir = cli_util::temp_dir();
  const std::size_t n = write_extract(list, objects, dir / "countries.csv");
  write_features(dir / "countries.npy", n, 4);
  // GeoDE's own region names, as DIG-In's compute_metrics.py maps them.
  const std::vector<std::string> real_regions = {"Africa", "Americas",      "EastAsia",
                                                 "Europe", "SouthEastAsia", "WestAsia"};
  write_real(dir, real_regions, objects, 20);
  std::ofstream(dir / "spec.yaml")
      << "kind: geo-diversity\n"
      << "real: {table: real.csv, features: real.npy}\n"
      << "generated: {table: countries.csv, features: countries.npy}\n"
      << "aliases: {region: {\"the Americas\": Americas, \"East Asia\": EastAsia,\n"
      << "                   \"Southeast Asia\": SouthEastAsia, \"West Asia\": WestAsia}}\n"
      << "analyses: {region: {bootstrap: 20}, object_region: {bootstrap: 20},\n"
      << "           distribution: false}\n";
  const cli_util::CliResult r = cli_util::run_cli("--quiet audit '" + (dir / "spec.yaml").string() +
                                                  "' --out '" + (dir / "run").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(cli_util::read_file(dir / "run/results.json"));
  EXPECT_EQ(out["generated"]["by_form"]["object-country"], n);
  EXPECT_EQ(out["generated"]["matching"]["left_out"], 0);
  EXPECT_FALSE(out["generated"]["matching"].contains("regions_not_in_real"));
  const auto per_region = generated_per_region(out, "object-country");
  ASSERT_EQ(per_region.size(), 6u);
  std::size_t total = 0;
  for (const auto& [region, count] : per_region) total += count;
  EXPECT_EQ(total, n);
  // Every (object, region) cell of the object-region indicator got its generations.
  std::size_t cells = 0;
  for (const json& c : out["analyses"]["object_region"]["cells"]) {
    EXPECT_GT(c["n_generated"].get<std::size_t>(), 0u) << c.dump();
    ++cells;
  }
  EXPECT_EQ(cells, 3u * 6u);
}

}  // namespace in_geo_audit_digin_test
}  // namespace
}  // namespace vlbias
