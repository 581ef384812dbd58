// Input checks and numerically careful moments for the classical tests
// (see classical_internal.h).
#include <algorithm>
#include <cmath>

#include "classical_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"

namespace vlbias::stats_internal {

namespace {

constexpr std::size_t kBlock = 2048;     // values summed twice while in L1
constexpr std::size_t kChunk = 1 << 16;  // values per pool task

// ------------------------------------------------------------------- one sample

// Pairs of doubles (GCC/Clang vector extension, one SSE2 register on baseline
// x86-64). The lane structure is fixed by the code, so the summation order, hence
// the result, is the same on every machine.
using V2 = double __attribute__((vector_size(16)));

template <class At>
inline V2 load2(const At& at, std::size_t i) {
  return V2{at(i), at(i + 1)};
}

// Corrected two-pass moments of d_i = at(i) - shift, i in [begin, end)
// (end - begin <= kBlock): m = sum d / len; r = sum (d - m); q = sum (d - m)^2;
// rel_mean = m + r / len and m2 = q - r^2 / len (Chan, Golub & LeVeque 1983,
// eq. 1.7). Eight accumulator lanes per sum keep the loops independent of latency.
// The block is constant when every value equals the shift; q > 0 rules that out,
// and only a block with q = 0 is compared value by value.
template <class At>
Moments block_moments(std::size_t begin, std::size_t end, double shift, const At& at) {
  const double len = static_cast<double>(end - begin);
  const V2 sh = V2{} + shift;
  V2 s0{}, s1{}, s2{}, s3{};
  std::size_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const V2 x0 = load2(at, i), x1 = load2(at, i + 2), x2 = load2(at, i + 4), x3 = load2(at, i + 6);
    s0 += x0 - sh;
    s1 += x1 - sh;
    s2 += x2 - sh;
    s3 += x3 - sh;
  }
  const std::size_t vec_end = i;
  double tail = 0.0;
  for (; i < end; ++i) tail += at(i) - shift;
  const V2 s = (s0 + s1) + (s2 + s3);
  const double m = ((s[0] + s[1]) + tail) / len;
  const V2 mv = V2{} + m;
  V2 r0{}, r1{}, r2{}, r3{}, q0{}, q1{}, q2{}, q3{};
  for (std::size_t j = begin; j < vec_end; j += 8) {
    const V2 d0 = (load2(at, j) - sh) - mv, d1 = (load2(at, j + 2) - sh) - mv,
             d2 = (load2(at, j + 4) - sh) - mv, d3 = (load2(at, j + 6) - sh) - mv;
    r0 += d0;
    r1 += d1;
    r2 += d2;
    r3 += d3;
    q0 += d0 * d0;
    q1 += d1 * d1;
    q2 += d2 * d2;
    q3 += d3 * d3;
  }
  double r_tail = 0.0, q_tail = 0.0;
  for (std::size_t j = vec_end; j < end; ++j) {
    const double d = (at(j) - shift) - m;
    r_tail += d;
    q_tail += d * d;
  }
  const V2 rv = (r0 + r1) + (r2 + r3), qv = (q0 + q1) + (q2 + q3);
  const double r = (rv[0] + rv[1]) + r_tail;
  const double q = (qv[0] + qv[1]) + q_tail;
  bool differ = !(q == 0.0);
  for (std::size_t j = begin; !differ && j < end; ++j) differ = at(j) != shift;
  Moments out;
  out.n = end - begin;
  out.first = shift;
  out.rel_mean = m + r / len;
  out.m2 = q - r * r / len;
  if (out.m2 < 0) out.m2 = 0;  // keeps NaN (non-finite input is detected by the caller)
  out.constant = !differ;
  return out;
}

template <class At>
Moments range_moments(std::size_t begin, std::size_t end, double shift, const At& at) {
  Moments acc;
  for (std::size_t b = begin; b < end; b += kBlock) {
    merge(acc, block_moments(b, std::min(end, b + kBlock), shift, at));
  }
  return acc;
}

// Pairwise (tree) merge of partial results in index order.
template <class T, class Merge>
T tree_merge(std::vector<T> parts, const Merge& merge_fn) {
  for (std::size_t width = 1; width < parts.size(); width *= 2) {
    for (std::size_t i = 0; i + width < parts.size(); i += 2 * width) {
      merge_fn(parts[i], parts[i + width]);
    }
  }
  return parts.empty() ? T{} : parts[0];
}

// Moments of at(i), i < n (n > 0), every sum shifted by at(0).
template <class At>
Moments chunked_moments(std::size_t n, const At& at) {
  const double shift = at(0);
  if (n <= kChunk) return range_moments(0, n, shift, at);
  std::vector<Moments> parts((n + kChunk - 1) / kChunk);
  parallel_chunks(n, kChunk, [&](std::size_t c, std::size_t b, std::size_t e) {
    parts[c] = range_moments(b, e, shift, at);
  });
  return tree_merge(std::move(parts), [](Moments& a, const Moments& b) { merge(a, b); });
}

bool finite_moments(const Moments& m) {
  return std::isfinite(m.first) && std::isfinite(m.rel_mean) && std::isfinite(m.m2);
}

// ------------------------------------------------------------------ paired (x, y)

void merge_co(CoMoments& a, const CoMoments& b) {
  if (b.x.n == 0) return;
  if (a.x.n == 0) {
    a = b;
    return;
  }
  // Chan et al. update of the co-moment: C = Ca + Cb + dx dy na nb / n (all parts
  // share the same shifts, so the differences of means are differences of rel_mean).
  const double na = static_cast<double>(a.x.n), nb = static_cast<double>(b.x.n);
  const double dx = b.x.rel_mean - a.x.rel_mean, dy = b.y.rel_mean - a.y.rel_mean;
  a.cxy += b.cxy + dx * dy * (na * nb / (na + nb));
  merge(a.x, b.x);
  merge(a.y, b.y);
}

// Two-pass co-moments of (x - fx, y - fy) over one block of len pairs.
CoMoments co_block(const double* x, const double* y, std::size_t len, double fx, double fy) {
  double sx = 0, sy = 0;
  bool dx_any = false, dy_any = false;
  for (std::size_t i = 0; i < len; ++i) {
    sx += x[i] - fx;
    sy += y[i] - fy;
    dx_any |= (x[i] != fx);
    dy_any |= (y[i] != fy);
  }
  const double dn = static_cast<double>(len);
  const double mx = sx / dn, my = sy / dn;
  double rx = 0, ry = 0, qx = 0, qy = 0, c = 0;
  for (std::size_t i = 0; i < len; ++i) {
    const double a = (x[i] - fx) - mx, b = (y[i] - fy) - my;
    rx += a;
    ry += b;
    qx += a * a;
    qy += b * b;
    c += a * b;
  }
  CoMoments out;
  out.x.n = out.y.n = len;
  out.x.first = fx;
  out.y.first = fy;
  out.x.rel_mean = mx + rx / dn;
  out.y.rel_mean = my + ry / dn;
  out.x.m2 = qx - rx * rx / dn;
  out.y.m2 = qy - ry * ry / dn;
  if (out.x.m2 < 0) out.x.m2 = 0;
  if (out.y.m2 < 0) out.y.m2 = 0;
  out.cxy = c - rx * ry / dn;
  out.x.constant = !dx_any;
  out.y.constant = !dy_any;
  return out;
}

CoMoments co_range(const double* x, const double* y, std::size_t begin, std::size_t end) {
  CoMoments acc;
  for (std::size_t b = begin; b < end; b += kBlock) {
    merge_co(acc, co_block(x + b, y + b, std::min(end, b + kBlock) - b, x[0], y[0]));
  }
  return acc;
}

// ------------------------------------------------------------------ grouped

// Shifted sums of one group within one block.
struct ShiftedSums {
  double shift = 0.0;
  double s1 = 0.0;  // sum (x - shift)
  double s2 = 0.0;  // sum (x - shift)^2
  std::size_t n = 0;
};

}  // namespace

