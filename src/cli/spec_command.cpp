// `vlbias spec template KIND`: a commented starter spec (spec_templates.h) on stdout.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands.h"
#include "spec_templates.h"
#include "vlbias/core/error.h"

namespace vlbias::cli_internal {

namespace {

std::string kind_list() {
  std::string out;
  for (const auto& [kind, text] : kSpecTemplates)
    out += (out.empty() ? "" : ", ") + std::string(kind);
  return out;
}

}  // namespace

void add_spec_command(CLI::App& app) {
  CLI::App* spec =
      app.add_subcommand("spec",
                         "Spec files: 'vlbias spec template KIND' prints a commented starter spec\n"
                         "(every key: docs/specs.md)");
  spec->require_subcommand(1);
  auto kind = std::make_shared<std::string>();
  CLI::App* tmpl = spec->add_subcommand(
      "template", fmt::format("Print a commented starter spec for KIND ({}) on stdout;\n"
                              "its file names are placeholders for your inputs",
                              kind_list()));
  tmpl->add_option("kind", *kind, "The spec kind")->required();
  tmpl->callback([kind] {
    for (const auto& [name, text] : kSpecTemplates) {
      if (*kind == name) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        return;
      }
    }
    VLBIAS_FAIL(UsageError, "no spec kind named '{}'; the kinds are {}", *kind, kind_list());
  });
}

}  // namespace vlbias::cli_internal
