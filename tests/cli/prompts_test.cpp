// End-to-end tests of `vlbias prompts social-perception|trait-pairs`: the manifest read
// back with read_table equals the Python reference of tools/make_prompt_fixtures.py; and
// `prompts geo-objects|geo-t2i` (paper 002).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/io/table/table.h"

namespace {
namespace in_prompts_test {

using nlohmann::json;
using vlbias::Table;
namespace fs = std::filesystem;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;

const std::vector<std::string> kColumns = {"text",     "word", "dimension", "valence",
                                           "template", "role", "model"};

const json& reference() {
  return vlbias::testing_util::fixture_json("metrics/prompts.json");
}

std::vector<std::string> row_of(const Table& t, std::size_t r) {
  std::vector<std::string> out;
  for (const auto& c : t.columns) out.push_back(c.text(r));
  return out;
}

void expect_manifest(const std::string& path, const json& want, const std::string& what) {
  const Table t = vlbias::read_table(path);
  ASSERT_EQ(t.columns.size(), kColumns.size()) << what;
  for (std::size_t c = 0; c < kColumns.size(); ++c) {
    EXPECT_EQ(t.columns[c].name, kColumns[c]) << what;
  }
  ASSERT_EQ(t.rows, want.size()) << what;
  for (std::size_t r = 0; r < t.rows; ++r) {
    EXPECT_EQ(row_of(t, r), want[r].get<std::vector<std::string>>()) << what << " row " << r;
  }
}

TEST(CliPrompts, SocialPerceptionPaperSet) {
  const std::string out = (temp_dir() / "prompts.csv").string();
  const CliResult r = run_cli("prompts social-perception --out '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("wrote 208 prompts"), std::string::npos) << r.err;
  expect_manifest(out, reference()["social_perception"]["paper"], "paper");
  const Table t = vlbias::read_table(out);
  EXPECT_EQ(t.column("text").text(0), "A photo of a person.");
  EXPECT_EQ(t.column("role").text(0), "neutral");
  EXPECT_EQ(t.column("text").text(4), "A photo of a warm person.");
  EXPECT_EQ(t.column("valence").text(4), "+");
  EXPECT_EQ(t.column("valence").type, vlbias::ColumnType::String);
}

TEST(CliPrompts, SocialPerceptionCodeAndSingleSets) {
  for (const std::string set : {"code", "single"}) {
    const std::string out = (temp_dir() / (set + ".csv")).string();
    const CliResult r =
        run_cli("--quiet prompts social-perception --templates " + set + " --out '" + out + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    expect_manifest(out, reference()["social_perception"][set], set);
  }
  const Table t = vlbias::read_table((temp_dir() / "code.csv").string());
  EXPECT_EQ(t.column("text").text(7), "cropped face photo of a warm person");
}

TEST(CliPrompts, JsonlAndOptions) {
  const std::string out = (temp_dir() / "prompts.jsonl").string();
  const CliResult r = run_cli(
      "prompts social-perception --template 'a {} face' --template 'the {} one' "
      "--no-group-prompts --out '" +
      out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Table t = vlbias::read_table(out);
  ASSERT_EQ(t.rows, 2u + 2u * 44u);
  EXPECT_EQ(row_of(t, 0),
            (std::vector<std::string>{"a face", "", "", "", "a {} face", "neutral", "control"}));
  EXPECT_EQ(row_of(t, 3), (std::vector<std::string>{"the warm one", "warm", "warmth", "+",
                                                    "the {} one", "attribute", "scm"}));
}

TEST(CliPrompts, TraitPairs) {
  const std::string out = (temp_dir() / "traits.csv").string();
  CliResult r = run_cli("prompts trait-pairs --out '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_manifest(out, reference()["trait_pairs"][0]["rows"], "default");
  r = run_cli(
      "prompts trait-pairs --pairs 'smart/dumb,happy/sad' --template 'a {} person' "
      "--template 'A photo of a {} person.' --no-neutral --out '" +
      out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_manifest(out, reference()["trait_pairs"][1]["rows"], "custom");
}

TEST(CliPrompts, ErrorsExitTwo) {
  const std::string out = (temp_dir() / "x.csv").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"prompts social-perception --templates fancy --out '" + out + "'", "fancy"},
      {"prompts social-perception", "--out"},
      {"prompts trait-pairs", "--out"},
      {"prompts trait-pairs --pairs 'smart/' --out '" + out + "'", "smart/"},
      {"prompts trait-pairs --pairs 'a/b/c' --out '" + out + "'", "a/b/c"},
      {"prompts social-perception --template 'no placeholder' --out '" + out + "'",
       "no placeholder"},
      {"prompts social-perception --lexicon tests/fixtures/metrics/absent.json --out '" + out + "'",
       "absent.json"},
      {"prompts social-perception --out '" + (temp_dir() / "x.txt").string() + "'", ".csv"},
      {"prompts", "subcommand"},
  };
  for (const auto& [args, needle] : cases) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace in_prompts_test
}  // namespace

namespace {
namespace in_prompts_test {

TEST(CliPrompts, GeoObjectsFromATableOrAList) {
  // Distinct objects of the generated table, sorted, text = the bare object (DIG-In).
  const std::string out = (temp_dir() / "objects.csv").string();
  CliResult r = run_cli(
      "prompts geo-objects --table tests/fixtures/audits/geo/generated.csv --out '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Table t = vlbias::read_table(out);
  ASSERT_EQ(t.rows, 4u);
  const std::vector<std::string> want = {"bag", "dog", "kite", "stove"};
  for (std::size_t i = 0; i < t.rows; ++i) {
    EXPECT_EQ(t.column("object").text(i), want[i]);
    EXPECT_EQ(t.column("text").text(i), want[i]);
  }
  const std::string jsonl = (temp_dir() / "objects.jsonl").string();
  r = run_cli(
      "prompts geo-objects --objects 'plate of food,bag,bag' --template 'a photo of a {}' "
      "--out '" +
      jsonl + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Table j = vlbias::read_table(jsonl);
  ASSERT_EQ(j.rows, 2u);
  EXPECT_EQ(j.column("text").text(1), "a photo of a plate of food");
  r = run_cli("prompts geo-objects --objects bag --template 'a photo of a bag' --out '" + jsonl +
              "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exactly once"), std::string::npos) << r.err;
  r = run_cli("prompts geo-objects --out '" + jsonl + "'");
  EXPECT_EQ(r.exit_code, 2);
  r = run_cli(
      "prompts geo-objects --table tests/fixtures/audits/geo/generated.csv --column nope "
      "--out '" +
      jsonl + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
}

TEST(Prompts, GeoT2iWritesDigInsPromptFormsWithTheTablesLabelsAndItsTopCountries) {
  // Africa: Nigeria 3 images, Kenya and Egypt 2 each (a tie, broken by bytes: Egypt), Ghana 1.
  const fs::path table = temp_dir() / "real.csv";
  std::ofstream(table) << "path,object,region,country\n"
                          "1.jpg,cooking_pot,Africa,Nigeria\n2.jpg,cooking_pot,Africa,Nigeria\n"
                          "3.jpg,bag,Africa,Nigeria\n4.jpg,bag,Africa,Kenya\n"
                          "5.jpg,bag,Africa,Kenya\n6.jpg,bag,Africa,Egypt\n"
                          "7.jpg,bag,Africa,Egypt\n8.jpg,bag,Africa,Ghana\n"
                          "9.jpg,bag,EastAsia,Japan\n10.jpg,bag,,Peru\n";
  const auto prompts = [&](const std::string& args) {
    const fs::path out = temp_dir() / "prompts.csv";
    const CliResult r = run_cli("prompts geo-t2i --table " + shell_quote(table.string()) + " " +
                                args + " --out " + shell_quote(out.string()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return read_file(out);
  };
  EXPECT_EQ(prompts("--form object"),
            "prompt,object,region,country,form\n"
            "bag,bag,,,object\ncooking pot,cooking_pot,,,object\n");
  EXPECT_EQ(prompts(""),  // object-region by default; the row without a region is skipped
            "prompt,object,region,country,form\n"
            "bag in Africa,bag,Africa,,object-region\n"
            "bag in East Asia,bag,EastAsia,,object-region\n"
            "cooking pot in Africa,cooking_pot,Africa,,object-region\n");
  EXPECT_EQ(prompts("--form object-country --countries-per-region 2"),
            "prompt,object,region,country,form\n"
            "bag in Egypt,bag,Africa,Egypt,object-country\n"
            "bag in Nigeria,bag,Africa,Nigeria,object-country\n"
            "bag in Japan,bag,EastAsia,Japan,object-country\n"
            "cooking pot in Egypt,cooking_pot,Africa,Egypt,object-country\n"
            "cooking pot in Nigeria,cooking_pot,Africa,Nigeria,object-country\n");

  const std::string out = shell_quote((temp_dir() / "bad.csv").string());
  CliResult r = run_cli(
      "prompts geo-t2i --table tests/fixtures/audits/geo/generated.csv "
      "--form object-country --country-column place --out " +
      out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("place"), std::string::npos) << r.err;
  r = run_cli("prompts geo-t2i --table " + shell_quote(table.string()) + " --form region --out " +
              out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown prompt form 'region'"), std::string::npos) << r.err;
}

}  // namespace in_prompts_test
}  // namespace
