#pragma once
// Helpers for the table tests: a per-test temporary directory and a way to
// check both the type and the message of an error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/io/table.h"

#include "test_util.h"

namespace vlbias::table_test {

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("vlbias-table-") + info->test_suite_name() + "-" + info->name() + "-" +
             std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path(const std::string& name) const { return (path_ / name).string(); }

  // Writes `bytes` verbatim (binary, no newline translation) and returns the path.
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string p = path(name);
    std::ofstream out(p, std::ios::binary);
    out << bytes;
    return p;
  }

 private:
  std::filesystem::path path_;
};

using testing_util::error_of;

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Every cell of column `name` as text, in row order.
inline std::vector<std::string> texts(const Table& t, const std::string& name) {
  std::vector<std::string> out;
  const Column& c = t.column(name);
  for (std::size_t r = 0; r < t.rows; ++r) out.push_back(c.text(r));
  return out;
}

}  // namespace vlbias::table_test
