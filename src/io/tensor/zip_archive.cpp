#include "zip_archive.h"

#include <algorithm>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/io/cell_text.h"

namespace vlbias::io_internal {

namespace {

constexpr std::uint32_t kLocalSignature = 0x04034b50;
constexpr std::uint32_t kCentralSignature = 0x02014b50;
constexpr std::uint32_t kEndSignature = 0x06054b50;
constexpr std::uint32_t kZip64EndSignature = 0x06064b50;
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::size_t kLocalHeaderBytes = 30;
constexpr std::size_t kCentralHeaderBytes = 46;
constexpr std::size_t kEndBytes = 22;
constexpr std::size_t kZip64EndBytes = 56;
constexpr std::size_t kZip64LocatorBytes = 20;
constexpr std::size_t kMaxComment = 0xffff;

// Little-endian field of `width` bytes at `at`; the caller has checked the range.
std::uint64_t le(std::span<const std::uint8_t> b, std::size_t at, std::size_t width) {
  std::uint64_t v = 0;
  for (std::size_t i = width; i-- > 0;) v = (v << 8) | b[at + i];
  return v;
}

// a + b <= limit without overflow.
bool fits(std::uint64_t a, std::uint64_t b, std::uint64_t limit) {
  return a <= limit && b <= limit - a;
}

}  // namespace

bool looks_like_zip(std::span<const std::uint8_t> image) {
  return image.size() >= 4 && le(image, 0, 4) == kLocalSignature;
}

ZipArchive::ZipArchive(std::span<const std::uint8_t> image, std::string source)
    : image_(image), source_(std::move(source)) {
  const std::size_t size = image_.size();
  VLBIAS_CHECK(size >= kEndBytes, InputError,
               "'{}' is truncated: it is {} bytes long, too short for a ZIP archive's end "
               "record",
               source_, size);
  // The end record is the last 22 bytes unless a comment follows it.
  std::size_t end = size;
  for (std::size_t pos = size - kEndBytes + 1;
       pos-- > 0 && size - pos <= kEndBytes + kMaxComment;) {
    if (le(image_, pos, 4) == kEndSignature && pos + kEndBytes + le(image_, pos + 20, 2) == size) {
      end = pos;
      break;
    }
  }
  VLBIAS_CHECK(end != size, InputError,
               "'{}' is not a complete ZIP archive: no end-of-central-directory record was found "
               "(the file is truncated)",
               source_);
  std::uint64_t count = le(image_, end + 10, 2);
  std::uint64_t dir_size = le(image_, end + 12, 4);
  std::uint64_t dir_offset = le(image_, end + 16, 4);
  std::uint64_t dir_end = end;
  // torch writes the zip64 records: a locator just before the end record names them.
  if (end >= kZip64LocatorBytes &&
      le(image_, end - kZip64LocatorBytes, 4) == kZip64LocatorSignature) {
    const std::size_t locator = end - kZip64LocatorBytes;
    const std::uint64_t record = le(image_, locator + 8, 8);
    VLBIAS_CHECK(fits(record, kZip64EndBytes, locator) &&
                     le(image_, static_cast<std::size_t>(record), 4) == kZip64EndSignature,
                 InputError,
                 "'{}' has a zip64 locator pointing to byte {}, where no zip64 end record lies "
                 "before the locator at byte {}",
                 source_, record, locator);
    const auto r = static_cast<std::size_t>(record);
    count = le(image_, r + 32, 8);
    dir_size = le(image_, r + 40, 8);
    dir_offset = le(image_, r + 48, 8);
    dir_end = record;
  }
  VLBIAS_CHECK(fits(dir_offset, dir_size, dir_end), InputError,
               "'{}' declares a {}-byte central directory at byte {}, which runs past its end "
               "record at byte {}; the file is truncated or corrupt",
               source_, dir_size, dir_offset, dir_end);
  read_central_directory(dir_offset, dir_size, count);
  // Indexed once entries_ no longer moves: a lookup per storage stays linear overall.
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    VLBIAS_CHECK(index_.emplace(entries_[i].name, i).second, InputError,
                 "'{}' has the ZIP entry '{}' twice", source_,
                 escape_for_message(entries_[i].name, 120));
  }
}

