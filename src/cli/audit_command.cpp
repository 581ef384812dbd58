// `vlbias audit SPEC.yaml --out RUN_DIR`: a whole study from one spec.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <optional>

#include "commands.h"
#include "vlbias/audits/audit.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/terminal.h"
#include "vlbias/io/run/run_lock.h"
#include "vlbias/report/report.h"

namespace vlbias::cli_internal {

void add_audit_command(CLI::App& app) {
  auto spec_path = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto save_state = std::make_shared<std::string>();
  auto from_states = std::make_shared<std::vector<std::string>>();
  auto check = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "audit",
      "Run the audit a YAML spec describes (kind: social-perception | trait-pairs |\n"
      "geo-diversity | lvlm-counterfactual | visual-stereotypes | representation) and write\n"
      "RUN_DIR/results.json, RUN_DIR/tables/*.csv and RUN_DIR/report.html. Every key of\n"
      "every kind: docs/specs.md; a starter: 'vlbias spec template KIND'");
  cmd->add_option("spec", *spec_path, "The audit spec (YAML)")->required();
  cmd->add_option("--out", *out, "The run folder (created if absent)");
  cmd->add_option("--input", *inputs,
                  "lvlm-counterfactual: scan this shard instead of the spec's generations");
  cmd->add_option("--save-state", *save_state,
                  "lvlm-counterfactual: write the scanned state (a shard) instead of results");
  cmd->add_option("--from-state", *from_states,
                  "lvlm-counterfactual: merge these saved shard states instead of scanning");
  cmd->add_flag("--check", *check,
                "Validate the spec and its inputs (files, columns, row counts) without running;\n"
                "prints 'ok: KIND spec, N inputs checked' or the error the run would give");
  cmd->callback([spec_path, out, inputs, save_state, from_states, check] {
    const AuditSpec spec = load_audit_spec(*spec_path);
    if (*check) {
      VLBIAS_CHECK(out->empty() && inputs->empty() && save_state->empty() && from_states->empty(),
                   UsageError,
                   "--check runs nothing; it takes no --out, --input, --save-state "
                   "or --from-state");
      const std::size_t n = check_audit_inputs(spec);
      fmt::print("ok: {} spec, {} input{} checked\n", to_string(spec.kind), n, n == 1 ? "" : "s");
      return;
    }
    const bool sharding = !inputs->empty() || !save_state->empty() || !from_states->empty();
    VLBIAS_CHECK(!sharding || spec.kind == AuditKind::LvlmCounterfactual, UsageError,
                 "--input, --save-state and --from-state apply to lvlm-counterfactual audits only");
    VLBIAS_CHECK(!out->empty() || !save_state->empty(), UsageError,
                 "audit needs --out RUN_DIR (or --save-state FILE to scan a shard)");
    if (spec.kind == AuditKind::LvlmCounterfactual) {
      LvlmShardOptions shards;
      for (const auto& p : *inputs) shards.inputs.emplace_back(p);
      shards.save_state = *save_state;
      for (const auto& p : *from_states) shards.from_states.emplace_back(p);
      run_lvlm_audit(spec, spec.lvlm(), *out, shards);
      if (!quiet()) {
        eprint("vlbias: wrote {}\n", save_state->empty() ? *out + "/results.json" : *save_state);
      }
      return;
    }
    run_audit(spec, *out);
    if (!quiet()) eprint("vlbias: wrote {0}/results.json and {0}/report.html\n", *out);
  });
}

void add_report_command(CLI::App& app) {
  auto run_dir = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Re-render RUN_DIR/report.html (and its chart tables RUN_DIR/tables/fig_*.csv) from\n"
      "RUN_DIR/results.json: a self-contained HTML file with inline SVG charts");
  cmd->add_option("run_dir", *run_dir, "The folder of an audit run")->required();
  cmd->callback([run_dir] {
    // Locked like an audit on the same folder. A folder without results.json is left to
    // write_report's message: report never creates a folder, nor a lock where no run is.
    std::optional<RunLock> lock;
    if (std::filesystem::exists(std::filesystem::path(*run_dir) / "results.json")) {
      lock.emplace(*run_dir);
    }
    const auto path = write_report(*run_dir);
    if (!quiet()) eprint("vlbias: wrote {}\n", path.string());
  });
}

}  // namespace vlbias::cli_internal
