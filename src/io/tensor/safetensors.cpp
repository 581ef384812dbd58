#include "vlbias/io/tensor/safetensors.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "float_decode.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/cell_text.h"
#include "vlbias/io/json.h"
#include "vlbias/io/json_type.h"
#include "vlbias/io/run/atomic_file.h"

namespace vlbias {

namespace {

// The Hugging Face library's limit (MAX_HEADER_SIZE).
constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;
// Valid headers nest 3 levels (root, tensor entry, shape array): a tighter limit than
// kMaxJsonDepth (json.h), checked by the same scan.
constexpr int kMaxDepth = 16;
constexpr const char* kMetadataKey = "__metadata__";

struct DtypeEntry {
  SafetensorsDtype dtype;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DtypeEntry, 15> kSafetensorsDtypes = {{
    {SafetensorsDtype::Bool, "BOOL", 1},
    {SafetensorsDtype::U8, "U8", 1},
    {SafetensorsDtype::I8, "I8", 1},
    {SafetensorsDtype::F8_E5M2, "F8_E5M2", 1},
    {SafetensorsDtype::F8_E4M3, "F8_E4M3", 1},
    {SafetensorsDtype::I16, "I16", 2},
    {SafetensorsDtype::U16, "U16", 2},
    {SafetensorsDtype::F16, "F16", 2},
    {SafetensorsDtype::BF16, "BF16", 2},
    {SafetensorsDtype::I32, "I32", 4},
    {SafetensorsDtype::U32, "U32", 4},
    {SafetensorsDtype::F32, "F32", 4},
    {SafetensorsDtype::I64, "I64", 8},
    {SafetensorsDtype::U64, "U64", 8},
    {SafetensorsDtype::F64, "F64", 8},
}};

const DtypeEntry& entry(SafetensorsDtype d) {
  for (const auto& e : kSafetensorsDtypes) {
    if (e.dtype == d) return e;
  }
  return kSafetensorsDtypes[0];
}

// Names from a file, quoted in messages.
std::string quoted_name(std::string_view name) {
  return escape_for_message(name, 80);
}

std::string safetensors_shape_text(std::span<const std::size_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// Parses the header with duplicate-key and depth checks: plain JSON parsing
// keeps the last of two equal keys, which would silently hide a tensor.
Json parse_header_json(std::string_view text, const std::string& source) {
  check_json_depth(text, fmt::format("'{}' has a safetensors header that", source), kMaxDepth);
  std::vector<std::set<std::string>> open_objects;
  auto callback = [&](int, nlohmann::json::parse_event_t event, Json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      open_objects.emplace_back();
    } else if (event == Event::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == Event::key && !open_objects.empty()) {
      const auto& key = parsed.get_ref<const std::string&>();
      VLBIAS_CHECK(open_objects.back().insert(key).second, InputError,
                   "'{}' has the key '{}' twice in one object of its safetensors header", source,
                   quoted_name(key));
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), callback);
  } catch (const nlohmann::json::exception& e) {
    // parse_error for syntax, out_of_range for numbers beyond double (1e999).
    std::string_view what = e.what();
    if (const auto cut = what.find("] "); cut != std::string_view::npos)
      what.remove_prefix(cut + 2);
    VLBIAS_FAIL(InputError, "'{}' has an invalid safetensors JSON header: {}", source,
                escape_for_message(what, 240));
  }
}

std::size_t json_size(const Json& j) {
  const std::uint64_t v = j.get<std::uint64_t>();
  VLBIAS_CHECK(v <= std::numeric_limits<std::size_t>::max(), InternalError,
               "value {} exceeds size_t", v);
  return static_cast<std::size_t>(v);
}

SafetensorsTensorInfo parse_tensor(const std::string& name, const Json& j,
                                   const std::string& source, std::size_t buffer_size) {
  SafetensorsTensorInfo t;
  t.name = name;
  VLBIAS_CHECK(j.is_object(), InputError,
               "'{}': tensor '{}' has {} as its header entry; expected an object with dtype, "
               "shape and data_offsets",
               source, quoted_name(name), json_type_name(j.type()));
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    VLBIAS_CHECK(j.contains(key), InputError,
                 "'{}': tensor '{}' has no \"{}\" in its header entry; expected dtype, shape and "
                 "data_offsets",
                 source, quoted_name(name), key);
  }
  const Json& dtype = j["dtype"];
  VLBIAS_CHECK(dtype.is_string(), InputError,
               "'{}': tensor '{}' has {} as its dtype; expected a string such as \"F32\"", source,
               quoted_name(name), json_type_name(dtype.type()));
  const auto& dtype_text = dtype.get_ref<const std::string&>();
  const auto found = std::find_if(kSafetensorsDtypes.begin(), kSafetensorsDtypes.end(),
                                  [&](const DtypeEntry& e) { return e.name == dtype_text; });
  if (found == kSafetensorsDtypes.end()) {
    std::vector<std::string_view> known;
    for (const auto& e : kSafetensorsDtypes) known.push_back(e.name);
    VLBIAS_FAIL(InputError, "'{}': tensor '{}' has unknown dtype '{}'; known dtypes are {}", source,
                quoted_name(name), quoted_name(dtype_text), fmt::join(known, ", "));
  }
  t.dtype = found->dtype;

