#pragma once
// The dual-encoder audits (kind: social-perception, paper 001; kind: trait-pairs, paper 004):
// image embeddings against prompt embeddings. This header holds the kind's spec
// (DualEncoderAuditSpec, AuditSpec::dual_encoder()), its runner
// (src/audits/dual_encoder/dual_encoder_audit.cpp), the study loader
// (src/audits/dual_encoder/dual_encoder_audit_study.cpp) and the analyses
// (src/audits/dual_encoder/dual_encoder_audit_analyses.cpp). Each analysis takes a loaded study and
// returns its JSON section plus CSV tables; `vlbias audit` runs several of them, `vlbias metric
// associate|markedness|trait-confidence` run one.
//
// Spec keys (the keys every kind shares, and the rules for all specs, are in audit.h):
//
//   version: 1                      # optional; only 1 exists
//   kind: social-perception         # social-perception (paper 001) | trait-pairs (paper 004)
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
//     image: path                   # each image's file, for report.images (default path)
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
//     neutral: {pair_key: seed, bootstrap: 1000}   # off unless named (paper 001 App. G)
//     prompt_geometry: {components: 3}             # off unless named (paper 001 App. D)
//     valence_correlation: {factors: [smiling, lighting, pose], within: ""}  # off unless named
//                                                   # (Table S.4); within: one block per level
//     confidence: {scale: raw, logit_scale: 100, bootstrap: 1000, ci: 0.95,
//                  across: race, within: gender, test_across: anova, test_within: welch}
//   report: {images: 4, image_budget: 5000000}   # exemplar grids per group of factors.groups
//                                 # (a seeded sample of images.image's files), audit_types.h
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
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/audits/audit_types.h"
#include "vlbias/core/matrix.h"
#include "vlbias/io/table/table.h"
#include "vlbias/metrics/social_perception.h"
#include "vlbias/report/json_output.h"

namespace vlbias {

// The spec of a dual-encoder audit (the keys above).
struct DualEncoderAuditSpec {
  std::filesystem::path image_table;
  EmbeddingSource image_embeddings;
  std::string image_id_column;        // "" = row-aligned
  std::filesystem::path image_index;  // with image_id_column
  // The image table's image path column (relative paths: against the table's folder), read only
  // for report.images; a column the table lacks: no grids, and a note says why.
  std::string image_path_column = "path";

  std::filesystem::path prompt_manifest;
  EmbeddingSource prompt_embeddings;

  std::vector<std::string> group_factors;
  std::vector<std::pair<std::string, double>> ordinal_factors;  // column, threshold
  std::vector<std::string> categorical_factors;

  struct Association {
    AnalysisToggle toggle;
    std::size_t bootstrap = 1000;
    double ci = 0.95;
  } association;

  struct Scweat {
    AnalysisToggle toggle;
    std::string p_test = "permutation";  // permutation | sign-flip
    std::size_t permutations = 10000;
    std::vector<std::vector<std::string>> groupings;  // empty = each group factor alone
  } scweat;

  struct Markedness {
    AnalysisToggle toggle;
    std::vector<std::string> attributes;  // empty = group factors
    std::size_t bootstrap = 1000;
    double ci = 0.95;
  } markedness;

  struct Ranking {
    AnalysisToggle toggle;
    std::size_t k = 1000;                 // clamped to the number of images, noted
    std::vector<std::string> attributes;  // empty = group factors
    std::string desired = "uniform";      // uniform | base-rate
    std::string absent = "-inf";          // -inf | zero
  } ranking;

  struct AbsDiff {
    AnalysisToggle toggle;
    std::size_t pairs = 1000;
    std::vector<std::string> factors;  // empty = ordinal, categorical, then group factors
  } absdiff;

  struct Trends {
    AnalysisToggle toggle;
    std::vector<std::string> x;    // empty = the ordinal factors
    std::string fit_to = "means";  // means | images
    int degree = 2;
  } trends;

  // Off unless named: the images' cosine with the neutral prompt per group (paper 001 App. G).
  struct Neutral {
    AnalysisToggle toggle{false, false};
    std::string pair_key;  // image-table column naming an identity across groups ("" = none)
    std::size_t bootstrap = 1000;
    double ci = 0.95;
  } neutral;

  // Off unless named: valence geometry and PCA of the prompt embeddings (paper 001 App. D).
  struct PromptGeometry {
    AnalysisToggle toggle{false, false};
    std::size_t components = 3;
  } prompt_geometry;

