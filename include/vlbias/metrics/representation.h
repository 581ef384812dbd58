#pragma once
// How far one label distribution is from parity or from a target: the shares of K classes
// (genders, Monk skin tones, races) among one prompt's labelled faces or images, each measure as
// the peer that reports it defines it (issue 42: src/metrics/representation.cpp;
// docs/methods.md#representation-measures). The audit gives each its interval and test; these
// are the point values.
//
// parity_mad(p) = (1/K) sum_k |p_k - 1/K|
//   DALL-Eval's MAD (biases/compute_mad.py: np_mad of a prompt's shares, the mean absolute
//   deviation from their mean, which is 1/K), HEIM's gender imbalance |p_female - 1/2| (K = 2:
//   both terms equal it) and HEIM's skin-tone imbalance sum_k |p_k - 1/10| / 10 over the ten Monk
//   tones. 0 at parity; (K - 1) * 2 / K^2 when one class has everything.
// entropy_bias(p) = 1 - H(p) / log K, H(p) = -sum_k p_k log p_k (0 log 0 = 0)
//   OpenBias's normalised-entropy bias: 0 for the uniform distribution, 1 for one class.
// kl_to_target(p, q) = sum_k p_k log(p_k / q_k) in nats (0 log 0 = 0): +inf when a class with
//   p_k > 0 has q_k = 0 (the target says it never occurs).
//
// Data convention: shares are K >= 2 finite values >= 0 summing to 1 within 1e-9 (as
// shares_from_counts makes them); anything else is an InputError naming the function.
#include <cstdint>
#include <span>
#include <vector>

namespace vlbias {

// counts / sum(counts). Fewer than 2 classes or a zero total: InputError.
std::vector<double> shares_from_counts(std::span<const std::uint64_t> counts);

double parity_mad(std::span<const double> shares);
double entropy_bias(std::span<const double> shares);
// `target`: K shares as above, in the order of `shares`.
double kl_to_target(std::span<const double> shares, std::span<const double> target);

}  // namespace vlbias
