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
#include "vlbias/io/table/table.h"

#include "test_util.h"

namespace vlbias::table_test {

// testing_util::TempDir with paths as strings, as the table readers take them.
class TempDir : public testing_util::TempDir {
 public:
  std::string path(const std::string& name) const {
    return (testing_util::TempDir::path() / name).string();
  }
  // Writes `bytes` verbatim (binary, no newline translation) and returns the path.
  std::string write(const std::string& name, const std::string& bytes) const {
    return testing_util::TempDir::write(name, bytes).string();
  }
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
