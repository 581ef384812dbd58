// What the generation and scoring jobs share (job.h).
#include "job.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/sha256.h"
#include "vlbias/core/timestamp.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/run/shard.h"
#include "vlbias/version.h"

namespace vlbias::generate_internal {

namespace fs = std::filesystem;

std::optional<ImageKind> sniff_image(std::string_view b) {
  if (b.size() >= 8 && b.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8))
    return ImageKind{"image/png", "png"};
  if (b.size() >= 3 && b.substr(0, 3) == "\xff\xd8\xff") return ImageKind{"image/jpeg", "jpg"};
  if (b.size() >= 6 && (b.substr(0, 6) == "GIF87a" || b.substr(0, 6) == "GIF89a"))
    return ImageKind{"image/gif", "gif"};
  if (b.size() >= 12 && b.substr(0, 4) == "RIFF" && b.substr(8, 4) == "WEBP")
    return ImageKind{"image/webp", "webp"};
  return std::nullopt;
}

void check_request_settings(const Endpoint& e, const JobControl& c) {
  // Written so that NaN fails every check.
  VLBIAS_CHECK(e.timeout_s >= kMinTimeoutS && e.timeout_s <= kMaxTimeoutS, UsageError,
               "endpoint.timeout_s (--timeout) must be between {} and {} seconds, got {}",
               kMinTimeoutS, kMaxTimeoutS, e.timeout_s);
  VLBIAS_CHECK(c.concurrency >= 1 && c.concurrency <= kMaxConcurrency, UsageError,
               "requests.concurrency (--concurrency) must be an integer from 1 to {}, got {}",
               kMaxConcurrency, c.concurrency);
  VLBIAS_CHECK(c.max_qps == 0 || (c.max_qps >= kMinQps && c.max_qps <= kMaxQps), UsageError,
               "requests.max_qps (--max-qps) must be 0 (no limit) or between {} and {}, got {}",
               kMinQps, kMaxQps, c.max_qps);
  VLBIAS_CHECK(c.retry.max_attempts >= 1 && c.retry.max_attempts <= kMaxAttempts, UsageError,
               "requests.max_attempts (--max-attempts) must be an integer from 1 to {}, got {}",
               kMaxAttempts, c.retry.max_attempts);
  VLBIAS_CHECK(c.retry.base_delay_s >= 0 && c.retry.base_delay_s <= kMaxRetryDelayS, UsageError,
               "requests.base_delay_s must be between 0 and {} seconds, got {}", kMaxRetryDelayS,
               c.retry.base_delay_s);
  VLBIAS_CHECK(c.retry.max_delay_s >= 0 && c.retry.max_delay_s <= kMaxRetryDelayS, UsageError,
               "requests.max_delay_s must be between 0 and {} seconds, got {}", kMaxRetryDelayS,
               c.retry.max_delay_s);
  VLBIAS_CHECK(c.max_response_bytes == 0 || (c.max_response_bytes >= kMinResponseBytes &&
                                             c.max_response_bytes <= kMaxResponseBytes),
               UsageError,
               "requests.max_response_bytes (--max-response-bytes) must be an integer from {} to "
               "{}, got {}",
               kMinResponseBytes, kMaxResponseBytes, c.max_response_bytes);
}

std::string read_api_key(const Endpoint& endpoint, const JobControl& control) {
  if (endpoint.api_key_env.empty() || control.merge) return "";
  const char* value = std::getenv(endpoint.api_key_env.c_str());
  VLBIAS_CHECK(value != nullptr && *value != '\0', UsageError,
               "the API key variable {} is not set (or empty); export it before the run (keys "
               "are read from the environment only)",
               endpoint.api_key_env);
  return value;
}

Redactor secrets_of(const Endpoint& endpoint, const std::string& api_key) {
  Redactor r;
  r.add(api_key);
  r.add_url_query(endpoint.url);
  return r;
}

std::size_t chat_reply_limit(const JobControl& control, std::size_t max_tokens) {
  if (control.max_response_bytes > 0) return control.max_response_bytes;
  return kChatReplyBaseBytes + kChatReplyBytesPerToken * max_tokens;
}

std::size_t image_reply_limit(const JobControl& control, std::size_t width, std::size_t height) {
  if (control.max_response_bytes > 0) return control.max_response_bytes;
  return kImageReplyBaseBytes + kImageReplyBytesPerPixel * width * height;
}

std::size_t perspective_reply_limit(const JobControl& control) {
  return control.max_response_bytes > 0 ? control.max_response_bytes : kPerspectiveReplyBytes;
}

std::size_t moderation_reply_limit(const JobControl& control) {
  return control.max_response_bytes > 0 ? control.max_response_bytes : kModerationReplyBytes;
}

