// `vlbias generate t2i`: the Stable Diffusion web UI txt2img API and the OpenAI images API
// (generate.h).
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "job.h"
#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace fs = std::filesystem;
using namespace generate_internal;

namespace {

const std::vector<std::string> kT2iAddedColumns = {"image", "sample", "seed",
                                                   "model", "sha256", "revised_prompt"};
const std::vector<std::string> kOutcomeColumns = {"status", "reason"};

const char* api_name(T2iApi api) {
  return api == T2iApi::SdWebui ? "sd-webui" : "openai-images";
}

// The seed the web UI reports having used: `info` is a JSON text with "seed" (or
// "all_seeds"). nullopt when it does not say.
std::optional<std::int64_t> reported_seed(const Json& response) {
  const auto info = response.find("info");
  if (info == response.end() || !info->is_string()) return std::nullopt;
  const ParsedJson parsed = try_parse_json(info->get<std::string>());
  const Json& j = parsed.value;
  if (!j.is_object()) return std::nullopt;
  if (j.contains("seed") && j["seed"].is_number_integer()) return j["seed"].get<std::int64_t>();
  if (j.contains("all_seeds") && j["all_seeds"].is_array() && !j["all_seeds"].empty() &&
      j["all_seeds"][0].is_number_integer())
    return j["all_seeds"][0].get<std::int64_t>();
  return std::nullopt;
}

// Everything generate_t2i checks before the first request; the OpenAI size as pixels.
std::optional<std::pair<std::size_t, std::size_t>> check_t2i_job(const T2iJob& job) {
  VLBIAS_CHECK(!job.endpoint.url.empty(), UsageError, "endpoint.url is required");
  check_request_settings(job.endpoint, job.control);
  VLBIAS_CHECK(job.images_per_prompt >= 1 && job.images_per_prompt <= kMaxImagesPerPrompt,
               UsageError, "images_per_prompt must be an integer from 1 to {}, got {}",
               kMaxImagesPerPrompt, job.images_per_prompt);
  VLBIAS_CHECK(
      job.api == T2iApi::OpenAiImages ||
          (job.steps >= 1 && job.steps <= kMaxSteps && job.width >= kMinImageSide &&
           job.width <= kMaxImageSide && job.height >= kMinImageSide &&
           job.height <= kMaxImageSide && job.cfg_scale >= 0 && job.cfg_scale <= kMaxCfgScale),
      UsageError,
      "sd_webui needs steps from 1 to {}, width and height from {} to {} and cfg_scale "
      "from 0 to {}",
      kMaxSteps, kMinImageSide, kMaxImageSide, kMaxCfgScale);
  const auto openai_pixels = openai_size_pixels(job.size);
  VLBIAS_CHECK(job.api == T2iApi::SdWebui || openai_pixels.has_value(), UsageError,
               "openai.size must be WIDTHxHEIGHT (each 1 to {}) or auto, got '{}'", kMaxImageSide,
               job.size);
  VLBIAS_CHECK(job.seed + job.images_per_prompt - 1 >= job.seed &&
                   job.seed + job.images_per_prompt - 1 <= 0xFFFFFFFFull,
               UsageError,
               "seed + images_per_prompt - 1 must fit in 32 bits (the web UI's seed range)");
  return openai_pixels;
}

// What shapes the images: the API and its settings.
Json t2i_fingerprint(const T2iJob& job) {
  Json fingerprint = {{"api", api_name(job.api)}, {"model", job.endpoint.model}};
  if (job.api == T2iApi::SdWebui) {
    fingerprint["negative_prompt"] = job.negative_prompt;
    fingerprint["steps"] = job.steps;
    fingerprint["cfg_scale"] = job.cfg_scale;
    fingerprint["width"] = job.width;
    fingerprint["height"] = job.height;
    fingerprint["sampler"] = job.sampler;
  } else {
    fingerprint["size"] = job.size;
    fingerprint["quality"] = job.quality;
    fingerprint["response_format"] = job.response_format;
  }
  return fingerprint;
}

std::pair<std::string, std::string> t2i_outcome(const RequestRecord& rec);

// The t2i job's parts: images_per_prompt requests per prompt row, each image saved under
// images/ROW/SAMPLE.EXT, manifest.csv listing them.
class T2iRequests final : public RequestJob {
 public:
  T2iRequests(const T2iJob& job, const fs::path& run_dir, const std::string& api_key,
              const Table& prompts, std::size_t prompt_col, std::size_t reply_limit)
      : job_(job),
        run_dir_(run_dir),
        api_key_(api_key),
        prompts_(prompts),
        prompt_col_(prompt_col),
        reply_limit_(reply_limit),
        sd_(job.api == T2iApi::SdWebui) {}

