// `vlbias metric maxgap|pmi|lexicon|ratings|responses|paired` and the sharded
// lvlm-counterfactual audit, end to end through the executable.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace vlbias {
namespace {
namespace in_metric_lvlm_test {

using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using PlainJson = nlohmann::json;

const std::string kGen = "tests/fixtures/lvlm/generations.jsonl";
const std::string kKeys = " --set-key filename,rank,seed --group race,gender";

TEST(MetricMaxGap, PrintsTheIssueShapeWithoutBy) {
  const auto r = run_cli("metric maxgap --table " + kGen + kKeys +
                         " --score toxicity --bootstrap 100 --seed 5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const PlainJson j = PlainJson::parse(r.out);
  EXPECT_EQ(j["rows"], 5760);
  // Without --by, every prompt and mitigation of a set key is one set.
  EXPECT_EQ(j["sets"], 120);
  for (const char* k : {"mean", "sd", "p25", "p50", "p75", "p90", "max"}) {
    EXPECT_TRUE(j["maxgap"].contains(k)) << k;
    EXPECT_TRUE(j["max"].contains(k)) << k;
  }
  EXPECT_EQ(j["max_group_share"].size(), 12u);
  EXPECT_EQ(j["ci"]["maxgap_mean"]["resamples"], 100);
  EXPECT_EQ(j["provenance"]["seed"], 5);
  EXPECT_EQ(j["provenance"]["inputs"][0]["sha256"].get<std::string>().size(), 64u);
}

TEST(MetricMaxGap, ShardStatesMergeToTheSameOutput) {
  const auto dir = temp_dir();
  // Two shards: the first and second halves of the file (sets span both).
  const std::string all = read_file(std::string(VLBIAS_SOURCE_DIR) + "/" + kGen);
  const std::size_t half = all.find('\n', all.size() / 2) + 1;
  std::ofstream(dir / "a.jsonl") << all.substr(0, half);
  std::ofstream(dir / "b.jsonl") << all.substr(half);
  const std::string opts = kKeys + " --by prompt,mitigation --score toxicity,insult --seed 2";
  const auto one = run_cli("metric maxgap --table " + kGen + opts);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  for (const char* s : {"a", "b"}) {
    const auto r =
        run_cli(fmt::format("metric maxgap --table {}/{}.jsonl{} --save-state {}/{}.state",
                            dir.string(), s, opts, dir.string(), s));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const auto merged =
      run_cli(fmt::format("metric maxgap --from-state {0}/b.state --from-state "
                          "{0}/a.state{1}",
                          dir.string(), opts));
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  PlainJson a = PlainJson::parse(one.out), b = PlainJson::parse(merged.out);
  a.erase("provenance");
  b.erase("provenance");
  EXPECT_EQ(a.dump(), b.dump());
  // Two shards given to one process are the same as well.
  const auto both = run_cli(
      fmt::format("metric maxgap --table {0}/a.jsonl --table {0}/b.jsonl{1}", dir.string(), opts));
  PlainJson c = PlainJson::parse(both.out);
  c.erase("provenance");
  EXPECT_EQ(a.dump(), c.dump());
  // A state scanned with other options is refused.
  const auto other = run_cli(fmt::format("metric maxgap --from-state {}/a.state{} --by prompt",
                                         dir.string(), kKeys + " --score toxicity"));
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("other options"), std::string::npos) << other.err;
}

TEST(MetricLvlm, PmiLexiconRatingsResponsesPaired) {
  const auto pmi = run_cli("metric pmi --table " + kGen +
                           " --group race,gender --text text --min-freq 3 --top 5");
  ASSERT_EQ(pmi.exit_code, 0) << pmi.err;
  const PlainJson p = PlainJson::parse(pmi.out);
  EXPECT_EQ(p["results"][0]["groups"].size(), 12u);
  EXPECT_LE(p["results"][0]["groups"][0]["words"].size(), 5u);
  const auto lex = run_cli("metric lexicon --table " + kGen +
                           " --group race,gender --text text --lexicon "
                           "tests/fixtures/lvlm/lexicon.csv --lexicon-by occupation --distinct");
  ASSERT_EQ(lex.exit_code, 0) << lex.err;
  EXPECT_EQ(PlainJson::parse(lex.out)["categories"].size(), 4u);
  const auto rat = run_cli("metric ratings --table " + kGen +
                           " --group race,gender --by prompt --text text --kind rating");
  ASSERT_EQ(rat.exit_code, 0) << rat.err;
  const PlainJson rj = PlainJson::parse(rat.out);
  EXPECT_GT(rj["measures"][0]["excluded"]["no_number"].get<int>(), 0);
  const auto resp = run_cli("metric responses --table " + kGen +
                            " --group gender --text text --refusal-pattern \"can't help\"");
  ASSERT_EQ(resp.exit_code, 0) << resp.err;
  const PlainJson sj = PlainJson::parse(resp.out);
  EXPECT_EQ(sj["results"].size(), 2u);
  EXPECT_GT(sj["results"][0]["refused"].get<int>(), 0);
  const auto paired = run_cli("metric paired --table " + kGen + kKeys +
                              " --by prompt,mitigation --score toxicity --compare mitigation "
                              "--baseline none --bootstrap 100");
  ASSERT_EQ(paired.exit_code, 0) << paired.err;
  const PlainJson pj = PlainJson::parse(paired.out);
  EXPECT_EQ(pj["results"].size(), 2u);  // Characteristics and Hiring, M1 vs none
  EXPECT_EQ(pj["results"][0]["matched_sets"], 120);
}

TEST(MetricLvlm, UsageAndInputErrors) {
  const auto no_input = run_cli("metric maxgap" + kKeys + " --score toxicity");
  EXPECT_EQ(no_input.exit_code, 2);
  EXPECT_NE(no_input.err.find("--table"), std::string::npos) << no_input.err;
  const auto bad_col = run_cli("metric maxgap --table " + kGen + kKeys + " --score nope");
  EXPECT_EQ(bad_col.exit_code, 2);
  EXPECT_NE(bad_col.err.find("'nope'"), std::string::npos) << bad_col.err;
  const auto text_score = run_cli("metric maxgap --table " + kGen + kKeys + " --score race");
  EXPECT_EQ(text_score.exit_code, 2);
  EXPECT_NE(text_score.err.find("expected a finite number"), std::string::npos) << text_score.err;
  const auto bad_kind =
      run_cli("metric ratings --table " + kGen + " --group race --text text --kind score");
  EXPECT_EQ(bad_kind.exit_code, 2);
  const auto bad_state =
      run_cli("metric maxgap --from-state " + kGen + kKeys + " --score toxicity");
  EXPECT_EQ(bad_state.exit_code, 2);
  EXPECT_NE(bad_state.err.find("not an LVLM state"), std::string::npos) << bad_state.err;
  const auto no_base = run_cli("metric paired --table " + kGen + kKeys +
                               " --by prompt,mitigation --score toxicity --compare mitigation "
                               "--baseline M9");
  EXPECT_EQ(no_base.exit_code, 2);
  EXPECT_NE(no_base.err.find("M9"), std::string::npos) << no_base.err;
}

TEST(AuditLvlm, ExampleRunsAndShardedRunIsIdentical) {
  const auto dir = temp_dir();
  const std::string spec = "examples/lvlm_counterfactual/spec.yaml";
  const auto one = run_cli(fmt::format("--quiet audit {} --out {}/one", spec, dir.string()));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const PlainJson r1 = PlainJson::parse(read_file(dir / "one/results.json"));
  EXPECT_EQ(r1["kind"], "lvlm-counterfactual");
  for (const char* s :
       {"maxgap", "pmi", "lexicon", "responses", "ratings", "group_tests", "paired"}) {
    EXPECT_TRUE(r1["analyses"].contains(s)) << s;
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "one/tables/group_effects.csv"));
  // The planted effect: Black male toxicity (Characteristics, none) survives Holm.
  bool found = false;
  for (const auto& t : r1["analyses"]["group_tests"]["results"]) {
    if (t["measure"] != "toxicity" || t["by"]["prompt"] != "Characteristics" ||
        t["by"]["mitigation"] != "none") {
      continue;
    }
    EXPECT_LT(t["friedman"]["p_holm"].get<double>(), 1e-6);
    for (const auto& g : t["groups"]) {
      if (g["group"]["race"] == "Black" && g["group"]["gender"] == "male") {
        found = true;
        EXPECT_GT(g["gap_to_others"].get<double>(), 0.05);
      }
    }
  }
  EXPECT_TRUE(found);
  // Shards: two halves scanned to states, merged.
  const std::string all =
      read_file(std::string(VLBIAS_SOURCE_DIR) + "/examples/lvlm_counterfactual/generations.jsonl");
  const std::size_t half = all.find('\n', all.size() / 3) + 1;
  std::ofstream(dir / "s1.jsonl") << all.substr(0, half);
  std::ofstream(dir / "s2.jsonl") << all.substr(half);
  for (const char* s : {"s1", "s2"}) {
    const auto r =
        run_cli(fmt::format("--quiet audit {} --input {}/{}.jsonl --save-state {}/{}.state", spec,
                            dir.string(), s, dir.string(), s));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const auto merged = run_cli(fmt::format(
      "--quiet audit {} --out {}/merged --from-state {}/s2.state --from-state {}/s1.state", spec,
      dir.string(), dir.string(), dir.string()));
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  const PlainJson r2 = PlainJson::parse(read_file(dir / "merged/results.json"));
  EXPECT_EQ(r1["analyses"].dump(), r2["analyses"].dump());
  EXPECT_EQ(read_file(dir / "one/tables/pmi_words.csv"),
            read_file(dir / "merged/tables/pmi_words.csv"));
  // Sharding options belong to this kind only.
  const auto other =
      run_cli(fmt::format("audit examples/geo_diversity/spec.yaml --out {}/g "
                          "--save-state {}/x.state",
                          dir.string(), dir.string()));
  EXPECT_EQ(other.exit_code, 2);
}

TEST(AuditLvlm, SpecErrorsNameTheKey) {
  const auto dir = temp_dir();
  const auto write = [&](const std::string& text) {
    std::ofstream(dir / "spec.yaml") << text;
    return (dir / "spec.yaml").string();
  };
  const std::string base =
      "version: 1\nkind: lvlm-counterfactual\ngenerations: " + std::string(VLBIAS_SOURCE_DIR) +
      "/" + kGen + "\n";
  auto r = run_cli("audit " + write(base + "columns: {text: text}\n") + " --out " + dir.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("columns.group"), std::string::npos) << r.err;
  r = run_cli("audit " + write(base + "columns: {group: [race], colour: x}\n") + " --out " +
              dir.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("colour"), std::string::npos) << r.err;
  r = run_cli("audit " +
              write(base + "columns: {group: [race], text: text}\nanalyses: {maxgap: true}\n") +
              " --out " + dir.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("analyses.maxgap needs"), std::string::npos) << r.err;
  r = run_cli("audit " +
              write(base + "columns: {group: [race], text: text, by: [prompt]}\n"
                           "analyses: {paired: {column: mitigation, baseline: none}}\n") +
              " --out " + dir.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("paired"), std::string::npos) << r.err;
}

}  // namespace in_metric_lvlm_test
}  // namespace
}  // namespace vlbias
