// `vlbias metric prdc|fid|kid|vendi`: realism, diversity and distribution distances of
// generated features against real ones (docs/methods.md#fid, #kid, #vendi; prdc.h,
// distribution_metrics.h).
#include <CLI/CLI.hpp>
#include <cmath>
#include <limits>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/encode/jobs/feature_cache.h"
#include "vlbias/encode/models/image_model.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/embeddings.h"
#include "vlbias/metrics/distribution_bootstrap.h"
#include "vlbias/metrics/distribution_metrics.h"
#include "vlbias/metrics/prdc.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/metric_json.h"

namespace vlbias::cli_internal {

namespace {

// The two feature sets every comparison reads, with their options: feature files, or image sets
// and a model whose features are computed (and kept beside the images: feature_cache.h).
struct PairArgs {
  std::string real, fake, real_tensor, fake_tensor, out;
  std::string real_images, fake_images, model, column, preprocess;
  std::size_t image_size = 0;
  bool exif_transpose = false;
};

// Help of --exif-transpose, shared by the image-set options.
constexpr const char* kExifHelp =
    "Rotate / flip each image by its EXIF orientation before the model sees it\n"
    "(PIL.ImageOps.exif_transpose; off by default, as the FID tools read pixels as stored)";

void add_pair_options(CLI::App* cmd, PairArgs& a) {
  cmd->add_option("--real", a.real,
                  "Real (reference) features: .npy or .safetensors, rows = images");
  cmd->add_option("--fake", a.fake, "Generated features, same columns as --real");
  cmd->add_option("--real-tensor", a.real_tensor, "Tensor name in a .safetensors --real");
  cmd->add_option("--fake-tensor", a.fake_tensor, "Tensor name in a .safetensors --fake");
  cmd->add_option("--real-images", a.real_images,
                  "Real images instead of --real: a table with a path column or a folder;\n"
                  "their --model features are computed once and kept beside them");
  cmd->add_option("--fake-images", a.fake_images, "Generated images instead of --fake");
  cmd->add_option("--model", a.model,
                  "Feature model for --real-images / --fake-images: the FID Inception-v3's\n"
                  "weights, a DINOv2 folder or a CLIP folder (as vlbias features reads)");
  cmd->add_option("--column", a.column, "The path column of the image tables (default: path)");
  cmd->add_option("--preprocess", a.preprocess,
                  "Inception: pytorch-fid (default) or clean-fid; DINOv2: processor (default),\n"
                  "dgm-eval or dgm-eval-clean (FD_DINOv2's 224 x 224 without crop)");
  cmd->add_option("--image-size", a.image_size, "DINOv2 input side (default: its config's)");
  cmd->add_flag("--exif-transpose", a.exif_transpose, kExifHelp);
  cmd->add_option("--out", a.out, "Write the JSON here instead of stdout");
}

// --bootstrap / --ci of fid, kid and vendi (distribution_bootstrap.h); their --seed is the
// command's own.
struct BootstrapArgs {
  std::size_t bootstrap = 0;
  double ci = 0.95;
};

void add_bootstrap_options(CLI::App* cmd, BootstrapArgs& b) {
  cmd->add_option("--bootstrap", b.bootstrap,
                  "Resamples of the generated rows for a percentile interval (`ci`; the real\n"
                  "set stays fixed); 0: no interval")
      ->check(resamples_range())
      ->capture_default_str();
  cmd->add_option("--ci", b.ci, "Level of the bootstrap interval, in (0, 1)")
      ->capture_default_str();
}

DistributionBootstrapOptions bootstrap_options(const BootstrapArgs& b, std::uint64_t seed) {
  VLBIAS_CHECK(b.ci > 0.0 && b.ci < 1.0, UsageError, "--ci must be in (0, 1), got {}.", b.ci);
  DistributionBootstrapOptions o;
  o.resamples = b.bootstrap;
  o.level = b.ci;
  o.seed = seed;
  return o;
}

struct LoadedPair {
  Provenance provenance;
  Matrix real, fake;
  Json features = nullptr;  // how image features were obtained, when they were
};

// The features of one image set, with what the JSON says about them; `model` receives the
// model's description (the same for both sets).
Matrix image_set_features(const PairArgs& a, const std::string& images, Json& about, Json& model) {
  FeatureRequest r;
  r.images = images;
  r.column = a.column;
  r.model = a.model;
  set_image_preprocess(r.options, detect_image_model(r.model), a.preprocess);
  r.options.image_size = a.image_size;
  r.exif_transpose = a.exif_transpose;
  ImageFeatures f = image_features(r);
  about.push_back(Json{{"images", images},
                       {"items", f.items},
                       {"encoded", f.features.rows},
                       {"cache", f.path.string()},
                       {"from_cache", f.cached}});
  model = std::move(f.model);
  return std::move(f.features);
}

LoadedPair load_pair(const PairArgs& a, const std::string& command) {
  LoadedPair p;
  p.provenance.command = command;
  const bool images = !a.model.empty();
  VLBIAS_CHECK(
      images
          ? (!a.real_images.empty() && !a.fake_images.empty() && a.real.empty() && a.fake.empty())
          : (!a.real.empty() && !a.fake.empty() && a.real_images.empty() && a.fake_images.empty()),
      UsageError,
      "{} compares --real and --fake feature files, or --real-images and --fake-images "
      "with a --model that computes their features; not a mix.",
      command);
  if (images) {
    // Image tables are hashed as inputs; folders are not files (their images' hashes key the
    // feature cache instead).
    for (const std::string& set : {a.real_images, a.fake_images}) {
      if (!std::filesystem::is_directory(set)) p.provenance.inputs.push_back(set);
    }
    start_hashing_inputs(p.provenance);
    Json sets = Json::array(), model;
    p.real = image_set_features(a, a.real_images, sets, model);
    p.fake = image_set_features(a, a.fake_images, sets, model);
    p.features =
        Json{{"model", model["model"]}, {"preprocessing", model["preprocessing"]}, {"sets", sets}};
    return p;
  }
  p.provenance.inputs = {a.real, a.fake};
  start_hashing_inputs(p.provenance);
  p.real = read_embeddings(a.real, a.real_tensor);
  p.fake = read_embeddings(a.fake, a.fake_tensor);
  VLBIAS_CHECK(p.real.cols == p.fake.cols, InputError,
               "{} has {} columns but {} has {}; both must come from the same feature extractor.",
               a.real, p.real.cols, a.fake, p.fake.cols);
  return p;
}

// The provenance, and the features' origin when they were computed from images.
void finish_distribution(Json& out, const LoadedPair& p) {
  if (!p.features.is_null()) out["features"] = p.features;
  out["provenance"] = provenance_json(p.provenance);
}

void write_per_sample(const std::string& path, std::size_t rows,
                      const std::vector<std::pair<std::string, std::vector<double>>>& columns) {
  Table t;
  t.source = path;
  t.rows = rows;
  std::vector<double> index(rows);
  for (std::size_t i = 0; i < rows; ++i) index[i] = static_cast<double>(i);
  add_numeric_column(t, "row", index);
  for (const auto& [name, values] : columns) add_numeric_column(t, name, values);
  write_csv(t, path);
}

template <typename T>
std::vector<double> as_doubles(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

void add_prdc(CLI::App& metric) {
  struct Args : PairArgs {
    std::size_t k = 5;
    bool inclusive = false;
    std::string per_real, per_fake;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = metric.add_subcommand(
      "prdc",
      "Precision, recall, density and coverage of generated features against real ones\n"
      "(exact k-NN radii; DIG-In realism = precision, diversity = coverage)");
  add_pair_options(cmd, *args);
  cmd->add_option("--k", args->k, "Nearest neighbour defining each ball (DIG-In: 3; prdc: 5)")
      ->capture_default_str();
  cmd->add_flag("--inclusive", args->inclusive,
                "A point on a ball's boundary is inside (d <= r); default strict d < r");
  cmd->add_option("--per-real", args->per_real,
                  "CSV per real row: radius, covered, in_generated_manifold");
  cmd->add_option("--per-fake", args->per_fake,
                  "CSV per generated row: radius, real_balls (balls containing it), inside");
  cmd->callback([args] {
    LoadedPair p = load_pair(*args, "metric prdc");
    PrdcOptions o;
    o.k = args->k;
    o.rule = args->inclusive ? BallRule::Inclusive : BallRule::Strict;
    o.per_sample = !args->per_real.empty() || !args->per_fake.empty();
    o.progress = true;
    const PrdcResult r = prdc(p.real, p.fake, o);
    Json out = prdc_json(r, p.real.cols);
    if (!args->per_real.empty()) {
      std::vector<double> in_fake(r.n_real, stats::kNaN);
      if (!r.real_in_fake_balls.empty()) in_fake = as_doubles(r.real_in_fake_balls);
      write_per_sample(args->per_real, r.n_real,
                       {{"radius", r.real_radius},
                        {"covered", as_doubles(r.real_covered)},
                        {"in_generated_manifold", in_fake}});
    }
    if (!args->per_fake.empty()) {
      std::vector<double> radius(r.n_fake, stats::kNaN), inside(r.n_fake);
      if (!r.fake_radius.empty()) radius = r.fake_radius;
      for (std::size_t j = 0; j < r.n_fake; ++j) inside[j] = r.fake_ball_count[j] > 0 ? 1 : 0;
      write_per_sample(
          args->per_fake, r.n_fake,
          {{"radius", radius}, {"real_balls", as_doubles(r.fake_ball_count)}, {"inside", inside}});
    }
    p.provenance.parameters = Json{{"k", r.k}, {"inclusive", args->inclusive}};
    finish_distribution(out, p);
    write_json(out, args->out);
  });
}

void add_fid(CLI::App& metric) {
  struct Args : PairArgs {
    BootstrapArgs b;
    std::uint64_t seed = 0;
    bool fid_inf = false;
    std::size_t fid_inf_points = 15, fid_inf_min = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = metric.add_subcommand(
      "fid",
      "Frechet distance between Gaussians fitted to real and generated features\n"
      "(trace of the square root from singular values: exact for singular covariances)");
  add_pair_options(cmd, *args);
  add_bootstrap_options(cmd, args->b);
  cmd->add_option("--seed", args->seed, "Seed of the bootstrap and FID_inf draws")
      ->capture_default_str();
  cmd->add_flag("--fid-inf", args->fid_inf,
                "Also FID_inf (Chong & Forsyth 2020): FID on subsets of N generated rows\n"
                "extrapolated linearly in 1 / N to N = infinity");
  cmd->add_option("--fid-inf-points", args->fid_inf_points, "Subset sizes N fitted (>= 2)")
      ->capture_default_str();
  CLI::Option* min_opt = cmd->add_option(
      "--fid-inf-min", args->fid_inf_min,
      "Smallest N (>= 2, below the generated rows; default: a tenth of them, at least 2)");
  cmd->callback([args, min_opt] {
    VLBIAS_CHECK(args->fid_inf || (min_opt->count() == 0), UsageError,
                 "--fid-inf-min goes with --fid-inf.");
    VLBIAS_CHECK(min_opt->count() == 0 || args->fid_inf_min >= 2, UsageError,
                 "--fid-inf-min must be at least 2, got {}.", args->fid_inf_min);
    const DistributionBootstrapOptions bo = bootstrap_options(args->b, args->seed);
    LoadedPair p = load_pair(*args, "metric fid");
    const FidResult r = fid(p.real, p.fake);
    Json out = fid_json(r);
    // The real set's fit, shared by the bootstrap and FID_inf (only when asked for).
    const GaussianFit real =
        args->b.bootstrap > 0 || args->fid_inf ? fit_gaussian(p.real) : GaussianFit{};
    if (args->b.bootstrap > 0) {
      out["ci"] = distribution_ci_json(fid_bootstrap(real, p.fake, bo), "FID");
      p.provenance.parameters["bootstrap"] = args->b.bootstrap;
      p.provenance.parameters["ci"] = args->b.ci;
    }
    if (args->fid_inf) {
      FidInfOptions o;
      o.points = args->fid_inf_points;
      o.min_size = args->fid_inf_min;
      o.seed = args->seed;
      out["fid_inf"] = fid_inf_json(fid_infinity(real, p.fake, o));
      p.provenance.parameters["fid_inf_points"] = o.points;
    }
    if (args->b.bootstrap > 0 || args->fid_inf) p.provenance.seed = args->seed;
    finish_distribution(out, p);
    write_json(out, args->out);
  });
}

// `metric fd --features dinov2`: the Frechet distance named by its feature space, as Stein et al.
// (NeurIPS 2023) name FD_DINOv2; with --model, the model must be of that kind.
void add_fd(CLI::App& metric) {
  struct Args : PairArgs {
    std::string features = "inception";
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = metric.add_subcommand(
      "fd",
      "Frechet distance in a named feature space: --features inception (FID), dinov2\n"
      "(FD_DINOv2, Stein et al. 2023) or clip (FD_CLIP); the same statistic as fid");
  add_pair_options(cmd, *args);
  cmd->add_option("--features", args->features, "inception | dinov2 | clip")
      ->check(CLI::IsMember({"inception", "dinov2", "clip"}))
      ->capture_default_str();
  cmd->callback([args] {
    if (!args->model.empty()) {
      const ImageModelKind kind = detect_image_model(args->model);
      const std::string want = args->features == "inception" ? "inception-v3-fid" : args->features;
      VLBIAS_CHECK(image_model_kind_name(kind) == want, UsageError,
                   "--features {} but --model {} is a {} model.", args->features, args->model,
                   image_model_kind_name(kind));
    }
    LoadedPair p = load_pair(*args, "metric fd");
    const FidResult r = fid(p.real, p.fake);
    Json out = fid_json(r);
    out["metric"] = args->features == "inception" ? "fid" : "fd_" + args->features;
    out["feature_space"] = args->features;
    out["fd"] = out["fid"];
    p.provenance.parameters = Json{{"features", args->features}};
    finish_distribution(out, p);
    write_json(out, args->out);
  });
}

void add_kid(CLI::App& metric) {
  struct Args : PairArgs {
    KidOptions o;
    BootstrapArgs b;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = metric.add_subcommand(
      "kid",
      "Kernel Inception Distance: unbiased MMD^2 with a polynomial kernel, mean and sd over\n"
      "random subsets (clean-fid / torch-fidelity defaults)");
  add_pair_options(cmd, *args);
  cmd->add_option("--subsets", args->o.subsets,
                  "Random subsets (0: one estimate over all rows, no sampling)")
      ->check(resamples_range())
      ->capture_default_str();
  cmd->add_option("--subset-size", args->o.subset_size,
                  "Rows drawn from each set per subset (reduced to the smaller set)")
      ->capture_default_str();
  cmd->add_option("--seed", args->o.seed, "Seed of the subset and bootstrap draws")
      ->capture_default_str();
  add_bootstrap_options(cmd, args->b);
  cmd->add_option("--degree", args->o.degree, "Kernel degree")->capture_default_str();
  cmd->add_option("--gamma", args->o.gamma, "Kernel gamma (0: 1 / dimension)")
      ->capture_default_str();
  cmd->add_option("--coef0", args->o.coef0, "Kernel constant")->capture_default_str();
  cmd->callback([args] {
    const DistributionBootstrapOptions bo = bootstrap_options(args->b, args->o.seed);
    LoadedPair p = load_pair(*args, "metric kid");
    const KidResult r = kid(p.real, p.fake, args->o);
    const double gamma =
        args->o.gamma > 0.0 ? args->o.gamma : 1.0 / static_cast<double>(p.real.cols);
    Json out = kid_json(r, args->o, gamma);
    p.provenance.parameters = Json{{"subsets", args->o.subsets},
                                   {"subset_size", args->o.subset_size},
                                   {"degree", args->o.degree},
                                   {"gamma", gamma},
                                   {"coef0", args->o.coef0}};
    if (args->b.bootstrap > 0) {
      // The interval is of the all-rows estimator, which the subset mean estimates too.
      const DistributionBootstrap bs = kid_bootstrap(p.real, p.fake, args->o, bo);
      out["ci"] = distribution_ci_json(bs, "unbiased MMD^2 over all rows (subsets = 0)");
      out["kid_all_rows"] = json_number(bs.estimate);
      p.provenance.parameters["bootstrap"] = args->b.bootstrap;
      p.provenance.parameters["ci"] = args->b.ci;
    }
    p.provenance.seed = args->o.seed;
    finish_distribution(out, p);
    write_json(out, args->out);
  });
}

// `metric is`: the Inception Score of logits, or of images through the FID Inception's fc layer
// without its bias (the reference code's logits), cached like the other image features.
void add_inception_score(CLI::App& metric) {
  struct Args {
    std::string logits, tensor, images, model, column, preprocess = "pytorch-fid", out;
    std::size_t splits = 10;
    bool exif_transpose = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = metric.add_subcommand(
      "is",
      "Inception Score (Salimans et al. 2016): exp of the mean KL of p(y|x) from p(y), mean\n"
      "and sd over splits, from logits or from images and the FID Inception's weights");
  cmd->add_option("--logits", args->logits,
                  "Logits (.npy/.safetensors, rows = images): `vlbias features --output\n"
                  "logits-unbiased` writes the reference's");
  cmd->add_option("--tensor", args->tensor, "Tensor name in a .safetensors --logits");
  cmd->add_option("--images", args->images,
                  "Images instead: a table with a path column or a folder");
  cmd->add_option("--model", args->model, "The FID Inception's weights (with --images)");
  cmd->add_option("--column", args->column, "The path column of --images (default: path)");
  cmd->add_option("--preprocess", args->preprocess, "pytorch-fid or clean-fid")
      ->capture_default_str();
  cmd->add_option("--splits", args->splits, "Consecutive parts of the images (np.array_split)")
      ->capture_default_str();
  cmd->add_flag("--exif-transpose", args->exif_transpose, kExifHelp);
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  cmd->callback([args] {
    VLBIAS_CHECK(
        args->logits.empty() != args->images.empty() && args->images.empty() == args->model.empty(),
        UsageError, "metric is reads --logits, or --images with --model; not both.");
    Provenance p;
    p.command = "metric is";
    Matrix logits;
    Json about = nullptr;
    if (!args->logits.empty()) {
      p.inputs = {args->logits};
      start_hashing_inputs(p);
      logits = read_embeddings(args->logits, args->tensor);
    } else {
      VLBIAS_CHECK(detect_image_model(args->model) == ImageModelKind::Inception, UsageError,
                   "--model {}: the Inception Score needs the FID Inception-v3's weights.",
                   args->model);
      if (!std::filesystem::is_directory(args->images)) p.inputs = {args->images};
      start_hashing_inputs(p);
      FeatureRequest r;
      r.images = args->images;
      r.column = args->column;
      r.model = args->model;
      r.options.fid = parse_fid_preprocess(args->preprocess);
      r.options.inception_output = InceptionOutput::LogitsUnbiased;
      r.exif_transpose = args->exif_transpose;
      ImageFeatures f = image_features(r);
      about = Json{{"images", args->images},     {"items", f.items},
                   {"encoded", f.features.rows}, {"logits", "fc(pool3) without the fc bias"},
                   {"cache", f.path.string()},   {"from_cache", f.cached}};
      logits = std::move(f.features);
    }
    const InceptionScoreResult r = inception_score(logits, args->splits);
    Json out{{"inception_score", json_number(r.mean)},
             {"sd", json_number(r.sd)},
             {"splits", r.splits},
             {"n", r.n},
             {"classes", r.classes},
             {"split_rule", "consecutive parts, np.array_split"}};
    if (!about.is_null()) out["features"] = about;
    p.parameters = Json{{"splits", args->splits}};
    out["provenance"] = provenance_json(p);
    write_json(out, args->out);
  });
}

double parse_order(const std::string& text) {
  if (text == "inf") return std::numeric_limits<double>::infinity();
  const std::vector<double> v = split_numbers(text, "--q");
  VLBIAS_CHECK(v.size() == 1, UsageError, "--q takes one number (or inf), got '{}'.", text);
  return v[0];
}

void add_vendi(CLI::App& metric) {
  struct Args {
    std::string features, tensor, table, by, q = "1", out;
    BootstrapArgs b;
    std::uint64_t seed = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = metric.add_subcommand(
      "vendi",
      "Vendi score (effective number of distinct items) of features with the cosine kernel,\n"
      "overall and per group");
  cmd->add_option("--features", args->features, "Features (.npy/.safetensors, rows = images)")
      ->required();
  cmd->add_option("--tensor", args->tensor, "Tensor name in a .safetensors file");
  cmd->add_option("--q", args->q, "Order: 1 (Shannon), any q >= 0, or inf")->capture_default_str();
  cmd->add_option("--table", args->table, "Table with one row per feature row, for --by");
  cmd->add_option("--by", args->by, "Columns of --table: a score per group too");
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  add_bootstrap_options(cmd, args->b);
  cmd->add_option("--seed", args->seed, "Seed of the bootstrap")->capture_default_str();
  cmd->callback([args] {
    const DistributionBootstrapOptions bo = bootstrap_options(args->b, args->seed);
    VLBIAS_CHECK(args->table.empty() == args->by.empty(), UsageError,
                 "--table and --by go together (a score per group of the table's rows).");
    const double q = parse_order(args->q);
    Provenance p;
    p.command = "metric vendi";
    p.inputs = {args->features};
    if (!args->table.empty()) p.inputs.push_back(args->table);
    start_hashing_inputs(p);
    const Matrix x = read_embeddings(args->features, args->tensor);
    const VendiResult r = vendi(x, q);
    Json out = vendi_json(r, q);
    const std::string statistic = fmt::format("Vendi score (q = {})", args->q);
    if (args->b.bootstrap > 0) {
      out["ci"] = distribution_ci_json(vendi_bootstrap(x, q, bo), statistic);
      p.parameters["bootstrap"] = args->b.bootstrap;
      p.parameters["ci"] = args->b.ci;
      p.seed = args->seed;
    }
    if (!args->by.empty()) {
      const Table table = read_table(args->table);
      VLBIAS_CHECK(table.rows == x.rows, InputError,
                   "{} has {} rows but {} has {} feature rows; expected one row per feature row.",
                   table.source, table.rows, args->features, x.rows);
      const std::vector<std::string> by = split_list(args->by, "--by");
      const Grouping g = group_by(table, by);
      std::vector<std::vector<std::uint32_t>> members(g.size());
      for (std::size_t i = 0; i < x.rows; ++i) {
        if (g.group_of_row[i] != Grouping::kNoGroup) {
          members[g.group_of_row[i]].push_back(static_cast<std::uint32_t>(i));
        }
      }
      Json groups = Json::array();
      for (std::size_t k = 0; k < g.size(); ++k) {
        const Matrix gx = select_rows(x, members[k]);
        const VendiResult gr = vendi(gx, q);
        Json gj{{"group", key_json(by, g.keys[k])},
                {"n", gr.n},
                {"vendi", json_number(gr.score)},
                {"rank", gr.rank}};
        if (args->b.bootstrap > 0) {
          // Each group resampled on its own stream (derive_seed), as the other per-group
          // intervals.
          DistributionBootstrapOptions go = bo;
          go.seed = derive_seed(args->seed, k + 1);
          if (gx.rows >= 2) {
            gj["ci"] = distribution_ci_json(vendi_bootstrap(gx, q, go), statistic);
          } else {
            gj["ci_note"] = "one row: no bootstrap interval";
          }
        }
        groups.push_back(gj);
      }
      out["groups"] = groups;
      if (g.rows_with_missing_key > 0) out["rows_with_missing_key"] = g.rows_with_missing_key;
      p.parameters["by"] = args->by;
    }
    p.parameters["q"] = args->q;
    out["provenance"] = provenance_json(p);
    write_json(out, args->out);
  });
}

}  // namespace

void add_distribution_metrics(CLI::App& metric) {
  add_prdc(metric);
  add_fid(metric);
  add_fd(metric);
  add_kid(metric);
  add_inception_score(metric);
  add_vendi(metric);
}

}  // namespace vlbias::cli_internal
