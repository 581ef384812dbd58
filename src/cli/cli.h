#pragma once
// Command-line entry point: git-style subcommands. Returns the process exit code
// (0 ok, 2 usage/input error, 1 internal failure).
namespace vlbias::cli_internal {
int run(int argc, char** argv);
// The git commit the binary was built from: "SHORTSHA", "SHORTSHA, dirty" or "unknown"
// (written at build time by cmake/build_info.cmake).
const char* build_commit();
}  // namespace vlbias::cli_internal
