#pragma once
// Prompt sets of the CLIP zero-shot labeller (src/labels/label_prompts.cpp): per attribute
// (gender, race, age, ...) its classes, and per class the prompts whose L2-normalised text
// embeddings are averaged into the class embedding (docs/methods.md#clip-zero-shot-labels).
//
// A prompt set is a JSON file (the shipped ones: data/labels/, compiled into the binary):
//   {"name": "...", "source": "...",               (both optional, informational)
//    "attributes": [
//      {"name": "gender",
//       "templates": ["a photo of a {}", ...],     (optional: "{}" once in each)
//       "classes": [
//         {"name": "male", "prompts": ["a photo of a male"]},   (literal prompts), or
//         {"name": "Female", "text": "woman"}      (each template with "{}" -> text;
//                                                    text defaults to the class name)
//       ]}]}
// A class with "prompts" uses exactly those; otherwise the attribute's templates filled with its
// text. Attributes and classes keep the file's order.
#include <string>
#include <string_view>
#include <vector>

namespace vlbias {

struct LabelClass {
  std::string name;                  // the label written in LABELS.csv, and p_<name>
  std::vector<std::string> prompts;  // at least one
};

struct LabelAttribute {
  std::string name;
  std::vector<LabelClass> classes;  // at least two
};

struct LabelPromptSet {
  // LABELS.csv's prompt_set: the shipped set's name, or "<path> sha256:<hex of the file>".
  std::string id;
  std::string source;  // where the prompts come from (the file's "source")
  std::vector<LabelAttribute> attributes;
};

// The names of the shipped sets, in order: "fairface", "heim", "dalleval".
std::vector<std::string> builtin_label_prompt_sets();

// A shipped set's name, or a path to a JSON file as above. UsageError for an unknown name that
// is no file; InputError naming the file (and the attribute or class) for malformed JSON, a
// missing or mistyped field, an attribute or class given twice, an attribute with fewer than
// two classes, a class without prompts, an empty prompt, or a template without exactly one "{}".
LabelPromptSet load_label_prompt_set(const std::string& name_or_path);

// The same over JSON text; `id` becomes LabelPromptSet::id and names the set in messages.
LabelPromptSet parse_label_prompt_set(std::string_view json_text, const std::string& id);

// The attributes of `set` named in `names` (in that order). UsageError naming the set for an
// attribute it has no prompts for (listing the ones it has), an attribute named twice, or a class
// name shared by two of the chosen attributes (the p_<class> columns would collide).
std::vector<LabelAttribute> select_label_attributes(const LabelPromptSet& set,
                                                    const std::vector<std::string>& names);

}  // namespace vlbias
