// End-to-end tests of `vlbias audit SPEC.yaml --out RUN_DIR`: the real binary on
// synthetic CausalFace-like studies (dual_encoder_study.h) with a planted effect (which
// the tests must find, with the right sign) or none (where they must find nothing),
// determinism across thread counts, bad specs, and the shape of the outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audits/dual_encoder_study.h"
#include "cli/cli_util.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_audit_e2e_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::read_file;
using cli_util::run_cli;
using synthetic::StudyKind;
using synthetic::StudyOptions;
using synthetic::WrittenStudy;

std::string quote(const fs::path& p) {
  return fmt::format("'{}'", p.string());
}

CliResult run_audit_cli(const fs::path& spec, const fs::path& out, const std::string& extra = "") {
  return run_cli(extra + " --quiet audit " + quote(spec) + " --out " + quote(out));
}

Table table_of(const fs::path& run, const std::string& name) {
  return read_table((run / "tables" / (name + ".csv")).string());
}

void expect_columns(const Table& t, const std::vector<std::string>& expected) {
  for (const std::string& c : expected) {
    EXPECT_TRUE(t.find(c).has_value()) << t.source << " lacks column " << c;
  }
}

// Rows whose cells equal every (column, text) given.
std::vector<std::size_t> rows_where(const Table& t,
                                    const std::vector<std::pair<std::string, std::string>>& eq) {
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < t.rows; ++r) {
    bool match = true;
    for (const auto& [c, v] : eq) match = match && t.column(c).text(r) == v;
    if (match) rows.push_back(r);
  }
  return rows;
}

double cell(const Table& t, const std::string& column, std::size_t row) {
  return t.numeric(column, /*allow_missing=*/true)[row];
}

// Small social-perception study: 10 seeds x 6 groups x 18 images = 1080 images.
StudyOptions social_options(double effect) {
  StudyOptions o;
  o.kind = StudyKind::SocialPerception;
  o.seeds = 10;
  o.dim = 48;
  o.effect = effect;
  o.planted_group = {{"race", "Black"}};
  o.seed = 11;
  o.ordinal_effect = 0.6;
  // 36 SC-WEAT tests (race: 3 pairs, gender: 1 pair, x 8 dimensions + "all"): the
  // smallest Monte Carlo p is 1 / 5001, so Holm can reach 36 / 5001 < 0.01.
  o.permutations = 5000;
  o.bootstrap = 200;
  o.absdiff_pairs = 300;
  return o;
}

StudyOptions trait_options(double effect) {
  StudyOptions o;
  o.kind = StudyKind::TraitPairs;
  o.seeds = 10;
  o.dim = 48;
  o.effect = effect;
  o.planted_group = {{"gender", "female"}};
  o.seed = 12;
  o.permutations = 1000;
  o.bootstrap = 200;
  return o;
}

TEST(AuditEndToEnd, SocialPerceptionFindsPlantedCompetenceShift) {
  const fs::path dir = cli_util::temp_dir();
  const WrittenStudy s = synthetic::write_synthetic_study(dir / "study", social_options(0.3));
  const fs::path run = dir / "run";
  const CliResult r = run_audit_cli(s.spec, run);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // SC-WEAT: groups are in sorted key order (Asian < Black < White), effect_size is
  // A minus B, so Black's higher competence association is negative against Asian
  // and positive against White.
  const Table sc = table_of(run, "scweat");
  const auto ab = rows_where(sc, {{"grouping", "race"},
                                  {"group_a", "Asian"},
                                  {"group_b", "Black"},
                                  {"dimension", "competence"}});
  const auto bw = rows_where(sc, {{"grouping", "race"},
                                  {"group_a", "Black"},
                                  {"group_b", "White"},
                                  {"dimension", "competence"}});
  ASSERT_EQ(ab.size(), 1u);
  ASSERT_EQ(bw.size(), 1u);
  EXPECT_LT(cell(sc, "p_holm", ab[0]), 0.01);
  EXPECT_LT(cell(sc, "effect_size", ab[0]), 0.0);
  EXPECT_LT(cell(sc, "p_holm", bw[0]), 0.01);
  EXPECT_GT(cell(sc, "effect_size", bw[0]), 0.0);
  // Asian vs White share the null: not significant on competence.
  const auto aw = rows_where(sc, {{"grouping", "race"},
                                  {"group_a", "Asian"},
                                  {"group_b", "White"},
                                  {"dimension", "competence"}});
  ASSERT_EQ(aw.size(), 1u);
  EXPECT_GT(cell(sc, "p_holm", aw[0]), 0.05);

  // Association by race x gender: every Black group has a higher competence
  // Delta cos mean than every other group.
  const Table ag = table_of(run, "association_groups");
  double min_black = 1e9, max_other = -1e9;
  std::size_t seen = 0;
  for (std::size_t row : rows_where(ag, {{"dimension", "competence"}})) {
    const double v = cell(ag, "delta_cos_mean", row);
    ASSERT_TRUE(std::isfinite(v));
    if (ag.column("race").text(row) == "Black") {
      min_black = std::min(min_black, v);
    } else {
      max_other = std::max(max_other, v);
    }
    ++seen;
  }
  EXPECT_EQ(seen, 6u);
  EXPECT_GT(min_black, max_other);
  fs::remove_all(dir);
}

