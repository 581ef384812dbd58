// The `vlbias encode` job: items -> checkpointed chunks -> one embedding file
// with a manifest. Image decoding runs on worker threads ahead of inference.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

#include <unistd.h>

#include "encode_job_checkpoint.h"
#include "image_prefetch.h"
#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/sha256.h"
#include "vlbias/core/timestamp.h"
#include "vlbias/encode/encode.h"
#include "vlbias/encode/jobs/job_items.h"
#include "vlbias/io/json.h"
#include "vlbias/io/mapped_file.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/io/tensor/safetensors.h"
#include "vlbias/version.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

using encode_internal::Assembled;
using encode_internal::EncodeContext;
using encode_internal::Failures;
using encode_internal::Items;
using encode_internal::ResumeState;

}  // namespace

namespace encode_internal {

Items load_items(const EncodeJobOptions& o) {
  return load_job_items(o.input, o.column, o.image_root, o.kind == EncodeKind::Images);
}

Table rows_file_table(const fs::path& path, bool images, const std::vector<std::size_t>& input_rows,
                      const std::vector<std::string>& shown) {
  Table rows;
  rows.source = path.string();
  rows.rows = input_rows.size();
  std::vector<double> out_index(rows.rows), in_index(rows.rows);
  for (std::size_t j = 0; j < rows.rows; ++j) {
    out_index[j] = static_cast<double>(j);
    in_index[j] = static_cast<double>(input_rows[j]);
  }
  add_numeric_column(rows, "row", out_index);
  add_numeric_column(rows, "input_row", in_index);
  add_string_column(rows, images ? "path" : "text", shown);
  return rows;
}

std::size_t row_number_cell(const Column& col, std::size_t row, const fs::path& file) {
  const std::string text = col.text(row);
  std::size_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  VLBIAS_CHECK(!text.empty() && ec == std::errc() && ptr == text.data() + text.size(), InputError,
               "{}: line {}, column '{}': '{}' is not a row number (a whole number).",
               file.string(), row + 2, col.name, text);
  return value;
}

std::vector<std::size_t> read_input_rows(const fs::path& rows_csv, std::size_t items) {
  const Table t = read_table(rows_csv.string());
  const Column& c = t.column("input_row");
  std::vector<std::size_t> out(t.rows);
  for (std::size_t r = 0; r < t.rows; ++r) {
    out[r] = row_number_cell(c, r, rows_csv);
    VLBIAS_CHECK(out[r] < items && (r == 0 || out[r] > out[r - 1]), InputError,
                 "{}: line {}, column 'input_row': {} is not an input row after {} (the input has "
                 "{} rows, listed once each in order).",
                 rows_csv.string(), r + 2, out[r], r == 0 ? std::string("none") : c.text(r - 1),
                 items);
  }
  return out;
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

}  // namespace encode_internal

namespace {

using encode_internal::check_output_paths;
using encode_internal::load_items;
using encode_internal::rows_file_table;
using encode_internal::sibling;

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

Json job_key(const EncodeContext& ctx, const Json& description) {
  const EncodeJobOptions& o = ctx.o;
  Json key{{"kind", ctx.images ? "images" : "texts"},
           {"model_weights_sha256", description["model"]["weights_sha256"]},
           {"input", o.input.string()},
           {"input_sha256", ctx.items.input_sha256},
           {"column", o.column},
           {"image_root", o.image_root.string()},
           {"normalize", o.normalize},
           {"chunk", ctx.chunk},
           {"items", ctx.n},
           {"max_image_pixels", ctx.images ? Json(o.max_image_pixels) : Json(nullptr)},
           {"exif_transpose", ctx.images ? Json(o.exif_transpose) : Json(nullptr)},
           // 2: chunk checkpoints hold each image's SHA-256 (changed_images).
           {"checkpoint_format", 2},
           {"encoder", ctx.images ? description["preprocessing"] : description["tokenizer"]}};
  // What the model writes, where it can write more than one thing (the Inception's pool3 or
  // logits); absent for CLIP, whose key stays that of earlier versions.
  if (description["model"].contains("output")) key["model_output"] = description["model"]["output"];
  // A shard's checkpoints hold its chunks only; whole runs keep the key of earlier versions.
  if (!o.shard.whole()) key["shard"] = Json{{"index", o.shard.index}, {"count", o.shard.count}};
  return key;
}

// threads, in the order the chunks are processed.
class ChunkEncoder {
 public:
  ChunkEncoder(const EncodeContext& ctx, const std::vector<bool>& done, std::size_t resumed)
      : ctx_(ctx),
        done_(done),
        per_(ctx.images ? ctx.image_model->pixels_per_image() : 0),
        px_(ctx.batch * per_),
        progress_(ctx.images ? "encode images" : "encode texts", ctx.owned_items()) {
    progress_.advance(resumed);
    if (ctx.images) start_prefetch();
  }

