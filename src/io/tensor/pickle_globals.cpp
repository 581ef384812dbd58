#include <algorithm>
#include <array>
#include <optional>
#include <span>

#include "pickle.h"

namespace vlbias::io_internal {

namespace {

constexpr std::array<std::string_view, 16> kPickleStorageTypes = {
    "FloatStorage",         "DoubleStorage", "HalfStorage",    "BFloat16Storage",
    "LongStorage",          "IntStorage",    "ShortStorage",   "CharStorage",
    "ByteStorage",          "BoolStorage",   "UntypedStorage", "ComplexFloatStorage",
    "ComplexDoubleStorage", "QInt8Storage",  "QUInt8Storage",  "QInt32Storage"};

// torch.float32 ... pickle as these globals.
constexpr std::array<std::string_view, 16> kPickleDtypes = {
    "float32", "float", "float64", "double", "float16", "half", "bfloat16", "int64",
    "long",    "int32", "int",     "int16",  "short",   "int8", "uint8",    "bool"};

// TorchScript's list and type-tag helpers: each returns its first argument.
constexpr std::array<std::string_view, 6> kJitHelpers = {"build_intlist",     "build_doublelist",
                                                         "build_boollist",    "build_tensorlist",
                                                         "build_genericlist", "restore_type_tag"};

bool listed(std::span<const std::string_view> list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

bool allowed_pickle_global(std::string_view module, std::string_view name, PickleRole* role,
                           bool numpy) {
  using enum PickleRole;
  std::optional<PickleRole> found;
  if (module == "torch") {
    if (listed(kPickleStorageTypes, name)) found = StorageType;
    if (listed(kPickleDtypes, name)) found = DtypeMarker;
    if (name == "Size") found = TorchSize;
  } else if (module == "collections" && name == "OrderedDict") {
    found = OrderedDict;
  } else if (module == "torch._utils") {
    if (name == "_rebuild_tensor" || name == "_rebuild_tensor_v2") found = RebuildTensor;
    if (name == "_rebuild_parameter" || name == "_rebuild_parameter_with_state")
      found = RebuildParameter;
  } else if (module == "_codecs" && name == "encode") {
    found = CodecsEncode;
  } else if (module == "torch.jit._pickle") {
    if (listed(kJitHelpers, name)) found = FirstArgument;
  } else if (module == "__torch__" || module.starts_with("__torch__.")) {
    found = TorchScriptClass;
  } else if (numpy) {
    // numpy 1.x names its core "numpy.core", numpy 2 "numpy._core".
    const bool multiarray = module == "numpy.core.multiarray" || module == "numpy._core.multiarray";
    const bool numeric = module == "numpy.core.numeric" || module == "numpy._core.numeric";
    if ((multiarray && name == "_reconstruct") || (numeric && name == "_frombuffer") ||
        (module == "numpy" && (name == "ndarray" || name == "dtype"))) {
      found = NumpyCall;
    }
  }
  if (found) *role = *found;
  return found.has_value();
}

std::string_view pickle_kind_name(PickleKind kind) {
  switch (kind) {
    case PickleKind::None:
      return "None";
    case PickleKind::Bool:
      return "a bool";
    case PickleKind::Int:
    case PickleKind::BigInt:
      return "an int";
    case PickleKind::Float:
      return "a float";
    case PickleKind::String:
      return "a string";
    case PickleKind::Bytes:
      return "bytes";
    case PickleKind::Tuple:
      return "a tuple";
    case PickleKind::List:
      return "a list";
    case PickleKind::Dict:
      return "a dict";
    case PickleKind::Global:
      return "a global";
    case PickleKind::Object:
      return "an object";
    case PickleKind::Persistent:
      return "a persistent id";
    case PickleKind::Tensor:
      return "a tensor";
  }
  return "a value";
}

}  // namespace vlbias::io_internal