  void plan(RunFolder& folder) const override {
    for (std::size_t r = 0; r < prompts_.rows; ++r) {
      for (std::size_t i = 0; i < job_.images_per_prompt; ++i) {
        Json request = {
            {"row", r}, {"prompt", prompts_.columns[prompt_col_].text(r)}, {"sample", i}};
        if (sd_) request["seed"] = job_.seed + i;
        folder.add(fmt::format("{}|{}", r, i), request.dump());
      }
    }
  }

  HttpRequest build(const std::string& key, const std::string& text) const override {
    const Json request = stored_json(text, key);
    return post_json(job_.endpoint, sd_ ? sd_body(request) : openai_body(request), api_key_,
                     reply_limit_);
  }

  Verdict read(const std::string& key, const std::string& text,
               const HttpResponse& r) const override {
    if (r.status < 200 || r.status > 299) {
      if (content_policy_error(r.body)) {
        return {RequestStatus::Refused, Json{{"error", api_error_message(r.body)}}.dump(),
                "content_policy"};
      }
      return failed_with_message(r);
    }
    const ParsedJson parsed = try_parse_json(r.body);
    if (!parsed.ok()) return malformed(parsed);
    const Json& j = parsed.value;
    if (!j.is_object()) return {RequestStatus::Pending, "", "malformed response: not JSON"};
    std::string b64;
    Json out;
    if (const auto refused = find_image(j, b64, out)) return *refused;
    // The web UI may prefix a data URI; the image is what follows the comma.
    if (b64.rfind("data:", 0) == 0 && b64.find(',') != std::string::npos)
      b64 = b64.substr(b64.find(',') + 1);
    const std::optional<std::string> bytes = base64_decode(b64);
    if (!bytes) return {RequestStatus::Pending, "", "malformed response: the image is not base64"};
    const auto kind = sniff_image(*bytes);
    if (!kind || kind->extension == std::string("gif"))
      return {RequestStatus::Pending, "", "malformed response: not a PNG, JPEG or WebP image"};
    const Json request = stored_json(text, key);
    if (sd_) {
      const auto used = reported_seed(j);
      const std::int64_t asked = request["seed"].get<std::int64_t>();
      if (used && *used != asked) {
        return {RequestStatus::Failed, "",
                fmt::format("the server used seed {} for seed {}; the manifest would be wrong",
                            *used, asked)};
      }
      out["seed"] = asked;
    }
    const std::string file = fmt::format("images/{}/{}.{}", request["row"].get<std::size_t>(),
                                         request["sample"].get<std::size_t>(), kind->extension);
    make_output_folders(run_dir_, fs::path(file).parent_path());  // refuses planted links
    write_file_atomically(run_dir_ / file, *bytes);
    out["file"] = file;
    out["bytes"] = bytes->size();
    out["sha256"] = sha256_hex(*bytes);
    return {RequestStatus::Done, out.dump(), ""};
  }

  void export_outputs(RunFolder& folder, JobSummary& summary) const override;

  // A saved image, hard-linked from the shard (copied across file systems).
  void merge_files(const fs::path& shard_dir, const RequestRecord& rec) const override {
    if (rec.status != RequestStatus::Done) return;
    const Json response = stored_json(rec.response, rec.key);
    const std::string file = response["file"].get<std::string>();
    const fs::path from = shard_dir / file;
    std::error_code ec;
    const auto size = fs::file_size(from, ec);
    VLBIAS_CHECK(!ec && size == response["bytes"].get<std::uintmax_t>(), InputError,
                 "{}: the image {} of request '{}' is missing or not the one its store records",
                 shard_dir.string(), file, rec.key);
    make_output_folders(run_dir_, fs::path(file).parent_path());
    fs::create_hard_link(from, run_dir_ / file, ec);
    if (ec) fs::copy_file(from, run_dir_ / file, fs::copy_options::overwrite_existing);
  }

