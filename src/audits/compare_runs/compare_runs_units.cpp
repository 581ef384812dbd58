// compare-runs: reading the runs (include/vlbias/audits/compare_runs.h): each run's
// summary.json, checked against the schema "vlbias.summary/1", and the units tables its
// findings name, reduced to per-unit sums.
#include <cmath>
#include <numbers>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare_runs_internal.h"
#include "vlbias/audits/compare_runs.h"
#include "vlbias/core/error.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/run/run_paths.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

std::vector<std::string> default_stimulus_inputs(const std::string& kind) {
  if (kind == "social-perception" || kind == "trait-pairs") {
    return {"images.table", "prompts.manifest"};
  }
  if (kind == "geo-diversity") return {"real.table", "real.features", "objects.table"};
  return {};
}

}  // namespace vlbias

namespace vlbias::audits_internal {

namespace {

constexpr const char* kSchema = "vlbias.summary/1";

// The finding's string field `key` ("" when absent or null); InputError when it is there
// with another type.
std::string string_field(const Json& f, const char* key, const std::string& where) {
  if (!f.contains(key) || f[key].is_null()) return "";
  VLBIAS_CHECK(f[key].is_string(), InputError, "{}: \"{}\" must be a string", where, key);
  return f[key].get<std::string>();
}

void check_finding(const Json& f, std::size_t i, const std::string& source) {
  const std::string where = fmt::format("{}: findings[{}]", source, i);
  VLBIAS_CHECK(f.is_object(), InputError, "{} is not an object", where);
  VLBIAS_CHECK(f.contains("id") && f["id"].is_string() && !f["id"].get<std::string>().empty(),
               InputError, "{} has no \"id\" (a non-empty string)", where);
  VLBIAS_CHECK(f.contains("estimate") && (f["estimate"].is_number() || f["estimate"].is_null()),
               InputError, "{} ('{}') has no \"estimate\" (a number, or null)", where,
               f["id"].get<std::string>());
  if (f.contains("ci") && !f["ci"].is_null()) {
    const Json& ci = f["ci"];
    VLBIAS_CHECK(ci.is_object() && ci.contains("lower") && ci.contains("upper"), InputError,
                 "{} ('{}'): \"ci\" must be null or {{lower, upper, level}}", where,
                 f["id"].get<std::string>());
  }
  const std::string better = string_field(f, "better", where);
  VLBIAS_CHECK(
      better.empty() || better == "lower" || better == "higher" || better == "closer_to_zero",
      InputError, "{}: \"better\" is '{}'; expected lower, higher, closer_to_zero or null", where,
      better);
}

// The units table's path inside the run folder: relative, without "..".
std::filesystem::path units_path(const RunData& run, const std::string& table,
                                 const std::string& id) {
  const std::filesystem::path rel(table);
  bool inside = !table.empty() && rel.is_relative();
  for (const auto& part : rel) inside = inside && part != "..";
  VLBIAS_CHECK(inside, InputError,
               "{}: the units table '{}' of finding '{}' is not a path inside the run folder",
               run.summary_path.string(), table, id);
  VLBIAS_CHECK(rel.extension() == ".csv", InputError,
               "{}: the units table '{}' of finding '{}' is not a .csv file (vlbias audit writes "
               "units/NAME.csv)",
               run.summary_path.string(), table, id);
  const std::filesystem::path p = run.dir / rel;
  std::error_code ec;  // absent, as opposed to present but a link, device or folder
  VLBIAS_CHECK(std::filesystem::exists(std::filesystem::symlink_status(p, ec)), InputError,
               "{}: the units table of finding '{}' is missing (summary.json names {})", p.string(),
               id, table);
  // No link on the way (an outside file's values would reach the comparison); what kind of
  // file it is, the table reader's input policy says (a device, a folder: named as such).
  return run_input_file(run.dir, rel, fmt::format("the units table of finding '{}'", id));
}

std::vector<std::string> split_columns(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string c = text.substr(start, end - start);
    while (!c.empty() && c.front() == ' ') c.erase(c.begin());
    while (!c.empty() && c.back() == ' ') c.pop_back();
    if (!c.empty()) out.push_back(c);
    start = end + 1;
  }
  return out;
}

struct UnitsSpec {
  std::string table, value, group, aggregate;
  std::vector<std::string> key, groups;
};

UnitsSpec parse_units_spec(const Json& u, const std::string& where) {
  VLBIAS_CHECK(u.is_object(), InputError, "{}: \"units\" must be null or an object", where);
  UnitsSpec s;
  s.table = string_field(u, "table", where + ".units");
  s.value = string_field(u, "value", where + ".units");
  s.group = string_field(u, "group", where + ".units");
  s.aggregate = string_field(u, "aggregate", where + ".units");
  s.key = split_columns(string_field(u, "key", where + ".units"));
  VLBIAS_CHECK(!s.table.empty() && !s.value.empty() && !s.key.empty(), InputError,
               "{}: \"units\" needs table, key and value", where);
  VLBIAS_CHECK(s.aggregate == "mean" || s.aggregate == "mean_difference", InputError,
               "{}: units.aggregate is '{}'; expected mean or mean_difference", where, s.aggregate);
  if (s.aggregate == "mean_difference") {
    VLBIAS_CHECK(
        !s.group.empty() && u.contains("groups") && u["groups"].is_array() &&
            u["groups"].size() == 2 && u["groups"][0].is_string() && u["groups"][1].is_string(),
        InputError, "{}: a mean_difference needs units.group and units.groups [A, B]", where);
    s.groups = {u["groups"][0].get<std::string>(), u["groups"][1].get<std::string>()};
  }
  return s;
}

// Reads the table and sums each unit's rows.
UnitsData read_units(const std::filesystem::path& path, const UnitsSpec& s, const std::string& id) {
  const Table t = read_table(path.string());
  UnitsData d;
  d.source = path.string();
  d.difference = s.aggregate == "mean_difference";
  d.rows = t.rows;
  std::vector<const Column*> key_cols;
  for (const std::string& k : s.key) key_cols.push_back(&t.column(k));  // InputError names it
  const std::vector<double>& value = t.numeric(s.value, /*allow_missing=*/true);
  const Column* group = d.difference ? &t.column(s.group) : nullptr;
  std::map<std::string, std::size_t> index;
  std::set<std::string> seen_groups;
  for (std::size_t r = 0; r < t.rows; ++r) {
    std::string key;
    for (std::size_t c = 0; c < key_cols.size(); ++c) {
      VLBIAS_CHECK(!key_cols[c]->missing(r), InputError,
                   "{}: line {}: the unit key column '{}' is empty (finding '{}')", d.source,
                   t.line_of_row.empty() ? r + 2 : t.line_of_row[r], s.key[c], id);
      if (c) key += '\x1f';
      key += key_cols[c]->text(r);
    }
    int side = 0;
    if (group != nullptr) {
      const std::string g = group->text(r);
      seen_groups.insert(g);
      side = g == s.groups[0] ? 0 : g == s.groups[1] ? 1 : -1;
    }
    const auto [it, fresh] = index.emplace(key, d.keys.size());
    if (fresh) {
      d.keys.push_back(key);
      d.units.emplace_back();
    }
    if (std::isnan(value[r])) {
      ++d.rows_missing;
      continue;
    }
    VLBIAS_CHECK(std::isfinite(value[r]), InputError,
                 "{}: line {}: the value column '{}' holds {} (finding '{}')", d.source,
                 t.line_of_row.empty() ? r + 2 : t.line_of_row[r], s.value, value[r], id);
    UnitSums& u = d.units[it->second];
    if (side == 0) {
      u.s0 += value[r];
      u.n0 += 1;
    } else if (side == 1) {
      u.s1 += value[r];
      u.n1 += 1;
    }
  }
  for (const std::string& g : s.groups) {
    VLBIAS_CHECK(seen_groups.count(g) == 1, InputError,
                 "{}: the group '{}' of finding '{}' (units.groups) is not in column '{}'",
                 d.source, g, id, s.group);
  }
  VLBIAS_CHECK(!d.units.empty(), InputError, "{}: the units table of finding '{}' has no rows",
               d.source, id);
  return d;
}

}  // namespace

