// The `vlbias encode` job: items -> checkpointed chunks -> one embedding file
// with a manifest. Image decoding runs on worker threads ahead of inference.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "vlbias/atomic_file.h"
#include "vlbias/blas.h"
#include "vlbias/encode.h"
#include "vlbias/error.h"
#include "vlbias/log.h"
#include "vlbias/npy.h"
#include "vlbias/parallel.h"
#include "vlbias/safetensors.h"
#include "vlbias/sha256.h"
#include "vlbias/table.h"
#include "vlbias/timestamp.h"
#include "vlbias/version.h"

namespace vlbias {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

// One input item: an image path (resolved) or a text, with what the rows file shows.
struct Items {
  std::vector<std::string> values;   // resolved path / text; "" with `missing`
  std::vector<std::string> display;  // the path as given / the text
  std::vector<bool> missing;         // a missing table cell
  std::string input_sha256;          // table file, or the directory listing
  std::string row_order;
};

bool is_image_file(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

Items load_items(const EncodeJobOptions& o) {
  Items items;
  const bool images = o.kind == EncodeKind::Images;
  if (images && fs::is_directory(o.input)) {
    std::vector<std::string> rel;
    for (const auto& entry : fs::recursive_directory_iterator(o.input)) {
      if (entry.is_regular_file() && is_image_file(entry.path())) {
        rel.push_back(fs::relative(entry.path(), o.input).generic_string());
      }
    }
    std::sort(rel.begin(), rel.end());
    VLBIAS_CHECK(!rel.empty(), InputError,
                 "{} holds no .jpg, .jpeg or .png file (searched recursively).", o.input.string());
    std::string listing;
    for (const std::string& r : rel) {
      items.values.push_back((o.input / r).string());
      items.display.push_back(r);
      items.missing.push_back(false);
      listing += r + '\n';
    }
    items.input_sha256 = sha256_hex(listing);
    items.row_order = "files under the directory, sorted by relative path (bytes)";
    return items;
  }
  VLBIAS_CHECK(fs::exists(o.input), InputError, "{} does not exist.", o.input.string());
  const Table table = read_table(o.input.string());
  VLBIAS_CHECK(table.rows > 0, InputError, "{} has no rows; nothing to encode.", o.input.string());
  const std::string column = o.column.empty() ? (images ? "path" : "text") : o.column;
  const Column& col = table.column(column);
  const fs::path root = !o.image_root.empty() ? o.image_root : o.input.parent_path();
  for (std::size_t r = 0; r < table.rows; ++r) {
    const bool miss = col.missing(r);
    const std::string text = miss ? "" : col.text(r);
    items.missing.push_back(miss && images);  // an empty text cell is the empty text
    items.display.push_back(text);
    if (images && !miss) {
      const fs::path p(text);
      items.values.push_back((p.is_absolute() ? p : root / p).string());
    } else {
      items.values.push_back(text);
    }
  }
  items.input_sha256 = sha256_file(o.input.string());
  items.row_order = "table rows in file order";
  return items;
}

std::string chunk_name(std::size_t c, const char* ext) {
  return fmt::format("chunk_{:06d}{}", c, ext);
}

// Failed items of one chunk: input row -> error.
using Failures = std::vector<std::pair<std::size_t, std::string>>;

Json failures_json(const Failures& f) {
  Json out = Json::array();
  for (const auto& [row, error] : f) out.push_back(Json{{"input_row", row}, {"error", error}});
  return out;
}

// Decodes and preprocesses images on worker threads, at most `window` items
// ahead of the consumer, so decoding overlaps inference.
class ImagePrefetcher {
 public:
  ImagePrefetcher(const ClipEncoder& encoder, const Items& items, std::vector<std::size_t> order,
                  std::size_t window, unsigned threads)
      : encoder_(encoder),
        items_(items),
        order_(std::move(order)),
        window_(window),
        per_(encoder.pixels_per_image()),
        slots_(window) {
    for (Slot& s : slots_) s.pixels.resize(per_);
    for (unsigned t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }
  ~ImagePrefetcher() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  ImagePrefetcher(const ImagePrefetcher&) = delete;
  ImagePrefetcher& operator=(const ImagePrefetcher&) = delete;

  // Waits for position k of the order (taken in sequence), copies its pixels to
  // `out` and returns "" or the error that made it fail.
  std::string take(std::size_t k, float* out) {
    std::unique_lock<std::mutex> lock(mutex_);
    Slot& s = slots_[k % window_];
    cv_.wait(lock, [&] { return s.ready && s.position == k; });
    std::string error = std::move(s.error);
    if (error.empty()) std::copy(s.pixels.begin(), s.pixels.end(), out);
    s.ready = false;
    consumed_ = k + 1;
    lock.unlock();
    cv_.notify_all();
    return error;
  }

 private:
  struct Slot {
    std::vector<float> pixels;
    std::string error;
    std::size_t position = 0;
    bool ready = false;
  };

  void work() {
    std::vector<float> local(per_);
    for (;;) {
      std::size_t k;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock,
                 [&] { return stop_ || (next_ < order_.size() && next_ < consumed_ + window_); });
        if (stop_) return;
        k = next_++;
      }
      std::string error;
      const std::size_t row = order_[k];
      if (items_.missing[row]) {
        error = "the path cell is empty";
      } else {
        try {
          const RgbImage image = decode_image_file(items_.values[row]);
          encoder_.pixels(image, local.data());
        } catch (const Error& e) {
          error = e.what();
        } catch (const std::bad_alloc&) {
          error = "out of memory while decoding the image";
        }
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        Slot& s = slots_[k % window_];
        s.pixels.swap(local);
        s.error = std::move(error);
        s.position = k;
        s.ready = true;
      }
      cv_.notify_all();
      if (local.size() != per_) local.resize(per_);
    }
  }

  const ClipEncoder& encoder_;
  const Items& items_;
  std::vector<std::size_t> order_;
  std::size_t window_, per_;
  std::vector<Slot> slots_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t next_ = 0, consumed_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

void normalize_ok_rows(Matrix& m, const std::vector<bool>& ok) {
  for (std::size_t i = 0; i < m.rows; ++i) {
    if (!ok[i]) continue;
    float* r = m.row(i);
    double s = 0.0;
    for (std::size_t k = 0; k < m.cols; ++k) s += static_cast<double>(r[k]) * r[k];
    const double norm = std::sqrt(s);
    VLBIAS_CHECK(norm > 0.0 && std::isfinite(norm), InputError,
                 "The embedding of item {} has norm {}; it cannot be L2-normalised.", i, norm);
    for (std::size_t k = 0; k < m.cols; ++k) r[k] = static_cast<float>(r[k] / norm);
  }
}

fs::path sibling(const fs::path& out, const std::string& suffix) {
  return out.parent_path() / (out.stem().string() + suffix);
}

}  // namespace

EncodeJobResult run_encode_job(const EncodeJobOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const bool images = o.kind == EncodeKind::Images;
  const std::string ext = o.out.extension().string();
  VLBIAS_CHECK(ext == ".npy" || ext == ".safetensors", UsageError,
               "--out {}: expected a .npy or .safetensors file name.", o.out.string());
  VLBIAS_CHECK(o.out.parent_path().empty() || fs::is_directory(o.out.parent_path()), InputError,
               "--out {}: the folder {} does not exist.", o.out.string(),
               o.out.parent_path().string());

  const ClipEncoder encoder = ClipEncoder::open(o.model_dir, o.encoder);
  if (!images) (void)encoder.tokenizer();  // refuse a directory without tokenizer files now
  const Items items = load_items(o);
  const std::size_t n = items.values.size();
  const std::size_t dim = encoder.model().config().embed_dim;
  const std::size_t batch = o.batch ? o.batch : (images ? 32 : 256);
  const std::size_t chunk = o.chunk ? o.chunk : (images ? 256 : 4096);
  const std::size_t chunks = (n + chunk - 1) / chunk;

  Json description = encoder.describe();
  if (images) {
    description.erase("tokenizer");
  } else {
    description.erase("preprocessing");
  }
  // Everything that shapes the output: a resumed run must agree on all of it.
  const Json job{{"kind", images ? "images" : "texts"},
                 {"model_weights_sha256", description["model"]["weights_sha256"]},
                 {"input", o.input.string()},
                 {"input_sha256", items.input_sha256},
                 {"column", o.column},
                 {"image_root", o.image_root.string()},
                 {"normalize", o.normalize},
                 {"chunk", chunk},
                 {"items", n},
                 {"encoder", images ? description["preprocessing"] : description["tokenizer"]}};

  const fs::path partial = o.out.string() + ".partial";
  // A link planted at OUT.partial would send the checkpoints elsewhere.
  refuse_symbolic_link(partial, "the checkpoint folder");
  if (fs::exists(partial)) {
    VLBIAS_CHECK(o.resume, UsageError,
                 "{} holds an interrupted run; pass --resume to continue it, or delete the folder "
                 "to start over.",
                 partial.string());
    std::ifstream in(partial / "job.json");
    Json previous;
    try {
      previous = Json::parse(in);
    } catch (const nlohmann::json::exception&) {
      VLBIAS_FAIL(UsageError,
                  "{} is not a readable checkpoint (job.json); delete it to start over.",
                  partial.string());
    }
    for (const auto& [key, value] : job.items()) {
      VLBIAS_CHECK(previous.contains(key) && previous[key] == value, UsageError,
                   "Cannot resume {}: its '{}' differs from this run's (the model, input or "
                   "options changed); delete the folder to start over.",
                   partial.string(), key);
    }
  } else {
    fs::create_directories(partial);
    write_file_atomically(partial / "job.json", job.dump(2) + "\n");
  }

  // Chunks finished by an earlier run: their .json is written after their .npy.
  std::vector<bool> done(chunks, false);
  std::size_t resumed = 0;
  for (std::size_t c = 0; c < chunks; ++c) {
    if (fs::exists(partial / chunk_name(c, ".json")) &&
        fs::exists(partial / chunk_name(c, ".npy"))) {
      done[c] = true;
      resumed += std::min(n, (c + 1) * chunk) - c * chunk;
    }
  }

  Progress progress(images ? "encode images" : "encode texts", n);
  progress.advance(resumed);

  // Finishes chunk c: rows of failed items are zero in the .npy and listed in the .json.
  auto save_chunk = [&](std::size_t c, const Matrix& m, const Failures& failed) {
    write_npy(partial / chunk_name(c, ".npy"), m);
    write_file_atomically(partial / chunk_name(c, ".json"), failures_json(failed).dump() + "\n");
  };
  auto record_failure = [&](Failures& failed, std::size_t row, const std::string& error) {
    VLBIAS_CHECK(!o.fail_on_error, InputError, "Item {} ({}): {}", row, items.display[row], error);
    warn("{} {} ({}) skipped: {}", images ? "image" : "text", row, items.display[row], error);
    failed.emplace_back(row, error);
  };

  // Images are decoded ahead on worker threads, in the order the chunks are processed.
  std::unique_ptr<ImagePrefetcher> prefetch;
  const std::size_t per = images ? encoder.pixels_per_image() : 0;
  std::vector<float> px(batch * per);
  std::size_t k = 0;  // next position in the prefetch order
  if (images) {
    std::vector<std::size_t> order;
    for (std::size_t c = 0; c < chunks; ++c) {
      if (done[c]) continue;
      for (std::size_t r = c * chunk; r < std::min(n, (c + 1) * chunk); ++r) order.push_back(r);
    }
    const unsigned threads = o.decode_threads ? o.decode_threads : std::max(1u, thread_count() / 2);
    prefetch = std::make_unique<ImagePrefetcher>(encoder, items, std::move(order),
                                                 std::max<std::size_t>(2 * batch, 8), threads);
  }
  for (std::size_t c = 0; c < chunks; ++c) {
    if (done[c]) continue;
    const std::size_t begin = c * chunk, end = std::min(n, (c + 1) * chunk);
    Matrix m(end - begin, dim);
    std::vector<bool> ok(end - begin, false);
    Failures failed;
    for (std::size_t b = begin; b < end; b += batch) {
      const std::size_t e = std::min(end, b + batch);
      std::vector<std::size_t> good;  // items of [b, e) that reach the model, in order
      Matrix emb;
      if (images) {
        for (std::size_t r = b; r < e; ++r, ++k) {
          const std::string error = prefetch->take(k, px.data() + good.size() * per);
          if (error.empty()) {
            good.push_back(r);
          } else {
            record_failure(failed, r, error);
          }
        }
        if (!good.empty()) emb = encoder.model().encode_images(px.data(), good.size());
      } else {
        std::vector<std::vector<std::int32_t>> ids;
        for (std::size_t r = b; r < e; ++r) {
          try {
            ids.push_back(encoder.tokenize(items.values[r]));
            good.push_back(r);
          } catch (const InputError& err) {
            record_failure(failed, r, err.what());
          }
        }
        if (!good.empty()) emb = encoder.model().encode_texts(ids);
      }
      for (std::size_t i = 0; i < good.size(); ++i) {
        std::copy(emb.row(i), emb.row(i) + dim, m.row(good[i] - begin));
        ok[good[i] - begin] = true;
      }
      progress.advance(e - b);
    }
    if (o.normalize) normalize_ok_rows(m, ok);
    save_chunk(c, m, failed);
  }
  prefetch.reset();
  progress.finish();

  // Assemble: failed rows dropped; the rows file maps output rows to input rows.
  Failures failed_all;
  std::vector<bool> failed_row(n, false);
  for (std::size_t c = 0; c < chunks; ++c) {
    std::ifstream in(partial / chunk_name(c, ".json"));
    const Json f = Json::parse(in);
    for (const Json& x : f) {
      const std::size_t row = x["input_row"].get<std::size_t>();
      VLBIAS_CHECK(row < n, InternalError, "checkpoint {} names row {} of {}", c, row, n);
      failed_row[row] = true;
      failed_all.emplace_back(row, x["error"].get<std::string>());
    }
  }
  const std::size_t encoded = n - failed_all.size();
  Matrix all(encoded, dim);
  std::size_t out_row = 0;
  for (std::size_t c = 0; c < chunks; ++c) {
    const Matrix m = read_npy_matrix(partial / chunk_name(c, ".npy"));
    const std::size_t begin = c * chunk;
    VLBIAS_CHECK(m.rows == std::min(n, (c + 1) * chunk) - begin && m.cols == dim, UsageError,
                 "Checkpoint {} has shape {}x{}; delete {} and start over.", chunk_name(c, ".npy"),
                 m.rows, m.cols, partial.string());
    for (std::size_t i = 0; i < m.rows; ++i) {
      if (failed_row[begin + i]) continue;
      std::copy(m.row(i), m.row(i) + dim, all.row(out_row++));
    }
  }

  Table rows;
  rows.source = sibling(o.out, ".rows.csv").string();
  rows.rows = encoded;
  std::vector<double> out_index(encoded), in_index(encoded);
  std::vector<std::string> shown(encoded);
  for (std::size_t r = 0, j = 0; r < n; ++r) {
    if (failed_row[r]) continue;
    out_index[j] = static_cast<double>(j);
    in_index[j] = static_cast<double>(r);
    shown[j] = items.display[r];
    ++j;
  }
  add_numeric_column(rows, "row", out_index);
  add_numeric_column(rows, "input_row", in_index);
  add_string_column(rows, images ? "path" : "text", shown);

  EncodeJobResult result;
  result.items = n;
  result.encoded = encoded;
  result.failed = failed_all.size();
  result.resumed = resumed;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.manifest = sibling(o.out, ".manifest.json");
  result.rows = sibling(o.out, ".rows.csv");

  std::sort(failed_all.begin(), failed_all.end());
  Json failures = Json::array();
  for (const auto& [row, error] : failed_all) {
    failures.push_back(Json{{"input_row", row}, {"item", items.display[row]}, {"error", error}});
  }
  Json manifest{
      {"vlbias_version", VLBIAS_VERSION},
      {"created_utc", utc_now()},
      {"complete", true},
      {"kind", images ? "images" : "texts"},
      {"output", Json{{"path", o.out.filename().string()},
                      {"format", ext == ".npy" ? "npy" : "safetensors"},
                      {"tensor", ext == ".npy" ? Json(nullptr) : Json("embeddings")},
                      {"rows", encoded},
                      {"cols", dim},
                      {"dtype", "float32"},
                      {"normalized", o.normalize}}},
      {"rows_file", result.rows.filename().string()},
      {"row_order", items.row_order},
      {"input",
       Json{{"path", o.input.string()},
            {"sha256", items.input_sha256},
            {"column", fs::is_directory(o.input)
                           ? Json(nullptr)
                           : Json(o.column.empty() ? (images ? "path" : "text") : o.column)},
            {"items", n}}},
      {"model", description["model"]}};
  if (images) {
    manifest["preprocessing"] = description["preprocessing"];
  } else {
    manifest["tokenizer"] = description["tokenizer"];
  }
  manifest["failed"] = failures;
  manifest["resumed_items"] = resumed;
  manifest["seconds"] = result.seconds;

  // Embeddings first, then the rows file, then the manifest: a manifest with
  // "complete": true means the other two are whole.
  if (ext == ".npy") {
    write_npy(o.out, all);
  } else {
    write_safetensors(o.out, {{"embeddings", MatrixView(all)}},
                      {{"vlbias_manifest", result.manifest.filename().string()}});
  }
  write_csv(rows, result.rows.string());
  write_file_atomically(result.manifest, manifest.dump(2) + "\n");
  fs::remove_all(partial);
  if (!failed_all.empty()) {
    warn("{} of {} {} could not be encoded and are left out of {} (see {}).", failed_all.size(), n,
         images ? "images" : "texts", o.out.string(), result.manifest.string());
  }
  return result;
}

}  // namespace vlbias