  void run() {
    for (std::size_t c = 0; c < ctx_.chunks; ++c) {
      if (ctx_.owns(c) && !done_[c]) encode_chunk(c);
    }
    prefetch_.reset();
    progress_.finish();
  }

 private:
  // The rows of one chunk as they are encoded.
  struct ChunkRows {
    Matrix m;
    std::vector<bool> ok;
    Failures failed;
    std::vector<std::string> sha256;  // images: each image's SHA-256 as decoded
  };

  void start_prefetch() {
    std::vector<std::size_t> order;
    for (std::size_t c = 0; c < ctx_.chunks; ++c) {
      if (done_[c] || !ctx_.owns(c)) continue;
      for (std::size_t r = c * ctx_.chunk; r < ctx_.chunk_end(c); ++r) order.push_back(r);
    }
    const unsigned threads =
        ctx_.o.decode_threads ? ctx_.o.decode_threads : std::max(1u, thread_count() / 2);
    prefetch_ = std::make_unique<encode_internal::ImagePrefetcher>(
        *ctx_.image_model, ctx_.image_items, std::move(order),
        std::max<std::size_t>(2 * ctx_.batch, 8), threads, ctx_.o.max_image_pixels,
        ctx_.o.exif_transpose);
  }

  void record_failure(Failures& failed, std::size_t row, const std::string& error) {
    const std::string& shown = ctx_.items.display[row];
    VLBIAS_CHECK(!ctx_.o.fail_on_error, InputError, "Item {} ({}): {}", row, shown, error);
    warn("{} {} ({}) skipped: {}", ctx_.images ? "image" : "text", row, shown, error);
    failed.emplace_back(row, error);
  }

  // Items of [b, e) that reach the model, in order, and their embeddings.
  Matrix encode_image_batch(ChunkRows& rows, std::size_t begin, std::size_t b, std::size_t e,
                            std::vector<std::size_t>& good) {
    for (std::size_t r = b; r < e; ++r, ++next_) {
      encode_internal::PrefetchedImage got =
          prefetch_->take(next_, px_.data() + good.size() * per_);
      rows.sha256[r - begin] = std::move(got.sha256);
      if (got.error.empty()) {
        good.push_back(r);
      } else {
        record_failure(rows.failed, r, got.error);
      }
    }
    return good.empty() ? Matrix() : ctx_.image_model->encode(px_.data(), good.size());
  }

  Matrix encode_text_batch(ChunkRows& rows, std::size_t b, std::size_t e,
                           std::vector<std::size_t>& good) {
    std::vector<std::vector<std::int32_t>> ids;
    for (std::size_t r = b; r < e; ++r) {
      try {
        ids.push_back(ctx_.text_encoder->tokenize(ctx_.items.values[r]));
        good.push_back(r);
      } catch (const InputError& err) {
        record_failure(rows.failed, r, err.what());
      }
    }
    return good.empty() ? Matrix() : ctx_.text_encoder->model().encode_texts(ids);
  }

  void encode_chunk(std::size_t c) {
    const std::size_t begin = c * ctx_.chunk, end = ctx_.chunk_end(c);
    ChunkRows rows{Matrix(end - begin, ctx_.dim),
                   std::vector<bool>(end - begin, false),
                   {},
                   std::vector<std::string>(ctx_.images ? end - begin : 0)};
    for (std::size_t b = begin; b < end; b += ctx_.batch) {
      const std::size_t e = std::min(end, b + ctx_.batch);
      std::vector<std::size_t> good;
      const Matrix emb = ctx_.images ? encode_image_batch(rows, begin, b, e, good)
                                     : encode_text_batch(rows, b, e, good);
      for (std::size_t i = 0; i < good.size(); ++i) {
        std::copy(emb.row(i), emb.row(i) + ctx_.dim, rows.m.row(good[i] - begin));
        rows.ok[good[i] - begin] = true;
      }
      progress_.advance(e - b);
    }
    if (ctx_.o.normalize) normalize_ok_rows(rows.m, rows.ok);
    encode_internal::write_chunk_checkpoint(ctx_, c, rows.m, rows.failed, rows.sha256);
  }

