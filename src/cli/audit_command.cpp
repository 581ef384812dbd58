// `vlbias audit SPEC.yaml --out RUN_DIR`: a whole study from one spec.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "vlbias/audit.h"
#include "vlbias/log.h"

namespace vlbias::cli {

void add_audit_command(CLI::App& app) {
  auto spec_path = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "audit",
      "Run the audit a YAML spec describes (kind: social-perception | trait-pairs |\n"
      "geo-diversity) and write\n"
      "RUN_DIR/results.json and RUN_DIR/tables/*.csv (spec format: include/vlbias/audit.h)");
  cmd->add_option("spec", *spec_path, "The audit spec (YAML)")->required();
  cmd->add_option("--out", *out, "The run folder (created if absent)")->required();
  cmd->callback([spec_path, out] {
    const AuditSpec spec = load_audit_spec(*spec_path);
    run_audit(spec, *out);
    if (!quiet()) fmt::print(stderr, "vlbias: wrote {}/results.json\n", *out);
  });
}

}  // namespace vlbias::cli
