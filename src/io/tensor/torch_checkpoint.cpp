// Reading the three PyTorch containers into validated tensor views (torch_checkpoint.h);
// writing them out is torch_convert.cpp.
#include "vlbias/io/tensor/torch_checkpoint.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pickle.h"
#include "torch_storage.h"
#include "vlbias/core/error.h"
#include "vlbias/io/cell_text.h"
#include "zip_archive.h"

namespace vlbias {

namespace {

using io_internal::PickleArena;
using io_internal::PickleKind;
using io_internal::PickleValue;
using io_internal::StorageRef;
using io_internal::ZipArchive;

constexpr int kMaxWalkDepth = 1000;
// A joined name's length, and all names together: the safetensors header they become may hold
// 100,000,000 bytes (its readers' limit), about 64 bytes of it per tensor besides the name.
constexpr std::size_t kMaxNameBytes = 4096;
constexpr std::size_t kMaxConvertedHeaderBytes = 100'000'000;
constexpr std::size_t kHeaderBytesPerTensor = 64;

std::string quoted_key(std::string_view s) {
  return escape_for_message(s, 120);
}

// A tensor reached by the walk: its name and its Tensor value.
struct NamedTensor {
  std::string name;
  const PickleValue* tensor;
};

// Walks a value tree and names the tensors in it (naming rules: torch_checkpoint.h).
class TensorWalk {
 public:
  TensorWalk(const std::string& source, std::size_t max_visits)
      : source_(source), max_visits_(max_visits) {}

  void walk(const PickleValue* v, const std::string& name, int depth) {
    VLBIAS_CHECK(depth <= kMaxWalkDepth, InputError,
                 "'{}' nests its values more than {} levels deep (or a container holds itself) "
                 "at '{}'; refused as a resource limit",
                 source_, kMaxWalkDepth, quoted_key(name));
    VLBIAS_CHECK(++visits_ <= max_visits_, InputError,
                 "'{}' refers to its values more than {} times (shared containers nested in "
                 "each other); refused as a resource limit",
                 source_, max_visits_);
    switch (v->kind) {
      case PickleKind::Tensor:
        header_bytes_ += name.size() + kHeaderBytesPerTensor;
        VLBIAS_CHECK(header_bytes_ <= kMaxConvertedHeaderBytes, InputError,
                     "'{}' names so many tensors (or such long names) that their safetensors "
                     "header would pass {} bytes; refused as a resource limit",
                     source_, kMaxConvertedHeaderBytes);
        tensors.push_back({name.empty() ? std::string("tensor") : name, v});
        return;
      case PickleKind::Dict:
        if (v->state != nullptr) ++ignored;  // an OrderedDict's _metadata
        for (std::size_t i = 0; i + 1 < v->items.size(); i += 2) {
          const PickleValue* key = v->items[i];
          if (key->kind == PickleKind::String) {
            walk(v->items[i + 1], join(name, key->text), depth + 1);
          } else if (key->kind == PickleKind::Int) {
            walk(v->items[i + 1], join(name, std::to_string(key->integer)), depth + 1);
          } else {
            ++ignored;
          }
        }
        return;
      case PickleKind::Tuple:
      case PickleKind::List:
        for (std::size_t i = 0; i < v->items.size(); ++i) {
          walk(v->items[i], join(name, std::to_string(i)), depth + 1);
        }
        return;
      case PickleKind::Object:
        if (v->state != nullptr) walk(v->state, name, depth + 1);
        return;
      default:
        ++ignored;
    }
  }

  std::vector<NamedTensor> tensors;
  std::size_t ignored = 0;

 private:
  std::string join(const std::string& prefix, const std::string& key) const {
    VLBIAS_CHECK(prefix.size() + key.size() < kMaxNameBytes, InputError,
                 "'{}' nests a value under a name longer than {} bytes ('{}...'); refused as a "
                 "resource limit",
                 source_, kMaxNameBytes, quoted_key(prefix));
    return prefix.empty() ? key : prefix + "." + key;
  }
  const std::string& source_;
  std::size_t max_visits_;
  std::size_t visits_ = 0;
  std::size_t header_bytes_ = 0;
};

// a * b, or false on overflow.
bool mul(std::size_t a, std::size_t b, std::size_t* out) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) return false;
  *out = a * b;
  return true;
}

