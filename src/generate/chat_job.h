#pragma once
// What the chat-completion jobs share (generate lvlm and llm: LvlmJob; score judge: JudgeJob,
// whose common fields carry the same names): run.json's `job` keys listed once per kind and
// walked both ways, the sampling checks, and the request each row sends.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "job.h"
#include "vlbias/core/error.h"

namespace vlbias::generate_internal {

// ------------------------------------------- run.json's `job`, one key list per kind
// A kind lists its keys once, in order, as a generic lambda `(auto& io, auto& job)` calling
// `io("key", job.field)` (`io.path` for paths, written absolute, "" staying ""): job_json_of
// walks the list over a const job with JobJsonWriter (run.json), job_from_json_of over a job
// being filled with JobJsonReader (merge_run_shards). The endpoint is written without its URL's
// query (endpoint_json), an empty optional as null; the reader throws nlohmann's exceptions on a
// wrong shape (job.h).
inline Json job_key_json(const Endpoint& endpoint) {
  return endpoint_json(endpoint);
}
template <class T>
Json job_key_json(const T& value) {
  static_assert(!std::is_same_v<T, std::filesystem::path>, "a path goes through io.path");
  return Json(value);
}
template <class T>
Json job_key_json(const std::optional<T>& value) {
  return value ? job_key_json(*value) : Json();
}

inline void read_job_key(const Json& j, Endpoint& endpoint) {
  endpoint = endpoint_from_json(j);
}
template <class T>
void read_job_key(const Json& j, T& value) {
  static_assert(!std::is_same_v<T, std::filesystem::path>, "a path goes through io.path");
  value = j.get<T>();
}
template <class T>
void read_job_key(const Json& j, std::optional<T>& value) {
  if (j.is_null()) return;
  T v;
  read_job_key(j, v);
  value = std::move(v);
}

class JobJsonWriter {
 public:
  template <class T>
  void operator()(const char* key, const T& value) {
    json[key] = job_key_json(value);
  }
  void path(const char* key, const std::filesystem::path& value) {
    json[key] = absolute_path(value);
  }
  // Left out when empty (keys added after runs were written, which merge those runs still).
  template <class T>
  void omitted_when_none(const char* key, const std::optional<T>& value) {
    if (value) json[key] = job_key_json(*value);
  }
  // One of two values, by name.
  template <class T>
  void choice(const char* key, const T& value, T first, std::string_view first_name, T,
              std::string_view second_name) {
    json[key] = std::string(value == first ? first_name : second_name);
  }
  // A value the kind writes and reads itself.
  template <class T, class Write, class Read>
  void converted(const char* key, const T& value, Write write, Read) {
    json[key] = write(value);
  }
  Json json = Json::object();
};

class JobJsonReader {
 public:
  explicit JobJsonReader(const Json& j) : j_(j) {}
  template <class T>
  void operator()(const char* key, T& value) const {
    read_job_key(j_.at(key), value);
  }
  void path(const char* key, std::filesystem::path& value) const {
    value = j_.at(key).get<std::string>();
  }
  template <class T>
  void omitted_when_none(const char* key, std::optional<T>& value) const {
    if (j_.contains(key)) read_job_key(j_.at(key), value);
  }
  // The first value when the key holds the first name, else the second.
  template <class T>
  void choice(const char* key, T& value, T first, std::string_view first_name, T second,
              std::string_view) const {
    value = j_.at(key).get<std::string>() == first_name ? first : second;
  }
  template <class T, class Write, class Read>
  void converted(const char* key, T& value, Write, Read read) const {
    value = read(j_.at(key));
  }

 private:
  const Json& j_;
};

template <class Job, class Keys>
Json job_json_of(const Job& job, Keys keys) {
  JobJsonWriter writer;
  keys(writer, job);
  return std::move(writer.json);
}
template <class Job, class Keys>
Job job_from_json_of(const Json& j, Keys keys) {
  Job job;
  const JobJsonReader reader(j);
  keys(reader, job);
  return job;
}

// The sampling keys of the chat jobs, in run.json's and the fingerprint's order.
template <class Io, class ChatJob>
void chat_sampling_keys(Io& io, ChatJob& job) {
  io("temperature", job.temperature);
  io("max_tokens", job.max_tokens);
  io("top_p", job.top_p);
}

// The start of a chat job's fingerprint (RunFolder: what shapes the requests): the model and the
// system prompt; the kind adds its own keys and the sampling's.
template <class ChatJob>
JobJsonWriter chat_fingerprint(const ChatJob& job) {
  JobJsonWriter fingerprint;
  fingerprint("model", job.endpoint.model);
  fingerprint("system", job.system_prompt);
  return fingerprint;
}

// ------------------------------------------- checks and requests
// UsageError unless sampling.max_tokens is 1 to kMaxTokens, sampling.temperature in [0, 2] and
// sampling.top_p (when set) in (0, 1]: the spec readers check these too, this guards the API.
template <class ChatJob>
void check_chat_sampling(const ChatJob& job) {
  VLBIAS_CHECK(job.max_tokens >= 1 && job.max_tokens <= kMaxTokens, UsageError,
               "sampling.max_tokens must be an integer from 1 to {}, got {}", kMaxTokens,
               job.max_tokens);
  VLBIAS_CHECK(job.temperature >= 0 && job.temperature <= 2, UsageError,
               "sampling.temperature must be in [0, 2], got {}", job.temperature);
  VLBIAS_CHECK(!job.top_p || (*job.top_p > 0 && *job.top_p <= 1), UsageError,
               "sampling.top_p must be in (0, 1]");
}

// The chat jobs' requests: one OpenAI chat completion each, read by read_chat_completion. The
// kind plans its requests and builds each body's content with chat_body.
template <class ChatJob>
class ChatRequests : public RequestJob {
 public:
  Verdict read(const std::string&, const std::string&, const HttpResponse& r) const override {
    return read_chat_completion(r);
  }

 protected:
  ChatRequests(const ChatJob& job, const std::filesystem::path& run_dir, const std::string& api_key)
      : job_(job),
        run_dir_(run_dir),
        api_key_(api_key),
        reply_limit_(chat_reply_limit(job.control, job.max_tokens)) {}

  // {model (when the endpoint names one), messages (the system message when `system` is not
  // empty, then the user's `content`), temperature, max_tokens, top_p (when set), seed (when
  // the job sends seeds)}.
  Json chat_body(const std::string& system, Json content, const Json& seed) const {
    Json messages = Json::array();
    if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
    messages.push_back({{"role", "user"}, {"content", std::move(content)}});
    Json body;
    if (!job_.endpoint.model.empty()) body["model"] = job_.endpoint.model;
    body["messages"] = std::move(messages);
    body["temperature"] = job_.temperature;
    body["max_tokens"] = job_.max_tokens;
    if (job_.top_p) body["top_p"] = *job_.top_p;
    if (job_.send_seed) body["seed"] = seed;
    return body;
  }
  HttpRequest post_chat(const Json& body) const {
    return post_json(job_.endpoint, body, api_key_, reply_limit_);
  }

  const ChatJob& job_;
  const std::filesystem::path run_dir_;
  const std::string& api_key_;
  const std::size_t reply_limit_;
};

}  // namespace vlbias::generate_internal
