// Exemplar image grids (exemplars.h): each cell's seeded sample and extreme-scored images, as
// JPEG thumbnail data URIs within the report's size budget.
#include "exemplars.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/io/base64.h"
#include "vlbias/io/table/sample.h"

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

// The budget the thumbnails of one block share.
struct Budget {
  std::size_t limit = 0, used = 0, dropped = 0;
};

// One picked image's entry: its thumbnail while the budget allows, else why not.
Json image_entry(const ExemplarImages& images, std::uint32_t row, const std::string& why,
                 const ExemplarScore* score, Budget& budget, std::vector<std::string>& notes) {
  Json e{{"path", images.path[row]}, {"why", why}};
  if (score != nullptr && std::isfinite(images.score[row])) e[score->key] = images.score[row];
  if (images.path[row].empty()) {
    e["status"] = "no path";
    return e;
  }
  std::string uri;
  try {
    uri = thumbnail_data_uri(images.file[row]);
  } catch (const InputError& error) {
    e["status"] = "missing";
    e["error"] = error.what();
    notes.push_back(
        fmt::format("exemplar image {} could not be read: {}", images.path[row], error.what()));
    return e;
  }
  if (budget.used + uri.size() > budget.limit) {
    e["status"] = "over budget";
    ++budget.dropped;
    return e;
  }
  budget.used += uri.size();
  e["status"] = "shown";
  e["thumbnail"] = std::move(uri);
  return e;
}

}  // namespace

Json report_images_json(const ReportImagesSpec& r) {
  return Json{{"images", r.per_cell}, {"image_budget", r.budget}, {"image_root", r.root.string()}};
}

std::filesystem::path exemplar_file(const ReportImagesSpec& r, const std::filesystem::path& table,
                                    const std::string& path) {
  if (path.empty()) return {};
  return (r.root.empty() ? table.parent_path() : r.root) / path;
}

std::optional<ExemplarImages> table_images(const Table& table, const std::string& column,
                                           const std::filesystem::path& table_file,
                                           const ReportImagesSpec& r, const std::string& key,
                                           std::vector<std::string>& notes) {
  const auto index = column.empty() ? std::nullopt : table.find(column);
  if (!index) {
    notes.push_back(fmt::format(
        "report.images: no exemplar grids, because the table '{}' has no image path column '{}' "
        "({})",
        table.source, column, key));
    return std::nullopt;
  }
  ExemplarImages images;
  for (std::size_t row = 0; row < table.rows; ++row) {
    images.path.push_back(table.columns[*index].text(row));
    images.file.push_back(exemplar_file(r, table_file, images.path.back()));
  }
  return images;
}

std::vector<std::uint32_t> extreme_scored(const std::vector<std::uint32_t>& rows,
                                          const std::vector<double>& scores, std::size_t n,
                                          bool highest) {
  std::vector<std::uint32_t> scored;
  for (const std::uint32_t r : rows) {
    if (std::isfinite(scores[r])) scored.push_back(r);
  }
  std::stable_sort(scored.begin(), scored.end(), [&](std::uint32_t a, std::uint32_t b) {
    return highest ? scores[a] > scores[b] : scores[a] < scores[b];
  });
  if (scored.size() > n) scored.resize(n);
  return scored;
}

std::vector<std::vector<std::pair<std::uint32_t, std::string>>> pick_exemplars(
    const std::vector<ExemplarCell>& cells, const ExemplarImages& images, const ReportImagesSpec& r,
    std::uint64_t seed, const ExemplarScore* score) {
  VLBIAS_CHECK(score == nullptr || images.score.size() == images.path.size(), InternalError,
               "exemplar scores: {} for {} images", images.score.size(), images.path.size());
  std::vector<std::vector<std::pair<std::uint32_t, std::string>>> picks(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    auto& p = picks[i];
    const std::size_t sampled = score != nullptr && score->only_extremes ? 0 : r.per_cell;
    for (const std::uint32_t row : sample_rows(cells[i].rows, sampled, derive_seed(seed, i))) {
      p.emplace_back(row, "random sample");
    }
    if (score == nullptr) continue;
    const std::string why = (score->highest ? "highest " : "lowest ") + score->label;
    for (const std::uint32_t row :
         extreme_scored(cells[i].rows, images.score, r.per_cell, score->highest)) {
      const auto same =
          std::find_if(p.begin(), p.end(), [&](const auto& x) { return x.first == row; });
      if (same != p.end()) {
        same->second += ", " + why;
      } else {
        p.emplace_back(row, why);
      }
    }
  }
  return picks;
}

Json exemplars_json(const std::vector<ExemplarCell>& cells, const ExemplarImages& images,
                    const ReportImagesSpec& r, std::uint64_t seed, const ExemplarScore* score,
                    std::vector<std::string>& notes) {
  const auto picks = pick_exemplars(cells, images, r, seed, score);
  std::vector<Json> shown(cells.size(), Json::array());
  Budget budget{r.budget, 0, 0};
  for (std::size_t round = 0; round < 2 * r.per_cell; ++round) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (round >= picks[i].size()) continue;
      const auto& [row, why] = picks[i][round];
      shown[i].push_back(image_entry(images, row, why, score, budget, notes));
    }
  }
  Json labels = Json::array(), out_cells = Json::array();
  if (!cells.empty()) {
    for (const auto& [name, value] : cells.front().labels) labels.push_back(name);
  }
  for (std::size_t i = 0; i < cells.size(); ++i) {
    Json c = Json::object();
    for (const auto& [name, value] : cells[i].labels) c[name] = value;
    c["images"] = std::move(shown[i]);
    out_cells.push_back(std::move(c));
  }
  if (budget.dropped > 0) {
    notes.push_back(fmt::format(
        "{} exemplar thumbnails were left out to keep them within report.image_budget ({} bytes)",
        budget.dropped, r.budget));
  }
  Json out{{"per_cell", r.per_cell},         {"budget_bytes", r.budget},
           {"bytes", budget.used},           {"left_out_for_budget", budget.dropped},
           {"thumbnail_px", kThumbnailSide}, {"quality", kThumbnailQuality},
           {"labels", std::move(labels)}};
  if (score != nullptr) {
    out["score"] = {{"key", score->key},
                    {"label", score->label},
                    {"about", score->about},
                    {"pick", score->highest ? "highest" : "lowest"},
                    {"only", score->only_extremes}};
  }
  out["cells"] = std::move(out_cells);
  return out;
}

}  // namespace vlbias::audits_internal
