#pragma once
// JSON outputs (src/report): every metric command prints one JSON object with
// its values and a "provenance" block (inputs' SHA-256, parameters, seed, vlbias
// version, UTC timestamp). Keys keep insertion order so output is stable. NaN
// and infinities are written as null; whoever produces one also writes a note.
#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/io/json.h"
#include "vlbias/metrics/absdiff.h"
#include "vlbias/stats/compare.h"
#include "vlbias/stats/stats.h"
#include "vlbias/stats/trends.h"

namespace vlbias {

struct Provenance {
  std::string command;               // e.g. "compare"
  Json parameters = Json::object();  // the options that shape the result
  std::vector<std::string> inputs;   // input file paths (hashed)
  // What some inputs are, role -> path (a path of `inputs`), e.g. {"images.table", "x/images.csv"}:
  // the stimuli that `vlbias compare-runs` checks are equal between runs, found by role.
  std::vector<std::pair<std::string, std::string>> roles;
  std::optional<std::uint64_t> seed;
  // SHA-256 of each input, when hashing was started early with
  // start_hashing_inputs (so it overlaps reading and computing).
  std::shared_future<std::vector<std::string>> input_hashes;
};

// Starts hashing p.inputs on a background thread; provenance_json waits for it.
// Hashing a large table takes as long as parsing it, so commands call this first.
void start_hashing_inputs(Provenance& p);

// {"vlbias_version", "command", "parameters", "inputs": [{"path", "sha256", "bytes"}],
//  "roles": {role: path} (only when some are given), "seed", "created_utc"}. Thread count is
//  deliberately absent: results do not
// depend on it.
Json provenance_json(const Provenance& provenance);

// Writes `value` (2-space indent, trailing newline) to `path`, or to stdout when
// path is empty or "-". Files are written to a temporary name and renamed when
// complete, so a reader never sees a partial file.
void write_json(const Json& value, const std::string& path);

// A double for JSON: NaN/inf become null.
Json json_number(double x);
// A count of a results contract held as a double (NaN when read back without it): a whole
// number as an integer, as the audit wrote it, anything else as json_number.
Json json_count(double x);
Json to_json(const stats::TestResult& result);
// A TestResult as to_json writes it, read back leniently (a missing or null number is NaN, a
// missing string empty), for the results contracts (e.g. lvlm_results.h).
stats::TestResult test_result_from_json(const Json& json);
Json to_json(const stats::Interval& interval);
Json to_json(const CompareReport& report);
Json to_json(const DescribeReport& report);
// AbsDiff (absdiff.h): a cell ("dimension": "" = pooled over dimensions) and a
// Mann-Whitney comparison between two factors.
Json to_json(const AbsDiffCell& cell);
Json to_json(const AbsDiffComparison& comparison);
// {"race": "Black", "gender": "female"} for a group key of the `by` columns.
Json key_json(const std::vector<std::string>& by, const std::vector<std::string>& key);
// An array of doubles (NaN/inf as null).
Json numbers_json(const std::vector<double>& values);
// Trend fits and ellipses (trends.h), their keys named by the `by` columns.
Json to_json(const TrendFit& fit, const std::vector<std::string>& by);
Json to_json(const GroupEllipse& ellipse, const std::vector<std::string>& by);

}  // namespace vlbias
