// SocialCounterfactuals (Howard et al., CVPR 2024): the metadata_*.csv files, one row per
// counterfactual set, and the images the generation script names {seed}_{k}.jpg.
// Formats and quirks: docs/datasets.md.
#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "datasets_detail.h"
#include "vlbias/core/error.h"

namespace vlbias::datasets_internal {

namespace {

constexpr std::string_view kMetadataHeader =
    "seed,p2p_threshold,cfg_scale,filename,rank,caption_K...";

// The three released subsets, as their metadata's filename column names them
// ("a_picture_of_race_gender_plumber"): the subset and its two varied attributes.
struct Subset {
  std::string_view key;     // "race_gender"
  std::string_view name;    // "race-gender"
  std::string_view first;   // attribute before the last in the caption
  std::string_view second;  // the last attribute, just before the occupation
};
constexpr std::array<Subset, 3> kSubsets = {{
    {"race_gender", "race-gender", "race", "gender"},
    {"physical_gender", "physical-gender", "physical_trait", "gender"},
    {"physical_race", "physical-race", "physical_trait", "race"},
}};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The subset and the occupation ("civil engineer") of a filename; nullptr when it names none.
const Subset* parse_set_name(const std::string& filename, std::string* occupation) {
  for (const Subset& s : kSubsets) {
    const std::string marker = std::string(s.key) + "_";
    const std::size_t at = filename.find(marker);
    if (at == std::string::npos || (at > 0 && filename[at - 1] != '_')) continue;
    std::string occ = filename.substr(at + marker.size());
    if (occ.empty()) return nullptr;
    std::replace(occ.begin(), occ.end(), '_', ' ');
    *occupation = occ;
    return &s;
  }
  return nullptr;
}

// A caption "A picture of a Middle Eastern female plumber": the words between the last
// article and the occupation are the two attributes. The one of a single word is the
// gender (last) or the physical trait (first); a race may be two words ("Middle Eastern").
bool parse_caption(std::string_view caption, const std::string& occupation, const Subset& subset,
                   std::string* first, std::string* second) {
  std::vector<std::string> words;
  for (std::string_view w : split_on(caption, ' ')) {
    if (!w.empty()) words.emplace_back(w);
  }
  std::vector<std::string> occ_words;
  for (std::string_view w : split_on(occupation, ' ')) occ_words.push_back(lower(w));
  if (words.size() < occ_words.size() + 3) return false;
  const std::size_t head = words.size() - occ_words.size();
  for (std::size_t i = 0; i < occ_words.size(); ++i) {
    if (lower(words[head + i]) != occ_words[i]) return false;
  }
  std::size_t article = head;
  while (article > 0 && lower(words[article - 1]) != "a" && lower(words[article - 1]) != "an") {
    --article;
  }
  if (article == 0 || head - article < 2) return false;
  const bool single_first = subset.first == "physical_trait";
  const std::size_t split = single_first ? article + 1 : head - 1;
  first->clear();
  second->clear();
  for (std::size_t i = article; i < head; ++i) {
    std::string& into = i < split ? *first : *second;
    if (!into.empty()) into += ' ';
    into += words[i];
  }
  return !first->empty() && !second->empty();
}

// Every image under the folder by its file name, for the generation script's {seed}_{k}.jpg
// (in one folder per prompt); a name found twice maps to "" (ambiguous).
std::map<std::string, std::string> index_images(const fs::path& dir, DatasetTable& data) {
  std::map<std::string, std::string> by_name;
  for (const std::string& rel : list_images(dir, "", data.malformed)) {
    const std::string name = fs::path(rel).filename().string();
    auto [it, fresh] = by_name.emplace(name, rel);
    if (!fresh && !it->second.empty()) {
      data.malformed.push_back({rel, fmt::format("{} is also at {}", name, it->second)});
      it->second.clear();
    }
  }
  return by_name;
}

std::vector<std::string> metadata_files(const fs::path& dir, const DatasetOptions& options) {
  if (!options.labels.empty()) return {options.labels};
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("metadata_", 0) == 0 && name.size() > 13 &&
        name.substr(name.size() - 4) == ".csv") {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  VLBIAS_CHECK(!names.empty(), InputError,
               "{} is not a SocialCounterfactuals folder: it has no metadata_*.csv (the "
               "release's metadata_race_gender.csv, metadata_physical_gender.csv, "
               "metadata_physical_race.csv)",
               dir.string());
  return names;
}

void read_metadata(const fs::path& dir, const std::string& name,
                   const std::map<std::string, std::string>& images, DatasetTable& data) {
  const Table meta = read_label_table(dir, name, "SocialCounterfactuals",
                                      "a metadata CSV with one row per counterfactual set");
  data.label_files.push_back(name);
  const Column& seed = require_column(meta, {"seed"}, kMetadataHeader);
  const Column& filename = require_column(meta, {"filename"}, kMetadataHeader);
  const Column& rank = require_column(meta, {"rank"}, kMetadataHeader);
  std::vector<std::pair<std::string, const Column*>> captions;
  for (const Column& c : meta.columns) {
    if (c.name.rfind("caption_", 0) == 0 && all_digits(std::string_view(c.name).substr(8))) {
      captions.emplace_back(c.name.substr(8), &c);
    }
  }
  VLBIAS_CHECK(!captions.empty(), InputError,
               "{} has no caption_K column: the release's header is {}", meta.source,
               kMetadataHeader);
  for (std::size_t r = 0; r < meta.rows; ++r) {
    std::string occupation, first, second;
    const Subset* subset = parse_set_name(filename.text(r), &occupation);
    if (subset == nullptr || !all_digits(seed.text(r)) || !all_digits(rank.text(r))) {
      data.malformed.push_back(
          {label_row_where(meta, r),
           fmt::format("filename '{}', seed '{}' or rank '{}' is not a set of the release",
                       filename.text(r), seed.text(r), rank.text(r))});
      continue;
    }
    ++data.sets;
    std::size_t found = 0;
    for (const auto& [k, column] : captions) {
      const std::string caption = column->text(r);
      if (caption.empty()) continue;  // the set has no image k
      if (!parse_caption(caption, occupation, *subset, &first, &second)) {
        data.malformed.push_back(
            {label_row_where(meta, r),
             fmt::format("caption_{} '{}' does not name a {} {} before '{}'", k, caption,
                         subset->first, subset->second, occupation)});
        continue;
      }
      const std::string image = seed.text(r) + "_" + k + ".jpg";
      const auto at = images.find(image);
      const bool present = at != images.end() && !at->second.empty();
      found += present;
      std::vector<std::string> row = {present ? at->second : filename.text(r) + "/" + image,
                                      filename.text(r) + "/" + seed.text(r),
                                      std::string(subset->name),
                                      occupation,
                                      "",
                                      "",
                                      "",
                                      first + " " + second,
                                      k,
                                      caption,
                                      rank.text(r),
                                      seed.text(r)};
      const auto put = [&](std::string_view attribute, const std::string& value) {
        const std::size_t c = attribute == "race" ? 4 : attribute == "gender" ? 5 : 6;
        row[c] = value;
      };
      put(subset->first, first);
      put(subset->second, second);
      data.rows.push_back(std::move(row));
    }
    data.incomplete_sets += found < captions.size();
  }
}

}  // namespace

DatasetTable read_socialcounterfactuals(const fs::path& dir, const DatasetOptions& options) {
  DatasetTable data;
  // `attributes` holds both varied attributes in the caption's words ("Middle Eastern female",
  // "skinny male"): paper 003's LLM baseline names them ("a picture of a {attributes}
  // {occupation}") whichever two the subset varies. The set's generation seed is `image_seed`:
  // `vlbias generate` refuses a manifest column named `seed`, the column it adds for its own.
  data.columns = {"path",          "set",     "subset",         "occupation",
                  "race",          "gender",  "physical_trait", "attributes",
                  "caption_index", "caption", "rank",           "image_seed"};
  data.numeric = {false, false, false, false, false, false, false, false, true, false, true, true};
  data.cell_columns = {"subset", "race", "gender", "physical_trait"};
  const std::vector<std::string> names = metadata_files(dir, options);
  const std::map<std::string, std::string> images = index_images(dir, data);
  for (const std::string& name : names) read_metadata(dir, name, images, data);
  finish_dataset(data, dir, {}, options.keep_missing);
  std::set<std::string> named;
  for (const auto& row : data.rows) named.insert(row[0]);
  for (const auto& [name, rel] : images) {
    if (!rel.empty() && !named.count(rel))
      data.unlabelled.push_back({rel, "no metadata row names it"});
  }
  std::sort(data.unlabelled.begin(), data.unlabelled.end(),
            [](const DatasetIssue& a, const DatasetIssue& b) { return a.where < b.where; });
  return data;
}

}  // namespace vlbias::datasets_internal
