// An lvlm-counterfactual audit's `ratings[].where` accepts a row filter expression
// (row_filter.h) besides the {column, values} map: the same rows, the same results.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"

namespace {
namespace in_lvlm_where_test {

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

// `metric ratings --where` is the command-line form of the spec key: the same rows and cells as
// the audit's measure with the same expression; a bad expression is named by the option.
TEST(CliLvlmWhere, MetricRatingsWhereKeepsTheSameRowsAsTheAuditsWhere) {
  const std::string spec = write_temp_file(
      "spec.yaml", spec_with("    - {name: expr, kind: rating, where: \"prompt == 'Hiring'\"}\n"));
  const std::string out = (temp_dir() / "run").string();
  const CliResult a = run_cli("--quiet audit " + spec + " --out '" + out + "'");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const json audit = json::parse(read_file(out + "/results.json"))["analyses"]["ratings"];
  const std::string table = std::string("--table '") + VLBIAS_SOURCE_DIR +
                            "/examples/lvlm_counterfactual/generations.jsonl'";
  const std::string common = "--quiet metric ratings " + table +
                             " --group race,gender --set-key filename,rank,seed --text text";
  const CliResult all = run_cli(common);
  const CliResult kept = run_cli(common + " --where \"prompt == 'Hiring'\"");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  const json k = json::parse(kept.out), every = json::parse(all.out);
  const json& m = audit["measures"][0];
  SCOPED_TRACE(kept.out.substr(0, 2000));
  EXPECT_EQ(k["measures"][0]["rows"], m["rows"]);
  EXPECT_EQ(k["measures"][0]["cells"], m["cells"]);
  EXPECT_LT(k["measures"][0]["rows"].get<int>(), every["measures"][0]["rows"].get<int>());

  const CliResult unknown = run_cli(common + " --where \"promt == 'Hiring'\"");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no column 'promt'"), std::string::npos) << unknown.err;
  const CliResult bad = run_cli(common + " --where \"prompt = 'Hiring'\"");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--where: '=' is not an operator"), std::string::npos) << bad.err;
}

}  // namespace in_lvlm_where_test
}  // namespace
