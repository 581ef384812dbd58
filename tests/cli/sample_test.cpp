// End-to-end tests of `vlbias sample` against numpy/pandas: the rows that
// tools/make_sample_fixtures.py draws with np.random.default_rng(seed) per cell (and that
// pandas' groupby(...).sample(random_state=default_rng(seed)) draws), compared id for id.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/io/table/table.h"

namespace {
namespace in_sample_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

const json& cases() {
  return vlbias::testing_util::fixture_json("sample/cases.json");
}

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The command line of a fixture case, writing to OUT.csv and REPORT.json in the temp folder.
std::string command_of(const json& options, const std::string& out, const std::string& report) {
  std::string args = "--quiet sample --table " + cases()["table"].get<std::string>() + " --by " +
                     options["by"].get<std::string>() + " --seed " +
                     options["seed"].get<std::string>() + " --out '" + out + "' --report '" +
                     report + "'";
  if (options.contains("n")) args += " --n " + std::to_string(options["n"].get<int>());
  if (options.contains("frac")) args += " --frac " + options["frac"].dump();
  if (options.contains("where")) args += " --where " + shell_quoted(options["where"]);
  if (options.contains("per_cell_min")) {
    args += " --per-cell-min " + std::to_string(options["per_cell_min"].get<int>());
  }
  if (options.value("allow_short", false)) args += " --allow-short";
  if (options.value("replace", false)) args += " --replace";
  return args;
}

std::vector<long> ids_of(const std::string& path) {
  const vlbias::Table t = vlbias::read_table(path);
  std::vector<long> ids;
  for (const double v : t.numeric("id")) ids.push_back(static_cast<long>(v));
  return ids;
}

TEST(CliSample, DrawsTheRowsNumpyDrawsForEveryFixtureCase) {
  const vlbias::Table input = vlbias::read_table(cases()["table"].get<std::string>());
  for (const json& c : cases()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const std::string out = (temp_dir() / "sample.csv").string();
    const std::string report = (temp_dir() / "report.json").string();
    const CliResult r = run_cli(command_of(c["options"], out, report));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(ids_of(out), c["ids"].get<std::vector<long>>());
    const json rep = json::parse(read_file(report));
    ASSERT_EQ(rep["cells"].size(), c["cells"].size());
    for (std::size_t i = 0; i < c["cells"].size(); ++i) {
      SCOPED_TRACE("cell " + std::to_string(i));
      for (const char* k : {"key", "available", "target", "drawn", "status"}) {
        EXPECT_EQ(rep["cells"][i][k], c["cells"][i][k]) << k;
      }
    }
    // The sample keeps every column of the input, in the input's order.
    const vlbias::Table sample = vlbias::read_table(out);
    ASSERT_EQ(sample.columns.size(), input.columns.size());
    for (std::size_t k = 0; k < input.columns.size(); ++k) {
      EXPECT_EQ(sample.columns[k].name, input.columns[k].name);
    }
  }
}

TEST(CliSample, KeepsEveryCellOfTheDrawnRowsAsTheInputHasThem) {
  const vlbias::Table input = vlbias::read_table(cases()["table"].get<std::string>());
  const json& c = cases()["cases"][0];
  const std::string out = (temp_dir() / "sample.csv").string();
  const CliResult r = run_cli(command_of(c["options"], out, (temp_dir() / "report.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const vlbias::Table sample = vlbias::read_table(out);
  const std::vector<double>& input_ids = input.numeric("id");
  std::size_t at = 0;
  for (std::size_t row = 0; row < sample.rows; ++row) {
    while (at < input.rows && input_ids[at] != sample.numeric("id")[row]) ++at;
    ASSERT_LT(at, input.rows) << "row " << row << " is not in input order";
    for (std::size_t k = 0; k < input.columns.size(); ++k) {
      EXPECT_EQ(sample.columns[k].text(row), input.columns[k].text(at))
          << "row " << row << ", column " << input.columns[k].name;
    }
  }
}

TEST(CliSample, RefusesShortCellsUnlessAllowedAndReportsThemLoudly) {
  json options = cases()["cases"][2]["options"];  // the --allow-short case
  options.erase("allow_short");
  const std::string out = (temp_dir() / "sample.csv").string();
  const std::string report = (temp_dir() / "report.json").string();
  std::string args = command_of(options, out, report);
  args.replace(args.find("--quiet "), 8, "");
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("12 cell(s) have fewer rows than the target"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow-short"), std::string::npos) << r.err;
  // The stderr table lists every cell with its counts and status.
  EXPECT_NE(r.err.find("available"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("short"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  const json rep = json::parse(read_file(report));
  EXPECT_EQ(rep["short_cells"], 12);
  EXPECT_EQ(rep["written"], false);
}

TEST(CliSample, TheSameSeedGivesTheSameFileWhateverTheThreadCount) {
  const json& c = cases()["cases"][0];
  const std::string a = (temp_dir() / "a.csv").string();
  const std::string b = (temp_dir() / "b.csv").string();
  const std::string rep = (temp_dir() / "r.json").string();
  ASSERT_EQ(run_cli("--threads 1 " + command_of(c["options"], a, rep)).exit_code, 0);
  ASSERT_EQ(run_cli("--threads 2 " + command_of(c["options"], b, rep)).exit_code, 0);
  EXPECT_EQ(read_file(a), read_file(b));
  json other = c["options"];
  other["seed"] = "5";
  ASSERT_EQ(run_cli(command_of(other, b, rep)).exit_code, 0);
  EXPECT_NE(read_file(a), read_file(b));
}

TEST(CliSample, NamesTheFaultOfABadFilterOrBadOptions) {
  const std::string base = "sample --table " + cases()["table"].get<std::string>() +
                           " --n 3 --seed 1 --out '" + (temp_dir() / "o.csv").string() + "'";
  struct Bad {
    std::string extra, message;
  };
  const std::vector<Bad> bad = {
      {" --by race --where 'agee > 3'", "names column 'agee' (character 1), which"},
      {" --by race --where 'age >'",
       "expected a column or a value after the operator at character 6"},
      {" --by race --where 'race > 3'",
       "line 2, column 'race' holds \"East Asian\", which is not a number"},
      {" --by race --frac 0.5", "give exactly one of --n"},
      {" --by nope --where 'age > 3'", "'nope'"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.extra);
    const CliResult r = run_cli(base + b.extra);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(b.message), std::string::npos) << r.err;
  }
  const CliResult r =
      run_cli("sample --table " + cases()["table"].get<std::string>() +
              " --by race --frac 1.5 --seed 1 --out '" + (temp_dir() / "o.csv").string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("above 1 needs --replace"), std::string::npos) << r.err;
}

// --unit set: whole counterfactual sets, n per cell. The sets drawn are the ones a plain sample
// of the table of each set's first row draws (numpy's choice per cell, checked above), and
// every row of a drawn set comes out, in input order.
TEST(CliSample, DrawsWholeUnitsAsASampleOfTheirFirstRowsWouldAndKeepsEveryRowOfEach) {
  const fs::path dir = temp_dir();
  std::string rows = "set,occupation,race\n", units = "set,occupation\n";
  for (int s = 0; s < 9; ++s) {
    const std::string occupation = s < 5 ? "nurse" : "pilot";
    units += fmt::format("s{},{}\n", s, occupation);
    for (const char* race : {"Asian", "Black", "White"})
      rows += fmt::format("s{},{},{}\n", s, occupation, race);
  }
  std::ofstream(dir / "rows.csv") << rows;
  std::ofstream(dir / "units.csv") << units;
  const std::string tail = " --by occupation --n 2 --seed 7 --out ";
  const CliResult plain = run_cli("--quiet sample --table '" + (dir / "units.csv").string() + "'" +
                                  tail + "'" + (dir / "units_drawn.csv").string() + "'");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const CliResult by_unit = run_cli(
      "--quiet sample --unit set --table '" + (dir / "rows.csv").string() + "'" + tail + "'" +
      (dir / "rows_drawn.csv").string() + "' --report '" + (dir / "report.json").string() + "'");
  ASSERT_EQ(by_unit.exit_code, 0) << by_unit.err;

  const vlbias::Table drawn_units = vlbias::read_table((dir / "units_drawn.csv").string());
  ASSERT_EQ(drawn_units.rows, 4u);  // two sets of each occupation
  std::string want = "set,occupation,race\n";
  std::istringstream all(rows.substr(rows.find('\n') + 1));
  for (std::string line; std::getline(all, line);) {
    const std::string set = line.substr(0, line.find(','));
    for (std::size_t u = 0; u < drawn_units.rows; ++u)
      if (drawn_units.column("set").text(u) == set) want += line + "\n";
  }
  EXPECT_EQ(read_file(dir / "rows_drawn.csv"), want);
  const json report = json::parse(read_file(dir / "report.json"));
  EXPECT_EQ(report["rows_drawn"], 12);
  EXPECT_EQ(report["cells"][0]["available"], 5);  // units, not rows
  EXPECT_EQ(report["provenance"]["parameters"]["unit"], "set");
}

TEST(CliSample, RefusesAUnitSplitAcrossCellsAndUnitsWithReplacement) {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "rows.csv") << "set,occupation\ns0,nurse\ns0,pilot\n";
  const std::string base = "sample --unit set --table '" + (dir / "rows.csv").string() +
                           "' --by occupation --n 1 --seed 1 --out '" + (dir / "o.csv").string() +
                           "'";
  const CliResult split = run_cli(base);
  EXPECT_EQ(split.exit_code, 2);
  EXPECT_NE(split.err.find("line 3: unit 's0' has occupation 'pilot' here but 'nurse' on line 2"),
            std::string::npos)
      << split.err;
  const CliResult replace = run_cli(base + " --replace");
  EXPECT_EQ(replace.exit_code, 2);
  EXPECT_NE(replace.err.find("cannot be combined with --replace"), std::string::npos)
      << replace.err;
}

}  // namespace in_sample_test
}  // namespace
