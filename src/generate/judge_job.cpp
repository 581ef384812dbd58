// `vlbias score judge`: an LLM judge over OpenAI-compatible chat completions (generate.h),
// its answers read by the parsers of judge_answers.h.
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "chat_job.h"
#include "vlbias/core/error.h"
#include "vlbias/generate/judge_answers.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace fs = std::filesystem;
using namespace generate_internal;

namespace {

// The columns scored.jsonl adds with each parser.
std::vector<std::string> added_columns(JudgeParser parser) {
  if (parser == JudgeParser::LlamaGuard)
    return {"unsafe", "judge_categories", "judge_raw", "judge_error", "scorer"};
  return {"judge_score", "judge_number", "judge_raw", "judge_error", "scorer"};
}

void check_job(const JudgeJob& job) {
  VLBIAS_CHECK(!job.endpoint.url.empty(), UsageError, "endpoint.url is required");
  check_request_settings(job.endpoint, job.control);
  VLBIAS_CHECK(!job.prompt.empty(), UsageError, "prompt is required");
  check_chat_sampling(job);
  VLBIAS_CHECK(job.parser != JudgeParser::Scale ||
                   (std::isfinite(job.scale_min) && std::isfinite(job.scale_max) &&
                    job.scale_min < job.scale_max),
               UsageError, "scale.min must be below scale.max (both finite), got {} and {}",
               job.scale_min, job.scale_max);
}

// The judge's parts: one chat completion per non-empty text, scored.jsonl holding every input
// row with what its answer says.
class JudgeRequests final : public ChatRequests<JudgeJob> {
 public:
  JudgeRequests(const JudgeJob& job, const fs::path& run_dir, const std::string& api_key,
                const Table& input, std::size_t text_col, const PromptTemplate& prompt)
      : ChatRequests(job, run_dir, api_key), input_(input), text_col_(text_col), prompt_(prompt) {}

  void plan(RunFolder& folder) const override {
    for (std::size_t r = 0; r < input_.rows; ++r) {
      if (input_.columns[text_col_].text(r).empty()) continue;  // nothing to judge
      folder.add(std::to_string(r), Json{{"prompt", prompt_.render(input_, r)}}.dump());
    }
  }

  HttpRequest build(const std::string& key, const std::string& text) const override {
    return post_chat(chat_body(job_.system_prompt, stored_json(text, key)["prompt"], job_.seed));
  }

  void export_outputs(RunFolder& folder, JobSummary& summary) const override {
    const std::vector<RowOutcome> rows = row_outcomes(folder.store(), input_.rows, job_.input);
    write_scored_jsonl(run_dir_ / "scored.jsonl", input_, folder, [&](std::size_t r, Json& line) {
      if (write_row(rows[r], line)) ++summary.exported;
    });
    summary.outputs.push_back("scored.jsonl");
    summary.served_models = served_models(rows);
  }

 private:
  // One row's columns; whether its answer was read.
  bool write_row(const RowOutcome& o, Json& line) const {
    const bool answered = o.status == RequestStatus::Done || o.status == RequestStatus::Refused;
    const auto text = o.response.is_object() ? o.response.find("text") : o.response.end();
    const bool has_text = answered && text != o.response.end() && text->is_string();
    JudgeVerdict v;
    std::string error;
    if (!o.sent) {
      error = "empty text";
    } else if (o.status == RequestStatus::Refused) {
      error = "refused: " + o.error;
    } else if (o.status != RequestStatus::Done) {
      error = o.error;
    } else {
      const std::string answer = has_text ? text->get<std::string>() : "";
      v = job_.parser == JudgeParser::LlamaGuard
              ? parse_llama_guard(answer)
              : parse_scale(answer, job_.scale_min, job_.scale_max);
      if (!v.parsed) error = "unparseable answer";
    }
    if (job_.parser == JudgeParser::LlamaGuard) {
      std::string names;
      for (const auto& c : v.categories) names += (names.empty() ? "" : ",") + c;
      line["unsafe"] = v.parsed ? Json(v.unsafe ? 1.0 : 0.0) : Json();
      line["judge_categories"] = v.parsed ? Json(names) : Json();
    } else {
      line["judge_score"] = v.parsed ? Json(v.score) : Json();
      line["judge_number"] = v.parsed ? Json(v.number) : Json();
    }
    line["judge_raw"] = has_text ? *text : Json();
    line["judge_error"] = error.empty() ? Json() : Json(error);
    std::string model = job_.endpoint.model;
    const auto served = o.response.is_object() ? o.response.find("model") : o.response.end();
    if (served != o.response.end() && served->is_string()) model = served->get<std::string>();
    line["scorer"] = fmt::format("judge {}{} parser={}", url_for_record(job_.endpoint.url),
                                 model.empty() ? "" : " model=" + model, parser_name());
    return v.parsed;
  }