  const Json& shape = j["shape"];
  const bool shape_ok =
      shape.is_array() &&
      std::all_of(shape.begin(), shape.end(), [](const Json& d) { return d.is_number_unsigned(); });
  VLBIAS_CHECK(shape_ok, InputError,
               "'{}': tensor '{}' has an invalid shape; expected an array of non-negative "
               "integers such as [rows, cols]",
               source, quoted_name(name));
  for (const Json& d : shape) t.shape.push_back(json_size(d));
  // As in the Hugging Face library, every partial product must fit.
  std::size_t count = 1;
  bool overflow = false;
  for (std::size_t d : t.shape) {
    if (d != 0 && count > std::numeric_limits<std::size_t>::max() / d) overflow = true;
    count *= d;
  }
  overflow = overflow || count > std::numeric_limits<std::size_t>::max() / found->size;
  VLBIAS_CHECK(!overflow, InputError,
               "'{}': tensor '{}' has shape {} whose size in bytes overflows 64 bits; the header "
               "is corrupt",
               source, quoted_name(name), safetensors_shape_text(t.shape));
  t.count = count;

  const Json& offsets = j["data_offsets"];
  const bool offsets_ok = offsets.is_array() && offsets.size() == 2 &&
                          offsets[0].is_number_unsigned() && offsets[1].is_number_unsigned();
  VLBIAS_CHECK(offsets_ok, InputError,
               "'{}': tensor '{}' has invalid data_offsets; expected [begin, end] with two "
               "non-negative integers",
               source, quoted_name(name));
  t.begin = json_size(offsets[0]);
  t.end = json_size(offsets[1]);
  VLBIAS_CHECK(t.begin <= t.end, InputError,
               "'{}': tensor '{}' has data_offsets [{}, {}] that end before they begin", source,
               quoted_name(name), t.begin, t.end);
  VLBIAS_CHECK(t.end <= buffer_size, InputError,
               "'{}': tensor '{}' has data_offsets [{}, {}] past the end of the {}-byte data "
               "buffer; the file is truncated or corrupt",
               source, quoted_name(name), t.begin, t.end, buffer_size);
  const std::size_t need = count * found->size;
  VLBIAS_CHECK(t.end - t.begin == need, InputError,
               "'{}': tensor '{}' spans {} bytes (data_offsets [{}, {}]) but {} with shape {} "
               "needs {} bytes",
               source, quoted_name(name), t.end - t.begin, t.begin, t.end, found->name,
               safetensors_shape_text(t.shape), need);
  return t;
}

}  // namespace

std::string_view dtype_name(SafetensorsDtype dtype) {
  return entry(dtype).name;
}
std::size_t dtype_size(SafetensorsDtype dtype) {
  return entry(dtype).size;
}
bool dtype_is_float(SafetensorsDtype dtype) {
  return dtype == SafetensorsDtype::F16 || dtype == SafetensorsDtype::BF16 ||
         dtype == SafetensorsDtype::F32 || dtype == SafetensorsDtype::F64;
}

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  SafetensorsFile f;
  f.source_ = path.string();
  f.mapping_ = MappedFile(path, MapAccess::Random);
  f.image_ = f.mapping_.bytes();
  f.parse();
  return f;
}

SafetensorsFile SafetensorsFile::from_bytes(std::span<const std::uint8_t> bytes,
                                            std::string source) {
  SafetensorsFile f;
  f.source_ = std::move(source);
  f.owned_.assign(bytes.begin(), bytes.end());
  f.image_ = f.owned_;
  f.parse();
  return f;
}

