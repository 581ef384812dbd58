#include "pickle.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/io/cell_text.h"

namespace vlbias::io_internal {

namespace {

using Role = PickleRole;

class Unpickler {
 public:
  Unpickler(std::span<const std::uint8_t> bytes, const std::string& source, PickleArena& arena,
            const PickleLimits& limits)
      : in_(bytes), source_(source), arena_(arena), limits_(limits) {}

  const PickleValue* run(std::size_t* consumed);

 private:
  // --- input ---
  std::span<const std::uint8_t> take(std::size_t n, const char* what) {
    VLBIAS_CHECK(n <= in_.size() - pos_, InputError,
                 "'{}' is truncated: its pickle needs {} bytes of {} at byte {} but only {} "
                 "remain",
                 source_, n, what, pos_, in_.size() - pos_);
    const auto out = in_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  std::uint64_t take_le(std::size_t n, const char* what) {
    const auto b = take(n, what);
    std::uint64_t v = 0;
    for (std::size_t i = n; i-- > 0;) v = (v << 8) | b[i];
    return v;
  }
  std::string_view take_line(const char* what) {
    const auto rest = in_.subspan(pos_);
    const auto nl = std::find(rest.begin(), rest.end(), std::uint8_t{'\n'});
    VLBIAS_CHECK(nl != rest.end(), InputError,
                 "'{}' is truncated: its pickle has a {} at byte {} without an ending newline",
                 source_, what, pos_);
    const std::size_t n = static_cast<std::size_t>(nl - rest.begin());
    const std::string_view line(reinterpret_cast<const char*>(rest.data()), n);
    pos_ += n + 1;
    return line;
  }
  // A length read from the file, checked against the bytes that remain before any allocation.
  std::size_t length(std::uint64_t n, const char* what) {
    VLBIAS_CHECK(n <= in_.size() - pos_, InputError,
                 "'{}' declares a {}-byte {} at byte {} of its pickle but only {} bytes remain; "
                 "the file is truncated or corrupt",
                 source_, n, what, op_pos_, in_.size() - pos_);
    return static_cast<std::size_t>(n);
  }

  // --- values ---
  PickleValue* make(PickleKind kind) {
    VLBIAS_CHECK(arena_.size() < limits_.max_values, InputError,
                 "'{}' builds more than {} values in its pickle; refused as a resource limit",
                 source_, limits_.max_values);
    return arena_.make(kind);
  }
  void push(PickleValue* v) {
    VLBIAS_CHECK(stack_.size() < limits_.max_stack, InputError,
                 "'{}' puts more than {} values on its pickle's stack (byte {}); refused as a "
                 "resource limit",
                 source_, limits_.max_stack, op_pos_);
    stack_.push_back(v);
  }
  PickleValue* pop() {
    VLBIAS_CHECK(stack_.size() > marks_base(), InputError,
                 "'{}' has a malformed pickle: opcode '{}' at byte {} needs a value but the stack "
                 "is empty",
                 source_, op_text(), op_pos_);
    PickleValue* v = stack_.back();
    stack_.pop_back();
    return v;
  }
  PickleValue* top() {
    VLBIAS_CHECK(stack_.size() > marks_base(), InputError,
                 "'{}' has a malformed pickle: opcode '{}' at byte {} needs a value but the stack "
                 "is empty",
                 source_, op_text(), op_pos_);
    return stack_.back();
  }
  std::size_t marks_base() const { return marks_.empty() ? 0 : marks_.back(); }
  // The values pushed since the last MARK, which is removed.
  std::vector<PickleValue*> pop_mark() {
    VLBIAS_CHECK(!marks_.empty(), InputError,
                 "'{}' has a malformed pickle: opcode '{}' at byte {} needs a MARK but none is "
                 "open",
                 source_, op_text(), op_pos_);
    const std::size_t base = marks_.back();
    marks_.pop_back();
    std::vector<PickleValue*> out(stack_.begin() + static_cast<std::ptrdiff_t>(base), stack_.end());
    stack_.resize(base);
    return out;
  }
  // Records that `parent` now holds `child`; refuses nesting beyond the limit.
  void nest(PickleValue* parent, const PickleValue* child) {
    parent->depth = std::max(parent->depth, child->depth + 1);
    VLBIAS_CHECK(parent->depth <= limits_.max_depth, InputError,
                 "'{}' nests values more than {} levels deep in its pickle (byte {}); refused as "
                 "a resource limit",
                 source_, limits_.max_depth, op_pos_);
  }
  PickleValue* sequence(PickleKind kind, const std::vector<PickleValue*>& items) {
    PickleValue* v = make(kind);
    v->items.reserve(items.size());
    for (PickleValue* item : items) {
      v->items.push_back(item);
      nest(v, item);
    }
    return v;
  }
  void set_items(PickleValue* dict, const std::vector<PickleValue*>& kv) {
    VLBIAS_CHECK(dict->kind == PickleKind::Dict, InputError,
                 "'{}' has a malformed pickle: '{}' at byte {} sets items on {}, not a dict",
                 source_, op_text(), op_pos_, pickle_kind_name(dict->kind));
    VLBIAS_CHECK(kv.size() % 2 == 0, InputError,
                 "'{}' has a malformed pickle: '{}' at byte {} has an odd number of keys and "
                 "values",
                 source_, op_text(), op_pos_);
    for (PickleValue* v : kv) {
      dict->items.push_back(v);
      nest(dict, v);
    }
  }
  void append_items(PickleValue* list, const std::vector<PickleValue*>& values) {
    VLBIAS_CHECK(list->kind == PickleKind::List, InputError,
                 "'{}' has a malformed pickle: '{}' at byte {} appends to {}, not a list", source_,
                 op_text(), op_pos_, pickle_kind_name(list->kind));
    for (PickleValue* v : values) {
      list->items.push_back(v);
      nest(list, v);
    }
  }
  void memo_put(std::uint64_t index) {
    VLBIAS_CHECK(memo_.size() < limits_.max_memo || memo_.count(index) != 0, InputError,
                 "'{}' stores more than {} memo entries in its pickle; refused as a resource "
                 "limit",
                 source_, limits_.max_memo);
    memo_[index] = top();
  }
  void memo_get(std::uint64_t index) {
    const auto it = memo_.find(index);
    VLBIAS_CHECK(it != memo_.end(), InputError,
                 "'{}' has a malformed pickle: opcode '{}' at byte {} reads memo entry {}, which "
                 "was never stored",
                 source_, op_text(), op_pos_, index);
    push(it->second);
  }

  std::string op_text() const { return escape_for_message(std::string_view(&op_, 1), 4); }

  PickleValue* global(std::string_view module, std::string_view name);
  PickleValue* reduce(PickleValue* callable, PickleValue* args);
  PickleValue* rebuild_tensor(const PickleValue* args);
  PickleValue* codecs_encode(const PickleValue* args);
  void build(PickleValue* target, PickleValue* state);
  PickleValue* big_int(std::span<const std::uint8_t> b);
  bool literal(char op);
  bool structure(char op);
  void calls(char op);

  std::span<const std::uint8_t> in_;
  const std::string& source_;
  PickleArena& arena_;
  const PickleLimits& limits_;
  std::size_t pos_ = 0;
  std::size_t op_pos_ = 0;
  char op_ = 0;
  std::vector<PickleValue*> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, PickleValue*> memo_;
};

PickleValue* Unpickler::global(std::string_view module, std::string_view name) {
  Role role{};
  const std::string full = fmt::format("{}.{}", module, name);
  VLBIAS_CHECK(allowed_pickle_global(module, name, &role, limits_.numpy_arrays), InputError,
               "'{}' refers to the Python global '{}' (byte {} of its pickle), which is not a "
               "tensor, storage, OrderedDict or TorchScript object, so it is refused and nothing "
               "is called",
               source_, escape_for_message(full, 120), op_pos_);
  PickleValue* g = make(PickleKind::Global);
  g->text = full;
  g->integer = static_cast<std::int64_t>(role);
  return g;
}

PickleValue* Unpickler::big_int(std::span<const std::uint8_t> b) {
  // Python's LONG: little-endian two's complement; keep it in int64 when it fits.
  PickleValue* v = make(PickleKind::Int);
  if (b.empty()) return v;
  const bool negative = (b.back() & 0x80) != 0;
  std::size_t n = b.size();
  while (n > 1 && b[n - 1] == (negative ? 0xff : 0x00) && ((b[n - 2] & 0x80) != 0) == negative) {
    --n;
  }
  if (n > 8) {
    v->kind = PickleKind::BigInt;
    v->text.assign(reinterpret_cast<const char*>(b.data()), b.size());
    return v;
  }
  std::uint64_t u = negative ? ~std::uint64_t{0} : 0;
  for (std::size_t i = n; i-- > 0;) u = (u << 8) | b[i];
  v->integer = static_cast<std::int64_t>(u);
  return v;
}

PickleValue* Unpickler::rebuild_tensor(const PickleValue* args) {
  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks
  // [, metadata]); _rebuild_tensor(storage, storage_offset, size, stride).
  const auto& a = args->items;
  const auto int_sequence = [](const PickleValue* v) {
    return (v->kind == PickleKind::Tuple || v->kind == PickleKind::List) &&
           std::all_of(v->items.begin(), v->items.end(),
                       [](const PickleValue* d) { return d->kind == PickleKind::Int; });
  };
  VLBIAS_CHECK(a.size() >= 4 && a[0]->kind == PickleKind::Persistent &&
                   a[1]->kind == PickleKind::Int && int_sequence(a[2]) && int_sequence(a[3]),
               InputError,
               "'{}' rebuilds a tensor at byte {} of its pickle from arguments that are not "
               "(storage, offset, size tuple, stride tuple, ...)",
               source_, op_pos_);
  PickleValue* t = make(PickleKind::Tensor);
  for (std::size_t i = 0; i < 4; ++i) {
    t->items.push_back(a[i]);
    nest(t, a[i]);
  }
  return t;
}

PickleValue* Unpickler::codecs_encode(const PickleValue* args) {
  const auto& a = args->items;
  VLBIAS_CHECK(a.size() == 2 && a[0]->kind == PickleKind::String &&
                   a[1]->kind == PickleKind::String &&
                   (a[1]->text == "latin1" || a[1]->text == "latin-1"),
               InputError,
               "'{}' calls _codecs.encode at byte {} of its pickle with arguments other than "
               "(text, 'latin1'), the form protocol 2 writes bytes in",
               source_, op_pos_);
  // The text is UTF-8 of code points below 256, one byte each in latin1.
  PickleValue* v = make(PickleKind::Bytes);
  const std::string& s = a[0]->text;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      v->text.push_back(static_cast<char>(c));
    } else {
      VLBIAS_CHECK((c == 0xc2 || c == 0xc3) && i + 1 < s.size(), InputError,
                   "'{}' calls _codecs.encode at byte {} of its pickle on text that is not "
                   "latin1",
                   source_, op_pos_);
      const auto next = static_cast<unsigned char>(s[++i]);
      v->text.push_back(static_cast<char>(((c & 0x03) << 6) | (next & 0x3f)));
    }
  }
  return v;
}

PickleValue* Unpickler::reduce(PickleValue* callable, PickleValue* args) {
  VLBIAS_CHECK(callable->kind == PickleKind::Global && args->kind == PickleKind::Tuple, InputError,
               "'{}' has a malformed pickle: REDUCE at byte {} calls {} with {}; only allowed "
               "globals with a tuple of arguments are read",
               source_, op_pos_, pickle_kind_name(callable->kind), pickle_kind_name(args->kind));
  const auto& a = args->items;
  switch (static_cast<Role>(callable->integer)) {
    case Role::OrderedDict:
      VLBIAS_CHECK(a.empty(), InputError,
                   "'{}' calls collections.OrderedDict with arguments at byte {} of its pickle; "
                   "only the empty form torch writes is read",
                   source_, op_pos_);
      return make(PickleKind::Dict);
    case Role::RebuildTensor:
      return rebuild_tensor(args);
    case Role::RebuildParameter:
      VLBIAS_CHECK(!a.empty() && a[0]->kind == PickleKind::Tensor, InputError,
                   "'{}' rebuilds a parameter at byte {} of its pickle from {} instead of a "
                   "tensor",
                   source_, op_pos_, a.empty() ? "nothing" : pickle_kind_name(a[0]->kind));
      return const_cast<PickleValue*>(a[0]);
    case Role::TorchSize:
      VLBIAS_CHECK(a.size() == 1 && a[0]->kind == PickleKind::Tuple, InputError,
                   "'{}' builds a torch.Size at byte {} of its pickle from something other than "
                   "a tuple",
                   source_, op_pos_);
      return const_cast<PickleValue*>(a[0]);
    case Role::CodecsEncode:
      return codecs_encode(args);
    case Role::FirstArgument:
      VLBIAS_CHECK(!a.empty(), InputError,
                   "'{}' calls {} without arguments at byte {} of its pickle", source_,
                   callable->text, op_pos_);
      return const_cast<PickleValue*>(a[0]);
    case Role::NumpyCall: {  // read as data (pickled_array.cpp interprets it), never called
      PickleValue* object = make(PickleKind::Object);
      object->text = callable->text;
      object->items = a;
      nest(object, args);
      return object;
    }
    default:
      VLBIAS_FAIL(InputError,
                  "'{}' calls '{}' at byte {} of its pickle, which is read as data only and "
                  "never called",
                  source_, escape_for_message(callable->text, 120), op_pos_);
  }
}

void Unpickler::build(PickleValue* target, PickleValue* state) {
  // BUILD sets a TorchScript object's attributes (a dict) or an OrderedDict's own attributes
  // (a state dict's _metadata); nothing else carries state in a checkpoint.
  VLBIAS_CHECK(target->kind == PickleKind::Object || target->kind == PickleKind::Dict, InputError,
               "'{}' has a malformed pickle: BUILD at byte {} gives state to {}; only "
               "TorchScript objects and OrderedDicts take state",
               source_, op_pos_, pickle_kind_name(target->kind));
  target->state = state;
  nest(target, state);
}

// Literal values: ints, floats, strings, bytes, None, booleans. False when `op` is none.
bool Unpickler::literal(char op) {
  PickleValue* v = nullptr;
  switch (op) {
    case 'N':
      v = make(PickleKind::None);
      break;
    case '\x88':
    case '\x89':
      v = make(PickleKind::Bool);
      v->boolean = op == '\x88';
      break;
    case 'K':
    case 'M':
      v = make(PickleKind::Int);
      v->integer = static_cast<std::int64_t>(take_le(op == 'K' ? 1 : 2, "an int"));
      break;
    case 'J':
      v = make(PickleKind::Int);
      v->integer = static_cast<std::int32_t>(static_cast<std::uint32_t>(take_le(4, "an int")));
      break;
    case '\x8a':
    case '\x8b': {
      const std::size_t n = length(take_le(op == '\x8a' ? 1 : 4, "a long's length"), "long");
      v = big_int(take(n, "a long"));
      break;
    }
    case 'G': {
      // BINFLOAT is big-endian.
      std::uint64_t bits = 0;
      for (const std::uint8_t b : take(8, "a float")) bits = (bits << 8) | b;
      v = make(PickleKind::Float);
      v->number = std::bit_cast<double>(bits);
      break;
    }
    case 'X':
    case '\x8c':
    case '\x8d':
    case 'T':
    case 'U': {
      const std::size_t width = op == '\x8c' || op == 'U' ? 1 : op == '\x8d' ? 8 : 4;
      const std::size_t n = length(take_le(width, "a string's length"), "string");
      const auto b = take(n, "a string");
      v = make(PickleKind::String);
      v->text.assign(reinterpret_cast<const char*>(b.data()), n);
      break;
    }
    case 'B':
    case 'C':
    case '\x8e':
    case '\x96': {
      const std::size_t width = op == 'C' ? 1 : op == 'B' ? 4 : 8;
      const std::size_t n = length(take_le(width, "a bytes length"), "bytes object");
      const auto b = take(n, "bytes");
      v = make(PickleKind::Bytes);
      v->text.assign(reinterpret_cast<const char*>(b.data()), n);
      break;
    }
    default:
      return false;
  }
  push(v);
  return true;
}

// Containers, marks, the memo, globals and calls. False at STOP.
bool Unpickler::structure(char op) {
  switch (op) {
    case '.':
      return false;
    case '\x95':  // FRAME: a length hint; the frame's opcodes follow inline.
      (void)length(take_le(8, "a frame length"), "frame");
      break;
    case '(':
      VLBIAS_CHECK(marks_.size() < static_cast<std::size_t>(limits_.max_depth), InputError,
                   "'{}' nests more than {} MARKs in its pickle (byte {}); refused as a resource "
                   "limit",
                   source_, limits_.max_depth, op_pos_);
      marks_.push_back(stack_.size());
      break;
    case '0':
      (void)pop();
      break;
    case '1':
      (void)pop_mark();
      break;
    case '2':
      push(top());
      break;
    case ')':
      push(make(PickleKind::Tuple));
      break;
    case ']':
      push(make(PickleKind::List));
      break;
    case '}':
      push(make(PickleKind::Dict));
      break;
    case 't':
      push(sequence(PickleKind::Tuple, pop_mark()));
      break;
    case 'l':
      push(sequence(PickleKind::List, pop_mark()));
      break;
    case '\x85':
    case '\x86':
    case '\x87': {
      std::vector<PickleValue*> items(static_cast<std::size_t>(op - '\x85' + 1));
      for (std::size_t i = items.size(); i-- > 0;) items[i] = pop();
      push(sequence(PickleKind::Tuple, items));
      break;
    }
    case 'd': {
      PickleValue* d = make(PickleKind::Dict);
      set_items(d, pop_mark());
      push(d);
      break;
    }
    case 's': {
      PickleValue* value = pop();
      PickleValue* key = pop();
      set_items(top(), {key, value});
      break;
    }
    case 'u': {
      const auto kv = pop_mark();
      set_items(top(), kv);
      break;
    }
    case 'a': {
      PickleValue* value = pop();
      append_items(top(), {value});
      break;
    }
    case 'e': {
      const auto values = pop_mark();
      append_items(top(), values);
      break;
    }
    case 'q':
      memo_put(take_le(1, "a memo index"));
      break;
    case 'r':
      memo_put(take_le(4, "a memo index"));
      break;
    case '\x94':
      memo_put(memo_.size());
      break;
    case 'h':
      memo_get(take_le(1, "a memo index"));
      break;
    case 'j':
      memo_get(take_le(4, "a memo index"));
      break;
    default:
      calls(op);
  }
  return true;
}

// Globals, calls, object construction and persistent ids; any other opcode is refused.
void Unpickler::calls(char op) {
  switch (op) {
    case 'c': {
      const std::string module(take_line("GLOBAL module"));
      const std::string name(take_line("GLOBAL name"));
      push(global(module, name));
      break;
    }
    case '\x93': {
      PickleValue* name = pop();
      PickleValue* module = pop();
      VLBIAS_CHECK(module->kind == PickleKind::String && name->kind == PickleKind::String,
                   InputError,
                   "'{}' has a malformed pickle: STACK_GLOBAL at byte {} needs two strings",
                   source_, op_pos_);
      push(global(module->text, name->text));
      break;
    }
    case 'R': {
      PickleValue* args = pop();
      PickleValue* callable = pop();
      push(reduce(callable, args));
      break;
    }
    case '\x81':
    case '\x92': {
      if (op == '\x92') (void)pop();  // NEWOBJ_EX's keyword arguments
      (void)pop();                    // the arguments: TorchScript objects take none
      PickleValue* cls = pop();
      VLBIAS_CHECK(cls->kind == PickleKind::Global &&
                       static_cast<Role>(cls->integer) == Role::TorchScriptClass,
                   InputError,
                   "'{}' constructs {} '{}' at byte {} of its pickle; only TorchScript classes "
                   "(__torch__.*) are read as objects",
                   source_, pickle_kind_name(cls->kind), escape_for_message(cls->text, 120),
                   op_pos_);
      PickleValue* object = make(PickleKind::Object);
      object->text = cls->text;
      push(object);
      break;
    }
    case 'b': {
      PickleValue* state = pop();
      build(top(), state);
      break;
    }
    case 'Q':
    case 'P': {
      PickleValue* id = nullptr;
      if (op == 'Q') {
        id = pop();
      } else {
        id = make(PickleKind::String);
        id->text = std::string(take_line("PERSID"));
      }
      PickleValue* p = make(PickleKind::Persistent);
      p->items.push_back(id);
      nest(p, id);
      push(p);
      break;
    }
    default:
      VLBIAS_FAIL(InputError,
                  "'{}' has pickle opcode '{}' (0x{:02x}) at byte {}, which a PyTorch "
                  "checkpoint does not use; the file is corrupt or not a checkpoint",
                  source_, op_text(), static_cast<unsigned char>(op), op_pos_);
  }
}

const PickleValue* Unpickler::run(std::size_t* consumed) {
  for (;;) {
    op_pos_ = pos_;
    op_ = static_cast<char>(take(1, "an opcode")[0]);
    if (op_ == '\x80') {
      const auto protocol = take_le(1, "the protocol");
      VLBIAS_CHECK(protocol >= 2 && protocol <= 5, InputError,
                   "'{}' is pickled with protocol {}; PyTorch checkpoints use protocols 2 to 5",
                   source_, protocol);
      continue;
    }
    if (literal(op_)) continue;
    if (!structure(op_)) break;
  }
  VLBIAS_CHECK(stack_.size() == 1 && marks_.empty(), InputError,
               "'{}' has a malformed pickle: at its STOP (byte {}) {} values and {} MARKs remain "
               "instead of one value",
               source_, op_pos_, stack_.size(), marks_.size());
  if (consumed != nullptr) *consumed = pos_;
  return stack_.back();
}
}  // namespace

PickleValue* PickleArena::make(PickleKind kind) {
  values_.push_back(std::make_unique<PickleValue>());
  values_.back()->kind = kind;
  return values_.back().get();
}

const PickleValue* unpickle(std::span<const std::uint8_t> bytes, const std::string& source,
                            PickleArena& arena, std::size_t* consumed, const PickleLimits& limits) {
  return Unpickler(bytes, source, arena, limits).run(consumed);
}

}  // namespace vlbias::io_internal
