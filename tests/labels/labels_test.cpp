// The labels stage without a model: prompt sets (the shipped ones and a user's file, with every
// malformed case an error naming the set), the choice of attributes, CLIP's prompt ensembling and
// the softmax at the logit scale on a hand-worked example, the abstain rule, and LABELS.csv's
// schema as the other labellers write it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/labels/clip_labels.h"
#include "vlbias/labels/label_prompts.h"
#include "vlbias/labels/labels_table.h"

namespace {
namespace in_labels_test {

using vlbias::InputError;
using vlbias::LabelAttribute;
using vlbias::LabelPromptSet;
using vlbias::LabelRow;
using vlbias::LabelsProvenance;
using vlbias::LabelsSchema;
using vlbias::UsageError;

// The message of the error `f` throws, "" when it throws none of type E.
template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

TEST(LabelPrompts, TheShippedSetsParseWithFairFacesClassesAndThePeersPromptsVerbatim) {
  EXPECT_EQ(vlbias::builtin_label_prompt_sets(),
            (std::vector<std::string>{"fairface", "heim", "dalleval"}));
  const LabelPromptSet ff = vlbias::load_label_prompt_set("fairface");
  EXPECT_EQ(ff.id, "fairface");
  ASSERT_EQ(ff.attributes.size(), 4u);
  const std::vector<std::string> names = {"gender", "race", "race4", "age"};
  const std::vector<std::size_t> sizes = {2, 7, 4, 9};
  for (std::size_t a = 0; a < 4; ++a) {
    EXPECT_EQ(ff.attributes[a].name, names[a]);
    EXPECT_EQ(ff.attributes[a].classes.size(), sizes[a]);
    for (const auto& c : ff.attributes[a].classes) EXPECT_EQ(c.prompts.size(), 3u) << c.name;
  }
  EXPECT_EQ(ff.attributes[1].classes[2].name, "Latino_Hispanic");
  EXPECT_EQ(ff.attributes[1].classes[2].prompts[0], "a photo of a Latino or Hispanic person");
  EXPECT_EQ(ff.attributes[3].classes[8].name, "70+");
  const LabelPromptSet heim = vlbias::load_label_prompt_set("heim");
  ASSERT_EQ(heim.attributes.size(), 1u);
  EXPECT_EQ(heim.attributes[0].classes[0].prompts, std::vector<std::string>{"a photo of a male"});
  EXPECT_EQ(heim.attributes[0].classes[1].prompts, std::vector<std::string>{"a photo of a female"});
  const LabelPromptSet de = vlbias::load_label_prompt_set("dalleval");
  ASSERT_EQ(de.attributes.size(), 2u);
  EXPECT_EQ(de.attributes[1].classes[3].prompts,
            std::vector<std::string>{"a photo of a Asian person"});
  EXPECT_NE(de.source.find("6650d13feadb2dbd06751dd4f3a063faa2fe7eed"), std::string::npos);
}

TEST(LabelPrompts, AUsersFileFillsTemplatesKeepsLiteralPromptsAndIsNamedByItsHash) {
  const std::string text = R"({"attributes": [{"name": "tone", "templates": ["a {} photo", "{}"],
      "classes": [{"name": "warm"}, {"name": "cold", "text": "icy blue"},
                  {"name": "grey", "prompts": ["a grey photo"]}]}]})";
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  ("vlbias_labels_test_" + std::to_string(::getpid()) + ".json");
  std::ofstream(p) << text;
  const LabelPromptSet set = vlbias::load_label_prompt_set(p.string());
  std::filesystem::remove(p);
  EXPECT_EQ(set.id, p.string() + " sha256:" + vlbias::sha256_hex(text));
  ASSERT_EQ(set.attributes.size(), 1u);
  const auto& c = set.attributes[0].classes;
  EXPECT_EQ(c[0].prompts, (std::vector<std::string>{"a warm photo", "warm"}));
  EXPECT_EQ(c[1].prompts, (std::vector<std::string>{"a icy blue photo", "icy blue"}));
  EXPECT_EQ(c[2].prompts, std::vector<std::string>{"a grey photo"});
}

