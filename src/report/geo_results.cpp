// The typed contract of the geo-diversity audit's results.json; see
// include/vlbias/report/geo_results.h.
#include "vlbias/report/geo_results.h"

#include <fmt/format.h>

#include "results_reading.h"
#include "vlbias/report/json_output.h"

namespace vlbias {

const char* const kGeoFilteredSection = "filtered";

Json to_json(const GeoFiltered& s) {
  Json regions = Json::array();
  for (const GeoFilteredRegion& r : s.regions) {
    regions.push_back(Json{{"region", r.region},
                           {"requested", json_count(r.requested)},
                           {"refused", json_count(r.refused)},
                           {"filtered", json_count(r.filtered)},
                           {"rate", json_number(r.rate)},
                           {"ci",
                            {{"lower", json_number(r.ci_lower)},
                             {"upper", json_number(r.ci_upper)},
                             {"level", r.ci_level},
                             {"method", "wilson"}}}});
  }
  Json out = Json::object();
  out["definition"] = s.definition;
  out["sources"] = s.sources;
  out["regions"] = std::move(regions);
  out["test"] = s.test ? to_json(*s.test) : Json();
  if (s.test && s.test_power) out["test"][kTestPowerKey] = to_json(*s.test_power);
  out["rows"] = s.rows;
  out["failed"] = s.failed;
  out["pending"] = s.pending;
  out["without_region"] = s.without_region;
  return out;
}

namespace {

std::size_t geo_size(const Json& j, const char* key) {
  const double v = results_number(j, key);
  return v >= 0 && v < 1e18 ? static_cast<std::size_t>(v) : 0;
}

}  // namespace

std::optional<GeoFiltered> geo_filtered_from_json(const Json& analyses) {
  const Json* section = results_member(analyses, kGeoFilteredSection);
  if (section == nullptr) return std::nullopt;
  GeoFiltered s;
  s.definition = results_text(*section, "definition");
  s.sources = report_internal::results_texts(*section, "sources");
  if (const Json* regions = results_array(*section, "regions")) {
    for (const Json& g : *regions) {
      GeoFilteredRegion r;
      r.region = results_text(g, "region");
      r.requested = results_number(g, "requested");
      r.refused = results_number(g, "refused");
      r.filtered = results_number(g, "filtered");
      r.rate = results_number(g, "rate");
      if (const Json* ci = results_member(g, "ci")) {
        r.ci_lower = results_number(*ci, "lower");
        r.ci_upper = results_number(*ci, "upper");
        r.ci_level = results_number(*ci, "level");
      }
      s.regions.push_back(std::move(r));
    }
  }
  if (const Json* test = results_member(*section, "test")) {
    s.test = test_result_from_json(*test);
    s.test_power = test_power_from_json(*test);
  }
  s.rows = geo_size(*section, "rows");
  s.failed = geo_size(*section, "failed");
  s.pending = geo_size(*section, "pending");
  s.without_region = geo_size(*section, "without_region");
  return s;
}

std::string geo_filtered_test_pointer() {
  return fmt::format("/analyses/{}/test", kGeoFilteredSection);
}

std::string geo_filtered_region_pointer(std::size_t r, const char* field) {
  return fmt::format("/analyses/{}/regions/{}/{}", kGeoFilteredSection, r, field);
}

}  // namespace vlbias
