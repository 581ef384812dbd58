#pragma once
// Audit specs and runs (src/audits): `vlbias audit SPEC.yaml --out RUN_DIR`.
//
// A spec is YAML (yaml-cpp). Relative paths are relative to the spec file's folder.
// Unknown keys anywhere are a UsageError naming the key and the keys allowed there,
// so a typo never silently drops an analysis. Version 1:
//
//   version: 1                      # optional; only 1 exists
//   kind: social-perception         # social-perception (paper 001) | trait-pairs (paper 004)
//                                   # | geo-diversity (paper 002; its own keys, below)
//   title: "CLIP ViT-B/32 on CausalFace"   # optional, every kind: the report's title ...
//   about: "Synthetic data, planted effect" # ... and what was audited, under it
//   seed: 7                         # every resampling stream derives from it (default 0)
//   min_group_size: 10              # groups below this n are flagged (default 2)
//   images:
//     table: images.csv             # one row per image, its labels (CSV/TSV/JSONL)
//     embeddings: images.npy        # (images, dim) float .npy or .safetensors
//     tensor: image_embeds          # safetensors only: the tensor (default: the only one)
//     id_column: id                 # optional: join table rows to embedding rows by id ...
//     index: image_ids.csv          # ... through this table (row i = embedding row i)
//   prompts:
//     manifest: prompts.csv         # from `vlbias prompts` (see prompt_sets.h)
//     embeddings: prompts.npy       # row i = manifest row i
//     tensor: text_embeds           # safetensors only
//   factors:                        # the image table's label columns and their roles
//     groups: [race, gender]        # social groups: every per-group table is by these
//     ordinal: {age: 1.1, smiling: 1.1}   # ordinal factors and their AbsDiff thresholds
//     categorical: [lighting, pose, seed] # other factors held fixed in AbsDiff pairs
//   analyses:                       # each may be omitted (defaults, below) or `false` (off)
//     association: {bootstrap: 1000, ci: 0.95}
//     scweat: {p_test: permutation, permutations: 10000, groupings: [race, gender]}
//     markedness: {attributes: [race, gender], bootstrap: 1000}
//     ranking: {k: 1000, attributes: [race, gender], desired: uniform, absent: -inf}
//     absdiff: {pairs: 1000, factors: [age, smiling, lighting, pose, gender, race, seed]}
//     trends: {x: [age, smiling], fit_to: means, degree: 2}
//     ellipses: {points_by: age, k_sigma: 2}
//     confidence: {scale: raw, logit_scale: 100, bootstrap: 1000, ci: 0.95,
//                  across: race, within: gender, test_across: anova, test_within: welch}
//
// Which analyses a kind runs by default:
//   social-perception: association, scweat, markedness (when the manifest has group
//     prompts), ranking, absdiff (when factors other than groups are given), trends
//     and ellipses (when ordinal factors are given).
//   trait-pairs: confidence (per group means with CIs; ANOVA across `across` within
//     each level of `within`, a two-group test across `within` within each level of
//     `across`), association and scweat over the trait dimensions.
// An analysis named explicitly that cannot run (e.g. markedness without group
// prompts) is a UsageError; one enabled only by default is skipped with a note.
// Naming an analysis of the other kind (markedness in a trait-pairs audit,
// confidence in a social-perception one) is a UsageError, raised before any input
// is read.
//
// Defaults for lists: scweat.groupings = each groups column on its own;
// markedness.attributes and ranking.attributes = groups; absdiff.factors = ordinal,
// categorical, then groups; trends.x = the ordinal factors; trends/ellipses by = groups.
// A scweat grouping may be a list of columns: [race, gender] compares the
// intersectional groups pairwise.
//
// ---------------------------------------------------------- kind: lvlm-counterfactual
// What LVLMs write about counterfactual images of people (paper 003, Howard et al.;
// measures in lvlm.h and lvlm_report.h), from generated answers streamed row by row:
//
//   version: 1
//   kind: lvlm-counterfactual
//   seed: 0
//   min_group_size: 2
//   generations: answers.jsonl      # or a list of shards of one table (CSV/TSV/JSONL)
//   columns:
//     set_key: [filename, rank, seed]   # a counterfactual set (needed by maxgap, tests)
//     group: [race, gender]             # required
//     by: [prompt, mitigation]          # optional split
//     scores: [toxicity, insult]        # optional score columns
//     text: text                        # needed by pmi, lexicon, responses, ratings
//   analyses:                           # each: true, false or a map of options
//     maxgap: {bootstrap: 1000, ci: 0.95}             # default on when scores are given
//     pmi: {min_freq: 10, threshold: 1, top: 0, log_base: e}   # default on with text
//     lexicon: {file: lexicon.csv, word_column: "", by: occupation, min_obs: 35,
//               distinct: false, stop_words: english}  # on when given
//     responses: {refusal_patterns: [...], refusal_column: refused}  # default on with text
//     ratings:                                        # numeric answers, when given
//       - {name: hiring, kind: rating, where: {column: prompt, values: [Hiring]}}
//     group_tests: {permutations: 1000}               # default on with a set key
//     paired: {column: mitigation, baseline: none, bootstrap: 1000, ci: 0.95}
//
// Shards: `vlbias audit SPEC --input SHARD --save-state S` scans one shard;
// `vlbias audit SPEC --out RUN --from-state S1 S2 ...` merges them: the results are
// identical to one run over every row.
//
// ---------------------------------------------------------- kind: visual-stereotypes
// Visual stereotypes in text-to-image generation (paper 000, ViSAGe; definitions in
// visual_stereotypes.h). Each of annotations, captions and pull is optional (at least one
// is needed) and enables its analysis:
//
//   version: 1
//   kind: visual-stereotypes
//   seed: 7
//   seegull: stereotypes_global_v2.csv    # required
//   visual_attributes: all_visual_attr.csv  # required (Likert layout, or a plain list)
//   regions: regions.csv                  # identity,region (default: the built-in table)
//   stereotypes:
//     votes: [NA_stereo]                  # SeeGULL vote columns (default NA_stereo)
//     min_votes: 2
//     rule: all                           # all | any of the vote columns
//     min_per_identity: 2                 # fewer visual stereotypes: left out of theta
//   annotations:                          # ViSAGe's full_set_annotations.csv layout
//     table: full_set_annotations.csv
//     image: img_path                     # column names (these defaults)
//     attribute: attribute
//     present: present
//     task: worker_id                     # "" = no task column
//     identity: ""                        # "" = from the image file name
//     coords: coords
//     none_option: none of the above
//     aggregate: annotation               # annotation | majority
//     none_as_random: false               # true: the authors' L(random) (paper Tables 1-2)
//   captions:
//     table: captions.csv                 # one row per caption
//     image: image
//     caption: caption
//     identity: ""
//   pull:
//     table: pull.csv                     # one row per image: identity, set
//     embeddings: pull.npy                # row i = image i (.npy or .safetensors)
//     tensor: ""
//     identity: identity
//     set: set                            # default | stereotypical | non-stereotypical
//   analyses:
//     likelihood: {bootstrap: 1000, ci: 0.95}
//     salience: {smoothing: 1, top: 5}
//     pull: {permutations: 10000, alternative: greater}   # greater | less | two-sided
//
// ---------------------------------------------------------------- kind: geo-diversity
// Text-to-image realism, diversity and consistency by region (paper 002, DIG-In):
//
//   version: 1
//   kind: geo-diversity
//   seed: 7
//   min_group_size: 10              # cells with fewer real or generated images are flagged
//   real:
//     table: real.csv               # one row per real image, its region and object
//     features: real.npy            # (images, dim): Inception pool3, CLIP image embeddings, ...
//     tensor: features              # safetensors only
//     region: region                # column names (these defaults)
//     object: object
//     duplicates: keep              # rows with identical features: keep | drop (every copy,
//                                   # as DIG-In's code) | keep-one
//   generated:                      # one source, or a list whose rows are concatenated
//     - table: generated.csv        # one row per generated image
//       features: generated.npy     # the same feature space as real.features
//       tensor: features
//       clip: generated_clip.npy    # CLIP image embeddings (optional: the consistency indicator)
//       clip_tensor: image_embeds
//       region: region              # column names (these defaults; absent columns are empty)
//       object: object
//       country: country
//       form_column: form           # per-row prompt form, when the column exists
//       form: object-region         # or: every row of this source has this form
//   objects:                        # CLIP text embeddings of "{object}" (for consistency)
//     table: objects.csv            # one row per object text; row i = embedding row i
//     embeddings: objects.npy
//     tensor: text_embeds
//     object: object                # column holding the object label
//   aliases:                        # generated label -> real label, before matching
//     region: {"the Americas": Americas, "West Asia": WestAsia}
//     object: {"cooking pots": "cooking pot"}
//   sampling:
//     real_per_cell: 180            # optional: this many real images per (object, region), seeded
//     generated_per_cell: 180       # optional: balanced generations per cell, seeded
//   analyses:
//     region: {k: 3, inclusive: false, bootstrap: 1000, ci: 0.95}
//     object_region: {k: 3, inclusive: false, bootstrap: 1000, ci: 0.95}
//     consistency: {variant: raw, percentile: 10, bootstrap: 1000, ci: 0.95}
//     distribution: {fid: true, vendi: true, kid: false, kid_subsets: 100, kid_subset_size: 1000}
//
// Prompt forms: object ("{object}"), object-region ("{object} in {region}") and object-country
// ("{object} in {country}"); also accepted as those literal templates. A row's form is its
// form column's value, else its source's `form`, else inferred: a country -> object-country,
// else a region -> object-region, else object. Generated regions and objects are matched to
// the real ones after aliases; unmatched labels are left out of the real-referenced indicators
// and counted in the results. How each indicator composes its generated sets is documented
// in geo_diversity.h.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vlbias {

