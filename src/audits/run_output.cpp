// Writing an audit run (src/audits/run_output.h).
#include "audits/run_output.h"

#include "vlbias/report.h"
#include "vlbias/table.h"

namespace vlbias::audits {

Json write_sections(const std::filesystem::path& run_dir,
                    std::vector<std::pair<std::string, AnalysisOutput>>& sections, Json& tables,
                    std::vector<std::string>& notes) {
  std::filesystem::create_directories(run_dir / "tables");
  Json analyses = Json::object();
  tables = Json::array();
  for (auto& [name, section] : sections) {
    for (auto& [table_name, table] : section.tables) {
      const std::string relative = "tables/" + table_name + ".csv";
      write_csv(table, (run_dir / relative).string());
      tables.push_back(relative);
    }
    for (const std::string& n : section.notes) notes.push_back(n);
    analyses[name] = std::move(section.json);
  }
  return analyses;
}

void write_results(const std::filesystem::path& run_dir, Json results, Provenance& provenance,
                   const Json& parameters, const AuditSpec& spec) {
  provenance.parameters = parameters;
  provenance.seed = spec.seed;
  if (!spec.title.empty() || !spec.about.empty()) {
    Json ordered = Json::object();
    for (auto it = results.begin(); it != results.end(); ++it) {
      ordered[it.key()] = std::move(it.value());
      if (it.key() == "kind") {
        if (!spec.title.empty()) ordered["title"] = spec.title;
        if (!spec.about.empty()) ordered["about"] = spec.about;
      }
    }
    results = std::move(ordered);
  }
  results["provenance"] = provenance_json(provenance);
  write_json(results, (run_dir / "results.json").string());
  report::write_report(run_dir, results);
}

}  // namespace vlbias::audits
