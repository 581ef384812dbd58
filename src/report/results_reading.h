#pragma once
// The lenient readers the results contracts share (include/vlbias/report/<kind>_results.h):
// what a results.json written by an older vlbias may lack reads as NaN, empty or absent, never
// as an error; whoever uses a field checks it.
#include <string>
#include <vector>

#include "vlbias/io/json.h"

namespace vlbias::report_internal {

// The member `key` of an object, or nullptr when absent, null or not an object.
const Json* results_member(const Json& j, const char* key);
// A number member; NaN when absent or not a number.
double results_number(const Json& j, const char* key);
// A string member; empty when absent or not a string.
std::string results_text(const Json& j, const char* key);
// A boolean member; false when absent or not a boolean.
bool results_flag(const Json& j, const char* key);
// An array member; nullptr when absent or not an array.
const Json* results_array(const Json& j, const char* key);
// The strings of an array member (its other elements skipped).
std::vector<std::string> results_texts(const Json& j, const char* key);

}  // namespace vlbias::report_internal

namespace vlbias {

// The readers by their short names, for the results contracts (src/report/*_results.cpp).
using report_internal::results_array;
using report_internal::results_flag;
using report_internal::results_member;
using report_internal::results_number;
using report_internal::results_text;
using report_internal::results_texts;

}  // namespace vlbias
