// Image features computed once per content and model, kept beside the images (see
// include/vlbias/encode/feature_cache.h).
#include "vlbias/encode/feature_cache.h"

#include <unistd.h>

#include <random>

#include "encode_job_checkpoint.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/atomic_file.h"
#include "vlbias/io/npy.h"
#include "vlbias/io/table.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

EncodeJobOptions job_options(const FeatureRequest& r) {
  EncodeJobOptions o;
  o.kind = EncodeKind::Images;
  o.model_dir = r.model;
  o.input = r.images;
  o.column = r.column;
  o.image_root = r.image_root;
  o.normalize = false;
  o.fail_on_error = r.require_all;
  o.exif_transpose = r.exif_transpose;
  o.encoder = r.options.clip;
  o.fid_preprocess = r.options.fid;
  o.inception_output = r.options.inception_output;
  o.image_size = r.options.image_size;
  o.dinov2_positions = r.options.dinov2_positions;
  o.dinov2_resize = r.options.dinov2_resize;
  return o;
}

// SHA-256 of every image's bytes, in row order, as one string ("missing" / "unreadable" for
// rows without one: those images fail in the job and are named there).
std::string content_key(const encode_internal::Items& items) {
  std::vector<std::string> hashes(items.values.size());
  parallel_for(items.values.size(), [&](std::size_t i) {
    if (items.missing[i]) {
      hashes[i] = "missing";
      return;
    }
    try {
      hashes[i] = sha256_file(items.values[i]);
    } catch (const Error&) {
      hashes[i] = "unreadable";
    }
  });
  std::string all;
  for (const std::string& h : hashes) all += h + '\n';
  return all;
}

fs::path cache_folder(const fs::path& images) {
  const fs::path abs = fs::absolute(images).lexically_normal();
  const fs::path parent = abs.has_filename() ? abs.parent_path() : abs.parent_path().parent_path();
  return parent / ".vlbias-features";
}

std::string stem_of(const fs::path& images) {
  const fs::path abs = fs::absolute(images).lexically_normal();
  return (abs.has_filename() ? abs : abs.parent_path()).stem().string();
}

// Makes the cache folder as every folder vlbias writes into is made (make_output_folders): a
// link planted at .vlbias-features is refused (InputError), never written through; a parent
// where nothing can be created gives false (the features are then computed without being kept).
bool writable(const fs::path& folder) {
  refuse_symbolic_link(folder, "the feature cache folder");
  try {
    make_output_folders(folder.parent_path(), folder.filename());
  } catch (const InputError&) {
    refuse_symbolic_link(folder, "the feature cache folder");  // planted meanwhile: refused
    return false;
  }
  return ::access(folder.c_str(), W_OK | X_OK) == 0;
}

// The rows file beside a finished output: its input_row column.
std::vector<std::size_t> input_rows(const fs::path& rows_csv) {
  const Table t = read_table(rows_csv.string());
  const Column& c = t.column("input_row");
  std::vector<std::size_t> out(t.rows);
  for (std::size_t r = 0; r < t.rows; ++r)
    out[r] = static_cast<std::size_t>(std::stoull(c.text(r)));
  return out;
}

}  // namespace

ImageFeatures image_features(const FeatureRequest& request) {
  EncodeJobOptions o = job_options(request);
  const encode_internal::Items items = encode_internal::load_items(o);
  const auto model = open_image_model(request.model, request.options);
  Json described = model->describe();
  const std::string key = sha256_hex(
      "vlbias-features-1\n" + described["model"]["weights_sha256"].get<std::string>() + "\n" +
      described["preprocessing"].dump() + "\n" + described["model"].value("output", "") + "\n" +
      (request.exif_transpose ? "exif-transpose\n" : "") + request.column + "\n" +
      content_key(items));
  ImageFeatures out;
  out.items = items.values.size();
  out.model = std::move(described);
  fs::path folder = cache_folder(request.images);
  const bool keep = writable(folder);
  if (!keep) {
    const std::string name =
        fmt::format("vlbias-features-{}-{}", ::getpid(), std::random_device{}());
    make_output_folders(fs::temp_directory_path(), name);  // refuses a link planted there
    folder = fs::temp_directory_path() / name;
    warn("{} is not writable: the features of {} are computed without being kept.",
         cache_folder(request.images).string(), request.images.string());
  }
  const fs::path path =
      folder / fmt::format("{}.{}.{}.npy", stem_of(request.images),
                           image_model_kind_name(model->kind()), key.substr(0, 16));
  const fs::path rows = folder / (path.stem().string() + ".rows.csv");
  const fs::path manifest = folder / (path.stem().string() + ".manifest.json");
  out.cached = fs::exists(path) && fs::exists(rows) && fs::exists(manifest);
  if (!out.cached) {
    o.out = path;
    o.resume = fs::exists(path.string() + ".partial");  // an interrupted earlier computation
    (void)run_encode_job(o);
  }
  out.features = read_npy_matrix(path);
  out.input_rows = input_rows(rows);
  VLBIAS_CHECK(out.input_rows.size() == out.features.rows, InputError,
               "{} has {} rows but {} lists {}; remove the cache folder {} and run again.",
               path.string(), out.features.rows, rows.string(), out.input_rows.size(),
               folder.string());
  if (keep) {
    out.path = path;
  } else {
    fs::remove_all(folder);
  }
  return out;
}

}  // namespace vlbias
