// `vlbias generate lvlm` and `generate llm`: OpenAI-compatible chat completions with an image,
// or text only (generate.h), from prompt templates filled per manifest row.
#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "chat_job.h"
#include "vlbias/core/error.h"
#include "vlbias/io/mapped_file.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace fs = std::filesystem;
using namespace generate_internal;

namespace {

// The columns generations.jsonl adds after the manifest's own.
const std::vector<std::string> kLvlmAddedColumns = {
    "prompt",  "prompt_text",    "seed",          "model",       "text",
    "refused", "refusal_reason", "finish_reason", "top_logprobs"};

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
    const auto& first = job.prompts.front().labels;
    VLBIAS_CHECK(p.labels.size() == first.size(), UsageError,
                 "prompt '{}' has {} labels and prompt '{}' {}; every prompt needs the same label "
                 "names (the generations' columns)",
                 p.name, p.labels.size(), job.prompts.front().name, first.size());
    for (std::size_t l = 0; l < first.size(); ++l) {
      VLBIAS_CHECK(p.labels[l].first == first[l].first, UsageError,
                   "prompt '{}' has the label '{}' where prompt '{}' has '{}'; every prompt needs "
                   "the same label names in the same order",
                   p.name, p.labels[l].first, job.prompts.front().name, first[l].first);
    }
  }
  std::set<std::string> labels;
  for (const auto& [name, value] : job.prompts.front().labels) {
    VLBIAS_CHECK(!name.empty(), UsageError, "prompt '{}' has a label without a name",
                 job.prompts.front().name);
    VLBIAS_CHECK(labels.insert(name).second, UsageError, "prompt '{}' has the label '{}' twice",
                 job.prompts.front().name, name);
    VLBIAS_CHECK(std::find(kLvlmAddedColumns.begin(), kLvlmAddedColumns.end(), name) ==
                     kLvlmAddedColumns.end(),
                 UsageError,
                 "the prompts' label '{}' is a column generations.jsonl adds; rename it", name);
  }
  VLBIAS_CHECK(!job.text_only || !job.id_column.empty(), UsageError,
               "generate llm needs columns.id: the column naming each row, the key that joins "
               "the answers to the LVLM's");
  VLBIAS_CHECK(!job.seeds.empty(), UsageError, "at least one seed is required");
  VLBIAS_CHECK(
      std::set<std::uint64_t>(job.seeds.begin(), job.seeds.end()).size() == job.seeds.size(),
      UsageError, "a seed is given twice");
  check_chat_sampling(job);
}

// The id of every manifest row (unique, non-empty); with an image column, every image must
// exist and be an image, before the first request.
std::vector<std::string> check_rows(const LvlmJob& job, const Table& manifest,
                                    std::optional<std::size_t> image_col, std::size_t id_col,
                                    const fs::path& root, const LvlmImages& images) {
  std::vector<std::string> ids(manifest.rows);
  std::set<std::string> seen;
  for (std::size_t r = 0; r < manifest.rows; ++r) {
    const std::size_t line = manifest.line_of_row[r];
    ids[r] = manifest.columns[id_col].text(r);
    VLBIAS_CHECK(!ids[r].empty(), InputError, "{} line {}: no id in column '{}'",
                 job.manifest.string(), line, manifest.columns[id_col].name);
    VLBIAS_CHECK(seen.insert(ids[r]).second, InputError,
                 "{} line {}: the id '{}' appears twice; each request key must be unique",
                 job.manifest.string(), line, ids[r]);
    if (!image_col) continue;
    const std::string image = manifest.columns[*image_col].text(r);
    VLBIAS_CHECK(!image.empty(), InputError, "{} line {}: no image in column '{}'",
                 job.manifest.string(), line, job.image_column);
    LvlmImages::Bytes bytes;
    try {
      bytes = images.read(image);
    } catch (const InputError& e) {
      VLBIAS_FAIL(InputError, "{} line {}: {}", job.manifest.string(), line, e.what());
    }
    VLBIAS_CHECK(sniff_image(bytes.view()).has_value(), InputError,
                 "{} line {}: {} is not a JPEG, PNG, GIF or WebP image", job.manifest.string(),
                 line, bytes.from_cell ? image : (root / image).string());
  }
  return ids;
}

