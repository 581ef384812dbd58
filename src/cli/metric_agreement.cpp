// `vlbias metric agreement`, two modes told apart by their options:
// - scorers (--scores A,B): how two scorers agree on the same texts (Pearson, Spearman,
//   Cohen's kappa at a threshold, mean difference), overall and per group with a Kruskal-Wallis
//   test of whether b - a depends on the group (docs/methods.md#agreement;
//   include/vlbias/metrics/agreement.h). The table holds both scores as columns, e.g. a
//   scored.jsonl of `score classifier` with another scorer's column added.
// - raters (--rating with --unit and --rater: one row per rating; or --raters A,B,...: one
//   column per rater): Krippendorff's alpha, Fleiss' kappa and pairwise Cohen's kappa with
//   bootstrap intervals over units (docs/methods.md#rater-agreement;
//   include/vlbias/stats/rater_agreement.h), e.g. annotators' labels or Likert ratings.
#include <CLI/CLI.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "vlbias/core/edit_distance.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/metrics/agreement.h"
#include "vlbias/report/metric_json.h"
#include "vlbias/stats/rater_agreement.h"

namespace vlbias::cli_internal {

namespace {

struct AgreementArgs {
  std::string table, scores, group, out;
  std::string unit, rater, rating, raters, scale = "nominal", weights = "none",
                                           conflicting = "error";
  double threshold = 0.5, threshold_b = 0.5, level = 0.95;
  std::size_t bootstrap = 2000;
  std::uint64_t seed = 0;
};

// UsageError naming the option, the column, the closest column name when one is near (a typo)
// and the columns the table has.
void require_agreement_column(const Table& table, const std::string& name, const char* option) {
  if (table.find(name)) return;
  std::string names, closest;
  std::size_t best = name.size() / 3 + 2;  // suggest only near misses
  for (const Column& c : table.columns) {
    names += (names.empty() ? "" : ", ") + c.name;
    const std::size_t d = edit_distance(name, c.name);
    if (d < best) {
      best = d;
      closest = c.name;
    }
  }
  const std::string hint = closest.empty() ? "" : fmt::format(" (did you mean '{}'?)", closest);
  VLBIAS_FAIL(UsageError, "{} names column '{}'{}, which {} does not have (its columns: {}).",
              option, name, hint, table.source, names);
}

std::vector<std::string> parse_scores(const std::string& text) {
  std::vector<std::string> scores = split_list(text, "--scores");
  VLBIAS_CHECK(scores.size() == 2, UsageError,
               "--scores expects two column names A,B (the two scorers); got {} in '{}'.",
               scores.size(), text);
  VLBIAS_CHECK(scores[0] != scores[1], UsageError,
               "--scores names column '{}' twice; expected two different scorers.", scores[0]);
  return scores;
}

AgreementOptions options_of(const AgreementArgs& a, bool threshold_b_given) {
  AgreementOptions o;
  o.threshold_a = a.threshold;
  o.threshold_b = threshold_b_given ? a.threshold_b : a.threshold;
  VLBIAS_CHECK(std::isfinite(o.threshold_a), UsageError,
               "--threshold must be a finite number; got {}.", o.threshold_a);
  VLBIAS_CHECK(std::isfinite(o.threshold_b), UsageError,
               "--threshold-b must be a finite number; got {}.", o.threshold_b);
  VLBIAS_CHECK(a.level > 0.0 && a.level < 1.0, UsageError,
               "--ci (--level) must be a confidence level between 0 and 1 (e.g. 0.95); got {}.",
               a.level);
  o.level = a.level;
  o.bootstrap = a.bootstrap;
  o.seed = a.seed;
  return o;
}

// ------------------------------------------------------------------------ raters mode

Json coefficient_json(const stats::AgreementCoefficient& c, const char* unit_kind) {
  Json out{{"estimate", json_number(c.estimate)},
           {"observed_disagreement", json_number(c.observed_disagreement)},
           {"expected_disagreement", json_number(c.expected_disagreement)},
           {"units", c.units},
           {"ratings", c.ratings},
           {"bootstrap_ci", to_json(c.ci)}};
  out["bootstrap_ci"]["method"] = fmt::format("percentile bootstrap over {}", unit_kind);
  if (!c.note.empty()) out["note"] = c.note;
  return out;
}

Json rater_agreement_json(const stats::RatingData& data, const stats::RaterAgreement& r,
                          const stats::RaterAgreementOptions& o) {
  Json out{{"mode", "raters"},
           {"scale", stats::rating_scale_name(o.scale)},
           {"weights", stats::kappa_weights_name(o.weights)},
           {"units", r.units},
           {"rater_count", r.raters},
           {"ratings", r.ratings},
           {"missing_ratings", data.missing},
           {"repeated_ratings", data.repeated},
           {"conflicting_ratings_dropped", data.conflicting},
           {"unattributed_ratings", data.unattributed},
           {"category_count", data.categories.size()}};
  // A crowd can have thousands of raters and an interval scale a category per rating: list
  // only short lists.
  if (data.raters.size() <= 100) out["raters"] = data.raters;
  if (data.categories.size() <= 100) out["categories"] = data.categories;
  out["ratings_per_unit"] = Json{{"min", r.ratings_per_unit_min}, {"max", r.ratings_per_unit_max}};
  out["units_single_rating"] = r.units_single_rating;
  out["units_unrated"] = r.units_unrated;
  out["krippendorff_alpha"] = coefficient_json(r.alpha, "pairable units");
  out["fleiss_kappa"] = coefficient_json(r.fleiss, "units");
  out["fleiss_kappa"]["ratings_per_unit"] = r.ratings_per_unit_max;
  Json pairs = Json::array();
  for (const stats::PairKappa& p : r.cohen) {
    Json pair{{"raters", {data.raters[p.rater_a], data.raters[p.rater_b]}}};
    const Json c = coefficient_json(p.kappa, "units both rated");
    for (const auto& item : c.items()) pair[item.key()] = item.value();
    pairs.push_back(std::move(pair));
  }
  out["cohen_kappa"] = Json{{"weights", stats::kappa_weights_name(o.weights)},
                            {"mean", json_number(r.cohen_mean)},
                            {"pairs", std::move(pairs)}};
  if (!r.cohen_note.empty()) out["cohen_kappa"]["note"] = r.cohen_note;
  std::vector<std::string> notes = r.notes;
  if (data.repeated > 0) {
    notes.push_back(
        fmt::format("{} repeated row(s) give a rater's same rating of a unit again: counted once",
                    data.repeated));
  }
  if (data.unattributed > 0) {
    notes.push_back(
        fmt::format("{} rating(s) name no unit or no rater: left out", data.unattributed));
  }
  if (data.conflicting > 0) {
    notes.push_back(
        fmt::format("{} rater-unit pair(s) were rated differently in different rows: left out "
                    "(--conflicting drop)",
                    data.conflicting));
  }
  out["notes"] = notes;
  return out;
}

// Raters mode: which columns hold units, raters and ratings (long) or one rater each (wide).
void run_rater_agreement(const AgreementArgs& a, bool long_format) {
  stats::RaterAgreementOptions o;
  o.scale = stats::parse_rating_scale(a.scale, "--scale");
  o.weights = stats::parse_kappa_weights(a.weights, "--weights");
  VLBIAS_CHECK(a.level > 0.0 && a.level < 1.0, UsageError,
               "--ci (--level) must be a confidence level between 0 and 1 (e.g. 0.95); got {}.",
               a.level);
  o.bootstrap = {a.bootstrap, a.level, a.seed};
  std::vector<std::string> units, raters;
  if (!a.unit.empty()) units = split_list(a.unit, "--unit");
  if (long_format) {
    VLBIAS_CHECK(!units.empty() && !a.rater.empty(), UsageError,
                 "--rating (one row per rating) needs --unit COLS (what is rated) and --rater COL "
                 "(who rates); for one column per rater use --raters A,B,... instead.");
  } else {
    raters = split_list(a.raters, "--raters");
    for (std::size_t i = 0; i < raters.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        VLBIAS_CHECK(raters[i] != raters[j], UsageError,
                     "--raters names column '{}' twice; expected one column per rater.", raters[i]);
      }
    }
  }
  Provenance p;
  p.inputs = {a.table};
  start_hashing_inputs(p);
  const Table table = read_table(a.table);
  for (const std::string& u : units) require_agreement_column(table, u, "--unit");
  const bool need_numbers =
      o.scale != stats::RatingScale::Nominal || o.weights != stats::KappaWeights::None;
  stats::RatingData data;
  if (long_format) {
    require_agreement_column(table, a.rater, "--rater");
    require_agreement_column(table, a.rating, "--rating");
    VLBIAS_CHECK(a.conflicting == "error" || a.conflicting == "drop", UsageError,
                 "--conflicting must be error or drop; got '{}'.", a.conflicting);
    data = stats::ratings_from_long_table(table, units, a.rater, a.rating, need_numbers,
                                          a.conflicting == "drop");
  } else {
    for (const std::string& r : raters) require_agreement_column(table, r, "--raters");
    data = stats::ratings_from_wide_table(table, units, raters, need_numbers);
  }
  const stats::RaterAgreement r = stats::rater_agreement(data, o);
  Json out = rater_agreement_json(data, r, o);
  out["format"] = long_format ? "long" : "wide";
  p.command = "metric agreement";
  p.parameters = Json{{"mode", "raters"},     {"unit", units}, {"scale", a.scale},
                      {"weights", a.weights}, {"ci", a.level}, {"bootstrap", a.bootstrap}};
  if (long_format) {
    p.parameters["rater"] = a.rater;
    p.parameters["rating"] = a.rating;
    p.parameters["conflicting"] = a.conflicting;
  } else {
    p.parameters["raters"] = raters;
  }
  p.seed = a.seed;
  out["provenance"] = provenance_json(p);
  write_json(out, a.out);
}

}  // namespace