  // Off unless named: Pearson r of a dimension's two valences over a factor's levels (paper 001
  // Table S.4). Empty factors: the ordinal, then the categorical factors.
  struct ValenceCorrelation {
    AnalysisToggle toggle{false, false};
    std::vector<std::string> factors;
    std::string within;  // "" = all images; else one block of results per level
  } valence_correlation;

  struct Ellipses {
    AnalysisToggle toggle;
    std::string points_by;  // "" = the first ordinal factor, or images when there is none
    double k_sigma = 2.0;
  } ellipses;

  // Off unless named: for every test of confidence and the association contrasts that is not
  // significant after Holm at `alpha`, the minimum detectable effect at `power` by simulation
  // from the study itself (audits/power_pilot.h), written into the test's entry as `power`.
  using Power = PowerSpec;
  Power power;

  // trait-pairs only.
  struct Confidence {
    AnalysisToggle toggle;
    std::string scale = "raw";  // raw | logit
    double logit_scale = 100.0;
    std::size_t bootstrap = 1000;
    double ci = 0.95;
    std::string across;  // default: the first group factor
    std::string within;  // default: the first group factor other than `across` ("" if none)
    std::string test_across = "anova";
    std::string test_within = "welch";
  } confidence;

  // trait-pairs only, off unless named: class activation maps of a CLIP ViT for one trait pair
  // of prompts.manifest over the images of images.image (include/vlbias/explain/explain.h),
  // written to RUN_DIR/explain/; the report shows the overlays of the `top` most confident images
  // per group (factors.groups) and, with `faces` (a `vlbias faces` run over images.table), the
  // share of the maps' mass in the faces per group with its tests.
  struct Explain {
    AnalysisToggle toggle{false, false};
    std::filesystem::path model;     // a CLIP ViT folder, resolved against the spec's folder
    std::string pair;                // a dimension of prompts.manifest with '+' and '-' poles
    std::string method = "gradcam";  // gradcam | gradcam++ | occlusion
    std::size_t top = 5;             // overlays per group
    std::filesystem::path faces;     // "" = none
    double logit_scale = 0.0;        // 0 = the model's
    std::size_t bootstrap = 1000;    // resamples of each group's mean CAM mass
  } explain;
};

// Runs a social-perception or trait-pairs audit (src/audits/dual_encoder/dual_encoder_audit.cpp);
// run_audit calls it for those kinds. Reads dual_encoder and the common fields.
void run_dual_encoder_audit(const AuditCommonSpec& spec, const DualEncoderAuditSpec& dual_encoder,
                            const std::filesystem::path& run_dir);

// ------------------------------------------------------------------------- the analyses

// Images with labels, prompts with their manifest, and their cosines.
struct Study {
  Table images;             // one row per image, its labels
  Table manifest_table;     // the prompt manifest as read
  PromptManifest manifest;  // parsed
  Matrix cos;               // prompts x images: cos(p, i), column i = images row i
  Matrix prompts;           // the prompt embeddings as read, row p = manifest row p
  std::size_t embedding_dim = 0;
  std::vector<std::string> inputs;  // the files read, for provenance hashes
};

struct StudyFiles {
  std::filesystem::path image_table;  // "" = no labels (a table of row numbers is made)
  std::filesystem::path image_embeddings;
  std::string image_tensor;
  std::string image_id_column;  // "" = row-aligned
  std::filesystem::path image_index;
  std::filesystem::path prompt_manifest;
  std::filesystem::path prompt_embeddings;
  std::string prompt_tensor;
};

// Reads and checks everything (shapes, dimensions, row alignment or id join, finite
// values, zero rows) and computes the cosine matrix with one GEMM.
Study load_study(const StudyFiles& files);

struct GroupingOptions {
  std::vector<std::string> by;  // group columns (intersectional); empty = all images
  std::size_t bootstrap = 1000;
  double ci = 0.95;
  std::uint64_t seed = 0;
  std::size_t min_group_size = 2;
};

// Tables: association_images (the image labels, cos_<dim> and delta_cos_<dim>),
// association_groups (group x dimension: n, cos_mean, delta_cos_mean, delta_cos_sd,
// CI of the Delta cos mean (bootstrap over images), small), association_contrasts (each
// group against the unweighted mean of the other groups' means per dimension,
// stats::contrast_vs_others, Holm and BH over all; JSON "contrasts"). `scores` receives the
// per-image scores for later analyses. The JSON is the to_json of the section as
// report/dual_encoder_results.h types it, and the section is the output's pilot.association.
AnalysisOutput association_analysis(const Study& study, const GroupingOptions& options,
                                    ImageDimensionScores& scores);

struct ScweatAnalysisOptions {
  std::vector<std::vector<std::string>> groupings;  // each: columns (intersectional)
  std::string p_test = "permutation";
  std::size_t permutations = 10000;
  std::uint64_t seed = 0;
  std::size_t min_group_size = 2;
};
// Every pair of groups of every grouping x every dimension and "all" (the targets of
// every dimension together): SC-WEAT with its p-value; Holm and BH over the table.
// Table scweat. Shows a progress bar (tests done of total).
AnalysisOutput scweat_analysis(const Study& study, const ScweatAnalysisOptions& options);

// Table markedness.
AnalysisOutput markedness_analysis(const Study& study, const MarkednessOptions& options);

// The neutral-prompt reference per group (Hausladen et al. App. G, Fig. S.14-S.16):
// neutral_cos(i) = the mean over templates of cos(image i, the template's neutral prompt).
// Per group of grouping.by: n, mean, sd and a bootstrap interval of the mean (seed); a
// one-way ANOVA across groups; per pair of groups (a < b in key order) the difference of
// means with, given pair_key (an image-table column naming an identity shown in every group,
// e.g. CausalFace's seed), a paired t test and Pearson's r over the identities both groups
// have (an identity's images within a group averaged first), else Welch's t over the images;
// Holm and BH over the pairs. Tables neutral_images (the image table plus neutral_cos),
// neutral_groups, neutral_pairs. UsageError when no template has a neutral prompt.
struct NeutralOptions {
  GroupingOptions grouping;
  std::string pair_key;
  std::uint64_t seed = 0;
};
AnalysisOutput neutral_analysis(const Study& study, const NeutralOptions& options);

// The prompt embeddings' geometry (Hausladen et al. App. D, Fig. S.6, Table S.5). Per dimension
// name with both valences: per word pair the mean over templates of the cosine of the two
// words' prompts in the same template (a bare-word manifest, template "{}", gives the paper's
// adjective cosines), within the positive valence, within the negative and across; one-sided
// Welch t tests that each within-valence set is closer than the cross-valence set (Table S.5's
// p-values). And a PCA (stats::pca) of every attribute prompt, `components` kept (clamped to
// the prompts and the embedding width). Tables prompt_similarities, prompt_pca.
AnalysisOutput prompt_geometry_analysis(const Study& study, std::size_t components);

// Whether a non-protected factor moves a dimension's two valences together (Hausladen et al.
// App. C.1, Table S.4): per factor (an image-table column) and per dimension with a '+' and a
// '-' valence, Pearson's r over the factor's levels between the mean Delta cos of the positive
// valence and of the negative one (every group's images pooled at a level; rows without the
// factor left out), with scipy's p and a Fisher z 95% interval, and the mean r per factor.
// With `within` (a column, e.g. CausalFace's factor folder) the same per level of it, over
// that level's images (a factor equal to `within` is skipped). Tables valence_correlations and
// valence_level_means. UsageError when the manifest has no dimension with both valences or no
// factor is given; InputError for an unknown column.
AnalysisOutput valence_correlation_analysis(const Study& study, const ImageDimensionScores& scores,
                                            const std::vector<std::string>& factors,
                                            const std::string& within = "");

struct RankingAnalysisOptions {
  std::size_t k = 1000;
  std::vector<std::string> attributes;
  std::string desired = "uniform";
  std::string absent = "-inf";
};
// Images ranked by cos(i, D) per dimension: Skew@k per class, MaxSkew@k and NDKL per
// attribute (tables ranking_skew, ranking_ndkl).
AnalysisOutput ranking_analysis(const Study& study, const ImageDimensionScores& scores,
                                const RankingAnalysisOptions& options);

struct ConfidenceAnalysisOptions {
  ConfidenceScale scale = ConfidenceScale::Raw;
  double logit_scale = 100.0;
  GroupingOptions grouping;  // by = group columns for the per-group means
  std::string across;        // e.g. race: ANOVA across its levels within each `within`
  std::string within;        // e.g. gender ("" = one test over all images)
  std::string test_across = "anova";
  std::string test_within = "welch";
};
// Tables confidence_images, confidence_groups, confidence_tests (paper 004).
AnalysisOutput confidence_analysis(const Study& study, const ConfidenceAnalysisOptions& options);

}  // namespace vlbias
