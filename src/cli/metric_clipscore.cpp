// `vlbias metric clipscore`: CLIPScore of image embeddings against their texts
// (docs/methods.md#clipscore, #consistency-indicator), with the variant named in the output.
#include <CLI/CLI.hpp>
#include <cmath>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/embeddings.h"
#include "vlbias/metrics/clipscore.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/metric_json.h"

namespace vlbias::cli_internal {

namespace {

struct ClipScoreArgs {
  std::string images, texts, image_tensor, text_tensor, variant = "raw", table, text_row, by,
                                                        percentiles = "10,50,90", per_sample, out;
};

// Row i of the table -> text row: an integer column in [0, rows).
std::vector<std::size_t> text_rows(const Table& table, const std::string& column) {
  const std::vector<double>& v = table.numeric(column);
  std::vector<std::size_t> rows(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    VLBIAS_CHECK(v[i] >= 0 && std::floor(v[i]) == v[i] && v[i] < 4294967296.0, InputError,
                 "{}: column '{}' row {} holds {}; expected a non-negative integer text row.",
                 table.source, column, i + 1, v[i]);
    rows[i] = static_cast<std::size_t>(v[i]);
  }
  return rows;
}

}  // namespace

void add_clipscore_metric(CLI::App& metric) {
  auto args = std::make_shared<ClipScoreArgs>();
  CLI::App* cmd = metric.add_subcommand(
      "clipscore",
      "CLIPScore of each image embedding against its text embedding (raw cosine, Hessel\n"
      "2.5*max(cos,0), or torchmetrics max(100*cos,0)); summary, percentiles, per group");
  cmd->add_option("--images", args->images, "Image embeddings (.npy/.safetensors, rows = images)")
      ->required();
  cmd->add_option("--texts", args->texts,
                  "Text embeddings: one row per image, one row for all, or rows picked by "
                  "--text-row")
      ->required();
  cmd->add_option("--image-tensor", args->image_tensor, "Tensor name in a .safetensors file");
  cmd->add_option("--text-tensor", args->text_tensor, "Tensor name in a .safetensors file");
  cmd->add_option("--variant", args->variant, "raw | hessel | torchmetrics")->capture_default_str();
  cmd->add_option("--table", args->table, "Image table (row i = image i) for --text-row / --by");
  cmd->add_option("--text-row", args->text_row,
                  "Integer column of --table: the row of --texts for each image");
  cmd->add_option("--by", args->by, "Columns of --table: summaries per group too");
  cmd->add_option("--percentiles", args->percentiles, "Percentiles to report (numpy linear)")
      ->capture_default_str();
  cmd->add_option("--per-sample", args->per_sample,
                  "Write a CSV with row, cosine and score for each image");
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  cmd->callback([args] {
    const ClipScoreVariant variant = parse_clipscore_variant(args->variant);
    const std::vector<double> levels = split_numbers(args->percentiles, "--percentiles");
    VLBIAS_CHECK(args->table.empty() == (args->text_row.empty() && args->by.empty()), UsageError,
                 "{}",
                 args->table.empty() ? "--text-row and --by need --table (the image table)."
                                     : "--table is only used with --text-row or --by.");
    Provenance p;
    p.inputs = {args->images, args->texts};
    if (!args->table.empty()) p.inputs.push_back(args->table);
    start_hashing_inputs(p);
    const Matrix images = read_embeddings(args->images, args->image_tensor);
    const Matrix texts = read_embeddings(args->texts, args->text_tensor);
    Table table;
    std::vector<std::size_t> rows;
    if (!args->table.empty()) {
      table = read_table(args->table);
      VLBIAS_CHECK(table.rows == images.rows, InputError,
                   "{} has {} rows but {} has {} image embeddings; expected one row per image.",
                   table.source, table.rows, args->images, images.rows);
      if (!args->text_row.empty()) rows = text_rows(table, args->text_row);
    }
    const ClipScores scores = clipscores(images, texts, rows, variant);
    Json out{{"variant", to_string(variant)},
             {"pairing", clipscore_pairing(rows.empty(), texts.rows, images.rows)}};
    out["overall"] = clipscore_summary_json(summarize_clipscores(scores.score, levels));
    if (!args->by.empty()) {
      const std::vector<std::string> by = split_list(args->by, "--by");
      const Grouping g = group_by(table, by);
      std::vector<std::vector<double>> per(g.size());
      for (std::size_t i = 0; i < images.rows; ++i) {
        if (g.group_of_row[i] != Grouping::kNoGroup)
          per[g.group_of_row[i]].push_back(scores.score[i]);
      }
      Json groups = Json::array();
      for (std::size_t k = 0; k < g.size(); ++k) {
        Json row{{"group", key_json(by, g.keys[k])}};
        row.update(clipscore_summary_json(summarize_clipscores(per[k], levels)));
        groups.push_back(row);
      }
      out["groups"] = groups;
      if (g.rows_with_missing_key > 0) out["rows_with_missing_key"] = g.rows_with_missing_key;
    }
    if (!args->per_sample.empty()) {
      Table t;
      t.source = args->per_sample;
      t.rows = images.rows;
      std::vector<double> index(images.rows);
      for (std::size_t i = 0; i < images.rows; ++i) index[i] = static_cast<double>(i);
      add_numeric_column(t, "row", index);
      add_numeric_column(t, "cosine", scores.cosine);
      add_numeric_column(t, "score", scores.score);
      write_csv(t, args->per_sample);
    }
    p.command = "metric clipscore";
    p.parameters = Json{{"variant", to_string(variant)}, {"percentiles", numbers_json(levels)}};
    if (!args->text_row.empty()) p.parameters["text_row"] = args->text_row;
    if (!args->by.empty()) p.parameters["by"] = args->by;
    out["provenance"] = provenance_json(p);
    write_json(out, args->out);
  });
}

}  // namespace vlbias::cli_internal
