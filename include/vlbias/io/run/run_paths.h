#pragma once
// Run folders given as inputs (src/io/run/run_paths.cpp): where a command that reads runs may write
// (never into one of them), and the files it reads inside a run (never through a link).
//
// Commands whose inputs are run folders (compare-runs, power, merge) write their output apart
// from every one of them: `compare-runs A B --out B` once replaced run B's results.json and
// report.html with the comparison, and the audit's results were lost. A run's own files
// (summary.json, results.json, units/*.csv) are read only when no entry on the way from the
// run folder is a symbolic link: a link would bring an outside file (another run's table,
// /etc/passwd, a device) into the run's results, as outputs already refuse to be written
// through links (make_output_folders).
#include <filesystem>
#include <string_view>
#include <vector>

namespace vlbias {

// UsageError when `out` (a folder or file the command writes; `out_name` names it in the
// message, e.g. "compare-runs --out") is one of `inputs` (the run folders, or files, read),
// lies inside one, or contains one. Paths are compared after resolving "." / ".." and the links
// of the parts that exist, so a link to a run is that run.
void check_out_apart_from_inputs(const std::filesystem::path& out,
                                 const std::vector<std::filesystem::path>& inputs,
                                 std::string_view out_name);

// run_dir / relative: a file a command reads from a run folder it was given. InputError when
// `relative` is empty, absolute or climbs out with "..", when an entry on the way (a folder
// below run_dir, or the file itself) is a symbolic link, or when the file does not exist
// (`what` names it: "a units table"). What kind of file it is (a device, a pipe) is left to the
// reader's input policy (check_input_file), which names it.
std::filesystem::path run_input_file(const std::filesystem::path& run_dir,
                                     const std::filesystem::path& relative, std::string_view what);

}  // namespace vlbias
