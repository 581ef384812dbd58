#pragma once
// What power_pilot.cpp shares with the kinds' pilot files (src/audits/lvlm/lvlm_audit_power.cpp).
#include <cstddef>
#include <string>
#include <vector>

#include "vlbias/audits/power_pilot.h"
#include "vlbias/io/json.h"
#include "vlbias/report/lvlm_results.h"

namespace vlbias::audits_internal {

// A count of results.json as a whole number of at most stats::kMaxPowerSampleSize (InputError
// naming `field` of `source` otherwise).
std::size_t pilot_count(double v, const std::string& field, const std::string& source);
// The key object of a group as "Black female" (values in key order).
std::string pilot_key_text(const Json& key);
// The LVLM audit's Friedman tests as pilots, appended to `out`.
void lvlm_friedman_tests(const LvlmGroupTests& section, double alpha, const std::string& source,
                         std::vector<PilotTest>& out);

}  // namespace vlbias::audits_internal
