#pragma once
// Writing an audit run (shared by every kind).
//
// A run folder is never left half-written: the folder is locked for the whole audit
// (run_lock.h), every output (tables/*.csv, report.html, results.json) is rendered and
// written into a fresh staging folder RUN_DIR/.staging-XXXXXX, and only when all of them are
// there are they moved into place: the old results.json removed first, then tables/ and
// units/ (each replaced as a whole, so no table of an earlier run outlives it), report.html,
// summary.json, and results.json last. An error before that (bad input, an analysis that fails, a
// full disk) leaves an existing run exactly as it was; a process killed while moving leaves a
// folder without results.json, which reads as incomplete. Staging folders left by a killed run are
// removed by the next audit on the folder.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/audits/audit_types.h"
#include "vlbias/io/run/run_lock.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/json_output.h"

namespace vlbias::audits_internal {

class RunOutput {
 public:
  // Locks RUN_DIR (created when absent) before any input is read: UsageError when it names a
  // file or another process holds it (RunLock).
  explicit RunOutput(const std::filesystem::path& run_dir);
  ~RunOutput();  // removes stage_folder's folders that write() did not move into place
  RunOutput(const RunOutput&) = delete;
  RunOutput& operator=(const RunOutput&) = delete;

  // Keeps every section's tables for write() (as tables/<name>.csv; its units tables as
  // units/<name>.csv; names that two tables share are left out, with a note) and returns the
  // "analyses" object (section name -> its JSON), the list of table paths relative to RUN_DIR in
  // `tables`, and appends the sections' notes to `notes`.
  Json add_sections(std::vector<std::pair<std::string, AnalysisOutput>>& sections, Json& tables,
                    std::vector<std::string>& notes);

  // An output folder that an analysis fills itself (RUN_DIR/<name>/, e.g. explain/): created
  // empty in a staging folder of its own now, moved into place by write() with the other outputs
  // (an earlier run's folder of that name is replaced as a whole, like tables/), removed with
  // the run's other staging folders if write() is never reached. `name` must be one of
  // kAnalysisFolders.
  std::filesystem::path stage_folder(const std::string& name);

  // Adds the provenance block (parameters, seed, input hashes) to `results` (with the spec's
  // title and about, when set, right after "kind"), renders the report (report.h), and writes
  // the run as described above.
  void write(Json results, Provenance& provenance, const Json& parameters,
             const AuditCommonSpec& spec);

 private:
  std::filesystem::path dir_;
  RunLock lock_;
  std::vector<std::pair<std::string, Table>> tables_;  // file name -> table
  std::vector<std::pair<std::string, Table>> units_;   // file name -> table
  // stage_folder's folders: name -> the staging folder holding it (removed by the destructor
  // when still there).
  std::vector<std::pair<std::string, std::filesystem::path>> folders_;
};

// The folders an analysis may fill itself (stage_folder); an earlier run's folder of one of
// these names never outlives a new run, whether or not the new run has it.
inline constexpr const char* kAnalysisFolders[] = {"explain"};

}  // namespace vlbias::audits_internal