enum class AuditKind {
  SocialPerception,
  TraitPairs,
  GeoDiversity,
  LvlmCounterfactual,
  VisualStereotypes
};
// "social-perception", "trait-pairs", "geo-diversity", "lvlm-counterfactual",
// "visual-stereotypes"
const char* to_string(AuditKind kind);

// A numeric-answer measure of an lvlm-counterfactual spec (lvlm.h's RatingSpec).
struct RatingSpecYaml {
  std::string name;
  std::string kind = "rating";  // rating | salary
  std::string where_column;
  std::vector<std::string> where_values;
};

struct EmbeddingSource {
  std::filesystem::path path;  // resolved against the spec's folder
  std::string tensor;          // safetensors tensor name ("" = the only tensor)
};

// A generated source of a geo-diversity spec.
struct GeoSource {
  std::filesystem::path table;
  EmbeddingSource features;
  EmbeddingSource clip;  // path "" = none
  std::string region_column = "region";
  std::string object_column = "object";
  std::string country_column = "country";
  std::string form_column = "form";
  std::string form;  // "" = per row; else object | object-region | object-country
};

struct AuditSpec {
  std::filesystem::path spec_path;  // the YAML file (for provenance); "" when parsed from text
  AuditKind kind = AuditKind::SocialPerception;
  std::uint64_t seed = 0;
  std::size_t min_group_size = 2;
  // Shown at the top of report.html (and written to results.json): a title, and what the
  // data are (e.g. "synthetic, with a planted effect"). "" = none.
  std::string title;
  std::string about;

