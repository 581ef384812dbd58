// `vlbias merge` for encode / features shards: N shard outputs -> the output one process writes.
// Each shard holds whole checkpoint chunks (chunk mod N, io/shard.h) encoded in the batches a
// one-process run uses, so putting the rows back in input order gives the same bytes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>

#include "encode_job_checkpoint.h"
#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/core/timestamp.h"
#include "vlbias/encode/encode.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/mapped_file.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/embeddings.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/io/tensor/safetensors.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

// One shard's output as read back. A little-endian float32 .npy (what the job writes) is read
// in place through a mapping, so a merge holds one row at a time, not the study's matrix.
struct ShardOutput {
  fs::path manifest_path, data, rows_path;
  Json manifest;
  Shard shard;
  std::size_t rows = 0, cols = 0;
  MappedFile map;                    // the .npy, when read in place
  std::size_t offset = 0;            // of its data
  mutable std::size_t released = 0;  // bytes of the mapping given back
  static constexpr std::size_t kReleaseBytes = std::size_t{8} << 20;
  Matrix embeddings;                    // any other file, read whole
  std::vector<std::size_t> input_rows;  // per output row
  std::vector<std::string> shown;       // the path / text per output row

  // Output row j into `out` (cols floats); InputError for a value that is not finite.
  void copy_row(std::size_t j, float* out) const {
    if (map.size() > 0) {
      const std::size_t at = offset + j * cols * sizeof(float), bytes = cols * sizeof(float);
      std::memcpy(out, map.data() + at, bytes);
      // Rows are taken in order: drop what is behind, so the merge's memory stays flat.
      if (at + bytes - released >= kReleaseBytes) {
        map.release_pages(
            std::span<const std::uint8_t>(map.data() + released, at + bytes - released));
        released = at + bytes;
      }
    } else {
      std::copy(embeddings.row(j), embeddings.row(j) + cols, out);
    }
    for (std::size_t k = 0; k < cols; ++k) {
      VLBIAS_CHECK(std::isfinite(out[k]), InputError, "{}: row {} column {} is {}.", data.string(),
                   j, k, out[k]);
    }
  }
};

// The embeddings of a shard: mapped when they are a C-order little-endian float32 .npy of the
// manifest's shape, else read whole (and checked) by read_embeddings.
void open_embeddings(ShardOutput& s) {
  if (s.rows == 0) return;
  if (s.data.extension() == ".npy") {
    const NpyHeader h = read_npy_header(s.data);
    const bool in_place = h.descr == "<f4" && !h.fortran_order && h.shape.size() == 2;
    VLBIAS_CHECK(!in_place || (h.shape[0] == s.rows && h.shape[1] == s.cols), InputError,
                 "{}: holds {} x {} embeddings; its manifest says {} x {}.", s.data.string(),
                 h.shape[0], h.shape[1], s.rows, s.cols);
    if (in_place) {
      s.map = MappedFile(s.data, MapAccess::Sequential);
      s.offset = h.data_offset;
      return;
    }
  }
  s.embeddings = read_embeddings(s.data);
  VLBIAS_CHECK(s.embeddings.rows == s.rows && s.embeddings.cols == s.cols, InputError,
               "{}: holds {} x {} embeddings; its manifest says {} x {}.", s.data.string(),
               s.embeddings.rows, s.embeddings.cols, s.rows, s.cols);
}

// The manifest of a shard given as a file: itself (a .json), or the one beside the output or
// rows file given (OUT.npy, OUT.safetensors, OUT.rows.csv -> OUT.manifest.json: what `ls`
// shows first, and what a user types).
fs::path manifest_of_file(const fs::path& shard) {
  const std::string name = shard.filename().string();
  if (shard.extension() == ".json") return shard;
  std::string stem;
  for (const std::string_view ext : {".npy", ".safetensors", ".rows.csv"}) {
    if (name.size() > ext.size() && name.ends_with(ext)) {
      stem = name.substr(0, name.size() - ext.size());
    }
  }
  VLBIAS_CHECK(!stem.empty(), InputError,
               "{}: is not a shard's output; give each shard's folder, its output (.npy or "
               ".safetensors) or the .manifest.json written beside it.",
               shard.string());
  const fs::path manifest = shard.parent_path() / (stem + ".manifest.json");
  VLBIAS_CHECK(fs::exists(manifest), InputError,
               "{}: has no manifest beside it ({} does not exist; a shard writes it when it "
               "finishes); give the shard's folder or its manifest.",
               shard.string(), manifest.string());
  return manifest;
}