HttpRequest post_json(const Endpoint& endpoint, const Json& body, const std::string& api_key,
                      std::size_t max_response_bytes, const std::string& key_header) {
  HttpRequest h;
  h.url = endpoint.url;
  h.max_response_bytes = max_response_bytes;
  h.headers = {{"Content-Type", "application/json"}};
  if (!api_key.empty())
    h.headers.emplace_back(key_header,
                           key_header == "Authorization" ? "Bearer " + api_key : api_key);
  h.body = body.dump();
  h.timeout_s = endpoint.timeout_s;
  return h;
}

std::string url_for_record(const std::string& url) {
  return url.substr(0, url.find_first_of("?#"));
}

std::string api_error_message(const std::string& body) {
  const ParsedJson parsed = try_parse_json(body);
  const Json& j = parsed.value;
  std::string message;
  if (j.is_object()) {
    const auto error = j.find("error");
    if (error != j.end() && error->is_object()) {
      const auto m = error->find("message");
      if (m != error->end() && m->is_string()) message = m->get<std::string>();
    } else if (error != j.end() && error->is_string()) {
      message = error->get<std::string>();  // Ollama
    } else if (j.contains("message") && j["message"].is_string()) {
      message = j["message"].get<std::string>();  // vLLM's {"object": "error", ...}
    }
  }
  if (message.size() > 300) message = message.substr(0, 297) + "...";
  return message;
}

bool content_policy_error(const std::string& body) {
  const ParsedJson parsed = try_parse_json(body);
  const Json& j = parsed.value;
  if (!j.is_object()) return false;
  const auto error = j.find("error");
  const Json& e = error != j.end() && error->is_object() ? *error : j;
  for (const char* field : {"code", "type"}) {
    const auto f = e.find(field);
    if (f == e.end() || !f->is_string()) continue;
    const std::string v = f->get<std::string>();
    if (v == "content_filter" || v == "content_policy_violation" || v == "moderation_blocked")
      return true;
  }
  return false;
}

RunFolder::RunFolder(const fs::path& run_dir, const std::string& kind, const Json& fingerprint,
                     const JobControl& control, Redactor redact, Group group)
    : dir_(run_dir),
      kind_(kind),
      print_({{"kind", kind}, {"request", fingerprint}}),
      control_(control),
      group_(std::move(group)),
      redact_(std::move(redact)),
      started_utc_(utc_now()),
      lock_(run_dir) {
  const fs::path store_path = run_dir / "store.sqlite";
  if (control.merge) {
    VLBIAS_CHECK(!fs::exists(store_path), UsageError,
                 "{} already holds a run ({}); merge into a new folder", run_dir.string(),
                 store_path.string());
  } else if (fs::exists(store_path) && !control.resume) {
    VLBIAS_FAIL(UsageError,
                "{} already holds a run ({}); pass --resume to continue it, or choose another "
                "--out",
                run_dir.string(), store_path.string());
  }
  store_ = std::make_unique<RunStore>(store_path,
                                      fingerprint_of(control.shard.index, control.shard.count));
}

std::string RunFolder::fingerprint_of(std::size_t index, std::size_t count) const {
  if (count == 1) return print_.dump();  // a whole job's, as before shards existed
  Json print = print_;
  print["shard"] = {{"index", index}, {"count", count}};
  return print.dump();
}

RunFolder::~RunFolder() {
  store_.reset();  // before the lock is released
}

bool RunFolder::holds(const std::string& key) const {
  const Shard& shard = control_.shard;
  return shard.whole() || shard_of_key(group_(key), shard.count) == shard.index;
}

void RunFolder::add(std::string key, std::string request) {
  if (!holds(key)) return;
  queued_.emplace_back(std::move(key), std::move(request));
  if (queued_.size() >= kBatch) flush();
}

void RunFolder::flush() {
  added_ += store_->add(queued_);
  queued_.clear();
}

JobSummary RunFolder::run(const BuildRequest& build, const ReadResponse& read,
                          const std::string& label) {
  flush();
  JobSummary summary;
  summary.kind = kind_;
  summary.added = added_;
  if (control_.retry_failed) store_->retry_failed();
  DriveOptions options;
  options.concurrency = control_.concurrency;
  options.max_qps = control_.max_qps;
  options.retry = control_.retry;
  options.seed = control_.seed;
  options.label = label;
  options.redact = redact_;
  summary.drive = drive(*store_, build, read, options);
  finish_summary(summary);
  return summary;
}

