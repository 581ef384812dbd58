// Prompt manifests against the Python reference of tools/make_prompt_fixtures.py,
// which fills the templates the way the authors' clip-face-bias code does (paper 001)
// and builds the trait-pair captions of paper 004.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/metrics/prompt_sets.h"

namespace {
namespace in_prompt_sets_test {

using nlohmann::json;
using namespace vlbias;

const json& fixture() {
  return testing_util::fixture_json("metrics/prompts.json");
}

const std::vector<std::string> kColumns = {"text",     "word", "dimension", "valence",
                                           "template", "role", "model"};

std::vector<std::string> row_of(const Table& t, std::size_t r) {
  std::vector<std::string> out;
  for (const Column& c : t.columns) out.push_back(c.text(r));
  return out;
}

void expect_rows(const Table& t, const json& want, const std::string& what) {
  ASSERT_EQ(t.columns.size(), kColumns.size()) << what;
  for (std::size_t c = 0; c < kColumns.size(); ++c) {
    EXPECT_EQ(t.columns[c].name, kColumns[c]) << what;
    EXPECT_EQ(t.columns[c].type, ColumnType::String) << what;
    EXPECT_EQ(t.columns[c].size(), t.rows) << what;
  }
  ASSERT_EQ(t.rows, want.size()) << what;
  for (std::size_t r = 0; r < t.rows; ++r) {
    EXPECT_EQ(row_of(t, r), want[r].get<std::vector<std::string>>()) << what << " row " << r;
  }
}

std::size_t count_role(const Table& t, const std::string& role) {
  const Column& c = t.column("role");
  std::size_t n = 0;
  for (std::size_t r = 0; r < t.rows; ++r) n += c.text(r) == role;
  return n;
}

TEST(PromptSets, FixtureMatchesColumns) {
  EXPECT_EQ(fixture()["columns"].get<std::vector<std::string>>(), kColumns);
}

TEST(PromptSets, SocialPerceptionMatchesReference) {
  for (const auto& [name, rows] : fixture()["social_perception"].items()) {
    SocialPerceptionPromptOptions o;
    o.template_set = parse_template_set(name);
    EXPECT_STREQ(to_string(o.template_set), name.c_str());
    expect_rows(social_perception_prompts(o), rows, name);
  }
}

TEST(PromptSets, SocialPerceptionCounts) {
  // 12 SCM words (6 warmth + 6 competence) and 32 ABC words (6+6 agency, 4+4 belief,
  // 6+6 communion) = 44; 7 control words besides "<blank>".
  const Table paper = social_perception_prompts();
  EXPECT_EQ(paper.rows, 4u + 4u * 44u + 4u * 7u);
  EXPECT_EQ(count_role(paper, "neutral"), 4u);
  EXPECT_EQ(count_role(paper, "attribute"), 4u * 44u);
  EXPECT_EQ(count_role(paper, "group"), 4u * 7u);
  EXPECT_EQ(paper.column("text").text(0), "A photo of a person.");
  EXPECT_EQ(paper.column("text").text(3), "Cropped face photo of a person.");
  EXPECT_TRUE(paper.column("word").missing(0));  // "" is stored as missing, as read_table reads it

  SocialPerceptionPromptOptions single;
  single.template_set = TemplateSet::Single;
  single.group_prompts = false;
  const Table s = social_perception_prompts(single);
  EXPECT_EQ(s.rows, 1u + 44u);
  EXPECT_EQ(count_role(s, "group"), 0u);
}

TEST(PromptSets, CustomTemplatesOverrideTheSet) {
  SocialPerceptionPromptOptions o;
  o.template_set = TemplateSet::Code;
  o.templates = {"a {} face"};
  const Table t = social_perception_prompts(o);
  EXPECT_EQ(t.rows, 1u + 44u + 7u);
  EXPECT_EQ(t.column("text").text(0), "a face");
  EXPECT_EQ(t.column("text").text(1), "a warm face");
  EXPECT_EQ(t.column("template").text(1), "a {} face");
  EXPECT_EQ(t.column("dimension").text(t.rows - 1), "age");
  EXPECT_EQ(t.column("word").text(t.rows - 1), "old");

  o.templates = {"a face"};
  EXPECT_THROW(social_perception_prompts(o), UsageError);
  o.templates = {"a {} face", "a {} face"};
  EXPECT_THROW(social_perception_prompts(o), UsageError);
}

TEST(PromptSets, TraitPairsMatchReference) {
  for (const json& c : fixture()["trait_pairs"]) {
    TraitPairPromptOptions o;
    const auto pairs = c["pairs"].get<std::vector<std::vector<std::string>>>();
    for (const auto& p : pairs) o.pairs.emplace_back(p[0], p[1]);
    o.templates = c["templates"].get<std::vector<std::string>>();
    o.neutral = c["neutral"].get<bool>();
    expect_rows(trait_pair_prompts(o), c["rows"], c["templates"].dump());
  }
  // The defaults are the reference's first case.
  expect_rows(trait_pair_prompts(), fixture()["trait_pairs"][0]["rows"], "defaults");
}

TEST(PromptSets, FillTemplate) {
  EXPECT_EQ(fill_template("A photo of a {} person.", "warm"), "A photo of a warm person.");
  EXPECT_EQ(fill_template("A photo of a {} person.", ""), "A photo of a person.");
  EXPECT_EQ(fill_template("{} person", ""), "person");
  EXPECT_EQ(fill_template("a person {}", ""), "a person");
  EXPECT_EQ(fill_template("  a {}  person ", "warm"), "a warm person");
  EXPECT_EQ(fill_template("a {} person", " very  warm "), "a very warm person");
  EXPECT_EQ(fill_template("{}", ""), "");
  EXPECT_EQ(fill_template("{}", "warm"), "warm");
  EXPECT_EQ(fill_template("a {}-ish person", "warm"), "a warm-ish person");
  EXPECT_THROW(fill_template("a person", "warm"), UsageError);
  EXPECT_THROW(fill_template("a {} {} person", "warm"), UsageError);
  EXPECT_THROW(fill_template("a {attribute} person", "warm"), UsageError);
}

TEST(PromptSets, ParseTemplateSet) {
  EXPECT_EQ(parse_template_set("paper"), TemplateSet::Paper);
  EXPECT_EQ(parse_template_set("code"), TemplateSet::Code);
  EXPECT_EQ(parse_template_set("single"), TemplateSet::Single);
  EXPECT_THROW(parse_template_set("Paper"), UsageError);
  EXPECT_THROW(parse_template_set(""), UsageError);
}

TEST(PromptSets, ParseTraitPairs) {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(parse_trait_pairs("smart/dumb,happy/sad"),
            (Pairs{{"smart", "dumb"}, {"happy", "sad"}}));
  EXPECT_EQ(parse_trait_pairs(" smart / dumb , happy/sad "),
            (Pairs{{"smart", "dumb"}, {"happy", "sad"}}));
  for (const char* bad : {"smart", "smart/", "/dumb", "a/b/c", "", " ", "smart/dumb,",
                          "smart/dumb,,happy/sad", "smart/smart"}) {
    EXPECT_THROW(parse_trait_pairs(bad), UsageError) << "'" << bad << "'";
  }
  TraitPairPromptOptions o;
  o.pairs = {{"smart", "dumb"}, {"smart", "dumb"}};
  EXPECT_THROW(trait_pair_prompts(o), UsageError);
  o.pairs = {{"smart", "dumb"}};
  o.templates = {};
  EXPECT_THROW(trait_pair_prompts(o), UsageError);
  o.templates = {"a person"};
  EXPECT_THROW(trait_pair_prompts(o), UsageError);
}

class PromptLexiconTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("vlbias_prompts_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // A valid lexicon (one word per list), with `patch` applied to it.
  json valid() const {
    json j = json::parse(builtin_attribute_lists_json());
    for (const char* sec : {"StereotypeContentModel", "ABCModel"}) {
      for (auto& [key, value] : j[sec].items()) {
        if (value.is_array()) value = json::array({key + "_word"});
      }
    }
    j["Control"]["all_attributes"] = {"<blank>", "white", "tall"};
    return j;
  }

  // The error message when reading `text` as a lexicon (empty if none).
  std::string error_of(const std::string& text) {
    SocialPerceptionPromptOptions o;
    o.lexicon_path = write("lexicon.json", text);
    try {
      social_perception_prompts(o);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  std::filesystem::path dir_;
};

TEST_F(PromptLexiconTest, CustomLexiconIsUsed) {
  SocialPerceptionPromptOptions o;
  o.template_set = TemplateSet::Single;
  o.lexicon_path = write("lexicon.json", valid().dump());
  const Table t = social_perception_prompts(o);
  ASSERT_EQ(t.rows, 1u + 8u + 2u);
  EXPECT_EQ(row_of(t, 1),
            (std::vector<std::string>{"A photo of a warm_word person.", "warm_word", "warmth", "+",
                                      "A photo of a {} person.", "attribute", "scm"}));
  EXPECT_EQ(t.column("text").text(6), "A photo of a belief_neg_word person.");
  EXPECT_EQ(t.column("valence").text(6), "-");
  EXPECT_EQ(t.column("dimension").text(9), "race");
  EXPECT_EQ(row_of(t, 10),
            (std::vector<std::string>{"A photo of a tall person.", "tall", "group", "",
                                      "A photo of a {} person.", "group", "control"}));

  // Without Control there are no group prompts.
  json no_control = valid();
  no_control.erase("Control");
  o.lexicon_path = write("no_control.json", no_control.dump());
  EXPECT_EQ(social_perception_prompts(o).rows, 1u + 8u);
}

TEST_F(PromptLexiconTest, MalformedLexiconsNameFileAndKey) {
  auto expect_error = [&](const std::string& text, const std::string& needle) {
    const std::string msg = error_of(text);
    EXPECT_NE(msg.find("lexicon.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << "want '" << needle << "' in: " << msg;
  };
  expect_error("{not json", "not valid JSON");
  expect_error("[1, 2]", "JSON object");
  json j = valid();
  j.erase("StereotypeContentModel");
  expect_error(j.dump(), "StereotypeContentModel");
  j = valid();
  j.erase("ABCModel");
  expect_error(j.dump(), "ABCModel");
  j = valid();
  j["ABCModel"].erase("belief_neg");
  expect_error(j.dump(), "belief_neg");
  j = valid();
  j["StereotypeContentModel"]["warm"] = "warm";
  expect_error(j.dump(), "\"warm\"");
  j = valid();
  j["StereotypeContentModel"]["comp"] = {"competent", 3};
  expect_error(j.dump(), "\"comp\" item 2 is not a string");
  j = valid();
  j["ABCModel"]["agency_pos"] = {"powerful", ""};
  expect_error(j.dump(), "\"agency_pos\" item 2 is an empty word");
  j = valid();
  j["Control"]["all_attributes"] = {"<blank>", " "};
  expect_error(j.dump(), "\"all_attributes\" item 2 is an empty word");
  j = valid();
  j["Control"] = json::array({"white"});
  expect_error(j.dump(), "\"Control\"");
  j = valid();
  for (const char* sec : {"StereotypeContentModel", "ABCModel"}) {
    for (auto& [key, value] : j[sec].items()) {
      if (value.is_array()) value = json::array();
    }
  }
  expect_error(j.dump(), "empty");

  SocialPerceptionPromptOptions o;
  o.lexicon_path = (dir_ / "absent.json").string();
  EXPECT_THROW(social_perception_prompts(o), InputError);
}

}  // namespace in_prompt_sets_test
}  // namespace
