#pragma once
// What the report.images tests (report_exemplars_test.cpp, report_exemplars_kinds_test.cpp)
// share: running an audit, counting in the page, and the real JPEGs of the geo example.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace vlbias::exemplars_test {

namespace fs = std::filesystem;

inline const fs::path kGeoImages = fs::path(VLBIAS_SOURCE_DIR) / "examples/geo_diversity_images";

// `vlbias audit SPEC --out OUT` (expected to succeed) and its results.json.
inline nlohmann::json audit(const fs::path& spec, const fs::path& out) {
  const auto r = cli_util::run_cli("--quiet audit " + cli_util::shell_quote(spec.string()) +
                                   " --out " + cli_util::shell_quote(out.string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(cli_util::read_file(out / "results.json"));
}

// How often `what` occurs in `text`.
inline std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The geo example's 72 generated JPEGs (real files), sorted by name.
inline std::vector<fs::path> jpegs() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kGeoImages / "generated")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Copies the CSV `from` to `to` with one more column `column` whose value in data row r is
// path_of(r).
inline void add_path_column(const fs::path& from, const fs::path& to, const std::string& column,
                            const std::function<std::string(std::size_t)>& path_of) {
  std::ifstream in(from);
  std::ofstream out(to);
  std::string line;
  std::getline(in, line);
  out << line << "," << column << "\n";
  for (std::size_t row = 0; std::getline(in, line); ++row)
    out << line << "," << path_of(row) << "\n";
}

// Writes DIR/spec.yaml: `body` and, unless `report` is "", the line "report: REPORT".
inline fs::path write_spec(const fs::path& dir, const std::string& body,
                           const std::string& report) {
  const fs::path spec = dir / "spec.yaml";
  std::ofstream(spec) << body << (report.empty() ? "" : "report: " + report + "\n");
  return spec;
}

}  // namespace vlbias::exemplars_test
