// The `vlbias encode` job: items -> checkpointed chunks -> one embedding file
// with a manifest. Image decoding runs on worker threads ahead of inference.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include <unistd.h>

#include "image_prefetch.h"
#include "vlbias/io/atomic_file.h"
#include "vlbias/core/blas.h"
#include "vlbias/encode/encode.h"
#include "vlbias/core/error.h"
#include "vlbias/io/json.h"
#include "vlbias/core/log.h"
#include "vlbias/io/npy.h"
#include "vlbias/core/parallel.h"
#include "vlbias/io/safetensors.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/table.h"
#include "vlbias/core/timestamp.h"
#include "vlbias/version.h"

namespace vlbias {

namespace fs = std::filesystem;

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

// --out and the files beside it must be names the job can write, checked before any work: a
// directory there used to fail only once everything was encoded, leaving .partial/ behind.
void check_output_paths(const fs::path& out, const fs::path& partial) {
  const std::string ext = out.extension().string();
  VLBIAS_CHECK(ext == ".npy" || ext == ".safetensors", UsageError,
               "--out {}: expected a .npy or .safetensors file name.", out.string());
  const fs::path folder = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  VLBIAS_CHECK(fs::is_directory(folder), InputError, "--out {}: the folder {} does not exist.",
               out.string(), folder.string());
  for (const fs::path& p : {out, sibling(out, ".manifest.json"), sibling(out, ".rows.csv")}) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    VLBIAS_CHECK(!fs::exists(st) || fs::is_regular_file(st), UsageError,
                 "--out {}: {} is {}; expected a file name to write (the output, its "
                 ".manifest.json and .rows.csv), so choose another --out.",
                 out.string(), p.string(),
                 fs::is_directory(st) ? "a directory" : "not a regular file");
  }
  VLBIAS_CHECK(!fs::exists(partial) || fs::is_directory(partial), UsageError,
               "--out {}: {} exists and is not a checkpoint folder; remove it or choose another "
               "--out.",
               out.string(), partial.string());
  VLBIAS_CHECK(::access(folder.c_str(), W_OK | X_OK) == 0, UsageError,
               "--out {}: the folder {} is not writable ({}).", out.string(), folder.string(),
               std::strerror(errno));
}

Json read_checkpoint_json(const fs::path& path, const fs::path& partial) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  try {
    return parse_json(text.str(), path.string());
  } catch (const InputError&) {
    VLBIAS_FAIL(UsageError, "{} is not a readable checkpoint ({}); delete it to start over.",
                partial.string(), path.filename().string());
  }
}

// Input rows of finished chunks whose image file is no longer the one encoded. A chunk's
// checkpoint holds the SHA-256 of every image's bytes as they were decoded ("input_sha256",
// "" for a file that could not be read); a resume hashes the files again, in parallel. The
// full content hash, not size + mtime + the first and last 64 KiB: the encode job reads every
// byte to decode it anyway (hashing adds ~1 ms per 150 KB image, ~2% of the forward pass), a
// resume costs one read of the already encoded images, and no edit can keep its hash.
std::vector<std::size_t> changed_images(const fs::path& partial, const std::vector<bool>& done,
                                        std::size_t chunk,
                                        const std::vector<encode_internal::ImageItem>& items) {
  std::vector<std::size_t> rows;
  std::vector<std::string> recorded;
  for (std::size_t c = 0; c < done.size(); ++c) {
    if (!done[c]) continue;
    const fs::path file = partial / chunk_name(c, ".json");
    const Json f = read_checkpoint_json(file, partial);
    const std::size_t begin = c * chunk, end = std::min(items.size(), begin + chunk);
    const bool ok = f.is_object() && f.contains("input_sha256") && f["input_sha256"].is_array() &&
                    f["input_sha256"].size() == end - begin;
    VLBIAS_CHECK(ok, UsageError, "{} has no image hashes for its {} rows; delete {} to start over.",
                 file.string(), end - begin, partial.string());
    for (std::size_t r = begin; r < end; ++r) {
      const Json& h = f["input_sha256"][r - begin];
      VLBIAS_CHECK(h.is_string(), UsageError, "{}: the hash of row {} is not a string.",
                   file.string(), r);
      rows.push_back(r);
      recorded.push_back(h.get<std::string>());
    }
  }
  std::vector<char> differs(rows.size(), 0);
  Progress progress("check encoded images", rows.size());
  parallel_for(rows.size(), [&](std::size_t i) {
    const std::string& path = items[rows[i]].path;
    differs[i] = (path.empty() ? "" : encode_internal::image_file_sha256(path)) != recorded[i];
    progress.advance();
  });
  progress.finish();
  std::vector<std::size_t> changed;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (differs[i]) changed.push_back(rows[i]);
  }
  return changed;
}

}  // namespace

