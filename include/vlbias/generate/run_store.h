#pragma once
// The resumable run store of the generation and scoring drivers (src/generate): one SQLite
// file, one row per request key, so a run killed at any point continues with `--resume`
// with nothing lost and nothing recorded twice.
//
// A row moves Pending -> Done | Refused | Failed exactly once (each move is one
// transaction; a transaction either happened or not, also under kill -9). A retried
// attempt keeps the row Pending and counts it. Keys are the caller's (e.g.
// "image|prompt|seed"); requests and responses are JSON text. Secrets (API keys) never
// belong in a request: the drivers read them from the environment at send time.
//
// Thread-safe: every method takes the store's mutex (SQLite itself is opened without
// its own locking). The file is in WAL mode with synchronous=NORMAL: a committed
// transaction survives a crash of the process.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace vlbias {

enum class RequestStatus { Pending = 0, Done = 1, Refused = 2, Failed = 3 };
// "pending", "done", "refused", "failed".
const char* to_string(RequestStatus status);

struct RequestRecord {
  std::string key;
  std::string request;  // JSON text of what is sent (no secrets)
  RequestStatus status = RequestStatus::Pending;
  int attempts = 0;      // HTTP attempts made so far
  int http_status = 0;   // of the last attempt; 0 = none or a transport error
  std::string response;  // JSON text of the answer (Done, Refused); "" otherwise
  std::string error;     // the last attempt's error ("" when it succeeded)
  double latency_s = 0;  // of the last attempt, seconds
  std::string updated_utc;
};

// A Pending row as the driver pages through them: `seq` is the row's place in insertion
// order, the cursor of the next page.
struct PendingRequest {
  std::int64_t seq = 0;
  std::string key;
  std::string request;
};

struct StoreCounts {
  std::size_t pending = 0, done = 0, refused = 0, failed = 0;
  std::size_t total() const { return pending + done + refused + failed; }
};

class RunStore {
 public:
  // Opens the store at `path`, creating it when absent, for the run that `fingerprint`
  // names (the kind and the options that shape the requests, e.g. a JSON dump). Reopening
  // with another fingerprint is a UsageError: one store never mixes two runs. InputError
  // naming the file when it is not a vlbias run store (not SQLite, another schema, a
  // newer schema version) or cannot be opened.
  RunStore(const std::filesystem::path& path, const std::string& fingerprint);
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  // Adds the requests whose keys are not in the store yet, in order, in one transaction,
  // and returns how many were added. A key already present keeps its state, so adding the
  // whole manifest again on --resume is safe; present with another request text it is a
  // UsageError (the manifest changed under the run). An empty key, or a key twice in
  // `requests` with different texts, is an InputError.
  std::size_t add(const std::vector<std::pair<std::string, std::string>>& requests);

  // Up to `limit` Pending keys in insertion order, skipping the first `after` of them.
  std::vector<std::string> pending(std::size_t limit, std::size_t after = 0) const;

  // Up to `limit` Pending rows after insertion place `after_seq` (0 = from the start), in
  // insertion order, with their requests: pages through a store too big to hold in memory
  // (paper 003's 57M answers). Rows taken earlier and still in flight are behind the cursor.
  std::vector<PendingRequest> pending_after(std::int64_t after_seq, std::size_t limit) const;

  // Final outcomes: the row must be Pending (InputError for an unknown key, InternalError
  // for a row already final: that would be doing a request twice). attempts + 1.
  void record_done(const std::string& key, const std::string& response, int http_status,
                   double latency_s);
  void record_refused(const std::string& key, const std::string& response,
                      const std::string& reason, int http_status, double latency_s);
  void record_failed(const std::string& key, const std::string& error, int http_status,
                     double latency_s);
  // An attempt that will be retried: attempts + 1, the error kept, the row stays Pending.
  void record_attempt(const std::string& key, const std::string& error, int http_status,
                      double latency_s);

  // Merging shards (generate.h, merge_run_shards): each record's row, Pending here with the
  // same key and request, takes the record's state (status, attempts, http_status, response,
  // error, latency_s, updated_utc), all in one transaction. InputError starting with `where`
  // for a key this store lacks, another request text, or a row no longer Pending (another
  // store gave it already).
  void restore(const std::vector<RequestRecord>& records, const std::string& where);

  // Failed rows back to Pending (attempts kept); returns how many.
  std::size_t retry_failed();

  RequestRecord get(const std::string& key) const;  // InputError when absent
  StoreCounts counts() const;

  // Calls `visit` for every row in insertion order, streaming (one row in memory at a time).
  // The store's lock is held throughout: `visit` must not call back into this store.
  void for_each(const std::function<void(const RequestRecord&)>& visit) const;

  // Every row as one JSON object per line, in insertion order: key, status, attempts,
  // http_status, latency_s, request and response (as JSON when their text parses, else
  // as strings), error. Written whole under a temporary name, then renamed.
  void export_jsonl(const std::filesystem::path& out) const;

  const std::filesystem::path& path() const { return path_; }

 private:
  struct Impl;
  std::filesystem::path path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vlbias
