// .safetensors reading and writing. Fixtures come from
// tools/make_npy_fixtures.py, which lays files out as the Hugging Face writer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "io/binary_test_util.h"
#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/tensor/safetensors.h"

namespace vlbias {
namespace {
namespace in_safetensors_test {

using ::testing::HasSubstr;
using testing_binary::bits;
using testing_binary::bytes_of;
using testing_binary::expect_input_error;
using testing_binary::expect_same_floats;
using testing_binary::expected;
using testing_binary::fixture;
using testing_binary::read_bytes;
using testing_binary::TempDirTest;
using testing_binary::WarningCapture;
using testing_binary::write_bytes;

// A safetensors image: 8-byte length, the header text as given, then `data`.
std::vector<std::uint8_t> st_image(std::string_view header, std::size_t data_bytes = 0) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  out += header;
  out.append(data_bytes, '\0');
  return bytes_of(out);
}

SafetensorsFile open_image(const std::vector<std::uint8_t>& b) {
  return SafetensorsFile::from_bytes(b, "mem.safetensors");
}

// ---------------------------------------------------------------------------

TEST(SafetensorsRead, MixedFixtureMatchesExpected) {
  WarningCapture quiet;
  const auto& want = expected()["safetensors"]["st_mixed.safetensors"];
  const SafetensorsFile f = SafetensorsFile::open(fixture("st_mixed.safetensors"));
  EXPECT_EQ(f.names(), want["names"].get<std::vector<std::string>>());
  EXPECT_EQ(f.metadata(), (want["metadata"].get<std::map<std::string, std::string>>()));
  EXPECT_EQ(f.data_offset(), want["data_offset"].get<std::size_t>());
  for (const auto& [name, t] : want["tensors"].items()) {
    SCOPED_TRACE(name);
    const SafetensorsTensorInfo& info = f.info(name);
    EXPECT_EQ(info.name, name);
    EXPECT_EQ(dtype_name(info.dtype), t["dtype"].get<std::string>());
    EXPECT_EQ(info.shape, t["shape"].get<std::vector<std::size_t>>());
    EXPECT_EQ(info.begin, t["begin"].get<std::size_t>());
    EXPECT_EQ(info.end, t["end"].get<std::size_t>());
    EXPECT_EQ(info.end - info.begin, info.count * dtype_size(info.dtype));
    if (t["bits"].is_null()) continue;
    expect_same_floats(f.read_floats(name), t["bits"], name);
    if (info.shape.size() == 2) {
      const Matrix m = f.read_matrix(name);
      EXPECT_EQ(m.rows, info.shape[0]);
      EXPECT_EQ(m.cols, info.shape[1]);
      expect_same_floats(m.data, t["bits"], name + " as matrix");
    }
  }
}

TEST(SafetensorsRead, RawBytesPointIntoTheFile) {
  SafetensorsFile f = SafetensorsFile::open(fixture("st_mixed.safetensors"));
  const auto file = read_bytes(fixture("st_mixed.safetensors"));
  const SafetensorsTensorInfo& ids = f.info("ids_i64");
  EXPECT_EQ(ids.dtype, SafetensorsDtype::I64);
  EXPECT_FALSE(dtype_is_float(ids.dtype));
  const auto raw = f.bytes("ids_i64");
  ASSERT_EQ(raw.size(), 24u);
  EXPECT_EQ(std::memcmp(raw.data(), file.data() + f.data_offset() + ids.begin, 24), 0);
  std::int64_t first;
  std::memcpy(&first, f.data("ids_i64"), 8);
  EXPECT_EQ(first, 49406);
  // Pointers survive a move of the file object.
  const std::uint8_t* p = f.data("emb_f32");
  const SafetensorsFile moved = std::move(f);
  EXPECT_EQ(moved.data("emb_f32"), p);
  EXPECT_TRUE(moved.contains("cube_f32"));
  EXPECT_FALSE(moved.contains("cube"));
}

TEST(SafetensorsRead, ShapeAndDtypeRequirements) {
  const SafetensorsFile f = SafetensorsFile::open(fixture("st_mixed.safetensors"));
  expect_input_error([&] { f.read_matrix("vec_f32"); },
                     {"st_mixed.safetensors", "tensor 'vec_f32' has shape [5]", "2-D"});
  expect_input_error([&] { f.read_matrix("cube_f32"); }, {"shape [2, 2, 2]"});
  EXPECT_EQ(f.read_floats("cube_f32").size(), 8u);
  expect_input_error([&] { f.read_floats("ids_i64"); },
                     {"tensor 'ids_i64' has dtype I64", "only F64, F32, F16 and BF16"});
  const SafetensorsFile ints = SafetensorsFile::from_bytes(
      st_image(R"({"i":{"dtype":"I32","shape":[1,2],"data_offsets":[0,8]}})", 8), "ints");
  EXPECT_EQ(ints.info("i").dtype, SafetensorsDtype::I32);
  expect_input_error([&] { ints.read_matrix("i"); }, {"tensor 'i' has dtype I32"});
  const Matrix empty = f.read_matrix("empty_f32");
  EXPECT_EQ(empty.rows, 0u);
  EXPECT_EQ(empty.cols, 3u);
}

TEST(SafetensorsRead, F64NarrowingWarnsOnce) {
  WarningCapture w;
  const SafetensorsFile f = SafetensorsFile::open(fixture("st_mixed.safetensors"));
  f.read_matrix("emb_f64");
  f.read_matrix("emb_f32");
  f.read_matrix("emb_f16");
  ASSERT_EQ(w.messages.size(), 1u);
  EXPECT_THAT(w.messages[0], HasSubstr("tensor 'emb_f64'"));
  EXPECT_THAT(w.messages[0], HasSubstr("st_mixed.safetensors"));
}

TEST(SafetensorsRead, UnknownTensorNameListsSome) {
  const SafetensorsFile f = SafetensorsFile::open(fixture("st_mixed.safetensors"));
  expect_input_error([&] { f.read_matrix("emb"); },
                     {"st_mixed.safetensors' has no tensor named 'emb'",
                      "'emb_f32', 'emb_f16', 'emb_bf16', 'emb_f64', 'vec_f32' and 3 more"});
  const SafetensorsFile none = open_image(st_image("{}"));
  EXPECT_TRUE(none.names().empty());
  expect_input_error([&] { none.info("x"); }, {"no tensor named 'x'; it holds no tensors"});
}

TEST(SafetensorsRead, NonFiniteValues) {
  const SafetensorsFile f = SafetensorsFile::open(fixture("st_nonfinite.safetensors"));
  expect_input_error([&] { f.read_matrix("emb"); },
                     {"tensor 'emb' in '", "st_nonfinite.safetensors' has NaN at row 0, column 2"});
  expect_input_error([&] { f.read_floats("w"); }, {"tensor 'w'", "+inf at element 1"});
  EXPECT_TRUE(std::isnan(f.read_matrix("emb", NonFinite::Allow).at(0, 2)));
  EXPECT_TRUE(std::isinf(f.read_floats("w", NonFinite::Allow)[1]));
}

TEST(SafetensorsRead, ZeroSizeTensorsMayShareAnOffset) {
  const auto b = st_image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                          R"("z":{"dtype":"F16","shape":[0,7],"data_offsets":[4,4]},)"
                          R"("y":{"dtype":"F32","shape":[3,0],"data_offsets":[0,0]}})",
                          4);
  const SafetensorsFile f = open_image(b);
  EXPECT_EQ(f.names(), (std::vector<std::string>{"a", "z", "y"}));
  EXPECT_EQ(f.read_matrix("y").rows, 3u);
  EXPECT_TRUE(f.bytes("z").empty());
}

TEST(SafetensorsRead, MetadataMayBeNullAndExtraFieldsAreIgnored) {
  const auto b = st_image(
      R"({"__metadata__":null,"a":{"dtype":"F32","shape":[],"data_offsets":[0,4],"x":[1]}})", 4);
  const SafetensorsFile f = open_image(b);
  EXPECT_TRUE(f.metadata().empty());
  EXPECT_EQ(f.read_floats("a").size(), 1u);
}

// ---------------------------------------------------------------------------

class SafetensorsHostile : public TempDirTest {};

TEST_F(SafetensorsHostile, TooShortForTheLength) {
  expect_input_error([] { open_image(bytes_of("abc")); },
                     {"mem.safetensors' is not a safetensors file", "3 bytes long"});
  write_bytes(path("e.safetensors"), {});
  expect_input_error([&] { SafetensorsFile::open(path("e.safetensors")); },
                     {"e.safetensors' is not a safetensors file", "0 bytes long"});
  expect_input_error([&] { SafetensorsFile::open(path("missing.safetensors")); },
                     {"cannot open", "missing.safetensors"});
}

TEST_F(SafetensorsHostile, HeaderLengthOverCapOrPastEnd) {
  std::vector<std::uint8_t> b = st_image("{}");
  const std::uint64_t big = 100'000'001;
  std::memcpy(b.data(), &big, 8);
  expect_input_error([&] { open_image(b); },
                     {"declares a 100000001-byte safetensors header", "100000000-byte limit"});
  const std::uint64_t past = 100;
  std::memcpy(b.data(), &past, 8);
  expect_input_error([&] { open_image(b); },
                     {"is truncated", "header should be 100 bytes but only 2 bytes follow"});
}

TEST_F(SafetensorsHostile, InvalidJson) {
  expect_input_error([] { open_image(st_image(R"({"a": )")); },
                     {"invalid safetensors JSON header", "parse error"});
  expect_input_error([] { open_image(st_image("{\"a\xff\": 1}")); },
                     {"invalid safetensors JSON header"});
  expect_input_error([] { open_image(st_image("{} trailing")); },
                     {"invalid safetensors JSON header"});
  // Found by fuzz_safetensors: nlohmann reports this as out_of_range, not parse_error.
  expect_input_error([] { open_image(st_image(R"({"a":{"shape":[1e999]}})")); },
                     {"invalid safetensors JSON header", "number overflow"});
  const std::string deep = std::string(50, '[') + std::string(50, ']');
  expect_input_error([&] { open_image(st_image("{\"a\":" + deep + "}")); },
                     {"nested deeper than 16 levels"});
}

TEST_F(SafetensorsHostile, NotAnObject) {
  expect_input_error([] { open_image(st_image("[1, 2]")); },
                     {"has an array as its safetensors header", "expected a JSON object"});
  expect_input_error([] { open_image(st_image(R"({"a": 3})")); },
                     {"tensor 'a' has a non-negative integer as its header entry"});
  expect_input_error([] { open_image(st_image(R"({"a":{"dtype":"F32","shape":[1]}})")); },
                     {"tensor 'a' has no \"data_offsets\""});
}

TEST_F(SafetensorsHostile, DuplicateKeys) {
  expect_input_error(
      [] {
        open_image(st_image(R"({"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
                            R"("a":{"dtype":"F32","shape":[],"data_offsets":[4,8]}})",
                            8));
      },
      {"has the key 'a' twice"});
  expect_input_error(
      [] {
        open_image(st_image(R"({"a":{"dtype":"F32","dtype":"F16","shape":[],)"
                            R"("data_offsets":[0,4]}})",
                            4));
      },
      {"has the key 'dtype' twice"});
}

TEST_F(SafetensorsHostile, UnknownDtype) {
  expect_input_error(
      [] {
        open_image(st_image(R"({"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}})", 16));
      },
      {"tensor 'a' has unknown dtype 'F128'", "known dtypes are BOOL, U8"});
  expect_input_error(
      [] { open_image(st_image(R"({"a":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})", 4)); },
      {"has a non-negative integer as its dtype"});
}