// The manifest of a shard given as its folder (one *.manifest.json in it) or as a file
// (manifest_of_file).
fs::path find_manifest(const fs::path& shard) {
  if (!fs::is_directory(shard)) {
    VLBIAS_CHECK(fs::is_regular_file(shard), InputError,
                 "{}: not a shard folder or manifest (it does not exist).", shard.string());
    return manifest_of_file(shard);
  }
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(shard)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 14 && name.ends_with(".manifest.json")) found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  VLBIAS_CHECK(!found.empty(), InputError,
               "{}: holds no encode output (no *.manifest.json); is the shard finished?",
               shard.string());
  VLBIAS_CHECK(found.size() == 1, InputError,
               "{}: holds {} manifests ({}, ...); name the shard's manifest instead of its folder.",
               shard.string(), found.size(), found[0].filename().string());
  return found[0];
}

const Json& member(const Json& j, const char* key, const fs::path& file) {
  VLBIAS_CHECK(j.is_object() && j.contains(key), InputError, "{}: has no '{}'.", file.string(),
               key);
  return j[key];
}

std::size_t whole_member(const Json& j, const char* key, const fs::path& file) {
  const Json& v = member(j, key, file);
  VLBIAS_CHECK(v.is_number_unsigned(), InputError, "{}: '{}' is {}, not a whole number.",
               file.string(), key, v.dump());
  return v.get<std::size_t>();
}

std::string text_member(const Json& j, const char* key, const fs::path& file) {
  const Json& v = member(j, key, file);
  VLBIAS_CHECK(v.is_string(), InputError, "{}: '{}' is {}, not a string.", file.string(), key,
               v.dump());
  return v.get<std::string>();
}

// The records a shard's manifest holds under "shard" that merge checks its rows by (the encode
// job writes them, encode_job.cpp); a shard without them was written by an older vlbias.
const std::vector<std::string> kShardChecks = {"items_sha256", "output_sha256", "rows_sha256"};

std::string shard_check(const ShardOutput& s, const std::string& key) {
  const Json& shard = s.manifest["shard"];
  VLBIAS_CHECK(shard.is_object() && shard.contains(key) && shard[key].is_string(), InputError,
               "{}: written by an older vlbias (its 'shard' has no '{}', which merge checks the "
               "shard's rows by); re-run the shard with this version.",
               s.manifest_path.string(), key);
  return shard[key].get<std::string>();
}

ShardOutput read_shard(const fs::path& given) {
  ShardOutput s;
  s.manifest_path = find_manifest(given);
  const fs::path& mp = s.manifest_path;
  check_shard_files({mp});
  s.manifest = parse_json(read_file_text(mp, "an encode manifest"), mp.string());
  const Json& m = s.manifest;
  VLBIAS_CHECK(m.is_object() && m.value("complete", false) == true, InputError,
               "{}: not the manifest of a finished encode run.", mp.string());
  VLBIAS_CHECK(m.contains("shard"), InputError,
               "{}: not a shard (its manifest has no 'shard': it was written without --shard).",
               mp.string());
  s.shard = shard_from_json(m["shard"], mp.string());
  for (const std::string& key : kShardChecks) (void)shard_check(s, key);
  const Json& output = member(m, "output", mp);
  const fs::path folder = mp.parent_path();
  const bool images = text_member(m, "kind", mp) == "images";
  const std::size_t rows = whole_member(output, "rows", mp);
  s.rows = rows;
  s.cols = whole_member(output, "cols", mp);
  // Names inside the shard's folder only: a manifest is a file anyone may have edited.
  s.data = folder / fs::path(text_member(output, "path", mp)).filename();
  const std::string ext = given.extension().string();
  const bool output_given = fs::is_regular_file(given) && (ext == ".npy" || ext == ".safetensors");
  VLBIAS_CHECK(!output_given || given.filename() == s.data.filename(), InputError,
               "{}: its manifest {} describes the output {}, not this file.", given.string(),
               mp.string(), s.data.string());
  s.rows_path = folder / fs::path(text_member(m, "rows_file", mp)).filename();
  const fs::path& rows_path = s.rows_path;
  check_shard_files({s.data, rows_path});
  open_embeddings(s);
  whole_member(member(m, "input", mp), "items", mp);
  whole_member(m, "chunk", mp);
  VLBIAS_CHECK(member(m, "failed", mp).is_array(), InputError, "{}: 'failed' is not a list.",
               mp.string());
  // As text: the rows file is written again byte for byte ("007" stays "007").
  const Table t = read_csv(rows_path.string(), CsvOptions{',', true});
  VLBIAS_CHECK(t.rows == rows, InputError, "{}: has {} rows; {} has {}.", rows_path.string(),
               t.rows, s.data.string(), rows);
  const Column& row = t.column("row");
  const Column& input_row = t.column("input_row");
  const Column& item = t.column(images ? "path" : "text");
  for (std::size_t j = 0; j < rows; ++j) {
    VLBIAS_CHECK(encode_internal::row_number_cell(row, j, rows_path) == j, InputError,
                 "{}: line {} is not output row {}.", rows_path.string(), j + 2, j);
    s.input_rows.push_back(encode_internal::row_number_cell(input_row, j, rows_path));
    s.shown.push_back(item.text(j));
  }
  return s;
}

