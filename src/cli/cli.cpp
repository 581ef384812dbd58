#include "cli.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/blas.h"
#include "vlbias/core/edit_distance.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/terminal.h"
#include "vlbias/io/table/table.h"
#include "vlbias/stats/stats.h"
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

namespace {

// One line per command for the command list (`vlbias`, `vlbias help`), as git lists its
// commands; a command missing here shows the first line of its description.
constexpr std::pair<const char*, const char*> kSummaries[] = {
    {"compare",
     "Compare a numeric column across groups (ANOVA, t, rank, paired tests; adjusted p)"},
    {"correlate", "Correlation tables (Pearson, Spearman, Kendall) with intervals and adjusted p"},
    {"compare-runs",
     "Compare runs of one audit kind: differences with intervals, p, ranks (report.html)"},
    {"power", "Power, images per group and the smallest detectable gap, from an audit as pilot"},
    {"describe", "Per-group n, mean, sd, percentiles and bootstrap CIs of a column"},
    {"prompts", "Write a prompt manifest (social-perception, trait-pairs, ...) as CSV"},
    {"dataset", "Read a released dataset folder (FairFace, UTKFace, GeoDE, ...) into a table"},
    {"metric", "Compute one metric (skew, scweat, clipscore, fid, pmi, ...) as JSON"},
    {"audit", "Run the audit a YAML spec describes; --check validates it without running"},
    {"report", "Re-render an audit run's report.html from its results.json"},
    {"encode", "CLIP embeddings of images or texts from a model folder (resumable)"},
    {"features", "Image features: FID Inception-v3, DINOv2 or CLIP (resumable; FID/KID/PRDC)"},
    {"explain", "Class activation maps of a CLIP ViT for a trait pair, with overlays per group"},
    {"faces", "Faces in images: boxes, 68 landmarks, aligned chips (dlib; resumable)"},
    {"merge", "Put a sharded job's outputs (--shard I/N) together, as one process writes them"},
    {"convert-weights", "PyTorch .pth/.pt/.bin weights to .safetensors, read as data (no code)"},
    {"generate", "Drive an LVLM or text-to-image model over HTTP into a run folder"},
    {"score", "Score texts: native classifier, Perspective, moderation endpoint, LLM judge"},
    {"spec", "Print a commented starter spec for an audit, generate or judge kind"},
    {"help", "Show this list, or a command's help ('vlbias help metric skew')"},
};

std::string summary_of(const CLI::App& command) {
  for (const auto& [name, line] : kSummaries) {
    if (command.get_name() == name) return line;
  }
  const std::string& d = command.get_description();
  return d.substr(0, d.find('\n'));
}

// The command list: what `vlbias` alone and `vlbias help` print.
std::string command_list(const CLI::App& app) {
  std::string out =
      "usage: vlbias [--threads N] [--quiet] [--version] COMMAND [ARGS]\n\n"
      "Audit vision-language systems for social bias. The commands:\n\n";
  std::size_t width = 10;  // names aligned to the longest ("convert-weights")
  for (const CLI::App* sub : app.get_subcommands({}))
    width = std::max(width, sub->get_name().size());
  for (const CLI::App* sub : app.get_subcommands({})) {
    out += fmt::format("   {:<{}} {}\n", sub->get_name(), width, summary_of(*sub));
  }
  out +=
      "\nSee 'vlbias help COMMAND' for a command's options ('vlbias help metric skew' for a\n"
      "subcommand's). Spec formats: docs/specs.md ('vlbias spec template KIND' prints a\n"
      "starter). Exit codes: 0 ok, 2 usage or input error, 1 internal failure.\n";
  return out;
}

// `vlbias --version`: the version, the commit it was built from and the BLAS library linked.
std::string version_line() {
  return fmt::format("vlbias {} (commit {}; BLAS: {})\n", VLBIAS_VERSION, build_commit(),
                     blas_library());
}

// " (did you mean 'audit'?)" when `given` is within two edits (or a third of its length) of a
// subcommand of `parent`.
std::string command_suggestion(const CLI::App& parent, const std::string& given) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, given.size() / 3) + 1;
  for (const CLI::App* sub : parent.get_subcommands({})) {
    const std::size_t d = edit_distance(given, sub->get_name());
    if (d < best_distance) {
      best = sub->get_name();
      best_distance = d;
    }
  }
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

