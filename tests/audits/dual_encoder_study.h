#pragma once
// A synthetic CausalFace-like study for end-to-end tests of `vlbias audit` and for
// bench/bench_audit.cpp (the one copy of the generator; header-only so both can use it).
//
// write_synthetic_study(dir, options) writes into `dir`:
//   images.csv   id, race (Asian | Black | White), gender (female | male), age (1..10),
//                smiling (1..5), lighting (even | warm | dim), pose (front | left | right),
//                seed (the pseudo-identity, 1..seeds)
//   images.npy   (images, dim) float32
//   prompts.csv  the manifest: vlbias::social_perception_prompts() or trait_pair_prompts()
//   prompts.npy  (prompts, dim) float32, row i = manifest row i
//   spec.yaml    an audit spec over these files (synthetic_spec_yaml)
//
// The embedding model (every direction a random unit vector from vlbias::Rng, so the
// files are a deterministic function of the options):
//   prompt(word, template) = normalize(0.6 P + 0.4 T_template + 0.7 W_word)
//   neutral(template)      = normalize(0.6 P + 0.4 T_template)
//   image = F + 0.5 P + identity I_seed + noise N / sqrt(dim)
//           + ordinal_effect ((age - 5.5) / 4.5 A + (smiling - 3) / 2 S)
//           + effect D                       (only for images of the planted group)
// with P the shared "person" component, T one component per template, W one per
// distinct word, F the shared face direction, I one per pseudo-identity, N standard
// normal noise, A and S the word components W of the first and the last attribute
// prompt outside the planted dimension (social-perception: the first warmth word and
// the last communion- word; trait pairs: "happy" and "dishonest"), so trends have a
// slope to find, and D the planted direction: the normalized mean word
// component W of the planted dimension's prompts (social-perception: "competence"),
// which raises cos with those prompts and leaves the neutral prompt alone; for trait
// pairs the mean W of the "+" prompts minus that of the "-" prompts of the planted pair
// ("smart/dumb"). Groups are balanced: every (seed, race, gender) cell gets the
// same factor values, so with effect 0 no group differs from another but by noise.
//
// Designs: OneFactorAtATime (as CausalFace: a baseline image, age 5, smiling 3, first
// lighting and pose, and variations of one factor at a time: ages 1..10, smiling
// 1,2,4,5, the two other lightings and poses; 18 images per cell, so AbsDiff finds
// pairs that differ in one factor only) or Random (images_per_cell draws per cell).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vlbias/core/error.h"
#include "vlbias/core/matrix.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/metrics/prompt_sets.h"

namespace vlbias::synthetic {

enum class StudyKind { SocialPerception, TraitPairs };
enum class Design { OneFactorAtATime, Random };

struct StudyOptions {
  StudyKind kind = StudyKind::SocialPerception;
  Design design = Design::OneFactorAtATime;
  std::size_t seeds = 10;           // pseudo-identities; each appears in all 6 groups
  std::size_t images_per_cell = 6;  // Random design: images per (seed, race, gender)
  std::size_t dim = 48;
  double effect = 0.0;  // length of the planted shift (F has length 1)
  // Images matching every (column, value) get the planted shift.
  std::vector<std::pair<std::string, std::string>> planted_group = {{"race", "Black"}};
  // "" = "competence" (social-perception) or "smart/dumb" (trait-pairs).
  std::string planted_dimension;
  double noise = 1.0;
  double identity = 0.5;
  double ordinal_effect = 0.3;
  std::uint64_t seed = 1;  // of the generator
  TemplateSet templates = TemplateSet::Paper;

