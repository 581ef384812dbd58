// The chunked, resumable, shardable driver of `vlbias label` (label_job_internal.h,
// include/vlbias/labels/label_job.h): checkpoint chunks in `<out>.partial/` as the faces job keeps
// them (src/faces/faces_checkpoint.cpp), then LABELS.csv and, for a shard, its records.
#include "label_job_internal.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/encode/jobs/job_items.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/run/atomic_file.h"

namespace vlbias::labels_internal {

namespace fs = std::filesystem;

namespace {

std::string label_chunk_name(std::size_t c) {
  return fmt::format("chunk_{:06d}.json", c);
}

// The items as the encode job's item list, so that their bytes hash as every job hashes them.
JobItems label_hash_items(const LabelItems& items) {
  JobItems j;
  j.values = items.path;
  j.display = items.image;
  for (const std::string& p : items.path) j.missing.push_back(p.empty());
  j.table_images = items.table_images;
  return j;
}

Json label_row_json(const LabelRow& r) {
  Json j = Json::object();
  j["image"] = r.image;
  j["face"] = r.face ? Json(*r.face) : Json(nullptr);
  j["attribute"] = r.attribute;
  j["label"] = r.label;
  j["p"] = r.probabilities;
  return j;
}

LabelRow label_row_from_json(const Json& j, const LabelsSchema& schema) {
  LabelRow r;
  r.image = j.at("image").get<std::string>();
  if (!j.at("face").is_null()) r.face = j.at("face").get<std::size_t>();
  r.attribute = j.at("attribute").get<std::size_t>();
  r.label = j.at("label").get<std::string>();
  r.probabilities = j.at("p").get<std::vector<double>>();
  if (r.attribute >= schema.attributes.size()) throw std::out_of_range("attribute out of range");
  const std::size_t classes = schema.classes[r.attribute].size();
  if (!r.probabilities.empty() && r.probabilities.size() != classes) {
    throw std::out_of_range("probabilities do not match the attribute's classes");
  }
  for (double p : r.probabilities) {
    if (!std::isfinite(p)) throw std::out_of_range("a probability is not finite");
  }
  return r;
}

Json read_label_json(const fs::path& path, const std::string& what, const std::string& fix) {
  try {
    return parse_json(read_file_text(path, what), path.string());
  } catch (const InputError& e) {
    VLBIAS_FAIL(UsageError, "{} is not a readable {} ({}); {}.", path.string(), what, e.what(),
                fix);
  }
}

struct LabelCheckpoint {
  fs::path partial;
  std::size_t chunk = 0, chunks = 0, n = 0;
  Shard shard;
  bool owns(std::size_t c) const { return shard_of_chunk(c, shard.count) == shard.index; }
  std::size_t end(std::size_t c) const { return std::min(n, (c + 1) * chunk); }
};

void open_label_checkpoint(const LabelCheckpoint& cp, const Json& job, bool resume) {
  if (fs::exists(fs::symlink_status(cp.partial))) {
    VLBIAS_CHECK(resume, UsageError,
                 "{} holds an interrupted run; pass --resume to continue it, or delete the folder "
                 "to start over.",
                 cp.partial.string());
    const std::string fix = "delete " + cp.partial.string() + " to start over";
    const Json previous = read_label_json(cp.partial / "job.json", "checkpoint", fix);
    for (const auto& [key, value] : job.items()) {
      VLBIAS_CHECK(previous.is_object() && previous.contains(key) && previous[key] == value,
                   UsageError,
                   "Cannot resume {}: its '{}' differs from this run's ({} there, {} here); {}.",
                   cp.partial.string(), key,
                   previous.is_object() && previous.contains(key) ? previous[key].dump() : "none",
                   value.dump(), fix);
    }
    return;
  }
  make_output_folders(cp.partial.parent_path(), cp.partial.filename());
  write_file_atomically(cp.partial / "job.json", job.dump(2) + "\n");
}

// The finished chunks of this shard whose items are still the same bytes; a chunk with an item
// changed since is removed (labelled again).
std::vector<bool> finished_label_chunks(const LabelCheckpoint& cp, const LabelItems& items,
                                        const std::vector<std::string>& names,
                                        const LabelsSchema& schema) {
  std::vector<bool> done(cp.chunks, false);
  std::vector<std::size_t> rows;
  std::vector<std::string> recorded;
  const std::string fix = "delete " + cp.partial.string() + " to start over";
  for (std::size_t c = 0; c < cp.chunks; ++c) {
    const fs::path file = cp.partial / label_chunk_name(c);
    if (!cp.owns(c) || !fs::exists(file)) continue;
    const LabelChunk k = label_chunk_from_json(read_label_json(file, "checkpoint chunk", fix),
                                               schema, file.string(), fix);
    const std::size_t begin = c * cp.chunk;
    VLBIAS_CHECK(k.chunk == c && k.names.size() == cp.end(c) - begin &&
                     std::equal(k.names.begin(), k.names.end(), names.begin() + begin),
                 UsageError, "{} does not hold the items of chunk {}; {}.", file.string(), c, fix);
    done[c] = true;
    for (std::size_t i = 0; i < k.sha256.size(); ++i) {
      rows.push_back(begin + i);
      recorded.push_back(k.sha256[i]);
    }
  }
  const std::vector<std::string> now = job_images_sha256(label_hash_items(items), rows);
  std::vector<std::string> changed;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (now[i] == recorded[i]) continue;
    const std::size_t c = rows[i] / cp.chunk;
    if (done[c]) fs::remove(cp.partial / label_chunk_name(c));
    done[c] = false;
    changed.push_back(names[rows[i]]);
  }
  if (!changed.empty()) {
    const std::size_t n = changed.size();
    if (n > 10) changed.resize(10);
    warn("{} item{} changed since {} labelled {}: {}{}; labelling {} again.", n, n == 1 ? "" : "s",
         cp.partial.string(), n == 1 ? "it" : "them", fmt::join(changed, ", "),
         n > 10 ? ", ..." : "", n == 1 ? "its chunk" : "their chunks");
  }
  return done;
}

}  // namespace

