// build_summary (include/vlbias/report/summary.h) on hand-written results.json: fields, the
// significance rule, units only where the table is present, stable names, clear errors.
#include <gtest/gtest.h>

#include <string>

#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/report/summary.h"

namespace vlbias {
namespace {
namespace in_summary_json_test {

// An LVLM run with one MaxGap result per mitigation level and one paired comparison.
Json lvlm_results() {
  return parse_json(R"({
    "kind": "lvlm-counterfactual",
    "spec": {"seed": 7},
    "analyses": {
      "maxgap": {"results": [
        {"by": {"mitigation": "none"}, "score": "toxicity", "maxgap": {"mean": 0.25},
         "ci": {"maxgap_mean": {"lower": 0.2, "upper": 0.3}}},
        {"by": {"mitigation": "M1"}, "score": "toxicity", "maxgap": {"mean": null}}]},
      "paired": {"results": [
        {"by": {"mitigation": "M1"}, "baseline": {"mitigation": "none"}, "score": "toxicity",
         "diff_mean": -0.05, "ci": {"diff_mean": {"lower": -0.08, "upper": -0.02}},
         "tests": {"paired_t": {"p_value": 0.004, "p_holm": 0.06}}}]}},
    "provenance": {"vlbias_version": "9.9", "seed": 7,
                   "inputs": [{"path": "gen.jsonl", "sha256": "ab", "bytes": 3}]}
  })",
                    "test");
}

TEST(SummaryJson, HoldsTheRunAndOneFindingPerHeadlineQuantity) {
  const Json r = lvlm_results();
  const Json s = build_summary(r, {"units/maxgap__toxicity__mitigation-none.csv"});
  EXPECT_EQ(s["schema"], "vlbias.summary/1");
  EXPECT_EQ(s["kind"], "lvlm-counterfactual");
  EXPECT_EQ(s["run"]["inputs"]["gen.jsonl"], "ab");
  EXPECT_EQ(s["run"]["seed"], 7);
  EXPECT_EQ(s["run"]["vlbias_version"], "9.9");
  EXPECT_EQ(s["run"]["spec_sha256"], sha256_hex(R"({"seed":7})"));
  ASSERT_EQ(s["findings"].size(), 3u);
  const Json& a = s["findings"][0];
  EXPECT_EQ(a["id"], "maxgap/toxicity/mitigation=none");
  EXPECT_EQ(a["section"], "maxgap");
  EXPECT_EQ(a["estimate"], 0.25);
  EXPECT_EQ(a["ptr"], "/analyses/maxgap/results/0/maxgap/mean");
  EXPECT_EQ(a["ci"]["lower"], 0.2);
  EXPECT_EQ(a["ci"]["level"], 0.95);  // the interval object has none: the default
  EXPECT_TRUE(a["p"].is_null());
  EXPECT_TRUE(a["significant"].is_null());  // no p-value: no decision
  EXPECT_EQ(a["better"], "lower");
  EXPECT_EQ(a["units"]["table"], "units/maxgap__toxicity__mitigation-none.csv");
  EXPECT_EQ(a["units"]["key"], "set");
  EXPECT_EQ(a["units"]["value"], "maxgap");
  EXPECT_EQ(a["units"]["aggregate"], "mean");
  EXPECT_TRUE(a["units"]["group"].is_null());
  // An undefined estimate is null, and gets no units.
  const Json& b = s["findings"][1];
  EXPECT_EQ(b["id"], "maxgap/toxicity/mitigation=M1");
  EXPECT_TRUE(b["estimate"].is_null());
  EXPECT_TRUE(b["units"].is_null());
  // Significance follows p_holm when there is one (0.06), not the raw p (0.004).
  const Json& c = s["findings"][2];
  EXPECT_EQ(c["id"], "paired/toxicity/mitigation=M1-vs-mitigation=none");
  EXPECT_EQ(c["p"], 0.004);
  EXPECT_EQ(c["p_holm"], 0.06);
  EXPECT_EQ(c["significant"], false);
}

TEST(SummaryJson, PointsToUnitsOnlyWhenTheTableIsPresent) {
  const Json s = build_summary(lvlm_results(), {});
  for (const Json& f : s["findings"]) EXPECT_TRUE(f["units"].is_null()) << f.dump();
}

TEST(SummaryJson, UnitsTableNamesAreFileSafeAndStable) {
  EXPECT_EQ(units_table_name("association", {"Black female"}), "association__Black-female");
  EXPECT_EQ(units_table_name("maxgap", {"toxicity", "prompt=Hiring, mitigation=M1"}),
            "maxgap__toxicity__prompt-Hiring--mitigation-M1");
  EXPECT_EQ(units_table_name("pull", {"../x"}), "pull__..-x");
}

TEST(SummaryJson, RefusesWhatIsNotAnAuditsResults) {
  EXPECT_THROW(build_summary(parse_json(R"({"a": 1})", "t"), {}), InputError);
  try {
    build_summary(parse_json(R"({"kind": "other"})", "t"), {});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("kind 'other'"), std::string::npos) << e.what();
  }
}

}  // namespace in_summary_json_test
}  // namespace
}  // namespace vlbias
