#pragma once
// Wall-clock stamps for provenance blocks and manifests.
#include <string>

namespace vlbias {

// The current UTC time as ISO 8601 with seconds, e.g. "2026-11-24T09:30:00Z".
std::string utc_now();

}  // namespace vlbias