// Checks a tensor's view against its storage (overflow-checked) and fills `t`.
void describe_tensor(const PickleValue* v, const StorageRef& storage, const std::string& source,
                     TorchTensorInfo& t) {
  const auto& size = v->items[2]->items;
  const auto& stride = v->items[3]->items;
  const std::string name = quoted_key(t.name);
  VLBIAS_CHECK(size.size() == stride.size() && size.size() <= 64, InputError,
               "'{}': tensor '{}' has {} sizes and {} strides; expected one stride per "
               "dimension and at most 64 dimensions",
               source, name, size.size(), stride.size());
  VLBIAS_CHECK(v->items[1]->integer >= 0, InputError,
               "'{}': tensor '{}' has a negative storage offset {}", source, name,
               v->items[1]->integer);
  t.dtype = storage.dtype;
  t.storage_offset = static_cast<std::size_t>(v->items[1]->integer);
  std::size_t count = 1;
  std::size_t last = t.storage_offset;  // the highest element the view reaches
  bool ok = true;
  for (std::size_t d = 0; d < size.size(); ++d) {
    VLBIAS_CHECK(size[d]->integer >= 0 && stride[d]->integer >= 0, InputError,
                 "'{}': tensor '{}' has size {} and stride {} in dimension {}; expected "
                 "non-negative values",
                 source, name, size[d]->integer, stride[d]->integer, d);
    t.shape.push_back(static_cast<std::size_t>(size[d]->integer));
    t.strides.push_back(static_cast<std::size_t>(stride[d]->integer));
    ok = ok && mul(count, t.shape[d], &count);
  }
  std::size_t reach = 0;
  for (std::size_t d = 0; d < size.size() && ok && count > 0; ++d) {
    ok = mul(t.shape[d] - 1, t.strides[d], &reach) &&
         last <= std::numeric_limits<std::size_t>::max() - reach;
    if (ok) last += reach;
  }
  std::size_t bytes = 0;
  ok = ok && mul(count, dtype_size(t.dtype), &bytes);
  VLBIAS_CHECK(ok, InputError,
               "'{}': tensor '{}' has shape [{}] and strides [{}] whose extent overflows 64 bits",
               source, name, fmt::join(t.shape, ", "), fmt::join(t.strides, ", "));
  VLBIAS_CHECK(count == 0 || last < storage.numel, InputError,
               "'{}': tensor '{}' (offset {}, shape [{}], strides [{}]) reaches element {} of "
               "its storage '{}', which holds {} elements",
               source, name, t.storage_offset, fmt::join(t.shape, ", "), fmt::join(t.strides, ", "),
               last, quoted_key(storage.key), storage.numel);
  t.count = count;
  t.storage = storage.bytes;
}

}  // namespace

std::string_view torch_format_name(TorchFormat format) {
  switch (format) {
    case TorchFormat::Zip:
      return "zip";
    case TorchFormat::Legacy:
      return "legacy";
    case TorchFormat::TorchScript:
      return "torchscript";
  }
  return "zip";
}

TorchCheckpoint TorchCheckpoint::open(const std::filesystem::path& path,
                                      const TorchReadLimits& limits) {
  TorchCheckpoint c;
  c.source_ = path.string();
  c.mapping_ = MappedFile(path, MapAccess::Random);
  c.image_ = c.mapping_.bytes();
  c.parse(limits);
  return c;
}

TorchCheckpoint TorchCheckpoint::from_bytes(std::span<const std::uint8_t> bytes, std::string source,
                                            const TorchReadLimits& limits) {
  TorchCheckpoint c;
  c.source_ = std::move(source);
  c.owned_.assign(bytes.begin(), bytes.end());
  c.image_ = c.owned_;
  c.parse(limits);
  return c;
}