// The manifest columns generations.jsonl copies (columns.keep, else all), none named like a
// column it adds.
std::vector<std::size_t> kept_columns(const LvlmJob& job, const Table& manifest) {
  std::vector<std::size_t> kept;
  if (!job.keep_columns) {
    for (std::size_t c = 0; c < manifest.columns.size(); ++c) kept.push_back(c);
  } else {
    for (const std::string& name : *job.keep_columns) {
      const auto c = manifest.find(name);
      VLBIAS_CHECK(c.has_value(), UsageError, "columns.keep names '{}', which is no column of {}",
                   name, job.manifest.string());
      kept.push_back(*c);
    }
  }
  for (const std::size_t c : kept) {
    const std::string& name = manifest.columns[c].name;
    VLBIAS_CHECK(std::find(kLvlmAddedColumns.begin(), kLvlmAddedColumns.end(), name) ==
                     kLvlmAddedColumns.end(),
                 UsageError,
                 "{}: the manifest has a column '{}', which generations.jsonl adds; rename it or "
                 "leave it out of columns.keep",
                 job.manifest.string(), name);
  }
  return kept;
}

// Every prompt's template compiled against the manifest, each named cell non-empty in every
// row, and no label named like a kept manifest column.
std::vector<PromptTemplate> compile_prompts(const LvlmJob& job, const Table& manifest,
                                            const std::vector<std::size_t>& kept) {
  std::vector<PromptTemplate> out;
  for (std::size_t i = 0; i < job.prompts.size(); ++i) {
    const LvlmPrompt& p = job.prompts[i];
    out.emplace_back(p.text, manifest, job.manifest, fmt::format("prompts[{}] ({})", i, p.name));
    for (const std::size_t col : out.back().columns()) {
      for (std::size_t r = 0; r < manifest.rows; ++r) {
        VLBIAS_CHECK(!manifest.columns[col].text(r).empty(), InputError,
                     "{} line {}: the column '{}' is empty, and prompt '{}' names it",
                     job.manifest.string(), manifest.line_of_row[r], manifest.columns[col].name,
                     p.name);
      }
    }
  }
  for (const auto& label : job.prompts.front().labels) {
    VLBIAS_CHECK(
        std::none_of(kept.begin(), kept.end(),
                     [&](std::size_t c) { return manifest.columns[c].name == label.first; }),
        UsageError,
        "{}: the manifest has a column '{}', which the prompts' label '{}' also names "
        "in generations.jsonl; rename one",
        job.manifest.string(), label.first, label.first);
  }
  return out;
}

// The lvlm job's parts: one chat completion per row, prompt and seed (with the row's image
// unless text only), generations.jsonl listing the answers.
class LvlmRequests final : public ChatRequests<LvlmJob> {
 public:
  LvlmRequests(const LvlmJob& job, const fs::path& run_dir, const std::string& api_key,
               const Table& manifest, const std::vector<std::size_t>& kept,
               std::optional<std::size_t> image_col, const std::vector<std::string>& ids,
               const std::vector<PromptTemplate>& templates, const LvlmImages& images)
      : ChatRequests(job, run_dir, api_key),
        manifest_(manifest),
        kept_(kept),
        image_col_(image_col),
        ids_(ids),
        templates_(templates),
        images_(images) {}

  // The request's fields in the order of the stores written before templates, system messages
  // and labels (a prompt with neither stores what it did then, so those runs resume).
  void plan(RunFolder& folder) const override {
    for (std::size_t r = 0; r < manifest_.rows; ++r) {
      for (std::size_t p = 0; p < job_.prompts.size(); ++p) {
        const LvlmPrompt& prompt = job_.prompts[p];
        const std::string text = templates_[p].render(manifest_, r);
        for (const std::uint64_t seed : job_.seeds) {
          Json request = {{"row", r}};
          if (image_col_) request["image"] = manifest_.columns[*image_col_].text(r);
          request["prompt"] = prompt.name;
          request["prompt_text"] = text;
          request["seed"] = seed;
          if (prompt.system) request["system"] = *prompt.system;
          if (!prompt.labels.empty()) {
            Json labels = Json::object();
            for (const auto& [name, value] : prompt.labels) labels[name] = value;
            request["labels"] = labels;
          }
          folder.add(fmt::format("{}|{}|{}", ids_[r], prompt.name, seed), request.dump());
        }
      }
    }
  }