TEST(AuditEndToEnd, SocialPerceptionNullFindsNothingAndWritesEveryTable) {
  const fs::path dir = cli_util::temp_dir();
  const StudyOptions o = social_options(0.0);
  const WrittenStudy s = synthetic::write_synthetic_study(dir / "study", o);
  const fs::path run = dir / "run";
  const CliResult r = run_audit_cli(s.spec, run);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const Table sc = table_of(run, "scweat");
  const nlohmann::json results = nlohmann::json::parse(read_file(run / "results.json"));
  const std::size_t dims = results.at("dimensions").size();
  EXPECT_EQ(dims, 8u);  // warmth, competence, agency+/-, belief+/-, communion+/-
  EXPECT_EQ(sc.rows, (3 + 1) * (dims + 1));
  for (std::size_t row = 0; row < sc.rows; ++row) {
    EXPECT_GE(cell(sc, "p_holm", row), 0.05)
        << sc.column("group_a").text(row) << " vs " << sc.column("group_b").text(row) << " on "
        << sc.column("dimension").text(row);
  }
  expect_columns(
      sc, {"grouping", "group_a", "group_b", "dimension", "targets", "n_a", "n_b", "effect_size",
           "mean_difference", "p_value", "p_holm", "p_bh", "method", "permutations", "small"});

  const Table ag = table_of(run, "association_groups");
  expect_columns(ag, {"race", "gender", "dimension", "n", "cos_mean", "delta_cos_mean",
                      "delta_cos_sd", "ci_lower", "ci_upper", "small"});
  EXPECT_EQ(ag.rows, 6 * dims);
  const Table ai = table_of(run, "association_images");
  EXPECT_EQ(ai.rows, s.images);
  expect_columns(ai, {"id", "race", "gender", "age", "cos_competence", "delta_cos_competence"});

  const Table mk = table_of(run, "markedness");
  expect_columns(mk, {"attribute", "level", "word", "n", "marked", "percent", "ci_lower",
                      "ci_upper", "small"});
  EXPECT_GT(mk.rows, 0u);
  std::set<std::string> attributes;
  for (std::size_t row = 0; row < mk.rows; ++row)
    attributes.insert(mk.column("attribute").text(row));
  EXPECT_EQ(attributes, (std::set<std::string>{"race", "gender"}));

  const Table skew = table_of(run, "ranking_skew");
  expect_columns(skew, {"dimension", "attribute", "class", "k", "topk_count", "desired", "skew"});
  EXPECT_EQ(skew.rows, dims * (3 + 2));  // per dimension: 3 race and 2 gender classes
  const Table ndkl = table_of(run, "ranking_ndkl");
  expect_columns(ndkl, {"dimension", "attribute", "n", "max_skew", "ndkl"});
  EXPECT_EQ(ndkl.rows, dims * 2);

  const Table ad = table_of(run, "absdiff");
  expect_columns(ad, {"factor", "dimension", "n", "valid_pairs", "enumerated", "mean", "sd",
                      "median", "q25", "q75"});
  std::set<std::string> factors;
  for (std::size_t row = 0; row < ad.rows; ++row) factors.insert(ad.column("factor").text(row));
  EXPECT_EQ(factors, (std::set<std::string>{"age", "smiling", "lighting", "pose", "seed", "race",
                                            "gender"}));
  EXPECT_EQ(ad.rows, 7 * (dims + 1));  // factor x (dimension and "pooled")
  const Table adt = table_of(run, "absdiff_tests");
  expect_columns(adt, {"dimension", "factor_a", "factor_b", "statistic", "p_value", "p_holm",
                       "p_bh", "effect_size"});

  // Trends: one fit per group (6) x dimension x ordinal factor (age, smiling).
  const Table tr = table_of(run, "trends");
  expect_columns(tr, {"race", "gender", "x", "dimension", "levels", "n", "b0", "b1", "b2", "se_b0",
                      "se_b1", "se_b2", "r_squared"});
  EXPECT_EQ(tr.rows, 6 * dims * 2);
  // The generator adds an age slope along the first warmth word and a smiling slope
  // along the last communion- word: the fitted change from the lowest to the highest
  // level is positive in every group.
  const auto fitted_change = [&](std::size_t row, double lo, double hi) {
    return cell(tr, "b1", row) * (hi - lo) + cell(tr, "b2", row) * (hi * hi - lo * lo);
  };
  const auto age_rows = rows_where(tr, {{"x", "age"}, {"dimension", "warmth"}});
  ASSERT_EQ(age_rows.size(), 6u);
  for (std::size_t row : age_rows) EXPECT_GT(fitted_change(row, 1, 10), 0.0) << row;
  const auto smile_rows = rows_where(tr, {{"x", "smiling"}, {"dimension", "communion-"}});
  ASSERT_EQ(smile_rows.size(), 6u);
  for (std::size_t row : smile_rows) EXPECT_GT(fitted_change(row, 1, 5), 0.0) << row;
  // fit_to: means, so n is the number of level means.
  for (std::size_t row = 0; row < tr.rows; ++row) {
    const double levels = tr.column("x").text(row) == "age" ? 10.0 : 5.0;
    EXPECT_EQ(cell(tr, "levels", row), levels);
    EXPECT_EQ(cell(tr, "n", row), levels);
  }

  const Table el = table_of(run, "ellipses");
  expect_columns(el, {"race", "gender", "x_dimension", "y_dimension", "n", "center_x", "center_y",
                      "semi_major", "semi_minor", "angle_radians"});
  EXPECT_GT(el.rows, 0u);
  fs::remove_all(dir);
}

