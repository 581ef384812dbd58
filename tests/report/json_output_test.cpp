#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/report/json_output.h"

namespace vlbias {
namespace {
namespace in_json_output_test {

namespace fs = std::filesystem;

TEST(JsonOutput, NonFiniteNumbersBecomeNullNextToTheirNote) {
  EXPECT_TRUE(json_number(std::nan("")).is_null());
  EXPECT_TRUE(json_number(INFINITY).is_null());
  EXPECT_EQ(json_number(0.25).get<double>(), 0.25);
  stats::TestResult r;
  r.test = "welch";
  r.note = "zero variance in both samples";
  const Json j = to_json(r);
  EXPECT_TRUE(j["statistic"].is_null());
  EXPECT_TRUE(j["p_value"].is_null());
  EXPECT_EQ(j["note"], "zero variance in both samples");
  EXPECT_EQ(j.dump().find("NaN"), std::string::npos);
}

TEST(JsonOutput, ProvenanceHashesInputsAndOmitsThreads) {
  const fs::path dir = fs::temp_directory_path() / "vlbias_prov_test";
  fs::create_directories(dir);
  const fs::path input = dir / "in.csv";
  std::ofstream(input) << "abc";
  Provenance p;
  p.command = "compare";
  p.parameters = Json{{"value", "x"}};
  p.inputs = {input.string()};
  p.seed = 42;
  const Json j = provenance_json(p);
  EXPECT_EQ(j["inputs"][0]["sha256"],
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(j["inputs"][0]["bytes"], 3);
  EXPECT_EQ(j["seed"], 42);
  EXPECT_EQ(j["command"], "compare");
  EXPECT_FALSE(j.contains("threads"));
  EXPECT_EQ(j["created_utc"].get<std::string>().size(), 20u);
  p.inputs = {(dir / "missing.csv").string()};
  EXPECT_THROW(provenance_json(p), InputError);
  fs::remove_all(dir);
}

TEST(JsonOutput, WriteJsonIsAtomicAndReportsUnwritablePaths) {
  const fs::path dir = fs::temp_directory_path() / "vlbias_write_test";
  fs::create_directories(dir);
  const fs::path out = dir / "r.json";
  write_json(Json{{"a", 1}}, out.string());
  std::stringstream ss;
  ss << std::ifstream(out).rdbuf();
  EXPECT_EQ(ss.str(), "{\n  \"a\": 1\n}\n");
  EXPECT_TRUE(testing_util::leftover_temporaries(dir).empty());
  try {
    write_json(Json{{"a", 1}}, (dir / "no_such_dir" / "r.json").string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_dir"), std::string::npos);
  }
  fs::remove_all(dir);
}

}  // namespace in_json_output_test
}  // namespace
}  // namespace vlbias
