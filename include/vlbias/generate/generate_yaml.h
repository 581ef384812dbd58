#pragma once
// The generate specs (src/generate/generate_yaml.cpp; every key in docs/specs.md), parsed in
// their stage like the audit specs: reads and checks the spec file, UsageError naming the key,
// its line and what was expected on any fault; input files are not opened.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/generate/generate.h"

namespace vlbias {

LvlmJob parse_lvlm_spec(const std::string& path);    // kind generate-lvlm
LvlmJob parse_llm_spec(const std::string& path);     // kind generate-llm: text only
T2iJob parse_t2i_spec(const std::string& path);      // kind generate-t2i
JudgeJob parse_judge_spec(const std::string& path);  // kind score-judge; input left empty

// kind label-vlm: `vlbias label --labeller vlm --spec SPEC.yaml` (include/vlbias/labels/
// vlm_labels.h, docs/specs.md#label-vlm): endpoint, system, sampling and requests as
// generate-lvlm's; attribute (LABELS.csv's) and question (sent with each image as is), or a list
// of questions; choices
// (at least two), synonyms (choice: [form, ...]) and unclear (forms meaning unclear) as `vlbias
// score choice` takes them. The images come from the command line; the job's manifest and
// prompts are left for the caller to set.
struct LabelVlmSpec {
  LvlmJob job;
  // (attribute, question): `attribute` and `question`, or each of `questions` (the yes/no
  // questions of visual attributes: {attribute: turban, question: "Does the image contain a
  // turban? Answer yes or no."}); the attributes are LABELS.csv's, each asked once.
  std::vector<std::pair<std::string, std::string>> questions;
  std::vector<std::string> choices;
  std::map<std::string, std::vector<std::string>> synonyms;
  std::vector<std::string> unclear;
};
LabelVlmSpec parse_label_vlm_spec(const std::string& path);

}  // namespace vlbias