TEST(AuditEndToEnd, TraitPairsFindsPlantedSmartShiftByGender) {
  const fs::path dir = cli_util::temp_dir();
  const WrittenStudy s = synthetic::write_synthetic_study(dir / "study", trait_options(0.3));
  const fs::path run = dir / "run";
  const CliResult r = run_audit_cli(s.spec, run);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const Table tests = table_of(run, "confidence_tests");
  expect_columns(tests, {"pair", "factor", "within", "within_level", "test", "groups", "statistic",
                         "df1", "df2", "p_value", "p_holm", "p_bh", "effect_size", "effect_name"});
  const auto gender_rows = rows_where(tests, {{"pair", "smart/dumb"}, {"factor", "gender"}});
  ASSERT_EQ(gender_rows.size(), 3u);  // one per race
  std::set<std::string> races;
  for (std::size_t row : gender_rows) {
    EXPECT_EQ(tests.column("within").text(row), "race");
    races.insert(tests.column("within_level").text(row));
    EXPECT_LT(cell(tests, "p_holm", row), 0.01) << tests.column("within_level").text(row);
  }
  EXPECT_EQ(races, (std::set<std::string>{"Asian", "Black", "White"}));

  // Women are more confidently "smart" than men within every race.
  const Table groups = table_of(run, "confidence_groups");
  for (const char* race : {"Asian", "Black", "White"}) {
    const auto f =
        rows_where(groups, {{"race", race}, {"gender", "female"}, {"pair", "smart/dumb"}});
    const auto m = rows_where(groups, {{"race", race}, {"gender", "male"}, {"pair", "smart/dumb"}});
    ASSERT_EQ(f.size(), 1u);
    ASSERT_EQ(m.size(), 1u);
    EXPECT_GT(cell(groups, "mean", f[0]), cell(groups, "mean", m[0])) << race;
  }
  fs::remove_all(dir);
}

