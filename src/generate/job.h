#pragma once
// What the generation and scoring jobs share (generate.h): the outline every request job
// follows (run_request_job; each kind supplies a RequestJob), the run folder (lock, store,
// resume rule), the API key, base64 and image sniffing, API error bodies, run.json.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vlbias/generate/generate.h"
#include "vlbias/io/base64.h"
#include "vlbias/io/json.h"
#include "vlbias/io/mapped_file.h"
#include "vlbias/io/run/run_lock.h"
#include "vlbias/io/table/table.h"

namespace vlbias::generate_internal {

struct ImageKind {
  const char* mime;
  const char* extension;
};
// PNG, JPEG, GIF or WebP by magic bytes; nullopt otherwise.
std::optional<ImageKind> sniff_image(std::string_view bytes);

// UsageError naming the spec key (and the command-line option) of a request setting out of
// its range (generate.h): the endpoint's timeout, the job control's numbers.
void check_request_settings(const Endpoint& endpoint, const JobControl& control);

// The key in the endpoint's environment variable ("" when it names none, or when the job is a
// merge, which sends nothing). UsageError naming the variable (never a value) when unset or
// empty.
std::string read_api_key(const Endpoint& endpoint, const JobControl& control);

// The URL without its query and fragment, as written to run.json (a query may hold a key).
std::string url_for_record(const std::string& url);

// The server's error message from an error body (OpenAI, vLLM, Ollama, Google shapes), at
// most 300 bytes; "" when the body has none.
std::string api_error_message(const std::string& body);
// Whether an error body says a content filter or policy blocked the request.
bool content_policy_error(const std::string& body);

// What every stored or printed text of a run is cleaned of (redact.h): the key and the
// values of the endpoint URL's query.
Redactor secrets_of(const Endpoint& endpoint, const std::string& api_key);

// The largest reply each request may have (generate.h, "Reply size"): the job control's
// max_response_bytes when set, else the bound derived from what the request asks for.
std::size_t chat_reply_limit(const JobControl& control, std::size_t max_tokens);
std::size_t image_reply_limit(const JobControl& control, std::size_t width, std::size_t height);
std::size_t perspective_reply_limit(const JobControl& control);
std::size_t moderation_reply_limit(const JobControl& control);

// A JSON POST to the endpoint with its timeout and reply limit; the key, when there is one,
// goes in `key_header` ("Authorization" carries "Bearer <key>", any other header the bare
// key).
HttpRequest post_json(const Endpoint& endpoint, const Json& body, const std::string& api_key,
                      std::size_t max_response_bytes,
                      const std::string& key_header = "Authorization");

// Failed with "HTTP <status>: <the server's message>" (or just the status).
Verdict failed_with_message(const HttpResponse& response);
// A 2xx body that did not parse: "malformed response: <why>", retried (Pending) unless it is
// nested too deeply (Failed: the same server would send it again).
Verdict malformed(const ParsedJson& parsed);

// An OpenAI chat completion read (generate.h, LvlmJob): Done with {"text", "finish_reason",
// "model", "usage"}, Refused for refusals and content filters, Pending (retry) for a 2xx that
// is not a completion, Failed for other errors with the server's message.
Verdict read_chat_completion(const HttpResponse& response);
// A Perspective comments:analyze answer: Done with {column: summary score} for every
// attribute (`columns` are their output names), Pending when a score is missing or outside
// [0, 1], Failed on a 4xx with the server's message.
Verdict read_perspective(const HttpResponse& response, const std::vector<std::string>& attributes,
                         const std::vector<std::string>& columns);

// An OpenAI moderation answer (generate.h, ModerationJob): Done with {"model" (when the reply
// names one), "flagged", "scores": {column: score} in the reply's order}; Pending (retry) when
// results[0] has no category_scores object with at least one score, a score is not a number
// in [0, 1] or flagged is not a boolean; Failed when two categories make one column
// (moderation_column) or a category makes none, and on a 4xx with the server's message.
Verdict read_moderation(const HttpResponse& response);

class RequestJob;

// A run folder in use: the lock, the store and the resume rule (generate.h).
class RunFolder {
 public:
  // `fingerprint` names what shapes the requests (kind, model, sampling...), not where they
  // go: the URL may change between a run and its resume.
  // `redact` cleans every reply, recorded verdict and run.json's copy of the spec.
  // `group` names what a request key is sharded by (RequestJob::shard_group). The store's
  // fingerprint carries the shard when there are several, so a shard resumes only as itself.
  using Group = std::function<std::string(const std::string& key)>;
  RunFolder(const std::filesystem::path& run_dir, const std::string& kind, const Json& fingerprint,
            const JobControl& control, Redactor redact, Group group);
  ~RunFolder();
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

