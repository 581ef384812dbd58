// Writing an audit run (src/audits/run_output.h).
#include "run_output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <string_view>
#include <system_error>

#include "vlbias/core/error.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/report/report.h"
#include "vlbias/report/summary.h"

namespace vlbias::audits_internal {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kStagingPrefix = ".staging-";

// A fresh RUN_DIR/.staging-<infix><random> folder (mkdtemp replaces the six X's); the next
// audit on the folder removes any a killed run left.
fs::path make_staging_folder(const fs::path& run_dir, const std::string& infix) {
  std::string pattern = (run_dir / (std::string(kStagingPrefix) + infix + "XXXXXX")).string();
  VLBIAS_CHECK(::mkdtemp(pattern.data()) != nullptr, InputError,
               "{}: cannot create a staging folder in the run folder: {}", run_dir.string(),
               std::strerror(errno));
  return pattern;
}

// The staging folder: removed on every exit unless its contents were moved into place.
class Staging {
 public:
  explicit Staging(const fs::path& run_dir) : path_(make_staging_folder(run_dir, "")) {}
  ~Staging() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);  // does not follow links
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void move_entry(const fs::path& from, const fs::path& to) {
  VLBIAS_CHECK(::rename(from.c_str(), to.c_str()) == 0, InternalError,
               "cannot move '{}' to '{}': {}", from.string(), to.string(), std::strerror(errno));
}

bool entry_exists(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Moves the staged outputs into RUN_DIR, results.json last (see run_output.h); `folders` are
// stage_folder's, each moved in as RUN_DIR/<name>.
void publish(const fs::path& staged, const fs::path& run_dir,
             const std::vector<std::pair<std::string, fs::path>>& folders) {
  const fs::path results = run_dir / "results.json";
  VLBIAS_CHECK(::unlink(results.c_str()) == 0 || errno == ENOENT, InternalError,
               "cannot replace '{}': {}", results.string(), std::strerror(errno));
  // The old tables/ (or whatever holds its name, a link included) goes into the staging
  // folder, which is removed afterwards; rename never follows a link.
  if (entry_exists(run_dir / "tables")) move_entry(run_dir / "tables", staged / "old-tables");
  move_entry(staged / "tables", run_dir / "tables");
  if (entry_exists(run_dir / "units")) move_entry(run_dir / "units", staged / "old-units");
  move_entry(staged / "units", run_dir / "units");
  for (const char* name : kAnalysisFolders) {
    if (entry_exists(run_dir / name))
      move_entry(run_dir / name, staged / ("old-" + std::string(name)));
  }
  for (const auto& [name, folder] : folders) move_entry(folder / name, run_dir / name);
  move_entry(staged / "report.html", run_dir / "report.html");
  move_entry(staged / "summary.json", run_dir / "summary.json");
  move_entry(staged / "results.json", results);
}

}  // namespace

RunOutput::RunOutput(const fs::path& run_dir) : dir_(run_dir), lock_(run_dir) {
  // Staging folders of a run that was killed while writing; no one else uses them (locked).
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kStagingPrefix, 0) == 0 && entry.is_directory() && !entry.is_symlink()) {
      fs::remove_all(entry.path(), ec);
    }
  }
}

Json RunOutput::add_sections(std::vector<std::pair<std::string, AnalysisOutput>>& sections,
                             Json& tables, std::vector<std::string>& notes) {
  Json analyses = Json::object();
  tables = Json::array();
  for (auto& [name, section] : sections) {
    for (auto& [table_name, table] : section.tables) {
      tables.push_back("tables/" + table_name + ".csv");
      tables_.emplace_back(table_name + ".csv", std::move(table));
    }
    for (auto& [unit_name, table] : section.units)
      units_.emplace_back(unit_name + ".csv", std::move(table));
    for (const std::string& n : section.notes) notes.push_back(n);
    analyses[name] = std::move(section.json);
  }
  // Two quantities whose labels reduce to one file name (units_table_name) would share a table:
  // both are left out, so summary.json gives them no units rather than the wrong ones.
  std::map<std::string, std::size_t> count;
  for (const auto& [name, table] : units_) ++count[name];
  std::vector<std::pair<std::string, Table>> kept;
  for (auto& [name, table] : units_) {
    if (count[name] == 1) {
      kept.emplace_back(name, std::move(table));
    } else if (count[name] != 0) {
      notes.push_back("summary.json: two quantities' units tables would both be named units/" +
                      name + "; neither is written");
      count[name] = 0;
    }
  }
  units_ = std::move(kept);
  return analyses;
}

void RunOutput::write(Json results, Provenance& provenance, const Json& parameters,
                      const AuditCommonSpec& spec) {
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
  // Everything that can fail on content runs before the folder is touched.
  // Invalid UTF-8 can only come from file names here (spec strings and table text are
  // checked when read): shown replaced, not a failure.
  const std::string results_text =
      results.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  const RenderedReport rendered = render_report(results);
  std::set<std::string> units;
  for (const auto& [name, table] : units_) units.insert("units/" + name);
  const std::string summary_text = build_summary(results, units).dump(2) + "\n";

  const Staging staging(dir_);
  make_output_folders(staging.path(), "tables");
  for (const auto& [name, table] : tables_)
    write_csv(table, (staging.path() / "tables" / name).string());
  for (const auto& [name, text] : rendered.tables) {
    write_file_atomically(staging.path() / "tables" / name, text);
  }
  make_output_folders(staging.path(), "units");
  for (const auto& [name, table] : units_)
    write_csv(table, (staging.path() / "units" / name).string());
  write_file_atomically(staging.path() / "report.html", rendered.html);
  write_file_atomically(staging.path() / "summary.json", summary_text);
  write_file_atomically(staging.path() / "results.json", results_text);
  publish(staging.path(), dir_, folders_);
}

fs::path RunOutput::stage_folder(const std::string& name) {
  VLBIAS_CHECK(std::find(std::begin(kAnalysisFolders), std::end(kAnalysisFolders), name) !=
                   std::end(kAnalysisFolders),
               InternalError, "run folder: '{}' is not an analysis folder", name);
  const fs::path staging = make_staging_folder(dir_, name + "-");
  folders_.emplace_back(name, staging);
  make_output_folders(staging, name);
  return staging / name;
}

RunOutput::~RunOutput() {
  std::error_code ignored;
  for (const auto& [name, folder] : folders_) fs::remove_all(folder, ignored);
}

}  // namespace vlbias::audits_internal
