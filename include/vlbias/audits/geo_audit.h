#pragma once
// The geo-diversity audit (kind: geo-diversity; paper 002, DIG-In): its spec (GeoAuditSpec,
// AuditSpec::geo()), how each indicator composes its generated sets, and the resampling that puts
// intervals on them. Implemented in src/audits/geo/geo_audit_sampling.cpp (these building blocks)
// and src/audits/geo/geo_audit*.cpp (the audit, run_geo_audit).
//
// Spec keys: text-to-image realism, diversity and consistency by region (the keys every kind
// shares, and the rules for all specs, are in audit.h):
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
//       outcomes: run/outcomes.csv  # optional: generate t2i's outcomes (the filtered section)
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
//   scores:                         # optional: per-image scores by region (issue 44)
//     - table: scores.csv           # key (default image) matched to features_model.column
//       columns: [aesthetic, nsfw]
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
// below.
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
//   Filtered       (any source with `outcomes`) per region: the requests the endpoint refused
//                  or filtered among those it answered (status ok, refused, filtered), with a
//                  95% Wilson interval, and Pearson's chi-square test of equal rates across
//                  regions (the paper reports filtered generations per region). Regions are
//                  the outcomes table's `region` column, aliased.
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
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/audits/audit_types.h"
#include "vlbias/metrics/prdc.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

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
  // generate t2i's outcomes.csv (one row per requested image, a `status` column) for the
  // "filtered" section; "" = none
  std::filesystem::path outcomes;
};

// The spec of a geo-diversity audit (the keys above).
struct GeoAuditSpec {
  // features_model: {model, column, preprocess, image_size}: the image model whose features of
  // each table's images stand in for a `features` file the real set or a source leaves out
  // (computed once per content and kept beside the images:
  // include/vlbias/encode/jobs/feature_cache.h).
  struct FeatureModel {
    std::filesystem::path model;  // "" = every set gives its features file
    std::string column = "path";  // the image path column of the tables
    std::string preprocess;       // "" = the model's default (set_image_preprocess)
    std::size_t image_size = 0;
  } features_model;
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
    AnalysisToggle toggle;
    std::size_t k = 3;  // DIG-In's k
    bool inclusive = false;
    std::size_t bootstrap = 1000;
    double ci = 0.95;
  } region, object_region;
  struct Consistency {
    AnalysisToggle toggle;
    std::string variant = "raw";  // raw | hessel | torchmetrics
    double percentile = 10.0;
    std::size_t bootstrap = 1000;
    double ci = 0.95;
  } consistency;
  PowerSpec power;  // analyses.power: over the filtered-rate test and the scores' tests
  // scores: per-image scores by region, keyed to features_model.column (default path)
  std::vector<ScoreTableSpec> scores;
  struct Distribution {
    AnalysisToggle toggle;
    bool fid = true;
    bool vendi = true;
    bool kid = false;
    std::size_t kid_subsets = 100;
    std::size_t kid_subset_size = 1000;
    std::size_t bootstrap = 0;  // resamples of the generated images per cell; 0: no intervals
    double ci = 0.95;
    bool fid_inf = false;             // FID_inf per cell (Chong & Forsyth 2020)
    std::size_t fid_inf_points = 15;  // sizes N fitted
    std::size_t fid_inf_min = 0;      // smallest N; 0: a tenth of the cell's images (>= 2)
  } distribution;
};

// Runs a geo-diversity audit (src/audits/geo/geo_audit*.cpp); run_audit calls it for that kind.
// Reads geo and the common fields.
void run_geo_audit(const AuditCommonSpec& spec, const GeoAuditSpec& geo,
                   const std::filesystem::path& run_dir);

// ------------------------------------------------------------ sampling and resampling

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

// Bootstrap intervals of precision, density and coverage of one PRDC cell. `r` must have been
// computed with per_sample and ball_members. Replicate b resamples the n_fake generations with
// replacement (Rng(seed, b).uniform_index(n_fake), n_fake draws); precision* = share of drawn
// generations inside some ball, density* = mean ball count / k, coverage* = share of balls
// holding a drawn generation, then every coverage* is shifted by coverage - median(coverage*)
// (see above) and clipped to [0, 1]. The replicates are kept for gap tests.
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