 private:
  void write_outcomes(const RunStore& store) const;
  // An empty table of `rows` rows named after RUN_DIR/name, for write_csv.
  Table output_table(const char* name, std::size_t rows) const {
    Table t;
    t.source = (run_dir_ / name).string();
    t.rows = rows;
    return t;
  }
  // The prompt table's columns of the prompt rows `rows`, one output row each.
  void add_prompt_columns(Table& out, const std::vector<std::size_t>& rows) const {
    for (const auto& c : prompts_.columns) {
      std::vector<std::string> values;
      values.reserve(rows.size());
      for (const std::size_t r : rows) values.push_back(c.text(r));
      add_string_column(out, c.name, values);
    }
  }

  Json sd_body(const Json& request) const {
    Json body;
    body["prompt"] = request["prompt"];
    body["negative_prompt"] = job_.negative_prompt;
    body["seed"] = request["seed"];
    body["steps"] = job_.steps;
    body["cfg_scale"] = job_.cfg_scale;
    body["width"] = job_.width;
    body["height"] = job_.height;
    if (!job_.sampler.empty()) body["sampler_name"] = job_.sampler;
    body["batch_size"] = 1;
    body["n_iter"] = 1;
    if (!job_.endpoint.model.empty())
      body["override_settings"] = {{"sd_model_checkpoint", job_.endpoint.model}};
    return body;
  }

  Json openai_body(const Json& request) const {
    Json body;
    if (!job_.endpoint.model.empty()) body["model"] = job_.endpoint.model;
    body["prompt"] = request["prompt"];
    body["n"] = 1;
    body["size"] = job_.size;
    if (!job_.quality.empty()) body["quality"] = job_.quality;
    if (!job_.response_format.empty()) body["response_format"] = job_.response_format;
    return body;
  }

  // The base64 image of a 2xx reply into `b64` (and OpenAI's revised prompt into `out`); the
  // verdict when the reply holds none.
  std::optional<Verdict> find_image(const Json& j, std::string& b64, Json& out) const {
    if (sd_) {
      if (!j.contains("images") || !j["images"].is_array() || j["images"].empty() ||
          !j["images"][0].is_string())
        return Verdict{RequestStatus::Pending, "", "malformed response: no images[0]"};
      b64 = j["images"][0].get<std::string>();
      return std::nullopt;
    }
    if (!j.contains("data") || !j["data"].is_array() || j["data"].empty() ||
        !j["data"][0].is_object())
      return Verdict{RequestStatus::Pending, "", "malformed response: no data[0]"};
    const Json& d = j["data"][0];
    if (!d.contains("b64_json") || !d["b64_json"].is_string()) {
      return Verdict{RequestStatus::Failed, "",
                     d.contains("url") ? "the endpoint answered with a URL, not the image; set "
                                         "openai.response_format: b64_json"
                                       : "malformed response: no data[0].b64_json"};
    }
    b64 = d["b64_json"].get<std::string>();
    if (d.contains("revised_prompt") && d["revised_prompt"].is_string())
      out["revised_prompt"] = d["revised_prompt"];
    return std::nullopt;
  }