// The manifest entries that make two shards parts of one job.
const std::vector<std::string> kSameJob = {"/vlbias_version",
                                           "/kind",
                                           "/row_order",
                                           "/input/sha256",
                                           "/input/column",
                                           "/input/items",
                                           "/model",
                                           "/preprocessing",
                                           "/tokenizer",
                                           "/max_image_pixels",
                                           "/exif_transpose",
                                           "/chunk",
                                           "/batch",
                                           "/output/cols",
                                           "/output/normalized",
                                           "/output/dtype",
                                           "/shard/items_sha256"};

// Who holds each input row: exactly the shard of its chunk, once (encoded or failed).
class RowOwners {
 public:
  RowOwners(std::size_t items, std::size_t chunk) : owner_(items, nullptr), chunk_(chunk) {}

  void claim(std::size_t row, const ShardOutput& s) {
    const fs::path& mp = s.manifest_path;
    VLBIAS_CHECK(row < owner_.size(), InputError, "{}: names input row {} of {}.", mp.string(), row,
                 owner_.size());
    const std::size_t c = row / chunk_;
    VLBIAS_CHECK(shard_of_chunk(c, s.shard.count) == s.shard.index, InputError,
                 "{}: holds input row {} of chunk {}, which belongs to shard {}, not {}.",
                 mp.string(), row, c, shard_of_chunk(c, s.shard.count), s.shard.index);
    VLBIAS_CHECK(owner_[row] == nullptr, InputError, "{}: holds input row {} twice.", mp.string(),
                 row);
    owner_[row] = &s;
  }

  // `shards` sorted by index, all N of them (check_shard_set): shards[i] is shard i.
  void check_complete(const std::vector<ShardOutput>& shards) const {
    for (std::size_t r = 0; r < owner_.size(); ++r) {
      if (owner_[r] != nullptr) continue;
      const std::size_t want = shard_of_chunk(r / chunk_, shards.size());
      VLBIAS_FAIL(InputError, "{}: lacks input row {} (chunk {}): neither encoded nor failed.",
                  shards[want].manifest_path.string(), r, r / chunk_);
    }
  }

 private:
  std::vector<const ShardOutput*> owner_;
  std::size_t chunk_;
};

// Before the manifests' input.items sizes anything (2^62 of them would be an allocation that
// never ends): each shard holds the items its manifest says ("shard": "items"), encoded or
// failed, and the shards together hold the job's input.items.
void check_item_counts(const std::vector<ShardOutput>& shards, std::size_t items) {
  std::size_t total = 0;
  for (const ShardOutput& s : shards) {
    const std::size_t held = s.rows + s.manifest["failed"].size();
    const std::size_t says = whole_member(s.manifest["shard"], "items", s.manifest_path);
    VLBIAS_CHECK(says == held, InputError,
                 "{}: 'shard' says it holds {} items, but it holds {} ({} encoded, {} failed).",
                 s.manifest_path.string(), says, held, s.rows, held - s.rows);
    total += held;
  }
  VLBIAS_CHECK(total == items, InputError,
               "{}: input.items is {}, but the {} shards hold {} items (encoded or failed); a "
               "manifest was edited or a shard is not whole.",
               shards[0].manifest_path.string(), items, shards.size(), total);
}

