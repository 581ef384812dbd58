// Likelihood of visual stereotypes in generated images (paper 000, ViSAGe 4.1):
// L(a, id), L(stereo, id), L(random, id), theta_id, O(id), the pooled ratio, and their
// bootstrap intervals over images (visual_stereotypes.h).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/metrics/visual_stereotypes.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

const char* to_string(Role r) {
  switch (r) {
    case Role::Stereotype:
      return "stereotype";
    case Role::Random:
      return "random";
    case Role::Option:
      return "option";
  }
  return "?";
}

const char* to_string(ThetaStatus s) {
  switch (s) {
    case ThetaStatus::Finite:
      return "finite";
    case ThetaStatus::Infinite:
      return "infinite";
    case ThetaStatus::Undefined:
      return "undefined";
  }
  return "?";
}

namespace {

constexpr double kLogZeroInf = std::numeric_limits<double>::infinity();

// One identity's shown attributes and, per image, the (k, n) of each.
struct IdentityCounts {
  std::vector<std::uint32_t> attributes;  // global attribute index, ascending
  std::vector<Role> roles;
  std::vector<double> offensiveness;  // stereotype attributes; 0 otherwise
  std::vector<std::uint32_t> images;  // global image index, ascending
  // k and n, images.size() x attributes.size(), row-major: row = image
  std::vector<std::uint32_t> k, n;
};

struct Estimate {
  double l_stereo = stats::kNaN, l_random = stats::kNaN, theta = stats::kNaN;
  double offensiveness = stats::kNaN, mean_offensiveness = stats::kNaN;
  std::size_t present_stereotypes = 0;
  ThetaStatus status = ThetaStatus::Undefined;
};

// ViSAGe 4.1: the means over the shown attributes of each side (attributes with n = 0
// drop out), theta's three cases, O(id) = L(stereo) * mean offensiveness of the present.
Estimate estimate(const IdentityCounts& c, const std::vector<double>& k,
                  const std::vector<double>& n, bool none_as_random) {
  double s_sum = 0, r_sum = 0, off_sum = 0;
  std::size_t s_count = 0, r_count = 0, present = 0;
  for (std::size_t a = 0; a < c.attributes.size(); ++a) {
    if (n[a] == 0) continue;
    const double l = k[a] / n[a];
    if (c.roles[a] == Role::Stereotype) {
      s_sum += l;
      ++s_count;
      if (k[a] > 0) {
        off_sum += c.offensiveness[a];
        ++present;
      }
    } else if (c.roles[a] == Role::Random || none_as_random) {
      r_sum += l;
      ++r_count;
    }
  }
  // A side with no attribute left has no L; theta needs both sides, O the stereotype side.
  Estimate e;
  e.present_stereotypes = present;
  if (r_count > 0) e.l_random = r_sum / static_cast<double>(r_count);
  if (s_count == 0) return e;
  e.l_stereo = s_sum / static_cast<double>(s_count);
  e.mean_offensiveness = present > 0 ? off_sum / static_cast<double>(present) : stats::kNaN;
  e.offensiveness = present > 0 ? e.l_stereo * e.mean_offensiveness : 0.0;
  if (r_count == 0) return e;
  if (e.l_random > 0) {
    e.theta = e.l_stereo / e.l_random;
    e.status = ThetaStatus::Finite;
  } else if (e.l_stereo > 0) {
    e.theta = kLogZeroInf;
    e.status = ThetaStatus::Infinite;
  }
  return e;
}

// Percentile interval of replicates that may hold +inf (header: +inf -> DBL_MAX first, a
// bound above the largest finite replicate is +inf).
stats::Interval interval_with_infinity(std::vector<double> replicates, double level,
                                       std::size_t resamples, std::uint64_t seed) {
  double max_finite = -kLogZeroInf;
  for (double& x : replicates) {
    if (std::isinf(x) && x > 0) {
      x = DBL_MAX;
    } else if (!std::isnan(x)) {
      max_finite = std::max(max_finite, x);
    }
  }
  stats::Interval ci = stats::percentile_interval(std::move(replicates), level, seed);
  ci.resamples = resamples;
  if (!std::isnan(ci.lower) && ci.lower > max_finite) ci.lower = kLogZeroInf;
  if (!std::isnan(ci.upper) && ci.upper > max_finite) ci.upper = kLogZeroInf;
  return ci;
}

// Median with +inf allowed: the middle value, or the mean of the two middle values.
double median_with_infinity(std::vector<double> x) {
  if (x.empty()) return stats::kNaN;
  std::sort(x.begin(), x.end());
  const std::size_t m = x.size() / 2;
  if (x.size() % 2 == 1) return x[m];
  if (std::isinf(x[m - 1]) || std::isinf(x[m])) return kLogZeroInf;
  return (x[m - 1] + x[m]) / 2;
}

// Per identity: its images, the attributes shown with them (and their roles), and the
// per-image counts.
std::vector<IdentityCounts> count_by_identity(const Annotations& ann,
                                              const VisualStereotypes& stereotypes) {
  const std::size_t n_id = ann.identities.size();
  std::vector<IdentityCounts> counts(n_id);
  for (std::uint32_t im = 0; im < ann.images.size(); ++im) {
    counts[ann.image_identity[im]].images.push_back(im);
  }
  std::vector<std::vector<bool>> shown(n_id, std::vector<bool>(ann.attributes.size(), false));
  for (const Judgement& j : ann.judgements) shown[ann.image_identity[j.image]][j.attribute] = true;
  for (std::size_t i = 0; i < n_id; ++i) {
    IdentityCounts& c = counts[i];
    for (std::uint32_t a = 0; a < ann.attributes.size(); ++a) {
      if (!shown[i][a]) continue;
      c.attributes.push_back(a);
      const Stereotype* s = stereotypes.find(ann.identities[i], ann.attributes[a]);
      if (s != nullptr) {
        c.roles.push_back(Role::Stereotype);
        c.offensiveness.push_back(s->offensiveness);
      } else {
        c.roles.push_back(ann.attributes[a] == ann.none_option ? Role::Option : Role::Random);
        c.offensiveness.push_back(0);
      }
    }
    c.k.assign(c.images.size() * c.attributes.size(), 0);
    c.n.assign(c.images.size() * c.attributes.size(), 0);
  }
  for (const Judgement& j : ann.judgements) {
    IdentityCounts& c = counts[ann.image_identity[j.image]];
    const std::size_t row = static_cast<std::size_t>(
        std::lower_bound(c.images.begin(), c.images.end(), j.image) - c.images.begin());
    const std::size_t col = static_cast<std::size_t>(
        std::lower_bound(c.attributes.begin(), c.attributes.end(), j.attribute) -
        c.attributes.begin());
    const std::size_t cell = row * c.attributes.size() + col;
    c.k[cell] += j.present ? 1 : 0;
    c.n[cell] += 1;
  }
  return counts;
}

// Adds the counts of image row r to the per-attribute sums.
void add_image_counts(const IdentityCounts& c, std::size_t r, std::vector<double>& k,
                      std::vector<double>& n) {
  const std::size_t na = c.attributes.size();
  for (std::size_t a = 0; a < na; ++a) {
    k[a] += c.k[r * na + a];
    n[a] += c.n[r * na + a];
  }
}

// Identity i's estimates and, with o.bootstrap, its intervals from resampling its images;
// the replicates of l_stereo and l_random are kept for the pooled interval.
void estimate_identity(const Annotations& ann, const VisualStereotypes& stereotypes,
                       const LikelihoodOptions& o, std::size_t i, const IdentityCounts& c,
                       IdentityLikelihood& out, std::vector<double>& rep_stereo,
                       std::vector<double>& rep_random) {
  const std::size_t na = c.attributes.size(), m = c.images.size();
  std::vector<double> k(na, 0), n(na, 0);
  for (std::size_t r = 0; r < m; ++r) add_image_counts(c, r, k, n);
  out.identity = static_cast<std::uint32_t>(i);
  out.visual_stereotypes = stereotypes.count(ann.identities[i]);
  out.included = out.visual_stereotypes >= o.min_stereotypes;
  out.images = m;
  for (std::size_t a = 0; a < na; ++a) {
    out.shown_stereotypes += c.roles[a] == Role::Stereotype ? 1 : 0;
    out.shown_random +=
        c.roles[a] == Role::Random || (c.roles[a] == Role::Option && o.none_as_random) ? 1 : 0;
  }
  const Estimate e = estimate(c, k, n, o.none_as_random);
  out.l_stereo = e.l_stereo;
  out.l_random = e.l_random;
  out.theta = e.theta;
  out.status = e.status;
  out.offensiveness = e.offensiveness;
  out.mean_offensiveness = e.mean_offensiveness;
  out.present_stereotypes = e.present_stereotypes;
  if (o.bootstrap == 0) return;

  const std::uint64_t seed = derive_seed(derive_seed(o.seed, 1), i);
  std::vector<double> ls(o.bootstrap), lr(o.bootstrap), th(o.bootstrap), off(o.bootstrap);
  for (std::size_t b = 0; b < o.bootstrap; ++b) {
    Rng rng(seed, b);
    std::fill(k.begin(), k.end(), 0.0);
    std::fill(n.begin(), n.end(), 0.0);
    for (std::size_t d = 0; d < m; ++d) {
      add_image_counts(c, static_cast<std::size_t>(rng.uniform_index(m)), k, n);
    }
    const Estimate x = estimate(c, k, n, o.none_as_random);
    ls[b] = x.l_stereo;
    lr[b] = x.l_random;
    th[b] = x.theta;
    off[b] = x.offensiveness;
  }
  out.ci_l_stereo = interval_with_infinity(ls, o.ci, o.bootstrap, seed);
  out.ci_l_random = interval_with_infinity(lr, o.ci, o.bootstrap, seed);
  out.ci_theta = interval_with_infinity(th, o.ci, o.bootstrap, seed);
  out.ci_offensiveness = interval_with_infinity(off, o.ci, o.bootstrap, seed);
  rep_stereo = std::move(ls);
  rep_random = std::move(lr);
}

// The (identity, attribute) table.
std::vector<AttributeLikelihood> attribute_table(const std::vector<IdentityCounts>& counts) {
  std::vector<AttributeLikelihood> table;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const IdentityCounts& c = counts[i];
    const std::size_t na = c.attributes.size();
    for (std::size_t a = 0; a < na; ++a) {
      AttributeLikelihood x;
      x.identity = static_cast<std::uint32_t>(i);
      x.attribute = c.attributes[a];
      x.role = c.roles[a];
      for (std::size_t r = 0; r < c.images.size(); ++r) {
        x.k += c.k[r * na + a];
        x.n += c.n[r * na + a];
        x.images += c.n[r * na + a] > 0 ? 1 : 0;
      }
      x.likelihood = static_cast<double>(x.k) / static_cast<double>(x.n);
      table.push_back(x);
    }
  }
  return table;
}