  std::filesystem::path image_table;
  EmbeddingSource image_embeddings;
  std::string image_id_column;        // "" = row-aligned
  std::filesystem::path image_index;  // with image_id_column

  std::filesystem::path prompt_manifest;
  EmbeddingSource prompt_embeddings;

  std::vector<std::string> group_factors;
  std::vector<std::pair<std::string, double>> ordinal_factors;  // column, threshold
  std::vector<std::string> categorical_factors;

  // An analysis is run when `enabled`; `explicit_` records that the spec named it
  // (so a failure to apply it is an error rather than a skipped note).
  struct Toggle {
    bool enabled = true;
    bool explicit_ = false;
  };

  struct Association {
    Toggle toggle;
    std::size_t bootstrap = 1000;
    double ci = 0.95;
  } association;

  struct Scweat {
    Toggle toggle;
    std::string p_test = "permutation";  // permutation | sign-flip
    std::size_t permutations = 10000;
    std::vector<std::vector<std::string>> groupings;  // empty = each group factor alone
  } scweat;

  struct Markedness {
    Toggle toggle;
    std::vector<std::string> attributes;  // empty = group factors
    std::size_t bootstrap = 1000;
    double ci = 0.95;
  } markedness;

  struct Ranking {
    Toggle toggle;
    std::size_t k = 1000;                 // clamped to the number of images, noted
    std::vector<std::string> attributes;  // empty = group factors
    std::string desired = "uniform";      // uniform | base-rate
    std::string absent = "-inf";          // -inf | zero
  } ranking;

