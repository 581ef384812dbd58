// Hostile PyTorch checkpoints: every one is refused with one sentence naming the file and
// what is wrong, never run, never a crash or an unbounded allocation. The corpus is written
// by tools/make_torch_checkpoint_fixtures.py (tests/fixtures/io/torch/hostile/); the pickle
// limits and truncations are built here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/binary_test_util.h"
#include "tensor/pickle.h"
#include "tensor/zip_archive.h"
#include "vlbias/core/error.h"
#include "vlbias/io/tensor/torch_checkpoint.h"

namespace vlbias {
namespace {
namespace in_torch_hostile_test {

using testing_binary::bytes_of;
using testing_binary::expect_input_error;
using testing_binary::read_bytes;

std::filesystem::path hostile(std::string_view name) {
  return testing_binary::fixture("torch") / "hostile" / name;
}

void expect_refused(std::string_view name, std::initializer_list<std::string_view> needles) {
  SCOPED_TRACE(name);
  const std::string file = hostile(name).string();
  expect_input_error([&] { (void)TorchCheckpoint::open(file); }, needles);
  expect_input_error([&] { (void)open_weights_file(file); }, needles);
}

TEST(TorchHostile, RefusesGlobalsThatWouldRunCodeNamingTheGlobalAndTheFile) {
  const char* refused = "so it is refused and nothing is called";
  expect_refused("os_system.pth", {"os_system.pth", "'os.system'", refused});
  expect_refused("builtins_eval_legacy.pth", {"builtins_eval_legacy.pth", "'builtins.eval'"});
  expect_refused("subprocess_stack_global.pth", {"'subprocess.Popen'", refused});
  // A TorchScript archive whose code/ would call os.system: the code is never read.
  expect_refused("posix_system.pt", {"posix_system.pt (m/data.pkl)", "'posix.system'", refused});
}

TEST(TorchHostile, ChecksStoragesAndViewsAgainstTheBytesPresentBeforeAllocating) {
  expect_refused("huge_storage.pth",
                 {"storage '0' as 2147483647 elements of F32", "ZIP entry holds 8 bytes"});
  expect_refused("view_past_storage.pth",
                 {"tensor 'w'", "reaches element 53 of its storage '0', which holds 4"});
  expect_refused("legacy_short_storage.pth",
                 {"storage '0' as 6 elements of F32", "12 bytes remain", "truncated"});
  expect_refused("broadcast_bomb.pth", {"tensor 'w'", "resource limit"});
}

TEST(TorchHostile, RefusesOneStorageReadAsTwoDtypesOrSizesInEveryContainer) {
  const char* twice = "declares storage '0' twice with different types or sizes";
  expect_refused("zip_two_dtypes.pth",
                 {"zip_two_dtypes.pth", twice, "4 elements of F32, then 8 elements of F16"});
  expect_refused("zip_two_sizes.pth", {twice, "4 elements of F32, then 2 elements of F32"});
  expect_refused("constants_two_dtypes.pt",
                 {"constants_two_dtypes.pt", twice, "4 elements of F32, then 8 elements of F16"});
  expect_refused("legacy_two_dtypes.pth", {twice, "4 elements of F32, then 8 elements of F16"});
}

TEST(TorchHostile, RefusesBrokenZipArchives) {
  expect_refused("truncated.pth", {"no end-of-central-directory record", "truncated"});
  expect_refused("entry_past_eof.pth",
                 {"ZIP entry 'archive/data.pkl'", "local header offset", "does not point"});
  expect_refused("directory_loop.pth", {"central directory", "runs past its end record"});
  expect_refused("deflated.pth",
                 {"ZIP entry 'archive/data.pkl' compressed (method 8)", "re-save it"});
  expect_refused("not_a_checkpoint.pth", {"is not a PyTorch checkpoint"});
  expect_refused("duplicate_entry.pth", {"has the ZIP entry 'archive/data.pkl' twice"});
}

TEST(TorchHostile, BoundsPickleNestingAndRefusesUnsetMemoEntries) {
  expect_refused("deep_nesting.pth", {"nests more than 1000 MARKs", "resource limit"});
  expect_refused("deep_lists.pth", {"nests values more than 1000 levels", "resource limit"});
  expect_refused("memo_unset.pth", {"reads memo entry 7, which was never stored"});
  expect_refused("self_reference.pth", {"a container holds itself", "resource limit"});
  expect_refused("long_name.pth", {"name longer than 4096 bytes"});
}

// Unpickles `text` with `limits`.
void unpickle_text(std::string_view text, const io_internal::PickleLimits& limits = {}) {
  io_internal::PickleArena arena;
  (void)io_internal::unpickle(bytes_of(text), "test.pkl", arena, nullptr, limits);
}

TEST(TorchHostile, LimitsTheStackMemoAndValuesOfOnePickle) {
  using io_internal::PickleLimits;
  const std::string many_nones = "\x80\x02(" + std::string(20, 'N') + "l.";
  unpickle_text(many_nones);
  expect_input_error([&] { unpickle_text(many_nones, PickleLimits{.max_stack = 8}); },
                     {"more than 8 values on its pickle's stack"});
  expect_input_error([&] { unpickle_text(many_nones, PickleLimits{.max_values = 10}); },
                     {"more than 10 values"});
  std::string memo = "\x80\x02N";
  for (int i = 0; i < 20; ++i) memo += std::string("q") + static_cast<char>(i);
  memo += ".";
  unpickle_text(memo);
  expect_input_error([&] { unpickle_text(memo, PickleLimits{.max_memo = 4}); },
                     {"more than 4 memo entries"});
}

TEST(TorchHostile, ChecksEveryDeclaredLengthAgainstTheBytesThatRemain) {
  // BINUNICODE declaring 4 GiB - 1, BINBYTES8 declaring 2^63, LONG4 declaring 2^31.
  expect_input_error(
      [] {
        unpickle_text(
            std::string("\x80\x02X\xff\xff\xff\xff"
                        "ab",
                        9));
      },
      {"declares a 4294967295-byte string", "2 bytes remain"});
  expect_input_error(
      [] { unpickle_text(std::string("\x80\x04\x8e\x00\x00\x00\x00\x00\x00\x00\x80", 11)); },
      {"bytes object"});
  expect_input_error([] { unpickle_text(std::string("\x80\x02\x8b\x00\x00\x00\x80", 7)); },
                     {"long"});
  expect_input_error([] { unpickle_text("\x80\x02N"); }, {"truncated", "an opcode"});
  expect_input_error(
      [] {
        unpickle_text(
            "\x80\x02"
            "cos\nsys");
      },
      {"without an ending newline"});
}

TEST(TorchHostile, RefusesCallsAndObjectsOutsideTheAllowList) {
  // NEWOBJ of a non-TorchScript class, REDUCE of a storage type, BUILD on a tuple.
  expect_input_error([] { unpickle_text("\x80\x02\x63\x63ollections\nOrderedDict\n)\x81."); },
                     {"only TorchScript classes"});
  expect_input_error([] { unpickle_text("\x80\x02\x63torch\nFloatStorage\n)R."); },
                     {"'torch.FloatStorage'", "never called"});
  expect_input_error([] { unpickle_text("\x80\x02)}b."); }, {"BUILD", "a tuple"});
  expect_input_error([] { unpickle_text("\x80\x01N."); }, {"protocol 1"});
  expect_input_error([] { unpickle_text("\x80\x02\x97."); }, {"0x97"});
}

// Every strict prefix of a valid checkpoint is refused (never read past its end), and every
// single-byte corruption is either read or refused with an InputError.
TEST(TorchHostile, RefusesEveryTruncationAndSurvivesEveryByteFlip) {
  for (const char* name : {"mixed_zip.pth", "mixed_legacy.pth", "net_script.pt"}) {
    SCOPED_TRACE(name);
    const auto bytes = read_bytes(testing_binary::fixture("torch") / name);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      const std::vector<std::uint8_t> prefix(bytes.begin(), bytes.begin() + n);
      EXPECT_THROW((void)TorchCheckpoint::from_bytes(prefix, "cut.pth"), InputError) << n;
    }
    if (std::string_view(name) == "net_script.pt") continue;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      auto flipped = bytes;
      flipped[i] ^= 0xa5;
      try {
        const auto c = TorchCheckpoint::from_bytes(flipped, "flip.pth");
        for (std::size_t t = 0; t < c.tensors().size(); ++t) {
          std::vector<std::uint8_t> out(c.tensors()[t].count * dtype_size(c.tensors()[t].dtype));
          c.copy_tensor(t, out);
        }
      } catch (const InputError&) {
      }
    }
  }
}

}  // namespace in_torch_hostile_test
}  // namespace
}  // namespace vlbias
