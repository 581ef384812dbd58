// `vlbias prompts social-perception|trait-pairs|visual-stereotypes|geo-objects|geo-t2i`: write
// the prompt manifest of paper 001 (Hausladen et al., docs/methods.md#prompts-001), paper 004
// (Baherwani and Vincent, docs/methods.md#trait-pairs), paper 000 (ViSAGe), or the object and
// generation prompts of paper 002 (DIG-In, docs/methods.md#geo-object-prompts,
// docs/methods.md#geo-t2i-prompts), one row per prompt
// (include/vlbias/metrics/prompt_sets.h).
//
// --out is a .csv (write_csv) or .jsonl file, written atomically. Empty cells
// (neutral and group prompts) are empty CSV cells / "" JSON strings; both read back
// as missing, whose text is "".
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/terminal.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/table/column_texts.h"
#include "vlbias/io/table/table.h"
#include "vlbias/metrics/prompt_sets.h"
#include "vlbias/metrics/visual_stereotypes.h"

namespace vlbias::cli_internal {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void check_out_path(const std::string& out) {
  VLBIAS_CHECK(ends_with(out, ".csv") || ends_with(out, ".jsonl"), UsageError,
               "--out '{}' must end in .csv or .jsonl", out);
}

void write_jsonl(const Table& table, const std::string& path) {
  AtomicWriter out(path);
  for (std::size_t row = 0; row < table.rows; ++row) {
    nlohmann::ordered_json obj = nlohmann::ordered_json::object();
    for (const Column& col : table.columns) obj[col.name] = col.text(row);
    const std::string line = obj.dump() + "\n";
    out.write(line.data(), line.size());
  }
  out.commit();
}

void write_manifest(const Table& table, const std::string& path) {
  if (ends_with(path, ".jsonl")) {
    write_jsonl(table, path);
  } else {
    write_csv(table, path);
  }
  if (!quiet()) eprint("vlbias: wrote {} prompts to {}\n", table.rows, path);
}

struct SocialArgs {
  std::string template_set = "paper";
  std::vector<std::string> templates;
  std::string lexicon;
  bool no_group_prompts = false;
  std::string out;
};

struct TraitArgs {
  std::string pairs;
  std::vector<std::string> templates;
  bool no_neutral = false;
  std::string out;
};

struct VisualArgs {
  std::string seegull, visual_attributes, out, rule = "all";
  std::vector<std::string> votes = {"NA_stereo"};
  double min_votes = 2;
  std::size_t min_stereotypes = 1, images = 5;
  std::uint64_t seed = 0;
  std::vector<std::string> detection_templates;
  std::string default_template = "{a} {id} person";
  std::string attribute_template = "{a} {attr} {id} person";
  bool no_detection = false, no_pull = false;
};

struct GeoObjectArgs {
  std::string table, column = "object", objects, template_text = "{}", out;
};

struct GeoT2iArgs {
  std::string table, form = "object-region", object = "object", region = "region",
                     country = "country", out;
  std::size_t countries = 3;
};

// prompts social-perception (paper 001).
void add_social_perception_prompts(CLI::App* prompts) {
  auto social = std::make_shared<SocialArgs>();
  CLI::App* sp = prompts->add_subcommand(
      "social-perception",
      "SCM/ABC attribute prompts, neutral and group-naming prompts (Hausladen et al.; paper 001)");
  sp->add_option("--templates", social->template_set,
                 "Template set: paper (the paper's 4) | code (the authors' code, 4) | single")
      ->capture_default_str();
  sp->add_option("--template", social->templates,
                 "A template with \"{}\" where the word goes (repeatable; overrides --templates)");
  sp->add_option("--lexicon", social->lexicon,
                 "Word lists in the layout of data/clip-face-bias/attribute_lists.json "
                 "(default: the built-in lists)");
  sp->add_flag("--no-group-prompts", social->no_group_prompts,
               "Leave out the group-naming prompts (white, black, ..., old)");
  sp->add_option("--out", social->out, "Manifest to write (.csv or .jsonl)")->required();
  sp->callback([social] {
    check_out_path(social->out);
    SocialPerceptionPromptOptions o;
    o.template_set = parse_template_set(social->template_set);
    o.templates = social->templates;
    o.lexicon_path = social->lexicon;
    o.group_prompts = !social->no_group_prompts;
    write_manifest(social_perception_prompts(o), social->out);
  });
}

// prompts trait-pairs (paper 004).
void add_trait_pair_prompts(CLI::App* prompts) {
  auto trait = std::make_shared<TraitArgs>();
  CLI::App* tp = prompts->add_subcommand(
      "trait-pairs", "Captions for opposing trait pairs (Baherwani and Vincent; paper 004)");
  tp->add_option("--pairs", trait->pairs,
                 "Trait pairs 'first/second,...' (default: smart/dumb, happy/sad, "
                 "hardworking/lazy, nice/mean, dominant/agentic, honest/dishonest)");
  tp->add_option("--template", trait->templates,
                 "A template with \"{}\" where the trait goes (repeatable; default 'a {} person')");
  tp->add_flag("--no-neutral", trait->no_neutral, "Leave out the neutral prompt ('a person')");
  tp->add_option("--out", trait->out, "Manifest to write (.csv or .jsonl)")->required();
  tp->callback([trait, tp] {
    check_out_path(trait->out);
    TraitPairPromptOptions o;
    if (tp->count("--pairs") > 0) o.pairs = parse_trait_pairs(trait->pairs);
    if (!trait->templates.empty()) o.templates = trait->templates;
    o.neutral = !trait->no_neutral;
    write_manifest(trait_pair_prompts(o), trait->out);
  });
}

// prompts visual-stereotypes (paper 000).
void add_visual_stereotype_prompts(CLI::App* prompts) {
  auto vis = std::make_shared<VisualArgs>();
  CLI::App* vp = prompts->add_subcommand(
      "visual-stereotypes",
      "Prompts of the visual-stereotype study (ViSAGe; paper 000): the three detection\n"
      "templates per identity, and the default / stereotypical / non-stereotypical prompts\n"
      "of the stereotypical-pull study");
  vp->add_option("--seegull", vis->seegull, "SeeGULL stereotypes (stereotypes_global_v2.csv)")
      ->required();
  vp->add_option("--visual-attributes", vis->visual_attributes,
                 "ViSAGe's all_visual_attr.csv (Likert ratings) or a list with an attribute column")
      ->required();
  vp->add_option("--votes", vis->votes, "SeeGULL vote columns a stereotype needs (repeatable)")
      ->capture_default_str();
  vp->add_option("--min-votes", vis->min_votes, "Votes needed in each vote column")
      ->capture_default_str();
  vp->add_option("--vote-rule", vis->rule, "all | any of the vote columns")->capture_default_str();
  vp->add_option("--min-stereotypes", vis->min_stereotypes,
                 "Identities with fewer visual stereotypes are left out")
      ->capture_default_str();
  vp->add_option("--images-per-prompt", vis->images, "Images to generate per prompt")
      ->capture_default_str();
  vp->add_option("--seed", vis->seed, "Seed of the non-stereotypical attribute draw")
      ->capture_default_str();
  vp->add_option("--detection-template", vis->detection_templates,
                 "Detection template with {id} (repeatable; default: the paper's three)");
  vp->add_option("--default-template", vis->default_template,
                 "Default-set template ({a} = a/an for the next word)")
      ->capture_default_str();
  vp->add_option("--attribute-template", vis->attribute_template,
                 "Stereotypical / non-stereotypical template with {attr} and {id}")
      ->capture_default_str();
  vp->add_flag("--no-detection", vis->no_detection, "Leave out the detection prompts");
  vp->add_flag("--no-pull", vis->no_pull, "Leave out the pull prompts");
  vp->add_option("--out", vis->out, "Manifest to write (.csv or .jsonl)")->required();
  vp->callback([vis] {
    check_out_path(vis->out);
    VLBIAS_CHECK(vis->rule == "all" || vis->rule == "any", UsageError,
                 "--vote-rule must be all or any, got '{}'", vis->rule);
    const VisualAttributes visual = read_visual_attributes(vis->visual_attributes);
    StereotypeOptions so;
    so.vote_columns = vis->votes;
    so.min_votes = vis->min_votes;
    so.rule = vis->rule == "any" ? VoteRule::Any : VoteRule::All;
    const VisualStereotypes st = build_visual_stereotypes(read_table(vis->seegull), visual, so);
    VisualPromptOptions o;
    if (!vis->detection_templates.empty()) o.detection_templates = vis->detection_templates;
    o.default_template = vis->default_template;
    o.attribute_template = vis->attribute_template;
    o.images_per_prompt = vis->images;
    o.min_stereotypes = vis->min_stereotypes;
    o.detection = !vis->no_detection;
    o.pull = !vis->no_pull;
    o.seed = vis->seed;
    write_manifest(visual_stereotype_prompts(st, visual, o), vis->out);
  });
}

// prompts geo-objects (paper 002).
void add_geo_object_prompts(CLI::App* prompts) {
  auto geo = std::make_shared<GeoObjectArgs>();
  CLI::App* gp = prompts->add_subcommand(
      "geo-objects",
      "The \"{object}\" prompts of the consistency indicator, one per distinct object (DIG-In;\n"
      "paper 002): embed their text column and give them to a geo-diversity spec as objects");
  gp->add_option("--table", geo->table, "Generated-image table whose objects to list");
  gp->add_option("--column", geo->column, "Object column of --table")->capture_default_str();
  gp->add_option("--objects", geo->objects, "Objects 'bag,car,...' (instead of --table)");
  gp->add_option("--template", geo->template_text,
                 "Template with \"{}\" where the object goes (DIG-In: the bare object)")
      ->capture_default_str();
  gp->add_option("--out", geo->out, "Manifest to write (.csv or .jsonl)")->required();
  gp->callback([geo] {
    check_out_path(geo->out);
    VLBIAS_CHECK(geo->table.empty() != geo->objects.empty(), UsageError,
                 "give either --table (with --column) or --objects");
    std::vector<std::string> objects;
    if (!geo->table.empty()) {
      objects = column_texts(read_table(geo->table), geo->column);
    } else {
      objects = split_list(geo->objects, "--objects");
    }
    write_manifest(geo_object_prompts(objects, geo->template_text), geo->out);
  });
}

// prompts geo-t2i (paper 002).
void add_geo_t2i_prompts(CLI::App* prompts) {
  auto geo = std::make_shared<GeoT2iArgs>();
  CLI::App* gp = prompts->add_subcommand(
      "geo-t2i",
      "The text-to-image prompts of DIG-In (paper 002) for the objects and regions of a real\n"
      "image table: \"{object}\", \"{object} in {region}\" or \"{object} in {country}\" (the\n"
      "region's countries with the most images), with the labels as columns, for generate t2i");
  gp->add_option("--table", geo->table, "Real image table (vlbias dataset geode|dollarstreet)")
      ->required();
  gp->add_option("--form", geo->form, "object | object-region | object-country")
      ->capture_default_str();
  gp->add_option("--object-column", geo->object, "Object column of --table (Dollar Street: topic)")
      ->capture_default_str();
  gp->add_option("--region-column", geo->region, "Region column of --table")->capture_default_str();
  gp->add_option("--country-column", geo->country, "Country column of --table")
      ->capture_default_str();
  gp->add_option("--countries-per-region", geo->countries,
                 "object-country: this many countries per region, those with the most images")
      ->capture_default_str();
  gp->add_option("--out", geo->out, "Manifest to write (.csv or .jsonl)")->required();
  gp->callback([geo] {
    check_out_path(geo->out);
    GeoT2iPromptOptions o;
    o.form = parse_geo_prompt_form(geo->form);
    o.countries_per_region = geo->countries;
    const Table t = read_table(geo->table);
    const bool regional = o.form != GeoPromptForm::Object;
    write_manifest(geo_t2i_prompts(
                       column_texts(t, geo->object, false), column_texts(t, geo->region, !regional),
                       column_texts(t, geo->country, o.form != GeoPromptForm::ObjectCountry), o),
                   geo->out);
  });
}

}  // namespace

void add_prompts_command(CLI::App& app) {
  CLI::App* prompts =
      app.add_subcommand("prompts", "Write a prompt manifest (one row per text prompt) as CSV");
  prompts->require_subcommand(1);

  add_social_perception_prompts(prompts);
  add_trait_pair_prompts(prompts);
  add_visual_stereotype_prompts(prompts);
  add_geo_object_prompts(prompts);
  add_geo_t2i_prompts(prompts);
}

}  // namespace vlbias::cli_internal