  RunStore& store() { return *store_; }
  const std::filesystem::path& dir() const { return dir_; }
  // Queues a request for the store when it belongs to this process's shard (the one place
  // shards are told apart); every kBatch requests are added in one transaction, so a
  // 57M-request manifest never sits in memory whole (run() adds the rest).
  void add(std::string key, std::string request);
  // Whether the request `key` belongs to this process's shard (always for a whole job).
  bool holds(const std::string& key) const;
  static constexpr std::size_t kBatch = 50'000;

  // Drives the Pending rows (after retry_failed when asked), exports requests.jsonl and
  // fills the summary's counts, drive and outputs. Failed rows give a warning.
  JobSummary run(const BuildRequest& build, const ReadResponse& read, const std::string& label);

  // A merge (control.merge, merge_run_shards): fills the store from the shards' stores
  // (each checked: its fingerprint and shard, no Pending row, only requests of its shard),
  // calls job.merge_files for every row, checks that every request came, exports
  // requests.jsonl and fills the summary as run() does. Nothing is sent.
  JobSummary merge(const RequestJob& job);

  // Writes RUN_DIR/run.json (last: a complete run.json means the exports are complete), with
  // the members of `extra` after the others.
  void write_run_json(JobSummary& summary, const Endpoint& endpoint, const Json& parameters,
                      const Json& inputs, const std::string& spec_text, const Json& extra);

 private:
  std::filesystem::path dir_;
  std::string kind_;
  Json print_;  // the store's fingerprint, without the shard
  JobControl control_;
  Group group_;
  Redactor redact_;
  std::string started_utc_;
  RunLock lock_;  // held from construction to destruction
  std::unique_ptr<RunStore> store_;
  std::size_t added_ = 0;
  std::vector<std::pair<std::string, std::string>> queued_;
  void flush();
  // The store's fingerprint for shard `index` of `count`.
  std::string fingerprint_of(std::size_t index, std::size_t count) const;
  void finish_summary(JobSummary& summary);
};

// The parts one kind of request job supplies (t2i, lvlm, perspective); run_request_job runs
// the outline they share. build and read are called from the driver's threads at once.
class RequestJob {
 public:
  virtual ~RequestJob() = default;
  // Queues every request of the job (RunFolder::add), in input order.
  virtual void plan(RunFolder& folder) const = 0;
  // The HTTP request for a stored request, and what its reply means (driver.h).
  virtual HttpRequest build(const std::string& key, const std::string& request) const = 0;
  virtual Verdict read(const std::string& key, const std::string& request,
                       const HttpResponse& response) const = 0;
  // Writes the kind's own outputs from the store: counts summary.exported and names the files
  // in summary.outputs.
  virtual void export_outputs(RunFolder& folder, JobSummary& summary) const = 0;
  // What a request key is sharded by (generate.h, Sharding): the key itself unless a kind
  // keeps several requests together.
  virtual std::string shard_group(const std::string& key) const { return key; }
  // A merge: brings the files a shard's row refers to (t2i's image) from `shard_dir`.
  virtual void merge_files(const std::filesystem::path& shard_dir,
                           const RequestRecord& record) const {
    (void)shard_dir;
    (void)record;
  }
};

// What the run folder and run.json record of a job.
struct JobRecord {
  std::string kind;   // the store's and run.json's kind ("generate-t2i")
  std::string label;  // the progress bar's ("t2i requests")
  Endpoint endpoint;
  JobControl control;
  std::string api_key;
  // What shapes the requests (RunFolder): a resume must agree on it.
  Json fingerprint;
  // run.json's parameters after the fingerprint's.
  Json parameters = Json::object();
  // run.json's inputs, recorded (input_record) once the outputs are written.
  std::vector<std::filesystem::path> inputs;
  std::string spec_text;  // the spec as given ("" when none)
  // run.json's `job` (what merge_run_shards rebuilds the job from) and the shard block's
  // `key` (what is hashed) and `input_rows` (the rows of the input table).
  Json job;
  std::string shard_key = "the request key";
  std::size_t input_rows = 0;
};

// The outline every request job follows: open RUN_DIR (lock, store, the resume rule), queue
// the job's requests, drive the Pending ones (retries, progress; RunFolder::run), export the
// kind's outputs, then write run.json.
JobSummary run_request_job(const std::filesystem::path& run_dir, const JobRecord& record,
                           const RequestJob& job);

// UsageError when the input table has a column that an output adds: "PATH: WHAT has a column
// 'NAME', which OUTPUT adds; rename it".
void check_added_columns(const Table& table, const std::filesystem::path& path,
                         const std::string& what, const std::vector<std::string>& added,
                         const std::string& output);

// ------------------------------------------------- scorers keyed by input row (scored.jsonl)

// What the store holds for one input row of a scorer whose request keys are the row numbers
// (perspective, moderation, judge).
struct RowOutcome {
  bool sent = false;  // the store has a request for the row
  RequestStatus status = RequestStatus::Pending;
  Json response;      // the stored response (Done, Refused), parsed; null otherwise
  std::string error;  // the request's error; the status's name when it has none
};
// Each input row's outcome. InputError naming the key when the store holds a key that is not
// the number of a row of `input` (a store of a longer or another table).
std::vector<RowOutcome> row_outcomes(const RunStore& store, std::size_t rows,
                                     const std::filesystem::path& input);
// The "model" each stored response names, in first-seen (row) order, each once.
std::vector<std::string> served_models(const std::vector<RowOutcome>& outcomes);
// Writes `path` (scored.jsonl) atomically: every row of `input` in the folder's shard (its
// number as the request key: RunFolder::holds) with its columns, then what `added` appends.
void write_scored_jsonl(const std::filesystem::path& path, const Table& input,
                        const RunFolder& folder,
                        const std::function<void(std::size_t row, Json& line)>& added);

// A prompt template compiled against its table (generate.h, JudgeJob and LvlmJob): literal
// text, {COLUMN} (the row's cell), and {{ }} for braces. UsageError naming the template
// (`what`: "prompt", "prompts[1] (salary)"), the placeholder and the table's columns for an
// unknown name, or the place of an unmatched brace.
class PromptTemplate {
 public:
  // The judge's: {text} is also the text column, and the template must name it.
  PromptTemplate(std::string_view text, const Table& table, std::size_t text_column,
                 const std::filesystem::path& table_path);
  // A prompt of the lvlm / llm jobs.
  PromptTemplate(std::string_view text, const Table& table, const std::filesystem::path& table_path,
                 const std::string& what);
  // The prompt of one row (missing cells as "").
  std::string render(const Table& table, std::size_t row) const;
  // The columns the template names, in order (a column named twice appears twice).
  std::vector<std::size_t> columns() const;

