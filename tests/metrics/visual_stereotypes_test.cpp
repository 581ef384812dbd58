// Visual stereotypes (paper 000, ViSAGe) against the independent reference of
// tools/make_visual_stereotypes_fixtures.py on a hand-made case (tests/fixtures/
// visual_stereotypes/): an infinite theta (L(random) = 0), an undefined one, a
// single-stereotype identity, an identity missing from SeeGULL, duplicate runs, empty
// rows, majority ties, the authors' none-as-random L(random), caption salience and the
// stereotypical pull with its exact permutation test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/tensor/embeddings.h"
#include "vlbias/metrics/visual_stereotypes.h"

namespace vlbias {
namespace {
namespace in_visual_stereotypes_test {

using nlohmann::json;
using testing::HasSubstr;
using testing_util::error_of;

const std::string kDir = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/visual_stereotypes/";

const json& expected() {
  return testing_util::fixture_json("visual_stereotypes/expected.json");
}

// A reference value: null means NaN or infinite on our side.
void expect_value(const json& ref, double got, const std::string& what, double tol = 1e-12) {
  if (ref.is_null()) {
    EXPECT_FALSE(std::isfinite(got)) << what << ": reference null, got " << got;
  } else {
    EXPECT_NEAR(got, ref.get<double>(), tol * std::max(1.0, std::abs(ref.get<double>()))) << what;
  }
}

void expect_interval(const json& ref, const stats::Interval& got, const std::string& what) {
  expect_value(ref[0], got.lower, what + " lower");
  expect_value(ref[1], got.upper, what + " upper");
}

VisualAttributes visual() {
  return read_visual_attributes(kDir + "visual_attr.csv");
}
VisualStereotypes stereotypes() {
  return build_visual_stereotypes(read_table(kDir + "seegull.csv"), visual());
}

TEST(VisualStereotypes, VisualAttributesAndStereotypes) {
  const VisualAttributes v = visual();
  EXPECT_EQ(v.attributes, expected()["visual_attributes"].get<std::vector<std::string>>());
  EXPECT_EQ(v.rows, expected()["visual_counts"]["rows"].get<std::size_t>());
  EXPECT_EQ(v.distinct, expected()["visual_counts"]["distinct"].get<std::size_t>());
  EXPECT_EQ(v.repeated, expected()["visual_counts"]["repeated"].get<std::size_t>());
  const VisualStereotypes s = stereotypes();
  const json& ref = expected()["stereotypes"];
  ASSERT_EQ(s.by_identity.size(), ref.size());
  for (const auto& [id, list] : s.by_identity) {
    ASSERT_TRUE(ref.contains(id)) << id;
    ASSERT_EQ(list.size(), ref[id].size()) << id;
    for (std::size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ(list[i].attribute, ref[id][i][0].get<std::string>());
      expect_value(ref[id][i][1], list[i].offensiveness, id + " " + list[i].attribute);
    }
  }
  const json& c = expected()["stereotype_counts"];
  EXPECT_EQ(s.seegull_rows, c["seegull_rows"].get<std::size_t>());
  EXPECT_EQ(s.stereotype_rows, c["stereotype_rows"].get<std::size_t>());
  EXPECT_EQ(s.visual_pairs, c["visual_pairs"].get<std::size_t>());
  EXPECT_EQ(s.offensiveness_from_merged, c["offensiveness_from_merged"].get<std::size_t>());
  EXPECT_EQ(s.attributes_used, c["attributes_used"].get<std::size_t>());
}

Annotations annotations(Aggregation a) {
  AnnotationOptions o;
  o.aggregation = a;
  return read_annotations(kDir + "annotations.csv", o);
}

TEST(VisualStereotypes, AnnotationRunsDuplicatesAndEmptyRows) {
  for (const auto& [name, agg] : {std::pair{"annotation", Aggregation::PerAnnotation},
                                  std::pair{"majority", Aggregation::Majority}}) {
    const Annotations a = annotations(agg);
    const json& ref = expected()["annotations"][name];
    EXPECT_EQ(a.rows, ref["rows"].get<std::size_t>()) << name;
    EXPECT_EQ(a.empty_rows, ref["empty_rows"].get<std::size_t>()) << name;
    EXPECT_EQ(a.runs, ref["runs"].get<std::size_t>()) << name;
    EXPECT_EQ(a.duplicate_runs, ref["duplicate_runs"].get<std::size_t>()) << name;
    EXPECT_EQ(a.duplicate_rows, ref["duplicate_rows"].get<std::size_t>()) << name;
    EXPECT_EQ(a.judgements.size(), ref["judgements"].get<std::size_t>()) << name;
    EXPECT_EQ(a.images, ref["images"].get<std::vector<std::string>>()) << name;
    EXPECT_EQ(a.identities, ref["identities"].get<std::vector<std::string>>()) << name;
  }
}

class Likelihood : public testing::TestWithParam<const char*> {};

TEST_P(Likelihood, MatchesReference) {
  const json& ref = expected()["likelihood"][GetParam()];
  const json& opt = ref["options"];
  const Annotations a = annotations(opt["aggregation"] == "majority" ? Aggregation::Majority
                                                                     : Aggregation::PerAnnotation);
  LikelihoodOptions o;
  o.none_as_random = opt["none_as_random"].get<bool>();
  o.min_stereotypes = opt["min_stereotypes"].get<std::size_t>();
  o.bootstrap = opt["bootstrap"].get<std::size_t>();
  o.ci = opt["ci"].get<double>();
  o.seed = opt["seed"].get<std::uint64_t>();
  const LikelihoodReport rep = visual_likelihood(a, stereotypes(), o);

  ASSERT_EQ(rep.attributes.size(), ref["attributes"].size());
  for (std::size_t i = 0; i < rep.attributes.size(); ++i) {
    const AttributeLikelihood& x = rep.attributes[i];
    const json& r = ref["attributes"][i];
    const std::string what = a.identities[x.identity] + "/" + a.attributes[x.attribute];
    EXPECT_EQ(a.identities[x.identity], r[0].get<std::string>()) << what;
    EXPECT_EQ(a.attributes[x.attribute], r[1].get<std::string>()) << what;
    EXPECT_EQ(to_string(x.role), r[2].get<std::string>()) << what;
    EXPECT_EQ(x.k, r[3].get<std::size_t>()) << what;
    EXPECT_EQ(x.n, r[4].get<std::size_t>()) << what;
    EXPECT_EQ(x.images, r[5].get<std::size_t>()) << what;
    expect_value(r[6], x.likelihood, what);
  }
  ASSERT_EQ(rep.identities.size(), ref["identities"].size());
  for (std::size_t i = 0; i < rep.identities.size(); ++i) {
    const IdentityLikelihood& x = rep.identities[i];
    const json& r = ref["identities"][i];
    const std::string id = a.identities[x.identity];
    ASSERT_EQ(id, r["identity"].get<std::string>());
    EXPECT_EQ(x.visual_stereotypes, r["visual_stereotypes"].get<std::size_t>()) << id;
    EXPECT_EQ(x.shown_stereotypes, r["shown_stereotypes"].get<std::size_t>()) << id;
    EXPECT_EQ(x.shown_random, r["shown_random"].get<std::size_t>()) << id;
    EXPECT_EQ(x.images, r["images"].get<std::size_t>()) << id;
    EXPECT_EQ(x.present_stereotypes, r["present_stereotypes"].get<std::size_t>()) << id;
    EXPECT_EQ(x.included, r["included"].get<bool>()) << id;
    EXPECT_EQ(to_string(x.status), r["status"].get<std::string>()) << id;
    expect_value(r["l_stereo"], x.l_stereo, id + " L(stereo)");
    expect_value(r["l_random"], x.l_random, id + " L(random)");
    expect_value(r["theta"], x.theta, id + " theta");
    expect_value(r["offensiveness"], x.offensiveness, id + " O");
    expect_value(r["mean_offensiveness"], x.mean_offensiveness, id + " mean offensiveness");
    expect_interval(r["ci_l_stereo"], x.ci_l_stereo, id + " CI L(stereo)");
    expect_interval(r["ci_l_random"], x.ci_l_random, id + " CI L(random)");
    expect_interval(r["ci_theta"], x.ci_theta, id + " CI theta");
    expect_interval(r["ci_offensiveness"], x.ci_offensiveness, id + " CI O");
  }
  const json& p = ref["pooled"];
  EXPECT_EQ(rep.pooled.identities, p["identities"].get<std::size_t>());
  EXPECT_EQ(rep.pooled.finite, p["finite"].get<std::size_t>());
  EXPECT_EQ(rep.pooled.infinite, p["infinite"].get<std::size_t>());
  EXPECT_EQ(rep.pooled.undefined, p["undefined"].get<std::size_t>());
  expect_value(p["ratio"], rep.pooled.ratio, "pooled ratio");
  expect_value(p["mean_finite_theta"], rep.pooled.mean_finite_theta, "mean finite theta");
  expect_value(p["median_theta"], rep.pooled.median_theta, "median theta");
  expect_interval(p["ci_ratio"], rep.pooled.ci_ratio, "pooled ratio CI");
}

INSTANTIATE_TEST_SUITE_P(Configs, Likelihood,
                         testing::Values("annotation", "majority", "none_as_random"));

TEST(VisualStereotypes, InfiniteAndUndefinedThetaAreTheirOwnStatus) {
  // The reference case holds both (a hand check that the fixture covers them).
  LikelihoodOptions o;
  o.bootstrap = 0;
  const LikelihoodReport rep =
      visual_likelihood(annotations(Aggregation::PerAnnotation), stereotypes(), o);
  std::size_t inf = 0, undef = 0, excluded = 0;
  for (const IdentityLikelihood& x : rep.identities) {
    inf += x.status == ThetaStatus::Infinite ? 1 : 0;
    undef += x.status == ThetaStatus::Undefined ? 1 : 0;
    excluded += x.included ? 0 : 1;
    if (x.status == ThetaStatus::Infinite) {
      EXPECT_EQ(x.l_random, 0.0);
      EXPECT_GT(x.l_stereo, 0.0);
      EXPECT_TRUE(std::isinf(x.theta));
    }
  }
  EXPECT_GE(inf, 1u);
  EXPECT_GE(undef, 1u);
  EXPECT_GE(excluded, 1u);
}

TEST(VisualStereotypes, CaptionSalience) {
  const json& ref = expected()["salience"];
  CaptionOptions o;
  o.smoothing = ref["options"]["smoothing"].get<double>();
  o.top = ref["options"]["top"].get<std::size_t>();
  const SalienceReport rep =
      caption_salience(read_table(kDir + "captions.csv"), visual(), stereotypes(), o);
  EXPECT_EQ(rep.identities, ref["identities"].get<std::vector<std::string>>());
  EXPECT_EQ(rep.captions_per_identity,
            ref["captions_per_identity"].get<std::vector<std::size_t>>());
  EXPECT_EQ(rep.captions, ref["captions"].get<std::size_t>());
  EXPECT_EQ(rep.vocabulary, ref["vocabulary"].get<std::size_t>());
  ASSERT_EQ(rep.entries.size(), ref["entries"].size());
  for (std::size_t i = 0; i < rep.entries.size(); ++i) {
    const SalienceEntry& x = rep.entries[i];
    const json& r = ref["entries"][i];
    const std::string what = x.identity + "/" + x.attribute;
    EXPECT_EQ(x.identity, r[0].get<std::string>()) << i;
    EXPECT_EQ(x.attribute, r[1].get<std::string>()) << i;
    EXPECT_EQ(x.count, r[2].get<std::size_t>()) << what;
    EXPECT_EQ(x.captions, r[3].get<std::size_t>()) << what;
    expect_value(r[4], x.tf, what + " tf");
    expect_value(r[5], x.idf, what + " idf");
    expect_value(r[6], x.salience, what + " salience");
    EXPECT_EQ(x.stereotype, r[7].get<bool>()) << what;
    EXPECT_EQ(x.rank, r[8].get<std::size_t>()) << what;
  }
}

TEST(VisualStereotypes, StereotypicalPull) {
  const json& ref = expected()["pull"];
  PullOptions o;
  o.permutations = ref["options"]["permutations"].get<std::size_t>();
  o.seed = ref["options"]["seed"].get<std::uint64_t>();
  const Matrix x = read_embeddings(kDir + "pull.npy");
  const PullReport rep = stereotypical_pull(read_table(kDir + "pull.csv"), x, o);
  EXPECT_EQ(rep.positive, ref["positive"].get<std::size_t>());
  EXPECT_EQ(rep.tested, ref["tested"].get<std::size_t>());
  ASSERT_EQ(rep.identities.size(), ref["identities"].size());
  for (std::size_t i = 0; i < rep.identities.size(); ++i) {
    const IdentityPull& p = rep.identities[i];
    const json& r = ref["identities"][i];
    ASSERT_EQ(p.identity, r["identity"].get<std::string>());
    EXPECT_EQ(p.n_default, r["n_default"].get<std::size_t>());
    EXPECT_EQ(p.n_stereo, r["n_stereo"].get<std::size_t>());
    EXPECT_EQ(p.n_nonstereo, r["n_nonstereo"].get<std::size_t>());
    for (const auto& [key, got] :
         {std::pair{"s_d_s", p.s_d_s}, std::pair{"s_d_ns", p.s_d_ns}, std::pair{"s_s_ns", p.s_s_ns},
          std::pair{"mean_similarity", p.mean_similarity}, std::pair{"pull", p.pull},
          std::pair{"p_value", p.test.p_value}, std::pair{"p_holm", p.p_holm},
          std::pair{"p_bh", p.p_bh}}) {
      expect_value(r[key], got, p.identity + " " + key, 1e-9);
    }
    // Within-set similarities: the reference leaves them out for an incomplete identity.
    if (!r["pull"].is_null()) {
      expect_value(r["s_d_d"], p.s_d_d, p.identity + " s_d_d", 1e-9);
      expect_value(r["s_s_s"], p.s_s_s, p.identity + " s_s_s", 1e-9);
      expect_value(r["s_ns_ns"], p.s_ns_ns, p.identity + " s_ns_ns", 1e-9);
      EXPECT_EQ(p.test.method, r["method"].get<std::string>());
    }
  }
}

TEST(VisualStereotypes, PromptManifest) {
  const VisualAttributes v = visual();
  const VisualStereotypes s = stereotypes();
  VisualPromptOptions o;
  o.min_stereotypes = 2;
  const Table t = visual_stereotype_prompts(s, v, o);
  std::size_t detection = 0, stereo = 0, nonstereo = 0, defaults = 0;
  const Column& set = t.column("set");
  const Column& text = t.column("text");
  const Column& id = t.column("identity");
  const Column& attr = t.column("attribute");
  for (std::size_t r = 0; r < t.rows; ++r) {
    const std::string k = set.text(r);
    detection += k == "detection";
    defaults += k == "default";
    stereo += k == "stereotypical";
    nonstereo += k == "non-stereotypical";
    if (k == "non-stereotypical") {
      EXPECT_EQ(s.find(id.text(r), attr.text(r)), nullptr) << text.text(r);
      EXPECT_TRUE(v.contains(attr.text(r))) << text.text(r);
    }
    if (k == "stereotypical") {
      EXPECT_NE(s.find(id.text(r), attr.text(r)), nullptr);
    }
  }
  const std::size_t ids = s.identities_with_at_least(2);
  EXPECT_EQ(detection, 3 * ids);
  EXPECT_EQ(defaults, ids);
  EXPECT_EQ(nonstereo, stereo);  // as many non-stereotypical as stereotypical per identity
  // The paper's templates verbatim, and a/an by the next word.
  EXPECT_EQ(text.text(0), "a photo of " + id.text(0) + " person");
  EXPECT_EQ(std::string(indefinite_article("Indian")), "an");
  EXPECT_EQ(std::string(indefinite_article("Mexican")), "a");
  EXPECT_EQ(std::string(indefinite_article("United States")), "a");
  EXPECT_EQ(std::string(indefinite_article("Ugandan")), "an");
  // Deterministic for a seed.
  const Table again = visual_stereotype_prompts(s, v, o);
  for (std::size_t r = 0; r < t.rows; ++r) EXPECT_EQ(text.text(r), again.column("text").text(r));
}

TEST(VisualStereotypes, IdentityFromImageName) {
  EXPECT_EQ(identity_from_image_name("/cns/x/visual_annotation_full_set/Mexican5.png"), "Mexican");
  EXPECT_EQ(identity_from_image_name("New Zealand12.png"), "New Zealand");
  EXPECT_EQ(identity_from_image_name("C:\\imgs\\Indian_3.jpg"), "Indian");
  EXPECT_EQ(identity_from_image_name("United KingdomUK2.png"), "United KingdomUK");
  EXPECT_THAT(error_of<InputError>([] { identity_from_image_name("/a/b/12.png"); }),
              HasSubstr("cannot tell the identity"));
}

// ---------------------------------------------------------------- bad input

Table csv(const std::string& text) {
  return parse_csv(text, "t.csv");
}

TEST(VisualStereotypesErrors, Annotations) {
  const std::string head = "worker_id,img_path,attribute,present,coords\n";
  EXPECT_THAT(error_of<InputError>(
                  [&] { annotations_from_table(csv(head + "A0,a/Mexican1.png,poor,maybe,[]\n")); }),
              AllOf(HasSubstr("line 2"), HasSubstr("'maybe'"), HasSubstr("yes/no")));
  EXPECT_THAT(error_of<InputError>(
                  [&] { annotations_from_table(csv(head + "A0,a/Mexican1.png,,no,[]\n")); }),
              AllOf(HasSubstr("line 2"), HasSubstr("attribute cell is empty")));
  EXPECT_THAT(error_of<InputError>([&] { annotations_from_table(csv(head + "A0,,,yes,[]\n")); }),
              HasSubstr("no annotation rows"));
  EXPECT_THAT(error_of<InputError>([&] { annotations_from_table(csv(head)); }),
              HasSubstr("no annotation rows"));
  EXPECT_THAT(error_of<InputError>([&] {
                annotations_from_table(csv("worker_id,image,attribute,present\nA0,x.png,a,no\n"));
              }),
              AllOf(HasSubstr("no column 'img_path'"), HasSubstr("image")));
  AnnotationOptions o;
  o.identity_column = "identity";
  EXPECT_THAT(error_of<InputError>([&] {
                annotations_from_table(csv("worker_id,img_path,attribute,present,identity\n"
                                           "A0,x.png,a,no,Mexican\nA1,x.png,b,no,Indian\n"),
                                       o);
              }),
              HasSubstr("labelled 'Indian' here and 'Mexican' before"));
}

TEST(VisualStereotypesErrors, SeegullAndVisualAttributes) {
  EXPECT_THAT(error_of<InputError>([] { visual_attributes_from_table(csv("attribute\n")); }),
              HasSubstr("has no rows"));
  EXPECT_THAT(error_of<InputError>([] { visual_attributes_from_table(csv("name\nx\n")); }),
              HasSubstr("no column 'attribute'"));
  const VisualAttributes v = visual_attributes_from_table(csv("attribute\nsombrero\n"));
  EXPECT_THAT(error_of<InputError>([&] {
                build_visual_stereotypes(csv("identity,attribute\nMexican,sombrero\n"), v);
              }),
              HasSubstr("no column 'NA_stereo'"));
  EXPECT_THAT(error_of<InputError>([&] {
                build_visual_stereotypes(csv("identity,attribute,NA_stereo\nMexican,sombrero,3\n"),
                                         v);
              }),
              HasSubstr("has no offensiveness"));
  EXPECT_THAT(error_of<InputError>([&] {
                build_visual_stereotypes(csv("identity,attribute,NA_stereo,Annotation1\n"
                                             "Mexican,sombrero,3,1\nMexican,sombrero,2,2\n"),
                                         v);
              }),
              HasSubstr("appears twice"));
  EXPECT_THAT(error_of<InputError>([&] {
                build_visual_stereotypes(csv("identity,attribute,NA_stereo\nMexican,sombrero,x\n"),
                                         v);
              }),
              HasSubstr("NA_stereo"));
}

TEST(VisualStereotypesErrors, PullEmbeddings) {
  const Table t = csv("identity,set\nA,default\nA,s\nA,ns\n");
  const auto matrix = [](std::size_t rows, std::vector<float> v) {
    Matrix m(rows, 2);
    m.data = std::move(v);
    return m;
  };
  const Matrix ok = matrix(3, {1, 0, 0, 1, 1, 1});
  const Matrix zero = matrix(3, {1, 0, 0, 0, 1, 1});
  const Matrix nan = matrix(3, {1, 0, std::nanf(""), 1, 1, 1});
  const Matrix short_rows = matrix(2, {1, 0, 0, 1});
  EXPECT_NO_THROW(stereotypical_pull(t, ok));
  EXPECT_THAT(error_of<InputError>([&] { stereotypical_pull(t, zero); }), HasSubstr("all zeros"));
  EXPECT_THAT(error_of<InputError>([&] { stereotypical_pull(t, nan); }), HasSubstr("non-finite"));
  EXPECT_THAT(error_of<InputError>([&] { stereotypical_pull(t, short_rows); }),
              HasSubstr("3 rows but the embeddings have 2"));
  EXPECT_THAT(error_of<InputError>([&] {
                stereotypical_pull(csv("identity,set\nA,default\nA,stereo-ish\nA,ns\n"), ok);
              }),
              HasSubstr("'stereo-ish'"));
}

TEST(VisualStereotypesErrors, Regions) {
  EXPECT_NO_THROW(read_regions(""));
  const auto builtin = read_regions("");
  EXPECT_EQ(builtin.at("Mexican"), "Latin America and the Caribbean");
  EXPECT_EQ(builtin.at("Togolese"), "Sub-Saharan Africa");
}

}  // namespace in_visual_stereotypes_test
}  // namespace
}  // namespace vlbias
