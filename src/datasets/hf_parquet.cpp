// FairFace and SocialCounterfactuals as the Hugging Face hub publishes them: Parquet shards whose
// `image` column is the Image feature (struct<bytes, path>) and whose other columns are the
// labels. The images are extracted (parquet_images.h) into DatasetOptions::images_out, one
// folder per shard, and the rows get the columns of the folder readers. docs/datasets.md.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "datasets_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/io/json.h"
#include "vlbias/io/parquet/parquet.h"
#include "vlbias/io/parquet/parquet_images.h"
#include "vlbias/io/run/atomic_file.h"

namespace vlbias::datasets_internal {

namespace {

// HuggingFaceM4/FairFace's ClassLabel names, in code order (its dataset card, README.md
// dataset_info: configs 0.25 and 1.25 alike), for shards without the datasets library's
// "huggingface" metadata.
constexpr std::array<const char*, 9> kHfFairFaceAges = {
    "0-2", "3-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "more than 70"};
constexpr std::array<const char*, 2> kHfFairFaceGenders = {"Male", "Female"};
constexpr std::array<const char*, 7> kHfFairFaceRaces = {
    "East Asian",     "Indian",          "Black",          "White",
    "Middle Eastern", "Latino_Hispanic", "Southeast Asian"};

struct HfShard {
  std::string file;   // path of the .parquet file
  std::string rel;    // relative to the dataset folder, '/' separators
  std::string split;  // "train", "val", "test" or ""
};

// "train-00000-of-00002.parquet" or "train/0000.parquet": the split ("validation" -> "val").
std::string hf_split_of(const fs::path& rel) {
  const auto known = [](std::string s) -> std::string {
    if (s == "validation" || s == "valid") s = "val";
    return s == "train" || s == "val" || s == "test" ? s : "";
  };
  const std::string stem = rel.stem().string();
  const std::string by_name = known(stem.substr(0, stem.find('-')));
  if (!by_name.empty()) return by_name;
  return rel.has_parent_path() ? known(rel.parent_path().filename().string()) : "";
}

// The .parquet files under dir (recursively, hidden entries skipped), in name order.
std::vector<HfShard> hf_shards(const fs::path& dir) {
  std::vector<HfShard> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->path().extension() != ".parquet" || !it->is_regular_file(ec)) continue;
    const fs::path rel = it->path().lexically_relative(dir);
    out.push_back({it->path().string(), rel.generic_string(), hf_split_of(rel)});
  }
  VLBIAS_CHECK(!ec, InputError, "cannot list the folder {}: {}", dir.string(), ec.message());
  std::sort(out.begin(), out.end(),
            [](const HfShard& a, const HfShard& b) { return a.rel < b.rel; });
  // One configuration: FairFace's 0.25/ and 1.25/ hold the same rows at two paddings.
  std::vector<std::string> configs;
  for (const HfShard& s : out) {
    fs::path folder = fs::path(s.rel).parent_path();
    if (!s.split.empty() && hf_split_of(folder / "x") == s.split) folder = folder.parent_path();
    const std::string text = folder.empty() ? "." : folder.generic_string();
    if (std::find(configs.begin(), configs.end(), text) == configs.end()) configs.push_back(text);
  }
  VLBIAS_CHECK(configs.size() <= 1, UsageError,
               "{} holds the Parquet shards of several configurations ({}); give the folder of "
               "one",
               dir.string(), fmt::join(configs, ", "));
  return out;
}

// The shard's images extracted into images_out/<shard path without .parquet>/.
ExtractedImages extract_hf_shard(const HfShard& shard, const DatasetOptions& options,
                                 DatasetTable& data) {
  VLBIAS_CHECK(!options.images_out.empty(), UsageError,
               "the Hugging Face layout needs a folder for the extracted images (--images-out)");
  const fs::path root = fs::absolute(options.images_out).lexically_normal();
  std::error_code ec;
  VLBIAS_CHECK(fs::is_directory(root.parent_path(), ec), UsageError,
               "the folder above --images-out '{}' does not exist", options.images_out);
  make_output_folders(root.parent_path(), root.filename());
  const fs::path sub = fs::path(shard.rel).replace_extension();
  if (sub.has_parent_path()) make_output_folders(root, sub.parent_path());
  ExtractedImages images = extract_parquet_images(shard.file, "image", root / sub);
  data.label_files.push_back(shard.rel);
  if (images.without_bytes > 0) {
    data.missing.push_back(
        {shard.rel, fmt::format("{} rows without image bytes (no file)", images.without_bytes)});
  }
  return images;
}

std::string hf_image_path(const DatasetOptions& options, const HfShard& shard, const Table& table,
                          std::size_t r) {
  const fs::path sub = fs::path(shard.rel).replace_extension();
  return (fs::absolute(options.images_out) / sub / table.column("path").text(r))
      .lexically_normal()
      .generic_string();
}

// The ClassLabel names of `feature`: those the datasets library wrote into the shard's
// "huggingface" metadata ({"info": {"features": {"race": {"names": [...]}}}}) when it has them,
// else `pinned` (the dataset card's).
template <std::size_t N>
std::vector<std::string> hf_class_names(const ParquetInfo& info, const char* feature,
                                        const std::array<const char*, N>& pinned) {
  const std::vector<std::string> fallback(pinned.begin(), pinned.end());
  for (const auto& [key, value] : info.metadata) {
    if (key != "huggingface") continue;
    const ParsedJson doc = try_parse_json(value);
    const Json* node = &doc.value;
    for (const char* name : {"info", "features", feature, "names"}) {
      if (!doc.ok() || !node->is_object()) return fallback;
      const auto it = node->find(name);
      if (it == node->end()) return fallback;
      node = &*it;
    }
    if (!node->is_array() || node->empty()) return fallback;
    std::vector<std::string> names;
    for (const Json& n : *node) {
      if (!n.is_string()) return fallback;
      names.push_back(n.get<std::string>());
    }
    return names;
  }
  return fallback;
}

// A ClassLabel cell: the name of its code, or the text when the column holds names already.
bool hf_class_name(const Column& c, std::size_t r, const std::vector<std::string>& names,
                   std::string* out) {
  if (c.missing(r)) return false;
  if (c.type == ColumnType::String) {
    *out = c.text(r);
    return true;
  }
  const double v = c.numbers[r];
  if (!(v >= 0 && v < static_cast<double>(names.size())) || v != std::floor(v)) return false;
  *out = names[static_cast<std::size_t>(v)];
  return true;
}

std::string hf_row_where(const HfShard& shard, const Table& table, std::size_t r) {
  return fmt::format("{} row {}", shard.rel, table.column("row").text(r));
}

const Column& hf_column(const Table& table, const HfShard& shard, std::string_view name,
                        std::string_view expected) {
  const auto at = table.find(name);
  VLBIAS_CHECK(at.has_value(), InputError,
               "{} has no column '{}': the Hugging Face release's columns are {}", shard.rel, name,
               expected);
  return table.columns[*at];
}

constexpr std::string_view kHfFairFaceColumns = "image, age, gender, race, service_test";

void read_hf_fairface_shard(const HfShard& shard, const DatasetOptions& options,
                            DatasetTable& data) {
  const ExtractedImages images = extract_hf_shard(shard, options, data);
  const Table& t = images.table;
  const Column& age = hf_column(t, shard, "age", kHfFairFaceColumns);
  const Column& gender = hf_column(t, shard, "gender", kHfFairFaceColumns);
  const Column& race = hf_column(t, shard, "race", kHfFairFaceColumns);
  const auto service_at = t.find("service_test");
  const ParquetInfo info = read_parquet_info(shard.file);
  const std::vector<std::string> ages = hf_class_names(info, "age", kHfFairFaceAges);
  const std::vector<std::string> genders = hf_class_names(info, "gender", kHfFairFaceGenders);
  const std::vector<std::string> races = hf_class_names(info, "race", kHfFairFaceRaces);
  for (std::size_t r = 0; r < t.rows; ++r) {
    std::string age_bin, g, rc, low, high;
    if (!hf_class_name(age, r, ages, &age_bin) || !hf_class_name(gender, r, genders, &g) ||
        !hf_class_name(race, r, races, &rc)) {
      data.malformed.push_back(
          {hf_row_where(shard, t, r),
           fmt::format("age '{}', gender '{}' or race '{}' is not one of the release's classes",
                       age.text(r), gender.text(r), race.text(r))});
      continue;
    }
    if (age_bin == "more than 70") {
      low = "70";
    } else {
      const auto parts = split_on(age_bin, '-');
      if (parts.size() != 2 || !all_digits(parts[0]) || !all_digits(parts[1])) {
        data.malformed.push_back(
            {hf_row_where(shard, t, r),
             fmt::format("age '{}' is not one of FairFace's groups", age_bin)});
        continue;
      }
      low = std::string(parts[0]);
      high = std::string(parts[1]);
    }
    std::string service = service_at ? t.columns[*service_at].text(r) : "";
    if (service == "true") service = "True";
    if (service == "false") service = "False";
    data.rows.push_back(
        {hf_image_path(options, shard, t, r), shard.split, age_bin, low, high, g, rc, service});
  }
}

constexpr std::string_view kHfCounterfactualColumns =
    "image, dataset_segment, a1_type, a2_type, counterfactual_set, caption, a1, a2, noun";

// "race", "gender", "physical" (or "physical_trait"): the table column of an attribute type.
std::string hf_attribute_column(const std::string& type) {
  if (type == "race" || type == "gender") return type;
  if (type == "physical" || type == "physical_trait") return "physical_trait";
  return "";
}

void read_hf_counterfactual_shard(const HfShard& shard, const DatasetOptions& options,
                                  DatasetTable& data, std::map<std::string, bool>& sets) {
  const ExtractedImages images = extract_hf_shard(shard, options, data);
  const Table& t = images.table;
  const auto col = [&](std::string_view name) -> const Column& {
    return hf_column(t, shard, name, kHfCounterfactualColumns);
  };
  const Column &set = col("counterfactual_set"), &caption = col("caption"), &a1 = col("a1"),
               &a2 = col("a2"), &a1_type = col("a1_type"), &a2_type = col("a2_type"),
               &noun = col("noun");
  for (std::size_t r = 0; r < t.rows; ++r) {
    const std::string first = hf_attribute_column(a1_type.text(r));
    const std::string second = hf_attribute_column(a2_type.text(r));
    if (first.empty() || second.empty() || first == second || a1.missing(r) || a2.missing(r) ||
        set.missing(r) || noun.missing(r)) {
      data.malformed.push_back(
          {hf_row_where(shard, t, r),
           fmt::format("a1_type '{}', a2_type '{}' are not two of race, gender, physical, or "
                       "a1, a2, counterfactual_set or noun is empty",
                       a1_type.text(r), a2_type.text(r))});
      continue;
    }
    const auto name = [](const std::string& c) {
      return c == "physical_trait" ? std::string("physical") : c;
    };
    std::vector<std::string> row = {hf_image_path(options, shard, t, r),
                                    set.text(r),
                                    name(first) + "-" + name(second),
                                    noun.text(r),
                                    "",
                                    "",
                                    "",
                                    a1.text(r) + " " + a2.text(r),
                                    "",
                                    caption.text(r),
                                    "",
                                    ""};
    row[first == "race" ? 4 : first == "gender" ? 5 : 6] = a1.text(r);
    row[second == "race" ? 4 : second == "gender" ? 5 : 6] = a2.text(r);
    data.rows.push_back(std::move(row));
    sets.emplace(set.text(r), true);
  }
}

}  // namespace

