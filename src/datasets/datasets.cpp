// Dataset readers: what they share (include/vlbias/datasets/datasets.h, docs/datasets.md).
#include "vlbias/datasets/datasets.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "datasets_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/core/utf8.h"
#include "vlbias/io/cell_text.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace datasets_internal {

namespace {

bool is_image_name(const std::string& name) {
  const std::size_t dot = name.rfind('.');
  if (dot == std::string::npos) return false;
  std::string ext = name.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == "jpg" || ext == "jpeg" || ext == "png";
}

// `dir` with its links resolved: what every image path must stay inside.
fs::path resolved_root(const fs::path& dir) {
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(dir), ec);
  return ec ? fs::absolute(dir).lexically_normal() : root;
}

// Whether `path`, its links resolved, lies inside `root` (resolved_root): a label path through a
// folder link (images/out -> /elsewhere) or a link to a file outside leaves it.
bool resolved_inside(const fs::path& root, const fs::path& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) return false;
  auto q = p.begin();
  for (auto r = root.begin(); r != root.end(); ++r) {
    if (r->empty()) continue;  // a trailing '/'
    if (q == p.end() || *q != *r) return false;
    ++q;
  }
  return true;
}

}  // namespace

std::vector<std::string_view> split_on(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(sep, start);
    if (at == std::string_view::npos) {
      out.push_back(text.substr(start));
      return out;
    }
    out.push_back(text.substr(start, at - start));
    start = at + 1;
  }
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> list_images(const fs::path& dir, const std::string& sub,
                                     std::vector<DatasetIssue>& malformed) {
  std::vector<std::string> out;
  const fs::path root = sub.empty() ? dir : dir / sub;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return out;
  const fs::path inside = resolved_root(dir);
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  VLBIAS_CHECK(!ec, InputError, "cannot list the folder {}: {}", root.string(), ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    VLBIAS_CHECK(!ec, InputError, "cannot list the folder {}: {}", root.string(), ec.message());
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || name == "__MACOSX") {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec) || !is_image_name(name)) continue;
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    if (first_invalid_utf8(rel) != rel.size()) {
      malformed.push_back({escape_for_message(rel, 200), "the file name is not UTF-8"});
      continue;
    }
    if (it->is_symlink(ec) && !resolved_inside(inside, it->path())) {
      malformed.push_back({rel, "a link to a file outside the folder (not followed)"});
      continue;
    }
    out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Table read_label_table(const fs::path& dir, const std::string& name, std::string_view dataset,
                       std::string_view expected) {
  const fs::path file = fs::path(name).is_absolute() ? fs::path(name) : dir / name;
  std::error_code ec;
  VLBIAS_CHECK(fs::exists(file, ec), InputError, "{} is not a {} folder: {} does not exist ({})",
               dir.string(), dataset, file.string(), expected);
  return read_table(file.string());
}

const Column* optional_column(const Table& table, std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    if (auto c = table.find(name)) return &table.columns[*c];
  }
  return nullptr;
}

const Column& require_column(const Table& table, std::initializer_list<std::string_view> names,
                             std::string_view expected_header) {
  const Column* column = optional_column(table, names);
  VLBIAS_CHECK(column != nullptr, InputError, "{} has no column '{}': the release's header is {}",
               table.source, *names.begin(), expected_header);
  return *column;
}

std::string label_row_where(const Table& table, std::size_t row) {
  const std::size_t line = row < table.line_of_row.size() ? table.line_of_row[row] : row + 2;
  return fmt::format("{} line {}", fs::path(table.source).filename().string(), line);
}

bool inside_folder(std::string_view rel, std::string* normal) {
  if (rel.empty() || rel.front() == '/' || rel.find('\\') != std::string_view::npos) return false;
  const fs::path p = fs::path(std::string(rel)).lexically_normal();
  if (p.empty() || p.is_absolute()) return false;
  const std::string text = p.generic_string();
  if (text == "." || text == ".." || text.rfind("../", 0) == 0) return false;
  *normal = text;
  return true;
}

void finish_dataset(DatasetTable& data, const fs::path& dir, const std::vector<std::string>& scan,
                    bool keep_missing) {
  data.labelled = data.rows.size();
  std::set<std::string> named;
  std::vector<std::vector<std::string>> kept;
  kept.reserve(data.rows.size());
  const fs::path inside = resolved_root(dir);
  for (auto& row : data.rows) {
    const bool first = named.insert(row[0]).second;  // Dollar Street's topic rows repeat paths
    // A label path is resolved before it is trusted: "images/out/x.jpg" stays inside DIR by
    // its text, but not when images/out is a link to a folder elsewhere (docs/datasets.md).
    if (!resolved_inside(inside, dir / row[0])) {
      if (first) {
        data.malformed.push_back(
            {escape_for_message(row[0], 200),
             "the label path leaves the folder through a link (links are not followed out of it)"});
      }
      continue;
    }
    std::error_code ec;
    if (!fs::is_regular_file(dir / row[0], ec)) {
      if (first) data.missing.push_back({row[0], "listed by the labels, absent on disk"});
      if (!keep_missing) continue;
    }
    kept.push_back(std::move(row));
  }
  data.rows = std::move(kept);
  for (const std::string& sub : scan) {
    for (const std::string& rel : list_images(dir, sub, data.malformed)) {
      if (!named.count(rel)) data.unlabelled.push_back({rel, "no label row names it"});
    }
  }
}

}  // namespace datasets_internal

