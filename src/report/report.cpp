// The HTML report of an audit run (include/vlbias/report/report.h).
#include "vlbias/report/report.h"

#include <cmath>

#include <fmt/format.h>

#include "report_page.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/run/run_paths.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/summary.h"

namespace vlbias {

namespace {

using report_internal::Cell;
using report_internal::DataTable;
using report_internal::Page;

// RFC 4180 with the formula-injection guard (table.h); numbers at full precision (shortest
// round-trip), null as an empty cell.
std::string csv_text(const DataTable& t) {
  std::string out;
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    if (i) out += ',';
    append_csv_cell(out, t.columns[i]);
  }
  out += '\n';
  for (const auto& row : t.rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i) out += ',';
      const Cell& c = row[i];
      if (!c.numeric) {
        append_csv_cell(out, c.text);
      } else if (std::isnan(c.value)) {
        // empty
      } else if (std::isinf(c.value)) {
        out += c.value > 0 ? "inf" : "-inf";
      } else {
        out += fmt::format("{}", c.value);
      }
    }
    out += '\n';
  }
  return out;
}

}  // namespace

RenderedReport render_report(const Json& results) {
  VLBIAS_CHECK(results.is_object() && results.contains("kind") && results["kind"].is_string(),
               InputError, "results.json has no \"kind\": it is not the results of vlbias audit");
  const std::string kind = results["kind"].get<std::string>();
  Page page(results);
  const std::string about = page.root()["about"].str();
  if (!about.empty()) page.about(about);
  if (kind == "social-perception") {
    report_internal::build_social_perception(page);
    report_internal::power_section(page);
  } else if (kind == "trait-pairs") {
    report_internal::build_trait_pairs(page);
    report_internal::power_section(page);
  } else if (kind == "geo-diversity") {
    report_internal::build_geo_diversity(page);
    report_internal::power_section(page);
  } else if (kind == "lvlm-counterfactual") {
    report_internal::build_lvlm_counterfactual(page);
    report_internal::power_section(page);
  } else if (kind == "visual-stereotypes") {
    report_internal::build_visual_stereotypes(page);
  } else if (kind == "representation") {
    report_internal::build_representation(page);
  } else if (kind == "comparison") {
    report_internal::build_comparison(page);
  } else {
    VLBIAS_FAIL(InputError,
                "results.json has kind '{}'; reports exist for social-perception, trait-pairs, "
                "geo-diversity, lvlm-counterfactual, visual-stereotypes, representation and "
                "comparison (compare-runs)",
                kind);
  }
  RenderedReport out;
  out.html = page.render();
  for (const DataTable& t : page.tables()) out.tables.emplace_back(t.name + ".csv", csv_text(t));
  return out;
}

std::filesystem::path write_report(const std::filesystem::path& run_dir, const Json& results) {
  Progress progress("report", 1);
  const RenderedReport report = render_report(results);
  make_output_folders(run_dir, "tables");  // refuses a link planted at tables/
  // The fig_ tables belong to the report: ones this rendering does not draw are removed.
  std::vector<std::filesystem::path> stale;
  for (const auto& entry : std::filesystem::directory_iterator(run_dir / "tables")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("fig_", 0) == 0 && entry.path().extension() == ".csv")
      stale.push_back(entry.path());
  }
  for (const auto& p : stale) std::filesystem::remove(p);
  for (const auto& [name, text] : report.tables)
    write_file_atomically(run_dir / "tables" / name, text);
  // summary.json from results.json, pointing to the units tables the audit left (summary.h).
  if (results.contains("kind") && results["kind"].is_string() &&
      has_summary(results["kind"].get<std::string>())) {
    write_file_atomically(run_dir / "summary.json",
                          build_summary(results, units_tables_present(run_dir)).dump(2) + "\n");
  }
  const std::filesystem::path path = run_dir / "report.html";
  write_file_atomically(path, report.html);
  progress.advance();
  return path;
}

std::filesystem::path write_report(const std::filesystem::path& run_dir) {
  const std::filesystem::path path = run_dir / "results.json";
  std::error_code ec;  // a link or device is present (and refused below), not missing
  VLBIAS_CHECK(std::filesystem::exists(std::filesystem::symlink_status(path, ec)), InputError,
               "{}: cannot open (is {} the folder of an audit run?)", path.string(),
               run_dir.string());
  // The input policy of every reader (power, compare-runs, merge): no link out of the run, no
  // device (/dev/zero would be read until memory runs out), a size bound while reading.
  const std::string text = read_file_text(run_input_file(run_dir, "results.json", "results.json"),
                                          "an audit's results.json");
  return write_report(run_dir, parse_json(text, path.string()));
}

}  // namespace vlbias
