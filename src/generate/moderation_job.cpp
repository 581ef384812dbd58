// `vlbias score moderation`: an OpenAI-compatible /v1/moderations endpoint (generate.h). It
// lives with the drivers because it shares their run store, retry policy and HTTP client.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "job.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace fs = std::filesystem;
using namespace generate_internal;

namespace {

// The columns scored.jsonl adds whatever the replies hold.
const std::vector<std::string> kFixedColumns = {"flagged", "moderation_error", "scorer"};

// OpenAI's categories (omni-moderation), as columns: an input column of these names is refused
// before any request; other servers' categories are checked when the replies name them.
const std::vector<std::string> kKnownCategories = {"harassment",
                                                   "harassment_threatening",
                                                   "hate",
                                                   "hate_threatening",
                                                   "illicit",
                                                   "illicit_violent",
                                                   "self_harm",
                                                   "self_harm_intent",
                                                   "self_harm_instructions",
                                                   "sexual",
                                                   "sexual_minors",
                                                   "violence",
                                                   "violence_graphic"};

// The scores of a row's stored reply; empty when not scored (or the store was edited into
// another shape).
const Json& scores_of(const RowOutcome& o) {
  static const Json kNone = Json::object();
  if (o.status != RequestStatus::Done || !o.response.is_object()) return kNone;
  const auto s = o.response.find("scores");
  return s != o.response.end() && s->is_object() ? *s : kNone;
}

// The model a row's stored reply names, else the one asked for.
std::string model_of(const RowOutcome& o, const std::string& asked) {
  if (!o.response.is_object()) return asked;
  const auto m = o.response.find("model");
  return m != o.response.end() && m->is_string() ? m->get<std::string>() : asked;
}

// The moderation job's parts: one request per non-empty text, scored.jsonl holding every
// input row with its category scores.
class ModerationRequests final : public RequestJob {
 public:
  ModerationRequests(const ModerationJob& job, const fs::path& run_dir, const std::string& api_key,
                     const Table& input, std::size_t text_col)
      : job_(job),
        run_dir_(run_dir),
        api_key_(api_key),
        input_(input),
        text_col_(text_col),
        reply_limit_(moderation_reply_limit(job.control)) {}

  void plan(RunFolder& folder) const override {
    for (std::size_t r = 0; r < input_.rows; ++r) {
      const std::string text = input_.columns[text_col_].text(r);
      if (text.empty()) continue;  // nothing to moderate; scored.jsonl says so
      folder.add(std::to_string(r), Json{{"text", text}}.dump());
    }
  }

  HttpRequest build(const std::string& key, const std::string& text) const override {
    Json body;
    if (!job_.endpoint.model.empty()) body["model"] = job_.endpoint.model;
    body["input"] = stored_json(text, key)["text"];
    return post_json(job_.endpoint, body, api_key_, reply_limit_);
  }

  Verdict read(const std::string&, const std::string&, const HttpResponse& r) const override {
    return read_moderation(r);
  }

  void export_outputs(RunFolder& folder, JobSummary& summary) const override {
    const std::vector<RowOutcome> rows = row_outcomes(folder.store(), input_.rows, job_.input);
    const std::vector<std::string> categories = category_columns(rows);
    const std::string url = url_for_record(job_.endpoint.url);
    write_scored_jsonl(run_dir_ / "scored.jsonl", input_, folder, [&](std::size_t r, Json& line) {
      const RowOutcome& o = rows[r];
      const bool scored = o.status == RequestStatus::Done && o.response.is_object();
      const Json& scores = scores_of(o);
      for (const auto& c : categories) line[c] = scores.contains(c) ? scores[c] : Json();
      line["flagged"] = scored ? o.response.value("flagged", Json()) : Json();
      line["moderation_error"] =
          scored ? Json() : Json(o.sent ? o.error : std::string("empty text"));
      const std::string model = model_of(o, job_.endpoint.model);
      line["scorer"] = "moderation " + url + (model.empty() ? "" : " model=" + model);
      if (scored) ++summary.exported;
    });
    summary.outputs.push_back("scored.jsonl");
    summary.served_models = served_models(rows);
  }

 private:
  // The union of the replies' categories in first-seen order; UsageError when one would
  // overwrite an input column or an added one.
  std::vector<std::string> category_columns(const std::vector<RowOutcome>& rows) const {
    std::vector<std::string> columns;
    for (const RowOutcome& o : rows) {
      for (const auto& item : scores_of(o).items()) {
        const std::string& column = item.key();
        if (std::find(columns.begin(), columns.end(), column) != columns.end()) continue;
        VLBIAS_CHECK(!input_.find(column).has_value() &&
                         std::find(kFixedColumns.begin(), kFixedColumns.end(), column) ==
                             kFixedColumns.end(),
                     UsageError,
                     "{}: the moderation endpoint scores a category '{}', and the input has a "
                     "column of that name (or scored.jsonl adds one); rename the column and "
                     "--resume (the replies are kept in the run store)",
                     job_.input.string(), column);
        columns.push_back(column);
      }
    }
    return columns;
  }

  const ModerationJob& job_;
  const fs::path run_dir_;
  const std::string& api_key_;
  const Table& input_;
  const std::size_t text_col_;
  const std::size_t reply_limit_;
};

}  // namespace

namespace generate_internal {

Json moderation_job_json(const ModerationJob& job) {
  return {{"endpoint", endpoint_json(job.endpoint)},
          {"input", absolute_path(job.input)},
          {"text_column", job.text_column}};
}

ModerationJob moderation_job_from_json(const Json& j) {
  ModerationJob job;
  job.endpoint = endpoint_from_json(j.at("endpoint"));
  job.input = j.at("input").get<std::string>();
  job.text_column = j.at("text_column").get<std::string>();
  return job;
}

}  // namespace generate_internal

JobSummary score_moderation(const ModerationJob& job, const fs::path& run_dir) {
  const std::string& url = job.endpoint.url;
  VLBIAS_CHECK(url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0, UsageError,
               "--endpoint must be an http:// or https:// URL, got '{}'", url_for_record(url));
  check_request_settings(job.endpoint, job.control);
  const std::string api_key = read_api_key(job.endpoint, job.control);
  const Table input = read_table(job.input.string());
  const std::size_t text_col = *input.find(input.column(job.text_column).name);
  check_added_columns(input, job.input, "the input", kFixedColumns, "scored.jsonl");
  check_added_columns(input, job.input, "the input", kKnownCategories,
                      "scored.jsonl (a moderation category)");

  const JobRecord record{.kind = "score-moderation",
                         .label = "moderation requests",
                         .endpoint = job.endpoint,
                         .control = job.control,
                         .api_key = api_key,
                         .fingerprint = {{"model", job.endpoint.model}},
                         .parameters = {{"text_column", job.text_column}},
                         .inputs = {job.input},
                         .spec_text = "",
                         .job = moderation_job_json(job),
                         .shard_key = "the input row's number",
                         .input_rows = input.rows};
  return run_request_job(run_dir, record,
                         ModerationRequests(job, run_dir, api_key, input, text_col));
}

}  // namespace vlbias
