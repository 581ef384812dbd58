#pragma once
// The geo-diversity audit (paper 002, DIG-In; kind: geo-diversity, spec in audit.h): how each
// indicator composes its generated sets, and the resampling that puts intervals on them.
// Implemented in src/audits/geo_sampling.cpp (these building blocks) and
// src/audits/geo_diversity.cpp (the audit).
//
// Indicators, per prompt form F (object, object-region, object-country):
//   Region         precision (realism) and coverage (diversity) of the generated set of region R
//                  against the real images of R; recall and density are reported too.
//   Object-Region  the same per (object O, region R) cell of the real data.
//   Consistency    CLIPScore of each generation against the text "{object}"; per object the
//                  p-th percentile (10th by default); the indicator is the mean over objects,
//                  overall and per region (per (region, object) percentiles, then the mean).
//   Distribution   FID and KID between real R and generated R, and the Vendi score of each
//                  (beyond the paper).
//
// Generated sets (the paper, sections 4.2-4.4, and DIG-In's code):
//   object-region / object-country: every generation of form F whose (aliased) region is R
//     (and whose object is O); country prompts merge by their region.
//   object: these carry no region, so each cell's set is drawn from the object-form pool to
//     match the real cell's object mix: n_R(o) generations of each object o of the cell,
//     without replacement (object_mix_sample). Cells draw independently (seeded per cell).
//   sampling.generated_per_cell = N (balanced, DIG-In's --balance): first N generations per
//     (object, region) of the region and country forms and N per object of the object form,
//     without replacement; groups with fewer keep all of theirs (noted).
//   sampling.real_per_cell = N: likewise N real images per (object, region).
// Only generations whose object (and, for the region and country forms, region) appears in the
// real data enter the real-referenced indicators; the rest are counted in the results.
//
// Intervals (percentile bootstrap over generated images, B replicates; replicate b of a cell
// draws from Rng(cell seed, b)): the real balls are fixed, a resample of the cell's
// generations gives precision, density and coverage through each generation's ball count and
// each ball's members (prdc_bootstrap). Coverage is a function of the set of distinct
// generations and a resample holds only ~63% of them, so its replicates are recentred on the
// estimate before intervals and gaps are formed (tools/simulate_coverage_bootstrap.py: the
// plain percentile interval covered the truth in 1.5% of simulated sets, the recentred one in
// 92%, as the precision interval does). Recall would need the resample's own radii (its
// duplicates collapse them) and gets no interval. Consistency resamples within each object
// (and region) stratum. Gaps between two regions: the difference of the two statistics with
// the percentile interval of the replicate differences, and the two-sided p-value of
// z = difference / se, se the standard deviation of the replicate differences (normal
// approximation with the bootstrap standard error: unlike counting replicates beyond zero it
// is not floored at 1 / B, so it survives Holm's correction over many pairs).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vlbias/metrics/prdc.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

// An object-mix matched sample.
struct MatchedSample {
  std::vector<std::uint32_t> rows;  // the drawn rows, object by object, in draw order
  std::vector<std::size_t> counts;  // drawn per object
  std::size_t target = 0;           // sum of the target counts
  double scale = 1.0;               // < 1 when some pool was smaller than its share
};

// Draws, for each object o, counts[o] rows from pools[o] without replacement (a partial
// Fisher-Yates shuffle of the pool, Rng(seed, o)). The counts are the targets
// target_counts[o] when every pool is large enough; otherwise every target is scaled by
// s = min over objects with a target of |pool| / target, and s * total is apportioned by
// largest remainder (ties: lower object index first; never above a pool's size), so the mix
// stays as close to the target as the pools allow. Objects with target 0 draw nothing.
// target_counts.size() != pools.size() is an InternalError.
MatchedSample object_mix_sample(const std::vector<std::size_t>& target_counts,
                                const std::vector<std::vector<std::uint32_t>>& pools,
                                std::uint64_t seed);

// Draws min(n, |rows|) of `rows` without replacement (partial Fisher-Yates, Rng(seed, 0)),
// in draw order.
std::vector<std::uint32_t> sample_rows(const std::vector<std::uint32_t>& rows, std::size_t n,
                                       std::uint64_t seed);

// Bootstrap intervals of precision, density and coverage of one PRDC cell. `r` must have been
// computed with per_sample and ball_members. Replicate b resamples the n_fake generations with
// replacement (Rng(seed, b).uniform_index(n_fake), n_fake draws); precision* = share of drawn
// generations inside some ball, density* = mean ball count / k, coverage* = share of balls
// holding a drawn generation, then every coverage* is shifted by coverage - median(coverage*)
// (see above). The replicates are kept for gap tests.
struct PrdcIntervals {
  stats::Interval precision, density, coverage;
  std::vector<double> precision_replicates, density_replicates, coverage_replicates;
};
PrdcIntervals prdc_bootstrap(const PrdcResult& r, std::size_t resamples, double level,
                             std::uint64_t seed);

// The gap a - b between two statistics with independent bootstrap replicates (paired by
// replicate index; both of length B): interval of the replicate differences, their standard
// deviation `se` and the two-sided normal p-value above (1 when every replicate difference is
// 0 and so is the gap; NaN when they are all equal otherwise). NaN replicates are dropped
// pairwise; fewer than 2 left: se and p NaN.
struct Gap {
  double difference = stats::kNaN;
  double se = stats::kNaN;
  stats::Interval ci;
  double p_value = stats::kNaN;
};
Gap bootstrap_gap(double a, const std::vector<double>& replicates_a, double b,
                  const std::vector<double>& replicates_b, double level);

// The consistency indicator of one set of strata (objects, or the objects of one region):
// value = mean over strata of the q-th percentile (numpy linear) of the stratum's scores, with a
// stratified bootstrap (replicate b: Rng(seed, b), strata in order, each resampled with
// replacement to its own size). Empty strata are an InternalError (callers drop them).
struct PercentileMean {
  double value = stats::kNaN;
  std::vector<double> per_stratum;  // the q-th percentile of each stratum
  stats::Interval ci;
  std::vector<double> replicates;
};
PercentileMean percentile_mean(const std::vector<std::vector<double>>& strata, double q,
                               std::size_t resamples, double level, std::uint64_t seed);

}  // namespace vlbias
