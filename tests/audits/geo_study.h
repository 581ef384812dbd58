#pragma once
// A synthetic DIG-In-like study for end-to-end tests of `vlbias audit` with kind:
// geo-diversity and for bench/bench_geo.cpp (header-only, the one copy of the generator).
//
// write_geo_study(dir, options) writes into `dir`:
//   real.csv / real.npy          region, object; features (real_per_cell per (object, region))
//   generated.csv / .npy         prompt, form, region, country, object; features; every form:
//                                object-region: per_cell per (object, region), labelled with
//                                  the generator's region names ("the Americas", ...);
//                                object-country: per_cell per (object, region), two countries
//                                  per region;
//                                object: pool_per_object per object, no region.
//   generated_clip.npy           CLIP-like image embeddings (clip_dim)
//   objects.csv / objects.npy    object, text; the text embedding of "{object}"
//   spec.yaml                    a geo-diversity spec over these files (with region aliases)
//
// The feature model (directions are Gaussian vectors from vlbias::Rng; deterministic):
//   real     = O_object + 0.8 R_region + N                     (N standard normal, dim d)
//   generated, object-region and object-country forms: the same distribution, except in the
//            planted region (precision_effect > 0): O + 0.8 R + precision_effect U +
//            0.35 N, a shifted and collapsed ("stereotyped") cloud: lower precision and
//            coverage there.
//   generated, object form: O + 0.8 R_r + N with r uniform over the regions.
//   clip     = a_i T_object + 0.6 M (M standard normal, clip_dim), a_i = 1, except that in the
//            planted consistency region a fraction consistency_effect of the object-region
//            generations have a_i = 0 (the object is missing): its 10th percentile drops.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "vlbias/core/matrix.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias::synthetic {

struct GeoStudyOptions {
  std::vector<std::string> regions = {"Africa", "Americas", "EastAsia", "Europe"};
  // The generator's spelling of each region (aliased back in the spec).
  std::vector<std::string> prompt_regions = {"Africa", "the Americas", "East Asia", "Europe"};
  std::vector<std::string> objects = {"bag", "car", "dog", "stove", "toothbrush"};
  std::size_t dim = 16;
  std::size_t clip_dim = 12;
  std::size_t real_per_cell = 40;
  std::size_t per_cell = 40;          // generated, per (object, region), region and country forms
  std::size_t pool_per_object = 200;  // generated, object form
  std::string planted_region = "Africa";
  double precision_effect = 1.5;  // 0: no planted realism/diversity gap
  std::string consistency_region = "Europe";
  double consistency_effect = 0.4;  // share of object-missing generations there (0: none)
  std::uint64_t seed = 5;
  std::uint64_t audit_seed = 3;
  std::size_t bootstrap = 300;
  bool distribution = true;
};

inline double gaussian(Rng& rng) {
  // Box-Muller; 1 - u keeps the log finite.
  const double u = 1.0 - rng.uniform01(), v = rng.uniform01();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
}

inline std::vector<float> gaussian_vector(Rng& rng, std::size_t d, double scale = 1.0) {
  std::vector<float> v(d);
  for (float& x : v) x = static_cast<float>(scale * gaussian(rng));
  return v;
}

inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

inline std::string geo_spec_yaml(const GeoStudyOptions& o) {
  std::string aliases;
  for (std::size_t r = 0; r < o.regions.size(); ++r) {
    if (o.prompt_regions[r] != o.regions[r]) {
      aliases += fmt::format("    \"{}\": {}\n", o.prompt_regions[r], o.regions[r]);
    }
  }
  return fmt::format(
      "version: 1\n"
      "kind: geo-diversity\n"
      "seed: {}\n"
      "min_group_size: 10\n"
      "real:\n"
      "  table: real.csv\n"
      "  features: real.npy\n"
      "generated:\n"
      "  table: generated.csv\n"
      "  features: generated.npy\n"
      "  clip: generated_clip.npy\n"
      "objects:\n"
      "  table: objects.csv\n"
      "  embeddings: objects.npy\n"
      "aliases:\n"
      "  region:\n{}"
      "analyses:\n"
      "  region: {{k: 3, bootstrap: {}}}\n"
      "  object_region: {{k: 3, bootstrap: {}}}\n"
      "  consistency: {{bootstrap: {}}}\n"
      "  distribution: {}\n",
      o.audit_seed, aliases, o.bootstrap, o.bootstrap, o.bootstrap,
      o.distribution ? "{fid: true, vendi: true, kid: true, kid_subsets: 20, kid_subset_size: 50}"
                     : "false");
}

