#include "torch_storage.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/io/cell_text.h"

namespace vlbias::io_internal {

namespace {

constexpr std::array<std::uint8_t, 14> kLegacyStart = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c,
                                                       0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
constexpr std::int64_t kLegacyProtocolVersion = 1001;

std::string quoted_field(std::string_view s) {
  return escape_for_message(s, 120);
}

struct StorageType {
  std::string_view name;
  std::optional<SafetensorsDtype> dtype;
};

constexpr std::array<StorageType, 11> kTorchStorageTypes = {{
    {"torch.FloatStorage", SafetensorsDtype::F32},
    {"torch.DoubleStorage", SafetensorsDtype::F64},
    {"torch.HalfStorage", SafetensorsDtype::F16},
    {"torch.BFloat16Storage", SafetensorsDtype::BF16},
    {"torch.LongStorage", SafetensorsDtype::I64},
    {"torch.IntStorage", SafetensorsDtype::I32},
    {"torch.ShortStorage", SafetensorsDtype::I16},
    {"torch.CharStorage", SafetensorsDtype::I8},
    {"torch.ByteStorage", SafetensorsDtype::U8},
    {"torch.BoolStorage", SafetensorsDtype::Bool},
    {"torch.UntypedStorage", SafetensorsDtype::U8},
}};

// A persistent id ('storage', type, key, location, numel[, view_metadata]), parsed.
struct StorageId {
  SafetensorsDtype dtype;
  std::string key;
  std::size_t numel;
  // Legacy views of a larger storage: (view key, offset, size) in elements.
  const PickleValue* view = nullptr;
};

StorageId parse_storage_id(const PickleValue* persistent, const std::string& source) {
  const PickleValue* id = persistent->items[0];
  const auto& a = id->items;
  const bool shape_ok =
      id->kind == PickleKind::Tuple && (a.size() == 5 || a.size() == 6) &&
      a[0]->kind == PickleKind::String && a[0]->text == "storage" &&
      a[1]->kind == PickleKind::Global && a[2]->kind == PickleKind::String &&
      a[4]->kind == PickleKind::Int && a[4]->integer >= 0 &&
      (a.size() == 5 || a[5]->kind == PickleKind::None ||
       (a[5]->kind == PickleKind::Tuple && a[5]->items.size() == 3 &&
        a[5]->items[0]->kind == PickleKind::String && a[5]->items[1]->kind == PickleKind::Int &&
        a[5]->items[2]->kind == PickleKind::Int));
  VLBIAS_CHECK(shape_ok, InputError,
               "'{}' has a persistent id that is not ('storage', storage type, key, location, "
               "size[, view]), the form torch writes for storages",
               source);
  const auto type = std::find_if(kTorchStorageTypes.begin(), kTorchStorageTypes.end(),
                                 [&](const StorageType& t) { return t.name == a[1]->text; });
  VLBIAS_CHECK(type != kTorchStorageTypes.end(), InputError,
               "'{}' has a storage of type '{}', whose dtype vlbias does not read (float, "
               "integer and bool storages are read)",
               source, quoted_field(a[1]->text));
  StorageId s{*type->dtype, a[2]->text, static_cast<std::size_t>(a[4]->integer)};
  if (a.size() == 6 && a[5]->kind == PickleKind::Tuple) s.view = a[5];
  VLBIAS_CHECK(s.numel <= std::numeric_limits<std::size_t>::max() / dtype_size(s.dtype), InputError,
               "'{}' declares storage '{}' of {} elements, whose size overflows", source,
               quoted_field(s.key), s.numel);
  return s;
}

// One storage is one dtype and one size however many persistent ids name it: torch.save refuses
// to write two views of one storage as different types, and torch.load refuses to read them
// (a storage read as F32 and as F16 would give two tensors of other values from the same bytes).
// `declared` holds the ids seen so far by storage name (a ZIP entry name, or a legacy key).
void declare_storage(std::map<std::string, StorageId>& declared, const std::string& name,
                     const StorageId& id, const std::string& source) {
  const auto [it, fresh] = declared.emplace(name, id);
  VLBIAS_CHECK(fresh || (it->second.dtype == id.dtype && it->second.numel == id.numel), InputError,
               "'{}' declares storage '{}' twice with different types or sizes ({} elements of "
               "{}, then {} elements of {}); one storage holds one dtype, as torch.load requires",
               source, quoted_field(id.key), it->second.numel, dtype_name(it->second.dtype),
               id.numel, dtype_name(id.dtype));
}

// Every Persistent value the arena built from index `first` on.
std::vector<const PickleValue*> persistent_ids(const PickleArena& arena, std::size_t first) {
  std::vector<const PickleValue*> out;
  for (std::size_t i = first; i < arena.size(); ++i) {
    if (arena.at(i)->kind == PickleKind::Persistent) out.push_back(arena.at(i));
  }
  return out;
}

// Binds the storages named by the pickle built from arena index `first` to the entries of
// `folder` ("<prefix>/data/" or "<prefix>/constants/").
void bind_zip_storages(const ZipArchive& zip, const std::string& folder, const PickleArena& arena,
                       std::size_t first, const std::string& source, StorageTable& storages) {
  std::map<std::string, StorageId> declared;
  for (const PickleValue* p : persistent_ids(arena, first)) {
    const StorageId id = parse_storage_id(p, source);
    const std::string entry_name = folder + id.key;
    declare_storage(declared, entry_name, id, source);
    const ZipEntry* entry = zip.find(entry_name);
    VLBIAS_CHECK(entry != nullptr, InputError,
                 "'{}' refers to storage '{}', but it has no ZIP entry '{}'", source,
                 quoted_field(id.key), quoted_field(entry_name));
    const std::size_t need = id.numel * dtype_size(id.dtype);
    VLBIAS_CHECK(entry->size == need, InputError,
                 "'{}' declares storage '{}' as {} elements of {} ({} bytes) but its ZIP entry "
                 "holds {} bytes",
                 source, quoted_field(id.key), id.numel, dtype_name(id.dtype), need, entry->size);
    storages.bound[p] = StorageRef{id.dtype, id.key, id.numel, zip.read(*entry)};
  }
}

}  // namespace

const StorageRef& StorageTable::resolve(const PickleValue* persistent,
                                        const std::string& tensor_name) const {
  const auto it = bound.find(persistent);
  VLBIAS_CHECK(it != bound.end(), InputError,
               "'{}': tensor '{}' refers to a storage whose bytes are not in the file", source_,
               quoted_field(tensor_name));
  return it->second;
}

ZipCheckpoint read_zip_checkpoint(const ZipArchive& zip, const std::string& source,
                                  PickleArena& arena, StorageTable& storages) {
  // torch writes every entry under one folder, named after the file by default.
  std::string prefix;
  std::size_t found = 0;
  for (const ZipEntry& e : zip.entries()) {
    const auto slash = e.name.find('/');
    if (slash != std::string::npos && e.name.substr(slash) == "/data.pkl") {
      prefix = e.name.substr(0, slash + 1);
      ++found;
    }
  }
  VLBIAS_CHECK(found == 1, InputError,
               "'{}' is a ZIP archive with {} '<folder>/data.pkl' entries; a PyTorch checkpoint "
               "has exactly one",
               source, found);
  if (const ZipEntry* order = zip.find(prefix + "byteorder")) {
    const auto b = zip.read(*order);
    VLBIAS_CHECK(
        std::string_view(reinterpret_cast<const char*>(b.data()), b.size()) == "little", InputError,
        "'{}' was saved on a big-endian machine (byteorder '{}'); only little-endian "
        "checkpoints are read",
        source, quoted_field(std::string_view(reinterpret_cast<const char*>(b.data()), b.size())));
  }
  ZipCheckpoint out;
  const ZipEntry* data = zip.find(prefix + "data.pkl");
  std::size_t first = arena.size();
  out.data = unpickle(zip.read(*data), source + " (" + prefix + "data.pkl)", arena);
  bind_zip_storages(zip, prefix + "data/", arena, first, source, storages);
  if (const ZipEntry* constants = zip.find(prefix + "constants.pkl")) {
    out.torchscript = true;
    first = arena.size();
    out.constants =
        unpickle(zip.read(*constants), source + " (" + prefix + "constants.pkl)", arena);
    bind_zip_storages(zip, prefix + "constants/", arena, first, source, storages);
  }
  return out;
}

const PickleValue* read_legacy_checkpoint(std::span<const std::uint8_t> image,
                                          const std::string& source, PickleArena& arena,
                                          StorageTable& storages) {
  VLBIAS_CHECK(image.size() >= kLegacyStart.size() &&
                   std::equal(kLegacyStart.begin(), kLegacyStart.end(), image.begin()),
               InputError,
               "'{}' is not a PyTorch checkpoint: it is neither a ZIP archive (torch.save since "
               "1.6, torch.jit.save) nor a legacy torch.save file (magic number "
               "0x1950a86a20f9469cfc6c)",
               source);
  std::size_t pos = 0;
  const auto next = [&](const char* part) {
    std::size_t used = 0;
    const PickleValue* v =
        unpickle(image.subspan(pos), fmt::format("{} ({} pickle)", source, part), arena, &used);
    pos += used;
    return v;
  };
  (void)next("magic number");
  const PickleValue* version = next("protocol version");
  VLBIAS_CHECK(version->kind == PickleKind::Int && version->integer == kLegacyProtocolVersion,
               InputError, "'{}' has legacy protocol version {}; expected {}", source,
               version->kind == PickleKind::Int ? std::to_string(version->integer) : "(not int)",
               kLegacyProtocolVersion);
  const PickleValue* sys_info = next("sys_info");
  for (std::size_t i = 0; sys_info->kind == PickleKind::Dict && i + 1 < sys_info->items.size();
       i += 2) {
    const PickleValue* k = sys_info->items[i];
    const PickleValue* v = sys_info->items[i + 1];
    VLBIAS_CHECK(!(k->text == "little_endian" && v->kind == PickleKind::Bool && !v->boolean),
                 InputError,
                 "'{}' was saved on a big-endian machine; only little-endian checkpoints are "
                 "read",
                 source);
  }
  const std::size_t first = arena.size();
  const PickleValue* root = next("object");
  std::map<std::string, StorageId> declared;
  std::vector<std::pair<const PickleValue*, StorageId>> ids;
  for (const PickleValue* p : persistent_ids(arena, first)) {
    StorageId id = parse_storage_id(p, source);
    declare_storage(declared, id.key, id, source);
    ids.emplace_back(p, std::move(id));
  }
  const PickleValue* keys = next("storage keys");
  VLBIAS_CHECK(keys->kind == PickleKind::List &&
                   std::all_of(keys->items.begin(), keys->items.end(),
                               [](const PickleValue* k) { return k->kind == PickleKind::String; }),
               InputError, "'{}' has {} as its list of storage keys; expected a list of strings",
               source, pickle_kind_name(keys->kind));
  std::map<std::string, std::span<const std::uint8_t>> data;
  for (const PickleValue* k : keys->items) {
    const auto d = declared.find(k->text);
    VLBIAS_CHECK(d != declared.end(), InputError,
                 "'{}' lists storage '{}', which no persistent id declares", source,
                 quoted_field(k->text));
    VLBIAS_CHECK(image.size() - pos >= 8, InputError,
                 "'{}' is truncated: storage '{}' should begin at byte {} but the file ends there",
                 source, quoted_field(k->text), pos);
    std::uint64_t count = 0;
    for (std::size_t i = 8; i-- > 0;) count = (count << 8) | image[pos + i];
    pos += 8;
    const std::size_t el = dtype_size(d->second.dtype);
    VLBIAS_CHECK(count == d->second.numel && count <= (image.size() - pos) / el, InputError,
                 "'{}' declares storage '{}' as {} elements of {} and records {} elements, but "
                 "{} bytes remain in the file; it is truncated or corrupt",
                 source, quoted_field(k->text), d->second.numel, dtype_name(d->second.dtype), count,
                 image.size() - pos);
    VLBIAS_CHECK(data.emplace(k->text, image.subspan(pos, count * el)).second, InputError,
                 "'{}' lists storage '{}' twice", source, quoted_field(k->text));
    pos += count * el;
  }
  for (const auto& [p, id] : ids) {
    const auto d = data.find(id.key);
    if (d == data.end()) continue;  // resolve() names the tensor that needs it
    StorageRef ref{id.dtype, id.key, id.numel, d->second};
    if (id.view != nullptr) {
      // A view of elements [offset, offset + size) of the storage `key`.
      const std::int64_t offset = id.view->items[1]->integer;
      const std::int64_t size = id.view->items[2]->integer;
      VLBIAS_CHECK(offset >= 0 && size >= 0 && static_cast<std::uint64_t>(offset) <= id.numel &&
                       static_cast<std::uint64_t>(size) <= id.numel - offset,
                   InputError,
                   "'{}' has a view of {} elements at offset {} of storage '{}', which holds {}",
                   source, size, offset, quoted_field(id.key), id.numel);
      const std::size_t el = dtype_size(id.dtype);
      ref.key = id.view->items[0]->text;
      ref.numel = static_cast<std::size_t>(size);
      ref.bytes = d->second.subspan(static_cast<std::size_t>(offset) * el, ref.numel * el);
    }
    storages.bound[p] = std::move(ref);
  }
  return root;
}

}  // namespace vlbias::io_internal