  struct AbsDiff {
    Toggle toggle;
    std::size_t pairs = 1000;
    std::vector<std::string> factors;  // empty = ordinal, categorical, then group factors
  } absdiff;

  struct Trends {
    Toggle toggle;
    std::vector<std::string> x;    // empty = the ordinal factors
    std::string fit_to = "means";  // means | images
    int degree = 2;
  } trends;

  struct Ellipses {
    Toggle toggle;
    std::string points_by;  // "" = the first ordinal factor, or images when there is none
    double k_sigma = 2.0;
  } ellipses;

  // kind: geo-diversity (the dual-encoder fields above are unused).
  struct Geo {
    std::filesystem::path real_table;
    EmbeddingSource real_features;
    std::string real_region_column = "region";
    std::string real_object_column = "object";
    std::string duplicates = "keep";  // keep | drop | keep-one
    std::vector<GeoSource> generated;
    std::filesystem::path objects_table;  // "" = no object text embeddings
    EmbeddingSource objects_embeddings;
    std::string objects_column = "object";
    std::vector<std::pair<std::string, std::string>> region_aliases;  // generated -> real
    std::vector<std::pair<std::string, std::string>> object_aliases;
    std::size_t real_per_cell = 0;       // 0 = no balancing
    std::size_t generated_per_cell = 0;  // 0 = no balancing
    struct Manifold {
      Toggle toggle;
      std::size_t k = 3;  // DIG-In's k
      bool inclusive = false;
      std::size_t bootstrap = 1000;
      double ci = 0.95;
    } region, object_region;
    struct Consistency {
      Toggle toggle;
      std::string variant = "raw";  // raw | hessel | torchmetrics
      double percentile = 10.0;
      std::size_t bootstrap = 1000;
      double ci = 0.95;
    } consistency;
    struct Distribution {
      Toggle toggle;
      bool fid = true;
      bool vendi = true;
      bool kid = false;
      std::size_t kid_subsets = 100;
      std::size_t kid_subset_size = 1000;
    } distribution;
  } geo;

  // kind: lvlm-counterfactual.
  struct Lvlm {
    std::vector<std::filesystem::path> generations;  // shards of one table
    std::vector<std::string> set_key, group, by, scores;
    std::string text;
    struct MaxGap {
      Toggle toggle;
      std::size_t bootstrap = 1000;
      double ci = 0.95;
    } maxgap;
    struct Pmi {
      Toggle toggle;
      std::size_t min_freq = 10;
      double threshold = 1.0;
      std::size_t top = 0;
      double log_base = 0;  // 0 = e
    } pmi;
    struct LexiconSpec {
      Toggle toggle;
      std::filesystem::path file;
      std::string word_column, by, stop_words = "english";
      std::size_t min_obs = 35;
      bool distinct = false;
    } lexicon;
    struct Responses {
      Toggle toggle;
      std::vector<std::string> refusal_patterns;
      std::string refusal_column;
    } responses;
    std::vector<RatingSpecYaml> ratings;
    struct GroupTests {
      Toggle toggle;
      std::size_t permutations = 1000;
    } group_tests;
    struct Paired {
      Toggle toggle;
      std::string column, baseline;
      std::size_t bootstrap = 1000;
      double ci = 0.95;
    } paired;
  } lvlm;

  struct Confidence {
    Toggle toggle;
    std::string scale = "raw";  // raw | logit
    double logit_scale = 100.0;
    std::size_t bootstrap = 1000;
    double ci = 0.95;
    std::string across;  // default: the first group factor
    std::string within;  // default: the first group factor other than `across` ("" if none)
    std::string test_across = "anova";
    std::string test_within = "welch";
  } confidence;

