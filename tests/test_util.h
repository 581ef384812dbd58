#pragma once
// Helpers shared by every test executable.
#include <gtest/gtest.h>

#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace vlbias::testing_util {

// A committed JSON fixture, parsed once per process. `relative` is relative to
// tests/fixtures/ (e.g. "stats/resampling.json").
inline const nlohmann::json& fixture_json(const std::string& relative) {
  static std::map<std::string, nlohmann::json> cache;
  auto it = cache.find(relative);
  if (it == cache.end()) {
    const std::string path = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/" + relative;
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "missing fixture " << path;
    it = cache.emplace(relative, in.good() ? nlohmann::json::parse(in) : nlohmann::json()).first;
  }
  return it->second;
}

// Runs f and returns the message of the E it throws; records a failure when it
// throws nothing or something else.
template <typename E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a different exception type, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected an exception, none was thrown";
  return "";
}

}  // namespace vlbias::testing_util
