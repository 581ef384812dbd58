// The items of an image or text job (include/vlbias/encode/jobs/job_items.h): a table's column,
// a folder of images, or the image cells of a Parquet table.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/sha256.h"
#include "vlbias/encode/jobs/job_items.h"
#include "vlbias/io/mapped_file.h"
#include "vlbias/io/parquet/parquet.h"
#include "vlbias/io/parquet/parquet_images.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

bool is_image_file(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

std::string_view as_text(std::span<const std::uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

bool is_parquet_input(const fs::path& input) {
  std::string ext = input.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return (ext == ".parquet" && fs::is_regular_file(input)) || is_parquet_folder(input.string());
}

// One item per row of a Parquet table whose `column` holds image bytes.
JobItems parquet_job_items(const fs::path& input, const std::string& column) {
  JobItems items;
  auto table = std::make_shared<const ParquetImageColumn>(input.string(), column);
  VLBIAS_CHECK(table->rows() > 0, InputError, "{} has no rows; nothing to do.", input.string());
  const fs::path abs = fs::absolute(input).lexically_normal();
  const std::string name = (abs.has_filename() ? abs : abs.parent_path()).filename().string();
  for (std::size_t r = 0; r < table->rows(); ++r) {
    items.values.push_back(name + "#" + std::to_string(r));
    items.display.push_back(items.values.back());
    items.missing.push_back(false);
  }
  // As a folder's listing: what the items are (the table's name, column and rows), not their
  // bytes, which checkpoints and caches check row by row (job_images_sha256), so that a resume
  // against a table whose rows changed recomputes those rows rather than refusing the table.
  items.input_sha256 = sha256_hex(fmt::format("parquet table {}\ncolumn {}\nrows {}\n", name,
                                              table->bytes_column(), table->rows()));
  items.row_order = "rows of the Parquet table in file order (shards in name order), column '" +
                    table->bytes_column() + "'";
  items.table_images = std::move(table);
  return items;
}

}  // namespace

JobItems load_job_items(const fs::path& input, const std::string& column_name,
                        const fs::path& image_root, bool images) {
  if (images && is_parquet_input(input)) {
    const std::string column =
        column_name.empty() && parquet_column_holds_images(input.string(), "image") ? "image"
                                                                                    : column_name;
    if (!column.empty() && parquet_column_holds_images(input.string(), column)) {
      return parquet_job_items(input, column);
    }
  }
  JobItems items;
  if (images && fs::is_directory(input)) {
    std::vector<std::string> rel;
    for (const auto& entry : fs::recursive_directory_iterator(input)) {
      if (entry.is_regular_file() && is_image_file(entry.path())) {
        rel.push_back(fs::relative(entry.path(), input).generic_string());
      }
    }
    std::sort(rel.begin(), rel.end());
    VLBIAS_CHECK(!rel.empty(), InputError,
                 "{} holds no .jpg, .jpeg or .png file (searched recursively).", input.string());
    std::string listing;
    for (const std::string& r : rel) {
      items.values.push_back((input / r).string());
      items.display.push_back(r);
      items.missing.push_back(false);
      listing += r + '\n';
    }
    items.input_sha256 = sha256_hex(listing);
    items.row_order = "files under the directory, sorted by relative path (bytes)";
    return items;
  }
  VLBIAS_CHECK(fs::exists(input), InputError, "{} does not exist.", input.string());
  const Table table = read_table(input.string());
  VLBIAS_CHECK(table.rows > 0, InputError, "{} has no rows; nothing to do.", input.string());
  const std::string column = column_name.empty() ? (images ? "path" : "text") : column_name;
  const Column& col = table.column(column);
  const fs::path root = !image_root.empty() ? image_root : input.parent_path();
  for (std::size_t r = 0; r < table.rows; ++r) {
    const bool miss = col.missing(r);
    const std::string text = miss ? "" : col.text(r);
    items.missing.push_back(miss && images);  // an empty text cell is the empty text
    items.display.push_back(text);
    if (images && !miss) {
      const fs::path p(text);
      items.values.push_back((p.is_absolute() ? p : root / p).string());
    } else {
      items.values.push_back(text);
    }
  }
  items.input_sha256 = sha256_file(input.string());
  items.row_order = "table rows in file order";
  return items;
}

std::string job_items_sha256(const std::vector<std::string>& shown) {
  constexpr std::size_t kBlock = 4096;
  std::string digests, block;
  for (std::size_t b = 0; b < shown.size(); b += kBlock) {
    block.clear();
    for (std::size_t i = b; i < std::min(shown.size(), b + kBlock); ++i) {
      block += std::to_string(shown[i].size());
      block += ':';
      block += shown[i];
      block += '\n';
    }
    digests += sha256_hex(block);
    digests += '\n';
  }
  return sha256_hex(digests);
}

ImageBytes read_job_image(const JobItems& items, std::size_t i) {
  ImageBytes out;
  if (items.table_images) {
    std::optional<std::string> cell = items.table_images->cell(i);
    VLBIAS_CHECK(cell.has_value(), InputError,
                 "{}: the cell of column '{}' is null (no image bytes)", items.display[i],
                 items.table_images->bytes_column());
    out.cell = std::move(*cell);
    out.from_cell = true;
    return out;
  }
  VLBIAS_CHECK(!items.missing[i] && !items.values[i].empty(), InputError,
               "row {}: the path cell is empty", i);
  out.file = MappedFile(items.values[i], MapAccess::Sequential);
  return out;
}

std::vector<std::string> job_images_sha256(const JobItems& items,
                                           const std::vector<std::size_t>& rows) {
  std::vector<std::string> hashes(rows.size());
  const auto hash = [&](std::size_t k) {
    try {
      hashes[k] = sha256_hex(as_text(read_job_image(items, rows[k]).bytes()));
    } catch (const Error&) {
      hashes[k].clear();
    }
  };
  if (items.table_images) {
    for (std::size_t k = 0; k < rows.size(); ++k) hash(k);
  } else {
    parallel_for(rows.size(), hash);
  }
  return hashes;
}

}  // namespace vlbias
