// Point measures of a label distribution against parity or a target
// (include/vlbias/metrics/representation.h).
#include "vlbias/metrics/representation.h"

#include <cmath>
#include <limits>

#include "vlbias/core/error.h"

namespace vlbias {

namespace {

// K >= 2 finite shares >= 0 that sum to 1 (within rounding).
void check_shares(std::span<const double> shares, const char* what) {
  VLBIAS_CHECK(shares.size() >= 2, InputError, "{}: {} share{}; a distribution needs at least 2",
               what, shares.size(), shares.size() == 1 ? "" : "s");
  double sum = 0;
  for (std::size_t k = 0; k < shares.size(); ++k) {
    VLBIAS_CHECK(std::isfinite(shares[k]) && shares[k] >= 0, InputError,
                 "{}: share {} is {}; shares are finite and at least 0", what, k, shares[k]);
    sum += shares[k];
  }
  VLBIAS_CHECK(std::abs(sum - 1.0) <= 1e-9, InputError, "{}: the shares sum to {:.17g}, not 1",
               what, sum);
}

}  // namespace

std::vector<double> shares_from_counts(std::span<const std::uint64_t> counts) {
  VLBIAS_CHECK(counts.size() >= 2, InputError,
               "shares_from_counts: {} class{}; a distribution needs at least 2", counts.size(),
               counts.size() == 1 ? "" : "es");
  double n = 0;
  for (const std::uint64_t c : counts) n += static_cast<double>(c);
  VLBIAS_CHECK(n > 0, InputError, "shares_from_counts: every count is 0");
  std::vector<double> shares(counts.size());
  for (std::size_t k = 0; k < counts.size(); ++k) shares[k] = static_cast<double>(counts[k]) / n;
  return shares;
}

// DALL-Eval's np_mad: the mean absolute deviation of the shares from their mean, 1/K.
double parity_mad(std::span<const double> shares) {
  check_shares(shares, "parity_mad");
  const double k = static_cast<double>(shares.size());
  double sum = 0;
  for (const double p : shares) sum += std::abs(p - 1.0 / k);
  return sum / k;
}

// OpenBias: 1 - H / log K.
double entropy_bias(std::span<const double> shares) {
  check_shares(shares, "entropy_bias");
  double h = 0;
  for (const double p : shares) {
    if (p > 0) h -= p * std::log(p);
  }
  return 1.0 - h / std::log(static_cast<double>(shares.size()));
}

double kl_to_target(std::span<const double> shares, std::span<const double> target) {
  check_shares(shares, "kl_to_target (shares)");
  check_shares(target, "kl_to_target (target)");
  VLBIAS_CHECK(shares.size() == target.size(), InputError,
               "kl_to_target: {} shares against a target of {}", shares.size(), target.size());
  double kl = 0;
  for (std::size_t k = 0; k < shares.size(); ++k) {
    if (shares[k] == 0) continue;
    if (target[k] == 0) return std::numeric_limits<double>::infinity();
    kl += shares[k] * std::log(shares[k] / target[k]);
  }
  return kl;
}

}  // namespace vlbias
