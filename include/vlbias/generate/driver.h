#pragma once
// The request loop every generation and scoring driver shares (src/generate): take the
// Pending keys of a run store, send each over HTTP from `concurrency` threads (optionally
// at most `max_qps` requests per second in total), retry what is retryable with the
// policy's backoff, and record every key's outcome in the store exactly once.
//
// A protocol adapter supplies two functions: how a stored request becomes an HTTP
// exchange (URL, headers with the API key read from the environment, body), and how a
// response is read (Done with what to store, Refused with the reason, Pending to retry,
// Failed to give up).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "vlbias/generate/http_client.h"
#include "vlbias/generate/redact.h"
#include "vlbias/generate/run_store.h"

namespace vlbias {

struct Verdict {
  RequestStatus status = RequestStatus::Done;  // Pending = retry this attempt
  std::string response;                        // stored for Done / Refused
  std::string reason;                          // Refused / Failed / retry: why
};

using BuildRequest = std::function<HttpRequest(const std::string& key, const std::string& request)>;
// Called for every response that is not retryable by status (retryable() is false), with
// the key and stored request it answers (an adapter that saves files names them by key).
// It may write files before returning Done: the store records the key only afterwards, so a
// crash in between sends the request again on resume and rewrites the same file.
using ReadResponse = std::function<Verdict(const std::string& key, const std::string& request,
                                           const HttpResponse& response)>;

struct DriveOptions {
  std::size_t concurrency = 8;
  RetryPolicy retry;
  double max_qps = 0;              // requests started per second over all threads; 0 = no limit
  std::uint64_t seed = 0;          // the jitter streams
  std::string label = "requests";  // the progress bar's
  // Applied to every reply (body and transport error) before `read` sees it and to every
  // verdict (response and reason) before the store records it: nothing a server sends can
  // put the key into the store or the exports made from it.
  Redactor redact;
};

struct DriveSummary {
  std::size_t done = 0, refused = 0, failed = 0;
  std::size_t attempts = 0;  // HTTP exchanges made
  std::size_t retries = 0;   // attempts that were retried
  double elapsed_s = 0;
};

// A reply larger than the request's max_response_bytes fails its request at once (not
// retried) with the transport error "reply larger than N bytes; raise max_response_bytes".
//
// Runs every Pending key of `store` to a final state, paging through the Pending rows (a
// few thousand in memory at a time, so 57M-request stores work), with a progress bar that
// shows the refused, failed and retried counts. Exceptions from the adapter functions
// (bugs) stop the run after the in-flight requests; the store keeps what was recorded.
DriveSummary drive(RunStore& store, const BuildRequest& build, const ReadResponse& read,
                   const DriveOptions& options);

}  // namespace vlbias