TestResult new_result(const char* test, const char* effect_name) {
  TestResult r;
  r.test = std::string(test);
  r.effect_name = std::string(effect_name);
  return r;
}

// --------------------------------------------------------------------- checks

void require_finite(std::span<const double> x, const std::string& what) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    VLBIAS_CHECK(std::isfinite(x[i]), InputError,
                 "{} has a non-finite value ({}) at position {} (0-based); expected finite numbers",
                 what, x[i], i);
  }
}

void require_nonempty(std::span<const double> x, const char* test, const std::string& what) {
  VLBIAS_CHECK(!x.empty(), InputError, "{}: {} is empty; expected at least one value", test, what);
}

std::vector<std::size_t> check_grouped(const GroupedValues& data, const char* test) {
  VLBIAS_CHECK(data.values.size() == data.group.size(), InputError,
               "{}: {} values but {} group labels; expected one label per value", test,
               data.values.size(), data.group.size());
  VLBIAS_CHECK(data.k >= 2, InputError, "{}: k = {} groups; expected at least 2", test, data.k);
  std::vector<std::size_t> sizes(data.k, 0);
  for (std::size_t i = 0; i < data.group.size(); ++i) {
    const std::uint32_t g = data.group[i];
    VLBIAS_CHECK(g < data.k, InputError, "{}: group label {} at position {} is not below k = {}",
                 test, g, i, data.k);
    ++sizes[g];
  }
  for (std::size_t g = 0; g < data.k; ++g) {
    VLBIAS_CHECK(sizes[g] > 0, InputError,
                 "{}: group {} of {} has no observations; drop empty groups before testing", test,
                 g, data.k);
  }
  return sizes;
}