TEST_F(SafetensorsHostile, BadShapes) {
  for (const char* shape : {"[2, -1]", "[2.5]", "\"2x3\"", "[[2]]"}) {
    SCOPED_TRACE(shape);
    expect_input_error(
        [&] {
          open_image(st_image(std::string(R"({"a":{"dtype":"F32","shape":)") + shape +
                              R"(,"data_offsets":[0,0]}})"));
        },
        {"tensor 'a' has an invalid shape", "non-negative integers"});
  }
  expect_input_error(
      [] {
        open_image(st_image(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,2],)"
                            R"("data_offsets":[0,0]}})"));
      },
      {"shape [4294967296, 4294967296, 2]", "overflows 64 bits"});
  expect_input_error(
      [] {
        open_image(st_image(R"({"a":{"dtype":"F64","shape":[2305843009213693952],)"
                            R"("data_offsets":[0,0]}})"));
      },
      {"overflows 64 bits"});
}

TEST_F(SafetensorsHostile, BadOffsets) {
  expect_input_error(
      [] { open_image(st_image(R"({"a":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})", 8)); },
      {"tensor 'a' has data_offsets [0, 24] past the end of the 8-byte data buffer"});
  expect_input_error(
      [] {
        open_image(st_image(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[24,8]}})", 24));
      },
      {"data_offsets [24, 8] that end before they begin"});
  expect_input_error(
      [] {
        open_image(st_image(R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 20));
      },
      {"tensor 'a' spans 20 bytes (data_offsets [0, 20]) but F32 with shape [2, 3] needs 24"});
  for (const char* offsets : {"[0]", "[0,1,2]", "[-1,4]", "[0,1e30]", "{\"b\":0}"}) {
    SCOPED_TRACE(offsets);
    expect_input_error(
        [&] {
          open_image(st_image(
              std::string(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":)") + offsets + "}}",
              4));
        },
        {"tensor 'a' has invalid data_offsets"});
  }
}

