// libFuzzer target for what the generation drivers read from servers (src/generate): chat
// completions, Perspective answers and API error bodies under a 2xx and a 4xx status,
// base64 (decode, and encode round trips), image sniffing and Retry-After. Nothing may
// throw: a server's bytes are data, never a reason to stop a run.
#include <cstddef>
#include <cstdint>
#include <string>

#include "generate/job.h"
#include "vlbias/http_client.h"

using namespace vlbias;
using namespace vlbias::generate_detail;

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
  return 0;
}
