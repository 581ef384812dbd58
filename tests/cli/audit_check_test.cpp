// `vlbias audit --check SPEC`: a good spec of every kind is "ok", and each broken input (a
// missing column, a missing file, a table whose rows do not match its embeddings) gives exactly
// the error the real run gives, with exit code 2, while writing nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "cli/cli_util.h"

namespace {
namespace in_audit_check_test {

namespace fs = std::filesystem;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

std::string example(const std::string& path) {
  return std::string(VLBIAS_SOURCE_DIR) + "/examples/" + path;
}

// A folder for a test's spec and input files (temp_dir() itself holds run_cli's stderr.txt).
fs::path case_dir() {
  const fs::path dir = temp_dir() / "case";
  fs::create_directories(dir);
  return dir;
}

// Every path under `dir`, to see that --check leaves it as it was.
std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.insert(e.path().string());
  return out;
}

// A copy of `from` without its last line: a table one row short of its embeddings.
std::string short_copy(const std::string& from, const fs::path& dir, const std::string& name) {
  std::string text = read_file(from);
  text.pop_back();  // the final newline
  text.erase(text.rfind('\n') + 1);
  const fs::path to = dir / name;
  std::ofstream(to, std::ios::binary) << text;
  return to.string();
}

struct Case {
  std::string name;
  std::string spec;
  std::string expected;  // a part of the error, to see that the intended fault is the one hit
};

// Writes the case's spec, runs --check and then the real audit on it: both exit 2 with the
// same message, and --check adds nothing to the folder.
void expect_check_matches_run(const Case& c, const fs::path& dir) {
  SCOPED_TRACE(c.name);
  const fs::path spec = dir / (c.name + ".yaml");
  std::ofstream(spec, std::ios::binary) << c.spec;
  const std::set<std::string> before = listing(dir);
  const CliResult check = run_cli("--quiet audit --check '" + spec.string() + "'");
  EXPECT_EQ(listing(dir), before) << "--check wrote into " << dir;
  EXPECT_EQ(check.exit_code, 2) << check.out << check.err;
  EXPECT_EQ(check.out, "");
  EXPECT_NE(check.err.find(c.expected), std::string::npos) << check.err;
  const fs::path run_dir = dir / (c.name + "_run");
  const CliResult run =
      run_cli("--quiet audit '" + spec.string() + "' --out '" + run_dir.string() + "'");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(check.err, run.err);
}

std::string dual_encoder_spec(const std::string& kind, const std::string& table,
                              const std::string& embeddings, const std::string& extra) {
  const std::string dir = kind == "trait-pairs" ? "trait_pairs/" : "social_perception/";
  const std::string prompts = kind == "trait-pairs" ? "pairs" : "prompts";
  return "kind: " + kind + "\nimages: {table: '" + table + "', embeddings: '" + embeddings +
         "'}\nprompts: {manifest: '" + example(dir + prompts + ".csv") + "', embeddings: '" +
         example(dir + prompts + ".npy") + "'}\n" + extra;
}

TEST(AuditCheck, EveryExampleSpecIsOkAndNothingIsWritten) {
  const std::pair<const char*, const char*> kinds[] = {
      {"social_perception", "ok: social-perception spec, 4 inputs checked\n"},
      {"trait_pairs", "ok: trait-pairs spec, 4 inputs checked\n"},
      {"geo_diversity", "ok: geo-diversity spec, 7 inputs checked\n"},
      {"lvlm_counterfactual", "ok: lvlm-counterfactual spec, 2 inputs checked\n"},
      {"visual_stereotypes", "ok: visual-stereotypes spec, 6 inputs checked\n"},
      {"representation", "ok: representation spec, 4 inputs checked\n"}};
  for (const auto& [folder, ok] : kinds) {
    SCOPED_TRACE(folder);
    const fs::path dir = example(folder);
    const std::set<std::string> before = listing(dir);
    const CliResult r = run_cli("audit --check examples/" + std::string(folder) + "/spec.yaml");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, ok);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(listing(dir), before);
  }
}

