// Exemplar thumbnails of the geo-diversity audit (report.images; geo_audit_internal.h): a seeded
// sample of each (region, object) cell's generated images and, when the consistency indicator
// ran, its lowest-CLIPScore ones, as JPEG data URIs in results.json, so
// that report.html (and a later `vlbias report RUN_DIR`) embeds them from the run folder alone.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "geo_audit_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/image.h"
#include "vlbias/io/base64.h"

namespace vlbias::audits_internal {

namespace {

constexpr std::size_t kThumbnailSide = 96;  // pixels on the long side
constexpr int kThumbnailQuality = 80;
// Exemplar images are thumbnails: refuse anything past 100 megapixels before decoding it.
constexpr std::size_t kExemplarMaxPixels = 100'000'000;

// The image at `file` as a JPEG thumbnail data URI (InputError when it cannot be read).
std::string thumbnail_data_uri(const std::filesystem::path& file) {
  const RgbImage full = decode_image_file(file, kExemplarMaxPixels);
  RgbImage thumb;
  const std::size_t long_side = std::max(full.width, full.height);
  if (long_side <= kThumbnailSide) {
    thumb = full;
  } else {
    // Rounded to the nearest pixel, never 0.
    const auto scaled = [&](std::size_t side) {
      return std::max<std::size_t>(1, (side * kThumbnailSide + long_side / 2) / long_side);
    };
    thumb = resize_bicubic(full, scaled(full.width), scaled(full.height));
  }
  const std::vector<std::uint8_t> jpeg = encode_jpeg(thumb, kThumbnailQuality);
  return "data:image/jpeg;base64," +
         base64_encode(std::string_view(reinterpret_cast<const char*>(jpeg.data()), jpeg.size()));
}

// One image of a cell's grid and why it was chosen.
struct Pick {
  std::uint32_t row;
  std::string why;
};

struct CellSample {
  std::string region, object;
  std::vector<Pick> picks;  // the sample in draw order, then the lowest CLIPScores
  std::vector<Json> images;
};

// Up to n of `rows` with the lowest finite score, lowest first (ties: lower row first).
std::vector<std::uint32_t> lowest_scored(const std::vector<std::uint32_t>& rows,
                                         const std::vector<double>& scores, std::size_t n) {
  std::vector<std::uint32_t> scored;
  for (const std::uint32_t r : rows) {
    if (std::isfinite(scores[r])) scored.push_back(r);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return scores[a] < scores[b]; });
  if (scored.size() > n) scored.resize(n);
  return scored;
}

// The picks of every (region, object) cell holding generated images with a region.
std::vector<CellSample> sample_cells(const AuditSpec& spec, const GeneratedData& gen,
                                     const std::vector<double>& clip_scores) {
  std::map<std::pair<std::string, std::string>, std::vector<std::uint32_t>> members;
  for (std::size_t i = 0; i < gen.region.size(); ++i) {
    if (!gen.region[i].empty()) {
      members[{gen.region[i], gen.object[i]}].push_back(static_cast<std::uint32_t>(i));
    }
  }
  const std::size_t n = spec.geo.report_images;
  std::vector<CellSample> cells;
  std::uint64_t index = 0;
  for (const auto& [key, rows] : members) {
    CellSample c{key.first, key.second, {}, {}};
    for (const std::uint32_t r :
         sample_rows(rows, n, cell_seed(spec.seed, kSeedExemplars, index++))) {
      c.picks.push_back({r, "random sample"});
    }
    if (!clip_scores.empty()) {
      for (const std::uint32_t r : lowest_scored(rows, clip_scores, n)) {
        const auto same =
            std::find_if(c.picks.begin(), c.picks.end(), [&](const Pick& p) { return p.row == r; });
        if (same != c.picks.end()) {
          same->why = "random sample, lowest CLIPScore";
        } else {
          c.picks.push_back({r, "lowest CLIPScore"});
        }
      }
    }
    cells.push_back(std::move(c));
  }
  return cells;
}

// One sampled image's entry: its thumbnail while the budget allows, else why not.
Json image_entry(const GeneratedData& gen, const Pick& pick, const std::vector<double>& clip_scores,
                 std::size_t budget, std::size_t& used, std::size_t& dropped,
                 std::vector<std::string>& notes) {
  const std::uint32_t row = pick.row;
  Json e{{"path", gen.image_path[row]}, {"why", pick.why}};
  if (!clip_scores.empty() && std::isfinite(clip_scores[row])) e["clipscore"] = clip_scores[row];
  if (gen.image_path[row].empty()) {
    e["status"] = "no path";
    return e;
  }
  std::string uri;
  try {
    uri = thumbnail_data_uri(gen.image_file[row]);
  } catch (const InputError& error) {
    e["status"] = "missing";
    e["error"] = error.what();
    notes.push_back(
        fmt::format("exemplar image {} could not be read: {}", gen.image_path[row], error.what()));
    return e;
  }
  if (used + uri.size() > budget) {
    e["status"] = "over budget";
    ++dropped;
    return e;
  }
  used += uri.size();
  e["status"] = "shown";
  e["thumbnail"] = std::move(uri);
  return e;
}

}  // namespace

Json exemplars_json(const AuditSpec& spec, const GeneratedData& gen,
                    const std::vector<double>& clip_scores, std::vector<std::string>& notes) {
  const GeoAuditSpec& g = spec.geo;
  std::vector<CellSample> cells = sample_cells(spec, gen, clip_scores);
  std::size_t used = 0, dropped = 0;
  for (std::size_t round = 0; round < 2 * g.report_images; ++round) {
    for (CellSample& c : cells) {
      if (round >= c.picks.size()) continue;
      c.images.push_back(image_entry(gen, c.picks[round], clip_scores, g.report_image_budget, used,
                                     dropped, notes));
    }
  }
  Json out_cells = Json::array();
  for (CellSample& c : cells) {
    out_cells.push_back(
        Json{{"region", c.region}, {"object", c.object}, {"images", std::move(c.images)}});
  }
  if (dropped > 0) {
    notes.push_back(fmt::format(
        "{} exemplar thumbnails were left out to keep them within report.image_budget ({} bytes)",
        dropped, g.report_image_budget));
  }
  return Json{{"per_cell", g.report_images},
              {"budget_bytes", g.report_image_budget},
              {"bytes", used},
              {"left_out_for_budget", dropped},
              {"thumbnail_px", kThumbnailSide},
              {"quality", kThumbnailQuality},
              {"cells", std::move(out_cells)}};
}

}  // namespace vlbias::audits_internal
