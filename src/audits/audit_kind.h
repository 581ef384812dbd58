#pragma once
// One audit kind: what `vlbias audit` does with a spec of that kind. Each kind implements it in
// its own folder (src/audits/<kind>/: dual_encoder for social-perception and trait-pairs, geo,
// lvlm, visual, representation) as one AuditKindOps constant, and audit_kind.cpp registers every
// kind once in one table, which parse_audit_spec (audit_yaml.cpp), check_audit_inputs
// (audit_check.cpp), run_audit and to_string (audit.cpp) read instead of switching on the kind.
//
// A kind's code reads the common keys (AuditCommonSpec) and its own spec, never the whole
// AuditSpec: only its <kind>_audit_kind.cpp includes this header (and so audit.h), to make its
// row with kind_ops below, which unwraps the spec's variant (scripts/check_stages.py checks it).
//
// Adding a kind: its folder (spec keys, runner, --check, its row), one row of the table in
// audit_kind.cpp, and its enumerator (audit_types.h) and variant alternative (audit.h). Its
// report page and summary.json findings live in src/report (a lower stage, which renders
// results.json without the audits); report.cpp and summary_json.cpp dispatch on results.json's
// kind there.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "audit_yaml.h"
#include "vlbias/audits/audit.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias::audits_internal {

struct AuditKindOps {
  AuditKind kind;
  const char* name;  // the spec's `kind:` ("geo-diversity")
  // The kind's root keys (spec.kind is set by the caller): fills spec.<kind> and the common keys
  // (audit_yaml.h), and checks the keys the kind allows at the root.
  void (*parse_root)(Context& ctx, const YAML::Node& root, AuditSpec& spec);
  // `vlbias audit --check` (audit.h's check_audit_inputs): the number of input files checked.
  std::size_t (*check_inputs)(const AuditSpec& spec);
  // The run (audit.h's run_audit).
  void (*run)(const AuditSpec& spec, const std::filesystem::path& run_dir);
};

// The spec of kind KindSpec held by `spec` (InternalError if another: parse_audit_spec keeps the
// kind and the variant in step).
template <class KindSpec>
const KindSpec& held_kind_spec(const AuditSpec& spec) {
  const KindSpec* k = std::get_if<KindSpec>(&spec.kind_spec);
  VLBIAS_CHECK(k != nullptr, InternalError, "a {} spec holds another kind's keys",
               to_string(spec.kind));
  return *k;
}

// The row of a kind whose spec is KindSpec, from the kind's three functions:
//   void parse(Context&, const YAML::Node& root, AuditCommonSpec&, KindSpec&);
//   std::size_t check(const AuditCommonSpec&, const KindSpec&);
//   void run(const AuditCommonSpec&, const KindSpec&, const std::filesystem::path& run_dir);
template <class KindSpec, auto parse, auto check, auto run>
constexpr AuditKindOps kind_ops(AuditKind kind, const char* name) {
  return {kind, name,
          [](Context& ctx, const YAML::Node& root, AuditSpec& spec) {
            parse(ctx, root, spec, spec.kind_spec.template emplace<KindSpec>());
          },
          [](const AuditSpec& spec) { return check(spec, held_kind_spec<KindSpec>(spec)); },
          [](const AuditSpec& spec, const std::filesystem::path& run_dir) {
            run(spec, held_kind_spec<KindSpec>(spec), run_dir);
          }};
}

// Every kind, in the order messages list them.
std::span<const AuditKindOps* const> audit_kinds();
// The entry of `kind`; InternalError for a value outside the enumeration.
const AuditKindOps& audit_kind(AuditKind kind);

// The rows of the table, one per kind, each defined in its kind's folder.
extern const AuditKindOps kSocialPerceptionKind;    // dual_encoder/dual_encoder_audit_kind.cpp
extern const AuditKindOps kTraitPairsKind;          // dual_encoder/dual_encoder_audit_kind.cpp
extern const AuditKindOps kGeoDiversityKind;        // geo/geo_audit_kind.cpp
extern const AuditKindOps kLvlmCounterfactualKind;  // lvlm/lvlm_audit_kind.cpp
extern const AuditKindOps kVisualStereotypesKind;   // visual/visual_audit_kind.cpp
extern const AuditKindOps kRepresentationKind;      // representation/representation_audit_kind.cpp

// What every kind's --check shares (audit_check.cpp). The inputs are readable files (or pipes),
// as start_hashing_inputs checks them before any work; returns their number.
std::size_t check_input_files(const std::vector<std::filesystem::path>& inputs);
// Columns an analysis groups or splits by: Table::column's message, as the analysis gives it.
void require_table_columns(const Table& table, const std::vector<std::string>& columns);

}  // namespace vlbias::audits_internal
