// `vlbias audit --check SPEC` (each kind's in its folder, <kind>_audit_kind.cpp): every input the
// run would read, opened with the run's loaders and held to the run's checks (readable files, the
// columns the spec names, table and embedding row counts, dimensions), in the run's order, so the
// first fault gives the run's own message: first the up-front check of every provenance input
// (start_hashing_inputs' check_input_file, in the order each runner lists them), then the loads.
// Nothing is computed beyond loading, and nothing is written: no run folder, no lock.
//
// The checks the runners make themselves (not in a shared loader) are repeated there with the
// same words; tests/cli/audit_check_test.cpp runs each broken input through both `--check`
// and the real run and compares the messages, so the two cannot drift apart unnoticed.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "audit_kind.h"
#include "vlbias/audits/audit.h"
#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"
#include "vlbias/io/input_identity.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace audits_internal {

std::size_t check_input_files(const std::vector<std::filesystem::path>& inputs) {
  for (const auto& p : inputs) check_input_or_shards(p.string());
  return inputs.size();
}

void require_table_columns(const Table& table, const std::vector<std::string>& columns) {
  for (const std::string& c : columns) table.column(c);
}

}  // namespace audits_internal

std::size_t check_audit_inputs(const AuditSpec& spec) {
  return audits_internal::audit_kind(spec.kind).check_inputs(spec);
}

}  // namespace vlbias
