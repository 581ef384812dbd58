// Image features computed once per content and model, kept beside the images (see
// include/vlbias/encode/jobs/feature_cache.h).
#include "vlbias/encode/jobs/feature_cache.h"

#include <unistd.h>

#include <random>

#include "encode_job_checkpoint.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/npy.h"

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
  std::vector<std::size_t> rows(items.values.size());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  const std::vector<std::string> hashes = job_images_sha256(items, rows);
  std::string all;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    all += (items.missing[i] ? "missing" : hashes[i].empty() ? "unreadable" : hashes[i]) + '\n';
  }
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

std::string brief_value(const Json& j) {
  const std::string text = j.dump();
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

// What a cache entry was computed from, as the manifest beside it must say (the encode job's
// manifest, with the cache key added by stamp_cache_key).
struct CacheIdentity {
  const Json& described;  // the model's describe()
  bool exif_transpose;
  const encode_internal::Items& items;
  const std::string& key;
};

// Why the cache entry whose manifest is `manifest_path` is not the features `want` asks for,
// "" when it is: the same weights (SHA-256), preprocessing and output of the model, EXIF
// setting, input (hash and item count) and cache key (the images' contents). Its file name
// alone says nothing: a file renamed from another model's entry must not be read.
std::string cache_mismatch(const fs::path& manifest_path, const CacheIdentity& want) {
  Json m;
  try {
    m = parse_json(read_file_text(manifest_path, "a feature cache manifest"),
                   manifest_path.string());
  } catch (const Error& e) {
    return fmt::format("its manifest cannot be read: {}", e.what());
  }
  if (!m.is_object()) return "its manifest is not a JSON object";
  const auto described = [&](const char* pointer) {
    const Json::json_pointer ptr(pointer);
    return want.described.contains(ptr) ? want.described[ptr] : Json();
  };
  const std::pair<const char*, Json> expected[] = {
      {"/model/weights_sha256", described("/model/weights_sha256")},
      {"/model/output", described("/model/output")},
      {"/preprocessing", described("/preprocessing")},
      {"/exif_transpose", Json(want.exif_transpose)},
      {"/input/sha256", Json(want.items.input_sha256)},
      {"/input/items", Json(want.items.values.size())},
      {"/feature_cache_key", Json(want.key)}};
  for (const auto& [pointer, value] : expected) {
    const Json::json_pointer ptr(pointer);
    const Json found = m.contains(ptr) ? m[ptr] : Json();
    if (found != value) {
      return fmt::format("its manifest's {} is {}, not {}", pointer + 1, brief_value(found),
                         brief_value(value));
    }
  }
  return "";
}

// The cache key, added to the manifest the encode job wrote for the entry.
void stamp_cache_key(const fs::path& manifest_path, const std::string& key) {
  Json m =
      parse_json(read_file_text(manifest_path, "a feature cache manifest"), manifest_path.string());
  m["feature_cache_key"] = key;
  write_file_atomically(manifest_path, m.dump(2) + "\n");
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
  const bool present = fs::exists(path) && fs::exists(rows) && fs::exists(manifest);
  const std::string mismatch =
      present ? cache_mismatch(manifest, {out.model, request.exif_transpose, items, key}) : "";
  out.cached = present && mismatch.empty();
  if (present && !out.cached) {
    warn(
        "the cached features {} are not those of this model and these images ({}); computing "
        "them again.",
        path.string(), mismatch);
  }
  if (!out.cached) {
    o.out = path;
    o.resume = fs::exists(path.string() + ".partial");  // an interrupted earlier computation
    (void)run_encode_job(o);
    stamp_cache_key(manifest, key);
  }
  out.features = read_npy_matrix(path);
  out.input_rows = encode_internal::read_input_rows(rows, out.items);
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
