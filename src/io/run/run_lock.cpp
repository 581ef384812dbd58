#include "vlbias/io/run/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "vlbias/core/error.h"

namespace vlbias {

RunLock::RunLock(const std::filesystem::path& dir) : dir_(dir) {
  VLBIAS_CHECK(!dir.empty(), UsageError, "--out RUN_DIR is required");
  std::error_code ec;
  const auto status = std::filesystem::status(dir, ec);
  VLBIAS_CHECK(!std::filesystem::exists(status) || std::filesystem::is_directory(status),
               UsageError, "--out '{}' is a file; expected a run folder (created when absent)",
               dir.string());
  std::filesystem::create_directories(dir, ec);
  VLBIAS_CHECK(std::filesystem::is_directory(dir), InputError,
               "{}: cannot create the run folder ({})", dir.string(),
               ec ? ec.message() : "not a folder");
  const std::filesystem::path lock_path = dir / ".lock";
  fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int err = errno;
    VLBIAS_FAIL(InputError, "{}: cannot open the run folder's lock ({})", lock_path.string(),
                err == ELOOP ? "it is a symbolic link; remove it" : std::strerror(err));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    VLBIAS_FAIL(UsageError,
                "{}: another vlbias process is running in this run folder; wait for it or "
                "choose another --out",
                dir.string());
  }
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace vlbias