TEST(AuditEndToEnd, TraitPairsNullFindsNothing) {
  const fs::path dir = cli_util::temp_dir();
  const WrittenStudy s = synthetic::write_synthetic_study(dir / "study", trait_options(0.0));
  const fs::path run = dir / "run";
  const CliResult r = run_audit_cli(s.spec, run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Table tests = table_of(run, "confidence_tests");
  // 6 pairs x (ANOVA across race in 2 genders + gender test in 3 races).
  EXPECT_EQ(tests.rows, 6u * 5u);
  for (std::size_t row = 0; row < tests.rows; ++row) {
    EXPECT_GE(cell(tests, "p_holm", row), 0.05)
        << tests.column("pair").text(row) << " " << tests.column("factor").text(row);
  }
  const Table sc = table_of(run, "scweat");
  for (std::size_t row = 0; row < sc.rows; ++row) EXPECT_GE(cell(sc, "p_holm", row), 0.05);
  const nlohmann::json results = nlohmann::json::parse(read_file(run / "results.json"));
  EXPECT_EQ(results.at("kind"), "trait-pairs");
  EXPECT_TRUE(results.at("analyses").contains("confidence"));
  EXPECT_TRUE(results.at("analyses").contains("scweat"));
  fs::remove_all(dir);
}

// results.json without its timestamp line.
std::string without_timestamp(const std::string& json) {
  std::string out;
  std::size_t start = 0;
  while (start < json.size()) {
    std::size_t end = json.find('\n', start);
    if (end == std::string::npos) end = json.size();
    const std::string line = json.substr(start, end - start);
    if (line.find("\"created_utc\"") == std::string::npos) out += line + "\n";
    start = end + 1;
  }
  return out;
}

void expect_same_run(const fs::path& a, const fs::path& b) {
  const std::string ja = without_timestamp(read_file(a / "results.json"));
  ASSERT_FALSE(ja.empty());
  EXPECT_EQ(ja, without_timestamp(read_file(b / "results.json")));
  std::set<std::string> names_a, names_b;
  for (const auto& e : fs::directory_iterator(a / "tables")) names_a.insert(e.path().filename());
  for (const auto& e : fs::directory_iterator(b / "tables")) names_b.insert(e.path().filename());
  EXPECT_EQ(names_a, names_b);
  EXPECT_GE(names_a.size(), 5u);
  for (const std::string& n : names_a) {
    EXPECT_EQ(read_file(a / "tables" / n), read_file(b / "tables" / n)) << n;
  }
}

TEST(AuditEndToEnd, ResultsDoNotDependOnThreadCount) {
  const fs::path dir = cli_util::temp_dir();
  for (StudyOptions o : {social_options(0.2), trait_options(0.2)}) {
    o.seeds = 4;
    o.permutations = 500;
    const std::string name = o.kind == StudyKind::SocialPerception ? "social" : "trait";
    const WrittenStudy s = synthetic::write_synthetic_study(dir / name, o);
    const fs::path one = dir / (name + "_t1"), two = dir / (name + "_t2");
    const CliResult r1 = run_audit_cli(s.spec, one, "--threads 1");
    ASSERT_EQ(r1.exit_code, 0) << r1.err;
    const CliResult r2 = run_audit_cli(s.spec, two, "--threads 2");
    ASSERT_EQ(r2.exit_code, 0) << r2.err;
    SCOPED_TRACE(name);
    expect_same_run(one, two);
  }
  fs::remove_all(dir);
}

// Writes `yaml` as a spec next to the study's files.
fs::path write_spec(const WrittenStudy& s, const std::string& name, const std::string& yaml) {
  const fs::path p = s.dir / name;
  std::ofstream(p, std::ios::binary) << yaml;
  return p;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(AuditEndToEnd, BadSpecsExitTwoNamingTheProblem) {
  const fs::path dir = cli_util::temp_dir();
  StudyOptions o = social_options(0.0);
  o.seeds = 2;
  o.permutations = 100;
  const WrittenStudy s = synthetic::write_synthetic_study(dir / "study", o);
  const std::string yaml = synthetic::synthetic_spec_yaml(o);

  const fs::path missing = write_spec(
      s, "missing.yaml", replaced(yaml, "embeddings: images.npy", "embeddings: nowhere.npy"));
  CliResult r = run_audit_cli(missing, dir / "run1");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("nowhere.npy"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "run1" / "results.json"));

  const fs::path no_column = write_spec(
      s, "column.yaml",
      replaced(yaml, "categorical: [lighting, pose, seed]", "categorical: [lighting, pose, hair]"));
  r = run_audit_cli(no_column, dir / "run2");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("hair"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "run2" / "results.json"));

  const fs::path unknown =
      write_spec(s, "unknown.yaml", replaced(yaml, "  scweat: {", "  scwaet: {"));
  r = run_audit_cli(unknown, dir / "run3");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("scwaet"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "run3" / "results.json"));

  const fs::path no_groups_column =
      write_spec(s, "groups.yaml", replaced(yaml, "groups: [race, gender]", "groups: [race, sex]"));
  r = run_audit_cli(no_groups_column, dir / "run4");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("sex"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

TEST(AuditEndToEnd, ResultsJsonListsTablesAndHashesInputs) {
  const fs::path dir = cli_util::temp_dir();
  StudyOptions o = social_options(0.2);
  o.seeds = 3;
  o.permutations = 200;
  const WrittenStudy s = synthetic::write_synthetic_study(dir / "study", o);
  const fs::path run = dir / "run";
  const CliResult r = run_audit_cli(s.spec, run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(read_file(run / "results.json"));
  EXPECT_EQ(j.at("kind"), "social-perception");
  EXPECT_EQ(j.at("images"), s.images);
  EXPECT_EQ(j.at("embedding_dim"), o.dim);
  EXPECT_EQ(j.at("prompts"), s.prompts);
  std::set<std::string> analyses;
  for (const auto& [k, v] : j.at("analyses").items()) analyses.insert(k);
  EXPECT_EQ(analyses, (std::set<std::string>{"association", "scweat", "markedness", "ranking",
                                             "absdiff", "trends", "ellipses"}));

  // Every listed table exists and every written table is listed, except the report's chart
  // tables (fig_*.csv, written with report.html and checked by tests/cli/report_test.cpp).
  EXPECT_TRUE(fs::exists(run / "report.html"));
  std::set<std::string> listed, written;
  for (const auto& t : j.at("tables")) {
    listed.insert(t.get<std::string>());
    EXPECT_TRUE(fs::exists(run / t.get<std::string>())) << t;
  }
  for (const auto& e : fs::directory_iterator(run / "tables")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("fig_", 0) != 0) written.insert(fmt::format("tables/{}", name));
  }
  EXPECT_EQ(listed, written);
  for (const char* name :
       {"association_images", "association_groups", "scweat", "markedness", "ranking_skew",
        "ranking_ndkl", "absdiff", "absdiff_tests", "trends", "ellipses"}) {
    EXPECT_TRUE(listed.count(fmt::format("tables/{}.csv", name))) << name;
  }

  // Provenance: the spec and the four input files, each with its SHA-256.
  const nlohmann::json& p = j.at("provenance");
  EXPECT_EQ(p.at("command"), "audit");
  EXPECT_TRUE(p.contains("created_utc"));
  std::map<std::string, std::string> hashes;
  for (const auto& in : p.at("inputs")) {
    hashes[fs::path(in.at("path").get<std::string>()).filename().string()] =
        in.at("sha256").get<std::string>();
  }
  for (const fs::path& f : {s.spec, s.images_csv, s.images_npy, s.prompts_csv, s.prompts_npy}) {
    ASSERT_TRUE(hashes.count(f.filename().string())) << f;
    EXPECT_EQ(hashes[f.filename().string()], sha256_file(f.string())) << f;
  }
  EXPECT_EQ(hashes.size(), 5u);
  fs::remove_all(dir);
}

}  // namespace in_audit_e2e_test
}  // namespace
}  // namespace vlbias
