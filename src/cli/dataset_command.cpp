// `vlbias dataset NAME DIR --out images.csv`: a released dataset folder as one vlbias image
// table (include/vlbias/datasets/datasets.h; formats and columns in docs/datasets.md), with a short
// summary on stderr and, with --summary, every count and listed file as JSON.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/terminal.h"
#include "vlbias/datasets/datasets.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/io/parquet/parquet_images.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/table/table.h"

namespace vlbias::cli_internal {

namespace {

namespace fs = std::filesystem;

struct DatasetArgs {
  std::string name, dir, out, summary;
  bool check_images = false;
  std::size_t max_image_pixels = kPillowMaxImagePixels;
  DatasetOptions options;
};

// --check-images: decodes every row's image (in parallel), drops the ones that fail and
// returns them with the decoder's reason.
std::vector<DatasetIssue> drop_undecodable(DatasetTable& data, const fs::path& dir,
                                           std::size_t max_pixels) {
  std::vector<std::string> why(data.rows.size());
  parallel_for(data.rows.size(), [&](std::size_t r) {
    try {
      decode_image_file(dir / data.rows[r][0], max_pixels);
    } catch (const Error& e) {
      why[r] = e.what();
    }
  });
  std::vector<DatasetIssue> bad;
  std::vector<std::vector<std::string>> kept;
  for (std::size_t r = 0; r < data.rows.size(); ++r) {
    if (why[r].empty()) {
      kept.push_back(std::move(data.rows[r]));
    } else if (bad.empty() || bad.back().where != data.rows[r][0]) {
      bad.push_back({data.rows[r][0], why[r]});
    }
  }
  data.rows = std::move(kept);
  return bad;
}

std::string cell_label(const DatasetTable& data, const std::vector<std::string>& key) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (!key[i].empty()) parts.push_back(data.cell_columns[i] + "=" + key[i]);
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

void print_issues(const char* what, const std::vector<DatasetIssue>& issues) {
  if (issues.empty()) return;
  eprint("  {}: {} (first: {}: {})\n", what, issues.size(), issues[0].where, issues[0].reason);
}

void print_dataset_summary(const DatasetTable& data, const DatasetCells& cells,
                           const std::vector<DatasetIssue>& unreadable, const std::string& out) {
  eprint("vlbias: {}: wrote {} rows to {} ({} labelled in {})\n", dataset_name(data.kind),
         data.rows.size(), out, data.labelled,
         fmt::join(
             data.label_files.empty() ? std::vector<std::string>{"file names"} : data.label_files,
             ", "));
  if (data.sets > 0) {
    eprint("  counterfactual sets: {} ({} with an image absent)\n", data.sets,
           data.incomplete_sets);
  }
  eprint("  cells ({}): {}\n", fmt::join(data.cell_columns, " x "), cells.keys.size());
  if (cells.keys.size() <= 24) {
    for (std::size_t i = 0; i < cells.keys.size(); ++i) {
      eprint("    {}: {}\n", cell_label(data, cells.keys[i]), cells.counts[i]);
    }
  } else {
    const auto [lo, hi] = std::minmax_element(cells.counts.begin(), cells.counts.end());
    eprint("    smallest {} ({}), largest {} ({}); all in --summary\n", *lo,
           cell_label(data, cells.keys[lo - cells.counts.begin()]), *hi,
           cell_label(data, cells.keys[hi - cells.counts.begin()]));
  }
  print_issues("listed but missing", data.missing);
  print_issues("on disk but unlabelled", data.unlabelled);
  print_issues("malformed", data.malformed);
  print_issues("unreadable", unreadable);
}

nlohmann::ordered_json issues_json(const std::vector<DatasetIssue>& issues) {
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const DatasetIssue& i : issues) items.push_back({{"where", i.where}, {"reason", i.reason}});
  return {{"count", issues.size()}, {"items", items}};
}

void write_summary(const DatasetArgs& args, const DatasetTable& data, const DatasetCells& cells,
                   const std::vector<DatasetIssue>& unreadable) {
  nlohmann::ordered_json j;
  j["dataset"] = dataset_name(data.kind);
  j["folder"] = args.dir;
  j["table"] = args.out;
  j["rows"] = data.rows.size();
  j["labelled"] = data.labelled;
  j["label_files"] = data.label_files;
  if (data.kind == DatasetKind::SocialCounterfactuals) {
    j["sets"] = data.sets;
    j["incomplete_sets"] = data.incomplete_sets;
  }
  j["cell_columns"] = data.cell_columns;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < cells.keys.size(); ++i) {
    nlohmann::ordered_json key = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < data.cell_columns.size(); ++c) {
      key[data.cell_columns[c]] = cells.keys[i][c];
    }
    list.push_back({{"cell", key}, {"n", cells.counts[i]}});
  }
  j["cells"] = list;
  j["missing"] = issues_json(data.missing);
  j["unlabelled"] = issues_json(data.unlabelled);
  j["malformed"] = issues_json(data.malformed);
  j["unreadable"] = issues_json(unreadable);
  if (!args.check_images) j["unreadable"] = nullptr;  // not checked
  const std::string text = j.dump(2) + "\n";
  AtomicWriter writer(args.summary);
  writer.write(text.data(), text.size());
  writer.commit();
}

