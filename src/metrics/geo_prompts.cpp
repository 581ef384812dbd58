// DIG-In's text-to-image prompts (paper 002, 3.3) for the objects, regions and countries of a
// real-image table: include/vlbias/metrics/prompt_sets.h, docs/methods.md#geo-t2i-prompts.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/metrics/prompt_sets.h"

namespace vlbias {

namespace {

// The region names DIG-In's prompts use for GeoDE's labels and Dollar Street's region ids
// (its prompt files: "bag in East Asia", "refrigerator in the Americas").
const std::map<std::string, std::string>& region_names() {
  static const std::map<std::string, std::string> names = {{"Americas", "the Americas"},
                                                           {"EastAsia", "East Asia"},
                                                           {"SouthEastAsia", "Southeast Asia"},
                                                           {"WestAsia", "West Asia"},
                                                           {"af", "Africa"},
                                                           {"am", "the Americas"},
                                                           {"as", "Asia"},
                                                           {"eu", "Europe"}};
  return names;
}

std::string spelled_region(const std::string& label) {
  const auto it = region_names().find(label);
  return it == region_names().end() ? label : it->second;
}

std::string spelled_object(std::string object) {
  std::replace(object.begin(), object.end(), '_', ' ');
  return object;
}

bool is_blank_prompt(const std::string& s) {
  return s.find_first_not_of(" \t\r\n") == std::string::npos;
}

struct Row {
  std::string prompt, object, region, country, form;
};

// Per region, its countries by image count (most first; ties by bytes), is_blank_prompt ones left
// out.
std::map<std::string, std::vector<std::string>> countries_by_region(
    const std::vector<std::string>& regions, const std::vector<std::string>& countries) {
  std::map<std::string, std::map<std::string, std::size_t>> counts;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    if (!is_blank_prompt(regions[i]) && !is_blank_prompt(countries[i]))
      ++counts[regions[i]][countries[i]];
  }
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [region, by_country] : counts) {
    std::vector<std::pair<std::string, std::size_t>> list(by_country.begin(), by_country.end());
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& entry : list) out[region].push_back(entry.first);
  }
  return out;
}

}  // namespace

GeoPromptForm parse_geo_prompt_form(const std::string& text) {
  if (text == "object") return GeoPromptForm::Object;
  if (text == "object-region") return GeoPromptForm::ObjectRegion;
  if (text == "object-country") return GeoPromptForm::ObjectCountry;
  VLBIAS_FAIL(UsageError,
              "unknown prompt form '{}'; expected object, object-region or object-country", text);
}

Table geo_t2i_prompts(const std::vector<std::string>& objects,
                      const std::vector<std::string>& regions,
                      const std::vector<std::string>& countries,
                      const GeoT2iPromptOptions& options) {
  VLBIAS_CHECK(objects.size() == regions.size() && objects.size() == countries.size(),
               InternalError, "geo_t2i_prompts: {} objects, {} regions, {} countries",
               objects.size(), regions.size(), countries.size());
  VLBIAS_CHECK(options.countries_per_region >= 1, UsageError,
               "the countries per region must be at least 1");
  std::set<std::string> object_set;
  std::set<std::pair<std::string, std::string>> cells;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    if (is_blank_prompt(objects[i])) continue;
    object_set.insert(objects[i]);
    if (!is_blank_prompt(regions[i])) cells.emplace(objects[i], regions[i]);
  }
  std::vector<Row> rows;
  const char* form = "object";
  if (options.form == GeoPromptForm::Object) {
    for (const std::string& o : object_set) rows.push_back({spelled_object(o), o, "", "", form});
  } else if (options.form == GeoPromptForm::ObjectRegion) {
    form = "object-region";
    for (const auto& [o, r] : cells)
      rows.push_back({spelled_object(o) + " in " + spelled_region(r), o, r, "", form});
  } else {
    form = "object-country";
    const auto by_region = countries_by_region(regions, countries);
    for (const auto& [o, r] : cells) {
      const auto it = by_region.find(r);
      if (it == by_region.end()) continue;  // a region without countries: no country prompt
      const std::size_t n = std::min(options.countries_per_region, it->second.size());
      std::vector<std::string> chosen(it->second.begin(), it->second.begin() + n);
      std::sort(chosen.begin(), chosen.end());
      for (const std::string& c : chosen)
        rows.push_back({spelled_object(o) + " in " + c, o, r, c, form});
    }
  }
  VLBIAS_CHECK(!rows.empty(), UsageError, "no {} prompt: the table has no row with an object{}",
               form,
               options.form == GeoPromptForm::Object
                   ? ""
                   : (options.form == GeoPromptForm::ObjectRegion ? " and a region"
                                                                  : ", a region and a country"));
  Table t;
  t.source = "<geo t2i prompts>";
  t.rows = rows.size();
  std::vector<std::string> prompt, object, region, country, forms;
  for (const Row& r : rows) {
    prompt.push_back(r.prompt);
    object.push_back(r.object);
    region.push_back(r.region);
    country.push_back(r.country);
    forms.push_back(r.form);
  }
  for (std::size_t r = 0; r < t.rows; ++r) t.line_of_row.push_back(r + 2);
  add_string_column(t, "prompt", prompt);
  add_string_column(t, "object", object);
  add_string_column(t, "region", region);
  add_string_column(t, "country", country);
  add_string_column(t, "form", forms);
  return t;
}

}  // namespace vlbias
