// The face datasets: FairFace (label CSVs), UTKFace and CausalFace (labels in file names).
// Formats and quirks: docs/datasets.md.
#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "datasets_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/io/cell_text.h"

namespace vlbias::datasets_internal {

namespace {

constexpr std::string_view kFairFaceHeader = "file,age,gender,race,service_test";

// FairFace's age groups as released ("0-2" ... "60-69", "more than 70"): the bin's bounds in
// years; the last has no upper bound.
bool fairface_age_bounds(std::string_view bin, std::string* low, std::string* high) {
  if (bin == "more than 70") {
    *low = "70";
    high->clear();
    return true;
  }
  const auto parts = split_on(bin, '-');
  if (parts.size() != 2 || !all_digits(parts[0]) || !all_digits(parts[1])) return false;
  *low = std::string(parts[0]);
  *high = std::string(parts[1]);
  return true;
}

void read_fairface_split(const fs::path& dir, const std::string& split, DatasetTable& data) {
  const std::string name = "fairface_label_" + split + ".csv";
  const Table labels = read_label_table(
      dir, name, "FairFace",
      "the release's label files fairface_label_train.csv and fairface_label_val.csv sit next "
      "to its train/ and val/ image folders");
  data.label_files.push_back(name);
  const Column& file = require_column(labels, {"file"}, kFairFaceHeader);
  const Column& age = require_column(labels, {"age"}, kFairFaceHeader);
  const Column& gender = require_column(labels, {"gender"}, kFairFaceHeader);
  const Column& race = require_column(labels, {"race"}, kFairFaceHeader);
  const Column* service = optional_column(labels, {"service_test"});
  for (std::size_t r = 0; r < labels.rows; ++r) {
    std::string path, low, high;
    if (!inside_folder(file.text(r), &path)) {
      data.malformed.push_back(
          {label_row_where(labels, r),
           fmt::format("file '{}' is not a path inside the folder", file.text(r))});
      continue;
    }
    if (!fairface_age_bounds(age.text(r), &low, &high)) {
      data.malformed.push_back(
          {label_row_where(labels, r),
           fmt::format("age '{}' is not one of FairFace's groups (0-2 ... more than 70)",
                       age.text(r))});
      continue;
    }
    if (gender.missing(r) || race.missing(r)) {
      data.malformed.push_back({label_row_where(labels, r), "gender or race is empty"});
      continue;
    }
    data.rows.push_back({path, split, age.text(r), low, high, gender.text(r), race.text(r),
                         service ? service->text(r) : ""});
  }
}

}  // namespace

DatasetTable read_fairface(const fs::path& dir, const DatasetOptions& options) {
  VLBIAS_CHECK(options.split == "train" || options.split == "val" || options.split == "all",
               UsageError, "--split '{}' is not train, val or all", options.split);
  DatasetTable data;
  data.columns = {"path",    "split",  "age_bin", "age_min",
                  "age_max", "gender", "race",    "service_test"};
  data.numeric = {false, false, false, true, true, false, false, false};
  data.cell_columns = {"race", "gender"};
  std::vector<std::string> scan;
  for (const std::string split : {"train", "val"}) {
    if (options.split != "all" && options.split != split) continue;
    read_fairface_split(dir, split, data);
    scan.push_back(split);
  }
  finish_dataset(data, dir, scan, options.keep_missing);
  return data;
}

// ------------------------------------------------------------------ UTKFace

namespace {

constexpr std::array<const char*, 5> kUtkRaces = {"White", "Black", "Asian", "Indian", "Others"};

// "[age]_[gender]_[race]_[date&time].jpg" (the aligned faces add ".chip.jpg"): the labels, or
// the reason the name is not one.
std::string parse_utk_name(const std::string& file, std::vector<std::string>& cells) {
  const std::string stem = file.substr(0, file.find('.'));
  const auto fields = split_on(stem, '_');
  if (fields.size() != 4) {
    return fmt::format("{} fields instead of the 4 of age_gender_race_datetime", fields.size());
  }
  if (!all_digits(fields[0]) || fields[0].size() > 3) return "the age is not a whole number";
  if (fields[1] != "0" && fields[1] != "1") {
    return fmt::format("gender code '{}' is not 0 (male) or 1 (female)", fields[1]);
  }
  if (fields[2].size() != 1 || fields[2][0] < '0' || fields[2][0] > '4') {
    return fmt::format("race code '{}' is not 0-4 (White, Black, Asian, Indian, Others)",
                       fields[2]);
  }
  if (!all_digits(fields[3])) return "the date and time are not digits";
  std::string when(fields[3]);
  if (when.size() == 17) {  // yyyymmddHHMMSSfff
    when =
        fmt::format("{}-{}-{} {}:{}:{}.{}", when.substr(0, 4), when.substr(4, 2), when.substr(6, 2),
                    when.substr(8, 2), when.substr(10, 2), when.substr(12, 2), when.substr(14, 3));
  }
  cells = {std::to_string(std::stoi(std::string(fields[0]))), fields[1] == "0" ? "male" : "female",
           kUtkRaces[static_cast<std::size_t>(fields[2][0] - '0')], when};
  return "";
}

}  // namespace

DatasetTable read_utkface(const fs::path& dir, const DatasetOptions& options) {
  DatasetTable data;
  data.columns = {"path", "age", "gender", "race", "datetime"};
  data.numeric = {false, true, false, false, false};
  data.cell_columns = {"race", "gender"};
  const std::vector<std::string> files = list_images(dir, "", data.malformed);
  for (const std::string& rel : files) {
    const std::string name = fs::path(rel).filename().string();
    std::vector<std::string> cells;
    const std::string why = parse_utk_name(name, cells);
    if (!why.empty()) {
      data.malformed.push_back({rel, why});
      continue;
    }
    cells.insert(cells.begin(), rel);
    data.rows.push_back(std::move(cells));
  }
  VLBIAS_CHECK(!data.rows.empty(), InputError,
               "{} is not a UTKFace folder: no image under it is named "
               "AGE_GENDER_RACE_DATETIME.jpg (UTKFace/1_0_0_20161219140623097.jpg.chip.jpg){}",
               dir.string(),
               files.empty() ? std::string(" and it holds no .jpg or .png at all")
                             : fmt::format(" among its {} images", files.size()));
  finish_dataset(data, dir, {}, options.keep_missing);
  return data;
}

// ------------------------------------------------------------------ CausalFace

namespace {

// The file-name abbreviation of each varied factor, and the factor it stands for.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kCausalFactors = {{
    {"age", "age"},
    {"l", "lighting"},
    {"lighting", "lighting"},  // the background-removed lighting images
    {"y", "pose"},
    {"smiling", "smiling"},
    {"brightness", "brightness"},
}};