void check_groups(const std::vector<std::span<const double>>& groups, const char* test) {
  VLBIAS_CHECK(groups.size() >= 2, InputError, "{}: {} group(s); expected at least 2", test,
               groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    VLBIAS_CHECK(!groups[g].empty(), InputError,
                 "{}: group {} of {} has no observations; drop empty groups before testing", test,
                 g, groups.size());
  }
}

// -------------------------------------------------------------------- moments

void merge(Moments& into, const Moments& other) {
  if (other.n == 0) return;
  if (into.n == 0) {
    into = other;
    return;
  }
  const double na = static_cast<double>(into.n), nb = static_cast<double>(other.n);
  const double n = na + nb;
  // Difference of the two means; the first term is 0 when both share their shift.
  const double delta = (other.first - into.first) + (other.rel_mean - into.rel_mean);
  into.rel_mean += delta * (nb / n);
  into.m2 += other.m2 + delta * delta * (na * nb / n);
  into.constant = into.constant && other.constant && into.first == other.first;
  into.n += other.n;
}

Moments sample_moments(std::span<const double> x, const std::string& what) {
  if (x.empty()) return {};
  const double* p = x.data();
  Moments m = chunked_moments(x.size(), [p](std::size_t i) { return p[i]; });
  if (!finite_moments(m)) {
    require_finite(x, what);
    VLBIAS_FAIL(InputError, "{}: values too large in magnitude, their squares overflow a double",
                what);
  }
  return m;
}

Moments difference_moments(std::span<const double> a, std::span<const double> b) {
  if (a.empty()) return {};
  const double* pa = a.data();
  const double* pb = b.data();
  Moments m = chunked_moments(a.size(), [pa, pb](std::size_t i) { return pa[i] - pb[i]; });
  if (!finite_moments(m)) {
    require_finite(a, "paired_t: sample a");
    require_finite(b, "paired_t: sample b");
    VLBIAS_FAIL(InputError,
                "paired_t: differences too large in magnitude, their squares overflow a double");
  }
  return m;
}

CoMoments co_moments(std::span<const double> x, std::span<const double> y) {
  const std::size_t n = x.size();
  if (n == 0) return {};
  CoMoments out;
  if (n <= kChunk) {
    out = co_range(x.data(), y.data(), 0, n);
  } else {
    std::vector<CoMoments> parts((n + kChunk - 1) / kChunk);
    parallel_chunks(n, kChunk, [&](std::size_t c, std::size_t b, std::size_t e) {
      parts[c] = co_range(x.data(), y.data(), b, e);
    });
    out = tree_merge(std::move(parts), merge_co);
  }
  return out;
}