const std::vector<std::string>& dataset_names() {
  static const std::vector<std::string> names = {
      "fairface", "utkface", "causalface", "geode", "dollarstreet", "socialcounterfactuals"};
  return names;
}

DatasetKind parse_dataset_kind(std::string_view name) {
  const auto& names = dataset_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (name == names[i]) return static_cast<DatasetKind>(i);
  }
  VLBIAS_CHECK(false, UsageError, "unknown dataset '{}': expected one of {}",
               escape_for_message(name, 60), fmt::join(names, ", "));
  return DatasetKind::FairFace;
}

std::string dataset_name(DatasetKind kind) {
  return dataset_names().at(static_cast<std::size_t>(kind));
}

namespace {

// The Hugging Face Parquet layout: no label CSV of the folder release (named `csv_prefix`...),
// and .parquet files under the folder.
bool hf_layout(const fs::path& dir, std::string_view csv_prefix) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(csv_prefix, 0) == 0 && entry.path().extension() == ".csv") return false;
  }
  return datasets_internal::is_hf_parquet_folder(dir);
}

}  // namespace

DatasetTable read_dataset(DatasetKind kind, const std::filesystem::path& dir,
                          const DatasetOptions& options) {
  std::error_code ec;
  VLBIAS_CHECK(fs::is_directory(dir, ec), UsageError,
               "the dataset folder {} is not a folder (give the folder the {} release unpacks to)",
               dir.string(), dataset_name(kind));
  const bool has_labels_choice = kind == DatasetKind::GeoDe || kind == DatasetKind::DollarStreet ||
                                 kind == DatasetKind::SocialCounterfactuals;
  VLBIAS_CHECK(options.labels.empty() || has_labels_choice, UsageError,
               "--labels applies to geode, dollarstreet and socialcounterfactuals, not {}",
               dataset_name(kind));
  VLBIAS_CHECK(options.split == "all" || kind == DatasetKind::FairFace, UsageError,
               "--split applies to fairface only, not {}", dataset_name(kind));
  VLBIAS_CHECK(!options.topic_rows || kind == DatasetKind::DollarStreet, UsageError,
               "--topic-rows applies to dollarstreet only, not {}", dataset_name(kind));
  DatasetTable data;
  switch (kind) {
    case DatasetKind::FairFace:
      data = hf_layout(dir, "fairface_label_") ? datasets_internal::read_hf_fairface(dir, options)
                                               : datasets_internal::read_fairface(dir, options);
      break;
    case DatasetKind::UtkFace:
      data = datasets_internal::read_utkface(dir, options);
      break;
    case DatasetKind::CausalFace:
      data = datasets_internal::read_causalface(dir, options);
      break;
    case DatasetKind::GeoDe:
      data = datasets_internal::read_geode(dir, options);
      break;
    case DatasetKind::DollarStreet:
      data = datasets_internal::read_dollarstreet(dir, options);
      break;
    case DatasetKind::SocialCounterfactuals:
      data = hf_layout(dir, "metadata_")
                 ? datasets_internal::read_hf_socialcounterfactuals(dir, options)
                 : datasets_internal::read_socialcounterfactuals(dir, options);
      break;
  }
  data.kind = kind;
  return data;
}

Table dataset_to_table(const DatasetTable& data, const std::filesystem::path& dir,
                       const std::filesystem::path& base) {
  const fs::path abs_dir = fs::absolute(dir).lexically_normal();
  const fs::path abs_base = fs::absolute(base).lexically_normal();
  Table table;
  table.source = fmt::format("<{} table>", dataset_name(data.kind));
  table.rows = data.rows.size();
  for (std::size_t c = 0; c < data.columns.size(); ++c) {
    if (data.numeric[c]) {
      std::vector<double> values(table.rows, std::numeric_limits<double>::quiet_NaN());
      for (std::size_t r = 0; r < table.rows; ++r) {
        const std::string& text = data.rows[r][c];
        if (text.empty()) continue;
        VLBIAS_CHECK(parse_cell_number(text, &values[r]), InternalError,
                     "the {} reader wrote '{}' in its numeric column {}", dataset_name(data.kind),
                     text, data.columns[c]);
      }
      add_numeric_column(table, data.columns[c], std::move(values));
      continue;
    }
    std::vector<std::string> texts(table.rows);
    for (std::size_t r = 0; r < table.rows; ++r) {
      texts[r] = data.rows[r][c];
      if (c != 0) continue;
      const fs::path image = (abs_dir / texts[r]).lexically_normal();
      const fs::path rel = image.lexically_relative(abs_base);
      texts[r] = rel.empty() ? image.generic_string() : rel.generic_string();
    }
    add_string_column(table, data.columns[c], texts);
  }
  return table;
}

DatasetCells dataset_cells(const DatasetTable& data) {
  std::vector<std::size_t> index;
  for (const std::string& name : data.cell_columns) {
    const auto at = std::find(data.columns.begin(), data.columns.end(), name);
    VLBIAS_CHECK(at != data.columns.end(), InternalError, "cell column {} is not a column", name);
    index.push_back(static_cast<std::size_t>(at - data.columns.begin()));
  }
  DatasetCells cells;
  std::map<std::vector<std::string>, std::size_t> where;
  for (const auto& row : data.rows) {
    std::vector<std::string> key;
    for (std::size_t c : index) key.push_back(row[c]);
    auto [it, fresh] = where.emplace(key, cells.keys.size());
    if (fresh) {
      cells.keys.push_back(std::move(key));
      cells.counts.push_back(0);
    }
    ++cells.counts[it->second];
  }
  return cells;
}

}  // namespace vlbias
