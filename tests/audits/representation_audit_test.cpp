// The representation audit (include/vlbias/audits/representation_audit.h) on the fixture study
// of tools/make_representation_audit_fixtures.py (tests/fixtures/audits/representation): every
// point value against the script's numpy/scipy/statsmodels computation; the bootstrap intervals'
// invariants; planted and null prompts; the input errors; audit --check and compare-runs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/json.h"
#include "vlbias/report/representation_results.h"

namespace vlbias {
namespace {
namespace in_representation_audit_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::read_file;
using cli_util::run_cli;
using nlohmann::json;

const fs::path kStudy = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/audits/representation";
const fs::path kTargets = fs::path(VLBIAS_SOURCE_DIR) / "data/winogender/occupations-stats.tsv";

const json& expected() {
  return testing_util::fixture_json("audits/representation/expected.json");
}

// The fixture study's spec with `labels_extra` added to the labels map and `rest` appended.
fs::path write_spec(const fs::path& dir, const std::string& rest = "",
                    const std::string& labels_extra = ", use: clip") {
  fs::create_directories(dir);
  const fs::path spec = dir / "spec.yaml";
  std::ofstream(spec) << fmt::format(
      "version: 1\nkind: representation\nseed: 7\nmin_group_size: 10\n"
      "labels: {{table: '{0}/labels.csv'{2}}}\n"
      "manifest: {{table: '{0}/manifest.csv', group: category, key: occupation}}\n"
      "targets: {{table: '{1}', key: occupation, attribute: gender,\n"
      "           columns: {{female: bls_pct_female}}, scale: percent}}\n{3}",
      kStudy.string(), kTargets.string(), labels_extra, rest);
  return spec;
}

json audit(const fs::path& spec, const fs::path& out, const std::string& extra = "") {
  const CliResult r =
      run_cli(extra + " --quiet audit '" + spec.string() + "' --out '" + out.string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(read_file(out / "results.json"));
}

void expect_rel(double got, double want, double rel) {
  EXPECT_NEAR(got, want, rel * std::max(std::fabs(want), 1e-300)) << "want " << want;
}

const json& by_attribute(const json& list, const std::string& name) {
  for (const json& a : list) {
    if (a.at("attribute") == name) return a;
  }
  ADD_FAILURE() << "no attribute " << name;
  return list;
}

const json& hypothesis(const json& tests, const std::string& attribute, const std::string& h) {
  for (const json& x : by_attribute(tests.at("attributes"), attribute).at("hypotheses")) {
    if (x.at("hypothesis") == h) return x;
  }
  ADD_FAILURE() << "no hypothesis " << h;
  return tests;
}

// The fixture study run once per process (in the folder of the first test that asks).
struct StudyRun {
  fs::path dir;
  json results;
};
const StudyRun& study() {
  static const StudyRun* run = [] {
    auto* r = new StudyRun{cli_util::temp_dir(), {}};
    r->results = audit(write_spec(r->dir, "analyses: {power: true}\n"), r->dir / "run");
    return r;
  }();
  return *run;
}

TEST(RepresentationAudit, DistributionsEqualTheReference) {
  const json& dist = study().results.at("analyses").at("distribution");
  EXPECT_EQ(dist.at("unit"), "face");
  for (const auto& [attribute, want] : expected().at("attributes").items()) {
    const json& got = by_attribute(dist.at("attributes"), attribute);
    EXPECT_EQ(got.at("classes"), want.at("classes"));
    for (std::size_t p = 0; p < want.at("prompts").size(); ++p) {
      const json& w = want["prompts"][p];
      const json& g = got.at("prompts").at(p);
      SCOPED_TRACE(attribute + ": " + w.at("prompt").get<std::string>());
      EXPECT_EQ(g.at("prompt"), w.at("prompt"));
      EXPECT_EQ(g.at("counts"), w.at("counts"));
      EXPECT_EQ(g.at("other"), w.at("other"));
      EXPECT_EQ(g.at("images"), w.at("images"));
      EXPECT_NEAR(g.at("no_face_rate"), w.at("no_face_rate"), 1e-12);
      EXPECT_NEAR(g.at("several_faces_rate"), w.at("several_faces_rate"), 1e-12);
      for (std::size_t c = 0; c < w.at("shares").size(); ++c) {
        EXPECT_NEAR(g["shares"][c], w["shares"][c], 1e-12);
        EXPECT_NEAR(g["wilson"][c]["lower"], w["wilson"][c][0], 1e-12);
        EXPECT_NEAR(g["wilson"][c]["upper"], w["wilson"][c][1], 1e-12);
        if (w.at("sison_glaz").is_null()) continue;  // statsmodels found no c
        EXPECT_NEAR(g["simultaneous"][c]["lower"], w["sison_glaz"][c][0], 1e-9);
        EXPECT_NEAR(g["simultaneous"][c]["upper"], w["sison_glaz"][c][1], 1e-9);
      }
    }
  }
}

TEST(RepresentationAudit, MeasuresTestsAndPowerEqualTheReference) {
  const json& a = study().results.at("analyses");
  for (const auto& [attribute, want] : expected().at("attributes").items()) {
    const json& m = by_attribute(a.at("measures").at("attributes"), attribute);
    const json& parity = hypothesis(a.at("tests"), attribute, "parity");
    const json& power = by_attribute(a.at("power").at("attributes"), attribute);
    for (std::size_t p = 0; p < want.at("prompts").size(); ++p) {
      const json& w = want["prompts"][p];
      SCOPED_TRACE(attribute + ": " + w.at("prompt").get<std::string>());
      EXPECT_NEAR(m["prompts"][p]["mad"]["estimate"], w.at("mad"), 1e-12);
      EXPECT_NEAR(m["prompts"][p]["entropy_bias"]["estimate"], w.at("entropy_bias"), 1e-12);
      expect_rel(parity["prompts"][p]["result"]["p_value"], w.at("parity_p"), 1e-9);
      expect_rel(parity["prompts"][p]["p_holm"], w.at("parity_holm"), 1e-9);
      expect_rel(parity["prompts"][p]["p_bh"], w.at("parity_bh"), 1e-9);
      expect_rel(power["prompts"][p]["cohens_w"], w.at("mde_w"), 1e-8);
      if (w.contains("kl_target")) {
        EXPECT_NEAR(m["prompts"][p]["kl_target"]["estimate"], w.at("kl_target"), 1e-12);
        const json& target = hypothesis(a.at("tests"), attribute, "target")["prompts"][p];
        expect_rel(target["result"]["p_value"], w.at("target_p"), 1e-9);
        expect_rel(target["p_holm"], w.at("target_holm"), 1e-9);
      }
    }
    for (const json& g : m.at("groups")) {
      const std::string name = g["group"].is_null() ? "all prompts" : g["group"].get<std::string>();
      SCOPED_TRACE(attribute + " group " + name);
      const json& w = want.at("groups").at(name);
      EXPECT_NEAR(g["pooled"]["mad"]["estimate"], w.at("pooled_mad"), 1e-12);
      EXPECT_NEAR(g["pooled"]["entropy_bias"]["estimate"], w.at("pooled_entropy_bias"), 1e-12);
      EXPECT_NEAR(g["mean_over_prompts"]["mad"]["estimate"], w.at("mean_mad"), 1e-12);
      EXPECT_NEAR(g["mean_over_prompts"]["entropy_bias"]["estimate"], w.at("mean_entropy_bias"),
                  1e-12);
    }
  }
}

TEST(RepresentationAudit, AmplificationEqualsTheReferenceAndNamesTheMissingTarget) {
  const json& amp = study().results.at("analyses").at("amplification");
  const json& want = expected().at("attributes").at("gender");
  ASSERT_EQ(amp.at("classes").size(), 1u);
  const json& female = amp["classes"][0];
  EXPECT_EQ(female.at("class"), "female");
  std::size_t i = 0;
  for (const json& w : want.at("prompts")) {
    if (!w.contains("gap")) continue;
    const json& g = female.at("prompts").at(i++);
    SCOPED_TRACE(w.at("prompt").get<std::string>());
    EXPECT_NEAR(g.at("real"), w.at("real"), 1e-12);
    EXPECT_NEAR(g.at("gap").at("estimate"), w.at("gap"), 1e-12);
  }
  EXPECT_EQ(i, female.at("prompts").size());
  const json& s = want.at("slope");
  EXPECT_NEAR(female["slope"]["estimate"], s.at("slope"), 1e-12);
  EXPECT_NEAR(female["slope"]["intercept"], s.at("intercept"), 1e-12);
  EXPECT_NEAR(female["slope"]["r"], s.at("r"), 1e-12);
  EXPECT_EQ(female["slope"]["prompts"], s.at("prompts"));
  EXPECT_NEAR(female["mean_gap"]["estimate"], s.at("mean_gap"), 1e-12);
  EXPECT_EQ(amp.at("missing_targets"), json::array({"astronaut"}));
  EXPECT_NE(study().results.at("notes").dump().find("astronaut"), std::string::npos);
}

// Every bootstrap interval holds its estimate, for every measure with one.
void expect_intervals_hold(const json& node, const std::string& where) {
  if (node.is_object()) {
    if (node.contains("estimate") && node.contains("ci") && node["ci"].is_object() &&
        node["estimate"].is_number()) {
      const double e = node["estimate"], lo = node["ci"]["lower"], hi = node["ci"]["upper"];
      EXPECT_LE(lo, e + 1e-12) << where;
      EXPECT_GE(hi, e - 1e-12) << where;
    }
    for (const auto& [k, v] : node.items()) expect_intervals_hold(v, where + "/" + k);
  } else if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      expect_intervals_hold(node[i], where + "/" + std::to_string(i));
  }
}

TEST(RepresentationAudit, IntervalsHoldTheirEstimatesWhateverTheThreadCount) {
  const json& a = study().results.at("analyses");
  // Shares far from the edges: the percentile interval of a share holds it.
  expect_intervals_hold(a.at("amplification"), "amplification");
  const json& slope = a["amplification"]["classes"][0]["slope"]["ci"];
  EXPECT_LT(slope["lower"].get<double>(), slope["upper"].get<double>());
  const json again = audit(write_spec(study().dir / "again", "analyses: {power: true}\n"),
                           study().dir / "again" / "run", "--threads 1");
  EXPECT_EQ(again.at("analyses"), study().results.at("analyses"));
}

TEST(RepresentationAudit, AgreementComparesTheTwoLabellers) {
  const json& ag = study().results.at("analyses").at("agreement");
  for (const json& a : ag.at("attributes")) {
    SCOPED_TRACE(a.dump().substr(0, 200));
    EXPECT_EQ(a.at("labellers"), json::array({"clip", "fairface"}));
    // The fixture's second labeller relabels 15% of faces at random: agreement well above 0.
    EXPECT_GT(a["krippendorff_alpha"]["estimate"].get<double>(), 0.5);
    EXPECT_LT(a["krippendorff_alpha"]["estimate"].get<double>(), 1.0);
  }
}

TEST(RepresentationAudit, ReportAndSummaryNameTheFindings) {
  const std::string html = read_file(study().dir / "run" / "report.html");
  EXPECT_NE(html.find("Who appears, per prompt"), std::string::npos);
  EXPECT_NE(html.find("a photo of a nurse"), std::string::npos);
  EXPECT_NE(html.find("Generated vs real share of female"), std::string::npos);
  const json summary = json::parse(read_file(study().dir / "run" / "summary.json"));
  bool share = false, slope = false;
  for (const json& f : summary.at("findings")) {
    share = share || f.at("id") == "share/gender/female/a photo of a nurse";
    slope = slope || f.at("id") == "slope/gender/female";
  }
  EXPECT_TRUE(share);
  EXPECT_TRUE(slope);
}

// A study written in the test: `prompts` prompts of `images` images with one face each, the
// first prompt's faces female with probability `planted`, the others' with 1/2.
fs::path write_drawn_study(const fs::path& dir, std::size_t prompts, std::size_t images,
                           double planted) {
  fs::create_directories(dir);
  std::ofstream manifest(dir / "manifest.csv"), labels(dir / "labels.csv");
  manifest << "image,prompt\n";
  labels << "image,face,attribute,label\n";
  Rng rng(99, 0);
  for (std::size_t p = 0; p < prompts; ++p) {
    for (std::size_t i = 0; i < images; ++i) {
      const std::string image = fmt::format("p{}/{}.png", p, i);
      manifest << image << ",prompt " << p << "\n";
      const bool female = rng.uniform01() < (p == 0 ? planted : 0.5);
      labels << image << ",0,gender," << (female ? "female" : "male") << "\n";
    }
  }
  const fs::path spec = dir / "spec.yaml";
  std::ofstream(spec) << "kind: representation\nlabels: {table: labels.csv, classes: {gender: "
                         "[female, male]}}\nmanifest: {table: manifest.csv}\n"
                         "analyses: {measures: {bootstrap: 200}, tests: {test: chi-square}}\n";
  return spec;
}

TEST(RepresentationAudit, APlantedPromptIsFoundAndNullPromptsRejectAtTheNominalRate) {
  const fs::path dir = cli_util::temp_dir();
  const json r = audit(write_drawn_study(dir, 301, 60, 0.8), dir / "run");
  const json& tests = hypothesis(r.at("analyses").at("tests"), "gender", "parity");
  EXPECT_LT(tests["prompts"][0]["p_holm"].get<double>(), 0.05);
  std::size_t rejected = 0;
  for (std::size_t p = 1; p < tests["prompts"].size(); ++p)
    rejected += tests["prompts"][p]["result"]["p_value"].get<double>() < 0.05;
  // 300 null prompts at 50/50: about 15 raw rejections (binomial sd 3.8).
  EXPECT_GE(rejected, 5u);
  EXPECT_LE(rejected, 27u);
}

// The study's spec with one input replaced, run; the error it gives.
std::string audit_error(const std::string& spec_text, const fs::path& dir) {
  fs::create_directories(dir);
  std::ofstream(dir / "spec.yaml") << spec_text;
  const CliResult r = run_cli("--quiet audit '" + (dir / "spec.yaml").string() + "' --out '" +
                              (dir / "run").string() + "'");
  EXPECT_NE(r.exit_code, 0);
  const CliResult check = run_cli("--quiet audit --check '" + (dir / "spec.yaml").string() + "'");
  EXPECT_EQ(check.exit_code, r.exit_code) << check.err;
  EXPECT_EQ(check.err, r.err) << "audit --check gives the run's own error";
  return r.err;
}

TEST(RepresentationAudit, BadInputIsAnErrorNamingTheRowOrKey) {
  const fs::path dir = cli_util::temp_dir();
  const std::string study = kStudy.string();
  const auto with = [&](const std::string& name, const std::string& labels,
                        const std::string& manifest, const std::string& rest) {
    return audit_error(
        fmt::format("kind: representation\nlabels: {}\nmanifest: {}\n{}", labels, manifest, rest),
        dir / name);
  };
  const std::string labels = "{table: '" + study + "/labels.csv', use: clip}";
  const std::string manifest = "{table: '" + study + "/manifest.csv', key: occupation}";
  // A label for an image the manifest lacks.
  std::ofstream(dir / "few.csv") << "image,prompt\nimages/nurse/0.png,a photo of a nurse\n";
  EXPECT_NE(with("unknown_image", labels, "{table: '" + (dir / "few.csv").string() + "'}", "")
                .find("is not in the manifest"),
            std::string::npos);
  // Several labellers and no `use`.
  EXPECT_NE(with("two", "{table: '" + study + "/labels.csv'}", manifest, "").find("labels.use"),
            std::string::npos);
  // A label that is not one of the given classes.
  EXPECT_NE(with("classes",
                 "{table: '" + study +
                     "/labels.csv', use: clip, attributes: gender, "
                     "classes: {gender: [woman, man]}}",
                 manifest, "")
                .find("is not a class of 'gender'"),
            std::string::npos);
  // Shares outside the scale, and a percent table read as shares.
  std::ofstream(dir / "bad.tsv") << "occupation\tpct\nnurse\t140\n";
  const std::string targets =
      "targets: {table: '" + (dir / "bad.tsv").string() + "', columns: {female: pct}, scale: ";
  EXPECT_NE(with("over", labels, manifest, targets + "percent}\n").find("row 2"),
            std::string::npos);
  std::ofstream(dir / "pct.tsv") << "occupation\tpct\nnurse\t90\n";
  EXPECT_NE(with("mixed", labels, manifest,
                 "targets: {table: '" + (dir / "pct.tsv").string() +
                     "', columns: {female: pct}, scale: share}\n")
                .find("set targets.scale: percent"),
            std::string::npos);
  // A key listed twice.
  std::ofstream(dir / "twice.tsv") << "occupation\tpct\nnurse\t90\nnurse\t80\n";
  EXPECT_NE(
      with("twice", labels, manifest,
           "targets: {table: '" + (dir / "twice.tsv").string() + "', columns: {female: pct}}\n")
          .find("appears twice"),
      std::string::npos);
  // Spec errors: amplification without targets, an unknown key, a class the labels lack.
  EXPECT_NE(with("amp", labels, manifest, "analyses: {amplification: true}\n").find("targets"),
            std::string::npos);
  EXPECT_NE(with("key", labels, manifest, "analysis: {}\n").find("analyses"), std::string::npos);
  EXPECT_NE(
      with("cls", labels, manifest,
           "targets: {table: '" + kTargets.string() + "', columns: {nonbinary: bls_pct_female}}\n")
          .find("not a class of 'gender'"),
      std::string::npos);
}

// Two prompts in `dir` (spec.yaml, manifest.csv, labels.csv): a nurse with a female and a male
// face, a pilot whose one face has a label outside the classes.
void write_nurse_and_pilot_study(const fs::path& dir) {
  std::ofstream(dir / "manifest.csv") << "image,prompt\na.png,a photo of a nurse\n"
                                         "b.png,a photo of a nurse\nc.png,a photo of a pilot\n";
  std::ofstream(dir / "labels.csv") << "image,face,attribute,label\na.png,0,gender,female\n"
                                       "b.png,0,gender,male\nc.png,0,gender,unclear\n";
  std::ofstream(dir / "spec.yaml")
      << "kind: representation\nlabels: {table: labels.csv, classes: {gender: [female, male]}}\n"
         "manifest: {table: manifest.csv}\n";
}

TEST(RepresentationAudit, APromptWithoutLabelledFacesIsNamedNotZero) {
  const fs::path dir = cli_util::temp_dir();
  write_nurse_and_pilot_study(dir);
  const json r = audit(dir / "spec.yaml", dir / "run");
  const json& pilot = r["analyses"]["distribution"]["attributes"][0]["prompts"][1];
  EXPECT_EQ(pilot["prompt"], "a photo of a pilot");
  EXPECT_TRUE(pilot["shares"].is_null());
  EXPECT_EQ(pilot["other_rate"], 1.0);
  EXPECT_TRUE(
      r["analyses"]["measures"]["attributes"][0]["prompts"][1]["mad"]["estimate"].is_null());
  EXPECT_NE(r["notes"].dump().find("a photo of a pilot"), std::string::npos);
}

TEST(RepresentationAudit, CompareRunsSetsTwoLabellersRunsSideBySide) {
  const fs::path dir = cli_util::temp_dir();
  audit(write_spec(dir / "a"), dir / "a" / "run");
  audit(write_spec(dir / "b", "", ", use: fairface"), dir / "b" / "run");
  const CliResult r =
      run_cli("--quiet compare-runs '" + (dir / "a" / "run").string() + "' '" +
              (dir / "b" / "run").string() + "' --out '" + (dir / "cmp").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json c = json::parse(read_file(dir / "cmp" / "results.json"));
  EXPECT_NE(c.dump().find("mad/gender/a photo of a nurse"), std::string::npos);
  // The means over prompts are paired by prompt (units/mad__gender.csv, units/gap__...).
  std::size_t paired = 0;
  for (const json& q : c.at("quantities")) {
    if (q["id"] != "mad_mean/gender/all prompts" && q["id"] != "gap_mean/gender/female") continue;
    SCOPED_TRACE(q["id"].get<std::string>());
    EXPECT_EQ(q["differences"][0]["method"], "paired");
    EXPECT_EQ(q["differences"][0]["units"]["only_a"], 0);
    ++paired;
  }
  EXPECT_EQ(paired, 2u);
}

TEST(RepresentationAudit, SkinToneFromFacesCsvIsHeimsImbalanceWithUnknownLeftOut) {
  // faces.csv's layout: one row per face, a monk column (empty: no skin pixels, unknown).
  const fs::path dir = cli_util::temp_dir();
  std::ofstream(dir / "manifest.csv") << "image,prompt\na.png,p\nb.png,p\nc.png,p\nd.png,p\n";
  std::ofstream(dir / "faces.csv") << "image,face,monk,ita\na.png,0,2,40\na.png,1,2,41\n"
                                      "b.png,0,5,10\nc.png,0,,\nd.png,0,9,-30\n";
  std::ofstream(dir / "spec.yaml")
      << "kind: representation\nlabels: {table: faces.csv, columns: [monk],\n"
         "  classes: {monk: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}}\nmanifest: {table: manifest.csv}\n";
  const json r = audit(dir / "spec.yaml", dir / "run");
  const json& p = r["analyses"]["distribution"]["attributes"][0]["prompts"][0];
  EXPECT_EQ(p["counts"], json::array({0, 2, 0, 0, 1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(p["other"], 1);  // the face without skin pixels
  EXPECT_NEAR(p["several_faces_rate"].get<double>(), 1.0 / 4, 1e-15);
  // HEIM (skin_tone_metrics.py): sum_k |p_k - 0.1| / 10 over the ten Monk tones, unknown out.
  const double shares[10] = {0, 0.5, 0, 0, 0.25, 0, 0, 0, 0.25, 0};
  double heim = 0;
  for (const double s : shares) heim += std::fabs(s - 0.1) / 10;
  const json& mad = r["analyses"]["measures"]["attributes"][0]["prompts"][0]["mad"];
  EXPECT_NEAR(mad["estimate"].get<double>(), heim, 1e-15);
}

TEST(RepresentationAudit, PowerFromThePilotRunMatchesTheAuditsOwnPowerSection) {
  const fs::path run = study().dir / "run";
  const CliResult r =
      run_cli("--quiet power --pilot '" + run.string() + "' --effect 0.5 --alpha 0.05");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out.at("kind"), "representation");
  const json& power = study().results.at("analyses").at("power").at("attributes");
  std::size_t i = 0;
  for (const json& a : power) {
    for (const json& p : a.at("prompts")) {
      const json& t = out.at("tests").at(i++);
      SCOPED_TRACE(t.at("label").get<std::string>());
      EXPECT_NEAR(t["mde"]["cohens_w"].get<double>(), p.at("cohens_w").get<double>(), 1e-12);
      // The n needed: the first whose power at w = 0.5 reaches 0.8.
      EXPECT_GE(t["sample_size"]["power"].get<double>(), 0.8);
      EXPECT_LE(t["at_effect"]["power"].get<double>(), 1.0);
    }
  }
  EXPECT_EQ(i, out.at("tests").size());
}

// The distribution section the audit writes reads back (report/representation_results.h) to the
// same text; with a prompt without labelled faces (shares null) too.
TEST(RepresentationAudit, DistributionSectionReadsBackToTheSameText) {
  const fs::path dir = cli_util::temp_dir();
  write_nurse_and_pilot_study(dir);
  audit(dir / "spec.yaml", dir / "run");
  for (const fs::path& run : {study().dir / "run", dir / "run"}) {
    const Json results = parse_json(read_file(run / "results.json"), "results.json");
    const Json& analyses = results["analyses"];
    const auto section = distribution_from_json(analyses);
    ASSERT_TRUE(section.has_value());
    EXPECT_EQ(to_json(*section).dump(), analyses[kDistributionSection].dump());
    ASSERT_FALSE(section->attributes.empty());
    EXPECT_FALSE(section->attributes[0].prompts.empty());
  }
  const Json lenient{{kDistributionSection, Json{{"attributes", Json::array({Json::object()})}}}};
  const auto s = distribution_from_json(lenient);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->attributes.size(), 1u);
  EXPECT_TRUE(s->attributes[0].prompts.empty());
  EXPECT_TRUE(std::isnan(s->ci));
  EXPECT_FALSE(distribution_from_json(Json::object()).has_value());
  EXPECT_EQ(distribution_prompt_pointer(1, 2), "/analyses/distribution/attributes/1/prompts/2");
  fs::remove_all(dir);
}

TEST(RepresentationAudit, ANoteNamesTwentyPromptsAndCountsTheRest) {
  const fs::path dir = cli_util::temp_dir();
  std::ofstream manifest(dir / "manifest.csv"), labels(dir / "labels.csv");
  manifest << "image,prompt\n";
  labels << "image,face,attribute,label\n";
  for (int p = 0; p < 30; ++p) {
    manifest << p << ".png,prompt " << p << "\n";
    labels << p << ".png,0,gender," << (p == 0 ? "female" : "unclear") << "\n";
  }
  manifest.close();
  labels.close();
  std::ofstream(dir / "spec.yaml")
      << "kind: representation\nlabels: {table: labels.csv, classes: {gender: [female, male]}}\n"
         "manifest: {table: manifest.csv}\nanalyses: {measures: {bootstrap: 10}}\n";
  const json r = audit(dir / "spec.yaml", dir / "run");
  // 29 prompts without a labelled face: 20 named, 9 counted.
  EXPECT_NE(r["notes"].dump().find("29 prompts had no observation"), std::string::npos);
  EXPECT_NE(r["notes"].dump().find("and 9 more"), std::string::npos) << r["notes"].dump();
}

}  // namespace in_representation_audit_test
}  // namespace
}  // namespace vlbias
