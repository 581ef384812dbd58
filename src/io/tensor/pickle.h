#pragma once
// Internal to vlbias_io: a restricted unpickler for PyTorch checkpoints (torch_checkpoint.cpp).
//
// It reads the binary opcodes of pickle protocols 2 to 5 that torch.save and torch.jit.save
// write and builds a plain value tree; it never imports, calls or constructs anything. Globals
// come from an allow-list only (torch's tensor and parameter rebuild functions, the
// torch.*Storage and dtype markers, collections.OrderedDict, torch.Size, _codecs.encode, the
// torch.jit._pickle list helpers, and TorchScript classes named __torch__.* read as attribute
// trees through NEWOBJ + BUILD); any other global is an InputError naming it and the file,
// raised when the GLOBAL opcode is met. The reader is bounded: nesting depth, stack size,
// memo size, and every length checked against the bytes that remain before anything is
// allocated. Truncated or malformed input is an InputError naming the byte offset.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vlbias::io_internal {

enum class PickleKind {
  None,
  Bool,
  Int,     // fits int64: `integer`
  BigInt,  // a longer LONG1/LONG4: its little-endian two's-complement bytes in `text`
  Float,
  String,  // UTF-8 as written (BINUNICODE) or bytes of a protocol-2 str (BINSTRING)
  Bytes,
  Tuple,
  List,
  Dict,
  Global,      // an allowed global: `text` is "module.name"
  Object,      // a TorchScript object: `text` is its class, `state` what BUILD gave it
  Persistent,  // a persistent id (BINPERSID): `items[0]` is the id
  Tensor,      // _rebuild_tensor(_v2): `items` = storage (Persistent), offset, size, stride
};

struct PickleValue {
  PickleKind kind = PickleKind::None;
  bool boolean = false;
  std::int64_t integer = 0;
  double number = 0;
  std::string text;
  // Tuple/List elements; Dict keys and values alternate (k0, v0, k1, v1, ...).
  std::vector<const PickleValue*> items;
  const PickleValue* state = nullptr;  // Object: BUILD's argument; Dict: an OrderedDict's
  int depth = 1;                       // nesting depth when built (1 for a leaf)
};

// Limits of one unpickling; defaults suit any checkpoint (a state dict's pickle is small).
struct PickleLimits {
  int max_depth = 1000;              // MARK nesting and value nesting
  std::size_t max_stack = 1u << 20;  // values on the stack at once
  std::size_t max_memo = 1u << 22;   // memo entries
  // Values built in all (each costs about 130 bytes: 4M values ~ 550 MB). A state dict spends
  // about 15 per tensor, so this admits ~250,000 tensors.
  std::size_t max_values = 1u << 22;
  // Also read numpy's pickled ndarrays (pickled_array.h): the array and dtype reconstructors
  // become Object values holding their arguments, never called.
  bool numpy_arrays = false;
};

// The values of one unpickling; they refer to each other by pointer (shared references,
// also cycles a hostile file builds, cost nothing here), all freed with the arena.
class PickleArena {
 public:
  PickleValue* make(PickleKind kind);
  std::size_t size() const { return values_.size(); }
  // The i-th value made (i < size()), in the order the pickle built them.
  const PickleValue* at(std::size_t i) const { return values_[i].get(); }

 private:
  std::vector<std::unique_ptr<PickleValue>> values_;
};

// Reads one pickle from the start of `bytes` up to its STOP opcode and returns its value
// (owned by `arena`). `*consumed` receives the bytes read through STOP, so that pickles
// written back to back (the legacy torch.save format) can be read in turn. `source` names
// the file (and part) in messages. InputError for anything outside the subset above.
const PickleValue* unpickle(std::span<const std::uint8_t> bytes, const std::string& source,
                            PickleArena& arena, std::size_t* consumed = nullptr,
                            const PickleLimits& limits = {});

// What an allowed global does when called (a Global value's `integer`).
enum class PickleRole : std::int64_t {
  StorageType,       // torch.FloatStorage ...: a marker in persistent ids
  DtypeMarker,       // torch.float32 ...
  OrderedDict,       // collections.OrderedDict() -> an empty dict
  RebuildTensor,     // torch._utils._rebuild_tensor(_v2) -> a Tensor value
  RebuildParameter,  // torch._utils._rebuild_parameter(tensor, ...) -> the tensor
  TorchSize,         // torch.Size(tuple) -> the tuple
  CodecsEncode,      // _codecs.encode(text, "latin1") -> bytes (protocol 2's bytes)
  FirstArgument,     // torch.jit._pickle.build_*list, restore_type_tag -> the first argument
  TorchScriptClass,  // __torch__.*: only constructed by NEWOBJ, filled by BUILD
  NumpyCall,  // numpy's _reconstruct, _frombuffer, dtype, ndarray (PickleLimits::numpy_arrays):
              // REDUCE -> an Object named by the global, `items` = the arguments
};

// Whether `module`.`name` is on the allow-list (pickle_globals.cpp), and its role; with
// `numpy`, numpy's array reconstructors too (NumpyCall).
bool allowed_pickle_global(std::string_view module, std::string_view name, PickleRole* role,
                           bool numpy = false);

// "a tuple", "an int", ... for messages.
std::string_view pickle_kind_name(PickleKind kind);

}  // namespace vlbias::io_internal
