#pragma once
// Prompt manifests (src/metrics/prompt_sets.cpp): the text prompts a dual-encoder
// audit embeds, one row per prompt, written as CSV by `vlbias prompts`.
//
// Manifest columns (every audit and association metric reads these):
//   text       the prompt exactly as it is to be embedded
//   word       the word filled into the template ("" for the neutral prompt)
//   dimension  social-perception: warmth | competence | agency | belief | communion;
//              trait-pairs: the pair, "smart/dumb"; group-naming prompts: the
//              attribute they name (race | gender | age); neutral prompts: ""
//   valence    "+" or "-" (ABC poles: agency/communion positive or negative, belief
//              progressive (+) or conservative (-); SCM words are all "+"; trait
//              pairs: "+" = first trait, "-" = second); "" for neutral and group prompts
//   template   the template, with "{}" where the word goes
//   role       attribute | neutral | group (optional when reading: a row with an
//              empty word is then neutral, any other row an attribute)
//   model      scm | abc | control | trait-pairs (informational)
//
// Filling a template (docs/methods.md#prompts-001): "{}" is replaced by the word; with the empty
// word the double space this leaves is collapsed ("A photo of a {} person." ->
// "A photo of a person.").
//
// The word lists are those of Hausladen et al. (clip-face-bias, MIT), shipped in
// data/clip-face-bias/attribute_lists.json and compiled into the binary.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vlbias/io/table/table.h"

namespace vlbias {

// The JSON text of data/clip-face-bias/attribute_lists.json as compiled in.
std::string_view builtin_attribute_lists_json();

// "A photo of a {} person." + "warm" -> "A photo of a warm person."; with "" ->
// "A photo of a person." (runs of spaces collapsed to one, ends trimmed). A template
// without exactly one "{}" is a UsageError naming it.
std::string fill_template(std::string_view template_text, std::string_view word);

// Which templates to use for the social-perception prompts.
//   Paper: the paper's four, "A photo of a {} person.", "A {} person.",
//          "This is a {} person.", "Cropped face photo of a {} person."
//   Code:  templates_set_2 of the authors' code, verbatim (its fourth template is
//          "cropped face photo of a {} person", lower case, no full stop)
//   Single: templates_set_1, "A photo of a {} person." only
enum class TemplateSet { Paper, Code, Single };
TemplateSet parse_template_set(std::string_view name);  // "paper" | "code" | "single"
const char* to_string(TemplateSet set);

struct SocialPerceptionPromptOptions {
  TemplateSet template_set = TemplateSet::Paper;
  // Used instead of template_set when non-empty (each must contain "{}" once).
  std::vector<std::string> templates;
  // A JSON file in the attribute_lists.json layout; empty = the built-in lists.
  std::string lexicon_path;
  bool group_prompts = true;  // the group-naming prompts (control words) for markedness
};

// Rows ordered: neutral prompts (one per template), then SCM warmth, competence,
// then ABC agency +/-, belief +/-, communion +/-, each word x template (word-major),
// then the group-naming prompts (white, black, asian -> race; male, female ->
// gender; young, old -> age). Built-in lists: 4 + 4 x 44 + 4 x 7 rows.
Table social_perception_prompts(const SocialPerceptionPromptOptions& options = {});

struct TraitPairPromptOptions {
  // Default: smart/dumb, happy/sad, hardworking/lazy, nice/mean, dominant/agentic,
  // honest/dishonest (Baherwani and Vincent).
  std::vector<std::pair<std::string, std::string>> pairs;
  std::vector<std::string> templates = {"a {} person"};
  bool neutral = true;  // also the neutral prompt per template ("a person")
};

// Rows: neutral prompts, then per pair the first trait ("+") and the second ("-"),
// each over every template.
Table trait_pair_prompts(const TraitPairPromptOptions& options = {});

// "smart/dumb,happy/sad" -> pairs; malformed items are a UsageError.
std::vector<std::pair<std::string, std::string>> parse_trait_pairs(std::string_view text);

// The object prompts of DIG-In's consistency indicator (paper 002,
// docs/methods.md#geo-object-prompts): one row per distinct object, columns object and text =
// fill_template(template_text, object) (the default
// "{}" gives the bare "{object}" DIG-In scores against). Objects are deduplicated and sorted
// by bytes; empty names are dropped. No object left, or a template without exactly one "{}",
// is a UsageError.
Table geo_object_prompts(const std::vector<std::string>& objects,
                         const std::string& template_text = "{}");

// The text-to-image prompts of DIG-In (paper 002, 3.3; docs/methods.md#geo-t2i-prompts) for
// the labelled images of a real dataset, in one prompt form:
//   object          "{object}", one row per distinct object;
//   object-region   "{object} in {region}", one row per distinct (object, region);
//   object-country  "{object} in {country}", per distinct (object, region) the
//                   countries_per_region countries of that region with the most images
//                   (ties: by bytes), one row each.
// Columns prompt, object, region, country, form (the geo-diversity audit's generated table):
// object, region and country hold the dataset's labels (empty where the form has none), so
// generations match the real images without aliases; the prompt spells them as DIG-In did:
// '_' in an object becomes a space, and GeoDE's and Dollar Street's region labels their
// names ("EastAsia" -> "East Asia", "Americas" and "am" -> "the Americas"; other labels as
// they are). Rows are sorted by object, region, country (bytes). Rows with an empty object
// (or an empty region, for the regional forms) are skipped; none left is a UsageError.
enum class GeoPromptForm { Object, ObjectRegion, ObjectCountry };
struct GeoT2iPromptOptions {
  GeoPromptForm form = GeoPromptForm::ObjectRegion;
  std::size_t countries_per_region = 3;
};
Table geo_t2i_prompts(const std::vector<std::string>& objects,
                      const std::vector<std::string>& regions,
                      const std::vector<std::string>& countries,
                      const GeoT2iPromptOptions& options = {});
// "object", "object-region" or "object-country"; anything else is a UsageError.
GeoPromptForm parse_geo_prompt_form(const std::string& text);

}  // namespace vlbias