  HttpRequest build(const std::string& key, const std::string& text) const override {
    const Json request = stored_json(text, key);
    Json content;
    if (image_col_) {
      const std::string name = request["image"].get<std::string>();
      const LvlmImages::Bytes image = images_.read(name);
      const std::string_view bytes = image.view();
      const auto kind = sniff_image(bytes);
      VLBIAS_CHECK(kind.has_value(), InputError, "{}: is no longer an image",
                   image.from_cell ? name : image.file.path().string());
      content = Json::array();
      content.push_back({{"type", "text"}, {"text", request["prompt_text"]}});
      content.push_back(
          {{"type", "image_url"},
           {"image_url",
            {{"url", fmt::format("data:{};base64,{}", kind->mime, base64_encode(bytes))}}}});
    } else {
      content = request["prompt_text"];
    }
    const std::string system =
        request.contains("system") ? request["system"].get<std::string>() : job_.system_prompt;
    Json body = chat_body(system, std::move(content), request["seed"]);
    if (job_.top_logprobs) {
      body["logprobs"] = true;
      body["top_logprobs"] = *job_.top_logprobs;
    }
    return post_chat(body);
  }

  // The image's id: a key is "ID|PROMPT|SEED", and neither a prompt name nor a seed holds '|'.
  std::string shard_group(const std::string& key) const override {
    const std::size_t seed_bar = key.rfind('|');
    return key.substr(0, key.rfind('|', seed_bar - 1));
  }

  // generations.jsonl: the manifest's (kept) columns, the prompt's labels, then what was asked and
  // answered.
  void export_outputs(RunFolder& folder, JobSummary& summary) const override {
    AtomicWriter writer(run_dir_ / "generations.jsonl");
    folder.store().for_each([&](const RequestRecord& rec) {
      if (rec.status != RequestStatus::Done && rec.status != RequestStatus::Refused) return;
      const Json request = stored_json(rec.request, rec.key);
      const Json response = try_parse_json(rec.response).value;
      const std::size_t row = request["row"].get<std::size_t>();
      Json line;
      for (const std::size_t c : kept_)
        line[manifest_.columns[c].name] = cell_json(manifest_, c, row);
      if (request.contains("labels")) {
        for (const auto& [name, value] : request["labels"].items()) line[name] = value;
      }
      line["prompt"] = request["prompt"];
      line["prompt_text"] = request["prompt_text"];
      line["seed"] = request["seed"];
      line["model"] = job_.endpoint.model;
      const bool ok = response.is_object();
      line["text"] = ok && response.contains("text") ? response["text"] : Json("");
      line["refused"] = rec.status == RequestStatus::Refused;
      line["refusal_reason"] = rec.status == RequestStatus::Refused ? Json(rec.error) : Json();
      line["finish_reason"] =
          ok && response.contains("finish_reason") ? response["finish_reason"] : Json();
      if (job_.top_logprobs) {
        line["top_logprobs"] =
            ok && response.contains("top_logprobs") ? response["top_logprobs"] : Json();
      }
      const std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
      writer.write(text.data(), text.size());
      ++summary.exported;
    });
    writer.commit();
    summary.outputs.push_back("generations.jsonl");
  }

 private:
  const Table& manifest_;
  const std::vector<std::size_t>& kept_;
  const std::optional<std::size_t> image_col_;
  const std::vector<std::string>& ids_;
  const std::vector<PromptTemplate>& templates_;
  const LvlmImages& images_;
};

// run.json's record of the prompts.
Json prompts_record(const LvlmJob& job) {
  Json prompts = Json::array();
  for (const auto& p : job.prompts) {
    Json entry = {{"name", p.name}, {"text", p.text}};
    if (p.system) entry["system"] = *p.system;
    if (!p.labels.empty()) {
      entry["labels"] = Json::object();
      for (const auto& [name, value] : p.labels) entry["labels"][name] = value;
    }
    prompts.push_back(entry);
  }
  return prompts;
}

// run.json's `job` copy of the prompts: [{name, text, system (null when none), labels: [[name,
// value], ...]}, ...].
Json lvlm_prompts_json(const std::vector<LvlmPrompt>& prompts) {
  Json out = Json::array();
  for (const LvlmPrompt& p : prompts) {
    Json labels = Json::array();
    for (const auto& [name, value] : p.labels) labels.push_back({name, value});
    out.push_back({{"name", p.name},
                   {"text", p.text},
                   {"system", p.system ? Json(*p.system) : Json()},
                   {"labels", labels}});
  }
  return out;
}

