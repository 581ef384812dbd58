#pragma once
// The lock of a run folder (src/io/run/run_lock.cpp): one vlbias process at a time writes in a
// given folder. `vlbias generate ...`, `vlbias score ...`, `vlbias audit` and `vlbias report`
// hold it for their whole run, so two of them on one --out cannot interleave their outputs.
#include <filesystem>

namespace vlbias {

class RunLock {
 public:
  // Creates `dir` (and its parents) when absent, then takes an exclusive flock on dir/.lock
  // (opened without following a link), held until destruction; the kernel drops it when the
  // process dies, so a killed run never leaves the folder locked. UsageError when `dir` is
  // empty, names something that is not a folder, or another process holds the lock;
  // InputError when the folder cannot be created or .lock cannot be opened (permissions, a
  // symbolic link planted there).
  explicit RunLock(const std::filesystem::path& dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  int fd_ = -1;
};

}  // namespace vlbias
