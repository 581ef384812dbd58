#pragma once
// Runs one audit of a CLI test end to end: the spec written to a temporary file, `vlbias audit`
// into a run folder of the test's own, the report checked against results.json
// (report_checks.h), and one analysis section of results.json returned.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "report_checks.h"

namespace vlbias::cli_util {

// results.json's analyses[analysis] of the audit of `spec` run into temp_dir() / name; null
// (with a failure recorded) when the audit fails.
inline nlohmann::json run_audit_analysis(const std::string& spec, const std::string& name,
                                         const std::string& analysis) {
  const std::string path = write_temp_file(name + ".yaml", spec);
  const std::string out = (temp_dir() / name).string();
  const CliResult r = run_cli("--quiet audit " + path + " --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return nullptr;
  report_checks::check_report(temp_dir() / name);  // the page shows results.json's numbers
  return nlohmann::json::parse(read_file(out + "/results.json"))["analyses"][analysis];
}

// examples/run.sh's comparison, run into `dir` once per test process: the LVLM example's
// answers split by mitigation (none, M1), each half audited with
// examples/compare_runs/lvlm_by_prompt.yaml into dir/lvlm_none and dir/lvlm_m1, then
// `vlbias compare-runs` into dir/comparison, which is returned.
inline std::filesystem::path run_example_comparison(const std::filesystem::path& dir) {
  static std::set<std::string> done;
  const std::filesystem::path out = dir / "comparison";
  if (!done.insert(dir.string()).second) return out;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::istringstream lines(read_file(std::string(VLBIAS_SOURCE_DIR) +
                                     "/examples/lvlm_counterfactual/generations.jsonl"));
  std::ofstream none(dir / "lvlm_none.jsonl"), m1(dir / "lvlm_m1.jsonl");
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"mitigation\":\"none\"") != std::string::npos) none << line << '\n';
    if (line.find("\"mitigation\":\"M1\"") != std::string::npos) m1 << line << '\n';
  }
  none.close();
  m1.close();
  for (const std::string m : {"none", "m1"}) {
    const std::string run = (dir / ("lvlm_" + m)).string();
    const CliResult r =
        run_cli("--quiet audit examples/compare_runs/lvlm_by_prompt.yaml --input '" + run +
                ".jsonl' --out '" + run + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  const CliResult r =
      run_cli("--quiet compare-runs '" + (dir / "lvlm_none").string() + "' '" +
              (dir / "lvlm_m1").string() + "' --seed 1 --out '" + out.string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

}  // namespace vlbias::cli_util
