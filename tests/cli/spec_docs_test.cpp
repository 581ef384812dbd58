// docs/specs.md is kept true by the parsers: every example in it parses (audit specs with
// parse_audit_spec, generate specs with the generate command's parsers), every key a parser
// accepts is listed in it (the accepted keys are read from the parsers' own unknown-key
// messages, by adding an unknown key to every map of every example), and every starter of
// `vlbias spec template KIND` parses and appears in it verbatim.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cli/cli_util.h"
#include "commands.h"
#include "vlbias/audits/audit.h"
#include "vlbias/core/error.h"
#include "vlbias/generate/generate.h"
#include "vlbias/generate/generate_yaml.h"

namespace {
namespace in_spec_docs_test {

namespace fs = std::filesystem;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

constexpr const char* kDoc = "docs/specs.md";  // relative to the repo root, where tests run
constexpr const char* kKinds[] = {"social-perception",   "trait-pairs",        "geo-diversity",
                                  "lvlm-counterfactual", "visual-stereotypes", "representation",
                                  "generate-lvlm",       "generate-llm",       "generate-t2i",
                                  "score-judge",         "label-vlm"};

struct Example {
  std::string kind;
  std::string text;
  std::size_t line = 0;  // of the opening fence, for messages
};

std::string doc_text() {
  const std::string text = read_file(kDoc);
  EXPECT_FALSE(text.empty()) << kDoc << " is missing or empty";
  return text;
}

// The fenced blocks opened by "```yaml spec-example", with the kind each names.
std::vector<Example> doc_examples() {
  std::vector<Example> out;
  std::istringstream in(doc_text());
  std::string line;
  std::size_t number = 0;
  Example* open = nullptr;
  while (std::getline(in, line)) {
    ++number;
    if (open == nullptr && line == "```yaml spec-example") {
      out.push_back({"", "", number});
      open = &out.back();
    } else if (open != nullptr && line == "```") {
      const YAML::Node root = YAML::Load(open->text);
      open->kind = root["kind"] ? root["kind"].Scalar() : "";
      open = nullptr;
    } else if (open != nullptr) {
      open->text += line + "\n";
    }
  }
  EXPECT_EQ(open, nullptr) << "an example is not closed";
  return out;
}

// Parses a spec of any kind with its real parser; the spec file is written to `dir`, where
// the inputs it names need not exist (no parser opens them).
void parse_spec(const std::string& kind, const std::string& text, const fs::path& dir) {
  const fs::path path = dir / "spec.yaml";
  std::ofstream(path, std::ios::binary) << text;
  if (kind == "generate-lvlm") {
    vlbias::parse_lvlm_spec(path.string());
  } else if (kind == "generate-llm") {
    vlbias::parse_llm_spec(path.string());
  } else if (kind == "generate-t2i") {
    vlbias::parse_t2i_spec(path.string());
  } else if (kind == "score-judge") {
    vlbias::parse_judge_spec(path.string());
  } else if (kind == "label-vlm") {
    vlbias::parse_label_vlm_spec(path.string());
  } else {
    vlbias::parse_audit_spec(text, dir, path.string());
  }
}

using Step = std::variant<std::string, std::size_t>;  // a map key or a list index

// The paths of every map in `node`.
void map_paths(const YAML::Node& node, std::vector<Step>& at, std::vector<std::vector<Step>>& out) {
  if (node.IsMap()) {
    out.push_back(at);
    for (const auto& kv : node) {
      at.emplace_back(kv.first.Scalar());
      map_paths(kv.second, at, out);
      at.pop_back();
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      at.emplace_back(i);
      map_paths(node[i], at, out);
      at.pop_back();
    }
  }
}

// The keys a parser accepts in each map of `example`: the example with an unknown key added to
// that map, parsed, gives "the keys allowed in PATH are a, b, c." (maps of free keys, such as
// factors.ordinal, accept it and are left out). Returns the documented form of each key:
// "analyses.scweat.permutations", list indices dropped ("generated[0].table" ->
// "generated.table").
std::set<std::string> accepted_keys(const Example& example, const fs::path& dir) {
  const YAML::Node original = YAML::Load(example.text);
  std::vector<Step> at;
  std::vector<std::vector<Step>> paths;
  map_paths(original, at, paths);
  const std::regex allowed(R"(the keys allowed in (.+) are (.+)\.$)");
  std::set<std::string> keys;
  for (const auto& path : paths) {
    YAML::Node root = YAML::Clone(original);
    YAML::Node map = root;
    for (const Step& s : path) {
      YAML::Node next = std::holds_alternative<std::string>(s) ? map[std::get<std::string>(s)]
                                                               : map[std::get<std::size_t>(s)];
      map.reset(next);
    }
    map["zz_not_a_key"] = "1";
    YAML::Emitter emitter;
    emitter << root;
    std::smatch m;
    std::string message;
    try {
      parse_spec(example.kind, emitter.c_str(), dir);
      continue;  // a map of free keys
    } catch (const vlbias::UsageError& e) {
      message = e.what();
    }
    // A map of free keys whose values have a type (labels.classes: lists) judges the probe's
    // value, under the probe's own name.
    if (message.find(".zz_not_a_key must") != std::string::npos) continue;
    EXPECT_TRUE(std::regex_search(message, m, allowed)) << message;
    if (m.empty()) continue;
    const std::string name =
        m[1] == "the top level" ? "" : std::regex_replace(m[1].str(), std::regex(R"(\[\d+\])"), "");
    std::istringstream list(m[2].str());
    std::string key;
    while (std::getline(list, key, ',')) {
      key.erase(0, key.find_first_not_of(' '));
      keys.insert(name.empty() ? key : name + "." + key);
    }
  }
  return keys;
}

TEST(SpecDocs, EveryKindHasAnExampleAndEveryExampleParsesWithTheRealParser) {
  const std::vector<Example> examples = doc_examples();
  for (const char* kind : kKinds) {
    SCOPED_TRACE(kind);
    std::size_t n = 0;
    for (const Example& e : examples) n += e.kind == kind ? 1 : 0;
    EXPECT_GE(n, 1u) << kDoc << " has no example of kind " << kind;
  }
  for (const Example& e : examples) {
    SCOPED_TRACE(std::string(kDoc) + " line " + std::to_string(e.line) + ", kind " + e.kind);
    try {
      parse_spec(e.kind, e.text, temp_dir());
    } catch (const std::exception& x) {
      ADD_FAILURE() << x.what() << "\n" << e.text;
    }
  }
}

TEST(SpecDocs, EveryKeyTheParsersAcceptIsDocumented) {
  const std::string doc = doc_text();
  std::map<std::string, std::set<std::string>> keys_by_kind;
  for (const Example& e : doc_examples()) {
    SCOPED_TRACE(std::string(kDoc) + " line " + std::to_string(e.line) + ", kind " + e.kind);
    const std::set<std::string> keys = accepted_keys(e, temp_dir());
    keys_by_kind[e.kind].insert(keys.begin(), keys.end());
  }
  for (const auto& [kind, keys] : keys_by_kind) {
    SCOPED_TRACE(kind);
    // Every example has a root and an analyses (or endpoint) map at least.
    EXPECT_GE(keys.size(), 10u);
    for (const std::string& key : keys) {
      EXPECT_NE(doc.find("`" + key + "`"), std::string::npos)
          << kDoc << " does not list the key `" << key << "` that the " << kind
          << " parser accepts";
    }
  }
  // The probe reaches the nested maps (a sample of deep keys, one per kind).
  EXPECT_TRUE(keys_by_kind["social-perception"].count("analyses.scweat.groupings"));
  EXPECT_TRUE(keys_by_kind["trait-pairs"].count("analyses.confidence.test_within"));
  EXPECT_TRUE(keys_by_kind["geo-diversity"].count("generated.clip_tensor"));
  EXPECT_TRUE(keys_by_kind["lvlm-counterfactual"].count("analyses.ratings.where.values"));
  EXPECT_TRUE(keys_by_kind["visual-stereotypes"].count("annotations.none_as_random"));
  EXPECT_TRUE(keys_by_kind["representation"].count("targets.scale"));
  EXPECT_TRUE(keys_by_kind["generate-lvlm"].count("prompts.text"));
  EXPECT_TRUE(keys_by_kind["generate-lvlm"].count("prompts.labels"));
  EXPECT_TRUE(keys_by_kind["generate-llm"].count("prompts.system"));
  EXPECT_TRUE(keys_by_kind["generate-t2i"].count("openai.response_format"));
  EXPECT_TRUE(keys_by_kind["score-judge"].count("scale.max"));
}

TEST(SpecTemplate, EveryKindsTemplateParsesAndIsTheDocumentsExample) {
  const std::string doc = doc_text();
  for (const char* kind : kKinds) {
    SCOPED_TRACE(kind);
    const CliResult r = run_cli(std::string("spec template ") + kind);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    try {
      parse_spec(kind, r.out, temp_dir());
    } catch (const std::exception& x) {
      ADD_FAILURE() << x.what() << "\n" << r.out;
    }
    EXPECT_NE(doc.find("```yaml spec-example\n" + r.out + "```\n"), std::string::npos)
        << kDoc << " does not show the template of " << kind << " as its example";
    // A starter names its kind and points at the reference.
    EXPECT_NE(r.out.find(std::string("kind: ") + kind + "\n"), std::string::npos);
    EXPECT_NE(r.out.find("docs/specs.md"), std::string::npos);
  }
}

TEST(SpecTemplate, AnUnknownKindIsAUsageErrorListingTheKinds) {
  const CliResult r = run_cli("spec template social");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  for (const char* kind : kKinds) EXPECT_NE(r.err.find(kind), std::string::npos) << r.err;
}

}  // namespace in_spec_docs_test
}  // namespace
