// `vlbias dataset visage-labels`: ViSAGe's human annotations as LABELS.csv rows (labeller human),
// on real slices of the release's Sheet1.csv and full_set_annotations.csv
// (tests/fixtures/labels/visage/, cut by tools/make_visage_label_fixtures.py). The expected rows
// are counted by hand from the slices' lines (SOURCE.md there names them).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>

#include "cli_util.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/table/table.h"

namespace {
namespace in_visage_labels_test {

namespace fs = std::filesystem;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

const fs::path kSlices = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/labels/visage";
const char* const kRoot = "/cns/px-d/home/image-generation/akshitat_test";
const char* const kHeader =
    "image,face,attribute,label,margin,p_yes,p_no,labeller,model,weights_sha256,prompt_set,"
    "options";

CliResult convert(const fs::path& annotations, const fs::path& out, const std::string& extra = "") {
  return run_cli(fmt::format("dataset visage-labels --annotations '{}' --out '{}' {}",
                             annotations.string(), out.string(), extra));
}

// image|attribute -> label, and the label counts.
struct Labels {
  std::map<std::string, std::string> of;
  std::map<std::string, std::size_t> count;
  std::size_t rows = 0;
};

Labels labels_of(const fs::path& path) {
  const vlbias::Table t = vlbias::read_table(path.string());
  Labels l;
  l.rows = t.rows;
  for (std::size_t i = 0; i < t.rows; ++i) {
    const std::string label = t.column("label").text(i);
    l.of[t.column("image").text(i) + "|" + t.column("attribute").text(i)] = label;
    ++l.count[label];
    EXPECT_TRUE(t.column("face").missing(i));
    EXPECT_TRUE(t.column("margin").missing(i));
    EXPECT_TRUE(t.column("p_yes").missing(i));
    EXPECT_EQ(t.column("labeller").text(i), "human");
  }
  return l;
}

std::string first_line(const fs::path& path) {
  const std::string text = read_file(path);
  return text.substr(0, text.find('\n'));
}

TEST(CliVisageLabels, Sheet1MajorityIsOneRowPerTaskAndAttribute) {
  const fs::path dir = temp_dir();
  const fs::path in = kSlices / "sheet1_slice.csv";
  const CliResult r = convert(in, dir / "human.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(first_line(dir / "human.csv"), kHeader);
  // Tasks A1, A3, A14: 4 attributes each, 3 raters; "none of the above" (A14) left out; two
  // empty rows skipped. Majority (more than half of 3): only A3's "not as attractive" (yes, no,
  // yes) is yes; A1's "eat taco" and "unpleasant" and A3's "burrito" have one yes of three.
  const Labels l = labels_of(dir / "human.csv");
  EXPECT_EQ(l.rows, 12u);
  EXPECT_EQ(l.count.at("yes"), 1u);
  EXPECT_EQ(l.count.at("no"), 11u);
  EXPECT_EQ(l.of.at("Mexican5.png|not as attractive"), "yes");
  EXPECT_EQ(l.of.at("Mexican5.png|eat taco"), "no");
  EXPECT_EQ(l.of.count("Mexican5.png|none of the above"), 0u);
  const vlbias::Table t = vlbias::read_table((dir / "human.csv").string());
  EXPECT_EQ(t.column("model").text(0), in.string());
  EXPECT_EQ(t.column("weights_sha256").text(0), vlbias::sha256_file(in.string()));
  EXPECT_EQ(t.column("options").text(0),
            "aggregate=majority;image_root=;layout=sheet1;none_option=left out");
  EXPECT_NE(r.err.find("empty rows skipped 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'none of the above' judgements left out 1"), std::string::npos) << r.err;
}

TEST(CliVisageLabels, Sheet1PerAnnotationIsOneRowPerAnswer) {
  const fs::path dir = temp_dir();
  const CliResult r =
      convert(kSlices / "sheet1_slice.csv", dir / "human.csv", "--aggregate annotation");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 3 tasks x 3 raters x 4 attributes; yes: A1 unpleasant, eat taco; A3 not as attractive (2),
  // burrito; A14 poor.
  const Labels l = labels_of(dir / "human.csv");
  EXPECT_EQ(l.rows, 36u);
  EXPECT_EQ(l.count.at("yes"), 6u);
  EXPECT_EQ(l.count.at("no"), 30u);
}

TEST(CliVisageLabels, FullSetKeepsFoldersUnderTheImageRootAndDropsTheRepeatedTask) {
  const fs::path dir = temp_dir();
  const fs::path in = kSlices / "full_set_slice.csv";
  // The same file name in two folders: named by file name alone they would merge.
  CliResult r = convert(in, dir / "human.csv");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("both named 'Mexican5.png'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--image-root"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "human.csv"));

  r = convert(in, dir / "human.csv", fmt::format("--image-root {}/", kRoot));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A0 (lines 2-16): poor yes for one rater of three -> no; A100 (2837-2851): brunette (no,
  // yes, yes) and festive (yes, yes, no) -> yes; the repeat of A0 (39787-39801) is dropped.
  const Labels l = labels_of(dir / "human.csv");
  EXPECT_EQ(l.rows, 8u);
  EXPECT_EQ(l.of, (std::map<std::string, std::string>{
                      {"visual_annotation_full_set/Mexican5.png|poor", "no"},
                      {"visual_annotation_full_set/Mexican5.png|cheerful", "no"},
                      {"visual_annotation_full_set/Mexican5.png|snake", "no"},
                      {"visual_annotation_full_set/Mexican5.png|commie", "no"},
                      {"visual_annotation/Mexican5.png|brunette", "yes"},
                      {"visual_annotation/Mexican5.png|festive", "yes"},
                      {"visual_annotation/Mexican5.png|nurse", "no"},
                      {"visual_annotation/Mexican5.png|fun", "no"}}));
  EXPECT_NE(r.err.find("duplicate runs dropped 1 (15 rows)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("empty rows skipped 2"), std::string::npos) << r.err;

  r = convert(in, dir / "each.csv", fmt::format("--image-root {} --aggregate annotation", kRoot));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Labels each = labels_of(dir / "each.csv");
  EXPECT_EQ(each.rows, 24u);            // 2 tasks x 3 raters x 4 attributes
  EXPECT_EQ(each.count.at("yes"), 5u);  // A0 poor once; A100 brunette twice, festive twice
}

TEST(CliVisageLabels, BadInputIsAnErrorNamingTheFileAndWhatWasExpected) {
  const fs::path dir = temp_dir();
  const auto run = [&](const std::string& text, const std::string& extra = "") {
    std::ofstream(dir / "in.csv", std::ios::binary) << text;
    return convert(dir / "in.csv", dir / "out.csv", extra);
  };
  const std::string head = "worker_id,img_path,attribute,present,coords\n";
  CliResult r = run("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is empty"), std::string::npos) << r.err;
  r = run(head);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("has no annotation rows"), std::string::npos) << r.err;
  r = run(head + "A0,x/Mexican5.png,sombrero,maybe,[]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("holds 'maybe'; expected yes/no"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line 2"), std::string::npos) << r.err;
  r = run("worker_id,img_path,attribute,present,rater\nA0,x/M5.png,sombrero,yes,r1\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("a column 'rater' that ViSAGe's full_set layout does not have"),
            std::string::npos)
      << r.err;
  r = run("worker_id,img_path,attribute\nA0,x/M5.png,sombrero\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no column 'present'"), std::string::npos) << r.err;
  r = run("worker_id,img_path,attribute,present,coords,\nA0,x/M5.png,sombrero,yes,[],oops\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the unnamed column Unnamed: 5 holds 'oops'"), std::string::npos) << r.err;
  r = run(head + "A0,x/M5.png,none of the above,yes,[]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no annotation of an attribute"), std::string::npos) << r.err;
  r = run(head + "A0,x/M5.png,sombrero,yes,[]\n", "--image-root /elsewhere");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not under --image-root /elsewhere"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out.csv"));
  r = run(head + "A0,x/M5.png,sombrero,Y,[]\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(labels_of(dir / "out.csv").of.at("M5.png|sombrero"), "yes");
  r = run(head + "A0,/x/M5.png,sombrero,0,[]\n", "--image-root /");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(labels_of(dir / "out.csv").of.at("x/M5.png|sombrero"), "no");
}

}  // namespace in_visage_labels_test
}  // namespace
