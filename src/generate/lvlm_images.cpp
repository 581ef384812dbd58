// The images of a generate-lvlm manifest: files, or rows of a Parquet table (job.h).
#include <map>
#include <mutex>

#include "job.h"
#include "vlbias/core/error.h"
#include "vlbias/io/parquet/parquet.h"
#include "vlbias/io/parquet/parquet_images.h"

namespace vlbias::generate_internal {

namespace fs = std::filesystem;

namespace {

// "T#ROW" -> (T, ROW) when ROW is a row number and T is a Parquet file or folder of shards under
// `root`; nullopt otherwise (the name is a file's).
std::optional<std::pair<std::string, std::size_t>> lvlm_table_row(const fs::path& root,
                                                                  const std::string& name) {
  const std::size_t hash = name.rfind('#');
  if (hash == std::string::npos || hash == 0 || hash + 1 == name.size() ||
      name.size() - hash > 19) {
    return std::nullopt;
  }
  std::size_t row = 0;
  for (std::size_t i = hash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    row = row * 10 + static_cast<std::size_t>(name[i] - '0');
  }
  std::error_code ec;
  if (fs::is_regular_file(root / name, ec)) return std::nullopt;
  const fs::path table = root / name.substr(0, hash);
  const bool parquet = (table.extension() == ".parquet" && fs::is_regular_file(table, ec)) ||
                       is_parquet_folder(table.string());
  if (!parquet) return std::nullopt;
  return std::make_pair(table.string(), row);
}

}  // namespace

struct LvlmImages::Tables {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const ParquetImageColumn>> open;
};

LvlmImages::LvlmImages(fs::path root)
    : root_(std::move(root)), tables_(std::make_unique<Tables>()) {}

LvlmImages::~LvlmImages() = default;

LvlmImages::Bytes LvlmImages::read(const std::string& name) const {
  Bytes out;
  const auto ref = lvlm_table_row(root_, name);
  if (!ref) {
    const fs::path path = root_ / name;
    std::error_code ec;
    VLBIAS_CHECK(fs::is_regular_file(path, ec), InputError, "image {} does not exist",
                 path.string());
    out.file = MappedFile(path);
    return out;
  }
  std::shared_ptr<const ParquetImageColumn> table;
  {
    std::lock_guard<std::mutex> lock(tables_->mutex);
    auto& slot = tables_->open[ref->first];
    if (!slot) slot = std::make_shared<const ParquetImageColumn>(ref->first, "image");
    table = slot;
  }
  VLBIAS_CHECK(ref->second < table->rows(), InputError,
               "image {}: the table {} has {} rows (rows are numbered from 0)", name, ref->first,
               table->rows());
  std::optional<std::string> cell = table->cell(ref->second);
  VLBIAS_CHECK(cell.has_value(), InputError,
               "image {}: the cell of column '{}' is null (no image bytes)", name,
               table->bytes_column());
  out.cell = std::move(*cell);
  out.from_cell = true;
  return out;
}

}  // namespace vlbias::generate_internal
