// The `scores:` key of the representation and geo-diversity specs (scores_by_group.h).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "scores_by_group.h"

namespace vlbias::audits_internal {

namespace {

ScoreTableSpec parse_score_entry(Context& ctx, const YAML::Node& node, const std::string& p) {
  const Entries e = check_map(ctx, node, p, {"table", "columns", "key", "kind"});
  ScoreTableSpec s;
  s.table = as_input_file(ctx, require(ctx, node, e, p, "table"), p + ".table");
  const YAML::Node& columns = require(ctx, node, e, p, "columns");
  s.columns = columns.IsScalar() ? std::vector<std::string>{as_string(ctx, columns, p + ".columns")}
                                 : as_string_list(ctx, columns, p + ".columns", false);
  for (std::size_t i = 0; i < s.columns.size(); ++i) {
    if (std::find(s.columns.begin(), s.columns.begin() + i, s.columns[i]) != s.columns.begin() + i)
      fail(ctx, columns, p + ".columns", fmt::format("names '{}' twice", s.columns[i]));
  }
  read_string_keys(ctx, e, p, {{"key", &s.key}});
  if (s.key.empty()) fail(ctx, node, p + ".key", "must name the table's image column");
  if (const YAML::Node* k = find(e, "kind")) {
    const std::string at = p + ".kind";
    count_value(ctx, *k, at);
    if (!k->IsMap()) fail(ctx, *k, at, fmt::format("must be a map, got {}", describe(*k)));
    for (const auto& kv : *k) {
      const std::string column = as_string(ctx, kv.first, at + " (a key)");
      const std::string cp = join_path(at, shown(column));
      if (std::find(s.columns.begin(), s.columns.end(), column) == s.columns.end())
        fail(ctx, kv.first, cp, "must name one of the entry's columns");
      for (const auto& [c, v] : s.kinds) {
        if (c == column) fail(ctx, kv.first, cp, "appears twice");
      }
      s.kinds.emplace_back(column, as_choice(ctx, kv.second, cp, {"rate", "mean"}));
    }
  }
  return s;
}

}  // namespace

void parse_scores_spec(Context& ctx, const YAML::Node& node, std::vector<ScoreTableSpec>& out) {
  count_value(ctx, node, "scores");
  if (node.IsMap()) {
    out.push_back(parse_score_entry(ctx, node, "scores"));
    return;
  }
  if (!node.IsSequence() || node.size() == 0) {
    fail(ctx, node, "scores", fmt::format("must be a non-empty list, got {}", describe(node)));
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    out.push_back(parse_score_entry(ctx, node[i], fmt::format("scores[{}]", i)));
  }
}

Json scores_spec_json(const std::vector<ScoreTableSpec>& specs) {
  Json out = Json::array();
  for (const ScoreTableSpec& s : specs) {
    Json kinds = Json::object();
    for (const auto& [c, k] : s.kinds) kinds[c] = k;
    out.push_back(
        {{"table", s.table.string()}, {"columns", s.columns}, {"key", s.key}, {"kind", kinds}});
  }
  return out;
}

}  // namespace vlbias::audits_internal
