// `vlbias merge` for faces shards: N shard folders -> the folder one process writes. Each shard
// holds whole checkpoint chunks (chunk mod N, io/shard.h) and keeps its records
// (shard_records.jsonl); the tables are written again from all records in input order, so they
// are byte for byte one process's, and the chips are copied.
#include <algorithm>

#include "faces_job_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/core/timestamp.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/mapped_file.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/run/run_lock.h"
#include "vlbias/io/run/run_paths.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

using faces_internal::ImageFaces;

struct FacesShard {
  fs::path dir, manifest_path;
  Json manifest;
  Shard shard;
  std::vector<ImageFaces> images;
  std::vector<std::string> shown;  // per image
};

std::string faces_shard_text(const Json& m, const char* key, const fs::path& where) {
  VLBIAS_CHECK(m.contains("shard") && m["shard"].is_object() && m["shard"].contains(key) &&
                   m["shard"][key].is_string(),
               InputError, "{}: its 'shard' has no '{}' (merge checks the shard's records by it).",
               where.string(), key);
  return m["shard"][key].get<std::string>();
}

FacesShard read_faces_shard(const fs::path& given) {
  FacesShard s;
  const bool manifest_given =
      fs::is_regular_file(given) && given.filename() == faces_internal::kFacesManifest;
  s.dir =
      manifest_given ? (given.parent_path().empty() ? fs::path(".") : given.parent_path()) : given;
  s.manifest_path = run_input_file(s.dir, faces_internal::kFacesManifest, "a faces manifest");
  const fs::path records =
      run_input_file(s.dir, faces_internal::kShardRecords, "a faces shard's records");
  check_shard_files({s.manifest_path, records});
  const fs::path& mp = s.manifest_path;
  s.manifest = parse_json(read_file_text(mp, "a faces manifest"), mp.string());
  const Json& m = s.manifest;
  VLBIAS_CHECK(m.is_object() && m.value("kind", "") == "faces" && m.value("complete", false),
               InputError, "{}: not the manifest of a finished faces run.", mp.string());
  VLBIAS_CHECK(m.contains("shard"), InputError,
               "{}: not a shard (its manifest has no 'shard': it was written without --shard).",
               mp.string());
  s.shard = shard_from_json(m["shard"], mp.string());
  (void)faces_shard_text(m, "items_sha256", mp);
  VLBIAS_CHECK(sha256_file(records.string()) == faces_shard_text(m, "records_sha256", mp),
               InputError, "{}: is not the file its shard wrote (its SHA-256 differs from {}'s).",
               records.string(), mp.string());
  const std::string text = read_file_text(records, "a faces shard's records");
  std::size_t line = 0;
  for (std::size_t at = 0; at < text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string where = fmt::format("{}, line {}", records.string(), line + 1);
    const Json j = parse_json(std::string_view(text).substr(at, end - at), where);
    VLBIAS_CHECK(j.is_object() && j.contains("image") && j["image"].is_string(), InputError,
                 "{}: has no 'image'.", where);
    s.shown.push_back(j["image"].get<std::string>());
    s.images.push_back(faces_internal::image_faces_from_json(j, where));
    at = end + 1;
  }
  return s;
}

// The manifest entries that make two shards parts of one job.
const std::vector<std::string> kSameFacesJob = {"/vlbias_version", "/kind",
                                                "/input/sha256",   "/input/items",
                                                "/input/column",   "/input/row_order",
                                                "/detector",       "/predictor",
                                                "/chips",          "/max_image_pixels",
                                                "/exif_transpose", "/face_columns",
                                                "/chunk",          "/shard/items_sha256"};

std::size_t faces_manifest_count(const Json& m, const char* a, const char* b,
                                 const fs::path& where) {
  VLBIAS_CHECK(m.contains(a) && m[a].is_object() && m[a].contains(b) &&
                   m[a][b].is_number_unsigned() && m[a][b].get<std::size_t>() > 0,
               InputError, "{}: '{}/{}' is not a positive whole number.", where.string(), a, b);
  return m[a][b].get<std::size_t>();
}