std::vector<LvlmPrompt> lvlm_prompts_from_json(const Json& j) {
  std::vector<LvlmPrompt> out;
  for (const Json& p : j) {
    LvlmPrompt prompt{
        p.at("name").get<std::string>(), p.at("text").get<std::string>(), std::nullopt, {}};
    if (!p.at("system").is_null()) prompt.system = p.at("system").get<std::string>();
    for (const Json& label : p.at("labels"))
      prompt.labels.emplace_back(label.at(0).get<std::string>(), label.at(1).get<std::string>());
    out.push_back(std::move(prompt));
  }
  return out;
}

// run.json's `job` keys of an lvlm or llm job, in order (chat_job.h).
constexpr auto kLvlmJobKeys = [](auto& io, auto& job) {
  io("endpoint", job.endpoint);
  io.path("manifest", job.manifest);
  io("image_column", job.image_column);
  io("id_column", job.id_column);
  io.path("image_root", job.image_root);
  io("keep_columns", job.keep_columns);
  io.converted("prompts", job.prompts, lvlm_prompts_json, lvlm_prompts_from_json);
  io("seeds", job.seeds);
  io("system", job.system_prompt);
  chat_sampling_keys(io, job);
  io("send_seed", job.send_seed);
  io.omitted_when_none("top_logprobs", job.top_logprobs);
  io("text_only", job.text_only);
  io.path("spec_path", job.spec_path);
};

// What shapes the lvlm job's requests (RunFolder); top_logprobs only when asked for, so the
// stores of earlier runs keep their fingerprint and resume.
Json lvlm_fingerprint(const LvlmJob& job) {
  JobJsonWriter fingerprint = chat_fingerprint(job);
  chat_sampling_keys(fingerprint, job);
  fingerprint("send_seed", job.send_seed);
  fingerprint.omitted_when_none("top_logprobs", job.top_logprobs);
  return fingerprint.json;
}

}  // namespace

JobSummary generate_lvlm(const LvlmJob& job, const fs::path& run_dir) {
  check_job(job);
  const std::string api_key = read_api_key(job.endpoint, job.control);
  const Table manifest = read_table(job.manifest.string());
  VLBIAS_CHECK(manifest.rows > 0, InputError, "{}: the manifest has no rows",
               job.manifest.string());
  std::optional<std::size_t> image_col;
  if (!job.text_only) image_col = *manifest.find(manifest.column(job.image_column).name);
  const std::size_t id_col =
      job.id_column.empty() ? *image_col : *manifest.find(manifest.column(job.id_column).name);
  const std::vector<std::size_t> kept = kept_columns(job, manifest);
  const std::vector<PromptTemplate> templates = compile_prompts(job, manifest, kept);
  const fs::path root = job.image_root.empty() ? job.manifest.parent_path() : job.image_root;
  const LvlmImages images(root);
  const std::vector<std::string> ids = check_rows(job, manifest, image_col, id_col, root, images);

  JobRecord record{.kind = job.text_only ? "generate-llm" : "generate-lvlm",
                   .label = job.text_only ? "llm requests" : "lvlm requests",
                   .endpoint = job.endpoint,
                   .control = job.control,
                   .api_key = api_key,
                   .fingerprint = lvlm_fingerprint(job),
                   .parameters = {{"id_column", job.id_column},
                                  {"seeds", job.seeds},
                                  {"prompts", prompts_record(job)}},
                   .inputs = {job.manifest},
                   .spec_text = job.spec_text,
                   .job = lvlm_job_json(job),
                   .shard_key = "the row's id (columns.id, else the image)",
                   .input_rows = manifest.rows};
  if (!job.text_only) {
    record.parameters["image_column"] = job.image_column;
    record.parameters["image_root"] = root.string();
  }
  if (!job.spec_path.empty()) record.inputs.push_back(job.spec_path);
  return run_request_job(
      run_dir, record,
      LvlmRequests(job, run_dir, api_key, manifest, kept, image_col, ids, templates, images));
}

Json generate_internal::lvlm_job_json(const LvlmJob& job) {
  return job_json_of(job, kLvlmJobKeys);
}

LvlmJob generate_internal::lvlm_job_from_json(const Json& j) {
  return job_from_json_of<LvlmJob>(j, kLvlmJobKeys);
}

}  // namespace vlbias
