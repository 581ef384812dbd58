#include "cli.h"

#include <cstdio>
#include <new>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/stats/stats.h"
#include "vlbias/io/table.h"
#include "vlbias/version.h"

namespace vlbias::cli_internal {

CLI::Validator resamples_range() {
  return CLI::Range(std::size_t{0}, stats::kMaxResamples);
}

std::vector<std::string> split_list(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    VLBIAS_CHECK(!item.empty(), UsageError, "{} has an empty item in '{}'", option, text);
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<double> split_numbers(const std::string& text, const std::string& option) {
  std::vector<double> out;
  for (const auto& item : split_list(text, option)) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    VLBIAS_CHECK(used == item.size(), UsageError, "{} expects numbers, got '{}'", option, item);
    out.push_back(v);
  }
  return out;
}

std::vector<double> value_matrix(const Table& table, const std::vector<std::string>& columns,
                                 bool allow_missing) {
  const std::size_t k = columns.size();
  std::vector<double> values(table.rows * k);
  for (std::size_t d = 0; d < k; ++d) {
    const std::vector<double>& column = table.numeric(columns[d], allow_missing);
    for (std::size_t r = 0; r < table.rows; ++r) values[r * k + d] = column[r];
  }
  return values;
}

int run(int argc, char** argv) {
  CLI::App app{"vlbias: audit vision-language systems for social bias", "vlbias"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(VLBIAS_VERSION));
  unsigned threads = 0;
  bool quiet_flag = false;
  app.add_option("--threads", threads, "Worker threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--quiet", quiet_flag, "No progress bars or warnings on stderr");
  app.parse_complete_callback([&] {
    set_thread_count(threads);
    set_quiet(quiet_flag);
  });
  app.footer(
      "Run 'vlbias help COMMAND' or 'vlbias COMMAND --help' for a command's options.\n"
      "Exit codes: 0 ok, 2 usage or input error, 1 internal failure.");

  add_compare_command(app);
  add_describe_command(app);
  add_prompts_command(app);
  add_metric_commands(app);
  add_audit_command(app);
  add_report_command(app);
  add_encode_command(app);
  add_generate_command(app);
  add_score_command(app);

  std::vector<std::string> help_topic;
  CLI::App* help =
      app.add_subcommand("help", "Show help for a command ('vlbias help metric skew')");
  help->add_option("command", help_topic, "Command name, and subcommand names");
  help->callback([&] {
    CLI::App* target = &app;
    for (const auto& name : help_topic) {
      CLI::App* sub = nullptr;
      try {
        sub = target->get_subcommand(name);
      } catch (const CLI::OptionNotFound&) {
        sub = nullptr;
      }
      VLBIAS_CHECK(sub != nullptr && sub != help, UsageError,
                   "no command named '{}'; run 'vlbias help'", fmt::join(help_topic, " "));
      target = sub;
    }
    std::fputs(target->help().c_str(), stdout);
  });

  try {
    // CLI11 reports an unknown command as a missing one; name it instead.
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--threads") {
        ++i;
        continue;
      }
      if (arg.empty() || arg[0] == '-') continue;
      bool known = true;
      try {
        app.get_subcommand(arg);
      } catch (const CLI::OptionNotFound&) {
        known = false;
      }
      VLBIAS_CHECK(known, UsageError, "unknown command '{}'; run 'vlbias help' for the list", arg);
      break;
    }
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "vlbias: error: %s\nRun 'vlbias help' for usage.\n", e.what());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "vlbias: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "vlbias: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vlbias: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace vlbias::cli_internal