bool is_hf_parquet_folder(const fs::path& dir) {
  return !hf_shards(dir).empty();
}

DatasetTable read_hf_fairface(const fs::path& dir, const DatasetOptions& options) {
  DatasetTable data;
  data.columns = {"path",    "split",  "age_bin", "age_min",
                  "age_max", "gender", "race",    "service_test"};
  data.numeric = {false, false, false, true, true, false, false, false};
  data.cell_columns = {"race", "gender"};
  const std::vector<HfShard> shards = hf_shards(dir);
  for (const std::string split : {"train", "val"}) {
    if (options.split != "all" && options.split != split) continue;
    for (const HfShard& shard : shards) {
      if (shard.split == split) read_hf_fairface_shard(shard, options, data);
    }
  }
  VLBIAS_CHECK(!data.label_files.empty(), InputError,
               "{} is not a FairFace folder: no fairface_label_*.csv and no Parquet shard of the "
               "{} split (train-*.parquet, validation-*.parquet as in HuggingFaceM4/FairFace)",
               dir.string(), options.split == "all" ? "train or validation" : options.split);
  data.labelled = data.rows.size() + data.malformed.size();
  return data;
}

}  // namespace vlbias::datasets_internal

namespace vlbias::datasets_internal {

DatasetTable read_hf_socialcounterfactuals(const fs::path& dir, const DatasetOptions& options) {
  VLBIAS_CHECK(options.labels.empty(), UsageError,
               "--labels names a metadata CSV of the folder release; the Hugging Face layout in "
               "{} has its labels in the Parquet shards",
               dir.string());
  DatasetTable data;
  data.columns = {"path",          "set",     "subset",         "occupation",
                  "race",          "gender",  "physical_trait", "attributes",
                  "caption_index", "caption", "rank",           "image_seed"};
  data.numeric = {false, false, false, false, false, false, false, false, true, false, true, true};
  data.cell_columns = {"subset", "race", "gender", "physical_trait"};
  std::map<std::string, bool> sets;
  for (const HfShard& shard : hf_shards(dir)) {
    read_hf_counterfactual_shard(shard, options, data, sets);
  }
  data.sets = sets.size();
  data.labelled = data.rows.size() + data.malformed.size();
  return data;
}

}  // namespace vlbias::datasets_internal
