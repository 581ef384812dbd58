#pragma once
// Writing an audit run (shared by every kind): the tables of each analysis into
// RUN_DIR/tables/, then results.json last, so a complete results.json means a complete run.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/audit.h"
#include "vlbias/audit_analyses.h"
#include "vlbias/json_output.h"

namespace vlbias::audits {

// Writes every section's tables to RUN_DIR/tables/<name>.csv (creating the folders) and
// returns the "analyses" object (section name -> its JSON), the list of table paths relative
// to RUN_DIR in `tables`, and appends the sections' notes to `notes`.
Json write_sections(const std::filesystem::path& run_dir,
                    std::vector<std::pair<std::string, AnalysisOutput>>& sections, Json& tables,
                    std::vector<std::string>& notes);

// Adds the provenance block (parameters, seed, input hashes) to `results`, writes
// RUN_DIR/results.json, then RUN_DIR/report.html (report.h) from it.
// results.json gets the spec's title and about (when set) right after "kind".
void write_results(const std::filesystem::path& run_dir, Json results, Provenance& provenance,
                   const Json& parameters, const AuditSpec& spec);

}  // namespace vlbias::audits
