// libFuzzer target for what the generation drivers read from servers (src/generate): chat
// completions, Perspective answers and API error bodies under a 2xx and a 4xx status,
// base64 (decode, and encode round trips), image sniffing, Retry-After, the JSON depth limit
// and the key redaction. Nothing may throw: a server's bytes are data, never a reason to
// stop a run.
#include <cstddef>
#include <cstdint>
#include <string>

#include "job.h"
#include "vlbias/generate/http_client.h"
#include "vlbias/generate/redact.h"
#include "vlbias/io/json.h"

using namespace vlbias;
using namespace vlbias::generate_internal;

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
  }
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
  return 0;
}