EncodeJobResult run_encode_job(const EncodeJobOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const bool images = o.kind == EncodeKind::Images;
  const std::string ext = o.out.extension().string();
  const fs::path partial = o.out.string() + ".partial";
  // A link planted at OUT.partial would send the checkpoints elsewhere.
  refuse_symbolic_link(partial, "the checkpoint folder");
  check_output_paths(o.out, partial);
  VLBIAS_CHECK(o.max_image_pixels >= 1 && o.max_image_pixels <= kMaxImagePixelsOption, UsageError,
               "--max-image-pixels {}: expected 1 to {} (default {}, Pillow's MAX_IMAGE_PIXELS).",
               o.max_image_pixels, kMaxImagePixelsOption, kPillowMaxImagePixels);

  const ClipEncoder encoder = ClipEncoder::open(o.model_dir, o.encoder);
  if (!images) (void)encoder.tokenizer();  // refuse a directory without tokenizer files now
  const Items items = load_items(o);
  const std::size_t n = items.values.size();
  std::vector<encode_internal::ImageItem> image_items;
  if (images) {
    for (std::size_t r = 0; r < n; ++r) {
      image_items.push_back({items.missing[r] ? "" : items.values[r], items.display[r]});
    }
  }
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
                 {"max_image_pixels", images ? Json(o.max_image_pixels) : Json(nullptr)},
                 // 2: chunk checkpoints hold each image's SHA-256 (changed_images).
                 {"checkpoint_format", 2},
                 {"encoder", images ? description["preprocessing"] : description["tokenizer"]}};

  if (fs::exists(partial)) {
    VLBIAS_CHECK(o.resume, UsageError,
                 "{} holds an interrupted run; pass --resume to continue it, or delete the folder "
                 "to start over.",
                 partial.string());
    const Json previous = read_checkpoint_json(partial / "job.json", partial);
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
  // Images changed since their chunk was encoded: the chunk is encoded again, as a clean run
  // on the folder as it is now would encode it (refusing would throw the rest away).
  const std::vector<std::size_t> changed = images && resumed > 0
                                               ? changed_images(partial, done, chunk, image_items)
                                               : std::vector<std::size_t>{};
  for (const std::size_t r : changed) {
    const std::size_t c = r / chunk;
    if (!done[c]) continue;
    done[c] = false;
    resumed -= std::min(n, (c + 1) * chunk) - c * chunk;
    fs::remove(partial / chunk_name(c, ".json"));  // no longer a finished chunk if killed now
  }
  if (!changed.empty()) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < changed.size() && i < 10; ++i) {
      names.push_back(fmt::format("row {} ({})", changed[i], items.display[changed[i]]));
    }
    warn("{} image{} changed since {} encoded {}: {}{}; encoding {} again.", changed.size(),
         changed.size() == 1 ? "" : "s", partial.string(), changed.size() == 1 ? "it" : "them",
         fmt::join(names, ", "), changed.size() > 10 ? ", ..." : "",
         changed.size() == 1 ? "its chunk" : "their chunks");
  }

  Progress progress(images ? "encode images" : "encode texts", n);
  progress.advance(resumed);

  // Finishes chunk c: rows of failed items are zero in the .npy and listed in the .json, with
  // the SHA-256 of each image as decoded.
  auto save_chunk = [&](std::size_t c, const Matrix& m, const Failures& failed,
                        const std::vector<std::string>& sha256) {
    write_npy(partial / chunk_name(c, ".npy"), m);
    Json state{{"failed", failures_json(failed)}};
    if (images) state["input_sha256"] = sha256;
    write_file_atomically(partial / chunk_name(c, ".json"), state.dump() + "\n");
  };
  auto record_failure = [&](Failures& failed, std::size_t row, const std::string& error) {
    VLBIAS_CHECK(!o.fail_on_error, InputError, "Item {} ({}): {}", row, items.display[row], error);
    warn("{} {} ({}) skipped: {}", images ? "image" : "text", row, items.display[row], error);
    failed.emplace_back(row, error);
  };

  // Images are decoded ahead on worker threads, in the order the chunks are processed.
  std::unique_ptr<encode_internal::ImagePrefetcher> prefetch;
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
    prefetch = std::make_unique<encode_internal::ImagePrefetcher>(
        encoder, image_items, std::move(order), std::max<std::size_t>(2 * batch, 8), threads,
        o.max_image_pixels);
  }
  for (std::size_t c = 0; c < chunks; ++c) {
    if (done[c]) continue;
    const std::size_t begin = c * chunk, end = std::min(n, (c + 1) * chunk);
    Matrix m(end - begin, dim);
    std::vector<bool> ok(end - begin, false);
    Failures failed;
    std::vector<std::string> sha256(images ? end - begin : 0);
    for (std::size_t b = begin; b < end; b += batch) {
      const std::size_t e = std::min(end, b + batch);
      std::vector<std::size_t> good;  // items of [b, e) that reach the model, in order
      Matrix emb;
      if (images) {
        for (std::size_t r = b; r < e; ++r, ++k) {
          encode_internal::PrefetchedImage got = prefetch->take(k, px.data() + good.size() * per);
          sha256[r - begin] = std::move(got.sha256);
          if (got.error.empty()) {
            good.push_back(r);
          } else {
            record_failure(failed, r, got.error);
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
    save_chunk(c, m, failed, sha256);
  }
  prefetch.reset();
  progress.finish();

  // Assemble: failed rows dropped; the rows file maps output rows to input rows.
  Failures failed_all;
  std::vector<bool> failed_row(n, false);
  for (std::size_t c = 0; c < chunks; ++c) {
    const Json f = read_checkpoint_json(partial / chunk_name(c, ".json"), partial);
    VLBIAS_CHECK(f.is_object() && f.contains("failed") && f["failed"].is_array(), UsageError,
                 "Checkpoint {} has no list of failed items; delete {} and start over.",
                 chunk_name(c, ".json"), partial.string());
    for (const Json& x : f["failed"]) {
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
    manifest["max_image_pixels"] =
        Json{{"value", o.max_image_pixels},
             {"rule", "as Pillow's MAX_IMAGE_PIXELS: more than twice it is refused, more warns"}};
  } else {
    manifest["tokenizer"] = description["tokenizer"];
  }
  manifest["failed"] = failures;
  manifest["resumed_items"] = resumed;
  if (!changed.empty()) {
    Json list = Json::array();
    for (const std::size_t r : changed) {
      list.push_back(Json{{"input_row", r}, {"item", items.display[r]}});
    }
    manifest["changed_since_checkpoint"] = list;  // encoded again on resume
  }
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
