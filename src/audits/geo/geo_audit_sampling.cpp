// The geo-diversity audit's sampling and resampling (include/vlbias/audits/geo_audit.h).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "vlbias/audits/geo_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/table/sample.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

MatchedSample object_mix_sample(const std::vector<std::size_t>& target_counts,
                                const std::vector<std::vector<std::uint32_t>>& pools,
                                std::uint64_t seed) {
  VLBIAS_CHECK(target_counts.size() == pools.size(), InternalError,
               "object_mix_sample: {} targets for {} pools", target_counts.size(), pools.size());
  const std::size_t objects = pools.size();
  MatchedSample out;
  out.target = std::accumulate(target_counts.begin(), target_counts.end(), std::size_t{0});
  double scale = 1.0;
  for (std::size_t o = 0; o < objects; ++o) {
    if (target_counts[o] > 0) {
      scale = std::min(
          scale, static_cast<double>(pools[o].size()) / static_cast<double>(target_counts[o]));
    }
  }
  out.scale = scale;
  out.counts.assign(objects, 0);
  if (scale >= 1.0) {
    out.counts = target_counts;
  } else {
    // Largest-remainder apportionment of floor(scale * target) among the objects' quotas.
    const auto total =
        static_cast<std::size_t>(std::floor(scale * static_cast<double>(out.target) + 1e-9));
    std::vector<double> remainder(objects, 0.0);
    std::size_t given = 0;
    for (std::size_t o = 0; o < objects; ++o) {
      const double quota = scale * static_cast<double>(target_counts[o]);
      out.counts[o] = std::min(pools[o].size(), static_cast<std::size_t>(std::floor(quota)));
      remainder[o] = quota - static_cast<double>(out.counts[o]);
      given += out.counts[o];
    }
    std::vector<std::size_t> order(objects);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
    for (std::size_t i = 0; given < total && i < objects; ++i) {
      const std::size_t o = order[i];
      if (target_counts[o] > 0 && out.counts[o] < pools[o].size() && remainder[o] > 0.0) {
        ++out.counts[o];
        ++given;
      }
    }
  }
  for (std::size_t o = 0; o < objects; ++o) {
    if (out.counts[o] == 0) continue;
    const std::vector<std::uint32_t> drawn = sample_rows(pools[o], out.counts[o], seed, o);
    out.rows.insert(out.rows.end(), drawn.begin(), drawn.end());
  }
  return out;
}

PrdcIntervals prdc_bootstrap(const PrdcResult& r, std::size_t resamples, double level,
                             std::uint64_t seed) {
  const std::size_t nf = r.n_fake, nr = r.n_real;
  VLBIAS_CHECK(r.fake_ball_count.size() == nf && r.members_offsets.size() == nr + 1, InternalError,
               "prdc_bootstrap needs per-sample counts and ball members");
  PrdcIntervals out;
  stats::check_resamples(resamples, "bootstrap");
  out.precision_replicates.assign(resamples, stats::kNaN);
  out.density_replicates.assign(resamples, stats::kNaN);
  out.coverage_replicates.assign(resamples, stats::kNaN);
  if (nf >= 2 && resamples > 0) {
    const double k = static_cast<double>(r.k);
    parallel_chunks(resamples, 16, [&](std::size_t, std::size_t begin, std::size_t end) {
      std::vector<std::uint32_t> drawn(nf, 0);
      for (std::size_t b = begin; b < end; ++b) {
        Rng rng(seed, b);
        double inside = 0.0, balls = 0.0;
        for (std::size_t i = 0; i < nf; ++i) {
          const std::size_t j = rng.uniform_index(nf);
          ++drawn[j];
          inside += r.fake_ball_count[j] > 0 ? 1.0 : 0.0;
          balls += r.fake_ball_count[j];
        }
        std::size_t covered = 0;
        for (std::size_t i = 0; i < nr; ++i) {
          for (std::uint64_t m = r.members_offsets[i]; m < r.members_offsets[i + 1]; ++m) {
            if (drawn[r.members[m]] > 0) {
              ++covered;
              break;
            }
          }
        }
        std::fill(drawn.begin(), drawn.end(), 0u);
        out.precision_replicates[b] = inside / static_cast<double>(nf);
        out.density_replicates[b] = balls / (k * static_cast<double>(nf));
        out.coverage_replicates[b] = static_cast<double>(covered) / static_cast<double>(nr);
      }
    });
  }
  // Coverage depends on the set of distinct generations, and a resample holds only ~63% of
  // them: its replicates sit about 0.1 below the estimate while their spread matches that of
  // a fresh generated set (tools/simulate_coverage_bootstrap.py). Recentre them on the
  // estimate (shift by estimate - median), so intervals and gaps use the spread only.
  if (nf >= 2 && resamples > 0) {
    std::vector<double> sorted = out.coverage_replicates;
    std::sort(sorted.begin(), sorted.end());
    const double shift = r.coverage - stats::percentile_sorted(sorted, 50.0);
    // Coverage is a share: a shifted replicate past 1 (or below 0) is clipped to it, else a
    // cell covering every real ball would report an interval reaching above 1.
    for (double& v : out.coverage_replicates) v = std::clamp(v + shift, 0.0, 1.0);
  }
  out.precision = stats::percentile_interval(out.precision_replicates, level, seed);
  out.density = stats::percentile_interval(out.density_replicates, level, seed);
  out.coverage = stats::percentile_interval(out.coverage_replicates, level, seed);
  if (nf < 2) {
    const std::string note = "fewer than 2 generated images: no bootstrap interval";
    out.precision.note = out.density.note = out.coverage.note = note;
  }
  return out;
}