// Pooled over the included identities; the ratio's interval from the identities' replicates.
PooledLikelihood pool_identities(const std::vector<IdentityLikelihood>& identities,
                                 const std::vector<std::vector<double>>& rep_stereo,
                                 const std::vector<std::vector<double>>& rep_random,
                                 const LikelihoodOptions& o) {
  PooledLikelihood p;
  double sum_s = 0, sum_r = 0, sum_finite = 0;
  std::vector<double> thetas;
  for (const IdentityLikelihood& x : identities) {
    if (!x.included) continue;
    ++p.identities;
    if (x.status == ThetaStatus::Finite) {
      ++p.finite;
      sum_finite += x.theta;
      thetas.push_back(x.theta);
    } else if (x.status == ThetaStatus::Infinite) {
      ++p.infinite;
      thetas.push_back(kLogZeroInf);
    } else {
      ++p.undefined;
    }
    if (!std::isnan(x.l_stereo) && !std::isnan(x.l_random)) {
      sum_s += x.l_stereo;
      sum_r += x.l_random;
    }
  }
  p.ratio = sum_r > 0 ? sum_s / sum_r : (sum_s > 0 ? kLogZeroInf : stats::kNaN);
  p.mean_finite_theta = p.finite > 0 ? sum_finite / static_cast<double>(p.finite) : stats::kNaN;
  p.median_theta = median_with_infinity(thetas);
  if (o.bootstrap == 0 || p.identities == 0) return p;
  std::vector<double> pooled(o.bootstrap, stats::kNaN);
  for (std::size_t b = 0; b < o.bootstrap; ++b) {
    double s = 0, r = 0;
    bool defined = true;
    for (std::size_t i = 0; i < identities.size() && defined; ++i) {
      if (!identities[i].included) continue;
      // An identity whose point estimate is undefined (a side never shown) stays out.
      if (std::isnan(identities[i].l_stereo) || std::isnan(identities[i].l_random)) continue;
      defined = !std::isnan(rep_stereo[i][b]) && !std::isnan(rep_random[i][b]);
      s += rep_stereo[i][b];
      r += rep_random[i][b];
    }
    if (defined) pooled[b] = r > 0 ? s / r : (s > 0 ? kLogZeroInf : stats::kNaN);
  }
  p.ci_ratio = interval_with_infinity(std::move(pooled), o.ci, o.bootstrap, derive_seed(o.seed, 1));
  return p;
}

}  // namespace

LikelihoodReport visual_likelihood(const Annotations& ann, const VisualStereotypes& stereotypes,
                                   const LikelihoodOptions& o) {
  VLBIAS_CHECK(!ann.judgements.empty(), InputError, "no annotations to compute likelihoods from");
  VLBIAS_CHECK(o.bootstrap == 0 || (o.ci > 0 && o.ci < 1), UsageError,
               "the confidence level must be in (0, 1), got {}", o.ci);
  stats::check_resamples(o.bootstrap, "bootstrap");
  const std::size_t n_id = ann.identities.size();
  const std::vector<IdentityCounts> counts = count_by_identity(ann, stereotypes);

  LikelihoodReport report;
  report.identities.resize(n_id);
  // Replicates per identity (for the pooled interval): [identity][b].
  std::vector<std::vector<double>> rep_stereo(n_id), rep_random(n_id);
  parallel_for(n_id, [&](std::size_t i) {
    estimate_identity(ann, stereotypes, o, i, counts[i], report.identities[i], rep_stereo[i],
                      rep_random[i]);
  });
  report.attributes = attribute_table(counts);
  report.pooled = pool_identities(report.identities, rep_stereo, rep_random, o);
  return report;
}

}  // namespace vlbias
