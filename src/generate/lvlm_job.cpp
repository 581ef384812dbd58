// `vlbias generate lvlm`: OpenAI-compatible chat completions with an image (generate.h).
#include <set>

#include <fmt/format.h>

#include "job.h"
#include "vlbias/core/error.h"
#include "vlbias/io/atomic_file.h"
#include "vlbias/io/mapped_file.h"
#include "vlbias/io/table.h"

namespace vlbias {

namespace fs = std::filesystem;
using namespace generate_internal;

namespace {

// The columns generations.jsonl adds after the manifest's own.
const std::vector<std::string> kAddedColumns = {"prompt",  "seed",           "model",        "text",
                                                "refused", "refusal_reason", "finish_reason"};

// A mapped image's bytes, as sniff_image and base64_encode read them (mapped, not copied:
// only the first page is touched to check an image, the whole file once to encode it).
std::string_view bytes_of(const MappedFile& file) {
  return {reinterpret_cast<const char*>(file.data()), file.size()};
}

void check_job(const LvlmJob& job) {
  VLBIAS_CHECK(!job.endpoint.url.empty(), UsageError, "endpoint.url is required");
  check_request_settings(job.endpoint, job.control);
  VLBIAS_CHECK(!job.prompts.empty(), UsageError, "at least one prompt is required");
  std::set<std::string> names;
  for (const auto& p : job.prompts) {
    VLBIAS_CHECK(!p.name.empty() && !p.text.empty(), UsageError,
                 "every prompt needs a non-empty name and text");
    VLBIAS_CHECK(p.name.find('|') == std::string::npos, UsageError,
                 "prompt name '{}' contains '|', which separates the parts of a request key",
                 p.name);
    VLBIAS_CHECK(names.insert(p.name).second, UsageError, "prompt name '{}' is given twice",
                 p.name);
  }
  VLBIAS_CHECK(!job.seeds.empty(), UsageError, "at least one seed is required");
  VLBIAS_CHECK(
      std::set<std::uint64_t>(job.seeds.begin(), job.seeds.end()).size() == job.seeds.size(),
      UsageError, "a seed is given twice");
  VLBIAS_CHECK(job.max_tokens >= 1 && job.max_tokens <= kMaxTokens, UsageError,
               "sampling.max_tokens must be an integer from 1 to {}, got {}", kMaxTokens,
               job.max_tokens);
  VLBIAS_CHECK(job.temperature >= 0 && job.temperature <= 2, UsageError,
               "temperature must be in [0, 2], got {}", job.temperature);
  VLBIAS_CHECK(!job.top_p || (*job.top_p > 0 && *job.top_p <= 1), UsageError,
               "top_p must be in (0, 1]");
}

// The image id of every manifest row; every image must exist and be an image before the first
// request.
std::vector<std::string> check_images(const LvlmJob& job, const Table& manifest,
                                      std::size_t image_col, std::size_t id_col,
                                      const fs::path& root) {
  std::vector<std::string> ids(manifest.rows);
  std::set<std::string> seen;
  for (std::size_t r = 0; r < manifest.rows; ++r) {
    const std::size_t line = manifest.line_of_row[r];
    const std::string image = manifest.columns[image_col].text(r);
    VLBIAS_CHECK(!image.empty(), InputError, "{} line {}: no image in column '{}'",
                 job.manifest.string(), line, job.image_column);
    ids[r] = manifest.columns[id_col].text(r);
    VLBIAS_CHECK(!ids[r].empty(), InputError, "{} line {}: no id in column '{}'",
                 job.manifest.string(), line, job.id_column);
    VLBIAS_CHECK(seen.insert(ids[r]).second, InputError,
                 "{} line {}: the image id '{}' appears twice; each request key must be unique",
                 job.manifest.string(), line, ids[r]);
    const fs::path path = root / image;
    VLBIAS_CHECK(fs::is_regular_file(path), InputError, "{} line {}: image {} does not exist",
                 job.manifest.string(), line, path.string());
    VLBIAS_CHECK(sniff_image(bytes_of(MappedFile(path))).has_value(), InputError,
                 "{} line {}: {} is not a JPEG, PNG, GIF or WebP image", job.manifest.string(),
                 line, path.string());
  }
  return ids;
}

// The lvlm job's parts: one chat completion per image, prompt and seed, generations.jsonl
// listing the answers.
class LvlmRequests final : public RequestJob {
 public:
  LvlmRequests(const LvlmJob& job, const fs::path& run_dir, const std::string& api_key,
               const Table& manifest, std::size_t image_col, const std::vector<std::string>& ids,
               const fs::path& root)
      : job_(job),
        run_dir_(run_dir),
        api_key_(api_key),
        manifest_(manifest),
        image_col_(image_col),
        ids_(ids),
        root_(root),
        reply_limit_(chat_reply_limit(job.control, job.max_tokens)) {}

  void plan(RunFolder& folder) const override {
    for (std::size_t r = 0; r < manifest_.rows; ++r) {
      for (const auto& prompt : job_.prompts) {
        for (const std::uint64_t seed : job_.seeds) {
          const Json request = {{"row", r},
                                {"image", manifest_.columns[image_col_].text(r)},
                                {"prompt", prompt.name},
                                {"prompt_text", prompt.text},
                                {"seed", seed}};
          folder.add(fmt::format("{}|{}|{}", ids_[r], prompt.name, seed), request.dump());
        }
      }
    }
  }