  // kind: visual-stereotypes (paper 000; format above).
  struct Visual {
    std::filesystem::path seegull, visual_attributes, regions;  // regions "" = built-in
    std::vector<std::string> vote_columns = {"NA_stereo"};
    double min_votes = 2;
    std::string vote_rule = "all";  // all | any
    std::size_t min_stereotypes = 2;
    std::filesystem::path annotations;  // "" = no likelihood analysis
    std::string image_column = "img_path", attribute_column = "attribute",
                present_column = "present", task_column = "worker_id", identity_column,
                coords_column = "coords", none_option = "none of the above";
    std::string aggregation = "annotation";  // annotation | majority
    bool none_as_random = false;
    std::filesystem::path captions;  // "" = no salience
    std::string caption_image_column = "image", caption_column = "caption", caption_identity_column;
    std::filesystem::path pull_table;  // "" = no pull
    EmbeddingSource pull_embeddings;
    std::string pull_identity_column = "identity", pull_set_column = "set";
    struct Likelihood {
      Toggle toggle;
      std::size_t bootstrap = 1000;
      double ci = 0.95;
    } likelihood;
    struct Salience {
      Toggle toggle;
      double smoothing = 1.0;
      std::size_t top = 5;
    } salience;
    struct Pull {
      Toggle toggle;
      std::size_t permutations = 10000;
      std::string alternative = "greater";
    } pull;
  } visual;
};

// Parses a spec from YAML text; `base_dir` resolves relative paths, `source` names
// the spec in messages. UsageError (one sentence naming the key path, e.g.
// "analyses.scweat.permutations", and what was expected): malformed YAML (with its
// line), a missing required key (kind, images.table, images.embeddings,
// prompts.manifest, prompts.embeddings, factors.groups), an unknown kind (listing the kinds,
// with a near miss suggested), an unknown key, a value of the wrong type or out of range
// (permutations 1 to 10^6, bootstrap 0 to 10^6 (0: no CIs), pairs 1 to 10^7, k > 0; ci in
// (0, 1); thresholds >= 0 and finite), text that is not UTF-8, an input path that names a
// device or a folder, a factor listed in two roles, an unknown p_test, scale, test, fit_to,
// desired or absent, index without id_column.
AuditSpec parse_audit_spec(const std::string& yaml_text, const std::filesystem::path& base_dir,
                           const std::string& source);
// Reads and parses a spec file (InputError when it cannot be read).
AuditSpec load_audit_spec(const std::filesystem::path& path);

// Runs a geo-diversity audit (src/audits/geo_diversity.cpp); run_audit calls it for that kind.
void run_geo_diversity_audit(const AuditSpec& spec, const std::filesystem::path& run_dir);

// Shards of an lvlm-counterfactual audit: `inputs` replaces the spec's generations;
// with `save_state` the scan is written there (no results); `from_states` merges
// saved states instead of scanning (lvlm.h).
struct LvlmShardOptions {
  std::vector<std::filesystem::path> inputs;
  std::filesystem::path save_state;
  std::vector<std::filesystem::path> from_states;
};
// Runs a visual-stereotypes audit (src/audits/visual_audit.cpp).
void run_visual_stereotypes_audit(const AuditSpec& spec, const std::filesystem::path& run_dir);
// Runs an lvlm-counterfactual audit (src/audits/lvlm_audit.cpp).
void run_lvlm_audit(const AuditSpec& spec, const std::filesystem::path& run_dir,
                    const LvlmShardOptions& shards = {});

// Runs the audit and writes RUN_DIR/results.json, RUN_DIR/report.html and
// RUN_DIR/tables/*.csv. RUN_DIR is created when absent and locked for the run (UsageError when
// another process holds it, or when it names a file); the outputs are written into a staging
// folder and moved into place at the end, results.json last, so an error leaves an earlier
// run in RUN_DIR as it was (src/audits/run_output.h). The same spec, inputs and seed give
// byte-identical files apart from the provenance timestamp, whatever the thread count.
void run_audit(const AuditSpec& spec, const std::filesystem::path& run_dir);

// `vlbias audit --check SPEC` (src/audits/audit_check.cpp): opens every input the run would read
// with the run's loaders and makes the run's checks on them (readable files, the columns the
// spec names, table and embedding row counts and dimensions), in the run's order, so the first
// fault throws the run's own error; computes no analysis and writes nothing (no RUN_DIR, no
// lock). Cell contents are checked only where loading checks them. Returns the number of input
// files checked.
std::size_t check_audit_inputs(const AuditSpec& spec);

}  // namespace vlbias
