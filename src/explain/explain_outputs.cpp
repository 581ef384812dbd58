// `vlbias explain`'s outputs: maps.npy, the overlays of the most confident images per group,
// rows.csv and manifest.json (include/vlbias/explain/explain.h).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "explain_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/sha256.h"
#include "vlbias/core/timestamp.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/version.h"

namespace vlbias::explain_internal {

namespace fs = std::filesystem;
using ExplainJson = nlohmann::ordered_json;

namespace {

constexpr std::array<const char*, 9> kExplainRowsColumns = {
    "input_row",   "image",   "map_row", "probability", "cam_in_face",
    "cam_in_skin", "overlay", "status",  "error"};

// Longest stem kept in an overlay's name (the name stays far below NAME_MAX).
constexpr std::size_t kOverlayStemBytes = 80;

std::size_t explain_side(const ExplainContext& ctx) {
  return ctx.encoder.model().config().image_size;
}

}  // namespace

ExplainMaps::ExplainMaps(const fs::path& path, std::size_t side_) : file(path), side(side_) {
  const std::array<std::size_t, 3> shape{0, side, side};
  const std::string header = npy_float32_header(shape);
  file.write(header.data(), header.size());
  header_bytes = header.size();
}

void ExplainMaps::append(const float* map) {
  file.write_f32le(map, side * side);
  ++rows;
}

std::vector<float> ExplainMaps::read(std::size_t row) {
  VLBIAS_CHECK(row < rows, InternalError, "maps.npy: row {} of {}", row, rows);
  std::vector<float> map(side * side);
  file.read_back(header_bytes + row * map.size() * sizeof(float), map.data(),
                 map.size() * sizeof(float));
  if constexpr (std::endian::native != std::endian::little) {
    for (float& v : map)
      v = std::bit_cast<float>(__builtin_bswap32(std::bit_cast<std::uint32_t>(v)));
  }
  return map;
}

void ExplainMaps::commit() {
  const std::array<std::size_t, 3> shape{rows, side, side};
  const std::string header = npy_float32_header(shape);
  VLBIAS_CHECK(header.size() == header_bytes, InternalError,
               "maps.npy: the header for {} rows has {} bytes, not {}", rows, header.size(),
               header_bytes);
  file.overwrite(0, header.data(), header.size());
  file.commit();
}

namespace {

// overlays/<input row>_<stem>.png, the stem's bytes other than ASCII letters, digits, '-', '_'
// and '.' written '_' (a name that is safe on every file system and in a shell).
std::string overlay_name(std::size_t row, const std::string& shown) {
  std::string stem = fs::path(shown).stem().string();
  if (stem.size() > kOverlayStemBytes) stem.resize(kOverlayStemBytes);
  for (char& c : stem) {
    const auto u = static_cast<unsigned char>(c);
    const bool keep = (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
                      u == '-' || u == '_' || u == '.';
    if (!keep) c = '_';
  }
  return fmt::format("{}/{}_{}.png", kExplainOverlays, row, stem);
}

// The rows that get an overlay: per group, its explained images by probability (highest first,
// ties by input row), the first --top of them. A group with fewer is noted.
std::vector<std::size_t> overlay_rows(const ExplainContext& ctx,
                                      const std::vector<ExplainRow>& rows) {
  std::vector<std::vector<std::size_t>> members(ctx.groups.names.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].error.empty()) members[ctx.groups.group_of_row[r]].push_back(r);
  }
  std::vector<std::size_t> chosen;
  for (std::size_t g = 0; g < members.size(); ++g) {
    std::vector<std::size_t>& m = members[g];
    std::stable_sort(m.begin(), m.end(), [&](std::size_t a, std::size_t b) {
      return rows[a].probability > rows[b].probability;
    });
    if (m.empty()) {
      warn("group {}: no image could be explained; it has no overlay", ctx.groups.names[g]);
    } else if (m.size() < ctx.o.top) {
      warn("group {}: {} explained image{}, fewer than --top {}; {} get{} an overlay",
           ctx.groups.names[g], m.size(), m.size() == 1 ? "" : "s", ctx.o.top,
           m.size() == 1 ? "it" : "all", m.size() == 1 ? "s" : "");
    }
    m.resize(std::min(m.size(), ctx.o.top));
    chosen.insert(chosen.end(), m.begin(), m.end());
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

// The overlay of one explained row; "" (and a warning) when the image cannot be read again.
std::string write_overlay(const ExplainContext& ctx, std::size_t row, ExplainMaps& maps,
                          std::size_t map_row) {
  const std::size_t side = explain_side(ctx);
  const std::string name = overlay_name(row, ctx.items.display[row]);
  try {
    const RgbImage crop =
        preprocess_geometry(decode_explain_image(ctx, row, false), ctx.encoder.preprocess());
    VLBIAS_CHECK(crop.width == side && crop.height == side, InputError,
                 "{}: the preprocessing gives a {} x {} crop, not the model's {} x {} input",
                 ctx.items.display[row], crop.width, crop.height, side, side);
    const RgbImage overlay = clip_cam_overlay(crop, maps.read(map_row).data());
    const std::vector<std::uint8_t> png = encode_png(overlay);
    write_file_atomically(ctx.o.out / name,
                          std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
  } catch (const Error& e) {
    warn("image {} ({}): no overlay: {}", row, ctx.items.display[row], e.what());
    return "";
  }
  return name;
}

Table write_explain_rows(const ExplainContext& ctx, const std::vector<ExplainRow>& rows,
                         const std::vector<std::string>& overlays) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Table t;
  t.source = kExplainRows;
  t.rows = rows.size();
  std::vector<double> input_row, map_row, probability, in_face, in_skin;
  std::vector<std::string> status, error;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const bool ok = rows[r].error.empty();
    input_row.push_back(static_cast<double>(r));
    map_row.push_back(ok ? static_cast<double>(rows[r].map_row) : nan);
    probability.push_back(ok ? rows[r].probability : nan);
    in_face.push_back(ok ? rows[r].cam_in_face : nan);
    in_skin.push_back(ok ? rows[r].cam_in_skin : nan);
    status.push_back(ok ? "ok" : "failed");
    error.push_back(rows[r].error);
  }
  add_numeric_column(t, "input_row", std::move(input_row));
  add_string_column(t, "image", ctx.items.display);
  add_numeric_column(t, "map_row", std::move(map_row));
  add_numeric_column(t, "probability", std::move(probability));
  if (ctx.faces != nullptr) {
    add_numeric_column(t, kExplainCamInFace, std::move(in_face));
    add_numeric_column(t, kExplainCamInSkin, std::move(in_skin));
  }
  for (std::size_t c = 0; c < ctx.groups.columns.size(); ++c) {
    add_string_column(t, ctx.groups.columns[c], ctx.groups.values[c]);
  }
  add_string_column(t, "overlay", overlays);
  add_string_column(t, "status", status);
  add_string_column(t, "error", error);
  write_csv(t, (ctx.o.out / kExplainRows).string());
  return t;
}

}  // namespace

bool is_explain_rows_column(const std::string& name) {
  return std::find(kExplainRowsColumns.begin(), kExplainRowsColumns.end(), name) !=
         kExplainRowsColumns.end();
}

std::vector<std::string> explain_table_columns(const Table& table) {
  std::vector<std::string> names;
  for (const Column& c : table.columns) names.push_back(c.name);
  return names;
}

void write_explain_outputs(const ExplainContext& ctx, const std::vector<ExplainRow>& rows,
                           ExplainMaps& maps, ExplainResult& result) {
  make_output_folders(ctx.o.out, kExplainOverlays);
  std::vector<std::string> overlays(rows.size());
  for (std::size_t r : overlay_rows(ctx, rows)) {
    overlays[r] = write_overlay(ctx, r, maps, rows[r].map_row);
    result.overlays += !overlays[r].empty();
  }
  maps.commit();
  const Table table = write_explain_rows(ctx, rows, overlays);
  if (ctx.faces != nullptr) {
    const Json mass = explain_cam_mass(table, ctx.groups.columns, ctx.o.bootstrap, ctx.o.seed);
    write_file_atomically(ctx.o.out / kExplainCamMass, mass.dump(2) + "\n");
  }
}

void write_explain_manifest(const ExplainContext& ctx, const ExplainResult& result) {
  const ExplainOptions& o = ctx.o;
  const ClipConfig& config = ctx.encoder.model().config();
  const std::size_t side = explain_side(ctx);
  ExplainJson m{
      {"vlbias_version", VLBIAS_VERSION},
      {"created_utc", utc_now()},
      {"kind", "explain"},
      {"model",
       ExplainJson{{"path", o.model.string()},
                   {"weights", ctx.encoder.model().weights_path().filename().string()},
                   {"weights_sha256", sha256_file(ctx.encoder.model().weights_path().string())},
                   {"image_size", config.image_size},
                   {"patch_size", config.patch_size},
                   {"model_logit_scale", config.logit_scale}}},
      {"pair", ExplainJson{{"name", ctx.pair.name},
                           {"first", ctx.pair.first},
                           {"second", ctx.pair.second},
                           {"manifest", o.manifest.string()},
                           {"manifest_sha256", sha256_file(o.manifest.string())}}},
      {"method", to_string(o.method)},
      {"target",
       "probability = 1 / (1 + exp(s (c1 - c0))), c_p the mean cosine of the image with pole p's "
       "prompts, s the logit scale (docs/methods.md#trait-confidence, #clip-cam)"},
      {"logit_scale", ctx.target.logit_scale},
      {"input", ExplainJson{{"path", o.images.string()},
                            {"sha256", ctx.items.input_sha256},
                            {"column", fs::is_directory(o.images)
                                           ? ExplainJson(nullptr)
                                           : ExplainJson(o.column.empty() ? "path" : o.column)},
                            {"image_root", o.image_root.string()},
                            {"items", ctx.items.values.size()},
                            {"row_order", ctx.items.row_order}}},
      {"options", ExplainJson{{"top", o.top},
                              {"by", o.by},
                              {"max_image_pixels", o.max_image_pixels},
                              {"exif_transpose", o.exif_transpose},
                              {"bootstrap", o.bootstrap},
                              {"seed", o.seed},
                              {"faces", o.faces.empty() ? ExplainJson(nullptr)
                                                        : ExplainJson(o.faces.string())}}},
      {"maps", ExplainJson{{"file", kExplainMaps},
                           {"shape", {result.explained, side, side}},
                           {"dtype", "float32"},
                           {"values", "[0, 1], scaled as pytorch-grad-cam's scale_cam_image"}}},
      {"files", ExplainJson{{"rows", kExplainRows},
                            {"overlays", kExplainOverlays},
                            {"cam_mass", o.faces.empty() ? ExplainJson(nullptr)
                                                         : ExplainJson(kExplainCamMass)}}},
      {"counts", ExplainJson{{"images", result.images},
                             {"explained", result.explained},
                             {"failed", result.failed},
                             {"groups", result.groups},
                             {"overlays", result.overlays}}},
      {"seconds", result.seconds}};
  write_file_atomically(o.out / kExplainManifest, m.dump(2) + "\n");
}

}  // namespace vlbias::explain_internal