  const T2iJob& job_;
  const fs::path run_dir_;
  const std::string& api_key_;
  const Table& prompts_;
  const std::size_t prompt_col_;
  const std::size_t reply_limit_;
  const bool sd_;
};

// manifest.csv: one row per saved image, in request order.
void T2iRequests::export_outputs(RunFolder& folder, JobSummary& summary) const {
  std::vector<std::string> image, sample, seed, model, sha, revised;
  std::vector<std::size_t> rows;
  folder.store().for_each([&](const RequestRecord& rec) {
    if (rec.status != RequestStatus::Done) return;
    const Json request = stored_json(rec.request, rec.key);
    const Json response = stored_json(rec.response, rec.key);
    rows.push_back(request["row"].get<std::size_t>());
    image.push_back(response["file"].get<std::string>());
    sample.push_back(std::to_string(request["sample"].get<std::size_t>()));
    seed.push_back(response.contains("seed") ? std::to_string(response["seed"].get<std::int64_t>())
                                             : "");
    model.push_back(job_.endpoint.model);
    sha.push_back(response["sha256"].get<std::string>());
    revised.push_back(response.value("revised_prompt", ""));
  });
  Table out = output_table("manifest.csv", rows.size());
  add_string_column(out, "image", image);
  add_prompt_columns(out, rows);
  add_string_column(out, "sample", sample);
  add_string_column(out, "seed", seed);
  add_string_column(out, "model", model);
  add_string_column(out, "sha256", sha);
  add_string_column(out, "revised_prompt", revised);
  write_csv(out, (run_dir_ / "manifest.csv").string());
  summary.exported = rows.size();
  summary.outputs.push_back("manifest.csv");
  write_outcomes(folder.store());
  summary.outputs.push_back("outcomes.csv");
}

// What became of a request: "ok", "refused" (a content-policy answer), "failed" (retries spent
// or an answer that cannot be an image) or "pending" (not sent yet: the run was interrupted);
// with the refusal's or failure's message. The web UI's NSFW filter answers with an ordinary
// (black) image, which is "ok" here: telling it apart would mean decoding every image.
std::pair<std::string, std::string> t2i_outcome(const RequestRecord& rec) {
  switch (rec.status) {
    case RequestStatus::Done:
      return {"ok", ""};
    case RequestStatus::Refused: {
      const Json response = try_parse_json(rec.response).value;
      const std::string message =
          response.is_object() && response.contains("error") && response["error"].is_string()
              ? response["error"].get<std::string>()
              : "";
      return {"refused", message.empty() ? rec.error : rec.error + ": " + message};
    }
    case RequestStatus::Failed:
      return {"failed", rec.error};
    case RequestStatus::Pending:
      break;
  }
  return {"pending", rec.error};
}

// outcomes.csv: one row per requested image (saved or not), in request order, so that the
// audits can count what the endpoint refused per group. Rebuilt from the whole store on every
// run, so a resumed run's table covers the earlier runs' requests too.
void T2iRequests::write_outcomes(const RunStore& store) const {
  std::vector<std::string> sample, seed, status, reason;
  std::vector<std::size_t> rows;
  store.for_each([&](const RequestRecord& rec) {
    const Json request = stored_json(rec.request, rec.key);
    rows.push_back(request["row"].get<std::size_t>());
    sample.push_back(std::to_string(request["sample"].get<std::size_t>()));
    seed.push_back(request.contains("seed") ? std::to_string(request["seed"].get<std::int64_t>())
                                            : "");
    auto outcome = t2i_outcome(rec);
    status.push_back(std::move(outcome.first));
    reason.push_back(std::move(outcome.second));
  });
  Table out = output_table("outcomes.csv", rows.size());
  add_prompt_columns(out, rows);
  add_string_column(out, "sample", sample);
  add_string_column(out, "seed", seed);
  add_string_column(out, "status", status);
  add_string_column(out, "reason", reason);
  write_csv(out, (run_dir_ / "outcomes.csv").string());
}

}  // namespace