  std::string parser_name() const {
    return job_.parser == JudgeParser::LlamaGuard
               ? std::string("llama-guard")
               : fmt::format("scale:{}..{}", job_.scale_min, job_.scale_max);
  }

  const Table& input_;
  const std::size_t text_col_;
  const PromptTemplate& prompt_;
};

// run.json's `job` keys of a judge, in order (chat_job.h).
constexpr auto kJudgeJobKeys = [](auto& io, auto& job) {
  io("endpoint", job.endpoint);
  io.path("input", job.input);
  io("text_column", job.text_column);
  io("system", job.system_prompt);
  io("prompt", job.prompt);
  io.choice("parser", job.parser, JudgeParser::Scale, "scale", JudgeParser::LlamaGuard,
            "llama-guard");
  io("scale_min", job.scale_min);
  io("scale_max", job.scale_max);
  chat_sampling_keys(io, job);
  io("seed", job.seed);
  io("send_seed", job.send_seed);
  io.path("spec_path", job.spec_path);
};

// What shapes the judge's requests (RunFolder).
Json judge_fingerprint(const JudgeJob& job) {
  JobJsonWriter fingerprint = chat_fingerprint(job);
  fingerprint("prompt", job.prompt);
  chat_sampling_keys(fingerprint, job);
  fingerprint("seed", job.seed);
  fingerprint("send_seed", job.send_seed);
  return fingerprint.json;
}

}  // namespace

JobSummary score_judge(const JudgeJob& job, const fs::path& run_dir) {
  check_job(job);
  const std::string api_key = read_api_key(job.endpoint, job.control);
  const Table input = read_table(job.input.string());
  const std::size_t text_col = *input.find(input.column(job.text_column).name);
  check_added_columns(input, job.input, "the input", added_columns(job.parser), "scored.jsonl");
  const PromptTemplate prompt(job.prompt, input, text_col, job.input);

  const bool scale = job.parser == JudgeParser::Scale;
  JobRecord record{
      .kind = "score-judge",
      .label = "judge requests",
      .endpoint = job.endpoint,
      .control = job.control,
      .api_key = api_key,
      .fingerprint = judge_fingerprint(job),
      // The parser reads the stored answers at export: a resume may change it.
      .parameters = {{"text_column", job.text_column},
                     {"parser", scale ? "scale" : "llama-guard"},
                     {"scale",
                      scale ? Json{{"min", job.scale_min}, {"max", job.scale_max}} : Json()}},
      .inputs = {job.input},
      .spec_text = job.spec_text,
      .job = judge_job_json(job),
      .shard_key = "the input row's number",
      .input_rows = input.rows};
  if (!job.spec_path.empty()) record.inputs.push_back(job.spec_path);
  return run_request_job(run_dir, record,
                         JudgeRequests(job, run_dir, api_key, input, text_col, prompt));
}

Json generate_internal::judge_job_json(const JudgeJob& job) {
  return job_json_of(job, kJudgeJobKeys);
}

JudgeJob generate_internal::judge_job_from_json(const Json& j) {
  return job_from_json_of<JudgeJob>(j, kJudgeJobKeys);
}

}  // namespace vlbias
