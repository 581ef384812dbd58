// The typed contract of analyses.scores; see include/vlbias/report/scores_results.h.
#include "vlbias/report/scores_results.h"

#include <fmt/format.h>

#include "results_reading.h"
#include "vlbias/report/json_output.h"

namespace vlbias {

namespace {

Json score_group_result_json(const ScoreGroupResult& s, bool rate) {
  Json j{{"group", s.group}, {"n", json_count(s.n)}};
  if (rate) j["successes"] = json_count(s.successes);
  j["estimate"] = json_number(s.estimate);
  if (!rate) j["sd"] = json_number(s.sd);
  j["ci"] = {{"lower", json_number(s.ci_lower)}, {"upper", json_number(s.ci_upper)}};
  if (!s.note.empty()) j["note"] = s.note;
  return j;
}

ScoreGroupResult score_group_result_from_json(const Json& j) {
  ScoreGroupResult s;
  s.group = results_text(j, "group");
  s.n = results_number(j, "n");
  s.successes = results_number(j, "successes");
  s.estimate = results_number(j, "estimate");
  s.sd = results_number(j, "sd");
  if (const Json* ci = results_member(j, "ci")) {
    s.ci_lower = results_number(*ci, "lower");
    s.ci_upper = results_number(*ci, "upper");
  }
  s.note = results_text(j, "note");
  return s;
}

std::size_t scores_size(const Json& j, const char* key) {
  const double v = results_number(j, key);
  return v >= 0 && v < 1e18 ? static_cast<std::size_t>(v) : 0;
}

ScoresColumnResult scores_column_from_json(const Json& jc) {
  ScoresColumnResult c;
  c.table = results_text(jc, "table");
  c.column = results_text(jc, "column");
  c.kind = results_text(jc, "kind");
  c.kind_from = results_text(jc, "kind_from");
  if (const Json* all = results_member(jc, "all")) c.all = score_group_result_from_json(*all);
  if (const Json* by = results_array(jc, "by")) {
    for (const Json& jb : *by) {
      ScoresByResult b;
      b.by = results_text(jb, "by");
      if (const Json* groups = results_array(jb, "groups")) {
        for (const Json& g : *groups) b.groups.push_back(score_group_result_from_json(g));
      }
      b.mean_over_groups = results_number(jb, "mean_over_groups");
      if (const Json* test = results_member(jb, "test")) {
        b.test = ScoresByResult::Test{test_result_from_json(*test), results_number(*test, "p_holm"),
                                      test_power_from_json(*test)};
      }
      c.by.push_back(std::move(b));
    }
  }
  return c;
}

}  // namespace

Json to_json(const ScoresSection& s) {
  Json tables = Json::array();
  for (const ScoresTableResult& t : s.tables) {
    tables.push_back({{"table", t.table},
                      {"sha256", t.sha256},
                      {"key", t.key},
                      {"rows", t.rows},
                      {"matched_images", t.matched_images},
                      {"unmatched_images", t.unmatched_images},
                      {"unused_rows", t.unused_rows},
                      {"provenance", t.provenance}});
  }
  Json columns = Json::array();
  for (const ScoresColumnResult& c : s.columns) {
    const bool rate = c.kind == "rate";
    Json jc{{"table", c.table},
            {"column", c.column},
            {"kind", c.kind},
            {"kind_from", c.kind_from},
            {"all", score_group_result_json(c.all, rate)},
            {"by", Json::array()}};
    for (const ScoresByResult& b : c.by) {
      Json groups = Json::array();
      for (const ScoreGroupResult& g : b.groups) groups.push_back(score_group_result_json(g, rate));
      Json test;
      if (b.test) {
        test = to_json(b.test->result);
        test["p_holm"] = json_number(b.test->p_holm);
        if (b.test->power) test[kTestPowerKey] = to_json(*b.test->power);
      }
      jc["by"].push_back({{"by", b.by},
                          {"groups", std::move(groups)},
                          {"mean_over_groups", json_number(b.mean_over_groups)},
                          {"test", std::move(test)}});
    }
    columns.push_back(std::move(jc));
  }
  return {{"ci", s.ci},
          {"interval", {{"rate", "wilson"}, {"mean", "student t (mean -+ t_{n-1} sd / sqrt(n))"}}},
          {"test", {{"rate", "chi_square (Pearson, 2 x groups)"}, {"mean", "kruskal"}}},
          {"correction", "holm over every test of the section"},
          {"tables", std::move(tables)},
          {"columns", std::move(columns)}};
}

std::optional<ScoresSection> scores_from_json(const Json& analyses) {
  const Json* section = results_member(analyses, kScoresSection);
  if (section == nullptr) return std::nullopt;
  ScoresSection s;
  s.ci = results_number(*section, "ci");
  if (const Json* tables = results_array(*section, "tables")) {
    for (const Json& jt : *tables) {
      ScoresTableResult t;
      t.table = results_text(jt, "table");
      t.sha256 = results_text(jt, "sha256");
      t.key = results_text(jt, "key");
      t.rows = scores_size(jt, "rows");
      t.matched_images = scores_size(jt, "matched_images");
      t.unmatched_images = scores_size(jt, "unmatched_images");
      t.unused_rows = scores_size(jt, "unused_rows");
      if (const Json* p = results_member(jt, "provenance")) t.provenance = *p;
      s.tables.push_back(std::move(t));
    }
  }
  if (const Json* columns = results_array(*section, "columns")) {
    for (const Json& jc : *columns) s.columns.push_back(scores_column_from_json(jc));
  }
  return s;
}

std::string scores_table_pointer(std::size_t i) {
  return fmt::format("/analyses/{}/tables/{}", kScoresSection, i);
}

std::string scores_column_pointer(std::size_t c) {
  return fmt::format("/analyses/{}/columns/{}", kScoresSection, c);
}

std::string scores_by_pointer(std::size_t c, std::size_t b) {
  return fmt::format("{}/by/{}", scores_column_pointer(c), b);
}

std::string scores_test_pointer(std::size_t c, std::size_t b) {
  return scores_by_pointer(c, b) + "/test";
}

std::string scores_group_pointer(std::size_t c, std::size_t b, std::size_t g) {
  return fmt::format("{}/groups/{}", scores_by_pointer(c, b), g);
}

}  // namespace vlbias