TEST(AuditCheck, CheckTakesNoRunFolderAndCreatesNone) {
  const fs::path run_dir = temp_dir() / "run";
  const CliResult r =
      run_cli("audit --check examples/trait_pairs/spec.yaml --out '" + run_dir.string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--check runs nothing"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(run_dir));
}

TEST(AuditCheck, DualEncoderFaultsGiveTheRunsErrors) {
  const fs::path dir = case_dir();
  const std::string table = example("social_perception/images.csv");
  const std::string npy = example("social_perception/images.npy");
  const std::string factors =
      "factors: {groups: [race, gender], ordinal: {age: 1.1, smiling: 1.1}, categorical: "
      "[lighting, seed]}\n";
  const std::string fast =
      "analyses: {association: {bootstrap: 0}, scweat: {permutations: 1}, markedness: "
      "{bootstrap: 0}}\n";
  const std::vector<Case> cases = {
      {"missing_group_column",
       dual_encoder_spec("social-perception", table, npy,
                         "factors: {groups: [race, gendr]}\n" + fast),
       "the spec names 'gendr' as a group factor"},
      {"missing_embeddings",
       dual_encoder_spec("social-perception", table, (dir / "absent.npy").string(), factors + fast),
       "absent.npy"},
      {"table_one_row_short",
       dual_encoder_spec("social-perception", short_copy(table, dir, "short.csv"), npy,
                         factors + fast),
       "short.csv"},
      {"missing_ranking_column",
       dual_encoder_spec(
           "social-perception", table, npy,
           factors + fast.substr(0, fast.size() - 2) + ", ranking: {attributes: [race, nope]}}\n"),
       "'nope'"},
      {"missing_confidence_column",
       dual_encoder_spec("trait-pairs", example("trait_pairs/images.csv"),
                         example("trait_pairs/images.npy"),
                         "factors: {groups: [race, gender]}\nanalyses: {confidence: {across: "
                         "race, within: nope}}\n"),
       "the spec names 'nope' as a confidence.within factor"},
      {"analysis_of_the_other_kind",
       dual_encoder_spec("trait-pairs", example("trait_pairs/images.csv"),
                         example("trait_pairs/images.npy"),
                         "factors: {groups: [race, gender]}\nanalyses: {ranking: true}\n"),
       "analysis 'ranking' is not part of a trait-pairs audit"},
  };
  for (const Case& c : cases) expect_check_matches_run(c, dir);
}

TEST(AuditCheck, GeoDiversityFaultsGiveTheRunsErrors) {
  const fs::path dir = case_dir();
  const auto spec = [&](const std::string& real, const std::string& generated,
                        const std::string& objects = "") {
    return "kind: geo-diversity\nreal: {table: '" + example("geo_diversity/real.csv") +
           "', features: '" + example("geo_diversity/real.npy") + "'" + real +
           "}\ngenerated: {features: '" + example("geo_diversity/generated.npy") + "'" + generated +
           "}\nobjects: {table: '" + example("geo_diversity/objects.csv") + "', embeddings: '" +
           example("geo_diversity/objects.npy") + "'" + objects +
           "}\nanalyses: {region: {bootstrap: 0}, object_region: false, consistency: "
           "{bootstrap: 0}, distribution: false}\n";
  };
  const std::string table = ", table: '" + example("geo_diversity/generated.csv") + "'";
  const std::string clip = ", clip: '" + example("geo_diversity/generated_clip.npy") + "'";
  const std::vector<Case> cases = {
      {"missing_region_column", spec(", region: regn", table + clip), "no column 'regn'"},
      {"missing_clip_file", spec("", table + ", clip: '" + (dir / "absent.npy").string() + "'"),
       "absent.npy"},
      {"generated_one_row_short",
       spec("", ", table: '" +
                    short_copy(example("geo_diversity/generated.csv"), dir, "short.csv") + "'" +
                    clip),
       "feature rows; expected one row per generated image"},
      {"missing_object_text_column", spec("", table + clip, ", object: nope"), "no column 'nope'"},
  };
  for (const Case& c : cases) expect_check_matches_run(c, dir);
}

TEST(AuditCheck, LvlmCounterfactualFaultsGiveTheRunsErrors) {
  const fs::path dir = case_dir();
  const std::string generations = example("lvlm_counterfactual/generations.jsonl");
  const auto spec = [&](const std::string& group, const std::string& lexicon) {
    return "kind: lvlm-counterfactual\ngenerations: '" + generations +
           "'\ncolumns: {set_key: [filename, rank, seed], group: " + group +
           ", scores: [toxicity], text: text}\nanalyses: {maxgap: {bootstrap: 0}, pmi: false, "
           "responses: false, group_tests: false, lexicon: {file: '" +
           lexicon + "'}}\n";
  };
  const std::string lexicon = example("lvlm_counterfactual/lexicon.csv");
  const std::vector<Case> cases = {
      {"missing_group_column", spec("[race, gendr]", lexicon), "gendr"},
      {"missing_lexicon", spec("[race, gender]", (dir / "absent.csv").string()), "absent.csv"},
  };
  for (const Case& c : cases) expect_check_matches_run(c, dir);
}

TEST(AuditCheck, VisualStereotypesFaultsGiveTheRunsErrors) {
  const fs::path dir = case_dir();
  const auto spec = [&](const std::string& sections) {
    return "kind: visual-stereotypes\nseegull: '" + example("visual_stereotypes/seegull.csv") +
           "'\nvisual_attributes: '" + example("visual_stereotypes/visual_attr.csv") + "'\n" +
           sections;
  };
  const std::string npy = example("visual_stereotypes/pull.npy");
  const std::string pull_csv = example("visual_stereotypes/pull.csv");
  const std::vector<Case> cases = {
      {"missing_captions", spec("captions: {table: '" + (dir / "absent.csv").string() + "'}\n"),
       "absent.csv"},
      {"missing_set_column",
       spec("pull: {table: '" + pull_csv + "', embeddings: '" + npy +
            "', set: sett}\nanalyses: {pull: {permutations: 1}}\n"),
       "no column 'sett'"},
      {"pull_table_one_row_short",
       spec("pull: {table: '" + short_copy(pull_csv, dir, "short.csv") + "', embeddings: '" + npy +
            "'}\n"),
       "row i of the table must be embedding row i"},
  };
  for (const Case& c : cases) expect_check_matches_run(c, dir);
}

}  // namespace in_audit_check_test
}  // namespace
