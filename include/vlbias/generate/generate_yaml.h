#pragma once
// The generate specs (src/generate/generate_yaml.cpp; every key in docs/specs.md), parsed in
// their stage like the audit specs: reads and checks the spec file, UsageError naming the key,
// its line and what was expected on any fault; input files are not opened.
#include <string>

#include "vlbias/generate/generate.h"

namespace vlbias {

LvlmJob parse_lvlm_spec(const std::string& path);    // kind generate-lvlm
LvlmJob parse_llm_spec(const std::string& path);     // kind generate-llm: text only
T2iJob parse_t2i_spec(const std::string& path);      // kind generate-t2i
JudgeJob parse_judge_spec(const std::string& path);  // kind score-judge; input left empty

}  // namespace vlbias