void RunFolder::finish_summary(JobSummary& summary) {
  summary.counts = store_->counts();
  store_->export_jsonl(dir_ / "requests.jsonl");
  summary.outputs.push_back("requests.jsonl");
  if (summary.counts.failed > 0) {
    summary.warnings.push_back(fmt::format(
        "{} of {} requests failed (see {}); `--resume --retry-failed` sends them again",
        summary.counts.failed, summary.counts.total(), (dir_ / "requests.jsonl").string()));
  }
}

void RunFolder::write_run_json(JobSummary& summary, const Endpoint& endpoint,
                               const Json& parameters, const Json& inputs,
                               const std::string& spec_text, const Json& extra) {
  Json out;
  out["kind"] = summary.kind;
  out["vlbias_version"] = VLBIAS_VERSION;
  out["started_utc"] = started_utc_;
  out["finished_utc"] = utc_now();
  out["endpoint"] = {{"url", url_for_record(endpoint.url)},
                     {"model", endpoint.model},
                     {"api_key_env", endpoint.api_key_env},
                     {"timeout_s", endpoint.timeout_s}};
  if (!summary.served_models.empty()) out["endpoint"]["served_models"] = summary.served_models;
  out["store"] = store_json(summary);
  out["store"]["exported"] = summary.exported;
  out["this_run"] = this_run_json(summary);
  out["this_run"].update(Json{{"concurrency", control_.concurrency},
                              {"max_qps", control_.max_qps},
                              {"max_attempts", control_.retry.max_attempts},
                              {"resumed", control_.resume}});
  out["parameters"] = parameters;
  out["inputs"] = inputs;
  out["outputs"] = summary.outputs;
  out["warnings"] = summary.warnings;
  if (!spec_text.empty()) out["spec"] = redact_(spec_text);
  for (const auto& [key, value] : extra.items()) out[key] = value;
  write_file_atomically(dir_ / "run.json",
                        out.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  summary.outputs.push_back("run.json");
  for (const auto& w : summary.warnings) warn("{}", w);
}

namespace {

// The inputs' records; for a merge, checked against what the shards read.
Json input_records(const JobRecord& record) {
  Json inputs = Json::array();
  for (const fs::path& input : record.inputs) inputs.push_back(input_record(input));
  if (!record.control.merge) return inputs;
  const MergeSources& merge = *record.control.merge;
  VLBIAS_CHECK(inputs.size() == merge.input_sha256.size(), InputError,
               "{}: its run.json lists {} inputs where this job reads {}", merge.shards[0].string(),
               merge.input_sha256.size(), inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    VLBIAS_CHECK(inputs[i]["sha256"] == merge.input_sha256[i], InputError,
                 "{} changed since the shards read it (its sha256 is not the one {}/run.json "
                 "records)",
                 record.inputs[i].string(), merge.shards[0].string());
  }
  return inputs;
}

// run.json's shard, job and (a merge's) merged_from.
Json shard_record(const JobRecord& record) {
  const JobControl& control = record.control;
  Shard shard = control.shard;
  if (control.merge) shard.source = fmt::format("merge of {} shards", control.merge->shards.size());
  Json extra;
  extra["shard"] = shard_json(shard, kKeyScheme);
  extra["shard"]["key"] = record.shard_key;
  extra["shard"]["input_rows"] = record.input_rows;
  extra["job"] = record.job;
  if (control.merge) {
    extra["merged_from"] = Json::array();
    for (std::size_t i = 0; i < control.merge->shards.size(); ++i)
      extra["merged_from"].push_back({{"dir", control.merge->shards[i].string()}, {"shard", i}});
  }
  return extra;
}

}  // namespace

JobSummary run_request_job(const fs::path& run_dir, const JobRecord& record,
                           const RequestJob& job) {
  // A merge checks its inputs before writing anything; a run records them at the end.
  Json inputs = record.control.merge ? input_records(record) : Json();
  RunFolder folder(run_dir, record.kind, record.fingerprint, record.control,
                   secrets_of(record.endpoint, record.api_key),
                   [&job](const std::string& key) { return job.shard_group(key); });
  job.plan(folder);
  const BuildRequest build = [&job](const std::string& key, const std::string& request) {
    return job.build(key, request);
  };
  const ReadResponse read = [&job](const std::string& key, const std::string& request,
                                   const HttpResponse& response) {
    return job.read(key, request, response);
  };
  JobSummary summary =
      record.control.merge ? folder.merge(job) : folder.run(build, read, record.label);
  job.export_outputs(folder, summary);

  Json parameters = record.fingerprint;
  for (const auto& [key, value] : record.parameters.items()) parameters[key] = value;
  if (!record.control.merge) inputs = input_records(record);
  folder.write_run_json(summary, record.endpoint, parameters, inputs, record.spec_text,
                        shard_record(record));
  return summary;
}

void check_added_columns(const Table& table, const fs::path& path, const std::string& what,
                         const std::vector<std::string>& added, const std::string& output) {
  for (const auto& c : table.columns) {
    for (const auto& name : added) {
      VLBIAS_CHECK(c.name != name, UsageError, "{}: {} has a column '{}', which {} adds; rename it",
                   path.string(), what, name, output);
    }
  }
}

std::vector<RowOutcome> row_outcomes(const RunStore& store, std::size_t rows,
                                     const fs::path& input) {
  std::vector<RowOutcome> out(rows);
  store.for_each([&](const RequestRecord& rec) {
    // The keys are row numbers written by plan(); a store of a longer (or another) table
    // names rows this one lacks.
    const std::string& k = rec.key;
    const bool number =
        !k.empty() && k.size() <= 18 && (k == "0" || k[0] != '0') &&
        std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; });
    VLBIAS_CHECK(number && std::stoull(k) < rows, InputError,
                 "the run store holds request '{}', which is no row of {} ({} rows); score a "
                 "changed table into another --out",
                 k, input.string(), rows);
    RowOutcome& o = out[std::stoull(k)];
    o.sent = true;
    o.status = rec.status;
    if (rec.status == RequestStatus::Done || rec.status == RequestStatus::Refused)
      o.response = stored_json(rec.response, rec.key);
    o.error = rec.error.empty() ? to_string(rec.status) : rec.error;
  });
  return out;
}

