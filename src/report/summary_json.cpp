// The machine-readable summary of an audit run (include/vlbias/report/summary.h).
#include <cmath>

#include "summary_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"

namespace vlbias {

namespace report_internal {

SummaryFinding& SummaryFinding::ci(const Node& interval, double level) {
  if (interval.null() || !interval.has("lower")) return *this;
  const Node l = interval["level"];
  json_["ci"] = Json{{"lower", json_number(interval["lower"].number())},
                     {"upper", json_number(interval["upper"].number())},
                     {"level", l.null() ? Json(level) : l.json()}};
  return *this;
}

SummaryFinding& SummaryFinding::ci(double lower, double upper, double level) {
  json_["ci"] = Json{{"lower", json_number(lower)},
                     {"upper", json_number(upper)},
                     {"level", std::isnan(level) ? 0.95 : level}};
  return *this;
}

SummaryFinding& SummaryFinding::p(const Node& p, const Node& p_holm) {
  return this->p(NumberAt{p.number(), p.ptr()}, NumberAt{p_holm.number(), p_holm.ptr()});
}

SummaryFinding& SummaryFinding::p(const NumberAt& p, const NumberAt& p_holm) {
  json_["p"] = json_number(p.value);
  json_["p_holm"] = json_number(p_holm.value);
  const Json& decisive = json_["p_holm"].is_null() ? json_["p"] : json_["p_holm"];
  json_["significant"] = decisive.is_null() ? Json(nullptr) : Json(decisive.get<double>() < kAlpha);
  return *this;
}

SummaryFinding& SummaryFinding::better(const char* direction) {
  json_["better"] = direction;
  return *this;
}

SummaryFinding& SummaryFinding::units_mean(const std::string& table, const std::string& key,
                                           const std::string& value) {
  const std::string path = "units/" + table + ".csv";
  if (units_->count(path) == 0 || json_["estimate"].is_null()) return *this;
  json_["units"] = Json{{"table", path},    {"key", key},          {"value", value},
                        {"group", nullptr}, {"aggregate", "mean"}, {"groups", nullptr}};
  return *this;
}

SummaryFinding& SummaryFinding::units_difference(const std::string& table, const std::string& key,
                                                 const std::string& value, const std::string& group,
                                                 const std::string& a, const std::string& b) {
  const std::string path = "units/" + table + ".csv";
  if (units_->count(path) == 0 || json_["estimate"].is_null()) return *this;
  json_["units"] = Json{{"table", path},
                        {"key", key},
                        {"value", value},
                        {"group", group},
                        {"aggregate", "mean_difference"},
                        {"groups", Json::array({a, b})}};
  return *this;
}

SummaryFinding SummaryBuilder::add(const std::string& id, const std::string& section,
                                   const std::string& quantity, std::vector<std::string> groups,
                                   const Node& estimate) {
  return add(id, section, quantity, std::move(groups), NumberAt{estimate.number(), estimate.ptr()});
}

SummaryFinding SummaryBuilder::add(const std::string& id, const std::string& section,
                                   const std::string& quantity, std::vector<std::string> groups,
                                   const NumberAt& estimate) {
  // Labels that join to the same text (group "a b" x "c" and "a" x "b c") would repeat an id:
  // the later ones get " #2", " #3", ..., in results.json's order, so ids stay stable.
  std::string unique = id;
  for (int k = 2; !ids_.insert(unique).second; ++k) unique = id + " #" + std::to_string(k);
  findings_.push_back(Json{{"id", unique},
                           {"section", section},
                           {"quantity", quantity},
                           {"groups", groups},
                           {"estimate", json_number(estimate.value)},
                           {"ci", nullptr},
                           {"p", nullptr},
                           {"p_holm", nullptr},
                           {"significant", nullptr},
                           {"better", nullptr},
                           {"ptr", estimate.ptr},
                           {"units", nullptr}});
  SummaryFinding f(findings_.back());
  f.units_ = &units_;
  return f;
}

}  // namespace report_internal

namespace {

Json run_json(const Json& results) {
  Json inputs = Json::object();
  Json seed = nullptr, version = nullptr;
  if (results.contains("provenance") && results["provenance"].is_object()) {
    const Json& p = results["provenance"];
    if (p.contains("inputs") && p["inputs"].is_array()) {
      for (const Json& in : p["inputs"]) {
        if (in.is_object() && in.contains("path") && in["path"].is_string())
          inputs[in["path"].get<std::string>()] = in.value("sha256", Json(nullptr));
      }
    }
    // The stimuli's roles ("images.table"): compare-runs checks them by role, since two runs
    // of one study may name the same files by other paths.
    if (p.contains("roles") && p["roles"].is_object()) {
      for (const auto& [role, path] : p["roles"].items()) {
        if (path.is_string() && inputs.contains(path.get<std::string>()))
          inputs[role] = inputs[path.get<std::string>()];
      }
    }
    if (p.contains("seed")) seed = p["seed"];
    if (p.contains("vlbias_version")) version = p["vlbias_version"];
  }
  Json spec = nullptr;
  if (results.contains("spec") && !results["spec"].is_null())
    spec = sha256_hex(results["spec"].dump());
  return Json{
      {"inputs", inputs}, {"spec_sha256", spec}, {"seed", seed}, {"vlbias_version", version}};
}

}  // namespace

std::string units_table_name(const std::string& stem, const std::vector<std::string>& parts) {
  std::string out = stem;
  for (const std::string& part : parts) {
    out += "__";
    for (const char c : part) {
      const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
      out += keep ? c : '-';
    }
  }
  return out;
}

bool has_summary(const std::string& kind) {
  return kind == "social-perception" || kind == "trait-pairs" || kind == "geo-diversity" ||
         kind == "lvlm-counterfactual" || kind == "visual-stereotypes" || kind == "representation";
}

Json build_summary(const Json& results, const std::set<std::string>& units) {
  VLBIAS_CHECK(results.is_object() && results.contains("kind") && results["kind"].is_string(),
               InputError, "results.json has no \"kind\": it is not the results of vlbias audit");
  const std::string kind = results["kind"].get<std::string>();
  VLBIAS_CHECK(has_summary(kind), InputError,
               "results.json has kind '{}'; summaries exist for social-perception, trait-pairs, "
               "geo-diversity, lvlm-counterfactual, visual-stereotypes and representation",
               kind);
  report_internal::SummaryBuilder b(results, units);
  if (kind == "social-perception" || kind == "trait-pairs") {
    report_internal::summarize_dual_encoder(b);
  } else if (kind == "geo-diversity") {
    report_internal::summarize_geo_diversity(b);
  } else if (kind == "lvlm-counterfactual") {
    report_internal::summarize_lvlm_counterfactual(b);
  } else if (kind == "representation") {
    report_internal::summarize_representation(b);
  } else {
    report_internal::summarize_visual_stereotypes(b);
  }
  return Json{{"schema", kSummarySchema},
              {"kind", kind},
              {"run", run_json(results)},
              {"findings", b.take()}};
}

std::set<std::string> units_tables_present(const std::filesystem::path& run_dir) {
  std::set<std::string> out;
  std::error_code ec;
  const std::filesystem::path dir = run_dir / "units";
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(dir, ec))) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && !entry.is_symlink(ec) && entry.path().extension() == ".csv")
      out.insert("units/" + entry.path().filename().string());
  }
  return out;
}

}  // namespace vlbias