void SafetensorsFile::parse() {
  const std::size_t size = image_.size();
  VLBIAS_CHECK(size >= 8, InputError,
               "'{}' is not a safetensors file: it is {} bytes long, shorter than the 8-byte "
               "header length",
               source_, size);
  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | image_[static_cast<std::size_t>(i)];
  VLBIAS_CHECK(header_len <= kMaxSafetensorsHeaderBytes, InputError,
               "'{}' declares a {}-byte safetensors header, over the {}-byte limit; the file is "
               "corrupt or not a safetensors file",
               source_, header_len, kMaxSafetensorsHeaderBytes);
  VLBIAS_CHECK(header_len <= size - 8, InputError,
               "'{}' is truncated: its safetensors header should be {} bytes but only {} bytes "
               "follow the length",
               source_, header_len, size - 8);
  data_offset_ = 8 + static_cast<std::size_t>(header_len);
  const std::size_t buffer_size = size - data_offset_;

  const std::string_view text(reinterpret_cast<const char*>(image_.data()) + 8,
                              static_cast<std::size_t>(header_len));
  const Json root = parse_header_json(text, source_);
  VLBIAS_CHECK(root.is_object(), InputError,
               "'{}' has {} as its safetensors header; expected a JSON object mapping tensor "
               "names to {{dtype, shape, data_offsets}}",
               source_, json_type_name(root.type()));

  for (const auto& [key, value] : root.items()) {
    if (key == kMetadataKey) {
      if (value.is_null()) continue;
      VLBIAS_CHECK(value.is_object(), InputError,
                   "'{}' has {} as __metadata__; expected an object of string values", source_,
                   json_type_name(value.type()));
      for (const auto& [mk, mv] : value.items()) {
        VLBIAS_CHECK(mv.is_string(), InputError,
                     "'{}' has {} for __metadata__ key '{}'; metadata values must be strings",
                     source_, json_type_name(mv.type()), quoted_name(mk));
        metadata_.emplace(mk, mv.get<std::string>());
      }
      continue;
    }
    tensors_.push_back(parse_tensor(key, value, source_, buffer_size));
    index_.emplace(key, tensors_.size() - 1);
    names_.push_back(key);
  }

  // Tensors must tile the buffer: sorted by offsets, each begins where the
  // previous ended, and the last ends at the end of the file.
  std::vector<std::size_t> order(tensors_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::pair(tensors_[a].begin, tensors_[a].end) <
           std::pair(tensors_[b].begin, tensors_[b].end);
  });
  std::size_t pos = 0;
  const SafetensorsTensorInfo* prev = nullptr;
  for (std::size_t i : order) {
    const SafetensorsTensorInfo& t = tensors_[i];
    if (t.begin < pos) {
      VLBIAS_FAIL(InputError,
                  "'{}': tensors '{}' and '{}' overlap in the data buffer ('{}' ends at byte {}, "
                  "'{}' begins at byte {})",
                  source_, quoted_name(prev->name), quoted_name(t.name), quoted_name(prev->name),
                  pos, quoted_name(t.name), t.begin);
    }
    if (t.begin > pos) {
      const std::string before =
          prev ? fmt::format("after tensor '{}' (ends at byte {})", quoted_name(prev->name), pos)
               : std::string("at the start of the data buffer");
      VLBIAS_FAIL(InputError,
                  "'{}' has {} unused bytes {} before tensor '{}' (begins at byte {}); tensors "
                  "must cover the data buffer contiguously",
                  source_, t.begin - pos, before, quoted_name(t.name), t.begin);
    }
    pos = t.end;
    prev = &t;
  }
  VLBIAS_CHECK(pos == buffer_size, InputError,
               "'{}' has {} unused bytes at the end of its {}-byte data buffer after the last "
               "tensor; tensors must cover the data buffer exactly",
               source_, buffer_size - pos, buffer_size);
}

bool SafetensorsFile::contains(std::string_view name) const {
  return index_.find(name) != index_.end();
}

const SafetensorsTensorInfo& SafetensorsFile::info(std::string_view name) const {
  const auto it = index_.find(name);
  if (it != index_.end()) return tensors_[it->second];
  constexpr std::size_t kShown = 5;
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < names_.size() && i < kShown; ++i) {
    shown.push_back(fmt::format("'{}'", quoted_name(names_[i])));
  }
  const std::string more =
      names_.size() > kShown ? fmt::format(" and {} more", names_.size() - kShown) : "";
  if (names_.empty()) {
    VLBIAS_FAIL(InputError, "'{}' has no tensor named '{}'; it holds no tensors", source_,
                quoted_name(name));
  }
  VLBIAS_FAIL(InputError, "'{}' has no tensor named '{}'; it has {}{}", source_, quoted_name(name),
              fmt::join(shown, ", "), more);
}

std::span<const std::uint8_t> SafetensorsFile::bytes(std::string_view name) const {
  const SafetensorsTensorInfo& t = info(name);
  return image_.subspan(data_offset_ + t.begin, t.end - t.begin);
}

void SafetensorsFile::release_pages(std::string_view name) const {
  if (mapping_.data() != nullptr) mapping_.release_pages(bytes(name));
}