double aggregate(const std::vector<UnitSums>& units, bool difference,
                 std::span<const std::uint32_t> idx) {
  double s0 = 0, n0 = 0, s1 = 0, n1 = 0;
  for (const std::uint32_t i : idx) {
    s0 += units[i].s0;
    n0 += units[i].n0;
    s1 += units[i].s1;
    n1 += units[i].n1;
  }
  if (n0 == 0 || (difference && n1 == 0)) return NAN;
  return difference ? s0 / n0 - s1 / n1 : s0 / n0;
}

double aggregate_all(const UnitsData& data) {
  std::vector<std::uint32_t> idx(data.units.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<std::uint32_t>(i);
  return aggregate(data.units, data.difference, idx);
}

RunData load_run(const std::filesystem::path& dir, std::string name) {
  RunData run;
  run.name = std::move(name);
  run.dir = dir;
  run.summary_path = dir / "summary.json";
  const std::string source = run.summary_path.string();
  VLBIAS_CHECK(std::filesystem::is_directory(dir), InputError,
               "{}: not a folder (compare-runs takes the run folders of vlbias audit)",
               dir.string());
  std::error_code ec;  // a link is present (and refused below), not missing
  VLBIAS_CHECK(std::filesystem::exists(std::filesystem::symlink_status(run.summary_path, ec)),
               InputError,
               "{}: missing (is {} the folder of a vlbias audit run? runs written before "
               "summary.json existed need `vlbias audit` again)",
               source, dir.string());
  run.summary =
      parse_json(read_file_text(run_input_file(dir, "summary.json", "a run's summary.json"),
                                "a run's summary.json"),
                 source);
  run.files_read.push_back(source);
  const Json& s = run.summary;
  VLBIAS_CHECK(s.is_object() && s.contains("schema") && s["schema"].is_string(), InputError,
               "{}: no \"schema\"; expected a summary of schema {}", source, kSchema);
  VLBIAS_CHECK(s["schema"].get<std::string>() == kSchema, InputError,
               "{}: schema '{}'; this vlbias reads {}", source, s["schema"].get<std::string>(),
               kSchema);
  VLBIAS_CHECK(s.contains("kind") && s["kind"].is_string(), InputError,
               "{}: no \"kind\" (the audit kind)", source);
  VLBIAS_CHECK(s.contains("findings") && s["findings"].is_array(), InputError,
               "{}: no \"findings\" array", source);
  VLBIAS_CHECK(!s.contains("run") || s["run"].is_object(), InputError,
               "{}: \"run\" must be an object", source);
  const Json& findings = s["findings"];
  for (std::size_t i = 0; i < findings.size(); ++i) {
    check_finding(findings[i], i, source);
    const std::string id = findings[i]["id"].get<std::string>();
    VLBIAS_CHECK(run.by_id.emplace(id, i).second, InputError,
                 "{}: the finding id '{}' appears twice", source, id);
  }
  return run;
}

const UnitsData* finding_units(RunData& run, const Json& finding) {
  if (!finding.contains("units") || finding["units"].is_null()) return nullptr;
  const std::string id = finding["id"].get<std::string>();
  const std::string where = fmt::format("{}: finding '{}'", run.summary_path.string(), id);
  const std::string cache_key = finding["units"].dump();
  const auto it = run.units.find(cache_key);
  if (it != run.units.end()) return &it->second;
  const UnitsSpec spec = parse_units_spec(finding["units"], where);
  const std::filesystem::path path = units_path(run, spec.table, id);
  UnitsData data = read_units(path, spec, id);
  run.files_read.push_back(path.string());
  return &run.units.emplace(cache_key, std::move(data)).first->second;
}

namespace {

// The run.inputs entry named `name`: the key itself ("images.table"), or a path whose file name
// is `name` ("images.csv" for "/data/images.csv"); nullptr when none.
const Json* find_input(const Json& inputs, const std::string& name) {
  if (inputs.contains(name)) return &inputs[name];
  for (auto it = inputs.begin(); it != inputs.end(); ++it) {
    if (std::filesystem::path(it.key()).filename() == name) return &it.value();
  }
  return nullptr;
}

const Json& run_inputs(const RunData& r) {
  static const Json none = Json::object();
  const Json& s = r.summary;
  if (s.contains("run") && s["run"].contains("inputs") && s["run"]["inputs"].is_object())
    return s["run"]["inputs"];
  return none;
}

}  // namespace

StimulusCheck compare_stimuli(const RunData& a, const RunData& b,
                              const std::vector<std::string>& names) {
  const Json &ia = run_inputs(a), &ib = run_inputs(b);
  std::vector<std::string> compared;
  for (const std::string& n : names) {
    const Json* ha = find_input(ia, n);
    const Json* hb = find_input(ib, n);
    if (ha == nullptr && hb == nullptr) continue;
    if (ha == nullptr || hb == nullptr) {
      return {false, fmt::format("run {} records no stimulus input {}",
                                 ha == nullptr ? a.name : b.name, n)};
    }
    const std::string sa = ha->is_string() ? ha->get<std::string>() : ha->dump();
    const std::string sb = hb->is_string() ? hb->get<std::string>() : hb->dump();
    if (sa != sb) {
      return {false, fmt::format("the runs' stimuli differ ({} sha256 {}... vs {}...)", n,
                                 sa.substr(0, 12), sb.substr(0, 12))};
    }
    compared.push_back(n);
  }
  if (compared.empty() && names.empty()) {
    return {true, "no stimulus input for this kind: units matched by key"};
  }
  if (compared.empty()) {
    return {true, fmt::format("run.inputs holds none of the stimulus inputs ({}): units matched "
                              "by key (--stimuli names the inputs to check)",
                              fmt::join(names, ", "))};
  }
  return {true, fmt::format("stimuli equal: {}", fmt::join(compared, ", "))};
}

double standard_normal_draw(Rng& rng) {
  const double u1 = 1.0 - rng.uniform01();
  const double u2 = rng.uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace vlbias::audits_internal