  // The spec written alongside.
  std::uint64_t audit_seed = 7;
  std::size_t permutations = 2000;
  std::size_t bootstrap = 200;
  std::size_t absdiff_pairs = 500;
  std::size_t ranking_k = 1000;
  std::vector<std::vector<std::string>> groupings = {{"race"}, {"gender"}};
};

struct WrittenStudy {
  std::filesystem::path dir, spec, images_csv, images_npy, prompts_csv, prompts_npy;
  std::size_t images = 0;
  std::size_t prompts = 0;
};

namespace detail {

inline double normal(Rng& rng) {
  // Box-Muller; 1 - u01 is in (0, 1], so the log is finite.
  const double u = 1.0 - rng.uniform01();
  const double v = rng.uniform01();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
}

inline std::vector<double> unit_vector(Rng& rng, std::size_t dim) {
  std::vector<double> x(dim);
  double norm = 0.0;
  for (double& v : x) {
    v = normal(rng);
    norm += v * v;
  }
  norm = std::sqrt(norm);
  for (double& v : x) v /= norm;
  return x;
}

inline void normalize(std::vector<double>& x) {
  double norm = 0.0;
  for (double v : x) norm += v * v;
  norm = std::sqrt(norm);
  VLBIAS_CHECK(norm > 0.0, InternalError, "synthetic study: a zero direction");
  for (double& v : x) v /= norm;
}

inline void axpy(double a, const std::vector<double>& x, std::vector<double>& y) {
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += a * x[i];
}

inline std::string flow_list(const std::vector<std::string>& items) {
  return fmt::format("[{}]", fmt::join(items, ", "));
}

}  // namespace detail

// The audit spec (YAML) for a study written with `o` into the spec's folder.
inline std::string synthetic_spec_yaml(const StudyOptions& o) {
  std::vector<std::string> groupings;
  for (const auto& g : o.groupings) {
    groupings.push_back(g.size() == 1 ? g[0] : detail::flow_list(g));
  }
  const bool social = o.kind == StudyKind::SocialPerception;
  std::string y;
  y += "version: 1\n";
  y += fmt::format("kind: {}\n", social ? "social-perception" : "trait-pairs");
  y += fmt::format("seed: {}\n", o.audit_seed);
  y += "min_group_size: 10\n";
  y += "images:\n  table: images.csv\n  embeddings: images.npy\n";
  y += "prompts:\n  manifest: prompts.csv\n  embeddings: prompts.npy\n";
  y += "factors:\n  groups: [race, gender]\n";
  y += "  ordinal: {age: 1.1, smiling: 1.1}\n";
  y += "  categorical: [lighting, pose, seed]\n";
  y += "analyses:\n";
  y += fmt::format("  association: {{bootstrap: {}, ci: 0.95}}\n", o.bootstrap);
  y += fmt::format("  scweat: {{p_test: permutation, permutations: {}, groupings: {}}}\n",
                   o.permutations, detail::flow_list(groupings));
  if (social) {
    y += fmt::format("  markedness: {{bootstrap: {}}}\n", o.bootstrap);
    y += fmt::format("  ranking: {{k: {}}}\n", o.ranking_k);
    y += fmt::format("  absdiff: {{pairs: {}}}\n", o.absdiff_pairs);
    y += "  trends: {x: [age, smiling], fit_to: means, degree: 2}\n";
    y += "  ellipses: {points_by: age, k_sigma: 2}\n";
  } else {
    y += fmt::format(
        "  confidence: {{scale: raw, bootstrap: {}, ci: 0.95, across: race, within: gender}}\n",
        o.bootstrap);
  }
  return y;
}

inline WrittenStudy write_synthetic_study(const std::filesystem::path& dir, const StudyOptions& o) {
  using detail::axpy;
  VLBIAS_CHECK(o.dim >= 2 && o.seeds >= 1, UsageError,
               "synthetic study: need dim >= 2 and seeds >= 1 (got {} and {})", o.dim, o.seeds);
  std::filesystem::create_directories(dir);
  WrittenStudy w;
  w.dir = dir;
  w.spec = dir / "spec.yaml";
  w.images_csv = dir / "images.csv";
  w.images_npy = dir / "images.npy";
  w.prompts_csv = dir / "prompts.csv";
  w.prompts_npy = dir / "prompts.npy";
  const bool social = o.kind == StudyKind::SocialPerception;
  const std::size_t dim = o.dim;

  // ---------------------------------------------------------------- prompts
  Table manifest;
  if (social) {
    SocialPerceptionPromptOptions po;
    po.template_set = o.templates;
    manifest = social_perception_prompts(po);
  } else {
    manifest = trait_pair_prompts();
  }
  write_csv(manifest, w.prompts_csv.string());
  w.prompts = manifest.rows;

  Rng directions(o.seed, 1);
  const std::vector<double> person = detail::unit_vector(directions, dim);
  const std::vector<double> face = detail::unit_vector(directions, dim);
  const Column& word_col = manifest.column("word");
  const Column& template_col = manifest.column("template");
  const Column& dimension_col = manifest.column("dimension");
  const Column& valence_col = manifest.column("valence");
  const Column& role_col = manifest.column("role");
  // Components in first-appearance order of the manifest, so they do not depend on
  // how a std::map orders its keys.
  std::map<std::string, std::vector<double>> word_vec, template_vec;
  for (std::size_t r = 0; r < manifest.rows; ++r) {
    const std::string t = template_col.text(r), word = word_col.text(r);
    if (!template_vec.count(t)) template_vec[t] = detail::unit_vector(directions, dim);
    if (!word.empty() && !word_vec.count(word)) {
      word_vec[word] = detail::unit_vector(directions, dim);
    }
  }
  Matrix prompts(manifest.rows, dim);
  std::vector<std::vector<double>> prompt_rows(manifest.rows);
  for (std::size_t r = 0; r < manifest.rows; ++r) {
    std::vector<double> p(dim, 0.0);
    axpy(0.6, person, p);
    axpy(0.4, template_vec[template_col.text(r)], p);
    const std::string word = word_col.text(r);
    if (!word.empty()) axpy(0.7, word_vec[word], p);
    detail::normalize(p);
    for (std::size_t j = 0; j < dim; ++j) prompts.at(r, j) = static_cast<float>(p[j]);
    prompt_rows[r] = std::move(p);
  }
  write_npy(w.prompts_npy, prompts);

  // The planted direction and the two ordinal directions.
  const std::string planted =
      !o.planted_dimension.empty() ? o.planted_dimension : (social ? "competence" : "smart/dumb");
  std::vector<double> plus(dim, 0.0), minus(dim, 0.0);
  std::size_t n_plus = 0, n_minus = 0;
  std::vector<std::string> other_words;  // attribute words of other dimensions, in order
  for (std::size_t r = 0; r < manifest.rows; ++r) {
    const std::string role = role_col.text(r), d = dimension_col.text(r), v = valence_col.text(r);
    if (role != "attribute") continue;
    if (d == planted && v == "+") {
      axpy(1.0, word_vec[word_col.text(r)], plus);
      ++n_plus;
    } else if (d == planted && v == "-") {
      axpy(1.0, word_vec[word_col.text(r)], minus);
      ++n_minus;
    } else if (d != planted) {
      other_words.push_back(word_col.text(r));
    }
  }
  VLBIAS_CHECK(n_plus > 0 && (social || n_minus > 0) && other_words.size() >= 2, UsageError,
               "synthetic study: the manifest has no prompts for planted dimension '{}'", planted);
  std::vector<double> planted_dir(dim, 0.0);
  axpy(1.0 / static_cast<double>(n_plus), plus, planted_dir);
  if (n_minus > 0) axpy(-1.0 / static_cast<double>(n_minus), minus, planted_dir);
  detail::normalize(planted_dir);
  const std::vector<double>& age_dir = word_vec[other_words.front()];
  const std::vector<double>& smile_dir = word_vec[other_words.back()];

  // ----------------------------------------------------------------- images
  struct Levels {
    double age, smiling;
    int lighting, pose;
  };
  std::vector<Levels> ofat;
  for (int a = 1; a <= 10; ++a) ofat.push_back({static_cast<double>(a), 3.0, 0, 0});
  for (int s : {1, 2, 4, 5}) ofat.push_back({5.0, static_cast<double>(s), 0, 0});
  for (int l : {1, 2}) ofat.push_back({5.0, 3.0, l, 0});
  for (int p : {1, 2}) ofat.push_back({5.0, 3.0, 0, p});

  const char* races[] = {"Asian", "Black", "White"};
  const char* genders[] = {"female", "male"};
  const char* lightings[] = {"even", "warm", "dim"};
  const char* poses[] = {"front", "left", "right"};
  std::vector<std::string> id, race, gender, lighting, pose;
  std::vector<double> age, smiling, seed_col;
  std::vector<std::vector<double>> embeddings;
  Rng factors(o.seed, 2), noise(o.seed, 3), identities(o.seed, 4);
  for (std::size_t s = 0; s < o.seeds; ++s) {
    const std::vector<double> identity = detail::unit_vector(identities, dim);
    std::vector<Levels> cell = ofat;
    if (o.design == Design::Random) {
      cell.clear();
      for (std::size_t j = 0; j < o.images_per_cell; ++j) {
        cell.push_back({static_cast<double>(1 + factors.uniform_index(10)),
                        static_cast<double>(1 + factors.uniform_index(5)),
                        static_cast<int>(factors.uniform_index(3)),
                        static_cast<int>(factors.uniform_index(3))});
      }
    }
    for (const char* r : races) {
      for (const char* g : genders) {
        bool in_planted = true;
        for (const auto& [column, value] : o.planted_group) {
          const std::string v = column == "race" ? r : column == "gender" ? g : "";
          VLBIAS_CHECK(column == "race" || column == "gender", UsageError,
                       "synthetic study: planted_group may name race and gender, not '{}'", column);
          in_planted = in_planted && v == value;
        }
        for (const Levels& l : cell) {
          std::vector<double> x(dim, 0.0);
          axpy(1.0, face, x);
          axpy(0.5, person, x);
          axpy(o.identity, identity, x);
          for (double& v : x) v += o.noise * detail::normal(noise) / std::sqrt(double(dim));
          axpy(o.ordinal_effect * (l.age - 5.5) / 4.5, age_dir, x);
          axpy(o.ordinal_effect * (l.smiling - 3.0) / 2.0, smile_dir, x);
          if (in_planted) axpy(o.effect, planted_dir, x);
          id.push_back(fmt::format("img{:06d}", id.size() + 1));
          race.push_back(r);
          gender.push_back(g);
          age.push_back(l.age);
          smiling.push_back(l.smiling);
          lighting.push_back(lightings[l.lighting]);
          pose.push_back(poses[l.pose]);
          seed_col.push_back(static_cast<double>(s + 1));
          embeddings.push_back(std::move(x));
        }
      }
    }
  }
  Table images;
  images.source = w.images_csv.string();
  images.rows = id.size();
  add_string_column(images, "id", id);
  add_string_column(images, "race", race);
  add_string_column(images, "gender", gender);
  add_numeric_column(images, "age", age);
  add_numeric_column(images, "smiling", smiling);
  add_string_column(images, "lighting", lighting);
  add_string_column(images, "pose", pose);
  add_numeric_column(images, "seed", seed_col);
  write_csv(images, w.images_csv.string());
  Matrix m(embeddings.size(), dim);
  for (std::size_t i = 0; i < embeddings.size(); ++i) {
    for (std::size_t j = 0; j < dim; ++j) m.at(i, j) = static_cast<float>(embeddings[i][j]);
  }
  write_npy(w.images_npy, m);
  w.images = m.rows;

  std::ofstream spec(w.spec, std::ios::binary);
  spec << synthetic_spec_yaml(o);
  VLBIAS_CHECK(spec.good(), InputError, "synthetic study: cannot write {}", w.spec.string());
  return w;
}

}  // namespace vlbias::synthetic
