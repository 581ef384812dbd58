// `vlbias explain`: the inputs checked (model, pair, images, groups, output folder), then one
// class activation map per readable image, in input order (include/vlbias/explain/explain.h).
#include "explain_internal.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <new>
#include <optional>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/encode/encode.h"
#include "vlbias/encode/jobs/job_items.h"
#include "vlbias/encode/models/image_model.h"
#include "vlbias/faces/skin_tone.h"
#include "vlbias/io/run/run_lock.h"
#include "vlbias/io/table/table.h"
#include "vlbias/metrics/social_perception.h"

namespace vlbias::explain_internal {

namespace fs = std::filesystem;

namespace {

// MAPS_DIR must be new or empty (a lock file of an interrupted run aside).
void check_explain_out(const fs::path& out) {
  VLBIAS_CHECK(!out.empty(), UsageError, "--out is empty; expected a folder for the maps.");
  const fs::file_status st = fs::symlink_status(out);
  if (!fs::exists(st)) return;
  VLBIAS_CHECK(fs::is_directory(st), UsageError,
               "--out {}: is {}; expected a folder (new or empty) for the maps.", out.string(),
               fs::is_symlink(st) ? "a symbolic link" : "a file");
  for (const fs::directory_entry& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    VLBIAS_CHECK(name == ".lock", UsageError,
                 "--out {}: is not empty ({}); expected a new or empty folder for the maps.",
                 out.string(), name);
  }
}

// The model folder, refused unless it holds a CLIP (a ViT image tower: the only one the native
// CLIP reads) with its tokenizer.
ClipEncoder open_explain_model(const fs::path& model) {
  const ImageModelKind kind = detect_image_model(model);
  VLBIAS_CHECK(kind == ImageModelKind::Clip, UsageError,
               "--model {}: is a {} model; explain needs a CLIP model with a ViT image tower "
               "(config.json of a CLIP model, or open_clip_config.json).",
               model.string(), image_model_kind_name(kind));
  ClipEncoder encoder = ClipEncoder::open(model);
  encoder.tokenizer();  // InputError naming the missing tokenizer files, before any image
  return encoder;
}

// The '+' and '-' poles of `pair` in the manifest (as trait_confidence pairs them).
ExplainPair find_explain_pair(const fs::path& path, const std::string& pair) {
  const PromptManifest manifest = parse_prompt_manifest(read_table(path.string()));
  ExplainPair out;
  out.name = pair;
  std::vector<std::string> known;
  for (const PromptManifest::Dimension& d : manifest.dimensions) {
    if (d.valence == "+" && std::find(known.begin(), known.end(), d.dimension) == known.end()) {
      known.push_back(d.dimension);
    }
    if (d.dimension != pair) continue;
    std::vector<std::string>& texts = d.valence == "+"   ? out.first
                                      : d.valence == "-" ? out.second
                                                         : out.unused;
    for (std::size_t r : d.rows) texts.push_back(manifest.texts[r]);
  }
  VLBIAS_CHECK(!out.first.empty() && !out.second.empty(), UsageError,
               "--pair {}: {} has no trait pair of that name (a dimension with '+' and '-' "
               "prompts); its pairs: {}.",
               pair, path.string(),
               known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", ")));
  return out;
}

// The target: the pair's texts encoded in one call (first pole's rows, then the second's).
TraitPairTarget explain_target(const ClipEncoder& encoder, const ExplainPair& pair,
                               double logit_scale) {
  std::vector<std::string> texts = pair.first;
  texts.insert(texts.end(), pair.second.begin(), pair.second.end());
  const Matrix e = encoder.encode_texts(texts, false);
  const std::size_t k = pair.first.size();
  const MatrixView first{e.data.data(), k, e.cols};
  const MatrixView second{e.data.data() + k * e.cols, e.rows - k, e.cols};
  return make_trait_pair_target(first, second, logit_scale);
}