TEST_F(SafetensorsHostile, OverlapsGapsAndTrailingBytes) {
  expect_input_error(
      [] {
        open_image(st_image(R"({"a":{"dtype":"F32","shape":[6],"data_offsets":[0,24]},)"
                            R"("b":{"dtype":"F32","shape":[6],"data_offsets":[16,40]}})",
                            40));
      },
      {"tensors 'a' and 'b' overlap", "'a' ends at byte 24, 'b' begins at byte 16"});
  expect_input_error(
      [] {
        open_image(st_image(R"({"b":{"dtype":"F32","shape":[6],"data_offsets":[32,56]},)"
                            R"("a":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})",
                            56));
      },
      {"8 unused bytes after tensor 'a' (ends at byte 24) before tensor 'b'", "contiguously"});
  expect_input_error(
      [] {
        open_image(st_image(R"({"a":{"dtype":"F32","shape":[6],"data_offsets":[8,32]}})", 32));
      },
      {"8 unused bytes at the start of the data buffer before tensor 'a'"});
  expect_input_error(
      [] {
        open_image(st_image(R"({"a":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})", 32));
      },
      {"8 unused bytes at the end of its 32-byte data buffer"});
  expect_input_error([] { open_image(st_image("{}", 3)); },
                     {"3 unused bytes at the end of its 3-byte data buffer"});
}

