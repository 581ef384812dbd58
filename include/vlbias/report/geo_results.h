#pragma once
// The typed contract of the geo-diversity audit's results.json (issue 38), as lvlm_results.h is
// the lvlm-counterfactual audit's: each section as a struct with ONE to_json (used by the audit
// that writes it) and ONE lenient from_json (used by whoever reads it back), so that the
// section's keys are named in src/report/geo_results.cpp only. Sections so far:
// analyses.filtered, written by the audit (src/audits/geo/geo_audit_filtered.cpp) and read by
// power (power_pilot.h).
//
// from_json is lenient, as lvlm_results.h's: a missing number reads as NaN, a missing object as
// absent (std::nullopt), a missing array as empty; it never throws on a well-formed Json.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "vlbias/io/json.h"
#include "vlbias/report/power_results.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

// The name of the refused-or-filtered section: its spec key (analyses.filtered), its key in
// results.json's analyses, its table (tables/filtered.csv), its report section and power's
// analysis of it (`vlbias power --analysis filtered`).
extern const char* const kGeoFilteredSection;

// One region of analyses.filtered: the generations the endpoint answered and the share it
// refused or filtered, with a Wilson interval.
struct GeoFilteredRegion {
  std::string region;
  // Counts are whole numbers in an audit's own results; read back, whatever the file holds
  // (NaN when absent), for the reader to check.
  double requested = stats::kNaN, refused = stats::kNaN, filtered = stats::kNaN;
  double rate = stats::kNaN;
  double ci_lower = stats::kNaN, ci_upper = stats::kNaN, ci_level = stats::kNaN;  // Wilson
};

// analyses.filtered.
struct GeoFiltered {
  std::string definition;
  std::vector<std::string> sources;  // the outcomes tables read
  std::vector<GeoFilteredRegion> regions;
  // The chi-square test of equal rates (absent in a section read back without one).
  std::optional<stats::TestResult> test;
  std::optional<TestPower> test_power;  // the test's when null, with analyses.power
  std::size_t rows = 0, failed = 0, pending = 0, without_region = 0;
};

// The section as results.json holds it.
Json to_json(const GeoFiltered& section);
// The section of a results.json's analyses object (std::nullopt when it has none).
std::optional<GeoFiltered> geo_filtered_from_json(const Json& analyses);
// The JSON pointers of the section's test and of region r's `field`.
std::string geo_filtered_test_pointer();
std::string geo_filtered_region_pointer(std::size_t r, const char* field);

}  // namespace vlbias
