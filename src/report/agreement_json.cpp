// The JSON of `vlbias metric agreement` (include/vlbias/report/metric_json.h; the fields are
// defined in include/vlbias/metrics/agreement.h and docs/methods.md#agreement).
#include <string>

#include "vlbias/report/metric_json.h"

namespace vlbias {

namespace {

// A closed-form interval: {lower, upper, level, method[, note]} (nothing drawn, so no
// resamples or seed, unlike a bootstrap interval's to_json).
Json closed_interval_json(const stats::Interval& ci, const char* method) {
  Json out{{"lower", json_number(ci.lower)},
           {"upper", json_number(ci.upper)},
           {"level", ci.level},
           {"method", method}};
  if (!ci.note.empty()) out["note"] = ci.note;
  return out;
}

Json correlation_json(const CorrelationAgreement& c, const char* name, const char* method) {
  Json out{{name, json_number(c.estimate)},
           {"p_value", json_number(c.p_value)},
           {"ci", closed_interval_json(c.ci, method)}};
  if (!c.note.empty()) out["note"] = c.note;
  return out;
}

Json kappa_json(const KappaAgreement& k, bool with_bootstrap) {
  Json out{{"kappa", json_number(k.kappa)},
           {"se", json_number(k.se)},
           {"ci", closed_interval_json(k.ci, "asymptotic (Fleiss, Cohen and Everitt 1969)")}};
  if (with_bootstrap) {
    out["bootstrap_ci"] = to_json(k.bootstrap);
    out["bootstrap_ci"]["method"] = "percentile bootstrap over texts";
  }
  out["z"] = json_number(k.z);
  out["p_value"] = json_number(k.p_value);
  out["observed_agreement"] = json_number(k.observed);
  out["expected_agreement"] = json_number(k.expected);
  out["table"] = Json{{"both_negative", k.cells[0]},
                      {"a_negative_b_positive", k.cells[1]},
                      {"a_positive_b_negative", k.cells[2]},
                      {"both_positive", k.cells[3]}};
  if (!k.note.empty()) out["note"] = k.note;
  return out;
}

Json difference_json(const MeanDifference& d) {
  Json out{{"estimate", json_number(d.estimate)},
           {"sd", json_number(d.sd)},
           {"ci", closed_interval_json(d.ci, "t")},
           {"t", json_number(d.t)},
           {"p_value", json_number(d.p_value)}};
  if (!d.note.empty()) out["note"] = d.note;
  return out;
}

Json group_json(const GroupAgreement& g, const std::vector<std::string>& columns) {
  Json out{{"key", key_json(columns, g.key)},
           {"n", g.n},
           {"mean",
            Json{{"a", json_number(g.difference.mean_a)}, {"b", json_number(g.difference.mean_b)}}},
           {"mean_difference", difference_json(g.difference)},
           {"positive_rate",
            Json{{"a", json_number(g.positive_rate_a)}, {"b", json_number(g.positive_rate_b)}}},
           {"disagreements", g.disagreements},
           {"disagreement_rate", json_number(g.disagreement_rate)},
           {"disagreement_ci", closed_interval_json(g.disagreement_ci, "wilson")},
           {"kappa", kappa_json(g.kappa, false)}};
  if (!g.note.empty()) out["note"] = g.note;
  return out;
}

}  // namespace

Json agreement_json(const AgreementReport& r, const AgreementOptions& options) {
  const AgreementSummary& s = r.overall;
  Json out{{"scores", Json{{"a", r.score_a}, {"b", r.score_b}}},
           {"thresholds", Json{{"a", options.threshold_a}, {"b", options.threshold_b}}},
           {"rows", r.rows},
           {"n", s.n},
           {"n_excluded", r.excluded},
           {"pearson", correlation_json(s.pearson, "r", "fisher_z")},
           {"spearman", correlation_json(s.spearman, "rho", "fisher_z_bonett_wright")},
           {"kappa", kappa_json(s.kappa, true)},
           {"percent_agreement", json_number(s.percent_agreement)},
           {"positive_rate",
            Json{{"a", json_number(s.positive_rate_a)}, {"b", json_number(s.positive_rate_b)}}},
           {"mean",
            Json{{"a", json_number(s.difference.mean_a)}, {"b", json_number(s.difference.mean_b)}}},
           {"mean_difference", difference_json(s.difference)}};
  if (!r.group_columns.empty()) {
    out["group_columns"] = r.group_columns;
    out["rows_without_group"] = r.rows_without_group;
    Json groups = Json::array();
    for (const GroupAgreement& g : r.groups) groups.push_back(group_json(g, r.group_columns));
    out["groups"] = std::move(groups);
    out["group_test"] = to_json(r.group_test);
  }
  Json notes = Json::array();
  for (const std::string& n : r.notes) notes.push_back(n);
  for (const std::string& n : s.notes) notes.push_back(n);
  out["notes"] = std::move(notes);
  return out;
}

}  // namespace vlbias
