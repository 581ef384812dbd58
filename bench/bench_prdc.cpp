// bench_prdc: PRDC (include/vlbias/metrics/prdc.h) at the scale of DIG-In's feature sets, and the
// sgemm ceiling it is measured against.
//
//   bench_prdc [--n N] [--n-fake N] [--dim D] [--k K] [--threads T] [--real R.npy --fake F.npy]
//              [--write-real R.npy --write-fake F.npy] [--no-ceiling]
//
// Without --real/--fake it generates Inception-like features (non-negative, clustered;
// deterministic from a fixed seed): N real and N generated rows of D columns. The
// distances PRDC needs are three n x n x D products (real-real, fake-fake, real-fake):
// 2 * D * (n_r^2 + n_f^2 + n_r n_f) flops, the figure the dense approach computes; vlbias
// computes the two symmetric ones as half tiles. "ceiling_gflops" is the best of three
// square 4096 x 4096 x D sgemm calls through the same BLAS wrapper on the same threads;
// "fraction_of_ceiling" = (dense flops / seconds) / ceiling. Peak RSS is the process's
// (getrusage). Prints one JSON line.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "vlbias/core/blas.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/metrics/prdc.h"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Non-negative clustered features: row i belongs to cluster i % 50; value =
// max(0, centre + noise), like post-ReLU pooled CNN features.
vlbias::Matrix make_features(std::size_t n, std::size_t d, std::uint64_t seed, float shift) {
  vlbias::Matrix centres(50, d);
  vlbias::Rng c(7);  // shared centres for real and fake
  for (float& v : centres.data) v = static_cast<float>(c.uniform01() * 0.8);
  vlbias::Matrix m(n, d);
  vlbias::parallel_chunks(n, 1024, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
    vlbias::Rng rng(seed, chunk);
    for (std::size_t i = begin; i < end; ++i) {
      const float* ctr = centres.row(i % 50);
      float* r = m.row(i);
      for (std::size_t k = 0; k < d; ++k) {
        const double noise = (rng.uniform01() + rng.uniform01() + rng.uniform01() - 1.5) * 0.6;
        r[k] = static_cast<float>(std::max(0.0, ctr[k] + shift + noise));
      }
    }
  });
  return m;
}

double sgemm_ceiling(std::size_t d) {
  const std::size_t n = 4096;
  vlbias::Matrix a(n, d);
  vlbias::Rng rng(3);
  for (float& v : a.data) v = static_cast<float>(rng.uniform01());
  std::vector<float> c(n * n);
  double best = 1e300;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = now();
    vlbias::gemm_nt(a, a, c.data(), n);
    best = std::min(best, now() - t0);
  }
  return 2.0 * static_cast<double>(n) * n * d / best / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 5000, n_fake = 0, d = 2048, k = 3;
  unsigned threads = 0;
  bool ceiling = true;
  std::string real_path, fake_path, write_real, write_fake;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--n") {
      n = std::stoul(next());
    } else if (a == "--n-fake") {
      n_fake = std::stoul(next());
    } else if (a == "--dim") {
      d = std::stoul(next());
    } else if (a == "--k") {
      k = std::stoul(next());
    } else if (a == "--threads") {
      threads = static_cast<unsigned>(std::stoul(next()));
    } else if (a == "--real") {
      real_path = next();
    } else if (a == "--fake") {
      fake_path = next();
    } else if (a == "--write-real") {
      write_real = next();
    } else if (a == "--write-fake") {
      write_fake = next();
    } else if (a == "--no-ceiling") {
      ceiling = false;
    } else {
      std::fprintf(stderr,
                   "usage: bench_prdc [--n N] [--n-fake N] [--dim D] [--k K] [--threads T] "
                   "[--real R.npy --fake F.npy] [--write-real R.npy --write-fake F.npy] "
                   "[--no-ceiling]\n");
      return 2;
    }
  }
  if (n_fake == 0) n_fake = n;
  vlbias::set_thread_count(threads);
  vlbias::Matrix real, fake;
  const double g0 = now();
  if (!real_path.empty()) {
    real = vlbias::read_npy_matrix(real_path);
    fake = vlbias::read_npy_matrix(fake_path);
  } else {
    real = make_features(n, d, 11, 0.0f);
    fake = make_features(n_fake, d, 12, 0.01f);
  }
  const double generate_seconds = now() - g0;
  if (!write_real.empty()) vlbias::write_npy(write_real, real);
  if (!write_fake.empty()) vlbias::write_npy(write_fake, fake);

  vlbias::PrdcOptions o;
  o.k = k;
  const double t0 = now();
  const vlbias::PrdcResult r = vlbias::prdc(real, fake, o);
  const double seconds = now() - t0;
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  const double nr = static_cast<double>(real.rows), nf = static_cast<double>(fake.rows);
  const double flops = 2.0 * static_cast<double>(real.cols) * (nr * nr + nf * nf + nr * nf);
  nlohmann::ordered_json out{{"bench", "prdc"},
                             {"n_real", real.rows},
                             {"n_fake", fake.rows},
                             {"dim", real.cols},
                             {"k", k},
                             {"threads", vlbias::thread_count()},
                             {"seconds", seconds},
                             {"generate_seconds", generate_seconds},
                             {"dense_gflop", flops / 1e9},
                             {"gflops_dense_equivalent", flops / seconds / 1e9},
                             {"peak_rss_mb", static_cast<double>(ru.ru_maxrss) / 1024.0},
                             {"precision", r.precision},
                             {"recall", r.recall},
                             {"density", r.density},
                             {"coverage", r.coverage}};
  if (ceiling) {
    const double c = sgemm_ceiling(real.cols);
    out["ceiling_gflops"] = c;
    out["fraction_of_ceiling"] = flops / seconds / 1e9 / c;
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
