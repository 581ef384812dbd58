// The keys of an lvlm-counterfactual spec (include/vlbias/audits/lvlm_audit.h).
#include <string>

#include <fmt/format.h>

#include "audit_yaml.h"
#include "lvlm_audit_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/row_filter.h"
#include "vlbias/report/lvlm_results.h"

namespace vlbias::audits_internal {

namespace {

void parse_columns(Context& ctx, const YAML::Node& node, LvlmAuditSpec& l) {
  const Entries e = check_map(ctx, node, "columns",
                              {"set_key", "group", "by", "scores", "text", "scorer", "image"});
  const auto list = [&](const char* key, std::vector<std::string>& out, bool required) {
    const YAML::Node* v = required ? &require(ctx, node, e, "columns", key) : find(e, key);
    if (v == nullptr) return;
    const std::string path = join_path("columns", key);
    out = v->IsScalar() ? std::vector<std::string>{as_string(ctx, *v, path)}
                        : as_string_list(ctx, *v, path, /*allow_empty=*/!required);
  };
  list("set_key", l.set_key, false);
  list("group", l.group, true);
  list("by", l.by, false);
  list("scores", l.scores, false);
  if (const YAML::Node* v = find(e, "text")) l.text = as_string(ctx, *v, "columns.text");
  if (const YAML::Node* v = find(e, "image")) l.image = as_string(ctx, *v, "columns.image");
  // The scorer column: given, it must exist; by default `scorer` is read where a file has it.
  l.scorer_given = find(e, "scorer") != nullptr;
  list("scorer", l.scorer, false);
  if (!l.scorer_given && !l.scores.empty()) l.scorer = {"scorer"};
}

// A bootstrap's cluster columns: a list (or one name) of columns.set_key's columns.
std::vector<std::string> parse_cluster(Context& ctx, const YAML::Node& node,
                                       const std::string& path,
                                       const std::vector<std::string>& set_key) {
  std::vector<std::string> out = node.IsScalar()
                                     ? std::vector<std::string>{as_string(ctx, node, path)}
                                     : as_string_list(ctx, node, path, false);
  for (const std::string& c : out) {
    if (std::find(set_key.begin(), set_key.end(), c) == set_key.end()) {
      fail(ctx, node, path,
           fmt::format("'{}' is not one of columns.set_key ({}): a cluster groups whole "
                       "counterfactual sets, e.g. the set key without its seed",
                       c, fmt::join(set_key, ", ")));
    }
  }
  return out;
}

RatingSpecYaml parse_rating(Context& ctx, const YAML::Node& node, const std::string& path) {
  const Entries e = check_map(ctx, node, path, {"name", "kind", "where"});
  RatingSpecYaml r;
  r.name = as_string(ctx, require(ctx, node, e, path, "name"), join_path(path, "name"));
  if (const YAML::Node* v = find(e, "kind")) {
    r.kind = as_choice(ctx, *v, join_path(path, "kind"), {"rating", "salary"});
  }
  if (const YAML::Node* v = find(e, "where"); v && v->IsScalar()) {
    // A row filter (row_filter.h), checked here so that a syntax error names the spec key.
    const std::string wp = join_path(path, "where");
    r.where_expression = as_string(ctx, *v, wp);
    r.where_origin = fmt::format("{}, {}", where(ctx, *v), wp);
    RowFilter::parse(r.where_expression, r.where_origin);
  } else if (v) {
    const std::string wp = join_path(path, "where");
    const Entries w = check_map(ctx, *v, wp, {"column", "values"});
    r.where_column = as_string(ctx, require(ctx, *v, w, wp, "column"), join_path(wp, "column"));
    const YAML::Node& values = require(ctx, *v, w, wp, "values");
    r.where_values = values.IsScalar()
                         ? std::vector<std::string>{as_string(ctx, values, join_path(wp, "values"))}
                         : as_string_list(ctx, values, join_path(wp, "values"));
  }
  return r;
}

void parse_lvlm_analyses(Context& ctx, const YAML::Node& node, LvlmAuditSpec& l) {
  const Entries e = check_map(ctx, node, "analyses",
                              {"maxgap", "pmi", "lexicon", "responses", "ratings",
                               kLvlmGroupTestsSection, "paired", "power"});
  if (const YAML::Node* v = find(e, "power")) parse_power(ctx, *v, "analyses.power", l.power);
  if (const YAML::Node* v = find(e, "maxgap")) {
    const std::string p = "analyses.maxgap";
    const Entries o = parse_toggle(ctx, *v, p, l.maxgap.toggle, {"bootstrap", "ci", "cluster"});
    if (const YAML::Node* x = find(o, "bootstrap"))
      l.maxgap.bootstrap = as_resamples(ctx, *x, p + ".bootstrap", true);
    if (const YAML::Node* x = find(o, "ci")) l.maxgap.ci = as_ci(ctx, *x, p + ".ci");
    if (const YAML::Node* x = find(o, "cluster"))
      l.maxgap.cluster = parse_cluster(ctx, *x, p + ".cluster", l.set_key);
  }
  if (const YAML::Node* v = find(e, "pmi")) {
    const std::string p = "analyses.pmi";
    const Entries o =
        parse_toggle(ctx, *v, p, l.pmi.toggle, {"min_freq", "threshold", "top", "log_base"});
    if (const YAML::Node* x = find(o, "min_freq"))
      l.pmi.min_freq = as_positive_size(ctx, *x, p + ".min_freq");
    if (const YAML::Node* x = find(o, "threshold"))
      l.pmi.threshold = as_double(ctx, *x, p + ".threshold");
    if (const YAML::Node* x = find(o, "top")) l.pmi.top = as_size(ctx, *x, p + ".top");
    if (const YAML::Node* x = find(o, "log_base")) {
      const std::string b = as_choice(ctx, *x, p + ".log_base", {"e", "2", "10"});
      l.pmi.log_base = b == "e" ? 0.0 : std::stod(b);
    }
  }
  if (const YAML::Node* v = find(e, "lexicon")) {
    const std::string p = "analyses.lexicon";
    const Entries o =
        parse_toggle(ctx, *v, p, l.lexicon.toggle,
                     {"file", "word_column", "by", "min_obs", "distinct", "stop_words"});
    if (l.lexicon.toggle.enabled) {
      l.lexicon.file = as_input_file(ctx, require(ctx, *v, o, p, "file"), p + ".file");
    }
    if (const YAML::Node* x = find(o, "word_column"))
      l.lexicon.word_column = as_string(ctx, *x, p + ".word_column");
    if (const YAML::Node* x = find(o, "by")) l.lexicon.by = as_string(ctx, *x, p + ".by");
    if (const YAML::Node* x = find(o, "min_obs"))
      l.lexicon.min_obs = as_size(ctx, *x, p + ".min_obs");
    if (const YAML::Node* x = find(o, "distinct"))
      l.lexicon.distinct = as_bool(ctx, *x, p + ".distinct");
    if (const YAML::Node* x = find(o, "stop_words")) {
      const std::string sw = as_string(ctx, *x, p + ".stop_words");
      l.lexicon.stop_words =
          sw == "english" || sw == "none" ? sw : as_input_file(ctx, *x, p + ".stop_words").string();
    }
  }
  if (const YAML::Node* v = find(e, "responses")) {
    const std::string p = "analyses.responses";
    const Entries o =
        parse_toggle(ctx, *v, p, l.responses.toggle, {"refusal_patterns", "refusal_column"});
    if (const YAML::Node* x = find(o, "refusal_patterns"))
      l.responses.refusal_patterns = as_string_list(ctx, *x, p + ".refusal_patterns");
    if (const YAML::Node* x = find(o, "refusal_column"))
      l.responses.refusal_column = as_string(ctx, *x, p + ".refusal_column");
  }
  if (const YAML::Node* v = find(e, "ratings")) {
    if (v->IsMap()) {
      l.ratings.push_back(parse_rating(ctx, *v, "analyses.ratings"));
    } else if (v->IsSequence()) {
      for (std::size_t i = 0; i < v->size(); ++i) {
        l.ratings.push_back(parse_rating(ctx, (*v)[i], fmt::format("analyses.ratings[{}]", i)));
      }
    } else {
      fail(
          ctx, *v, "analyses.ratings",
          fmt::format("must be a map or a list of maps (name, kind, where), got {}", describe(*v)));
    }
  }
  if (const YAML::Node* v = find(e, kLvlmGroupTestsSection)) {
    const std::string p = join_path("analyses", kLvlmGroupTestsSection);
    const Entries o = parse_toggle(ctx, *v, p, l.group_tests.toggle, {"permutations", "cluster"});
    if (const YAML::Node* x = find(o, "permutations"))
      l.group_tests.permutations = as_resamples(ctx, *x, p + ".permutations", false);
    if (const YAML::Node* x = find(o, "cluster"))
      l.group_tests.cluster = parse_cluster(ctx, *x, p + ".cluster", l.set_key);
  }
  if (const YAML::Node* v = find(e, "paired")) {
    const std::string p = "analyses.paired";
    const Entries o = parse_toggle(
        ctx, *v, p, l.paired.toggle,
        {"column", "baseline", "bootstrap", "ci", "cluster", "alternative", "permutations"});
    if (l.paired.toggle.enabled) {
      l.paired.column = as_string(ctx, require(ctx, *v, o, p, "column"), p + ".column");
      l.paired.baseline = as_string(ctx, require(ctx, *v, o, p, "baseline"), p + ".baseline");
    }
    if (const YAML::Node* x = find(o, "bootstrap"))
      l.paired.bootstrap = as_resamples(ctx, *x, p + ".bootstrap", true);
    if (const YAML::Node* x = find(o, "ci")) l.paired.ci = as_ci(ctx, *x, p + ".ci");
    if (const YAML::Node* x = find(o, "cluster"))
      l.paired.cluster = parse_cluster(ctx, *x, p + ".cluster", l.set_key);
    if (const YAML::Node* x = find(o, "alternative")) {
      const std::string a = as_string(ctx, *x, p + ".alternative");
      if (a != "two-sided" && a != "greater" && a != "less")
        fail(ctx, *x, p + ".alternative",
             fmt::format("must be two-sided, greater or less, got {}", shown(a)));
      l.paired.alternative = a == "less"      ? stats::Alternative::Less
                             : a == "greater" ? stats::Alternative::Greater
                                              : stats::Alternative::TwoSided;
    }
    if (const YAML::Node* x = find(o, "permutations"))
      l.paired.permutations = as_resamples(ctx, *x, p + ".permutations", false);
  } else {
    l.paired.toggle.enabled = false;
  }
}

}  // namespace

void parse_lvlm_root(Context& ctx, const YAML::Node& root, AuditCommonSpec& spec,
                     LvlmAuditSpec& l) {
  check_version(ctx, root["version"]);  // before the keys, unlike the dual-encoder kinds
  const Entries entries = check_map(ctx, root, "",
                                    {"version", "kind", "title", "about", "seed", "min_group_size",
                                     "generations", "columns", "analyses", "report"});
  parse_report_keys(ctx, entries, spec);
  parse_seed_keys(ctx, entries, spec);
  const YAML::Node& g = require(ctx, root, entries, "", "generations");
  if (g.IsSequence()) {
    for (std::size_t i = 0; i < g.size(); ++i) {
      l.generations.push_back(as_input_file(ctx, g[i], fmt::format("generations[{}]", i)));
    }
    if (l.generations.empty()) fail(ctx, g, "generations", "must name at least one file");
  } else {
    l.generations.push_back(as_input_file(ctx, g, "generations"));
  }
  parse_columns(ctx, require(ctx, root, entries, "", "columns"), l);
  // Defaults follow the columns: maxgap with scores, text measures with a text column,
  // group tests with a set key; the lexicon, ratings and paired only when given.
  l.maxgap.toggle.enabled = !l.scores.empty();
  l.pmi.toggle.enabled = !l.text.empty();
  l.responses.toggle.enabled = !l.text.empty();
  l.group_tests.toggle.enabled = !l.set_key.empty();
  l.lexicon.toggle.enabled = false;
  if (const YAML::Node* v = find(entries, "analyses")) parse_lvlm_analyses(ctx, *v, l);
  l.paired.toggle.enabled = l.paired.toggle.enabled && l.paired.toggle.explicit_;
  if (const YAML::Node* v = find(entries, "report")) parse_report_images(ctx, *v, spec);
  VLBIAS_CHECK(spec.report_images.per_cell == 0 || !l.image.empty(), UsageError,
               "{}: report.images shows each group's images: name their path column in "
               "columns.image, or give report: {{images: false}}",
               ctx.source);
  const auto needs = [&](bool on, bool ok, const char* what, const char* need) {
    if (on && !ok) {
      VLBIAS_FAIL(UsageError, "{}: analyses.{} needs {}", ctx.source, what, need);
    }
  };
  needs(l.maxgap.toggle.enabled, !l.scores.empty() && !l.set_key.empty(), "maxgap",
        "columns.scores and columns.set_key");
  needs(l.paired.toggle.enabled, !l.scores.empty() && !l.set_key.empty(), "paired",
        "columns.scores and columns.set_key");
  needs(l.group_tests.toggle.enabled, !l.set_key.empty(), kLvlmGroupTestsSection,
        "columns.set_key");
  needs(l.pmi.toggle.enabled, !l.text.empty(), "pmi", "columns.text");
  needs(l.lexicon.toggle.enabled, !l.text.empty(), "lexicon", "columns.text");
  needs(l.responses.toggle.enabled, !l.text.empty(), "responses", "columns.text");
  needs(!l.ratings.empty(), !l.text.empty(), "ratings", "columns.text");
  if (l.paired.toggle.enabled &&
      std::find(l.by.begin(), l.by.end(), l.paired.column) == l.by.end()) {
    VLBIAS_FAIL(UsageError, "{}: analyses.paired.column '{}' must be one of columns.by", ctx.source,
                l.paired.column);
  }
}

}  // namespace vlbias::audits_internal