  HttpRequest build(const std::string& key, const std::string& text) const override {
    const Json request = stored_json(text, key);
    const MappedFile image(root_ / request["image"].get<std::string>());
    const std::string_view bytes = bytes_of(image);
    const auto kind = sniff_image(bytes);
    VLBIAS_CHECK(kind.has_value(), InputError, "{}: is no longer an image", image.path().string());
    Json content = Json::array();
    content.push_back({{"type", "text"}, {"text", request["prompt_text"]}});
    content.push_back(
        {{"type", "image_url"},
         {"image_url",
          {{"url", fmt::format("data:{};base64,{}", kind->mime, base64_encode(bytes))}}}});
    Json messages = Json::array();
    if (!job_.system_prompt.empty())
      messages.push_back({{"role", "system"}, {"content", job_.system_prompt}});
    messages.push_back({{"role", "user"}, {"content", content}});
    Json body;
    if (!job_.endpoint.model.empty()) body["model"] = job_.endpoint.model;
    body["messages"] = messages;
    body["temperature"] = job_.temperature;
    body["max_tokens"] = job_.max_tokens;
    if (job_.top_p) body["top_p"] = *job_.top_p;
    if (job_.send_seed) body["seed"] = request["seed"];
    return post_json(job_.endpoint, body, api_key_, reply_limit_);
  }

  Verdict read(const std::string&, const std::string&, const HttpResponse& r) const override {
    return read_chat_completion(r);
  }

  // generations.jsonl: the manifest's columns, then what was asked and answered.
  void export_outputs(RunFolder& folder, JobSummary& summary) const override {
    AtomicWriter writer(run_dir_ / "generations.jsonl");
    folder.store().for_each([&](const RequestRecord& rec) {
      if (rec.status != RequestStatus::Done && rec.status != RequestStatus::Refused) return;
      const Json request = stored_json(rec.request, rec.key);
      const Json response = try_parse_json(rec.response).value;
      const std::size_t row = request["row"].get<std::size_t>();
      Json line;
      for (std::size_t c = 0; c < manifest_.columns.size(); ++c)
        line[manifest_.columns[c].name] = cell_json(manifest_, c, row);
      line["prompt"] = request["prompt"];
      line["seed"] = request["seed"];
      line["model"] = job_.endpoint.model;
      const bool ok = response.is_object();
      line["text"] = ok && response.contains("text") ? response["text"] : Json("");
      line["refused"] = rec.status == RequestStatus::Refused;
      line["refusal_reason"] = rec.status == RequestStatus::Refused ? Json(rec.error) : Json();
      line["finish_reason"] =
          ok && response.contains("finish_reason") ? response["finish_reason"] : Json();
      const std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
      writer.write(text.data(), text.size());
      ++summary.exported;
    });
    writer.commit();
    summary.outputs.push_back("generations.jsonl");
  }

 private:
  const LvlmJob& job_;
  const fs::path run_dir_;
  const std::string& api_key_;
  const Table& manifest_;
  const std::size_t image_col_;
  const std::vector<std::string>& ids_;
  const fs::path root_;
  const std::size_t reply_limit_;
};

}  // namespace

JobSummary generate_lvlm(const LvlmJob& job, const fs::path& run_dir) {
  check_job(job);
  const std::string api_key = read_api_key(job.endpoint);
  const Table manifest = read_table(job.manifest.string());
  VLBIAS_CHECK(manifest.rows > 0, InputError, "{}: the manifest has no rows",
               job.manifest.string());
  const std::size_t image_col = *manifest.find(manifest.column(job.image_column).name);
  const std::size_t id_col =
      job.id_column.empty() ? image_col : *manifest.find(manifest.column(job.id_column).name);
  check_added_columns(manifest, job.manifest, "the manifest", kAddedColumns, "generations.jsonl");
  const fs::path root = job.image_root.empty() ? job.manifest.parent_path() : job.image_root;
  const std::vector<std::string> ids = check_images(job, manifest, image_col, id_col, root);

  Json prompts = Json::array();
  for (const auto& p : job.prompts) prompts.push_back({{"name", p.name}, {"text", p.text}});
  JobRecord record{.kind = "generate-lvlm",
                   .label = "lvlm requests",
                   .endpoint = job.endpoint,
                   .control = job.control,
                   .api_key = api_key,
                   .fingerprint = {{"model", job.endpoint.model},
                                   {"system", job.system_prompt},
                                   {"temperature", job.temperature},
                                   {"max_tokens", job.max_tokens},
                                   {"top_p", job.top_p ? Json(*job.top_p) : Json()},
                                   {"send_seed", job.send_seed}},
                   .parameters = {{"image_column", job.image_column},
                                  {"id_column", job.id_column},
                                  {"image_root", root.string()},
                                  {"seeds", job.seeds},
                                  {"prompts", prompts}},
                   .inputs = {job.manifest},
                   .spec_text = job.spec_text};
  if (!job.spec_path.empty()) record.inputs.push_back(job.spec_path);
  return run_request_job(run_dir, record,
                         LvlmRequests(job, run_dir, api_key, manifest, image_col, ids, root));
}

}  // namespace vlbias