void TorchCheckpoint::parse(const TorchReadLimits& limits) {
  PickleArena arena;
  io_internal::StorageTable storages(source_);
  // The pickled roots to name tensors from, with their name prefixes.
  std::vector<std::pair<const PickleValue*, std::string>> roots;
  if (io_internal::looks_like_zip(image_)) {
    const ZipArchive zip(image_, source_);
    const auto found = io_internal::read_zip_checkpoint(zip, source_, arena, storages);
    format_ = found.torchscript ? TorchFormat::TorchScript : TorchFormat::Zip;
    roots.emplace_back(found.data, "");
    if (found.constants != nullptr) roots.emplace_back(found.constants, "constants");
  } else {
    format_ = TorchFormat::Legacy;
    roots.emplace_back(io_internal::read_legacy_checkpoint(image_, source_, arena, storages), "");
  }

  TensorWalk walk(source_, 4 * arena.size() + 1024);
  for (const auto& [root, prefix] : roots) walk.walk(root, prefix, 0);
  ignored_leaves_ = walk.ignored;

  const std::uint64_t budget = limits.max_tensor_bytes != 0
                                   ? limits.max_tensor_bytes
                                   : 4 * static_cast<std::uint64_t>(image_.size()) + (256u << 20);
  std::set<std::string_view> names;
  tensors_.reserve(walk.tensors.size());
  for (const NamedTensor& named : walk.tensors) {
    TorchTensorInfo t;
    t.name = named.name;
    describe_tensor(named.tensor, storages.resolve(named.tensor->items[0], t.name), source_, t);
    const std::uint64_t bytes = static_cast<std::uint64_t>(t.count) * dtype_size(t.dtype);
    VLBIAS_CHECK(bytes <= budget - std::min(budget, tensor_bytes_), InputError,
                 "'{}': tensor '{}' brings its tensors to more than {} bytes, the limit for a "
                 "{}-byte file (views that repeat their storages); refused as a resource limit",
                 source_, quoted_key(t.name), budget, image_.size());
    tensor_bytes_ += bytes;
    tensors_.push_back(std::move(t));
    VLBIAS_CHECK(names.insert(tensors_.back().name).second, InputError,
                 "'{}' has two tensors named '{}' once its nested names are joined with '.'",
                 source_, quoted_key(tensors_.back().name));
  }
}

void TorchCheckpoint::copy_tensor(std::size_t index, std::span<std::uint8_t> dst) const {
  const TorchTensorInfo& t = tensors_.at(index);
  const std::size_t el = dtype_size(t.dtype);
  VLBIAS_CHECK(dst.size() == t.count * el, InternalError,
               "copy_tensor('{}'): {} bytes given for {} needing {}", t.name, dst.size(), t.name,
               t.count * el);
  if (t.count == 0) return;
  // Row-major strides: one copy. Otherwise walk the index space, last dimension innermost.
  bool contiguous = true;
  std::size_t expected = 1;
  for (std::size_t d = t.shape.size(); d-- > 0;) {
    if (t.shape[d] != 1 && t.strides[d] != expected) contiguous = false;
    expected *= t.shape[d];
  }
  const std::uint8_t* base = t.storage.data() + t.storage_offset * el;
  if (contiguous) {
    std::copy_n(base, t.count * el, dst.data());
    return;
  }
  const std::size_t rank = t.shape.size();
  std::vector<std::size_t> at(rank, 0);
  const std::size_t inner = t.shape[rank - 1];
  const std::size_t inner_stride = t.strides[rank - 1] * el;
  std::uint8_t* out = dst.data();
  for (std::size_t done = 0; done < t.count; done += inner) {
    std::size_t offset = 0;
    for (std::size_t d = 0; d + 1 < rank; ++d) offset += at[d] * t.strides[d];
    const std::uint8_t* src = base + offset * el;
    for (std::size_t i = 0; i < inner; ++i, src += inner_stride, out += el) {
      std::copy_n(src, el, out);
    }
    for (std::size_t d = rank - 1; d-- > 0;) {
      if (++at[d] < t.shape[d]) break;
      at[d] = 0;
    }
  }
}

}  // namespace vlbias