namespace {

void run_scorer_agreement(const AgreementArgs& a, bool threshold_b_given) {
  const std::vector<std::string> scores = parse_scores(a.scores);
  const AgreementOptions o = options_of(a, threshold_b_given);
  std::vector<std::string> group;
  if (!a.group.empty()) group = split_list(a.group, "--group");

  Provenance p;
  p.inputs = {a.table};
  start_hashing_inputs(p);
  const Table table = read_table(a.table);
  for (const std::string& s : scores) require_agreement_column(table, s, "--scores");
  for (const std::string& g : group) require_agreement_column(table, g, "--group");
  const AgreementReport r = agreement_analysis(table, scores[0], scores[1], group, o);

  Json out = agreement_json(r, o);
  p.command = "metric agreement";
  p.parameters = Json{{"scores", scores},
                      {"group", group},
                      {"threshold", o.threshold_a},
                      {"threshold_b", o.threshold_b},
                      {"ci", o.level},
                      {"bootstrap", o.bootstrap}};
  p.seed = o.seed;
  out["provenance"] = provenance_json(p);
  write_json(out, a.out);
}

// UsageError when an option of the other mode was given (e.g. --threshold with --raters).
void refuse_options(const std::vector<CLI::Option*>& options, const char* mode) {
  for (const CLI::Option* option : options) {
    VLBIAS_CHECK(option->count() == 0, UsageError, "{} does not apply to {}.", option->get_name(),
                 mode);
  }
}

}  // namespace