TEST(LabelPrompts, MalformedSetsAreInputErrorsNamingTheSetAndWhatIsWrong) {
  const auto err = [](const std::string& json) {
    return error_of<InputError>([&] { vlbias::parse_label_prompt_set(json, "set.json"); });
  };
  const std::string two = R"([{"name": "a"}, {"name": "b"}])";
  EXPECT_NE(err("[]").find("set.json: is array"), std::string::npos) << err("[]");
  EXPECT_NE(err(R"({"attributes": []})").find("\"attributes\""), std::string::npos);
  EXPECT_NE(
      err(R"({"attributes": [{"name": "x", "templates": ["no slot"], "classes": )" + two + "}]}")
          .find("exactly once"),
      std::string::npos);
  EXPECT_NE(
      err(R"({"attributes": [{"name": "x", "templates": ["{} {}"], "classes": )" + two + "}]}")
          .find("exactly once"),
      std::string::npos);
  EXPECT_NE(err(R"({"attributes": [{"name": "x", "classes": )" + two + "}]}")
                .find("attribute \"x\", class \"a\": has no \"prompts\""),
            std::string::npos);
  EXPECT_NE(err(R"({"attributes": [{"name": "x", "classes": [{"name": "a", "prompts": ["p"]}]}]})")
                .find("has 1 class(es)"),
            std::string::npos);
  EXPECT_NE(err(R"({"attributes": [{"name": "x", "templates": ["{}"], "classes": [{"name": "a"},
                {"name": "a"}]}]})")
                .find("class \"a\" is given twice"),
            std::string::npos);
  EXPECT_NE(err(R"({"attributes": [{"name": "x", "classes": [{"name": "a", "prompts": [""]},
                {"name": "b", "prompts": ["q"]}]}]})")
                .find("an empty string"),
            std::string::npos);
  EXPECT_NE(err(R"({"attributes": [{"name": "x", "templates": ["{}"], "classes": )" + two +
                R"(}, {"name": "x", "templates": ["{}"], "classes": )" + two + "}]}")
                .find("attribute \"x\" is given twice"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([] {
              vlbias::load_label_prompt_set("no-such-set");
            }).find("neither a shipped prompt set (fairface, heim, dalleval) nor a file"),
            std::string::npos);
}

TEST(LabelPrompts, UnknownRepeatedOrCollidingAttributesAreUsageErrors) {
  const LabelPromptSet ff = vlbias::load_label_prompt_set("fairface");
  const std::vector<LabelAttribute> chosen = vlbias::select_label_attributes(ff, {"age", "gender"});
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[0].name, "age");
  const auto err = [&](const std::vector<std::string>& names) {
    return error_of<UsageError>([&] { vlbias::select_label_attributes(ff, names); });
  };
  EXPECT_NE(err({"gender", "skin"})
                .find("--attributes skin: the prompt set fairface has no "
                      "prompts for it; it has: gender, race, race4, age"),
            std::string::npos);
  EXPECT_NE(err({"gender", "gender"}).find("gender is named twice"), std::string::npos);
  EXPECT_NE(err({"race", "race4"}).find("the class \"White\" of race4 is also a class of race"),
            std::string::npos);
  EXPECT_NE(err({}).find("--attributes is empty"), std::string::npos);
}