void ZipArchive::read_central_directory(std::uint64_t offset, std::uint64_t size,
                                        std::uint64_t count) {
  // Each entry takes at least 46 bytes: a count beyond that is corrupt (checked before
  // reserving anything).
  VLBIAS_CHECK(count <= size / kCentralHeaderBytes, InputError,
               "'{}' declares {} ZIP entries but its {}-byte central directory can hold at most "
               "{}",
               source_, count, size, size / kCentralHeaderBytes);
  entries_.reserve(static_cast<std::size_t>(count));
  auto pos = static_cast<std::size_t>(offset);
  const auto end = static_cast<std::size_t>(offset + size);
  for (std::uint64_t i = 0; i < count; ++i) {
    VLBIAS_CHECK(end - pos >= kCentralHeaderBytes && le(image_, pos, 4) == kCentralSignature,
                 InputError,
                 "'{}' has a corrupt ZIP central directory: entry {} of {} at byte {} is not a "
                 "central file header",
                 source_, i + 1, count, pos);
    ZipEntry e;
    const std::uint64_t flags = le(image_, pos + 8, 2);
    e.encrypted = (flags & 1) != 0;
    e.method = static_cast<std::uint16_t>(le(image_, pos + 10, 2));
    e.size = le(image_, pos + 20, 4);
    std::uint64_t plain_size = le(image_, pos + 24, 4);
    const std::size_t name_len = le(image_, pos + 28, 2);
    const std::size_t extra_len = le(image_, pos + 30, 2);
    const std::size_t comment_len = le(image_, pos + 32, 2);
    std::uint64_t local = le(image_, pos + 42, 4);
    const std::size_t header = kCentralHeaderBytes + name_len + extra_len + comment_len;
    VLBIAS_CHECK(header <= end - pos, InputError,
                 "'{}' has a corrupt ZIP central directory: entry {} at byte {} runs past the "
                 "directory's end",
                 source_, i + 1, pos);
    e.name.assign(reinterpret_cast<const char*>(image_.data()) + pos + kCentralHeaderBytes,
                  name_len);
    // The zip64 extra field holds the 64-bit values whose 32-bit fields are all ones.
    for (std::size_t x = pos + kCentralHeaderBytes + name_len, x_end = x + extra_len;
         x + 4 <= x_end;) {
      const std::size_t id = le(image_, x, 2);
      const std::size_t len = le(image_, x + 2, 2);
      if (len > x_end - x - 4) break;
      if (id == 1) {
        std::size_t f = x + 4;
        const std::size_t f_end = f + len;
        for (std::uint64_t* field : {&plain_size, &e.size, &local}) {
          if (*field == 0xffffffff && f + 8 <= f_end) {
            *field = le(image_, f, 8);
            f += 8;
          }
        }
      }
      x += 4 + len;
    }
    VLBIAS_CHECK(e.method != 0 || e.size == plain_size, InputError,
                 "'{}' has ZIP entry '{}' stored uncompressed with a size of {} bytes but an "
                 "uncompressed size of {}",
                 source_, escape_for_message(e.name, 120), e.size, plain_size);
    e.offset = data_offset(local, e.name, e.size, offset);
    entries_.push_back(std::move(e));
    pos += header;
  }
}

std::uint64_t ZipArchive::data_offset(std::uint64_t local, const std::string& name,
                                      std::uint64_t size, std::uint64_t directory_offset) const {
  const std::string shown = escape_for_message(name, 120);
  VLBIAS_CHECK(fits(local, kLocalHeaderBytes, directory_offset) &&
                   le(image_, static_cast<std::size_t>(local), 4) == kLocalSignature,
               InputError,
               "'{}' has ZIP entry '{}' whose local header offset {} does not point to a local "
               "file header before the central directory at byte {}",
               source_, shown, local, directory_offset);
  const auto at = static_cast<std::size_t>(local);
  const std::size_t name_len = le(image_, at + 26, 2);
  const std::size_t extra_len = le(image_, at + 28, 2);
  const std::uint64_t data = local + kLocalHeaderBytes + name_len + extra_len;
  const std::string_view local_name(
      reinterpret_cast<const char*>(image_.data()) + at + kLocalHeaderBytes,
      std::min<std::size_t>(name_len, image_.size() - at - kLocalHeaderBytes));
  VLBIAS_CHECK(local_name == name, InputError,
               "'{}' has ZIP entry '{}' whose local header at byte {} names '{}' instead", source_,
               shown, local, escape_for_message(local_name, 120));
  VLBIAS_CHECK(fits(data, size, directory_offset), InputError,
               "'{}' has ZIP entry '{}' whose {} bytes at byte {} run past the start of the "
               "central directory at byte {}; the file is truncated or corrupt",
               source_, shown, size, data, directory_offset);
  return data;
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

std::span<const std::uint8_t> ZipArchive::read(const ZipEntry& e) const {
  const std::string shown = escape_for_message(e.name, 120);
  VLBIAS_CHECK(!e.encrypted, InputError, "'{}' has ZIP entry '{}' encrypted, which is not read",
               source_, shown);
  VLBIAS_CHECK(e.method == 0, InputError,
               "'{}' has ZIP entry '{}' compressed (method {}); PyTorch writes checkpoint entries "
               "uncompressed, so re-save it with torch.save",
               source_, shown, e.method);
  return image_.subspan(static_cast<std::size_t>(e.offset), static_cast<std::size_t>(e.size));
}

}  // namespace vlbias::io_internal
