#pragma once
// The JSON of each metric's result (src/report), shared by the `vlbias metric` commands and
// the Python bindings so both give the same fields. Provenance is the caller's.
#include <cstddef>
#include <string>
#include <vector>

#include "vlbias/metrics/agreement.h"
#include "vlbias/metrics/association.h"
#include "vlbias/metrics/clipscore.h"
#include "vlbias/metrics/distribution_bootstrap.h"
#include "vlbias/metrics/distribution_metrics.h"
#include "vlbias/metrics/prdc.h"
#include "vlbias/metrics/ranking_metrics.h"
#include "vlbias/report/json_output.h"

namespace vlbias {

// precision, recall, density, coverage (null when undefined, with "note"), k, ball, n_real,
// n_fake, dim, neighbours.
Json prdc_json(const PrdcResult& r, std::size_t dim);
// fid, mean_term, trace_real, trace_fake, trace_sqrt, n_real, n_fake, dim, covariance.
Json fid_json(const FidResult& r);
// kid, sd, subsets, subset_size, kernel, estimator, n_real, n_fake, dim, per_subset, note.
// `gamma` is the kernel's (1 / dim when the options left it 0).
Json kid_json(const KidResult& r, const KidOptions& options, double gamma);
// The interval of a distribution bootstrap: lower, upper, level, resamples, seed (to_json of the
// Interval of the recentred replicates), method, `statistic` (what each replicate computes), shift
// (estimate - median of the replicates) and raw {lower, upper} (the unshifted interval).
Json distribution_ci_json(const DistributionBootstrap& b, const std::string& statistic);
// fid_inf, slope, points [{n, fid}], min_size, seed, method.
Json fid_inf_json(const FidInfResult& r);
// vendi, q ("inf" for infinity), kernel, n, dim, rank, eigenvalues_of.
Json vendi_json(const VendiResult& r, double q);
// effect_size, mean_difference, per_target [{difference, effect_size}], n_a, n_b, p_value,
// p_test, permutations, method, seed, note.
Json scweat_json(const ScweatResult& r);
// skew {class: value, "-inf" for an absent class}, max_skew, k, n, counts, desired, class_n,
// tie_rule; classes named by `names` (the result's class order).
Json skew_json(const SkewResult& r, const std::vector<std::string>& names);
// ndkl, n, desired, class_n, tie_rule.
Json ndkl_json(const NdklResult& r, const std::vector<std::string>& names);

// `vlbias metric agreement` (src/report/agreement_json.cpp): scores, thresholds, rows, n,
// n_excluded, pearson {r, p_value, ci}, spearman {rho, p_value, ci}, kappa {kappa, se, ci,
// bootstrap_ci, z, p_value, observed_agreement, expected_agreement, table}, percent_agreement,
// positive_rate {a, b}, mean {a, b}, mean_difference {estimate, sd, ci, t, p_value}; with
// groups: group_columns, rows_without_group, groups [...], group_test (Kruskal-Wallis); notes.
// Closed-form intervals are {lower, upper, level, method[, note]}.
Json agreement_json(const AgreementReport& r, const AgreementOptions& options);

// n, mean, sd, min, max, percentiles {"10": value, ...}[, note].
Json clipscore_summary_json(const ClipScoreSummary& s);
// How images met texts: "text-row column", "row i with row i" or "every image with the one
// text".
const char* clipscore_pairing(bool no_text_rows, std::size_t text_rows, std::size_t image_rows);

}  // namespace vlbias
