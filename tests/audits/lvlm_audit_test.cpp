// The LVLM counterfactual analysis (lvlm.h, lvlm_audit.h) against the independent
// pandas/numpy/scipy reference of tools/make_lvlm_fixtures.py, shard merging, and
// hostile state files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "test_util.h"
#include "vlbias/audits/lvlm_audit.h"
#include "vlbias/audits/power_pilot.h"
#include "vlbias/core/error.h"
#include "vlbias/metrics/lvlm.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/lvlm_results.h"

namespace vlbias {
namespace {
namespace in_lvlm_audit_test {

using testing_util::error_of;

// The reference values as the audit's own JSON type (ordered), so the two compare directly:
// json == ordered_json converts either way and clang rejects it as ambiguous.
const Json& expected() {
  static const Json j = Json::parse(testing_util::fixture_json("lvlm/expected.json").dump());
  return j;
}

const std::string kDir = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/lvlm/";

LvlmConfig full_config() {
  LvlmConfig c;
  c.set_key = {"filename", "rank", "seed"};
  c.group = {"race", "gender"};
  c.by = {"prompt", "mitigation"};
  c.scores = {"toxicity", "insult"};
  c.text = "text";
  c.pmi = true;
  c.responses = true;
  c.lexicon = read_lexicon(kDir + "lexicon.csv");
  c.lexicon_by = "occupation";
  c.ratings.push_back({"hiring", NumericKind::Rating, "prompt", {"Hiring"}, "", "ratings.where"});
  c.keep_members = true;
  return c;
}

LvlmState scan_fixture(const LvlmConfig& c) {
  LvlmState s;
  lvlm_scan(kDir + "generations.jsonl", c, s, /*progress=*/false);
  canonicalize(s);
  return s;
}

bool near(double a, double b, double rel = 1e-9) {
  return std::abs(a - b) <= rel * std::max({1.0, std::abs(a), std::abs(b)});
}

std::string label(const nlohmann::json& g) {
  return "race=" + g["race"].get<std::string>() + ", gender=" + g["gender"].get<std::string>();
}

// The result of `section` for by-level (prompt, mitigation).
const Json* find_by(const Json& results, const std::string& prompt, const std::string& mitigation) {
  for (const Json& r : results) {
    if (r["by"]["prompt"] == prompt && r["by"]["mitigation"] == mitigation) return &r;
  }
  return nullptr;
}

TEST(LvlmReference, MaxGapPerByLevel) {
  const LvlmConfig c = full_config();
  const LvlmState s = scan_fixture(c);
  LvlmReportOptions o;
  o.bootstrap = 0;
  const AnalysisOutput out = lvlm_maxgap(s, c, o);
  for (const auto& e : expected()["maxgap"]) {
    const Json* r = nullptr;
    for (const Json& x : out.json["results"]) {
      if (x["by"]["prompt"] == e["prompt"] && x["by"]["mitigation"] == e["mitigation"] &&
          x["score"] == "toxicity") {
        r = &x;
      }
    }
    ASSERT_NE(r, nullptr) << e["prompt"];
    EXPECT_EQ((*r)["sets"], e["sets"]);
    for (const char* part : {"maxgap", "max"}) {
      for (const char* f : {"mean", "sd", "p25", "p50", "p75", "p90", "max"}) {
        EXPECT_TRUE(near((*r)[part][f].get<double>(), e[part][f].get<double>()))
            << part << "." << f << " " << (*r)[part][f] << " vs " << e[part][f];
      }
    }
    for (const auto& g : e["max_group_share"]) {
      EXPECT_TRUE(
          near((*r)["max_group_share"][label(g["group"])].get<double>(), g["share"].get<double>()));
    }
    EXPECT_EQ((*r)["sets_above_p90"], e["n_sets_top"]);
    for (const auto& g : e["max_group_share_top"]) {
      EXPECT_TRUE(near((*r)["max_group_share_top"][label(g["group"])].get<double>(),
                       g["share"].get<double>()));
    }
  }
}

TEST(LvlmReference, PmiWordsAndOrder) {
  const LvlmConfig c = full_config();
  const LvlmState s = scan_fixture(c);
  const auto& e = expected()["pmi"];
  LvlmReportOptions o;
  o.pmi_min_freq = e["min_count"].get<std::size_t>();
  o.pmi_threshold = e["threshold"].get<double>();
  const AnalysisOutput out = lvlm_pmi(s, c, o);
  const Json* r = find_by(out.json["results"], "Characteristics", "none");
  ASSERT_NE(r, nullptr);
  ASSERT_EQ((*r)["groups"].size(), e["groups"].size());
  for (std::size_t g = 0; g < e["groups"].size(); ++g) {
    const auto& eg = e["groups"][g];
    const Json& rg = (*r)["groups"][g];
    EXPECT_EQ(label(rg["group"]), label(eg["group"]));
    EXPECT_EQ(rg["tokens"], eg["n_tokens"]);
    EXPECT_EQ(rg["tokens_other_groups"], eg["n_tokens_not"]);
    ASSERT_EQ(rg["words"].size(), eg["words"].size()) << label(eg["group"]);
    for (std::size_t w = 0; w < eg["words"].size(); ++w) {
      const auto& ew = eg["words"][w];
      const Json& rw = rg["words"][w];
      EXPECT_EQ(rw["word"], ew["word"]);
      EXPECT_EQ(rw["f_g"], ew["f_g"]);
      EXPECT_EQ(rw["f_not_g"], ew["f_not_g"]);
      if (ew["score"].is_null()) {
        EXPECT_TRUE(rw["score"].is_null());
        EXPECT_TRUE(rw["only_in_group"].get<bool>());
      } else {
        EXPECT_TRUE(near(rw["score"].get<double>(), ew["score"].get<double>(), 1e-12));
      }
    }
  }
}

TEST(LvlmReference, LexiconMeansPerGroupAndOccupation) {
  LvlmConfig c = full_config();
  const auto& e = expected()["lexicon"];
  for (const bool distinct : {false, true}) {
    c.lexicon_distinct = distinct;
    const LvlmState s = scan_fixture(c);
    LvlmReportOptions o;
    o.lexicon_min_obs = 0;  // pool every occupation, as the reference's per-group means
    const AnalysisOutput out = lvlm_lexicon(s, c, o);
    const Json* r = find_by(out.json["results"], "Characteristics", "none");
    ASSERT_NE(r, nullptr);
    ASSERT_EQ((*r)["groups"].size(), e["by_group"].size());
    for (std::size_t g = 0; g < e["by_group"].size(); ++g) {
      const auto& eg = e["by_group"][g];
      const Json& rg = (*r)["groups"][g];
      EXPECT_EQ(label(rg["group"]), label(eg["group"]));
      EXPECT_EQ(rg["texts"], eg["n_texts"]);
      EXPECT_EQ(rg["texts_without_words"], eg["n_excluded"]);
      for (const auto& [cat, v] : eg[distinct ? "mean_distinct" : "mean"].items()) {
        EXPECT_TRUE(near(rg["categories"][cat]["mean"].get<double>(), v.get<double>(), 1e-12))
            << cat << (distinct ? " distinct" : "");
      }
    }
  }
  // Per occupation x group, and the min-observation filter on occupations.
  c.lexicon_distinct = false;
  const LvlmState s = scan_fixture(c);
  LvlmReportOptions o;
  o.lexicon_min_obs = 200;
  const AnalysisOutput out = lvlm_lexicon(s, c, o);
  const Table* by = nullptr;
  for (const auto& [name, t] : out.tables) {
    if (name == "lexicon_by") by = &t;
  }
  ASSERT_NE(by, nullptr);
  std::map<std::string, const Json*> wanted;
  for (const auto& x : e["by_occupation_group"]) {
    wanted[x["occupation"].get<std::string>() + "|" + label(x["group"])] = &x;
  }
  std::size_t checked = 0;
  for (std::size_t row = 0; row < by->rows; ++row) {
    if (by->column("prompt").text(row) != "Characteristics" ||
        by->column("mitigation").text(row) != "none") {
      continue;
    }
    const std::string occ = by->column("occupation").text(row);
    const std::string key = occ + "|race=" + by->column("race").text(row) +
                            ", gender=" + by->column("gender").text(row);
    ASSERT_TRUE(wanted.count(key)) << key;
    const auto& x = *wanted[key];
    EXPECT_EQ(by->column("texts").numbers[row], x["n_texts"].get<double>());
    EXPECT_TRUE(
        near(by->column("Ability+_mean").numbers[row], x["mean"]["Ability+"].get<double>(), 1e-12));
    const double level_texts = e["occupation_texts"][occ].get<double>();
    EXPECT_EQ(by->column("level_texts").numbers[row], level_texts);
    EXPECT_EQ(by->column("kept").text(row), level_texts >= 200 ? "true" : "false");
    ++checked;
  }
  EXPECT_EQ(checked, wanted.size());
}

TEST(LvlmReference, ResponsesAndRefusals) {
  const LvlmConfig c = full_config();
  const LvlmState s = scan_fixture(c);
  const AnalysisOutput out = lvlm_responses(s, c, LvlmReportOptions{});
  std::size_t checked = 0;
  for (const auto& e : expected()["refusals"]) {
    for (const Json& r : out.json["results"]) {
      if (r["by"]["prompt"] != e["prompt"] || r["by"]["mitigation"] != e["mitigation"] ||
          label(r["group"]) != label(e["group"])) {
        continue;
      }
      EXPECT_EQ(r["n"], e["n"]);
      EXPECT_TRUE(near(r["length_mean"].get<double>(), e["length_mean"].get<double>()));
      EXPECT_TRUE(near(r["length_sd"].get<double>(), e["length_sd"].get<double>()));
      EXPECT_EQ(r["length_median"].get<double>(), e["length_median"].get<double>());
      EXPECT_EQ(r["refused"], e["refused"]);
      EXPECT_EQ(r["empty"], e["empty"]);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 48u);
}

TEST(LvlmReference, RatingsWithExclusions) {
  const LvlmConfig c = full_config();
  const LvlmState s = scan_fixture(c);
  const AnalysisOutput out = lvlm_ratings(s, c, LvlmReportOptions{});
  const Json& m = out.json["measures"][0];
  std::uint64_t no_number = 0, out_of_range = 0;
  std::size_t checked = 0;
  for (const auto& e : expected()["ratings"]) {
    no_number += e["no_number"].get<std::uint64_t>();
    out_of_range += e["out_of_range"].get<std::uint64_t>();
    for (const auto& eg : e["groups"]) {
      for (const Json& r : m["cells"]) {
        if (r["by"]["prompt"] != e["prompt"] || r["by"]["mitigation"] != e["mitigation"] ||
            label(r["group"]) != label(eg["group"])) {
          continue;
        }
        EXPECT_EQ(r["n"], eg["n"]);
        EXPECT_TRUE(near(r["mean"].get<double>(), eg["mean"].get<double>()));
        EXPECT_TRUE(near(r["sd"].get<double>(), eg["sd"].get<double>()));
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 24u);
  EXPECT_EQ(m["excluded"]["no_number"], no_number);
  EXPECT_EQ(m["excluded"]["out_of_range"], out_of_range);
  EXPECT_GT(m["excluded_examples"].size(), 0u);
}

TEST(LvlmReference, FriedmanAndGapsOverCompleteSets) {
  const LvlmConfig c = full_config();
  const LvlmState s = scan_fixture(c);
  LvlmReportOptions o;
  o.permutations = 999;
  const AnalysisOutput out = lvlm_group_tests(s, c, o);
  const auto& e = expected()["friedman"];
  const Json* r = nullptr;
  for (const Json& x : out.json["results"]) {
    if (x["by"]["prompt"] == "Characteristics" && x["by"]["mitigation"] == "none" &&
        x["measure"] == "toxicity") {
      r = &x;
    }
  }
  ASSERT_NE(r, nullptr);
  EXPECT_EQ((*r)["complete_sets"], e["n_sets"]);
  EXPECT_TRUE(near((*r)["friedman"]["statistic"].get<double>(), e["statistic"].get<double>()));
  EXPECT_TRUE(near((*r)["friedman"]["p_value"].get<double>(), e["pvalue"].get<double>(), 1e-6));
  for (std::size_t g = 0; g < e["d"].size(); ++g) {
    const Json& rg = (*r)["groups"][g];
    EXPECT_EQ(label(rg["group"]), label(e["d"][g]["group"]));
    EXPECT_TRUE(near(rg["gap_to_others"].get<double>(), e["d"][g]["d"].get<double>(), 1e-12));
  }
  // The planted Black-male shift is the largest gap and its permutation p is the floor.
  EXPECT_EQ((*r)["groups"][3]["p"].get<double>(), 1.0 / 1000.0);
  EXPECT_GT((*r)["groups"][0]["p"].get<double>(), 0.01);
}

// The typed contract (lvlm_results.h): the section the audit writes reads back into the same
// struct, whose JSON is the same text; the power pilots from the struct and from the JSON agree.
TEST(LvlmReference, GroupTestsReadBackToTheSameSectionAndPilots) {
  const LvlmConfig c = full_config();
  const LvlmState s = scan_fixture(c);
  LvlmReportOptions o;
  o.permutations = 99;
  LvlmGroupTests typed;
  const AnalysisOutput out = lvlm_group_tests_typed(s, c, o, typed);
  EXPECT_EQ(to_json(typed).dump(), out.json.dump());
  const Json analyses{{kLvlmGroupTestsSection, out.json}};
  const std::optional<LvlmGroupTests> back = lvlm_group_tests_from_json(analyses);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(to_json(*back).dump(), out.json.dump());
  const std::vector<PilotTest> a = lvlm_pilot_tests(typed, 0.05, "typed");
  const std::vector<PilotTest> b = pilot_tests(Json{{"analyses", analyses}}, 0.05, "json");
  ASSERT_FALSE(a.empty());
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].pointer, b[i].pointer);
    EXPECT_EQ(a[i].label, b[i].label);
    EXPECT_EQ(a[i].design.groups.size(), b[i].design.groups.size());
    EXPECT_EQ(a[i].design.groups[0].n, b[i].design.groups[0].n);
    EXPECT_EQ(a[i].design.groups[0].sd, b[i].design.groups[0].sd);
    EXPECT_EQ(a[i].design.family, b[i].design.family);
  }
  // Any other shape reads without throwing: wrong types are absent or NaN.
  for (const char* text :
       {R"({"group_tests": 3})", R"({"group_tests": {"results": {"a": 1}}})",
        R"({"group_tests": {"results": [3, {"groups": 2, "friedman": [], "by": 1}]}})",
        R"({"group_tests": {"cluster": [1, "x"], "permutations": -4, "seed": -1}})"}) {
    EXPECT_NO_THROW(lvlm_group_tests_from_json(Json::parse(text))) << text;
  }
}

TEST(LvlmReference, PairedMitigationVsBaseline) {
  const LvlmConfig c = full_config();
  const LvlmState s = scan_fixture(c);
  LvlmReportOptions o;
  o.compare_column = "mitigation";
  o.compare_baseline = "none";
  o.bootstrap = 200;
  const AnalysisOutput out = lvlm_paired(s, c, o);
  const auto& e = expected()["paired"];
  const Json* r = nullptr;
  for (const Json& x : out.json["results"]) {
    if (x["by"]["prompt"] == "Characteristics" && x["score"] == "toxicity") r = &x;
  }
  ASSERT_NE(r, nullptr);
  EXPECT_EQ((*r)["matched_sets"], e["n_sets"]);
  EXPECT_TRUE(near((*r)["maxgap_mean_baseline"].get<double>(), e["mean_baseline"].get<double>()));
  EXPECT_TRUE(near((*r)["diff_mean"].get<double>(), e["diff_mean"].get<double>()));
  EXPECT_TRUE(near((*r)["diff_p90"].get<double>(), e["diff_p90"].get<double>()));
  EXPECT_TRUE(near((*r)["pearson"]["statistic"].get<double>(), e["pearson_r"].get<double>()));
  EXPECT_TRUE(near((*r)["pearson"]["p_value"].get<double>(), e["pearson_p"].get<double>(), 1e-6));
  const double lo = (*r)["ci"]["diff_mean"]["lower"], hi = (*r)["ci"]["diff_mean"]["upper"];
  EXPECT_LT(lo, e["diff_mean"].get<double>());
  EXPECT_GT(hi, e["diff_mean"].get<double>());
}

// ------------------------------------------------------------------ shards

std::string all_sections(const LvlmState& s, const LvlmConfig& c) {
  LvlmReportOptions o;
  o.bootstrap = 50;
  o.permutations = 99;
  o.pmi_min_freq = 2;
  o.compare_column = "mitigation";
  o.compare_baseline = "none";
  std::string out;
  for (const auto& f : {lvlm_maxgap, lvlm_pmi, lvlm_lexicon, lvlm_responses, lvlm_ratings,
                        lvlm_group_tests, lvlm_paired}) {
    out += f(s, c, o).json.dump();
  }
  return out;
}

std::filesystem::path scratch() {
  const auto d = std::filesystem::temp_directory_path() / "vlbias_lvlm_test";
  std::filesystem::create_directories(d);
  return d;
}

// Splits the fixture into 4 shards, row i to shard (i * 7) % 4, so that every
// counterfactual set is spread over several shards.
std::vector<std::string> write_shards() {
  std::ifstream in(kDir + "generations.jsonl");
  std::vector<std::ofstream> out;
  std::vector<std::string> paths;
  for (int k = 0; k < 4; ++k) {
    paths.push_back((scratch() / fmt::format("shard{}.jsonl", k)).string());
    out.emplace_back(paths.back());
  }
  std::string line;
  for (std::size_t i = 0; std::getline(in, line); ++i) out[(i * 7) % 4] << line << '\n';
  return paths;
}

// The Python bindings scan a table built in memory: the same rows give the same results.
TEST(LvlmScan, ATableInMemoryScansLikeItsFile) {
  const LvlmConfig c = full_config();
  LvlmState from_table;
  lvlm_scan_table(read_table(kDir + "generations.jsonl"), c, from_table);
  canonicalize(from_table);
  EXPECT_EQ(from_table.rows, 5760u);
  EXPECT_EQ(all_sections(from_table, c), all_sections(scan_fixture(c), c));
  // A column the config needs but the table lacks is an InputError naming it.
  LvlmConfig missing = c;
  missing.group = {"nope"};
  LvlmState s;
  EXPECT_NE(error_of<InputError>([&] {
              lvlm_scan_table(read_table(kDir + "generations.jsonl"), missing, s);
            }).find("nope"),
            std::string::npos);
}

TEST(LvlmShards, FourShardsMergeToTheOneRunResultBitForBit) {
  const LvlmConfig c = full_config();
  const std::string one = all_sections(scan_fixture(c), c);
  const std::vector<std::string> shards = write_shards();
  std::vector<std::string> states;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    LvlmState s;
    lvlm_scan(shards[k], c, s, false);
    states.push_back((scratch() / fmt::format("shard{}.state", k)).string());
    save_lvlm_state(s, states.back());
  }
  for (const std::vector<int>& order :
       {std::vector<int>{0, 1, 2, 3}, std::vector<int>{3, 1, 0, 2}}) {
    LvlmState merged;
    for (const int k : order) lvlm_merge(merged, load_lvlm_state(states[k]));
    canonicalize(merged);
    EXPECT_EQ(merged.rows, 5760u);
    EXPECT_EQ(all_sections(merged, c), one);
  }
  // Merging merged states (a tree of merges) gives the same.
  LvlmState left, right;
  lvlm_merge(left, load_lvlm_state(states[0]));
  lvlm_merge(left, load_lvlm_state(states[1]));
  lvlm_merge(right, load_lvlm_state(states[2]));
  lvlm_merge(right, load_lvlm_state(states[3]));
  lvlm_merge(right, left);
  canonicalize(right);
  EXPECT_EQ(all_sections(right, c), one);
}

TEST(LvlmShards, StatesOfOtherSettingsDoNotMerge) {
  LvlmConfig a = full_config();
  LvlmConfig b = full_config();
  b.lexicon_distinct = true;
  LvlmState sa, sb;
  lvlm_scan(kDir + "generations.jsonl", a, sa, false);
  lvlm_scan(kDir + "generations.jsonl", b, sb, false);
  EXPECT_NE(error_of<InputError>([&] { lvlm_merge(sa, sb); }).find("different settings"),
            std::string::npos);
}

TEST(LvlmStateFile, TruncatedCorruptAndForeignFilesAreClearErrors) {
  LvlmConfig c = full_config();
  LvlmState s;
  lvlm_scan(kDir + "generations.jsonl", c, s, false);
  const auto path = scratch() / "full.state";
  save_lvlm_state(s, path.string());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    bytes = ss.str();
  }
  const auto write = [&](const std::string& data) {
    const auto p = scratch() / "bad.state";
    std::ofstream(p, std::ios::binary) << data;
    return p.string();
  };
  // Every truncation is an InputError (a sample of cut points, incl. inside the header).
  for (std::size_t cut = 0; cut < bytes.size(); cut += 1 + bytes.size() / 97) {
    const std::string p = write(bytes.substr(0, cut));
    EXPECT_FALSE(error_of<InputError>([&] { (void)load_lvlm_state(p); }).empty()) << cut;
  }
  EXPECT_NE(error_of<InputError>([&] {
              (void)load_lvlm_state(write("hello world, not a state"));
            }).find("not an LVLM state"),
            std::string::npos);
  std::string wrong_version = bytes;
  wrong_version[8] = 9;
  EXPECT_NE(
      error_of<InputError>([&] { (void)load_lvlm_state(write(wrong_version)); }).find("version"),
      std::string::npos);
  // A hostile count (the fingerprint length) claiming more than the file holds.
  std::string huge = bytes;
  for (int i = 12; i < 20; ++i) huge[i] = '\xff';
  EXPECT_NE(error_of<InputError>([&] { (void)load_lvlm_state(write(huge)); }).find("truncated"),
            std::string::npos);
  EXPECT_NE(error_of<InputError>([&] {
              (void)load_lvlm_state(write(bytes + "x"));
            }).find("unexpected bytes"),
            std::string::npos);
  // Random byte flips never crash: either a clean load or an InputError.
  std::uint64_t x = 12345;
  for (int t = 0; t < 300; ++t) {
    std::string flipped = bytes;
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    flipped[(x >> 33) % flipped.size()] ^= static_cast<char>(1 + ((x >> 20) & 0x7f));
    const std::string p = write(flipped);
    try {
      (void)load_lvlm_state(p);
    } catch (const InputError&) {
    }
  }
  const LvlmState back = load_lvlm_state(path.string());
  EXPECT_EQ(back.rows, s.rows);
  EXPECT_EQ(back.fingerprint, s.fingerprint);
}

TEST(LvlmScan, BadInputsAreClearErrors) {
  LvlmConfig c = full_config();
  const auto dir = scratch();
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  };
  LvlmState s;
  EXPECT_NE(error_of<InputError>([&] {
              lvlm_scan(write("empty.jsonl", ""), c, s, false);
            }).find("no rows"),
            std::string::npos);
  LvlmState s2;
  const std::string missing_col =
      write("nocol.csv",
            "filename,rank,seed,race,gender,prompt,mitigation,toxicity,insult\n"
            "a,0,0,Black,male,P,none,0.5,0.1\n");
  EXPECT_NE(error_of<InputError>([&] { lvlm_scan(missing_col, c, s2, false); }).find("'text'"),
            std::string::npos);
  LvlmConfig m;
  m.set_key = {"k"};
  m.group = {"g"};
  m.scores = {"tox"};
  LvlmState s3;
  const std::string text_score = write("textscore.csv", "k,g,tox\n1,a,0.5\n1,b,high\n");
  const std::string msg = error_of<InputError>([&] { lvlm_scan(text_score, m, s3, false); });
  EXPECT_NE(msg.find("line 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tox"), std::string::npos) << msg;
  LvlmState s4;
  const std::string nan_json = write("nan.jsonl", "{\"k\":1,\"g\":\"a\",\"tox\":NaN}\n");
  EXPECT_FALSE(error_of<InputError>([&] { lvlm_scan(nan_json, m, s4, false); }).empty());
  LvlmState s5;
  const std::string absent = write("absent.jsonl", "{\"k\":1,\"g\":\"a\"}\n");
  EXPECT_NE(error_of<InputError>([&] { lvlm_scan(absent, m, s5, false); }).find("'tox'"),
            std::string::npos);
  // Missing cells are counted, never fatal; a set with one scored row has MaxGap 0.
  LvlmState s6;
  lvlm_scan(write("gaps.csv", "k,g,tox\n1,a,0.5\n1,,0.9\n1,b,\n2,a,0.2\n"), m, s6, false);
  canonicalize(s6);
  EXPECT_EQ(s6.rows_missing_group, 1u);
  EXPECT_EQ(s6.rows_missing_score[0], 1u);
  LvlmReportOptions o;
  o.bootstrap = 0;
  const Json r = lvlm_maxgap(s6, m, o).json["results"][0];
  EXPECT_EQ(r["sets"], 2);
  EXPECT_EQ(r["sets_with_one_row"], 2);
  EXPECT_EQ(r["maxgap"]["max"].get<double>(), 0.0);
  LvlmConfig nogroup = m;
  nogroup.group.clear();
  LvlmState s7;
  EXPECT_FALSE(error_of<UsageError>([&] { lvlm_scan(text_score, nogroup, s7, false); }).empty());
}

}  // namespace in_lvlm_audit_test
}  // namespace
}  // namespace vlbias