void add_agreement_metric(CLI::App& metric) {
  auto args = std::make_shared<AgreementArgs>();
  CLI::App* cmd = metric.add_subcommand(
      "agreement",
      "Agreement of two scorers (--scores A,B: Pearson, Spearman, Cohen's kappa at a threshold, "
      "mean difference, per group) or of several raters (--rating with --unit and --rater, one "
      "row per rating; or --raters A,B,..., one column per rater: Krippendorff's alpha, Fleiss' "
      "kappa, pairwise Cohen's kappa), with confidence intervals");
  cmd->add_option("--table", args->table, "CSV/TSV/JSONL table of scores or ratings")->required();
  cmd->add_option("--scores", args->scores,
                  "Scorers: the two score columns A,B (e.g. toxicity,perspective)");
  CLI::Option* group = cmd->add_option(
      "--group", args->group, "Scorers: group column(s), comma-separated: agreement per group");
  CLI::Option* threshold = cmd->add_option("--threshold", args->threshold,
                                           "Scorers: a label is positive when score >= this")
                               ->capture_default_str();
  CLI::Option* threshold_b =
      cmd->add_option("--threshold-b", args->threshold_b,
                      "Scorers: B's threshold when its scale differs (default: A's)");
  CLI::Option* rating = cmd->add_option(
      "--rating", args->rating, "Raters, one row per rating: the column holding the rating");
  CLI::Option* unit = cmd->add_option(
      "--unit", args->unit,
      "Raters: the column(s) naming what is rated, comma-separated (e.g. img_path,attribute); "
      "required with --rating, optional labels with --raters");
  CLI::Option* rater =
      cmd->add_option("--rater", args->rater, "Raters, one row per rating: the rater's column");
  CLI::Option* conflicting =
      cmd->add_option("--conflicting", args->conflicting,
                      "Raters, one row per rating: a rater who rates a unit differently twice is "
                      "an error, or with 'drop' that rating is left out (identical repeats count "
                      "once)")
          ->capture_default_str();
  CLI::Option* raters = cmd->add_option("--raters", args->raters,
                                        "Raters, one column per rater: the rating columns A,B,...");
  CLI::Option* scale =
      cmd->add_option("--scale", args->scale,
                      "Raters: Krippendorff's alpha's metric: nominal, ordinal or interval "
                      "(ordinal and interval need numeric ratings)")
          ->capture_default_str();
  CLI::Option* weights =
      cmd->add_option("--weights", args->weights,
                      "Raters: Cohen's kappa weights: none, linear or quadratic (Likert)")
          ->capture_default_str();
  cmd->add_option("--ci,--level", args->level, "Confidence level")->capture_default_str();
  cmd->add_option("--bootstrap", args->bootstrap,
                  "Bootstrap resamples (0: none): kappa's CI (scorers), every coefficient's CI "
                  "over units (raters)")
      ->check(resamples_range())
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the bootstrap")->capture_default_str();
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  cmd->callback([args, group, threshold, threshold_b, rating, unit, rater, raters, scale, weights,
                 conflicting] {
    const bool scorers_mode = !args->scores.empty();
    const bool long_format = rating->count() > 0;
    const bool wide_format = raters->count() > 0;
    VLBIAS_CHECK(scorers_mode + long_format + wide_format == 1, UsageError,
                 "metric agreement needs exactly one of --scores A,B (two scorers), --rating COL "
                 "with --unit and --rater (raters, one row per rating) or --raters A,B,... "
                 "(raters, one column per rater).");
    if (scorers_mode) {
      refuse_options({unit, rater, scale, weights, conflicting}, "--scores (two scorers)");
      run_scorer_agreement(*args, threshold_b->count() > 0);
      return;
    }
    refuse_options({group, threshold, threshold_b}, "raters (--rating or --raters)");
    if (wide_format) refuse_options({rater, conflicting}, "--raters (one column per rater)");
    run_rater_agreement(*args, long_format);
  });
}

}  // namespace vlbias::cli_internal