// The --by columns of the images table, each row's values; UsageError for a folder of images or a
// column the table lacks, InputError for an empty cell (a row in no group).
ExplainGroups read_explain_groups(const ExplainOptions& o, std::size_t rows) {
  ExplainGroups g;
  g.columns = o.by;
  if (o.by.empty()) {
    g.group_of_row.assign(rows, 0);
    g.names.push_back("all images");
    return g;
  }
  VLBIAS_CHECK(!fs::is_directory(o.images), UsageError,
               "--by {}: {} is a folder; group columns need a table of images (--images T).",
               fmt::join(o.by, ","), o.images.string());
  const Table table = read_table(o.images.string());
  VLBIAS_CHECK(table.rows == rows, InternalError, "{}: {} rows, {} items", table.source, table.rows,
               rows);
  std::vector<const Column*> cols;
  for (const std::string& name : o.by) {
    VLBIAS_CHECK(!is_explain_rows_column(name), UsageError,
                 "--by {}: is a column of rows.csv itself; rename it in {}.", name, table.source);
    VLBIAS_CHECK(table.find(name).has_value(), UsageError,
                 "--by {}: {} has no column '{}'; its columns: {}.", fmt::join(o.by, ","),
                 table.source, name, fmt::join(explain_table_columns(table), ", "));
    cols.push_back(&table.column(name));
  }
  g.values.assign(cols.size(), std::vector<std::string>(rows));
  std::map<std::vector<std::string>, std::size_t> index;
  for (std::size_t r = 0; r < rows; ++r) {
    std::vector<std::string> key;
    for (std::size_t c = 0; c < cols.size(); ++c) {
      VLBIAS_CHECK(!cols[c]->missing(r), InputError,
                   "{}, line {}: the --by column '{}' is empty; every image needs a group.",
                   table.source, table.line_of_row.empty() ? r + 2 : table.line_of_row[r], o.by[c]);
      g.values[c][r] = cols[c]->text(r);
      key.push_back(g.values[c][r]);
    }
    const auto [it, added] = index.emplace(key, g.names.size());
    if (added) g.names.push_back(fmt::format("{}", fmt::join(key, ", ")));
    g.group_of_row.push_back(it->second);
  }
  return g;
}

// The shares of the map's mass inside the image's face boxes and inside their skin pixels (NaN
// without a box).
void explain_face_share(const ExplainContext& ctx, std::size_t row, const RgbImage& image,
                        const float* map, ExplainRow& r) {
  const ExplainFaces& f = *ctx.faces;
  r.cam_in_face = r.cam_in_skin = std::numeric_limits<double>::quiet_NaN();
  if (!f.searched[row] || f.boxes[row].empty()) return;
  if (f.width[row] != image.width || f.height[row] != image.height) {
    warn("image {} ({}) has {} x {} pixels, {} x {} in the faces run {}; no cam_in_face", row,
         ctx.items.display[row], image.width, image.height, f.width[row], f.height[row],
         f.dir.string());
    return;
  }
  std::vector<ExplainFaceBox> boxes;
  for (const ExplainFaceBox& b : f.boxes[row]) {
    boxes.push_back(face_box_in_crop(b, image.width, image.height, ctx.encoder.preprocess()));
  }
  const std::size_t side = ctx.encoder.model().config().image_size;
  r.cam_in_face = cam_mass_in_boxes(map, side, side, boxes);
  // The skin of the image as the model saw it: its input crop, the map's own grid.
  const RgbImage crop = preprocess_geometry(image, ctx.encoder.preprocess());
  VLBIAS_CHECK(crop.width == side && crop.height == side, InternalError,
               "the input crop is {} x {}, the map {} x {}", crop.width, crop.height, side, side);
  const std::vector<std::uint8_t> skin = skin_pixel_mask(crop, ctx.items.display[row]);
  r.cam_in_skin = cam_mass_in_boxes(map, side, side, boxes, skin.data());
}

