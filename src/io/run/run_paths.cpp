// Run folders given as inputs (include/vlbias/io/run/run_paths.h).
#include "vlbias/io/run/run_paths.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "vlbias/core/error.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

// The absolute path with "." / ".." and the links of its existing parts resolved, as its
// non-empty parts (a trailing '/' adds none).
std::vector<std::string> resolved_parts(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p), ec);
  if (ec) r = fs::absolute(p).lexically_normal();
  std::vector<std::string> parts;
  for (const fs::path& part : r) {
    if (!part.empty() && part != ".") parts.push_back(part.string());
  }
  return parts;
}

// Whether `inner` is `outer` or lies below it.
bool starts_with_parts(const std::vector<std::string>& inner,
                       const std::vector<std::string>& outer) {
  if (inner.size() < outer.size()) return false;
  for (std::size_t i = 0; i < outer.size(); ++i) {
    if (inner[i] != outer[i]) return false;
  }
  return true;
}

}  // namespace

void check_out_apart_from_inputs(const fs::path& out, const std::vector<fs::path>& inputs,
                                 std::string_view out_name) {
  const std::vector<std::string> o = resolved_parts(out);
  for (const fs::path& input : inputs) {
    const std::vector<std::string> in = resolved_parts(input);
    const bool inside = starts_with_parts(o, in);
    const bool contains = starts_with_parts(in, o);
    if (!inside && !contains) continue;
    const char* where = inside && contains ? "is" : inside ? "lies inside" : "contains";
    VLBIAS_FAIL(UsageError,
                "{} {} {} the input {}; write the output apart from every run it reads (a new "
                "folder), or the runs would be overwritten",
                out_name, out.string(), where, input.string());
  }
}

fs::path run_input_file(const fs::path& run_dir, const fs::path& relative, std::string_view what) {
  bool plain = !relative.empty() && relative.is_relative();
  for (const fs::path& part : relative) plain = plain && part != "..";
  VLBIAS_CHECK(plain, InputError, "{}: '{}' is not a path inside the run folder; expected {}",
               run_dir.string(), relative.string(), what);
  fs::path current = run_dir;
  for (const fs::path& part : relative) {
    if (part.empty() || part == ".") continue;
    current /= part;
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0) {
      VLBIAS_FAIL(InputError, "{} does not exist ({}); expected {} in the run folder {}",
                  current.string(), std::strerror(errno), what, run_dir.string());
    }
    VLBIAS_CHECK(!S_ISLNK(st.st_mode), InputError,
                 "{} is a symbolic link; vlbias reads a run's files only inside its folder, "
                 "never through a link (expected {}: copy the file there instead)",
                 current.string(), what);
  }
  return current;
}

}  // namespace vlbias
