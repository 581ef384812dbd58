#pragma once
// The machine-readable summary of an audit run (src/report/summary_*.cpp): RUN_DIR/summary.json,
// written next to report.html whenever the report is (vlbias audit, vlbias report RUN_DIR),
// from results.json alone, so a dashboard, a CI job or `vlbias compare-runs` can diff runs.
//
// Schema "vlbias.summary/1" (fields may be added; none is renamed or dropped while the schema
// string stays the same):
//   {"schema": "vlbias.summary/1",
//    "kind": results.json's kind,
//    "run": {"inputs": {PATH: SHA-256, ...}        (results.json's provenance.inputs, plus
//                       ROLE: SHA-256 for each provenance.roles entry, e.g. "images.table"),
//            "spec_sha256": SHA-256 of results.json's "spec" object (its compact dump), or null,
//            "seed": N or null, "vlbias_version": "..." or null},
//    "findings": [{
//      "id": a stable key: two runs of the same spec give the same quantity the same id
//            (section/what/groups, e.g. "maxgap/toxicity/all", "contrast/competence/Black
//            female-vs-rest"); unique within the file (a repeat gets " #2", ...),
//      "section": the analysis (results.json's analyses key),
//      "quantity": words, e.g. "mean MaxGap of toxicity",
//      "groups": the groups compared ([] when none),
//      "estimate": number or null (undefined: NaN in the audit),
//      "ci": {"lower", "upper", "level"} or null,
//      "p": number or null, "p_holm": number or null,
//      "significant": p_holm < 0.05 (p < 0.05 when there is no p_holm), null without a p,
//      "better": "lower" | "higher" | "closer_to_zero" | null (which direction is less biased),
//      "ptr": the RFC 6901 pointer of the estimate in results.json,
//      "units": null, or the per-unit table whose aggregate reproduces the estimate (to 1e-9):
//        {"table": "units/<name>.csv" (relative to RUN_DIR), "key": unit id column(s),
//         comma-separated, "value": value column, "group": group column or null,
//         "aggregate": "mean" (mean of value over every row of the table) |
//                      "mean_difference" (mean(value | group = A) - mean(value | group = B)),
//         "groups": [A, B] for mean_difference, else null}}]}
// Units are given only where the audit wrote the table (RUN_DIR/units/, written by vlbias
// audit alone: results.json cannot rebuild them) and the estimate is exactly such a mean.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "vlbias/io/json.h"

namespace vlbias {

inline constexpr const char* kSummarySchema = "vlbias.summary/1";

// The name (no folder, no extension) of a units table: `stem` and each part, the parts
// reduced to [A-Za-z0-9._-] (any other byte becomes '-'), joined by "__". The audits write
// RUN_DIR/units/<name>.csv; the summary points to it as "units/<name>.csv".
std::string units_table_name(const std::string& stem, const std::vector<std::string>& parts);

// The summary of one audit's results.json. `units` holds the units tables present
// ("units/<name>.csv"); a finding points to its table only when it is in `units`.
// InputError when `results` has no "kind" or an unknown one (as render_report).
Json build_summary(const Json& results, const std::set<std::string>& units);

// Whether build_summary accepts results of this kind: the audit kinds (not "comparison", whose
// results.json is itself the comparison of summaries).
bool has_summary(const std::string& kind);

// The units tables present in RUN_DIR/units ("units/<name>.csv"), empty when there is none.
std::set<std::string> units_tables_present(const std::filesystem::path& run_dir);

}  // namespace vlbias