// Every input row exactly once, in the shard of its chunk; the images in input order.
std::vector<ImageFaces> faces_in_input_order(const std::vector<FacesShard>& shards,
                                             std::vector<std::string>& shown) {
  const Json& m0 = shards[0].manifest;
  const std::size_t n = faces_manifest_count(m0, "input", "items", shards[0].manifest_path);
  VLBIAS_CHECK(m0.contains("chunk") && m0["chunk"].is_number_unsigned() &&
                   m0["chunk"].get<std::size_t>() > 0,
               InputError, "{}: 'chunk' is not a positive whole number.",
               shards[0].manifest_path.string());
  const std::size_t chunk = m0["chunk"].get<std::size_t>();
  std::vector<ImageFaces> all(n);
  std::vector<bool> seen(n, false);
  shown.assign(n, "");
  for (const FacesShard& s : shards) {
    for (std::size_t i = 0; i < s.images.size(); ++i) {
      const std::size_t row = s.images[i].row;
      VLBIAS_CHECK(
          row < n && shard_of_chunk(row / chunk, s.shard.count) == s.shard.index && !seen[row],
          InputError,
          "{}: holds input row {}, which is not one of its chunks' rows or is held "
          "twice (the input has {} rows in chunks of {}).",
          s.dir.string(), row, n, chunk);
      seen[row] = true;
      shown[row] = s.shown[i];
      all[row] = s.images[i];
    }
  }
  const auto missing = std::find(seen.begin(), seen.end(), false);
  VLBIAS_CHECK(missing == seen.end(), InputError,
               "Input row {} is in no shard's records; each shard must hold all of its chunks.",
               missing - seen.begin());
  VLBIAS_CHECK(job_items_sha256(shown) == faces_shard_text(m0, "items_sha256", ""), InputError,
               "The shards' records do not name the job's images at their input rows (their "
               "SHA-256 differs from the manifests' 'items_sha256').");
  return all;
}

void copy_shard_chips(const std::vector<FacesShard>& shards, const fs::path& out) {
  for (const FacesShard& s : shards) {
    for (const ImageFaces& im : s.images) {
      for (const faces_internal::FaceRecord& f : im.faces) {
        if (f.chip.empty()) continue;
        const fs::path from = run_input_file(s.dir, f.chip, "a chip");
        const MappedFile bytes(from, MapAccess::Sequential);
        write_file_atomically(
            out / f.chip,
            std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
      }
    }
  }
}

}  // namespace

FacesMergeResult merge_faces_shards(const fs::path& out, const std::vector<fs::path>& given) {
  VLBIAS_CHECK(!given.empty(), UsageError, "vlbias merge {}: no shard given.", out.string());
  faces_internal::check_faces_out(out);
  std::vector<FacesShard> shards;
  std::vector<std::pair<Shard, std::string>> set;
  for (const fs::path& g : given) {
    shards.push_back(read_faces_shard(g));
    set.emplace_back(shards.back().shard, shards.back().dir.string());
    check_same_job(shards[0].manifest, shards[0].manifest_path.string(), shards.back().manifest,
                   shards.back().manifest_path.string(), kSameFacesJob);
  }
  check_shard_set(set);
  std::vector<std::string> shown;
  const std::vector<ImageFaces> images = faces_in_input_order(shards, shown);
  const RunLock lock(out);
  const Json& m0 = shards[0].manifest;
  if (m0.contains("chips") && !m0["chips"].is_null())
    make_output_folders(out, faces_internal::kChipsFolder);
  copy_shard_chips(shards, out);
  const Json sha =
      faces_internal::write_faces_tables(out, faces_internal::faces_tables(images, shown), images);

  FacesMergeResult r;
  r.shards = shards.size();
  r.images = images.size();
  std::size_t ok = 0, no_face = 0;
  double seconds = 0.0;
  for (const ImageFaces& im : images) {
    r.faces += im.faces.size();
    r.failed += !im.error.empty();
    ok += im.error.empty();
    no_face += im.error.empty() && im.faces.empty();
  }
  Json merged_from = Json::array();
  for (const FacesShard& s : shards) {
    merged_from.push_back(Json{{"path", s.dir.string()}, {"shard", s.shard.index}});
    if (s.manifest.contains("seconds") && s.manifest["seconds"].is_number()) {
      seconds += s.manifest["seconds"].get<double>();
    }
  }
  Json manifest = m0;
  manifest.erase("shard");
  manifest["created_utc"] = utc_now();
  manifest["counts"] = Json{{"images", r.images},
                            {"ok", ok},
                            {"failed", r.failed},
                            {"no_face", no_face},
                            {"faces", r.faces}};
  manifest["resumed_images"] = 0;
  manifest["seconds"] = seconds;
  manifest["tables_sha256"] = sha;
  manifest["merged_from"] = merged_from;
  r.manifest = out / faces_internal::kFacesManifest;
  write_file_atomically(r.manifest, manifest.dump(2) + "\n");
  return r;
}

}  // namespace vlbias