// Each shard's output and rows file are the ones it wrote (their SHA-256 as its manifest
// records them: no file edited, replaced or swapped with another shard's), and the items of
// every row put back at the input row it claims (`shown_of`, failed rows included) are the
// job's items (items_sha256: no row moved to another item's input row, no item edited).
void check_shard_contents(const std::vector<ShardOutput>& shards,
                          const std::vector<std::string>& shown_of) {
  const auto check_file = [](const ShardOutput& s, const fs::path& file, const char* key) {
    const std::string want = shard_check(s, key), got = sha256_file(file.string());
    VLBIAS_CHECK(got == want, InputError,
                 "{}: is not the file shard {} of {} wrote (its SHA-256 is {}..., the shard's "
                 "manifest records {}...): it was edited, replaced or swapped; re-run the shard.",
                 file.string(), s.shard.index, s.shard.count, got.substr(0, 16),
                 want.substr(0, 16));
  };
  for (const ShardOutput& s : shards) {
    check_file(s, s.data, "output_sha256");
    check_file(s, s.rows_path, "rows_sha256");
  }
  const std::string got = job_items_sha256(shown_of);
  const std::string want = shard_check(shards[0], "items_sha256");
  VLBIAS_CHECK(got == want, InputError,
               "The shards' rows, each at the input row it claims, are not the job's items "
               "(their SHA-256 is {}..., the shards recorded {}...): a rows file or a "
               "manifest's list of failed items was edited; re-run the shards.",
               got.substr(0, 16), want.substr(0, 16));
}

// OUT: the embedding of every input row in `input_rows`, in order, from where `at` says it is.
// A .npy is written a row at a time (the same header and bytes as write_npy).
void write_rows_in_order(const fs::path& out, const fs::path& manifest_path,
                         const std::vector<std::pair<const ShardOutput*, std::size_t>>& at,
                         const std::vector<std::size_t>& input_rows, std::size_t cols) {
  if (out.extension() == ".npy") {
    const std::size_t shape[2] = {input_rows.size(), cols};
    const std::string header = npy_float32_header(shape);
    AtomicWriter writer(out);
    writer.write(header.data(), header.size());
    std::vector<float> row(cols);
    for (const std::size_t r : input_rows) {
      at[r].first->copy_row(at[r].second, row.data());
      writer.write_f32le(row.data(), cols);
    }
    writer.commit();
    return;
  }
  Matrix all(input_rows.size(), cols);
  for (std::size_t i = 0; i < input_rows.size(); ++i) {
    at[input_rows[i]].first->copy_row(at[input_rows[i]].second, all.row(i));
  }
  write_safetensors(out, {{"embeddings", MatrixView(all)}},
                    {{"vlbias_manifest", manifest_path.filename().string()}});
}

// The merged manifest: the first shard's, with the whole job's output, failures and times.
Json merged_manifest(const std::vector<ShardOutput>& shards, const fs::path& out,
                     const fs::path& rows, std::size_t encoded, const Json& failed) {
  Json m = shards[0].manifest;
  const bool npy = out.extension() == ".npy";
  m["created_utc"] = utc_now();
  m["output"]["path"] = out.filename().string();
  m["output"]["format"] = npy ? "npy" : "safetensors";
  m["output"]["tensor"] = npy ? Json(nullptr) : Json("embeddings");
  m["output"]["rows"] = encoded;
  m["rows_file"] = rows.filename().string();
  m["failed"] = failed;
  std::size_t resumed = 0;
  double seconds = 0.0;
  Json changed = Json::array(), from = Json::array();
  for (const ShardOutput& s : shards) {
    resumed += s.manifest.value("resumed_items", std::size_t{0});
    seconds += s.manifest.value("seconds", 0.0);
    for (const Json& c : s.manifest.value("changed_since_checkpoint", Json::array())) {
      changed.push_back(c);
    }
    from.push_back(Json{{"manifest", fs::absolute(s.manifest_path).lexically_normal().string()},
                        {"index", s.shard.index},
                        {"items", s.manifest["shard"].value("items", std::size_t{0})},
                        {"encoded", s.rows},
                        {"seconds", s.manifest.value("seconds", 0.0)}});
  }
  m["resumed_items"] = resumed;
  m.erase("changed_since_checkpoint");
  if (!changed.empty()) m["changed_since_checkpoint"] = changed;
  m["seconds"] = seconds;  // the shards' own times, summed
  m.erase("shard");
  m["merged_from"] = from;
  return m;
}

}  // namespace