std::vector<std::string> served_models(const std::vector<RowOutcome>& outcomes) {
  std::vector<std::string> models;
  for (const RowOutcome& o : outcomes) {
    if (!o.response.is_object()) continue;
    const auto m = o.response.find("model");
    if (m == o.response.end() || !m->is_string()) continue;
    const std::string name = m->get<std::string>();
    if (std::find(models.begin(), models.end(), name) == models.end()) models.push_back(name);
  }
  return models;
}

void write_scored_jsonl(const fs::path& path, const Table& input, const RunFolder& folder,
                        const std::function<void(std::size_t row, Json& line)>& added) {
  AtomicWriter writer(path);
  for (std::size_t r = 0; r < input.rows; ++r) {
    if (!folder.holds(std::to_string(r))) continue;
    Json line;
    for (std::size_t c = 0; c < input.columns.size(); ++c)
      line[input.columns[c].name] = cell_json(input, c, r);
    added(r, line);
    const std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
    writer.write(text.data(), text.size());
  }
  writer.commit();
}

Json stored_json(std::string_view text, const std::string& key) {
  return parse_json(text, fmt::format("the run store's record of request '{}'", key));
}

Json input_record(const fs::path& path) {
  std::error_code ec;
  const auto bytes = fs::file_size(path, ec);
  return {{"path", path.string()},
          {"bytes", ec ? 0 : static_cast<std::uint64_t>(bytes)},
          {"sha256", sha256_file(path.string())}};
}

}  // namespace vlbias::generate_internal

namespace vlbias {

Json store_json(const JobSummary& s) {
  return {{"total", s.counts.total()},
          {"done", s.counts.done},
          {"refused", s.counts.refused},
          {"failed", s.counts.failed},
          {"pending", s.counts.pending}};
}

Json this_run_json(const JobSummary& s) {
  const double elapsed = s.drive.elapsed_s;
  const std::size_t finished = s.drive.done + s.drive.refused + s.drive.failed;
  return {{"added", s.added},
          {"done", s.drive.done},
          {"refused", s.drive.refused},
          {"failed", s.drive.failed},
          {"attempts", s.drive.attempts},
          {"retries", s.drive.retries},
          {"elapsed_s", elapsed},
          {"requests_per_s", elapsed > 0 ? finished / elapsed : 0.0}};
}

}  // namespace vlbias

namespace vlbias::generate_internal {

std::string absolute_path(const fs::path& path) {
  return path.empty() ? std::string() : fs::absolute(path).lexically_normal().string();
}

Json endpoint_json(const Endpoint& e) {
  return {{"url", url_for_record(e.url)},
          {"model", e.model},
          {"api_key_env", e.api_key_env},
          {"timeout_s", e.timeout_s}};
}

Endpoint endpoint_from_json(const Json& j) {
  Endpoint e;
  e.url = j.at("url").get<std::string>();
  e.model = j.at("model").get<std::string>();
  e.api_key_env = j.at("api_key_env").get<std::string>();
  e.timeout_s = j.at("timeout_s").get<double>();
  return e;
}

}  // namespace vlbias::generate_internal
