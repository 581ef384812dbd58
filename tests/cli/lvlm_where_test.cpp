// An lvlm-counterfactual audit's `ratings[].where` accepts a row filter expression
// (row_filter.h) besides the {column, values} map: the same rows, the same results.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"

namespace {

using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;
using vlbias::cli_util::write_temp_file;

std::string spec_with(const std::string& ratings) {
  return std::string("version: 1\nkind: lvlm-counterfactual\nseed: 0\ngenerations: ") +
         VLBIAS_SOURCE_DIR +
         "/examples/lvlm_counterfactual/generations.jsonl\n"
         "columns: {set_key: [filename, rank, seed], group: [race, gender], text: text}\n"
         "analyses:\n  ratings:\n" +
         ratings;
}

TEST(CliLvlmWhere, AnExpressionSelectsTheSameRowsAsTheColumnValuesForm) {
  const std::string spec = write_temp_file(
      "spec.yaml",
      spec_with("    - {name: map, kind: rating, where: {column: prompt, values: [Hiring]}}\n"
                "    - {name: expr, kind: rating, where: \"prompt == 'Hiring'\"}\n"
                "    - {name: narrower, kind: rating,\n"
                "       where: \"prompt in ('Hiring') and mitigation == 'none'\"}\n"));
  const std::string out = (temp_dir() / "run").string();
  const CliResult r = run_cli("--quiet audit " + spec + " --out '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json results = json::parse(read_file(out + "/results.json"));
  const json& m = results["analyses"]["ratings"]["measures"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_GT(m[0]["rows"].get<int>(), 0);
  EXPECT_EQ(m[1]["rows"], m[0]["rows"]);
  EXPECT_EQ(m[1]["cells"], m[0]["cells"]);
  EXPECT_EQ(m[1]["where_expression"], "prompt == 'Hiring'");
  // The example has two mitigations (none, M1) in equal numbers.
  EXPECT_EQ(2 * m[2]["rows"].get<int>(), m[0]["rows"].get<int>());
}

TEST(CliLvlmWhere, ABadExpressionIsNamedByItsSpecKeyWithACaret) {
  const std::string spec = write_temp_file(
      "spec.yaml", spec_with("    - {name: expr, kind: rating, where: \"prompt = 'Hiring'\"}\n"));
  const CliResult r = run_cli("audit --check " + spec);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("analyses.ratings[0].where: '=' is not an operator (write '==') at "
                       "character 8 of the row filter:\n  prompt = 'Hiring'\n         ^"),
            std::string::npos)
      << r.err;
  const std::string unknown = write_temp_file(
      "unknown.yaml", spec_with("    - {name: expr, kind: rating, where: \"promt == 'x'\"}\n"));
  const CliResult u = run_cli("audit --check " + unknown);
  EXPECT_EQ(u.exit_code, 2);
  EXPECT_NE(u.err.find("promt"), std::string::npos) << u.err;
}

}  // namespace