void SafetensorsFile::convert(const SafetensorsTensorInfo& t, NonFinite nonfinite,
                              float* dst) const {
  using io_internal::FloatKind;
  VLBIAS_CHECK(dtype_is_float(t.dtype), InputError,
               "'{}': tensor '{}' has dtype {}; only F64, F32, F16 and BF16 tensors can be read "
               "as float32",
               source_, quoted_name(t.name), dtype_name(t.dtype));
  const FloatKind kind = t.dtype == SafetensorsDtype::F16    ? FloatKind::F16
                         : t.dtype == SafetensorsDtype::BF16 ? FloatKind::BF16
                         : t.dtype == SafetensorsDtype::F32  ? FloatKind::F32
                                                             : FloatKind::F64;
  if (kind == FloatKind::F64 && t.count > 0) {
    warn("tensor '{}' in '{}' is F64; its values are narrowed to float32", quoted_name(t.name),
         source_);
  }
  // The format is little-endian.
  const bool swap = std::endian::native == std::endian::big;
  io_internal::decode_float_array(image_.data() + data_offset_ + t.begin, kind, swap, t.shape,
                                  /*fortran=*/false, nonfinite,
                                  fmt::format("tensor '{}' in '{}'", quoted_name(t.name), source_),
                                  dst);
}

Matrix SafetensorsFile::read_matrix(std::string_view name, NonFinite nonfinite) const {
  const SafetensorsTensorInfo& t = info(name);
  VLBIAS_CHECK(t.shape.size() == 2, InputError,
               "'{}': tensor '{}' has shape {}; expected a 2-D [rows, cols] matrix", source_,
               quoted_name(t.name), safetensors_shape_text(t.shape));
  VLBIAS_CHECK(dtype_is_float(t.dtype), InputError,
               "'{}': tensor '{}' has dtype {}; only F64, F32, F16 and BF16 tensors can be read "
               "as float32",
               source_, quoted_name(t.name), dtype_name(t.dtype));
  Matrix m;
  m.rows = t.shape[0];
  m.cols = t.shape[1];
  m.data.resize(t.count);
  convert(t, nonfinite, m.data.data());
  return m;
}

std::vector<float> SafetensorsFile::read_floats(std::string_view name, NonFinite nonfinite) const {
  const SafetensorsTensorInfo& t = info(name);
  VLBIAS_CHECK(dtype_is_float(t.dtype), InputError,
               "'{}': tensor '{}' has dtype {}; only F64, F32, F16 and BF16 tensors can be read "
               "as float32",
               source_, quoted_name(t.name), dtype_name(t.dtype));
  std::vector<float> out(t.count);
  convert(t, nonfinite, out.data());
  return out;
}

SafetensorsFile SafetensorsFile::from_owned(std::vector<std::uint8_t> bytes, std::string source) {
  SafetensorsFile f;
  f.source_ = std::move(source);
  f.owned_ = std::move(bytes);
  f.image_ = f.owned_;
  f.parse();
  return f;
}

std::string safetensors_header(const std::string& file,
                               const std::vector<SafetensorsEntry>& entries,
                               const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json meta = Json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header[kMetadataKey] = std::move(meta);
  }
  std::set<std::string_view> seen;
  std::size_t offset = 0;
  for (const SafetensorsEntry& e : entries) {
    VLBIAS_CHECK(!e.name.empty() && e.name != kMetadataKey, InputError,
                 "cannot write '{}': tensor name '{}' is empty or reserved", file, e.name);
    VLBIAS_CHECK(seen.insert(e.name).second, InputError,
                 "cannot write '{}': tensor name '{}' is used twice", file, quoted_name(e.name));
    std::size_t bytes = dtype_size(e.dtype);
    for (std::size_t d : e.shape) bytes *= d;
    Json info = Json::object();
    info["dtype"] = dtype_name(e.dtype);
    info["shape"] = e.shape;
    info["data_offsets"] = {offset, offset + bytes};
    header[e.name] = std::move(info);
    offset += bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::type_error&) {
    VLBIAS_FAIL(InputError, "cannot write '{}': tensor names and metadata must be valid UTF-8",
                file);
  }
  // Space padding to a multiple of 8 keeps the data 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((static_cast<std::uint64_t>(text.size()) >> (8 * i)) & 0xff);
  }
  return out + text;
}

void write_safetensors(const std::filesystem::path& path,
                       const std::vector<std::pair<std::string, MatrixView>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  const std::string file = path.string();
  std::vector<SafetensorsEntry> entries;
  for (const auto& [name, m] : tensors) {
    VLBIAS_CHECK(m.data != nullptr || m.rows * m.cols == 0, InternalError,
                 "write_safetensors('{}'): tensor '{}' has null data", file, quoted_name(name));
    entries.push_back({name, SafetensorsDtype::F32, {m.rows, m.cols}});
  }
  const std::string header = safetensors_header(file, entries, metadata);
  AtomicWriter out(path);
  out.write(header.data(), header.size());
  for (const auto& [name, m] : tensors) out.write_f32le(m.data, m.rows * m.cols);
  out.commit();
}

}  // namespace vlbias
