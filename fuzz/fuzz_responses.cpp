// libFuzzer target for what the generation drivers read from servers (src/generate): chat
// completions, Perspective and moderation answers and API error bodies under a 2xx and a 4xx
// status, the judge's answer parsers (Llama Guard, scale) on the raw bytes and on the text of
// a chat completion,
// base64 (decode, and encode round trips), image sniffing, Retry-After, the JSON depth limit
// and the redaction of the key and of every query value. Nothing may throw: a server's bytes
// are data, never a reason to stop a run.
#include <cstddef>
#include <cstdint>
#include <string>

#include <cmath>

#include "job.h"
#include "vlbias/generate/http_client.h"
#include "vlbias/generate/judge_answers.h"
#include "vlbias/generate/redact.h"
#include "vlbias/io/json.h"

using namespace vlbias;
using namespace vlbias::generate_internal;

namespace {

// The judge's parsers on one answer: a verdict read is consistent (categories only when unsafe,
// each a hazard name; a scale number in range and its score in [0, 1]).
void check_judge_answer(const std::string& answer) {
  const JudgeVerdict guard = parse_llama_guard(answer);
  if (!guard.parsed && (guard.unsafe || !guard.categories.empty())) __builtin_trap();
  if (!guard.unsafe && !guard.categories.empty()) __builtin_trap();
  for (const auto& c : guard.categories) {
    bool known = false;
    for (int code = 1; code <= 14; ++code) known = known || c == llama_guard_category(code);
    if (!known) __builtin_trap();
  }
  const JudgeVerdict scale = parse_scale(answer, 0, 10);
  if (scale.parsed && !(scale.number >= 0 && scale.number <= 10 && scale.score >= 0 &&
                        scale.score <= 1 && std::isfinite(scale.score)))
    __builtin_trap();
  for (const char c : moderation_column(answer)) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  for (const int status : {200, 400}) {
    HttpResponse r;
    r.status = status;
    r.body = bytes;
    const Verdict chat = read_chat_completion(r);
    // A Done or Refused answer is stored as JSON the exports parse again.
    if (chat.status == RequestStatus::Done &&
        Json::parse(chat.response, nullptr, false).is_discarded())
      __builtin_trap();
    read_perspective(r, {"TOXICITY", "INSULT"}, {"toxicity", "insult"});
    // A moderation answer read Done holds scores in [0, 1] under distinct column names.
    const Verdict moderation = read_moderation(r);
    if (moderation.status == RequestStatus::Done) {
      const Json out = Json::parse(moderation.response, nullptr, false);
      if (out.is_discarded() || !out["scores"].is_object() || out["scores"].empty())
        __builtin_trap();
      for (const auto& item : out["scores"].items()) {
        const double v = item.value().get<double>();
        if (item.key().empty() || !(v >= 0 && v <= 1)) __builtin_trap();
      }
    }
    if (chat.status == RequestStatus::Done)
      check_judge_answer(Json::parse(chat.response)["text"].get<std::string>());
  }
  check_judge_answer(bytes);
  api_error_message(bytes);
  content_policy_error(bytes);
  if (const auto decoded = base64_decode(bytes)) {
    if (base64_decode(base64_encode(*decoded)) != decoded) __builtin_trap();
  }
  if (base64_decode(base64_encode(bytes)) != bytes) __builtin_trap();
  sniff_image(bytes);
  parse_retry_after(bytes, 1'700'000'000);
  // What parses is within the limit: the pre-scan never counts shallower than the parser.
  const ParsedJson parsed = try_parse_json(bytes);
  if (parsed.ok() && json_depth(parsed.value.dump()) > kMaxJsonDepth) __builtin_trap();
  // No occurrence of a key survives redaction.
  static constexpr const char* kKey = "sk-fuzz-key-0123";
  Redactor redact;
  redact.add(kKey);
  std::string redacted = bytes;
  redact.apply(redacted);
  if (redacted.find(kKey) != std::string::npos) __builtin_trap();
  // Nor of a query value, however short (issue 37: a 7-byte one was kept).
  Redactor query;
  query.add_url_query("https://x.test/v1?api_key=QSECRET&v=Z");
  std::string cleaned = bytes;
  query.apply(cleaned);
  if (cleaned.find("QSECRET") != std::string::npos || cleaned.find('Z') != std::string::npos)
    __builtin_trap();
  return 0;
}
