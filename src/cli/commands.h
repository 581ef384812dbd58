#pragma once
// Each subcommand registers itself on the root CLI11 app. Command bodies throw
// vlbias::Error subclasses; cli_internal::run maps them to exit codes.
#include <string>
#include <vector>

namespace CLI {
class App;
class Validator;
}  // namespace CLI
namespace vlbias {
struct Shard;
struct Table;
struct LvlmJob;
struct T2iJob;
struct JudgeJob;
}  // namespace vlbias

namespace vlbias::cli_internal {

void add_compare_command(CLI::App& app);
// `vlbias label --images T|FACES_DIR --out LABELS.csv`: perceived attributes (label_command.cpp).
void add_label_command(CLI::App& app);
void add_describe_command(CLI::App& app);
// `vlbias correlate --table T --x a,b --y c,d`: correlation tables (correlate_command.cpp).
void add_correlate_command(CLI::App& app);
// `vlbias power --pilot RUN_DIR --effect E`: power, n and MDE from an audit (power_command.cpp).
void add_power_command(CLI::App& app);
// `vlbias compare-runs RUN_A RUN_B ... --out DIR`: runs side by side (compare_runs_command.cpp).
void add_compare_runs_command(CLI::App& app);
// `vlbias prompts social-perception|trait-pairs`: prompt manifests (prompts_command.cpp).
void add_prompts_command(CLI::App& app);
// `vlbias dataset NAME DIR --out images.csv`: dataset readers (dataset_command.cpp).
void add_dataset_command(CLI::App& app);
// `vlbias dataset visage-labels --annotations FILE --out LABELS.csv`: ViSAGe's human annotations
// as LABELS.csv rows (visage_labels_command.cpp), registered on `dataset`.
void add_visage_labels_command(CLI::App* dataset);
// `vlbias audit SPEC.yaml --out RUN_DIR` (audit_command.cpp).
void add_audit_command(CLI::App& app);
// `vlbias report RUN_DIR`: re-renders an audit's report.html (audit_command.cpp).
void add_report_command(CLI::App& app);
// `vlbias metric NAME ...`: one subcommand per metric, each printing one JSON object.
void add_metric_commands(CLI::App& app);
// The metric subcommands, registered on `metric` by add_metric_commands.
void add_skew_metric(CLI::App& metric);    // metric_ranking.cpp (paper 001)
void add_ndkl_metric(CLI::App& metric);    // metric_ranking.cpp (paper 001)
void add_scweat_metric(CLI::App& metric);  // metric_scweat.cpp (paper 001)
// metric_association.cpp: associate and markedness (paper 001), trait-confidence (004).
void add_associate_metric(CLI::App& metric);
void add_markedness_metric(CLI::App& metric);
void add_trait_confidence_metric(CLI::App& metric);
// metric_absdiff.cpp: AbsDiff pairs with Mann-Whitney between factors (paper 001).
void add_absdiff_metric(CLI::App& metric);
// metric_trends.cpp: quadratic trend fits per group and covariance ellipses (paper 001).
void add_trends_metric(CLI::App& metric);
// metric_clipscore.cpp: CLIPScore variants (paper 002 consistency).
void add_clipscore_metric(CLI::App& metric);
// metric_distribution.cpp: prdc, fid, kid and vendi (paper 002 and beyond).
void add_distribution_metrics(CLI::App& metric);
// metric_lvlm.cpp: maxgap, pmi, lexicon, ratings, responses, paired (paper 003).
void add_lvlm_metrics(CLI::App& metric);
// metric_agreement.cpp: agreement of two scorers, overall and per group (issue 21).
void add_agreement_metric(CLI::App& metric);
// --shard I/N|auto on a job command; `unit` says what a shard holds ("checkpoint chunks c
// with c mod N = I"). shard_and_out parses it (whole when empty), puts the index for {shard}
// in `out` and makes the output's folder (unless `out_is_folder`: a run folder makes itself);
// {shard} without --shard is a UsageError (shard_option.cpp).
void add_shard_option(CLI::App* cmd, std::string& shard, const std::string& unit);
Shard shard_and_out(const std::string& shard, std::string& out, bool out_is_folder);
// --column and --image-root of a command that reads an images table as `vlbias encode --images`
// does (explain, faces, label; encode_command.cpp).
void add_image_table_options(CLI::App* cmd, std::string& column, std::string& image_root);
// `vlbias merge OUT SHARD...`: shard outputs put together as one process writes them
// (merge_command.cpp).
void add_merge_command(CLI::App& app);
// `vlbias generate lvlm|llm|t2i SPEC.yaml --out RUN_DIR` (generate_command.cpp).
void add_generate_command(CLI::App& app);
// `vlbias score perspective|moderation|judge ...` and the classifier (score_command.cpp).
void add_score_command(CLI::App& app);
// `vlbias spec template KIND`: a commented starter spec for each kind (spec_command.cpp).
void add_spec_command(CLI::App& app);
// `vlbias score classifier --model DIR INPUT --out RUN_DIR`, registered on `score` by
// add_score_command (score_classifier_command.cpp).
void add_score_classifier_command(CLI::App& score);
// `vlbias score choice TABLE --choices a,b --out RUN_DIR`, registered on `score` by
// add_score_command (score_choice_command.cpp).
void add_score_choice_command(CLI::App& score);

// `vlbias score image-head`: the scoring heads on CLIP image embeddings; registered by
// add_score_command (score_image_head_command.cpp).
void add_score_image_head_command(CLI::App& score);
// `vlbias encode`: native CLIP image and text embeddings (encode_command.cpp).
void add_encode_command(CLI::App& app);
// `vlbias faces --images T|DIR --out FACES_DIR`: face boxes, landmarks and chips
// (faces_command.cpp).
void add_faces_command(CLI::App& app);
// `vlbias explain --model CLIP_DIR --images T --manifest M --pair a/b --out MAPS_DIR`: class
// activation maps for a trait pair (explain_command.cpp).
void add_explain_command(CLI::App& app);
// `vlbias features`: image features of CLIP, the FID Inception-v3 or DINOv2 (encode_command.cpp).
void add_features_command(CLI::App& app);

// `vlbias sample --table T --by COLS --n N --seed S --out T2.csv`: stratified sampling
// (sample_command.cpp).
void add_sample_command(CLI::App& app);

// `vlbias convert-weights IN OUT.safetensors`: PyTorch checkpoints as data
// (convert_weights_command.cpp).
void add_convert_weights_command(CLI::App& app);

// "a,b , c" -> {"a", "b", "c"}; empty items are a UsageError naming `option`.
std::vector<std::string> split_list(const std::string& text, const std::string& option);
// The numeric `columns` of `table` as a rows x columns row-major matrix (NaN where
// missing when allow_missing; otherwise a missing cell is an InputError naming it).
std::vector<double> value_matrix(const Table& table, const std::vector<std::string>& columns,
                                 bool allow_missing);
// The range of a resample count option (--bootstrap, --subsets): 0 to stats::kMaxResamples,
// checked when the command line is parsed, before any input is read (exit 2, naming the range).
CLI::Validator resamples_range();
// Doubles from "5,25,50" for `option`; UsageError on malformed numbers.
std::vector<double> split_numbers(const std::string& text, const std::string& option);

}  // namespace vlbias::cli_internal
