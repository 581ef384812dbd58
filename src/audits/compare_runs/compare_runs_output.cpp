// compare-runs: the output folder (include/vlbias/audits/compare_runs.h): results.json, the
// tables of estimates, differences and ranks, and report.html from the report stage.
#include <fmt/format.h>

#include "vlbias/audits/compare_runs.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/run/run_lock.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/report.h"

namespace vlbias {

namespace {

// Columns filled row by row: text columns and numeric ones (null = missing).
struct TableRows {
  std::vector<std::string> names;
  std::vector<bool> numeric;
  std::vector<std::vector<Json>> cells;  // per column
  void add(const std::vector<Json>& row) {
    for (std::size_t c = 0; c < row.size(); ++c) cells[c].push_back(row[c]);
  }
  Table table() const {
    Table t;
    t.source = "<memory>";
    t.rows = cells.empty() ? 0 : cells[0].size();
    for (std::size_t c = 0; c < names.size(); ++c) {
      if (numeric[c]) {
        std::vector<double> v;
        for (const Json& j : cells[c]) v.push_back(j.is_number() ? j.get<double>() : NAN);
        add_numeric_column(t, names[c], v);
      } else {
        std::vector<std::string> v;
        for (const Json& j : cells[c])
          v.push_back(j.is_string() ? j.get<std::string>() : j.is_null() ? "" : j.dump());
        add_string_column(t, names[c], v);
      }
    }
    return t;
  }
};

TableRows make_rows(std::vector<std::pair<std::string, bool>> columns) {
  TableRows r;
  for (auto& [name, numeric] : columns) {
    r.names.push_back(name);
    r.numeric.push_back(numeric);
  }
  r.cells.resize(r.names.size());
  return r;
}

Json bound(const Json& ci, const char* key) {
  return ci.is_object() && ci.contains(key) ? ci[key] : Json(nullptr);
}

}  // namespace

std::filesystem::path write_comparison(const std::filesystem::path& out_dir, const Json& results) {
  const RunLock lock(out_dir);
  TableRows est = make_rows({{"id", false},
                             {"quantity", false},
                             {"run", false},
                             {"estimate", true},
                             {"lower", true},
                             {"upper", true},
                             {"level", true},
                             {"units", true}});
  TableRows diff = make_rows({{"id", false},
                              {"quantity", false},
                              {"a", false},
                              {"b", false},
                              {"difference", true},
                              {"lower", true},
                              {"upper", true},
                              {"p", true},
                              {"p_holm", true},
                              {"p_bh", true},
                              {"method", false},
                              {"reason", false},
                              {"paired_t_p", true}});
  TableRows ranks = make_rows({{"id", false},
                               {"quantity", false},
                               {"run", false},
                               {"estimate", true},
                               {"rank", true},
                               {"share_first", true},
                               {"method", false}});
  for (const Json& q : results["quantities"]) {
    for (const Json& e : q["estimates"]) {
      est.add({q["id"], q["quantity"], e["run"], e["estimate"], bound(e["ci"], "lower"),
               bound(e["ci"], "upper"), bound(e["ci"], "level"), e["units"]});
    }
    for (const Json& d : q["differences"]) {
      const Json pt =
          d.contains("paired_t") && d["paired_t"].is_object() ? d["paired_t"]["p"] : Json(nullptr);
      diff.add({q["id"], q["quantity"], d["a"], d["b"], d["difference"], bound(d["ci"], "lower"),
                bound(d["ci"], "upper"), d["p"], d["p_holm"], d["p_bh"], d["method"], d["reason"],
                pt});
    }
    for (const Json& r : q["ranking"].value("ranks", Json::array())) {
      ranks.add({q["id"], q["quantity"], r["run"], r["estimate"], r["rank"], r["share_first"],
                 q["ranking"]["method"]});
    }
  }
  make_output_folders(out_dir, "tables");
  write_csv(est.table(), (out_dir / "tables" / "estimates.csv").string());
  write_csv(diff.table(), (out_dir / "tables" / "differences.csv").string());
  write_csv(ranks.table(), (out_dir / "tables" / "ranks.csv").string());
  const std::filesystem::path report = write_report(out_dir, results);
  write_file_atomically(out_dir / "results.json",
                        results.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  return report;
}

}  // namespace vlbias