std::vector<std::string> label_item_names(const LabelItems& items) {
  std::vector<std::string> names;
  names.reserve(items.image.size());
  for (std::size_t k = 0; k < items.image.size(); ++k) {
    names.push_back(items.face[k] ? fmt::format("{}#face{}", items.image[k], *items.face[k])
                                  : items.image[k]);
  }
  return names;
}

Json label_chunk_json(const LabelChunk& chunk) {
  Json rows = Json::array();
  for (const LabelRow& r : chunk.rows) rows.push_back(label_row_json(r));
  Json j = Json::object();
  j["chunk"] = chunk.chunk;
  j["labelled"] = chunk.labelled;
  j["failed"] = chunk.failed;
  j["names"] = chunk.names;
  j["sha256"] = chunk.sha256;
  j["rows"] = std::move(rows);
  return j;
}

LabelChunk label_chunk_from_json(const Json& j, const LabelsSchema& schema,
                                 const std::string& where, const std::string& fix) {
  LabelChunk k;
  try {
    k.chunk = j.at("chunk").get<std::size_t>();
    k.labelled = j.at("labelled").get<std::size_t>();
    k.failed = j.at("failed").get<std::size_t>();
    k.names = j.at("names").get<std::vector<std::string>>();
    k.sha256 = j.at("sha256").get<std::vector<std::string>>();
    for (const Json& r : j.at("rows")) k.rows.push_back(label_row_from_json(r, schema));
  } catch (const std::exception& e) {
    VLBIAS_FAIL(UsageError, "{}: not the records of a label chunk ({}); {}.", where, e.what(), fix);
  }
  VLBIAS_CHECK(k.sha256.size() == k.names.size() && k.labelled + k.failed == k.names.size(),
               UsageError, "{}: its counts do not match its {} items; {}.", where, k.names.size(),
               fix);
  return k;
}

Json label_job_json(const LabelJobSpec& spec, std::size_t chunk) {
  const LabelsProvenance& p = spec.provenance;
  Json j = Json::object();
  j["labeller"] = p.labeller;
  j["model"] = p.model;
  j["weights_sha256"] = p.weights_sha256;
  j["prompt_set"] = p.prompt_set;
  Json options = Json::object();
  for (const auto& [key, value] : p.options) options[key] = value;
  j["options"] = options;
  j["attributes"] = spec.schema.attributes;
  j["classes"] = spec.schema.classes;
  j["input"] = spec.input.string();
  j["items"] = spec.items.path.size();
  j["items_sha256"] = job_items_sha256(label_item_names(spec.items));
  j["chunk"] = chunk;
  j["batch"] = spec.batch;
  j["shard"] = shard_json(spec.job.shard, kChunkScheme);
  return j;
}