inline void write_geo_study(const std::filesystem::path& dir, const GeoStudyOptions& o) {
  std::filesystem::create_directories(dir);
  Rng dirs(o.seed, 0);
  std::vector<std::vector<float>> object_dir, region_dir, text_dir;
  for (std::size_t i = 0; i < o.objects.size(); ++i) {
    object_dir.push_back(gaussian_vector(dirs, o.dim, 1.5));
  }
  for (std::size_t i = 0; i < o.regions.size(); ++i) {
    region_dir.push_back(gaussian_vector(dirs, o.dim, 0.8));
  }
  const std::vector<float> planted = gaussian_vector(dirs, o.dim, 1.0 / std::sqrt(o.dim));
  for (std::size_t i = 0; i < o.objects.size(); ++i) {
    text_dir.push_back(gaussian_vector(dirs, o.clip_dim, 1.0 / std::sqrt(o.clip_dim)));
  }
  Rng noise(o.seed, 1);
  const auto feature = [&](std::size_t obj, std::size_t reg, double shift, double spread) {
    std::vector<float> v(o.dim);
    for (std::size_t k = 0; k < o.dim; ++k) {
      v[k] = static_cast<float>(object_dir[obj][k] + region_dir[reg][k] +
                                shift * planted[k] * std::sqrt(static_cast<double>(o.dim)) +
                                spread * gaussian(noise));
    }
    return v;
  };
  // Real.
  std::string real_csv = "region,object\n";
  std::vector<float> real_data;
  for (std::size_t obj = 0; obj < o.objects.size(); ++obj) {
    for (std::size_t reg = 0; reg < o.regions.size(); ++reg) {
      for (std::size_t i = 0; i < o.real_per_cell; ++i) {
        real_csv += o.regions[reg] + "," + o.objects[obj] + "\n";
        const auto v = feature(obj, reg, 0.0, 1.0);
        real_data.insert(real_data.end(), v.begin(), v.end());
      }
    }
  }
  write_text(dir / "real.csv", real_csv);
  write_npy(dir / "real.npy", MatrixView(real_data.data(), real_data.size() / o.dim, o.dim));
  // Generated.
  std::string gen_csv = "prompt,form,region,country,object\n";
  std::vector<float> gen_data, clip_data;
  Rng clip_noise(o.seed, 2);
  const auto clip = [&](std::size_t obj, bool missing) {
    for (std::size_t k = 0; k < o.clip_dim; ++k) {
      clip_data.push_back(static_cast<float>((missing ? 0.0 : text_dir[obj][k]) +
                                             0.6 / std::sqrt(o.clip_dim) * gaussian(clip_noise)));
    }
  };
  for (const std::string form : {"object-region", "object-country"}) {
    for (std::size_t obj = 0; obj < o.objects.size(); ++obj) {
      for (std::size_t reg = 0; reg < o.regions.size(); ++reg) {
        const bool planted_here = o.regions[reg] == o.planted_region && o.precision_effect > 0;
        for (std::size_t i = 0; i < o.per_cell; ++i) {
          const std::string country = fmt::format("{}-country-{}", o.regions[reg], i % 2);
          const std::string place = form == "object-region" ? o.prompt_regions[reg] : country;
          gen_csv += fmt::format("{} in {},{},{},{},{}\n", o.objects[obj], place, form,
                                 o.prompt_regions[reg], form == "object-country" ? country : "",
                                 o.objects[obj]);
          const auto v = planted_here ? feature(obj, reg, o.precision_effect, 0.35)
                                      : feature(obj, reg, 0.0, 1.0);
          gen_data.insert(gen_data.end(), v.begin(), v.end());
          const bool missing = form == "object-region" && o.regions[reg] == o.consistency_region &&
                               static_cast<double>(i) < o.consistency_effect * o.per_cell;
          clip(obj, missing);
        }
      }
    }
  }
  Rng pick(o.seed, 3);
  for (std::size_t obj = 0; obj < o.objects.size(); ++obj) {
    for (std::size_t i = 0; i < o.pool_per_object; ++i) {
      gen_csv += fmt::format("{},object,,,{}\n", o.objects[obj], o.objects[obj]);
      const auto v = feature(obj, pick.uniform_index(o.regions.size()), 0.0, 1.0);
      gen_data.insert(gen_data.end(), v.begin(), v.end());
      clip(obj, false);
    }
  }
  write_text(dir / "generated.csv", gen_csv);
  write_npy(dir / "generated.npy", MatrixView(gen_data.data(), gen_data.size() / o.dim, o.dim));
  write_npy(dir / "generated_clip.npy",
            MatrixView(clip_data.data(), clip_data.size() / o.clip_dim, o.clip_dim));
  std::string objects_csv = "object,text\n";
  std::vector<float> text_data;
  for (std::size_t obj = 0; obj < o.objects.size(); ++obj) {
    objects_csv += o.objects[obj] + "," + o.objects[obj] + "\n";
    text_data.insert(text_data.end(), text_dir[obj].begin(), text_dir[obj].end());
  }
  write_text(dir / "objects.csv", objects_csv);
  write_npy(dir / "objects.npy", MatrixView(text_data.data(), o.objects.size(), o.clip_dim));
  write_text(dir / "spec.yaml", geo_spec_yaml(o));
}

}  // namespace vlbias::synthetic