// final_picked_{factor}/seed_{seed}/{race}_{gender}_{abbr}_{value}[_o2][_corrected][_rm_bg].png
std::string parse_causal_path(const std::string& rel, std::vector<std::string>& cells) {
  const fs::path p(rel);
  const std::string seed_dir = p.parent_path().filename().string();
  const std::string subset_dir = p.parent_path().parent_path().filename().string();
  if (seed_dir.rfind("seed_", 0) != 0 || !all_digits(std::string_view(seed_dir).substr(5)) ||
      subset_dir.rfind("final_picked_", 0) != 0) {
    return "not in a final_picked_FACTOR/seed_N folder";
  }
  const std::string stem = p.stem().string();
  const auto t = split_on(stem, '_');
  if (t.size() < 4) return "fewer than the 4 fields race_gender_factor_value";
  if (t[0] != "asian" && t[0] != "black" && t[0] != "white") {
    return fmt::format("race '{}' is not asian, black or white", t[0]);
  }
  if (t[1] != "female" && t[1] != "male") {
    return fmt::format("gender '{}' is not female or male", t[1]);
  }
  std::string_view factor;
  for (const auto& [abbr, name] : kCausalFactors) {
    if (t[2] == abbr) factor = name;
  }
  if (factor.empty())
    return fmt::format("factor '{}' is not age, l, y, smiling or brightness", t[2]);
  if (subset_dir.substr(13) != factor) {
    return fmt::format("a {} image in the folder {}", factor, subset_dir);
  }
  double level = 0;
  if (!parse_cell_number(t[3], &level)) return fmt::format("level '{}' is not a number", t[3]);
  std::string rest;
  for (std::size_t i = 4; i < t.size(); ++i) {
    if (i > 4) rest += '_';
    rest += t[i];
  }
  std::string background = "original";
  if (rest == "rm_bg" || (rest.size() > 6 && rest.substr(rest.size() - 6) == "_rm_bg")) {
    background = "removed";
    rest = rest.size() == 5 ? "" : rest.substr(0, rest.size() - 6);
  }
  if (!rest.empty() && rest != "o2" && rest != "o2_corrected") {
    return fmt::format("suffix '{}' is not o2, o2_corrected or rm_bg", rest);
  }
  cells = {rel,
           seed_dir.substr(5),
           std::string(t[0]),
           std::string(t[1]),
           std::string(factor),
           std::string(t[3]),
           rest,
           background};
  return "";
}

}  // namespace

DatasetTable read_causalface(const fs::path& dir, const DatasetOptions& options) {
  DatasetTable data;
  data.columns = {"path", "seed", "race", "gender", "factor", "level", "variant", "background"};
  data.numeric = {false, true, false, false, false, true, false, false};
  data.cell_columns = {"factor", "race", "gender"};
  const std::vector<std::string> files = list_images(dir, "", data.malformed);
  for (const std::string& rel : files) {
    std::vector<std::string> cells;
    const std::string why = parse_causal_path(rel, cells);
    if (!why.empty()) {
      data.malformed.push_back({rel, why});
      continue;
    }
    data.rows.push_back(std::move(cells));
  }
  VLBIAS_CHECK(!data.rows.empty(), InputError,
               "{} is not a CausalFace folder: no image under it is "
               "final_picked_FACTOR/seed_N/RACE_GENDER_FACTOR_LEVEL.png "
               "(final_picked_age/seed_42/asian_female_age_0.8_o2.png){}",
               dir.string(),
               files.empty() ? std::string(" and it holds no .jpg or .png at all")
                             : fmt::format(" among its {} images", files.size()));
  finish_dataset(data, dir, {}, options.keep_missing);
  return data;
}

}  // namespace vlbias::datasets_internal