 private:
  struct Part {
    std::string literal;  // when column is npos
    std::size_t column;
  };
  std::vector<Part> parts_;
  void compile(std::string_view text, const Table& table, const std::filesystem::path& table_path,
               const std::string& what, std::optional<std::size_t> text_column);
};

// A request or response text from the run store (store.sqlite is a file anyone may have
// edited): InputError naming the request's key when it is not JSON or nests too deeply.
Json stored_json(std::string_view text, const std::string& key);

// {"path", "bytes", "sha256"} of an input file.
Json input_record(const std::filesystem::path& path);

// ------------------------------------------- run.json's `job` (merge_run_shards rebuilds it)
// Paths absolute, the URL without its query, no secrets, no request settings (a merge sends
// nothing). The readers throw nlohmann's exceptions on a wrong shape (merge_run_shards turns
// them into an InputError naming the shard).
std::string absolute_path(const std::filesystem::path& path);  // "" stays ""
Json endpoint_json(const Endpoint& endpoint);
Endpoint endpoint_from_json(const Json& j);
Json lvlm_job_json(const LvlmJob& job);
LvlmJob lvlm_job_from_json(const Json& j);
Json t2i_job_json(const T2iJob& job);
T2iJob t2i_job_from_json(const Json& j);
Json perspective_job_json(const PerspectiveJob& job);
PerspectiveJob perspective_job_from_json(const Json& j);
Json moderation_job_json(const ModerationJob& job);
ModerationJob moderation_job_from_json(const Json& j);
Json judge_job_json(const JudgeJob& job);
JudgeJob judge_job_from_json(const Json& j);

// The images a generate-lvlm manifest names (lvlm_images.cpp): a file under the image root, or
// "T.parquet#ROW", row ROW (0-based, shards counted in name order) of the Parquet table or
// folder of shards T under the root when no file has that name, read from its column "image"
// (Hugging Face's Image feature or a binary column) in place. Safe to use from several threads.
class LvlmImages {
 public:
  explicit LvlmImages(std::filesystem::path root);
  ~LvlmImages();
  LvlmImages(const LvlmImages&) = delete;
  LvlmImages& operator=(const LvlmImages&) = delete;

  // One image's bytes: its file mapped, or its table cell copied.
  struct Bytes {
    MappedFile file;
    std::string cell;
    bool from_cell = false;
    std::string_view view() const {
      return from_cell ? std::string_view(cell)
                       : std::string_view(reinterpret_cast<const char*>(file.data()), file.size());
    }
  };
  // InputError naming the image (its file, or the table and row) when it cannot be read: no
  // such file, a row past the table's end, a null cell.
  Bytes read(const std::string& name) const;

 private:
  struct Tables;
  std::filesystem::path root_;
  std::unique_ptr<Tables> tables_;
};

}  // namespace vlbias::generate_internal
