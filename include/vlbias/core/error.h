#pragma once
// Errors: one small hierarchy, thrown through VLBIAS_CHECK.
//
//   Error            base of everything vlbias throws on purpose
//   ├─ InputError    bad input data (file, row/column, tensor): exit code 2
//   ├─ UsageError    bad command line or spec: exit code 2
//   └─ InternalError a vlbias bug or an environment failure: exit code 1
//
// Messages are one sentence that names the file / row / column / tensor and says
// what was expected. `assert` is used only for internal invariants.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace vlbias {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  // Process exit code that the CLI returns for this error.
  virtual int exit_code() const { return 1; }
};

class InputError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 2; }
};

class UsageError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 2; }
};

class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace vlbias

// VLBIAS_CHECK(cond, ErrorType, "format {}", args...): throws ErrorType with the
// formatted message when cond is false. The message is only formatted on failure.
#define VLBIAS_CHECK(cond, ErrorType, ...)       \
  do {                                           \
    if (!(cond)) [[unlikely]] {                  \
      throw ErrorType(fmt::format(__VA_ARGS__)); \
    }                                            \
  } while (0)

// VLBIAS_FAIL(ErrorType, "format {}", args...): unconditional throw.
#define VLBIAS_FAIL(ErrorType, ...) throw ErrorType(fmt::format(__VA_ARGS__))
