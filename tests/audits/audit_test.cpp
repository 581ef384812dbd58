// run_audit's own decisions: analyses of the other kind are refused before any
// file is read; trait-pair confidence tests default to across the first group
// factor within the second, and the reverse.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/cli_util.h"
#include "dual_encoder_study.h"
#include "vlbias/audits/audit.h"
#include "vlbias/core/error.h"
#include "vlbias/io/json.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/dual_encoder_results.h"

namespace vlbias {
namespace {
namespace in_audit_test {

namespace fs = std::filesystem;

const std::string kHeader =
    "images: {table: none.csv, embeddings: none.npy}\n"
    "prompts: {manifest: none.csv, embeddings: none.npy}\n"
    "factors: {groups: [race, gender]}\n";

std::string message_of_run(const std::string& yaml) {
  try {
    run_audit(parse_audit_spec(yaml, "/nonexistent", "spec.yaml"), "/nonexistent/run");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(AuditRun, AnalysesOfTheOtherKindAreRefusedBeforeReading) {
  for (const char* analysis : {"markedness", "ranking", "absdiff", "trends", "ellipses"}) {
    const std::string m =
        message_of_run("kind: trait-pairs\n" + kHeader + "analyses: {" + analysis + ": true}\n");
    EXPECT_NE(m.find(std::string("'") + analysis + "' is not part of a trait-pairs audit"),
              std::string::npos)
        << m;
  }
  const std::string m =
      message_of_run("kind: social-perception\n" + kHeader + "analyses: {confidence: {}}\n");
  EXPECT_NE(m.find("'confidence' is not part of a social-perception audit"), std::string::npos)
      << m;
  // Turned off explicitly is fine: the run then fails on the missing files instead.
  EXPECT_THROW(run_audit(parse_audit_spec(
                             "kind: trait-pairs\n" + kHeader + "analyses: {markedness: false}\n",
                             "/nonexistent", "spec.yaml"),
                         "/nonexistent/run"),
               InputError);
}

TEST(AuditRun, ConfidenceTestsDefaultToAcrossFirstWithinSecondGroupFactor) {
  const fs::path dir = cli_util::temp_dir();
  synthetic::StudyOptions o;
  o.kind = synthetic::StudyKind::TraitPairs;
  o.seeds = 4;
  o.dim = 24;
  o.permutations = 200;
  o.bootstrap = 50;
  const synthetic::WrittenStudy s = synthetic::write_synthetic_study(dir / "study", o);
  AuditSpec spec = load_audit_spec(s.spec);
  spec.dual_encoder().confidence.across.clear();
  spec.dual_encoder().confidence.within.clear();
  run_audit(spec, dir / "run");
  const Table tests = read_table((dir / "run" / "tables" / "confidence_tests.csv").string());
  std::size_t across_race = 0, across_gender = 0;
  for (std::size_t r = 0; r < tests.rows; ++r) {
    const std::string factor = tests.column("factor").text(r);
    const std::string within = tests.column("within").text(r);
    if (factor == "race" && within == "gender") ++across_race;
    if (factor == "gender" && within == "race") ++across_gender;
  }
  EXPECT_EQ(across_race, 6u * 2);    // 6 pairs x 2 genders
  EXPECT_EQ(across_gender, 6u * 3);  // 6 pairs x 3 races
  EXPECT_EQ(across_race + across_gender, tests.rows);
  fs::remove_all(dir);
}

// The association section the audit writes reads back (report/dual_encoder_results.h) to the
// same text, and names the pilot variance power reads.
TEST(AuditRun, AssociationSectionReadsBackToTheSameText) {
  const fs::path dir = cli_util::temp_dir();
  synthetic::StudyOptions o;
  o.seeds = 3;
  o.dim = 24;
  o.permutations = 100;
  o.bootstrap = 20;
  o.effect = 0.5;
  const synthetic::WrittenStudy s = synthetic::write_synthetic_study(dir / "study", o);
  run_audit(load_audit_spec(s.spec), dir / "run");
  const Json results =
      parse_json(cli_util::read_file(dir / "run" / "results.json"), "results.json");
  const Json& analyses = results["analyses"];
  const auto section = association_from_json(analyses);
  ASSERT_TRUE(section.has_value());
  EXPECT_EQ(to_json(*section).dump(), analyses[kAssociationSection].dump());
  ASSERT_FALSE(section->dimensions.empty());
  ASSERT_FALSE(section->contrasts.empty());
  EXPECT_TRUE(section->has_delta);
  EXPECT_GT(section->dimensions[0].groups[0].sd, 0);
  fs::remove_all(dir);
}

}  // namespace in_audit_test
}  // namespace
}  // namespace vlbias