Gap bootstrap_gap(double a, const std::vector<double>& replicates_a, double b,
                  const std::vector<double>& replicates_b, double level) {
  VLBIAS_CHECK(replicates_a.size() == replicates_b.size(), InternalError,
               "bootstrap_gap: {} and {} replicates", replicates_a.size(), replicates_b.size());
  Gap g;
  g.difference = a - b;
  std::vector<double> diff;
  diff.reserve(replicates_a.size());
  for (std::size_t i = 0; i < replicates_a.size(); ++i) {
    const double d = replicates_a[i] - replicates_b[i];
    if (!std::isnan(d)) diff.push_back(d);
  }
  if (diff.size() >= 2 && !std::isnan(g.difference)) {
    g.se = std::sqrt(stats::variance(diff));
    if (g.se > 0.0) {
      g.p_value = std::erfc(std::abs(g.difference) / g.se / std::sqrt(2.0));
    } else {
      // Every replicate difference equal: no sampling spread to test against.
      g.p_value = g.difference == 0.0 ? 1.0 : stats::kNaN;
    }
  }
  g.ci = stats::percentile_interval(std::move(diff), level, 0);
  g.ci.resamples = replicates_a.size();
  return g;
}

PercentileMean percentile_mean(const std::vector<std::vector<double>>& strata, double q,
                               std::size_t resamples, double level, std::uint64_t seed) {
  PercentileMean out;
  const std::vector<double> qs = {q};
  double sum = 0.0;
  for (const std::vector<double>& s : strata) {
    VLBIAS_CHECK(!s.empty(), InternalError, "percentile_mean: an empty stratum");
    out.per_stratum.push_back(stats::percentiles(s, qs)[0]);
    sum += out.per_stratum.back();
  }
  if (strata.empty()) return out;
  out.value = sum / static_cast<double>(strata.size());
  stats::check_resamples(resamples, "bootstrap");
  out.replicates.assign(resamples, stats::kNaN);
  parallel_chunks(resamples, 8, [&](std::size_t, std::size_t begin, std::size_t end) {
    std::vector<double> buf;
    for (std::size_t b = begin; b < end; ++b) {
      Rng rng(seed, b);
      double total = 0.0;
      for (const std::vector<double>& s : strata) {
        buf.resize(s.size());
        for (double& v : buf) v = s[rng.uniform_index(s.size())];
        total += stats::percentile_select(buf, q);
      }
      out.replicates[b] = total / static_cast<double>(strata.size());
    }
  });
  out.ci = stats::percentile_interval(out.replicates, level, seed);
  return out;
}

}  // namespace vlbias
