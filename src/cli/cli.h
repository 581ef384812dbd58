#pragma once
// Command-line entry point: git-style subcommands. Returns the process exit code
// (0 ok, 2 usage/input error, 1 internal failure).
namespace vlbias::cli_internal {
int run(int argc, char** argv);
}
