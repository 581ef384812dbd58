#pragma once
// The analyses of the dual-encoder audits (src/audits/analyses_*.cpp). Each takes a
// loaded study and returns its JSON section plus CSV tables; `vlbias audit` runs
// several of them, `vlbias metric associate|markedness|trait-confidence` run one.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/report/json_output.h"
#include "vlbias/core/matrix.h"
#include "vlbias/metrics/social_perception.h"
#include "vlbias/io/table.h"

namespace vlbias {

// Images with labels, prompts with their manifest, and their cosines.
struct Study {
  Table images;             // one row per image, its labels
  Table manifest_table;     // the prompt manifest as read
  PromptManifest manifest;  // parsed
  Matrix cos;               // prompts x images: cos(p, i), column i = images row i
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

// One analysis' result: a JSON section and named CSV tables ("association_groups").
struct AnalysisOutput {
  Json json = Json::object();
  std::vector<std::pair<std::string, Table>> tables;
  std::vector<std::string> notes;
};

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
// per-image scores for later analyses.
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