  const EncodeContext& ctx_;
  const std::vector<bool>& done_;
  const std::size_t per_;  // floats per preprocessed image
  std::vector<float> px_;  // one batch of preprocessed images
  Progress progress_;
  std::unique_ptr<encode_internal::ImagePrefetcher> prefetch_;
  std::size_t next_ = 0;  // next position in the prefetch order
};

// The rows file maps output rows to input rows.
Table rows_table(const EncodeContext& ctx, const Assembled& a) {
  std::vector<std::size_t> in_rows;
  std::vector<std::string> shown;
  for (std::size_t r = 0; r < ctx.n; ++r) {
    if (!ctx.owns(r / ctx.chunk) || a.failed_row[r]) continue;
    in_rows.push_back(r);
    shown.push_back(ctx.items.display[r]);
  }
  return rows_file_table(sibling(ctx.o.out, ".rows.csv"), ctx.images, in_rows, shown);
}

Json build_manifest(const EncodeContext& ctx, const Json& description, const Assembled& a,
                    const ResumeState& resume, const EncodeJobResult& result) {
  const EncodeJobOptions& o = ctx.o;
  const bool images = ctx.images;
  const bool npy = o.out.extension() == ".npy";
  Json failures = Json::array();
  for (const auto& [row, error] : a.failed) {
    failures.push_back(
        Json{{"input_row", row}, {"item", ctx.items.display[row]}, {"error", error}});
  }
  Json manifest{
      {"vlbias_version", VLBIAS_VERSION},
      {"created_utc", utc_now()},
      {"complete", true},
      {"kind", images ? "images" : "texts"},
      {"output", Json{{"path", o.out.filename().string()},
                      {"format", npy ? "npy" : "safetensors"},
                      {"tensor", npy ? Json(nullptr) : Json("embeddings")},
                      {"rows", a.all.rows},
                      {"cols", ctx.dim},
                      {"dtype", "float32"},
                      {"normalized", o.normalize}}},
      {"rows_file", result.rows.filename().string()},
      {"row_order", ctx.items.row_order},
      {"input",
       Json{{"path", o.input.string()},
            {"sha256", ctx.items.input_sha256},
            {"column", fs::is_directory(o.input)
                           ? Json(nullptr)
                           : Json(o.column.empty() ? (images ? "path" : "text") : o.column)},
            {"items", ctx.n}}},
      {"model", description["model"]}};
  if (images) {
    manifest["preprocessing"] = description["preprocessing"];
    manifest["max_image_pixels"] =
        Json{{"value", o.max_image_pixels},
             {"rule", "as Pillow's MAX_IMAGE_PIXELS: more than twice it is refused, more warns"}};
    manifest["exif_transpose"] = o.exif_transpose;
  } else {
    manifest["tokenizer"] = description["tokenizer"];
  }
  manifest["chunk"] = ctx.chunk;  // rows per checkpoint, and the unit of shards
  manifest["batch"] = ctx.batch;  // items per forward pass: the same bits need the same batches
  if (!o.shard.whole()) {
    manifest["shard"] = shard_json(o.shard, kChunkScheme);
    manifest["shard"]["items"] = ctx.owned_items();
  }
  manifest["failed"] = failures;
  manifest["resumed_items"] = resume.resumed;
  if (!resume.changed.empty()) {
    Json list = Json::array();
    for (const std::size_t r : resume.changed) {
      list.push_back(Json{{"input_row", r}, {"item", ctx.items.display[r]}});
    }
    manifest["changed_since_checkpoint"] = list;  // encoded again on resume
  }
  manifest["seconds"] = result.seconds;
  return manifest;
}

}  // namespace

EncodeJobResult run_encode_job(const EncodeJobOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const bool images = o.kind == EncodeKind::Images;
  const fs::path partial = o.out.string() + ".partial";
  // A link planted at OUT.partial would send the checkpoints elsewhere.
  refuse_symbolic_link(partial, "the checkpoint folder");
  check_output_paths(o.out, partial);
  VLBIAS_CHECK(o.max_image_pixels >= 1 && o.max_image_pixels <= kMaxImagePixelsOption, UsageError,
               "--max-image-pixels {}: expected 1 to {} (default {}, Pillow's MAX_IMAGE_PIXELS).",
               o.max_image_pixels, kMaxImagePixelsOption, kPillowMaxImagePixels);
  check_thread_count(o.decode_threads, "--decode-threads");

  // Images: any image model (CLIP, the FID Inception, DINOv2); texts: CLIP.
  std::unique_ptr<ImageFeatureModel> image_model;
  std::optional<ClipEncoder> text_encoder;
  if (images) {
    image_model =
        open_image_model(o.model_dir, {o.encoder, o.fid_preprocess, o.inception_output,
                                       o.image_size, o.dinov2_positions, o.dinov2_resize});
  } else {
    text_encoder.emplace(ClipEncoder::open(o.model_dir, o.encoder));
    (void)text_encoder->tokenizer();  // refuse a directory without tokenizer files now
  }
  const Items items = load_items(o);
  const std::size_t n = items.values.size();
  std::vector<encode_internal::ImageItem> image_items;
  if (images) {
    for (std::size_t r = 0; r < n; ++r) {
      image_items.push_back({items.missing[r] ? "" : items.values[r], items.display[r], &items, r});
    }
  }
  const std::size_t chunk = o.chunk ? o.chunk : (images ? 256 : 4096);
  const EncodeContext ctx{o,
                          text_encoder ? &*text_encoder : nullptr,
                          image_model.get(),
                          items,
                          image_items,
                          images,
                          n,
                          images ? image_model->dim() : text_encoder->model().config().embed_dim,
                          o.batch ? o.batch : (images ? image_model->default_batch() : 256),
                          chunk,
                          (n + chunk - 1) / chunk,
                          partial};

  Json description = images ? image_model->describe() : text_encoder->describe();
  if (!images) description.erase("preprocessing");
  encode_internal::open_checkpoints(ctx, job_key(ctx, description));
  const ResumeState resume = encode_internal::find_finished_chunks(ctx);
  ChunkEncoder(ctx, resume.done, resume.resumed).run();
  const Assembled assembled = encode_internal::assemble_chunks(ctx);
  const Table rows = rows_table(ctx, assembled);

  EncodeJobResult result;
  result.items = ctx.owned_items();
  result.encoded = assembled.all.rows;
  result.failed = assembled.failed.size();
  result.resumed = resume.resumed;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.manifest = sibling(o.out, ".manifest.json");
  result.rows = sibling(o.out, ".rows.csv");
  Json manifest = build_manifest(ctx, description, assembled, resume, result);

  // Embeddings first, then the rows file, then the manifest: a manifest with
  // "complete": true means the other two are whole.
  if (o.out.extension() == ".npy") {
    write_npy(o.out, assembled.all);
  } else {
    write_safetensors(o.out, {{"embeddings", MatrixView(assembled.all)}},
                      {{"vlbias_manifest", result.manifest.filename().string()}});
  }
  write_csv(rows, result.rows.string());
  if (!o.shard.whole()) {
    // What merge checks a shard's rows by (encode_merge.cpp): the job's items, and both files
    // as written.
    manifest["shard"]["items_sha256"] = job_items_sha256(items.display);
    manifest["shard"]["output_sha256"] = sha256_file(o.out.string());
    manifest["shard"]["rows_sha256"] = sha256_file(result.rows.string());
  }
  write_file_atomically(result.manifest, manifest.dump(2) + "\n");
  fs::remove_all(partial);
  if (!assembled.failed.empty()) {
    warn("{} of {} {} could not be encoded and are left out of {} (see {}).",
         assembled.failed.size(), n, images ? "images" : "texts", o.out.string(),
         result.manifest.string());
  }
  return result;
}

}  // namespace vlbias
