// The lenient readers of the results contracts; see src/report/results_reading.h.
#include "results_reading.h"

#include "vlbias/stats/stats.h"

namespace vlbias::report_internal {

const Json* results_member(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

double results_number(const Json& j, const char* key) {
  const Json* v = results_member(j, key);
  return v != nullptr && v->is_number() ? v->get<double>() : stats::kNaN;
}

std::string results_text(const Json& j, const char* key) {
  const Json* v = results_member(j, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

bool results_flag(const Json& j, const char* key) {
  const Json* v = results_member(j, key);
  return v != nullptr && v->is_boolean() && v->get<bool>();
}

const Json* results_array(const Json& j, const char* key) {
  const Json* v = results_member(j, key);
  return v != nullptr && v->is_array() ? v : nullptr;
}

std::vector<std::string> results_texts(const Json& j, const char* key) {
  std::vector<std::string> out;
  if (const Json* a = results_array(j, key)) {
    for (const Json& x : *a) {
      if (x.is_string()) out.push_back(x.get<std::string>());
    }
  }
  return out;
}

}  // namespace vlbias::report_internal