CLI::App* find_subcommand(CLI::App& parent, const std::string& name) {
  try {
    return parent.get_subcommand(name);
  } catch (const CLI::OptionNotFound&) {
    return nullptr;
  }
}

// Whether the command line names no command: only the global options (git prints its
// command list then).
bool names_no_command(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      ++i;
    } else if (arg != "--quiet" && arg.rfind("--threads=", 0) != 0) {
      return false;
    }
  }
  return true;
}

// The value of --threads: 0 to kMaxThreads (check_thread_count's range), else UsageError
// (exit 2) naming the range; a value too long for a number is out of range too.
unsigned thread_option_value(const std::string& text) {
  const bool number = !text.empty() && text.size() <= 18 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  VLBIAS_CHECK(number, UsageError,
               "--threads must be an integer from 0 (all cores) to {}, got '{}'", kMaxThreads,
               text);
  const std::int64_t n = std::stoll(text);
  check_thread_count(n, "--threads");
  return static_cast<unsigned>(n);
}

// Runs CLI11 on the command line and maps every failure to a message and an exit code.
int parse_and_run(CLI::App& app, int argc, char** argv) {
  try {
    // CLI11 reports an unknown command as a missing one; name it instead.
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--threads") {
        ++i;
        continue;
      }
      if (arg.empty() || arg[0] == '-') continue;
      VLBIAS_CHECK(find_subcommand(app, arg) != nullptr, UsageError,
                   "unknown command '{}'{}; run 'vlbias help' for the list", arg,
                   command_suggestion(app, arg));
      break;
    }
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion&) {
    std::fputs(version_line().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    eprint("vlbias: error: {}\nRun 'vlbias help' for usage.\n", e.what());
    return 2;
  } catch (const Error& e) {
    eprint("vlbias: error: {}\n", e.what());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "vlbias: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    eprint("vlbias: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"vlbias: audit vision-language systems for social bias", "vlbias"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(VLBIAS_VERSION));
  std::string threads = "0";
  bool quiet_flag = false;
  app.add_option("--threads", threads,
                 fmt::format("Worker threads, 0 to {} (default 0: all cores)", kMaxThreads));
  app.add_flag("--quiet", quiet_flag, "No progress bars or warnings on stderr");
  app.parse_complete_callback([&] {
    set_thread_count(thread_option_value(threads));
    set_quiet(quiet_flag);
  });
  app.footer(
      "Run 'vlbias help COMMAND' or 'vlbias COMMAND --help' for a command's options.\n"
      "Spec formats: docs/specs.md. Exit codes: 0 ok, 2 usage or input error, 1 internal "
      "failure.");

  add_compare_command(app);
  add_describe_command(app);
  add_correlate_command(app);
  add_power_command(app);
  add_compare_runs_command(app);
  add_prompts_command(app);
  add_dataset_command(app);
  add_metric_commands(app);
  add_audit_command(app);
  add_report_command(app);
  add_encode_command(app);
  add_features_command(app);
  add_faces_command(app);
  add_label_command(app);
  add_explain_command(app);
  add_merge_command(app);
  add_convert_weights_command(app);
  add_generate_command(app);
  add_score_command(app);
  add_spec_command(app);
  add_sample_command(app);

  std::vector<std::string> help_topic;
  CLI::App* help =
      app.add_subcommand("help", "Show help for a command ('vlbias help metric skew')");
  help->add_option("command", help_topic, "Command name, and subcommand names");
  help->callback([&] {
    if (help_topic.empty()) {
      std::fputs(command_list(app).c_str(), stdout);
      return;
    }
    CLI::App* target = &app;
    for (const auto& name : help_topic) {
      CLI::App* sub = find_subcommand(*target, name);
      VLBIAS_CHECK(sub != nullptr && sub != help, UsageError,
                   "no command named '{}'{}; run 'vlbias help' for the list",
                   fmt::join(help_topic, " "), command_suggestion(*target, name));
      target = sub;
    }
    std::fputs(target->help().c_str(), stdout);
  });

  // `vlbias` alone lists the commands, as git does, but exits 2: no command ran, and a
  // script that lost its command word must fail (git's 1 is our internal-failure code).
  if (names_no_command(argc, argv)) {
    std::fputs(command_list(app).c_str(), stdout);
    return 2;
  }
  return parse_and_run(app, argc, argv);
}

}  // namespace vlbias::cli_internal
