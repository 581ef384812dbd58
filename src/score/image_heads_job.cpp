// `vlbias score image-head` (image_heads.h): embeddings + encode's rows file + a head's weights
// -> SCORES.csv with the head's provenance on every row.
#include <map>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/run/run_paths.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/embeddings.h"
#include "vlbias/score/image_heads.h"

namespace vlbias {

namespace {

// The image column of encode's rows file, one entry per embeddings row.
std::vector<std::string> image_head_rows(const std::filesystem::path& rows, std::size_t n,
                                         const std::filesystem::path& embeddings) {
  const Table t = read_table(rows.string());
  VLBIAS_CHECK(t.find("path").has_value(), UsageError,
               "{} has no 'path' column; pass the rows file `vlbias encode --images` wrote beside "
               "{} (EMB.rows.csv: row, input_row, path)",
               rows.string(), embeddings.string());
  VLBIAS_CHECK(t.rows == n, UsageError,
               "{} lists {} rows but {} holds {} embeddings; pass the rows file written with "
               "those embeddings",
               rows.string(), t.rows, embeddings.string(), n);
  const Column& path = t.column("path");
  std::vector<std::string> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = path.text(i);
  return out;
}

std::string image_head_options_text(const std::map<std::string, std::string>& options) {
  std::string out;
  for (const auto& [k, v] : options) out += fmt::format("{}{}={}", out.empty() ? "" : ";", k, v);
  return out;
}

ImageHeadColumns score_with_head(const ImageHeadJobOptions& o, const Matrix& images,
                                 std::map<std::string, std::string>& options) {
  const std::string source = o.embeddings.string();
  switch (o.kind) {
    case ImageHeadKind::SafetyChecker:
      options["adjustment"] = fmt::format("{}", o.adjustment);
      return safety_checker_scores(images, source, read_safety_checker_weights(o.weights),
                                   o.adjustment);
    case ImageHeadKind::LaionAesthetic:
      options["normalized"] = "1";
      return laion_aesthetic_scores(images, source, read_laion_aesthetic_weights(o.weights));
    case ImageHeadKind::HeimAesthetic:
      options["normalized"] = "1";
      return heim_aesthetic_scores(images, source, read_heim_aesthetic_weights(o.weights));
    case ImageHeadKind::Q16:
      options["logit_scale"] = "100";
      return q16_scores(images, source, read_q16_weights(o.weights));
    case ImageHeadKind::ClipIqa:
      options["logit_scale"] = "100";
      options["prompts"] = o.prompts.string();
      options["prompts_sha256"] = sha256_file(o.prompts.string());
      return clip_iqa_scores(images, source, read_clip_iqa_weights(o.weights, o.prompts));
  }
  VLBIAS_FAIL(InternalError, "unknown image head");
}

}  // namespace

ImageHeadJobResult run_image_head_job(const ImageHeadJobOptions& o) {
  VLBIAS_CHECK(o.kind == ImageHeadKind::ClipIqa || o.prompts.empty(), UsageError,
               "--prompts {} is for the clip-iqa head only, not {}", o.prompts.string(),
               image_head_name(o.kind));
  VLBIAS_CHECK(o.kind != ImageHeadKind::ClipIqa || !o.prompts.empty(), UsageError,
               "the clip-iqa head needs --prompts (the prompt pairs' table, e.g. "
               "data/clip_iqa/prompts.csv) beside --weights (their embeddings)");
  VLBIAS_CHECK(o.kind == ImageHeadKind::SafetyChecker || o.adjustment == 0.0, UsageError,
               "--adjustment is for the safety-checker head only, not {}", image_head_name(o.kind));
  VLBIAS_CHECK(o.out.extension() == ".csv", UsageError, "--out {}: expected a .csv file name",
               o.out.string());
  std::vector<std::filesystem::path> inputs = {o.embeddings, o.rows, o.weights};
  if (!o.prompts.empty()) inputs.push_back(o.prompts);
  check_out_apart_from_inputs(o.out, inputs, "score image-head --out");
  const Matrix images = read_embeddings(o.embeddings);
  const std::vector<std::string> image = image_head_rows(o.rows, images.rows, o.embeddings);
  std::map<std::string, std::string> options;
  const ImageHeadColumns c = score_with_head(o, images, options);

  ImageHeadJobResult result;
  result.rows = images.rows;
  result.weights_sha256 = sha256_file(o.weights.string());
  result.decision_names = c.decision_names;
  Table t;
  t.source = o.out.string();
  t.rows = images.rows;
  add_string_column(t, "image", image);
  for (std::size_t k = 0; k < c.score_names.size(); ++k) {
    add_numeric_column(t, c.score_names[k], c.scores[k]);
  }
  for (std::size_t k = 0; k < c.decision_names.size(); ++k) {
    std::vector<double> v(c.decisions[k].begin(), c.decisions[k].end());
    std::size_t flagged = 0;
    for (int d : c.decisions[k]) flagged += d != 0;
    result.flagged.push_back(flagged);
    add_numeric_column(t, c.decision_names[k], std::move(v));
  }
  const auto same = [&](std::string text) { return std::vector<std::string>(t.rows, text); };
  add_string_column(t, "head", same(std::string(image_head_name(o.kind))));
  add_string_column(t, "weights", same(o.weights.string()));
  add_string_column(t, "weights_sha256", same(result.weights_sha256));
  add_string_column(t, "options", same(image_head_options_text(options)));
  write_csv(t, o.out.string());
  return result;
}

}  // namespace vlbias
