#pragma once
// Helpers shared by every test executable.
#include <gtest/gtest.h>

#include <fstream>
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

}  // namespace vlbias::testing_util