std::vector<Moments> grouped_moments(const GroupedValues& data, const char* test) {
  const std::size_t n = data.values.size();
  const std::size_t k = data.k;
  VLBIAS_CHECK(n == data.group.size(), InputError,
               "{}: {} values but {} group labels; expected one label per value", test, n,
               data.group.size());
  VLBIAS_CHECK(k >= 2, InputError, "{}: k = {} groups; expected at least 2", test, k);
  // Blocks of values are summed per group around the group's first value in the
  // block, then merged into the chunk's totals; chunks run on the pool and are
  // merged in order. Chunk and block lengths depend only on n and k.
  const std::size_t block = std::max<std::size_t>(1024, 8 * k);
  const std::size_t chunk = std::max<std::size_t>(kChunk, 4 * block);
  const std::size_t n_chunks = (n + chunk - 1) / chunk;
  const double* values = data.values.data();
  const std::uint32_t* group = data.group.data();
  std::vector<std::vector<Moments>> parts(n_chunks);
  std::vector<char> bad_label(n_chunks, 0);
  parallel_chunks(n, chunk, [&](std::size_t c, std::size_t begin, std::size_t end) {
    std::vector<Moments> total(k);
    // Two sets of sums, for even and odd positions within the block, so that
    // consecutive values of one group do not wait on each other's stores.
    std::vector<ShiftedSums> acc(2 * k);
    bool bad = false;
    const auto add = [&](ShiftedSums& s, double x) {
      if (s.n == 0) s.shift = x;
      const double d = x - s.shift;
      ++s.n;
      s.s1 += d;
      s.s2 += d * d;
    };
    for (std::size_t b = begin; b < end; b += block) {
      const std::size_t e = std::min(end, b + block);
      std::size_t i = b;
      for (; i + 2 <= e; i += 2) {
        const std::uint32_t g0 = group[i], g1 = group[i + 1];
        if (g0 >= k || g1 >= k) [[unlikely]] {
          bad = true;
          continue;
        }
        add(acc[g0], values[i]);
        add(acc[k + g1], values[i + 1]);
      }
      if (i < e) {
        if (group[i] < k) {
          add(acc[group[i]], values[i]);
        } else {
          bad = true;
        }
      }
      // m2 = s2 - s1^2 / n loses at most a factor s2 / m2 <= n + 1 (the shift is one
      // of the values; Chan et al. 1983), i.e. ~1e-13 relative for blocks of 1024.
      for (std::size_t g = 0; g < k; ++g) {
        for (std::size_t parity = 0; parity < 2; ++parity) {
          ShiftedSums& s = acc[parity * k + g];
          if (s.n == 0) continue;
          Moments m;
          const double dn = static_cast<double>(s.n);
          m.n = s.n;
          m.first = s.shift;
          // s2 > 0 rules out a constant group; s2 = 0 is confirmed value by value.
          bool differ = !(s.s2 == 0.0);
          for (std::size_t j = b + parity; !differ && j < e; j += 2) {
            differ = group[j] == g && values[j] != s.shift;
          }
          m.constant = !differ;
          m.rel_mean = s.s1 / dn;
          m.m2 = m.constant ? 0.0 : std::max(0.0, s.s2 - s.s1 * s.s1 / dn);
          merge(total[g], m);
          s = ShiftedSums{};
        }
      }
    }
    parts[c] = std::move(total);
    bad_label[c] = bad;
  });
  if (std::find(bad_label.begin(), bad_label.end(), 1) != bad_label.end()) {
    check_grouped(data, test);  // throws, naming the first bad label
  }
  std::vector<Moments> total(k);
  for (std::size_t c = 0; c < n_chunks; ++c) {
    for (std::size_t g = 0; g < k; ++g) merge(total[g], parts[c][g]);
  }
  for (std::size_t g = 0; g < k; ++g) {
    VLBIAS_CHECK(total[g].n > 0, InputError,
                 "{}: group {} of {} has no observations; drop empty groups before testing", test,
                 g, k);
  }
  if (!std::all_of(total.begin(), total.end(), finite_moments)) {
    require_finite(data.values, fmt::format("{}: values", test));
    VLBIAS_FAIL(InputError, "{}: values too large in magnitude, their squares overflow a double",
                test);
  }
  return total;
}

}  // namespace vlbias::stats_internal