TEST_F(SafetensorsHostile, MetadataMustBeStrings) {
  expect_input_error([] { open_image(st_image(R"({"__metadata__":{"k":1}})")); },
                     {"has a non-negative integer for __metadata__ key 'k'", "must be strings"});
  expect_input_error([] { open_image(st_image(R"({"__metadata__":["k"]})")); },
                     {"has an array as __metadata__"});
}

TEST_F(SafetensorsHostile, TruncatedFileOnDisk) {
  auto b = read_bytes(fixture("st_mixed.safetensors"));
  b.resize(b.size() - 4);
  write_bytes(path("cut.safetensors"), b);
  expect_input_error([&] { SafetensorsFile::open(path("cut.safetensors")); },
                     {"cut.safetensors': tensor 'emb_f16'", "past the end"});
}

// ---------------------------------------------------------------------------

class SafetensorsWrite : public TempDirTest {};

TEST_F(SafetensorsWrite, ByteIdenticalToHuggingFaceLayout) {
  Matrix a(2, 3);
  a.data = {1.0f, -2.0f, 0.5f, 3.0f, 4.0f, -0.0f};
  Matrix b(1, 2);
  b.data = {7.0f, 8.5f};
  write_safetensors(path("w.safetensors"), {{"a", a}, {"b", b}}, {{"format", "pt"}});
  EXPECT_EQ(read_bytes(path("w.safetensors")), read_bytes(fixture("st_written.safetensors")));
  EXPECT_TRUE(testing_util::leftover_temporaries(dir_).empty());
}

TEST_F(SafetensorsWrite, RoundTrip) {
  Rng rng(11);
  Matrix x(17, 9), y(0, 5), z(1, 1);
  for (float& v : x.data) v = static_cast<float>(rng.uniform01() - 0.5);
  z.data[0] = std::numeric_limits<float>::denorm_min();
  write_safetensors(path("r.safetensors"), {{"x", x}, {"empty", y}, {"z.weight", z}},
                    {{"k", "v"}, {"note", "h\xc3\xa9"}});
  const SafetensorsFile f = SafetensorsFile::open(path("r.safetensors"));
  EXPECT_EQ(f.names(), (std::vector<std::string>{"x", "empty", "z.weight"}));
  EXPECT_EQ(f.data_offset() % 8, 0u);
  EXPECT_EQ(f.metadata().at("note"), "h\xc3\xa9");
  const Matrix xb = f.read_matrix("x");
  ASSERT_EQ(xb.data.size(), x.data.size());
  for (std::size_t i = 0; i < x.data.size(); ++i) ASSERT_EQ(bits(xb.data[i]), bits(x.data[i]));
  EXPECT_EQ(f.read_matrix("empty").cols, 5u);
  EXPECT_EQ(bits(f.read_matrix("z.weight").at(0, 0)), bits(z.data[0]));
}

TEST_F(SafetensorsWrite, RejectsBadNames) {
  const Matrix m(1, 1);
  expect_input_error(
      [&] {
        write_safetensors(path("d.safetensors"), {{"a", m}, {"a", m}});
      },
      {"tensor name 'a' is used twice"});
  expect_input_error(
      [&] {
        write_safetensors(path("d.safetensors"), {{"__metadata__", m}});
      },
      {"empty or reserved"});
  expect_input_error(
      [&] {
        write_safetensors(path("d.safetensors"), {{"", m}});
      },
      {"empty or reserved"});
  expect_input_error(
      [&] {
        write_safetensors(path("d.safetensors"), {{"bad\xff", m}});
      },
      {"valid UTF-8"});
  EXPECT_FALSE(std::filesystem::exists(path("d.safetensors")));
  EXPECT_TRUE(testing_util::leftover_temporaries(dir_).empty());
  expect_input_error(
      [&] {
        write_safetensors(path("no/dir/d.safetensors"), {{"a", m}});
      },
      {"cannot create"});
}

}  // namespace in_safetensors_test
}  // namespace
}  // namespace vlbias
