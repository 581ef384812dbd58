#pragma once
// The HTML report of an audit run (src/report): RUN_DIR/report.html, one self-contained
// file (inline CSS and SVG charts, no scripts, no network) rendered from results.json
// alone, so `vlbias report RUN_DIR` re-renders exactly what `vlbias audit` wrote.
//
// Content: a header (what was audited, sizes, the spec, seed, vlbias version and input
// hashes), a findings summary (effects significant after correction, largest first, in
// sentences), then one section per analysis with its charts. The numbers of every chart
// are written to RUN_DIR/tables/fig_<name>.csv and shown in a table under the chart. Every
// number printed from results.json carries its JSON pointer (data-ptr) and display
// format (data-fmt), so tests check the report against results.json.
#include <filesystem>
#include <string>
#include <vector>

#include "vlbias/report/json_output.h"

namespace vlbias {

struct RenderedReport {
  std::string html;
  // The chart tables: file name (fig_<name>.csv) and CSV text.
  std::vector<std::pair<std::string, std::string>> tables;
};

// Renders the report of one audit's results.json (any kind vlbias audit writes).
// InputError when `results` is not an audit's results (no "kind", unknown kind).
RenderedReport render_report(const Json& results);

// Renders `results` and writes RUN_DIR/report.html, RUN_DIR/summary.json (audit kinds only,
// summary.h; its units point to the RUN_DIR/units tables present) and
// RUN_DIR/tables/fig_*.csv (each written whole under a temporary name, then renamed; fig_*.csv
// tables of an earlier rendering that this one does not draw are removed). Returns the
// report's path.
std::filesystem::path write_report(const std::filesystem::path& run_dir, const Json& results);

// Reads RUN_DIR/results.json and writes the report as above. InputError when it is
// missing or not valid JSON.
std::filesystem::path write_report(const std::filesystem::path& run_dir);

}  // namespace vlbias
