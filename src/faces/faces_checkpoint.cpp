// The checkpoint folder of the faces job (FACES_DIR/.partial/): job.json, then one
// chunk_<c>.json per finished chunk (its images' records, each with the SHA-256 of the bytes
// read), as the encode job keeps its chunks (src/encode/jobs/encode_job_checkpoint.cpp).
#include "faces_job_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/run/atomic_file.h"

namespace vlbias::faces_internal {

namespace fs = std::filesystem;

namespace {

std::string faces_chunk_name(std::size_t c) {
  return fmt::format("chunk_{:06d}.json", c);
}

Json read_faces_checkpoint_json(const fs::path& path, const fs::path& partial) {
  try {
    return parse_json(read_file_text(path, "a checkpoint"), path.string());
  } catch (const InputError&) {
    VLBIAS_FAIL(UsageError, "{} is not a readable checkpoint ({}); delete it to start over.",
                partial.string(), path.filename().string());
  }
}

std::vector<ImageFaces> chunk_records(const FacesCheckpoint& cp, std::size_t c) {
  const fs::path file = cp.partial / faces_chunk_name(c);
  const Json j = read_faces_checkpoint_json(file, cp.partial);
  const std::size_t begin = c * cp.chunk, end = cp.chunk_end(c);
  VLBIAS_CHECK(j.is_object() && j.contains("images") && j["images"].is_array() &&
                   j["images"].size() == end - begin,
               UsageError, "{} does not hold the {} images of its chunk; delete {} to start over.",
               file.string(), end - begin, cp.partial.string());
  std::vector<ImageFaces> out;
  for (const Json& im : j["images"]) {
    out.push_back(image_faces_from_json(im, file.string()));
    VLBIAS_CHECK(out.back().row == begin + out.size() - 1, UsageError,
                 "{} holds input row {} where row {} belongs; delete {} to start over.",
                 file.string(), out.back().row, begin + out.size() - 1, cp.partial.string());
  }
  return out;
}

}  // namespace

std::size_t FacesCheckpoint::owned_items() const {
  std::size_t k = 0;
  for (std::size_t c = 0; c < chunks; ++c) k += owns(c) ? chunk_end(c) - c * chunk : 0;
  return k;
}

void open_faces_checkpoint(const FacesCheckpoint& cp, const Json& job, bool resume) {
  if (fs::exists(fs::symlink_status(cp.partial))) {
    VLBIAS_CHECK(resume, UsageError,
                 "{} holds an interrupted run; pass --resume to continue it, or delete the folder "
                 "to start over.",
                 cp.partial.string());
    const Json previous = read_faces_checkpoint_json(cp.partial / "job.json", cp.partial);
    for (const auto& [key, value] : job.items()) {
      VLBIAS_CHECK(previous.contains(key) && previous[key] == value, UsageError,
                   "Cannot resume {}: its '{}' differs from this run's (the input, detector or "
                   "options changed); delete the folder to start over.",
                   cp.partial.string(), key);
    }
    return;
  }
  make_output_folders(cp.partial.parent_path(), cp.partial.filename());
  write_file_atomically(cp.partial / "job.json", job.dump(2) + "\n");
}

std::vector<bool> finished_faces_chunks(const FacesCheckpoint& cp, const JobItems& items) {
  std::vector<bool> done(cp.chunks, false);
  std::vector<std::size_t> rows;
  std::vector<std::string> recorded;
  for (std::size_t c = 0; c < cp.chunks; ++c) {
    if (!cp.owns(c) || !fs::exists(cp.partial / faces_chunk_name(c))) continue;
    done[c] = true;
    for (const ImageFaces& im : chunk_records(cp, c)) {
      rows.push_back(im.row);
      recorded.push_back(im.sha256);
    }
  }
  // Images changed since their chunk: the chunk is done again, as a clean run would do it.
  const std::vector<std::string> now = job_images_sha256(items, rows);
  std::vector<char> differs(rows.size(), 0);
  for (std::size_t i = 0; i < rows.size(); ++i) differs[i] = now[i] != recorded[i];
  std::vector<std::string> names;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!differs[i]) continue;
    const std::size_t c = rows[i] / cp.chunk;
    if (done[c]) fs::remove(cp.partial / faces_chunk_name(c));
    done[c] = false;
    names.push_back(fmt::format("row {} ({})", rows[i], items.display[rows[i]]));
  }
  if (!names.empty()) {
    const std::size_t n = names.size();
    if (n > 10) names.resize(10);
    warn("{} image{} changed since {} read {}: {}{}; reading {} again.", n, n == 1 ? "" : "s",
         cp.partial.string(), n == 1 ? "it" : "them", fmt::join(names, ", "), n > 10 ? ", ..." : "",
         n == 1 ? "its chunk" : "their chunks");
  }
  return done;
}

void write_faces_chunk(const FacesCheckpoint& cp, std::size_t c,
                       const std::vector<ImageFaces>& images) {
  Json list = Json::array();
  for (const ImageFaces& im : images) list.push_back(image_faces_json(im));
  write_file_atomically(cp.partial / faces_chunk_name(c), Json{{"images", list}}.dump() + "\n");
}

std::vector<ImageFaces> read_faces_chunks(const FacesCheckpoint& cp) {
  std::vector<ImageFaces> all;
  for (std::size_t c = 0; c < cp.chunks; ++c) {
    if (!cp.owns(c)) continue;
    std::vector<ImageFaces> part = chunk_records(cp, c);
    for (ImageFaces& im : part) all.push_back(std::move(im));
  }
  return all;
}

}  // namespace vlbias::faces_internal
