// `vlbias metric associate|markedness|trait-confidence`: image-text association
// metrics over a prompt manifest (papers 001 and 004). Each runs one audit analysis
// (include/vlbias/audits/dual_encoder_audit.h) and prints its JSON.
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/core/rng.h"
#include "vlbias/report/json_output.h"

namespace vlbias::cli_internal {

namespace {

struct StudyArgs {
  std::string images, image_tensor, prompts, prompt_tensor, manifest, table, id_column, index;
  std::string by, out;
  std::size_t bootstrap = 1000;
  double ci = 0.95;
  std::uint64_t seed = 0;
  std::size_t min_group_size = 2;
};

void add_study_options(CLI::App* cmd, StudyArgs& a, bool needs_table) {
  cmd->add_option("--images", a.images, "Image embeddings (.npy or .safetensors, rows = images)")
      ->required();
  cmd->add_option("--image-tensor", a.image_tensor, "safetensors tensor of the images");
  cmd->add_option("--prompts", a.prompts,
                  "Prompt embeddings (.npy or .safetensors), row i = manifest row i")
      ->required();
  cmd->add_option("--prompt-tensor", a.prompt_tensor, "safetensors tensor of the prompts");
  cmd->add_option("--manifest", a.manifest, "Prompt manifest CSV (from `vlbias prompts`)")
      ->required();
  auto* table = cmd->add_option(
      "--table", a.table, "Image labels (CSV/JSONL), row i = embedding row i (or --id-column)");
  if (needs_table) table->required();
  cmd->add_option("--id-column", a.id_column, "Join table rows to embedding rows by this id ...");
  cmd->add_option("--index", a.index, "... through this table (row i = embedding row i)");
  cmd->add_option("--bootstrap", a.bootstrap, "Bootstrap resamples for CIs (0: none)")
      ->check(resamples_range())
      ->capture_default_str();
  cmd->add_option("--ci", a.ci, "Confidence level")->capture_default_str();
  cmd->add_option("--seed", a.seed, "Seed of the bootstrap")->capture_default_str();
  cmd->add_option("--min-group-size", a.min_group_size, "Flag groups smaller than this")
      ->capture_default_str();
  cmd->add_option("--out", a.out, "Write the JSON here instead of stdout");
}

Study load(const StudyArgs& a, Provenance& p) {
  StudyFiles f;
  f.image_embeddings = a.images;
  f.image_tensor = a.image_tensor;
  f.image_table = a.table;
  f.image_id_column = a.id_column;
  f.image_index = a.index;
  f.prompt_manifest = a.manifest;
  f.prompt_embeddings = a.prompts;
  f.prompt_tensor = a.prompt_tensor;
  for (const std::string& path : {a.images, a.table, a.index, a.manifest, a.prompts}) {
    if (!path.empty()) p.inputs.push_back(path);
  }
  start_hashing_inputs(p);
  return load_study(f);
}

GroupingOptions grouping_of(const StudyArgs& a) {
  GroupingOptions g;
  if (!a.by.empty()) g.by = split_list(a.by, "--by");
  g.bootstrap = a.bootstrap;
  g.ci = a.ci;
  g.seed = a.seed;
  g.min_group_size = a.min_group_size;
  return g;
}

Json common_parameters(const StudyArgs& a) {
  return Json{
      {"by", a.by}, {"bootstrap", a.bootstrap}, {"ci", a.ci}, {"min_group_size", a.min_group_size}};
}

void finish(Json out, Provenance& p, const StudyArgs& a, const AnalysisOutput& section) {
  if (!section.notes.empty()) out["notes"] = section.notes;
  p.seed = a.seed;
  out["provenance"] = provenance_json(p);
  write_json(out, a.out);
}

}  // namespace

void add_associate_metric(CLI::App& metric) {
  auto a = std::make_shared<StudyArgs>();
  auto per_image = std::make_shared<std::string>();
  CLI::App* cmd = metric.add_subcommand(
      "associate",
      "cos and Delta cos of every image with every social dimension of a prompt manifest,\n"
      "and per-group means with bootstrap CIs (Hausladen et al. Eq. 1-2)");
  add_study_options(cmd, *a, false);
  cmd->add_option("--by", a->by, "Group columns of --table (comma-separated, intersectional)");
  cmd->add_option("--per-image", *per_image,
                  "Also write the per-image scores (labels, cos_<dim>, delta_cos_<dim>) as CSV");
  cmd->callback([a, per_image] {
    Provenance p;
    p.command = "metric associate";
    const Study study = load(*a, p);
    ImageDimensionScores scores;
    AnalysisOutput section = association_analysis(study, grouping_of(*a), scores);
    if (!per_image->empty()) write_csv(section.tables.front().second, *per_image);
    p.parameters = common_parameters(*a);
    finish(section.json, p, *a, section);
  });
}

void add_markedness_metric(CLI::App& metric) {
  auto a = std::make_shared<StudyArgs>();
  auto attributes = std::make_shared<std::string>();
  CLI::App* cmd = metric.add_subcommand(
      "markedness",
      "Share of each group's images that score the neutral prompt above the prompt naming\n"
      "their group (Wolfe and Caliskan 2022; Hausladen et al. App. B.2)");
  add_study_options(cmd, *a, true);
  cmd->add_option("--attributes", *attributes,
                  "Label columns whose levels the group prompts name (e.g. race,gender)")
      ->required();
  cmd->callback([a, attributes] {
    Provenance p;
    p.command = "metric markedness";
    const Study study = load(*a, p);
    MarkednessOptions o;
    o.attributes = split_list(*attributes, "--attributes");
    o.bootstrap = a->bootstrap;
    o.ci_level = a->ci;
    o.seed = a->seed;
    o.min_group_size = a->min_group_size;
    const AnalysisOutput section = markedness_analysis(study, o);
    p.parameters = common_parameters(*a);
    p.parameters["attributes"] = o.attributes;
    finish(section.json, p, *a, section);
  });
}

void add_trait_confidence_metric(CLI::App& metric) {
  auto a = std::make_shared<StudyArgs>();
  auto o = std::make_shared<ConfidenceAnalysisOptions>();
  auto scale = std::make_shared<std::string>("raw");
  CLI::App* cmd = metric.add_subcommand(
      "trait-confidence",
      "Confidence in the first trait of each pair, exp(s0) / (exp(s0) + exp(s1)), per group,\n"
      "with ANOVA across one factor and a two-group test across another (Baherwani and "
      "Vincent)");
  add_study_options(cmd, *a, true);
  cmd->add_option("--by", a->by, "Group columns for the means (e.g. race,gender)");
  cmd->add_option("--scale", *scale, "raw (cosines, the paper) | logit (x --logit-scale, as CLIP)")
      ->capture_default_str();
  cmd->add_option("--logit-scale", o->logit_scale, "exp(logit_scale) of the model")
      ->capture_default_str();
  cmd->add_option("--across", o->across, "Test across the levels of this column (e.g. race)");
  cmd->add_option("--within", o->within, "... within each level of this column (e.g. gender)");
  cmd->add_option("--test-across", o->test_across, "anova | kruskal | welch | ...")
      ->capture_default_str();
  cmd->add_option("--test-within", o->test_within, "welch | student | mannwhitney | anova")
      ->capture_default_str();
  cmd->callback([a, o, scale] {
    Provenance p;
    p.command = "metric trait-confidence";
    o->scale = parse_confidence_scale(*scale);
    const Study study = load(*a, p);
    o->grouping = grouping_of(*a);
    const AnalysisOutput section = confidence_analysis(study, *o);
    p.parameters = common_parameters(*a);
    p.parameters["scale"] = *scale;
    p.parameters["logit_scale"] = o->logit_scale;
    p.parameters["across"] = o->across;
    p.parameters["within"] = o->within;
    p.parameters["test_across"] = o->test_across;
    p.parameters["test_within"] = o->test_within;
    finish(section.json, p, *a, section);
  });
}

}  // namespace vlbias::cli_internal