// One image's map into `maps` (appended), or the reason it has none.
ExplainRow explain_one(const ExplainContext& ctx, std::size_t row, std::vector<float>& pixels,
                       ExplainMaps& maps) {
  ExplainRow r;
  if (ctx.items.missing[row]) {
    r.error = "the path cell is empty";
    return r;
  }
  try {
    const RgbImage image = decode_explain_image(ctx, row, true);
    ctx.encoder.pixels(image, pixels.data());
    const ClipCams cams =
        clip_cams(ctx.encoder.model(), pixels.data(), 1, ctx.target, ctx.o.method);
    r.probability = cams.target.at(0);
    VLBIAS_CHECK(cams.maps.size() == maps.side * maps.side, InternalError,
                 "{}: a map of {} values, not {} x {}", ctx.items.display[row], cams.maps.size(),
                 maps.side, maps.side);
    if (ctx.faces != nullptr) explain_face_share(ctx, row, image, cams.maps.data(), r);
    r.map_row = maps.rows;
    maps.append(cams.maps.data());
  } catch (const Error& e) {
    r.error = e.what();
  } catch (const std::bad_alloc&) {
    r.error = "out of memory while decoding the image";
  }
  return r;
}

}  // namespace

RgbImage decode_explain_image(const ExplainContext& ctx, std::size_t row, bool first_time) {
  const std::size_t max = ctx.o.max_image_pixels;
  const std::string& shown = ctx.items.display[row];
  const auto reserve = [&](std::size_t width, std::size_t height, std::size_t) {
    if (first_time && width * height > max) {
      warn(
          "{} has {} x {} pixels, more than --max-image-pixels {}; decoded anyway, as Pillow "
          "does up to twice that",
          shown, width, height, max);
    }
  };
  const ImageBytes bytes = read_job_image(ctx.items, row);
  return decode_image(bytes.bytes(), ctx.items.values[row],
                      DecodeOptions{2 * max, ctx.o.exif_transpose}, reserve);
}

}  // namespace vlbias::explain_internal

namespace vlbias {

using namespace explain_internal;

ExplainResult run_explain(const ExplainOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  check_explain_out(o.out);
  VLBIAS_CHECK(o.top >= 1, UsageError,
               "--top {}: expected at least 1 overlay per group (default 5).", o.top);
  VLBIAS_CHECK(o.max_image_pixels >= 1 && o.max_image_pixels <= kMaxImagePixelsOption, UsageError,
               "--max-image-pixels {}: expected 1 to {} (default {}, Pillow's MAX_IMAGE_PIXELS).",
               o.max_image_pixels, kMaxImagePixelsOption, kPillowMaxImagePixels);
  const ClipEncoder encoder = open_explain_model(o.model);
  const ExplainPair pair = find_explain_pair(o.manifest, o.pair);
  const double scale = o.logit_scale > 0 ? o.logit_scale : encoder.model().config().logit_scale;
  const TraitPairTarget target = explain_target(encoder, pair, scale);
  const JobItems items = load_job_items(o.images, o.column, o.image_root, true);
  const ExplainGroups groups = read_explain_groups(o, items.values.size());
  std::optional<ExplainFaces> faces;
  if (!o.faces.empty()) faces = read_explain_faces(o.faces, items, o.exif_transpose);
  const RunLock lock(o.out);

  const ExplainContext ctx{o, encoder, items, target, pair, groups, faces ? &*faces : nullptr};
  std::vector<ExplainRow> rows(items.values.size());
  std::vector<float> pixels(encoder.pixels_per_image());
  ExplainMaps maps(o.out / kExplainMaps, encoder.model().config().image_size);
  ExplainResult result;
  result.images = rows.size();
  Progress progress("explain", rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    rows[r] = explain_one(ctx, r, pixels, maps);
    progress.advance();
    if (!rows[r].error.empty()) {
      warn("image {} ({}) skipped: {}", r, items.display[r], rows[r].error);
      ++result.failed;
    }
  }
  progress.finish();
  result.explained = result.images - result.failed;
  result.groups = groups.names.size();
  write_explain_outputs(ctx, rows, maps, result);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_explain_manifest(ctx, result);
  if (result.failed > 0) {
    warn("{} of {} images could not be read and are listed in {} with the reason.", result.failed,
         result.images, (o.out / kExplainRows).string());
  }
  return result;
}

}  // namespace vlbias
