// `vlbias score perspective`: the Perspective API's comments:analyze (generate.h). It lives
// with the drivers because it shares their run store, retry policy and HTTP client.
#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "job.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace fs = std::filesystem;
using namespace generate_internal;

namespace {

std::string lower_ascii_copy(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The Perspective job's parts: one comments:analyze request per non-empty text, scored.jsonl
// holding every input row with its scores.
class PerspectiveRequests final : public RequestJob {
 public:
  PerspectiveRequests(const PerspectiveJob& job, const fs::path& run_dir, const Endpoint& endpoint,
                      const std::string& api_key, const Table& input, std::size_t text_col,
                      const std::vector<std::string>& columns)
      : job_(job),
        run_dir_(run_dir),
        endpoint_(endpoint),
        api_key_(api_key),
        input_(input),
        text_col_(text_col),
        columns_(columns),
        reply_limit_(perspective_reply_limit(job.control)) {
    for (const auto& a : job.attributes) requested_[a] = Json::object();
  }

  void plan(RunFolder& folder) const override {
    for (std::size_t r = 0; r < input_.rows; ++r) {
      const std::string text = input_.columns[text_col_].text(r);
      if (text.empty()) continue;  // the API rejects empty comments; scored.jsonl says so
      folder.add(std::to_string(r), Json{{"text", text}}.dump());
    }
  }

  HttpRequest build(const std::string& key, const std::string& text) const override {
    Json body;
    body["comment"] = {{"text", stored_json(text, key)["text"]}};
    body["requestedAttributes"] = requested_;
    if (!job_.languages.empty()) body["languages"] = job_.languages;
    body["doNotStore"] = true;
    return post_json(endpoint_, body, api_key_, reply_limit_, "x-goog-api-key");
  }

  Verdict read(const std::string&, const std::string&, const HttpResponse& r) const override {
    return read_perspective(r, job_.attributes, columns_);
  }

  // scored.jsonl: every input row, in order, with its scores (null where not scored).
  void export_outputs(RunFolder& folder, JobSummary& summary) const override {
    const std::vector<RowOutcome> rows = row_outcomes(folder.store(), input_.rows, job_.input);
    std::string scorer = "perspective " + url_for_record(endpoint_.url) + " attributes=";
    for (std::size_t a = 0; a < job_.attributes.size(); ++a)
      scorer += (a > 0 ? "," : "") + job_.attributes[a];
    write_scored_jsonl(run_dir_ / "scored.jsonl", input_, folder, [&](std::size_t r, Json& line) {
      const bool scored = rows[r].status == RequestStatus::Done && rows[r].response.is_object();
      for (const auto& name : columns_) line[name] = scored ? rows[r].response[name] : Json();
      if (scored) {
        line["perspective_error"] = nullptr;
        ++summary.exported;
      } else {
        line["perspective_error"] = rows[r].sent ? rows[r].error : std::string("empty text");
      }
      line["scorer"] = scorer;
    });
    summary.outputs.push_back("scored.jsonl");
  }

 private:
  const PerspectiveJob& job_;
  const fs::path run_dir_;
  const Endpoint& endpoint_;
  const std::string& api_key_;
  const Table& input_;
  const std::size_t text_col_;
  const std::vector<std::string>& columns_;
  const std::size_t reply_limit_;
  Json requested_ = Json::object();  // requestedAttributes: {ATTRIBUTE: {}}
};

}  // namespace

namespace generate_internal {

Json perspective_job_json(const PerspectiveJob& job) {
  return {{"endpoint", endpoint_json(job.endpoint)},
          {"input", absolute_path(job.input)},
          {"text_column", job.text_column},
          {"attributes", job.attributes},
          {"languages", job.languages}};
}

PerspectiveJob perspective_job_from_json(const Json& j) {
  PerspectiveJob job;
  job.endpoint = endpoint_from_json(j.at("endpoint"));
  job.input = j.at("input").get<std::string>();
  job.text_column = j.at("text_column").get<std::string>();
  job.attributes = j.at("attributes").get<std::vector<std::string>>();
  job.languages = j.at("languages").get<std::vector<std::string>>();
  return job;
}

}  // namespace generate_internal

JobSummary score_perspective(const PerspectiveJob& job, const fs::path& run_dir) {
  check_request_settings(job.endpoint, job.control);
  VLBIAS_CHECK(!job.attributes.empty(), UsageError, "at least one attribute is required");
  std::set<std::string> names;
  std::vector<std::string> columns;  // output column per attribute
  for (const auto& a : job.attributes) {
    VLBIAS_CHECK(!a.empty() && std::all_of(a.begin(), a.end(),
                                           [](unsigned char c) {
                                             return std::isupper(c) || std::isdigit(c) || c == '_';
                                           }),
                 UsageError,
                 "attribute '{}' is not a Perspective attribute name (upper case, e.g. "
                 "TOXICITY, SEVERE_TOXICITY, IDENTITY_ATTACK, INSULT, PROFANITY, THREAT)",
                 a);
    VLBIAS_CHECK(names.insert(a).second, UsageError, "attribute {} is given twice", a);
    columns.push_back(lower_ascii_copy(a));
  }
  const Endpoint endpoint = [&] {
    Endpoint e = job.endpoint;
    if (e.url.empty()) e.url = kPerspectiveUrl;
    return e;
  }();
  const std::string api_key = read_api_key(endpoint, job.control);
  const Table input = read_table(job.input.string());
  const std::size_t text_col = *input.find(input.column(job.text_column).name);
  for (const auto& c : input.columns) {
    for (const char* added : {"perspective_error", "scorer"}) {
      VLBIAS_CHECK(c.name != added, UsageError,
                   "{}: the input has a column '{}', which scored.jsonl adds", job.input.string(),
                   added);
    }
    for (const auto& name : columns) {
      VLBIAS_CHECK(c.name != name, UsageError,
                   "{}: the input already has a column '{}'; the scores would overwrite it "
                   "(rename it, or score another attribute)",
                   job.input.string(), name);
    }
  }

  const JobRecord record{
      .kind = "score-perspective",
      .label = "perspective requests",
      .endpoint = endpoint,
      .control = job.control,
      .api_key = api_key,
      .fingerprint = {{"attributes", job.attributes}, {"languages", job.languages}},
      .parameters = {{"text_column", job.text_column}},
      .inputs = {job.input},
      .spec_text = "",
      .job = perspective_job_json(job),
      .shard_key = "the input row's number",
      .input_rows = input.rows};
  return run_request_job(
      run_dir, record,
      PerspectiveRequests(job, run_dir, endpoint, api_key, input, text_col, columns));
}

}  // namespace vlbias
