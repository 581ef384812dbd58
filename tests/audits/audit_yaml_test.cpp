// The YAML audit spec parser (src/audits/audit_yaml.cpp, dual_encoder_audit_yaml.cpp) against
// the contract in include/vlbias/audits/audit.h and dual_encoder_audit.h. No numeric reference
// is involved: the expected values are the literal values written in each spec, and the defaults
// the header documents.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "vlbias/audits/audit.h"
#include "vlbias/core/error.h"

namespace vlbias {
namespace {
namespace in_audit_yaml_test {

namespace fs = std::filesystem;

const std::string kMinimal =
    "kind: social-perception\n"
    "images: {table: images.csv, embeddings: images.npy}\n"
    "prompts: {manifest: prompts.csv, embeddings: prompts.npy}\n"
    "factors: {groups: [race, gender]}\n";

AuditSpec parse(const std::string& yaml, const fs::path& base = "/data/run") {
  return parse_audit_spec(yaml, base, "spec.yaml");
}

// Parses `yaml`, expecting a UsageError whose message holds every needle.
void expect_usage(const std::string& yaml, const std::vector<std::string>& needles) {
  SCOPED_TRACE(yaml.substr(0, 300));
  try {
    parse(yaml);
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("spec.yaml"), std::string::npos) << msg;
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << n << " in: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

TEST(AuditSpec, KindNames) {
  EXPECT_STREQ(to_string(AuditKind::SocialPerception), "social-perception");
  EXPECT_STREQ(to_string(AuditKind::TraitPairs), "trait-pairs");
}

TEST(AuditSpec, FullSpecFillsEveryField) {
  const std::string yaml = R"(
version: 1
kind: trait-pairs
seed: 18446744073709551615
min_group_size: 10
images:
  table: images.csv
  embeddings: emb/images.safetensors
  tensor: image_embeds
  id_column: id
  index: /abs/image_ids.csv
prompts:
  manifest: prompts.csv
  embeddings: prompts.safetensors
  tensor: text_embeds
factors:
  groups: [race, gender]
  ordinal: {age: 1.1, smiling: 0}
  categorical: [lighting, pose, seed]
analyses:
  association: {bootstrap: 500, ci: 0.9}
  scweat: {p_test: sign-flip, permutations: 2000, groupings: [race, [race, gender]]}
  markedness: {attributes: [gender], bootstrap: 300, ci: 0.8}
  ranking: {k: 50, attributes: [race], desired: base-rate, absent: zero}
  absdiff: {pairs: 77, factors: [age, lighting, race]}
  trends: {x: [smiling], fit_to: images, degree: 5}
  ellipses: {points_by: smiling, k_sigma: 1.5}
  confidence: {scale: logit, logit_scale: 50, bootstrap: 99, ci: 0.99,
               across: gender, within: race, test_across: kruskal, test_within: mannwhitney}
)";
  const AuditSpec s = parse(yaml, "/data/run");
  EXPECT_EQ(s.spec_path, fs::path());
  EXPECT_EQ(s.kind, AuditKind::TraitPairs);
  EXPECT_EQ(s.seed, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(s.min_group_size, 10u);
  EXPECT_EQ(s.dual_encoder().image_table, fs::path("/data/run/images.csv"));
  EXPECT_EQ(s.dual_encoder().image_embeddings.path, fs::path("/data/run/emb/images.safetensors"));
  EXPECT_EQ(s.dual_encoder().image_embeddings.tensor, "image_embeds");
  EXPECT_EQ(s.dual_encoder().image_id_column, "id");
  EXPECT_EQ(s.dual_encoder().image_index, fs::path("/abs/image_ids.csv"));
  EXPECT_EQ(s.dual_encoder().prompt_manifest, fs::path("/data/run/prompts.csv"));
  EXPECT_EQ(s.dual_encoder().prompt_embeddings.path, fs::path("/data/run/prompts.safetensors"));
  EXPECT_EQ(s.dual_encoder().prompt_embeddings.tensor, "text_embeds");
  EXPECT_EQ(s.dual_encoder().group_factors, (std::vector<std::string>{"race", "gender"}));
  ASSERT_EQ(s.dual_encoder().ordinal_factors.size(), 2u);
  EXPECT_EQ(s.dual_encoder().ordinal_factors[0].first, "age");
  EXPECT_DOUBLE_EQ(s.dual_encoder().ordinal_factors[0].second, 1.1);
  EXPECT_EQ(s.dual_encoder().ordinal_factors[1].first, "smiling");
  EXPECT_DOUBLE_EQ(s.dual_encoder().ordinal_factors[1].second, 0.0);
  EXPECT_EQ(s.dual_encoder().categorical_factors,
            (std::vector<std::string>{"lighting", "pose", "seed"}));

  for (const AnalysisToggle* t :
       {&s.dual_encoder().association.toggle, &s.dual_encoder().scweat.toggle,
        &s.dual_encoder().markedness.toggle, &s.dual_encoder().ranking.toggle,
        &s.dual_encoder().absdiff.toggle, &s.dual_encoder().trends.toggle,
        &s.dual_encoder().ellipses.toggle, &s.dual_encoder().confidence.toggle}) {
    EXPECT_TRUE(t->enabled);
    EXPECT_TRUE(t->explicit_);
  }
  EXPECT_EQ(s.dual_encoder().association.bootstrap, 500u);
  EXPECT_DOUBLE_EQ(s.dual_encoder().association.ci, 0.9);
  EXPECT_EQ(s.dual_encoder().scweat.p_test, "sign-flip");
  EXPECT_EQ(s.dual_encoder().scweat.permutations, 2000u);
  EXPECT_EQ(s.dual_encoder().scweat.groupings,
            (std::vector<std::vector<std::string>>{{"race"}, {"race", "gender"}}));
  EXPECT_EQ(s.dual_encoder().markedness.attributes, (std::vector<std::string>{"gender"}));
  EXPECT_EQ(s.dual_encoder().markedness.bootstrap, 300u);
  EXPECT_DOUBLE_EQ(s.dual_encoder().markedness.ci, 0.8);
  EXPECT_EQ(s.dual_encoder().ranking.k, 50u);
  EXPECT_EQ(s.dual_encoder().ranking.attributes, (std::vector<std::string>{"race"}));
  EXPECT_EQ(s.dual_encoder().ranking.desired, "base-rate");
  EXPECT_EQ(s.dual_encoder().ranking.absent, "zero");
  EXPECT_EQ(s.dual_encoder().absdiff.pairs, 77u);
  EXPECT_EQ(s.dual_encoder().absdiff.factors,
            (std::vector<std::string>{"age", "lighting", "race"}));
  EXPECT_EQ(s.dual_encoder().trends.x, (std::vector<std::string>{"smiling"}));
  EXPECT_EQ(s.dual_encoder().trends.fit_to, "images");
  EXPECT_EQ(s.dual_encoder().trends.degree, 5);
  EXPECT_EQ(s.dual_encoder().ellipses.points_by, "smiling");
  EXPECT_DOUBLE_EQ(s.dual_encoder().ellipses.k_sigma, 1.5);
  EXPECT_EQ(s.dual_encoder().confidence.scale, "logit");
  EXPECT_DOUBLE_EQ(s.dual_encoder().confidence.logit_scale, 50.0);
  EXPECT_EQ(s.dual_encoder().confidence.bootstrap, 99u);
  EXPECT_DOUBLE_EQ(s.dual_encoder().confidence.ci, 0.99);
  EXPECT_EQ(s.dual_encoder().confidence.across, "gender");
  EXPECT_EQ(s.dual_encoder().confidence.within, "race");
  EXPECT_EQ(s.dual_encoder().confidence.test_across, "kruskal");
  EXPECT_EQ(s.dual_encoder().confidence.test_within, "mannwhitney");
}

TEST(AuditSpec, MinimalSpecGetsDefaults) {
  const AuditSpec s = parse(kMinimal);
  const AuditSpec d;  // the header's defaults
  EXPECT_EQ(s.kind, AuditKind::SocialPerception);
  EXPECT_EQ(s.seed, 0u);
  EXPECT_EQ(s.min_group_size, 2u);
  EXPECT_EQ(s.dual_encoder().image_embeddings.tensor, "");
  EXPECT_EQ(s.dual_encoder().image_id_column, "");
  EXPECT_EQ(s.dual_encoder().image_index, fs::path());
  EXPECT_EQ(s.dual_encoder().prompt_embeddings.tensor, "");
  EXPECT_TRUE(s.dual_encoder().ordinal_factors.empty());
  EXPECT_TRUE(s.dual_encoder().categorical_factors.empty());
  for (const AnalysisToggle* t :
       {&s.dual_encoder().association.toggle, &s.dual_encoder().scweat.toggle,
        &s.dual_encoder().markedness.toggle, &s.dual_encoder().ranking.toggle,
        &s.dual_encoder().absdiff.toggle, &s.dual_encoder().trends.toggle,
        &s.dual_encoder().ellipses.toggle, &s.dual_encoder().confidence.toggle}) {
    EXPECT_TRUE(t->enabled);
    EXPECT_FALSE(t->explicit_);
  }
  EXPECT_EQ(s.dual_encoder().association.bootstrap, 1000u);
  EXPECT_DOUBLE_EQ(s.dual_encoder().association.ci, 0.95);
  EXPECT_EQ(s.dual_encoder().scweat.p_test, "permutation");
  EXPECT_EQ(s.dual_encoder().scweat.permutations, 10000u);
  EXPECT_TRUE(s.dual_encoder().scweat.groupings.empty());
  EXPECT_TRUE(s.dual_encoder().markedness.attributes.empty());
  EXPECT_EQ(s.dual_encoder().ranking.k, 1000u);
  EXPECT_EQ(s.dual_encoder().ranking.desired, "uniform");
  EXPECT_EQ(s.dual_encoder().ranking.absent, "-inf");
  EXPECT_EQ(s.dual_encoder().absdiff.pairs, 1000u);
  EXPECT_TRUE(s.dual_encoder().absdiff.factors.empty());
  EXPECT_TRUE(s.dual_encoder().trends.x.empty());
  EXPECT_EQ(s.dual_encoder().trends.fit_to, "means");
  EXPECT_EQ(s.dual_encoder().trends.degree, 2);
  EXPECT_EQ(s.dual_encoder().ellipses.points_by, "");
  EXPECT_DOUBLE_EQ(s.dual_encoder().ellipses.k_sigma, 2.0);
  EXPECT_EQ(s.dual_encoder().confidence.scale, "raw");
  EXPECT_DOUBLE_EQ(s.dual_encoder().confidence.logit_scale, 100.0);
  EXPECT_EQ(s.dual_encoder().confidence.across, "");
  EXPECT_EQ(s.dual_encoder().confidence.within, "");
  EXPECT_EQ(s.dual_encoder().confidence.test_across, "anova");
  EXPECT_EQ(s.dual_encoder().confidence.test_within, "welch");
  EXPECT_EQ(s.dual_encoder().confidence.bootstrap, d.dual_encoder().confidence.bootstrap);
}

TEST(AuditSpec, TogglesTrueFalseAndAbsent) {
  const AuditSpec s =
      parse(kMinimal + "analyses:\n  scweat: false\n  ranking: true\n  trends: {degree: 1}\n");
  EXPECT_FALSE(s.dual_encoder().scweat.toggle.enabled);
  EXPECT_TRUE(s.dual_encoder().scweat.toggle.explicit_);
  EXPECT_TRUE(s.dual_encoder().ranking.toggle.enabled);
  EXPECT_TRUE(s.dual_encoder().ranking.toggle.explicit_);
  EXPECT_EQ(s.dual_encoder().ranking.k, 1000u);
  EXPECT_TRUE(s.dual_encoder().trends.toggle.enabled);
  EXPECT_TRUE(s.dual_encoder().trends.toggle.explicit_);
  EXPECT_EQ(s.dual_encoder().trends.degree, 1);
  EXPECT_TRUE(s.dual_encoder().association.toggle.enabled);
  EXPECT_FALSE(s.dual_encoder().association.toggle.explicit_);
}

TEST(AuditSpec, RelativePathsResolveAgainstBaseDir) {
  const std::string yaml =
      "kind: social-perception\n"
      "images: {table: ./data/../images.csv, embeddings: /abs/images.npy, id_column: id,\n"
      "         index: ids/index.csv}\n"
      "prompts: {manifest: prompts.csv, embeddings: sub/prompts.npy}\n"
      "factors: {groups: [race]}\n";
  const AuditSpec s = parse(yaml, "/base/dir");
  EXPECT_EQ(s.dual_encoder().image_table, fs::path("/base/dir/images.csv"));
  EXPECT_EQ(s.dual_encoder().image_embeddings.path, fs::path("/abs/images.npy"));
  EXPECT_EQ(s.dual_encoder().image_index, fs::path("/base/dir/ids/index.csv"));
  EXPECT_EQ(s.dual_encoder().prompt_manifest, fs::path("/base/dir/prompts.csv"));
  EXPECT_EQ(s.dual_encoder().prompt_embeddings.path, fs::path("/base/dir/sub/prompts.npy"));
  // An empty base keeps relative paths relative (to the working folder).
  EXPECT_EQ(parse(yaml, "").dual_encoder().image_table, fs::path("images.csv"));
}

TEST(AuditSpec, LoadResolvesAgainstTheSpecFolder) {
  const fs::path dir =
      fs::temp_directory_path() / ("vlbias_audit_spec_" + std::to_string(::getpid())) / "specs";
  fs::create_directories(dir);
  const fs::path file = dir / "audit.yaml";
  { std::ofstream(file) << kMinimal; }
  const AuditSpec s = load_audit_spec(file);
  EXPECT_EQ(s.spec_path, file);
  EXPECT_EQ(s.dual_encoder().image_table, dir / "images.csv");
  EXPECT_EQ(s.dual_encoder().prompt_embeddings.path, dir / "prompts.npy");

  const fs::path empty = dir / "empty.yaml";
  { std::ofstream(empty) << "  \n"; }
  try {
    load_audit_spec(empty);
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("empty.yaml"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_audit_spec(dir / "missing.yaml"), InputError);
  EXPECT_THROW(load_audit_spec(dir), InputError);  // a folder
  // A parse error from a file names the file.
  const fs::path bad = dir / "bad.yaml";
  { std::ofstream(bad) << kMinimal << "sed: 3\n"; }
  try {
    load_audit_spec(bad);
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(bad.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 5"), std::string::npos) << msg;
  }
  fs::remove_all(dir.parent_path());
}

TEST(AuditSpec, MalformedYamlNamesSourceAndLine) {
  expect_usage(kMinimal + "analyses: {scweat: [unclosed\n", {"line", "malformed YAML"});
  expect_usage("kind: social-perception\n  bad indent: [\n", {"line 2", "malformed YAML"});
  expect_usage("a: 1\n---\nb: 2\n", {"one YAML document"});
  expect_usage("", {"one YAML document", "found none"});
  // yaml-cpp 0.7 would report endless empty documents here (found by fuzz_audit_spec).
  expect_usage(",'", {"one YAML document"});
}

TEST(AuditSpec, TopLevelMustBeAMap) {
  expect_usage("- kind\n- images\n", {"the top level must be a map", "kind"});
  expect_usage("just text\n", {"the top level must be a map"});
}

TEST(AuditSpec, UnknownKeysNameThePathAndAllowedKeys) {
  expect_usage(
      kMinimal + "analyses: {scweat: {permutatons: 10}}\n",
      {"line 5", "unknown key analyses.scweat.permutatons", "p_test, permutations, groupings"});
  expect_usage(kMinimal + "sed: 1\n", {"unknown key sed", "version, kind, title, about, seed"});
  expect_usage(kMinimal + "analyses: {scwaet: true}\n",
               {"unknown key analyses.scwaet", "association, scweat"});
  expect_usage(
      "kind: trait-pairs\nimages: {table: a, embeddings: b, tensr: x}\n"
      "prompts: {manifest: p, embeddings: q}\nfactors: {groups: [g]}\n",
      {"unknown key images.tensr", "table, embeddings, tensor, id_column, index"});
  expect_usage(
      "kind: trait-pairs\nimages: {table: a, embeddings: b}\n"
      "prompts: {manifest: p, embeddings: q}\nfactors: {groups: [g], ordinall: {}}\n",
      {"unknown key factors.ordinall", "groups, ordinal, categorical"});
  expect_usage(kMinimal + "kind: trait-pairs\n", {"duplicate key kind"});
  expect_usage(kMinimal + "[a, b]: 1\n", {"the top level has a key that is a list"});
}

TEST(AuditSpec, MissingRequiredKeys) {
  expect_usage(
      "images: {table: a, embeddings: b}\nprompts: {manifest: p, embeddings: q}\n"
      "factors: {groups: [g]}\n",
      {"missing required key kind"});
  expect_usage(
      "kind: trait-pairs\nimages: {embeddings: b}\nprompts: {manifest: p, embeddings: q}\n"
      "factors: {groups: [g]}\n",
      {"missing required key images.table"});
  expect_usage(
      "kind: trait-pairs\nimages: {table: a, embeddings: b}\nprompts: {manifest: p}\n"
      "factors: {groups: [g]}\n",
      {"missing required key prompts.embeddings"});
  expect_usage(
      "kind: trait-pairs\nimages: {table: a, embeddings: b}\n"
      "prompts: {manifest: p, embeddings: q}\nfactors: {ordinal: {age: 1}}\n",
      {"missing required key factors.groups"});
  expect_usage(
      "kind: trait-pairs\nimages: {table: a, embeddings: b}\n"
      "prompts: {manifest: p, embeddings: q}\n",
      {"missing required key factors"});
}

TEST(AuditSpec, IntegersAreCheckedWithThePath) {
  expect_usage(kMinimal + "analyses: {scweat: {permutations: 10.5}}\n",
               {"analyses.scweat.permutations", "must be an integer from 1 to 1000000", "'10.5'"});
  expect_usage(kMinimal + "analyses: {scweat: {permutations: \"10\"}}\n",
               {"analyses.scweat.permutations", "unquoted"});
  expect_usage(kMinimal + "min_group_size: -3\n", {"min_group_size must be non-negative"});
  expect_usage(kMinimal + "seed: 18446744073709551616\n", {"seed is out of range"});
  expect_usage(kMinimal + "seed: 1e3\n", {"seed must be a non-negative integer"});
  expect_usage(kMinimal + "seed: [1]\n", {"seed", "got a list"});
  expect_usage(kMinimal + "analyses: {absdiff: {pairs: 0}}\n",
               {"analyses.absdiff.pairs must be an integer from 1 to 10000000, got '0'"});
  expect_usage(kMinimal + "analyses: {ranking: {k: 0}}\n",
               {"analyses.ranking.k must be a positive integer"});
  expect_usage(kMinimal + "analyses: {association: {bootstrap: -1}}\n",
               {"analyses.association.bootstrap must be an integer from 0 to 1000000"});
  expect_usage(kMinimal + "analyses: {trends: {degree: 6}}\n",
               {"analyses.trends.degree must be 1 to 5"});
  expect_usage(kMinimal + "analyses: {trends: {degree: 0}}\n",
               {"analyses.trends.degree must be 1 to 5"});
  expect_usage(kMinimal + "analyses: {trends: {degree: 99999999999999999999999}}\n",
               {"analyses.trends.degree is out of range"});
}

TEST(AuditSpec, NumbersAreRangeChecked) {
  expect_usage(kMinimal + "analyses: {association: {ci: 1}}\n",
               {"analyses.association.ci must be a level in (0, 1)"});
  expect_usage(kMinimal + "analyses: {markedness: {ci: 0}}\n", {"analyses.markedness.ci"});
  expect_usage(kMinimal + "analyses: {confidence: {ci: .nan}}\n", {"analyses.confidence.ci"});
  expect_usage(kMinimal + "analyses: {confidence: {logit_scale: 0}}\n",
               {"analyses.confidence.logit_scale must be a finite number > 0"});
  expect_usage(kMinimal + "analyses: {confidence: {logit_scale: .inf}}\n",
               {"analyses.confidence.logit_scale must be a finite number > 0"});
  expect_usage(kMinimal + "analyses: {ellipses: {k_sigma: -1}}\n",
               {"analyses.ellipses.k_sigma must be a finite number > 0"});
  expect_usage(kMinimal + "analyses: {ellipses: {k_sigma: 1e400}}\n",
               {"analyses.ellipses.k_sigma must be a finite number"});
  expect_usage(kMinimal + "analyses: {ellipses: {k_sigma: two}}\n",
               {"analyses.ellipses.k_sigma must be a number", "'two'"});
  expect_usage(
      "kind: trait-pairs\nimages: {table: a, embeddings: b}\n"
      "prompts: {manifest: p, embeddings: q}\nfactors: {groups: [g], ordinal: {age: -0.5}}\n",
      {"factors.ordinal.age must be a finite number >= 0"});
  expect_usage(
      "kind: trait-pairs\nimages: {table: a, embeddings: b}\n"
      "prompts: {manifest: p, embeddings: q}\nfactors: {groups: [g], ordinal: {age: inf}}\n",
      {"factors.ordinal.age must be a number"});
}

TEST(AuditSpec, StringsAndListsAreTypeChecked) {
  expect_usage(kMinimal + "analyses: {ranking: {attributes: race}}\n",
               {"analyses.ranking.attributes must be a list of strings"});
  expect_usage(kMinimal + "analyses: {ranking: {attributes: [race, [gender]]}}\n",
               {"analyses.ranking.attributes[1] must be a string, got a list"});
  expect_usage(kMinimal + "analyses: {markedness: {attributes: []}}\n",
               {"analyses.markedness.attributes must be a non-empty list"});
  expect_usage(kMinimal + "analyses: {trends: {x: [age, age]}}\n",
               {"analyses.trends.x[1] repeats 'age'"});
  expect_usage(kMinimal + "analyses: {ellipses: {points_by: {a: 1}}}\n",
               {"analyses.ellipses.points_by must be a string, got a map"});
  expect_usage(kMinimal + "analyses: {confidence: {across: ~}}\n",
               {"analyses.confidence.across must be a string, got nothing"});
  expect_usage(
      "kind: trait-pairs\nimages: {table: \"\", embeddings: b}\n"
      "prompts: {manifest: p, embeddings: q}\nfactors: {groups: [g]}\n",
      {"images.table must be a non-empty string"});
  expect_usage(kMinimal + "analyses: [scweat]\n", {"analyses must be a map"});
}

TEST(AuditSpec, AnalysisTogglesAreBoolOrMap) {
  expect_usage(kMinimal + "analyses: {scweat: yes}\n",
               {"analyses.scweat must be true, false or a map", "'yes'"});
  expect_usage(kMinimal + "analyses: {scweat: \"false\"}\n",
               {"analyses.scweat must be true, false or a map"});
  expect_usage(kMinimal + "analyses: {trends: }\n",
               {"analyses.trends must be true, false or a map", "got nothing"});
}

TEST(AuditSpec, FactorsRolesAndShapes) {
  const std::string head =
      "kind: social-perception\nimages: {table: a, embeddings: b}\n"
      "prompts: {manifest: p, embeddings: q}\n";
  expect_usage(head + "factors: {groups: []}\n", {"factors.groups must be a non-empty list"});
  expect_usage(head + "factors: {groups: [race], ordinal: [age]}\n",
               {"factors.ordinal must be a map from column to AbsDiff threshold"});
  expect_usage(head + "factors: {groups: [race], categorical: {pose: 1}}\n",
               {"factors.categorical must be a list of strings"});
  expect_usage(head + "factors: {groups: [race, age], ordinal: {age: 1}}\n",
               {"factors.ordinal", "'age'", "factors.groups", "one role"});
  expect_usage(head + "factors: {groups: [race], ordinal: {age: 1}, categorical: [pose, age]}\n",
               {"factors.categorical", "'age'", "factors.ordinal"});
  expect_usage(head + "factors: {groups: [race], ordinal: {[a]: 1}}\n",
               {"factors.ordinal (a key) must be a string"});
  expect_usage(head + "factors: {groups: [race]}\nanalyses: {absdiff: {factors: [race, pose]}}\n",
               {"analyses.absdiff.factors[1]", "'pose'", "not listed under factors"});
}

TEST(AuditSpec, ScweatGroupings) {
  const AuditSpec s =
      parse(kMinimal + "analyses: {scweat: {groupings: [gender, [race, gender], [race]]}}\n");
  EXPECT_EQ(s.dual_encoder().scweat.groupings,
            (std::vector<std::vector<std::string>>{{"gender"}, {"race", "gender"}, {"race"}}));
  expect_usage(kMinimal + "analyses: {scweat: {groupings: race}}\n",
               {"analyses.scweat.groupings must be a non-empty list"});
  expect_usage(kMinimal + "analyses: {scweat: {groupings: [race, {a: b}]}}\n",
               {"analyses.scweat.groupings[1] must be a string, got a map"});
  expect_usage(kMinimal + "analyses: {scweat: {groupings: [[]]}}\n",
               {"analyses.scweat.groupings[0] must be a non-empty list"});
  expect_usage(kMinimal + "analyses: {scweat: {groupings: [[race, [gender]]]}}\n",
               {"analyses.scweat.groupings[0][1] must be a string, got a list"});
}

TEST(AuditSpec, ImagesIndexAndIdColumnGoTogether) {
  const std::string tail =
      "prompts: {manifest: p, embeddings: q}\nfactors: {groups: [g]}\nkind: trait-pairs\n";
  expect_usage("images: {table: a, embeddings: b, index: ids.csv}\n" + tail,
               {"images.index needs images.id_column"});
  expect_usage("images: {table: a, embeddings: b, id_column: id}\n" + tail,
               {"images.id_column needs images.index"});
}

TEST(AuditSpec, EnumValuesAreValidated) {
  expect_usage(
      "kind: social\nimages: {table: a, embeddings: b}\n"
      "prompts: {manifest: p, embeddings: q}\nfactors: {groups: [g]}\n",
      {"kind must be one of social-perception, trait-pairs", "'social'"});
  expect_usage(kMinimal + "analyses: {scweat: {p_test: exact}}\n",
               {"analyses.scweat.p_test must be one of permutation, sign-flip"});
  expect_usage(kMinimal + "analyses: {confidence: {scale: probit}}\n",
               {"analyses.confidence.scale must be one of raw, logit"});
  expect_usage(kMinimal + "analyses: {confidence: {test_across: ttest}}\n",
               {"analyses.confidence.test_across must be one of anova, welch, student, "
                "mannwhitney, kruskal"});
  expect_usage(kMinimal + "analyses: {confidence: {test_within: chi2}}\n",
               {"analyses.confidence.test_within must be one of"});
  expect_usage(kMinimal + "analyses: {trends: {fit_to: medians}}\n",
               {"analyses.trends.fit_to must be one of means, images"});
  expect_usage(kMinimal + "analyses: {ranking: {desired: parity}}\n",
               {"analyses.ranking.desired must be one of uniform, base-rate"});
  expect_usage(kMinimal + "analyses: {ranking: {absent: nan}}\n",
               {"analyses.ranking.absent must be one of -inf, zero"});
}

TEST(AuditSpec, Version) {
  EXPECT_NO_THROW(parse("version: 1\n" + kMinimal));
  expect_usage("version: 2\n" + kMinimal, {"version must be 1"});
  expect_usage("version: 1.0\n" + kMinimal, {"version must be a non-negative integer"});
}

TEST(AuditSpec, HostileInputIsRejectedCleanly) {
  // Deep nesting: flow and block styles.
  expect_usage(kMinimal + "analyses: " + std::string(100000, '[') + "\n", {"nested too deeply"});
  std::string block = kMinimal + "analyses:\n";
  for (int i = 0; i < 5000; ++i) block += "- ";
  expect_usage(block + "x\n", {"nested too deeply"});
  // Over the size cap.
  expect_usage(kMinimal + "# " + std::string(2 << 20, 'x') + "\n", {"at most"});
  // Aliases repeating a long list: stopped by the value budget, not by memory.
  std::string laughs =
      "kind: social-perception\n"
      "images: {table: a, embeddings: b}\nprompts: {manifest: p, embeddings: q}\n"
      "factors: {groups: &g [";
  for (int i = 0; i < 20000; ++i) laughs += fmt::format("c{},", i);
  laughs += "z]}\nanalyses: {scweat: {groupings: [";
  for (int i = 0; i < 200; ++i) laughs += "*g,";
  laughs += "*g]}}\n";
  expect_usage(laughs, {"analyses.scweat.groupings", "values"});
  // Undefined alias and binary junk.
  expect_usage(kMinimal + "seed: *nothing\n", {"malformed YAML"});
  expect_usage(std::string("\x00\xff\xfe kind: [\x01", 8), {"spec.yaml"});
}

TEST(AuditSpec, ZeroBootstrapMeansNoIntervals) {
  const AuditSpec s = parse_audit_spec(
      kMinimal + "analyses: {association: {bootstrap: 0}, markedness: {bootstrap: 0}}\n", "/base",
      "spec.yaml");
  EXPECT_EQ(s.dual_encoder().association.bootstrap, 0u);
  EXPECT_EQ(s.dual_encoder().markedness.bootstrap, 0u);
}

// Bytes that are not UTF-8 used to pass the loader and fail when results.json was written,
// after every analysis ran ("type_error.316", exit 1): every spec string is checked at load.
TEST(AuditSpec, TextThatIsNotUtf8IsRefusedNamingTheKey) {
  const std::string raw = "caf\xE9";  // Latin-1, not UTF-8
  expect_usage(kMinimal + "title: " + raw + "\n",
               {"line 5", "title is not valid UTF-8 (byte 4 is 0xE9)", "save the spec as UTF-8"});
  expect_usage(kMinimal + "about: \"" + raw + " \xFF\"\n", {"about is not valid UTF-8"});
  expect_usage("kind: social-perception\nimages: {table: " + raw +
                   ".csv, embeddings: i.npy}\n"
                   "prompts: {manifest: p.csv, embeddings: p.npy}\nfactors: {groups: [race]}\n",
               {"images.table is not valid UTF-8"});
  expect_usage(
      "kind: social-perception\nimages: {table: i.csv, embeddings: i.npy}\n"
      "prompts: {manifest: p.csv, embeddings: p.npy}\nfactors: {groups: [race, " +
          raw + "]}\n",
      {"factors.groups[1] is not valid UTF-8"});
  expect_usage("kind: geo-diversity\ntitle: " + raw +
                   "\nreal: {table: r.csv, features: r.npy}\n"
                   "generated: {table: g.csv, features: g.npy}\n",
               {"title is not valid UTF-8"});
  // Valid UTF-8 of every length is kept as written.
  const AuditSpec s = parse(kMinimal + "title: \"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"\n");
  EXPECT_EQ(s.title, "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
}

// A misspelled kind used to fall back to the social-perception keys and report the first key
// those do not allow ("unknown key real"): the kind is checked first.
TEST(AuditSpec, UnknownKindIsNamedWithTheKindsAndANearMiss) {
  const std::string geo_body =
      "real: {table: r.csv, features: r.npy}\ngenerated: {table: g.csv, features: g.npy}\n";
  try {
    parse("kind: geo-diversty\n" + geo_body);
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "spec.yaml line 1: kind must be one of social-perception, trait-pairs, "
              "geo-diversity, lvlm-counterfactual, visual-stereotypes, representation, got "
              "'geo-diversty', which "
              "is not a kind of audit (did you mean 'geo-diversity'?).");
  }
  expect_usage("kind: lvlm\ngenerations: g.jsonl\n", {"got 'lvlm'", "'lvlm-counterfactual'?"});
  expect_usage("kind: Visual-Stereotypes\nseegull: s.csv\n", {"'visual-stereotypes'?"});
  expect_usage("kind: banana\n" + geo_body, {"got 'banana', which is not a kind of audit."});
  expect_usage("kind: [geo-diversity]\n" + geo_body, {"kind must be a string"});
  expect_usage(geo_body, {"missing required key kind", "one of social-perception"});
}

// A resampling count of 10^12 used to be accepted and end in "out of memory" (exit 1) once
// the analyses started: every count of every kind has a range, given in the message.
TEST(AuditSpec, ResamplingCountsAreBoundedWithTheRangeInTheMessage) {
  const std::string social = kMinimal;
  const std::string trait =
      "kind: trait-pairs\nimages: {table: i.csv, embeddings: i.npy}\n"
      "prompts: {manifest: p.csv, embeddings: p.npy}\nfactors: {groups: [race]}\n";
  const std::string geo =
      "kind: geo-diversity\nreal: {table: r.csv, features: r.npy}\n"
      "generated: {table: g.csv, features: g.npy}\n";
  const std::string lvlm =
      "kind: lvlm-counterfactual\ngenerations: g.jsonl\n"
      "columns: {set_key: [s], group: [race], scores: [tox], by: [m]}\n";
  const std::string visual =
      "kind: visual-stereotypes\nseegull: s.csv\nvisual_attributes: v.csv\n"
      "annotations: {table: a.csv}\npull: {table: p.csv, embeddings: p.npy}\n";
  struct Case {
    std::string head, analyses, key, range, over, max;
  };
  const std::string boot = "from 0 to 1000000 (0: no intervals)";
  const std::string perm = "from 1 to 1000000";
  const std::string m = "1000000", m1 = "1000001";
  const std::vector<Case> cases = {
      {social, "association: {bootstrap: N}", "analyses.association.bootstrap", boot, m1, m},
      {social, "scweat: {permutations: N}", "analyses.scweat.permutations", perm, m1, m},
      {social, "markedness: {bootstrap: N}", "analyses.markedness.bootstrap", boot, m1, m},
      {social, "absdiff: {pairs: N}", "analyses.absdiff.pairs", "from 1 to 10000000", "10000001",
       "10000000"},
      {trait, "confidence: {bootstrap: N}", "analyses.confidence.bootstrap", boot, m1, m},
      {geo, "region: {bootstrap: N}", "analyses.region.bootstrap", boot, m1, m},
      {geo, "object_region: {bootstrap: N}", "analyses.object_region.bootstrap", boot, m1, m},
      {geo, "consistency: {bootstrap: N}", "analyses.consistency.bootstrap", boot, m1, m},
      {geo, "distribution: {kid: true, kid_subsets: N}", "analyses.distribution.kid_subsets",
       "from 1 to 100000", "100001", "100000"},
      {geo, "distribution: {kid: true, kid_subsets: 1, kid_subset_size: N}",
       "analyses.distribution.kid_subset_size", "from 2 to 10000000", "10000001", "10000000"},
      {lvlm, "maxgap: {bootstrap: N}", "analyses.maxgap.bootstrap", boot, m1, m},
      {lvlm, "group_tests: {permutations: N}", "analyses.group_tests.permutations", perm, m1, m},
      {lvlm, "paired: {column: m, baseline: none, bootstrap: N}", "analyses.paired.bootstrap", boot,
       m1, m},
      {lvlm, "power: {replicates: N}", "analyses.power.replicates", perm, m1, m},
      {geo, "power: {replicates: N}", "analyses.power.replicates", perm, m1, m},
      {visual, "likelihood: {bootstrap: N}", "analyses.likelihood.bootstrap", boot, m1, m},
      {visual, "pull: {permutations: N}", "analyses.pull.permutations", perm, m1, m},
  };
  for (const Case& c : cases) {
    for (const std::string& n : {std::string("1000000000000"), std::string("1e12"), c.over,
                                 std::string("-1"), std::string("18446744073709551616")}) {
      SCOPED_TRACE(c.key + " = " + n);
      std::string analyses = c.analyses;
      analyses.replace(analyses.find('N'), 1, n);
      expect_usage(c.head + "analyses: {" + analyses + "}\n",
                   {c.key + " must be an integer " + c.range + ", got '" + n + "'"});
    }
    std::string at_limit = c.analyses;
    at_limit.replace(at_limit.find('N'), 1, c.max);
    EXPECT_NO_THROW(parse(c.head + "analyses: {" + at_limit + "}\n")) << c.key;
  }
  expect_usage(geo +
                   "analyses: {distribution: {kid: true, kid_subsets: 100000, "
                   "kid_subset_size: 10000}}\n",
               {"analyses.distribution draws kid_subsets x kid_subset_size = 100000 x 10000"});
}

}  // namespace in_audit_yaml_test
}  // namespace
}  // namespace vlbias
