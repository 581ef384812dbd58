#pragma once
// Runs one audit of a CLI test end to end: the spec written to a temporary file, `vlbias audit`
// into a run folder of the test's own, the report checked against results.json
// (report_checks.h), and one analysis section of results.json returned.
#include <gtest/gtest.h>

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

}  // namespace vlbias::cli_util