LabelsSchema label_job_schema(const Json& job, const std::string& where) {
  LabelsSchema s;
  try {
    s.attributes = job.at("attributes").get<std::vector<std::string>>();
    s.classes = job.at("classes").get<std::vector<std::vector<std::string>>>();
  } catch (const std::exception& e) {
    VLBIAS_FAIL(InputError, "{}: the job has no attributes and classes ({}).", where, e.what());
  }
  VLBIAS_CHECK(s.attributes.size() == s.classes.size() && !s.attributes.empty(), InputError,
               "{}: the job has {} attributes and {} class lists.", where, s.attributes.size(),
               s.classes.size());
  return s;
}

LabelsProvenance label_job_provenance(const Json& job, const std::string& where) {
  LabelsProvenance p;
  try {
    p.labeller = job.at("labeller").get<std::string>();
    p.model = job.at("model").get<std::string>();
    p.weights_sha256 = job.at("weights_sha256").get<std::string>();
    p.prompt_set = job.at("prompt_set").get<std::string>();
    for (const auto& [key, value] : job.at("options").items()) {
      p.options[key] = value.get<std::string>();
    }
  } catch (const std::exception& e) {
    VLBIAS_FAIL(InputError, "{}: the job lacks its provenance ({}).", where, e.what());
  }
  return p;
}

LabelRunCounts run_label_job(const LabelJobSpec& spec, const LabelChunkFn& label) {
  LabelCheckpoint cp;
  cp.partial = fs::path(spec.out.string() + kLabelsPartialSuffix);
  cp.chunk = spec.job.chunk == 0 ? kDefaultLabelChunk : spec.job.chunk;
  VLBIAS_CHECK(cp.chunk <= 1000000, UsageError,
               "--chunk {}: expected at most 1000000 items per checkpoint.", cp.chunk);
  cp.n = spec.items.path.size();
  cp.chunks = (cp.n + cp.chunk - 1) / cp.chunk;
  cp.shard = spec.job.shard;
  const Json job = label_job_json(spec, cp.chunk);
  open_label_checkpoint(cp, job, spec.job.resume);
  const std::vector<std::string> names = label_item_names(spec.items);
  const std::vector<bool> done = finished_label_chunks(cp, spec.items, names, spec.schema);
  const JobItems hash_items = label_hash_items(spec.items);

  LabelRunCounts result;
  result.faces = spec.items.faces;
  for (std::size_t c = 0; c < cp.chunks; ++c) {
    if (!cp.owns(c)) continue;
    const std::size_t begin = c * cp.chunk, end = cp.end(c);
    result.items += end - begin;
    if (done[c]) {
      result.resumed += end - begin;
      continue;
    }
    LabelChunk k;
    k.chunk = c;
    LabelRunCounts counts;
    label(begin, end, k.rows, counts);
    k.labelled = counts.labelled;
    k.failed = counts.failed;
    k.names.assign(names.begin() + static_cast<std::ptrdiff_t>(begin),
                   names.begin() + static_cast<std::ptrdiff_t>(end));
    std::vector<std::size_t> rows;
    for (std::size_t i = begin; i < end; ++i) rows.push_back(i);
    k.sha256 = job_images_sha256(hash_items, rows);
    write_file_atomically(cp.partial / label_chunk_name(c), label_chunk_json(k).dump() + "\n");
  }
  // Every chunk of the shard from its file, in order: the output is the same whether a chunk was
  // labelled now or resumed.
  std::vector<LabelRow> rows;
  Json chunks = Json::array();
  const std::string fix = "delete " + cp.partial.string() + " to start over";
  for (std::size_t c = 0; c < cp.chunks; ++c) {
    if (!cp.owns(c)) continue;
    const fs::path file = cp.partial / label_chunk_name(c);
    Json j = read_label_json(file, "checkpoint chunk", fix);
    LabelChunk k = label_chunk_from_json(j, spec.schema, file.string(), fix);
    result.labelled += k.labelled;
    result.failed += k.failed;
    for (LabelRow& r : k.rows) rows.push_back(std::move(r));
    if (!spec.job.shard.whole()) chunks.push_back(std::move(j));
  }
  result.rows = rows.size();
  write_labels_table(spec.out, spec.schema, spec.provenance, rows);
  if (!spec.job.shard.whole()) {
    Json shard = Json::object();
    shard["kind"] = "vlbias label shard";
    shard["job"] = job;
    shard["chunks"] = std::move(chunks);
    write_file_atomically(spec.out.string() + kLabelsShardSuffix, shard.dump() + "\n");
  }
  fs::remove_all(cp.partial);
  return result;
}

}  // namespace vlbias::labels_internal