TEST(ClipZeroShot, ClassesAreMeansOfNormalisedPromptsAndProbabilitiesASoftmaxAtTheScale) {
  // Class A: prompts (2, 0) and (0, 1) -> units (1, 0), (0, 1) -> mean (1/2, 1/2) -> (r, r),
  // r = 1 / sqrt(2). Class B: (0, -3) -> (0, -1). Image (5, 0) -> (1, 0): cosines r and 0, so at
  // s = 10, p_A = 1 / (1 + exp(-10 r)).
  LabelAttribute attr{"x", {{"A", {"a1", "a2"}}, {"B", {"b"}}}};
  const std::vector<float> prompts = {2, 0, 0, 1, 0, -3};
  const vlbias::ClipZeroShot z =
      vlbias::make_clip_zero_shot(vlbias::MatrixView(prompts.data(), 3, 2), {attr}, 10.0);
  const double r = 1.0 / std::sqrt(2.0);
  ASSERT_EQ(z.class_embeddings.size(), 4u);
  EXPECT_NEAR(z.class_embeddings[0], r, 1e-15);
  EXPECT_NEAR(z.class_embeddings[1], r, 1e-15);
  EXPECT_EQ(z.class_embeddings[3], -1.0);
  const std::vector<float> image = {5, 0};
  const auto p = vlbias::clip_zero_shot_probabilities(z, image.data(), 2);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NEAR(p[0][0], 1.0 / (1.0 + std::exp(-10.0 * r)), 1e-15);
  EXPECT_NEAR(p[0][0] + p[0][1], 1.0, 1e-15);
  const std::vector<float> zero = {0, 0};
  EXPECT_NE(error_of<InputError>([&] {
              vlbias::clip_zero_shot_probabilities(z, zero.data(), 2);
            }).find("norm 0"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] {
              vlbias::make_clip_zero_shot(vlbias::MatrixView(prompts.data(), 3, 2), {attr}, 0.0);
            }).find("logit scale"),
            std::string::npos);
}

TEST(LabelsTable, TheTopClassIsTheLabelUnlessItsLeadIsBelowTheMargin) {
  const std::vector<std::string> classes = {"a", "b", "c"};
  double gap = -1;
  EXPECT_EQ(vlbias::label_from_probabilities({0.1, 0.6, 0.3}, classes, 0.0, gap), "b");
  EXPECT_NEAR(gap, 0.3, 1e-15);
  EXPECT_EQ(vlbias::label_from_probabilities({0.1, 0.6, 0.3}, classes, 0.29, gap), "b");
  EXPECT_EQ(vlbias::label_from_probabilities({0.1, 0.6, 0.3}, classes, 0.31, gap), "unclear");
  // A tie: margin 0 never abstains, and the first class wins.
  EXPECT_EQ(vlbias::label_from_probabilities({0.4, 0.4, 0.2}, classes, 0.0, gap), "a");
  EXPECT_EQ(gap, 0.0);
  EXPECT_EQ(vlbias::label_from_probabilities({0.4, 0.4, 0.2}, classes, 1e-12, gap), "unclear");
}

TEST(LabelsTable, ColumnsFollowTheSchemaWithProvenanceOnEveryRow) {
  LabelsSchema schema{{"gender", "age"}, {{"Male", "Female"}, {"0-2", "70+"}}};
  LabelsProvenance prov{
      "clip", "models/clip", "ab12", "fairface", {{"margin", "0.1"}, {"logit_scale", "100"}}};
  std::vector<LabelRow> rows(3);
  rows[0] = {"img/a.png", std::nullopt, 0, "Female", {0.25, 0.75}};
  rows[1] = {"img/a.png", 2, 1, "unclear", {0.5, 0.5}};
  rows[2] = {"=cmd.png", 0, 0, "refused", {}};  // a VLM's answer: no probabilities
  EXPECT_EQ(vlbias::labels_table_text(schema, prov, rows),
            "image,face,attribute,label,margin,p_Male,p_Female,p_0-2,p_70+,labeller,model,"
            "weights_sha256,prompt_set,options\n"
            "img/a.png,,gender,Female,0.5,0.25,0.75,,,clip,models/clip,ab12,fairface,"
            "logit_scale=100;margin=0.1\n"
            "img/a.png,2,age,unclear,0,,,0.5,0.5,clip,models/clip,ab12,fairface,"
            "logit_scale=100;margin=0.1\n"
            "\"'=cmd.png\",0,gender,refused,,,,,,clip,models/clip,ab12,fairface,"
            "logit_scale=100;margin=0.1\n");
  schema.classes[1][0] = "Male";
  EXPECT_NE(error_of<UsageError>([&] {
              vlbias::labels_table_text(schema, prov, rows);
            }).find("the class \"Male\" of age is also a class of another attribute"),
            std::string::npos);
}

}  // namespace in_labels_test
}  // namespace
