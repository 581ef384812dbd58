// The checkpoint folder of the encode job (OUT.partial/): job.json, then per chunk c
// chunk_c.npy (its rows) and chunk_c.json (failed items, image hashes), the .json written last.
#include "encode_job_checkpoint.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias::encode_internal {

namespace fs = std::filesystem;

namespace {

std::string chunk_name(std::size_t c, const char* ext) {
  return fmt::format("chunk_{:06d}{}", c, ext);
}

Json failures_json(const Failures& f) {
  Json out = Json::array();
  for (const auto& [row, error] : f) out.push_back(Json{{"input_row", row}, {"error", error}});
  return out;
}
Json read_checkpoint_json(const fs::path& path, const fs::path& partial) {
  try {
    // Through the one input policy: a pipe or device planted in the cache is refused.
    return parse_json(read_file_text(path, "a checkpoint"), path.string());
  } catch (const InputError&) {
    VLBIAS_FAIL(UsageError, "{} is not a readable checkpoint ({}); delete it to start over.",
                partial.string(), path.filename().string());
  }
}

// Input rows of finished chunks whose image file is no longer the one encoded. A chunk's
// checkpoint holds the SHA-256 of every image's bytes as they were decoded ("input_sha256",
// "" for a file that could not be read); a resume hashes the files again, in parallel (the
// cells of a Parquet table in row order, job_images_sha256). The
// full content hash, not size + mtime + the first and last 64 KiB: the encode job reads every
// byte to decode it anyway (hashing adds ~1 ms per 150 KB image, ~2% of the forward pass), a
// resume costs one read of the already encoded images, and no edit can keep its hash.
std::vector<std::size_t> changed_images(const fs::path& partial, const std::vector<bool>& done,
                                        std::size_t chunk, const JobItems& items) {
  std::vector<std::size_t> rows;
  std::vector<std::string> recorded;
  for (std::size_t c = 0; c < done.size(); ++c) {
    if (!done[c]) continue;
    const fs::path file = partial / chunk_name(c, ".json");
    const Json f = read_checkpoint_json(file, partial);
    const std::size_t begin = c * chunk, end = std::min(items.values.size(), begin + chunk);
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
  const std::vector<std::string> now = job_images_sha256(items, rows);
  std::vector<std::size_t> changed;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (now[i] != recorded[i]) changed.push_back(rows[i]);
  }
  return changed;
}

}  // namespace

// Starts the checkpoint folder, or checks that the interrupted run in it is this job.
void open_checkpoints(const EncodeContext& ctx, const Json& job) {
  const fs::path& partial = ctx.partial;
  if (fs::exists(partial)) {
    VLBIAS_CHECK(ctx.o.resume, UsageError,
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
}
ResumeState find_finished_chunks(const EncodeContext& ctx) {
  ResumeState state;
  state.done.assign(ctx.chunks, false);
  // Chunks finished by an earlier run: their .json is written after their .npy.
  for (std::size_t c = 0; c < ctx.chunks; ++c) {
    if (ctx.owns(c) && fs::exists(ctx.partial / chunk_name(c, ".json")) &&
        fs::exists(ctx.partial / chunk_name(c, ".npy"))) {
      state.done[c] = true;
      state.resumed += ctx.chunk_rows(c);
    }
  }
  // Images changed since their chunk was encoded: the chunk is encoded again, as a clean run
  // on the folder as it is now would encode it (refusing would throw the rest away).
  if (ctx.images && state.resumed > 0) {
    state.changed = changed_images(ctx.partial, state.done, ctx.chunk, ctx.items);
  }
  for (const std::size_t r : state.changed) {
    const std::size_t c = r / ctx.chunk;
    if (!state.done[c]) continue;
    state.done[c] = false;
    state.resumed -= ctx.chunk_rows(c);
    fs::remove(ctx.partial / chunk_name(c, ".json"));  // no longer a finished chunk if killed now
  }
  const std::vector<std::size_t>& changed = state.changed;
  if (!changed.empty()) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < changed.size() && i < 10; ++i) {
      names.push_back(fmt::format("row {} ({})", changed[i], ctx.items.display[changed[i]]));
    }
    warn("{} image{} changed since {} encoded {}: {}{}; encoding {} again.", changed.size(),
         changed.size() == 1 ? "" : "s", ctx.partial.string(), changed.size() == 1 ? "it" : "them",
         fmt::join(names, ", "), changed.size() > 10 ? ", ..." : "",
         changed.size() == 1 ? "its chunk" : "their chunks");
  }
  return state;
}

void write_chunk_checkpoint(const EncodeContext& ctx, std::size_t c, const Matrix& m,
                            const Failures& failed, const std::vector<std::string>& sha256) {
  write_npy(ctx.partial / chunk_name(c, ".npy"), m);
  Json state{{"failed", failures_json(failed)}};
  if (ctx.images) state["input_sha256"] = sha256;
  write_file_atomically(ctx.partial / chunk_name(c, ".json"), state.dump() + "\n");
}

Assembled assemble_chunks(const EncodeContext& ctx) {
  const fs::path& partial = ctx.partial;
  const std::size_t n = ctx.n;
  Assembled out;
  out.failed_row.assign(n, false);
  for (std::size_t c = 0; c < ctx.chunks; ++c) {
    if (!ctx.owns(c)) continue;
    const Json f = read_checkpoint_json(partial / chunk_name(c, ".json"), partial);
    VLBIAS_CHECK(f.is_object() && f.contains("failed") && f["failed"].is_array(), UsageError,
                 "Checkpoint {} has no list of failed items; delete {} and start over.",
                 chunk_name(c, ".json"), partial.string());
    for (const Json& x : f["failed"]) {
      const std::size_t row = x["input_row"].get<std::size_t>();
      VLBIAS_CHECK(row < n, InternalError, "checkpoint {} names row {} of {}", c, row, n);
      out.failed_row[row] = true;
      out.failed.emplace_back(row, x["error"].get<std::string>());
    }
  }
  out.all = Matrix(ctx.owned_items() - out.failed.size(), ctx.dim);
  std::size_t out_row = 0;
  for (std::size_t c = 0; c < ctx.chunks; ++c) {
    if (!ctx.owns(c)) continue;
    const Matrix m = read_npy_matrix(partial / chunk_name(c, ".npy"));
    const std::size_t begin = c * ctx.chunk;
    VLBIAS_CHECK(m.rows == ctx.chunk_rows(c) && m.cols == ctx.dim, UsageError,
                 "Checkpoint {} has shape {}x{}; delete {} and start over.", chunk_name(c, ".npy"),
                 m.rows, m.cols, partial.string());
    for (std::size_t i = 0; i < m.rows; ++i) {
      if (out.failed_row[begin + i]) continue;
      std::copy(m.row(i), m.row(i) + ctx.dim, out.all.row(out_row++));
    }
  }
  std::sort(out.failed.begin(), out.failed.end());
  return out;
}
}  // namespace vlbias::encode_internal