void run_dataset(DatasetArgs& args) {
  VLBIAS_CHECK(!args.name.empty() && !args.dir.empty() && !args.out.empty(), UsageError,
               "vlbias dataset needs NAME DIR --out T.csv (or: vlbias dataset extract-images "
               "T.parquet --column image --out DIR)");
  VLBIAS_CHECK(args.out.size() > 4 && args.out.substr(args.out.size() - 4) == ".csv", UsageError,
               "--out '{}' must end in .csv", args.out);
  VLBIAS_CHECK(args.summary.empty() || (args.summary.size() > 5 &&
                                        args.summary.substr(args.summary.size() - 5) == ".json"),
               UsageError, "--summary '{}' must end in .json", args.summary);
  const DatasetKind kind = parse_dataset_kind(args.name);
  if (args.options.images_out.empty()) {  // beside the table: tables/fairface_images/
    const fs::path out(args.out);
    args.options.images_out = (out.parent_path() / (out.stem().string() + "_images")).string();
  }
  DatasetTable data = read_dataset(kind, args.dir, args.options);
  std::vector<DatasetIssue> unreadable;
  if (args.check_images) unreadable = drop_undecodable(data, args.dir, args.max_image_pixels);
  const fs::path base = fs::absolute(args.out).parent_path();
  write_csv(dataset_to_table(data, args.dir, base), args.out);
  const DatasetCells cells = dataset_cells(data);
  if (!args.summary.empty()) write_summary(args, data, cells, unreadable);
  if (!quiet()) print_dataset_summary(data, cells, unreadable, args.out);
}

struct ExtractArgs {
  std::string table, column = "image", out;
};

// `vlbias dataset extract-images T.parquet --column image --out DIR`: the images as files and
// DIR/images.csv, an image table over them with the table's other columns.
void run_extract_images(const ExtractArgs& args) {
  const ExtractedImages images = extract_parquet_images(args.table, args.column, args.out);
  const fs::path csv = fs::path(args.out) / "images.csv";
  write_csv(images.table, csv.string());
  if (quiet()) return;
  eprint("vlbias: extract-images: wrote {} images of {} rows to {} and the table {}\n",
         images.table.rows, images.rows, args.out, csv.string());
  if (images.without_bytes > 0) {
    eprint("  rows without image bytes (no file, not in the table): {}\n", images.without_bytes);
  }
  if (images.renamed > 0) {
    eprint("  stored paths unsafe or repeated, named by row instead: {}\n", images.renamed);
  }
  if (images.unknown_format > 0) {
    eprint("  not JPEG, PNG, WebP or GIF (written as .bin): {}\n", images.unknown_format);
  }
}

void add_extract_images_command(CLI::App* dataset) {
  auto args = std::make_shared<ExtractArgs>();
  CLI::App* cmd = dataset->add_subcommand(
      "extract-images",
      "Write the images stored in a Parquet table (Hugging Face's Image feature,\n"
      "struct<bytes, path>, or a binary column) as files, and DIR/images.csv: path, row\n"
      "and the table's other columns, an image table for encode and the audits");
  cmd->add_option("table", args->table, "The .parquet file or folder of shards")->required();
  cmd->add_option("--column", args->column, "The image column")->capture_default_str();
  cmd->add_option("--out", args->out, "The folder to write (made if absent)")->required();
  cmd->callback([args] { run_extract_images(*args); });
}

}  // namespace

void add_dataset_command(CLI::App& app) {
  auto args = std::make_shared<DatasetArgs>();
  CLI::App* cmd = app.add_subcommand(
      "dataset",
      "Read a released dataset folder into one image table (CSV): path relative to the\n"
      "table, plus the dataset's labels under standard names (docs/datasets.md)");
  cmd->add_option("name", args->name,
                  "fairface, utkface, causalface, geode, dollarstreet or socialcounterfactuals\n"
                  "(required)");
  cmd->add_option("dir", args->dir, "The folder the release unpacks to (required)");
  cmd->add_option("--out", args->out, "The image table to write (.csv; required)");
  cmd->add_option("--summary", args->summary,
                  "Also write the counts and every missing, unlabelled, malformed and\n"
                  "unreadable file as JSON");
  cmd->add_option("--split", args->options.split, "FairFace: train, val or all")
      ->capture_default_str();
  cmd->add_flag("--topic-rows", args->options.topic_rows,
                "Dollar Street: one row per image and topic (column topic) instead of one\n"
                "per image with its topics joined by '|' (column topics)");
  cmd->add_option("--labels", args->options.labels,
                  "GeoDE, Dollar Street, SocialCounterfactuals: the label file to read instead\n"
                  "of index.csv, images_v2.csv or every metadata_*.csv (relative to DIR)");
  cmd->add_option("--images-out", args->options.images_out,
                  "FairFace, SocialCounterfactuals as Hugging Face Parquet shards: the folder\n"
                  "the images are extracted to (default: beside --out, T_images/)");
  cmd->add_flag("--keep-missing", args->options.keep_missing,
                "Keep rows whose image file is absent (they are dropped and listed by default)");
  cmd->add_flag("--check-images", args->check_images,
                "Decode every image and drop (and list) the ones that do not decode");
  cmd->add_option("--max-image-pixels", args->max_image_pixels,
                  "With --check-images: images over twice this many pixels are unreadable")
      ->capture_default_str();
  add_extract_images_command(cmd);
  add_visage_labels_command(cmd);
  cmd->callback([args, cmd] {
    if (!cmd->get_subcommands().empty()) return;  // extract-images or visage-labels ran
    run_dataset(*args);
  });
}

}  // namespace vlbias::cli_internal