namespace generate_internal {

Json t2i_job_json(const T2iJob& job) {
  return {{"endpoint", endpoint_json(job.endpoint)},
          {"api", api_name(job.api)},
          {"prompts", absolute_path(job.prompts)},
          {"prompt_column", job.prompt_column},
          {"images_per_prompt", job.images_per_prompt},
          {"seed", job.seed},
          {"negative_prompt", job.negative_prompt},
          {"steps", job.steps},
          {"cfg_scale", job.cfg_scale},
          {"width", job.width},
          {"height", job.height},
          {"sampler", job.sampler},
          {"size", job.size},
          {"quality", job.quality},
          {"response_format", job.response_format},
          {"spec_path", absolute_path(job.spec_path)}};
}

T2iJob t2i_job_from_json(const Json& j) {
  T2iJob job;
  job.endpoint = endpoint_from_json(j.at("endpoint"));
  job.api = j.at("api").get<std::string>() == "sd-webui" ? T2iApi::SdWebui : T2iApi::OpenAiImages;
  job.prompts = j.at("prompts").get<std::string>();
  job.prompt_column = j.at("prompt_column").get<std::string>();
  job.images_per_prompt = j.at("images_per_prompt").get<std::size_t>();
  job.seed = j.at("seed").get<std::uint64_t>();
  job.negative_prompt = j.at("negative_prompt").get<std::string>();
  job.steps = j.at("steps").get<std::size_t>();
  job.cfg_scale = j.at("cfg_scale").get<double>();
  job.width = j.at("width").get<std::size_t>();
  job.height = j.at("height").get<std::size_t>();
  job.sampler = j.at("sampler").get<std::string>();
  job.size = j.at("size").get<std::string>();
  job.quality = j.at("quality").get<std::string>();
  job.response_format = j.at("response_format").get<std::string>();
  job.spec_path = j.at("spec_path").get<std::string>();
  return job;
}

}  // namespace generate_internal

std::optional<std::pair<std::size_t, std::size_t>> openai_size_pixels(std::string_view size) {
  if (size == "auto") return std::pair{kOpenAiAutoSide, kOpenAiAutoSide};
  const auto x = size.find('x');
  if (x == std::string_view::npos) return std::nullopt;
  auto side = [](std::string_view digits) -> std::optional<std::size_t> {
    std::size_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || end != digits.data() + digits.size() || v < 1 || v > kMaxImageSide)
      return std::nullopt;
    return v;
  };
  const auto w = side(size.substr(0, x)), h = side(size.substr(x + 1));
  if (!w || !h) return std::nullopt;
  return std::pair{*w, *h};
}

JobSummary generate_t2i(const T2iJob& job, const fs::path& run_dir) {
  const auto openai_pixels = check_t2i_job(job);
  const std::string api_key = read_api_key(job.endpoint, job.control);
  const Table prompts = read_table(job.prompts.string());
  VLBIAS_CHECK(prompts.rows > 0, InputError, "{}: the prompt table has no rows",
               job.prompts.string());
  const std::size_t prompt_col = *prompts.find(prompts.column(job.prompt_column).name);
  check_added_columns(prompts, job.prompts, "the prompt table", kT2iAddedColumns, "manifest.csv");
  check_added_columns(prompts, job.prompts, "the prompt table", kOutcomeColumns, "outcomes.csv");
  for (std::size_t r = 0; r < prompts.rows; ++r) {
    VLBIAS_CHECK(!prompts.columns[prompt_col].text(r).empty(), InputError,
                 "{} line {}: empty prompt in column '{}'", job.prompts.string(),
                 prompts.line_of_row[r], job.prompt_column);
  }

  const std::size_t reply_limit =
      job.api == T2iApi::SdWebui
          ? image_reply_limit(job.control, job.width, job.height)
          : image_reply_limit(job.control, openai_pixels->first, openai_pixels->second);
  JobRecord record{.kind = "generate-t2i",
                   .label = "t2i requests",
                   .endpoint = job.endpoint,
                   .control = job.control,
                   .api_key = api_key,
                   .fingerprint = t2i_fingerprint(job),
                   .parameters = {{"prompt_column", job.prompt_column},
                                  {"images_per_prompt", job.images_per_prompt},
                                  {"seed", job.seed}},
                   .inputs = {job.prompts},
                   .spec_text = job.spec_text,
                   .job = t2i_job_json(job),
                   .shard_key = "the request key (PROMPT_ROW|SAMPLE)",
                   .input_rows = prompts.rows};
  if (!job.spec_path.empty()) record.inputs.push_back(job.spec_path);
  return run_request_job(run_dir, record,
                         T2iRequests(job, run_dir, api_key, prompts, prompt_col, reply_limit));
}

}  // namespace vlbias