EncodeMergeResult merge_encode_shards(const fs::path& out, const std::vector<fs::path>& given) {
  VLBIAS_CHECK(!given.empty(), UsageError, "vlbias merge: give the shards' folders after OUT.");
  if (!out.parent_path().empty()) fs::create_directories(out.parent_path());
  encode_internal::check_output_paths(out, out.string() + ".partial");
  std::vector<ShardOutput> shards;
  for (const fs::path& g : given) shards.push_back(read_shard(g));
  std::sort(shards.begin(), shards.end(), [](const ShardOutput& a, const ShardOutput& b) {
    return a.shard.index < b.shard.index;
  });
  const fs::path manifest_path = encode_internal::sibling(out, ".manifest.json");
  std::vector<std::pair<Shard, std::string>> numbers;
  for (const ShardOutput& s : shards) {
    check_same_job(shards[0].manifest, shards[0].manifest_path.string(), s.manifest,
                   s.manifest_path.string(), kSameJob);
    numbers.emplace_back(s.shard, s.manifest_path.string());
    std::error_code ec;
    VLBIAS_CHECK(!fs::equivalent(s.manifest_path, manifest_path, ec), UsageError,
                 "vlbias merge: OUT {} would overwrite shard {}; write the merge elsewhere.",
                 out.string(), s.manifest_path.string());
  }
  check_shard_set(numbers);
  std::vector<fs::path> files;
  for (const ShardOutput& s : shards)
    files.insert(files.end(), {s.manifest_path, s.data, s.rows_path});
  check_shard_files(files);

  const Json& first = shards[0].manifest;
  const std::size_t items = first["input"]["items"].get<std::size_t>();
  const std::size_t chunk = first["chunk"].get<std::size_t>();
  VLBIAS_CHECK(chunk > 0, InputError, "{}: chunk is 0.", shards[0].manifest_path.string());
  check_item_counts(shards, items);  // before `items` sizes anything
  RowOwners owners(items, chunk);
  std::vector<std::pair<std::size_t, Json>> failed;
  // Where each input row's embedding is: (shard, its output row); failed rows have none.
  std::vector<std::pair<const ShardOutput*, std::size_t>> at(items, {nullptr, 0});
  std::vector<std::string> shown_of(items);
  for (const ShardOutput& s : shards) {
    for (std::size_t j = 0; j < s.input_rows.size(); ++j) {
      owners.claim(s.input_rows[j], s);
      at[s.input_rows[j]] = {&s, j};
      shown_of[s.input_rows[j]] = s.shown[j];
    }
    for (const Json& f : member(s.manifest, "failed", s.manifest_path)) {
      const std::size_t row = whole_member(f, "input_row", s.manifest_path);
      owners.claim(row, s);
      shown_of[row] = text_member(f, "item", s.manifest_path);
      failed.emplace_back(row, f);
    }
  }
  owners.check_complete(shards);
  check_shard_contents(shards, shown_of);
  std::sort(failed.begin(), failed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });

  std::vector<std::size_t> input_rows;
  std::vector<std::string> shown;
  for (std::size_t r = 0; r < items; ++r) {
    if (at[r].first == nullptr) continue;
    input_rows.push_back(r);
    shown.push_back(shown_of[r]);
  }
  Json failures = Json::array();
  for (auto& f : failed) failures.push_back(std::move(f.second));

  EncodeMergeResult result{shards.size(),     items,
                           input_rows.size(), failures.size(),
                           manifest_path,     encode_internal::sibling(out, ".rows.csv")};
  const bool images = first["kind"] == "images";
  const Json manifest = merged_manifest(shards, out, result.rows, input_rows.size(), failures);
  // As the job: embeddings, then the rows file, then the manifest that says both are whole.
  write_rows_in_order(out, manifest_path, at, input_rows, shards[0].cols);
  write_csv(encode_internal::rows_file_table(result.rows, images, input_rows, shown),
            result.rows.string());
  write_file_atomically(manifest_path, manifest.dump(2) + "\n");
  return result;
}

}  // namespace vlbias
