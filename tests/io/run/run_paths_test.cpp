// Run folders as inputs (include/vlbias/io/run/run_paths.h): an output is refused when it is,
// contains or lies inside an input (compared part by part, links resolved), and a run's file is
// read only when no entry on the way from the run folder is a link.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/run/run_paths.h"

namespace vlbias {
namespace {
namespace in_run_paths_test {

namespace fs = std::filesystem;

fs::path fresh_dir() {
  return testing_util::fresh_test_dir("vlbias_run_paths_");
}

using testing_util::error_of;

TEST(CheckOutApartFromInputs, SiblingsPassAndTheSameInsideOrAroundAreRefused) {
  const fs::path dir = fresh_dir();
  fs::create_directories(dir / "runs/b");
  fs::create_directory_symlink(dir / "runs/b", dir / "b_link");
  const std::vector<fs::path> inputs = {dir / "runs/a", dir / "runs/b"};
  // A name that merely starts like an input's is a sibling, as is a file beside the runs.
  for (const fs::path& ok : {dir / "runs/b2", dir / "runs/b.json", dir / "out", dir / "runs/a_b"}) {
    EXPECT_NO_THROW(check_out_apart_from_inputs(ok, inputs, "test --out")) << ok;
  }
  auto refused = [&](const fs::path& out) {
    return error_of<UsageError>([&] { check_out_apart_from_inputs(out, inputs, "test --out"); });
  };
  EXPECT_NE(refused(dir / "runs/b").find("is the input"), std::string::npos);
  EXPECT_NE(refused(dir / "runs/b/").find("is the input"), std::string::npos);
  EXPECT_NE(refused(dir / "b_link").find("is the input"), std::string::npos);
  EXPECT_NE(refused(dir / "runs/x/../b").find("is the input"), std::string::npos);
  EXPECT_NE(refused(dir / "b_link/new/results.json").find("lies inside the input"),
            std::string::npos);
  EXPECT_NE(refused(dir / "runs").find("contains the input"), std::string::npos);
  const std::string message = refused(dir / "runs/a/cmp");
  EXPECT_NE(message.find("test --out " + (dir / "runs/a/cmp").string() + " lies inside the input " +
                         (dir / "runs/a").string()),
            std::string::npos)
      << message;
  fs::remove_all(dir);
}

TEST(RunInputFile, AFileInsideTheRunIsReturnedAndLinksOnTheWayAreRefused) {
  const fs::path dir = fresh_dir();
  fs::create_directories(dir / "run/units");
  fs::create_directories(dir / "elsewhere");
  std::ofstream(dir / "run/units/a.csv") << "k,v\n";
  std::ofstream(dir / "elsewhere/b.csv") << "k,v\n";
  EXPECT_EQ(run_input_file(dir / "run", "units/a.csv", "a units table").string(),
            (dir / "run/units/a.csv").string());
  fs::create_symlink(dir / "elsewhere/b.csv", dir / "run/units/b.csv");
  EXPECT_NE(error_of<InputError>([&] {
              run_input_file(dir / "run", "units/b.csv", "a table");
            }).find("units/b.csv is a symbolic link"),
            std::string::npos);
  fs::create_directory_symlink(dir / "elsewhere", dir / "run/linked");
  EXPECT_NE(error_of<InputError>([&] {
              run_input_file(dir / "run", "linked/b.csv", "a table");
            }).find("run/linked is a symbolic link"),
            std::string::npos);
  for (const char* bad : {"../elsewhere/b.csv", "/etc/passwd", ""}) {
    EXPECT_NE(error_of<InputError>([&] {
                run_input_file(dir / "run", bad, "a table");
              }).find("is not a path inside the run folder"),
              std::string::npos)
        << bad;
  }
  EXPECT_NE(error_of<InputError>([&] {
              run_input_file(dir / "run", "units/c.csv", "a table");
            }).find("does not exist"),
            std::string::npos);
  // The run folder itself may be reached through a link: the user named it.
  fs::create_directory_symlink(dir / "run", dir / "run_link");
  EXPECT_EQ(run_input_file(dir / "run_link", "units/a.csv", "a units table").string(),
            (dir / "run_link/units/a.csv").string());
  fs::remove_all(dir);
}

}  // namespace in_run_paths_test
}  // namespace
}  // namespace vlbias
