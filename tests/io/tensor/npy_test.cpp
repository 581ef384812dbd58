// .npy reading and writing, memory mapping, half-precision conversion and
// finite checks. Fixtures come from tools/make_npy_fixtures.py (numpy 1.24).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "io/binary_test_util.h"
#include "tensor/float_decode.h"
#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/finite.h"
#include "vlbias/io/mapped_file.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_npy_test {

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

// A .npy image with the given header text (not padded) and data bytes.
std::vector<std::uint8_t> npy_image(std::string_view header, std::string_view data = "",
                                    int major = 1) {
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  const std::size_t n = header.size();
  const int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += header;
  out += data;
  return bytes_of(out);
}

std::string f32_bytes(std::initializer_list<float> values) {
  std::string s;
  for (float v : values) s.append(reinterpret_cast<const char*>(&v), 4);
  return s;
}

const std::string kDict2x3 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";

NpyArray parse(const std::vector<std::uint8_t>& b, NonFinite nf = NonFinite::Reject) {
  return parse_npy(b, "mem.npy", nf);
}

// ---------------------------------------------------------------------------

TEST(NpyRead, EveryFixtureMatchesNumpy) {
  WarningCapture quiet;
  const auto& all = expected()["npy"];
  ASSERT_GE(all.size(), 14u);
  for (const auto& [name, want] : all.items()) {
    SCOPED_TRACE(name);
    const NpyArray a = read_npy(fixture(name), NonFinite::Allow);
    EXPECT_EQ(a.shape(), want["shape"].get<std::vector<std::size_t>>());
    expect_same_floats(a.data, want["bits"], name);
  }
}

TEST(NpyRead, MatrixFromFloat32) {
  const Matrix m = read_npy_matrix(fixture("npy_f4_2x3.npy"));
  ASSERT_EQ(m.rows, 2u);
  ASSERT_EQ(m.cols, 3u);
  EXPECT_EQ(m.at(0, 1), -1.25f);
  EXPECT_EQ(m.at(1, 1), 2.5e10f);
  EXPECT_TRUE(std::signbit(m.at(1, 2)));
}

TEST(NpyRead, FortranOrderBecomesRowMajor) {
  const Matrix m = read_npy_matrix(fixture("npy_fortran_f4_3x2.npy"));
  ASSERT_EQ(m.rows, 3u);
  ASSERT_EQ(m.cols, 2u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(m.data[i], static_cast<float>(i));
}

TEST(NpyRead, VersionsAndByteOrdersAgree) {
  const Matrix ref = read_npy_matrix(fixture("npy_f4_2x3.npy"));
  for (const char* name : {"npy_v2_f4_2x3.npy", "npy_v3_f4_2x3.npy", "npy_be_f4_2x3.npy"}) {
    SCOPED_TRACE(name);
    const Matrix m = read_npy_matrix(fixture(name));
    EXPECT_EQ(m.rows, 2u);
    EXPECT_EQ(m.data.size(), ref.data.size());
    for (std::size_t i = 0; i < ref.data.size(); ++i) EXPECT_EQ(bits(m.data[i]), bits(ref.data[i]));
  }
  EXPECT_EQ(read_npy_header(fixture("npy_v2_f4_2x3.npy")).major_version, 2);
  EXPECT_EQ(read_npy_header(fixture("npy_v3_f4_2x3.npy")).major_version, 3);
  EXPECT_TRUE(read_npy_header(fixture("npy_be_f4_2x3.npy")).big_endian);
}

TEST(NpyRead, HeaderOnly) {
  const NpyHeader h = read_npy_header(fixture("npy_f2_3x4.npy"));
  EXPECT_EQ(h.descr, "<f2");
  EXPECT_EQ(h.itemsize, 2u);
  EXPECT_EQ(h.shape, (std::vector<std::size_t>{3, 4}));
  EXPECT_EQ(h.count, 12u);
  EXPECT_EQ(h.data_offset, 128u);
  EXPECT_EQ(h.data_bytes, 24u);
  EXPECT_FALSE(h.fortran_order);
}

TEST(NpyRead, Float64NarrowingWarnsOnceNamingTheFile) {
  WarningCapture w;
  const Matrix m = read_npy_matrix(fixture("npy_f8_2x2.npy"));
  EXPECT_EQ(m.at(0, 0), static_cast<float>(1.0 / 3.0));
  ASSERT_EQ(w.messages.size(), 1u);
  EXPECT_THAT(w.messages[0], HasSubstr("npy_f8_2x2.npy"));
  EXPECT_THAT(w.messages[0], HasSubstr("float64"));
  read_npy_matrix(fixture("npy_f4_2x3.npy"));
  read_npy_matrix(fixture("npy_f2_3x4.npy"));
  EXPECT_EQ(w.messages.size(), 1u);
}

TEST(NpyRead, Float64OverflowIsAnErrorEvenWhenNonFiniteAllowed) {
  WarningCapture quiet;
  for (NonFinite nf : {NonFinite::Reject, NonFinite::Allow}) {
    expect_input_error(
        [&] { read_npy_matrix(fixture("npy_overflow_f8_1x2.npy"), nf); },
        {"npy_overflow_f8_1x2.npy", "1e+300", "row 0, column 1", "outside the float32 range"});
  }
}

TEST(NpyRead, NanNamesRowAndColumn) {
  expect_input_error([] { read_npy_matrix(fixture("npy_nan_f4_2x3.npy")); },
                     {"npy_nan_f4_2x3.npy", "NaN at row 1, column 2"});
  const Matrix m = read_npy_matrix(fixture("npy_nan_f4_2x3.npy"), NonFinite::Allow);
  EXPECT_TRUE(std::isnan(m.at(1, 2)));
  expect_input_error([] { read_npy_matrix(fixture("npy_inf_f2_2x2.npy")); },
                     {"npy_inf_f2_2x2.npy", "+inf at row 0, column 1"});
}

TEST(NpyRead, NanInFortranOrderIsReportedAtItsRowMajorPosition) {
  // Column-major (2, 3): file order is (0,0) (1,0) (0,1) (1,1) (0,2) (1,2).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto b = npy_image("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}",
                           f32_bytes({1, 2, 3, nan, 5, -std::numeric_limits<float>::infinity()}));
  expect_input_error([&] { parse(b); }, {"mem.npy", "NaN at row 1, column 1"});
  const NpyArray a = parse(b, NonFinite::Allow);
  EXPECT_EQ(a.data[1], 3.0f);
  EXPECT_EQ(a.data[3], 2.0f);
}

TEST(NpyRead, MatrixNeedsTwoDimensions) {
  expect_input_error([] { read_npy_matrix(fixture("npy_vec_f4_5.npy")); },
                     {"npy_vec_f4_5.npy", "1-D array of shape (5,)", "reshape(1, -1)"});
  expect_input_error([] { read_npy_matrix(fixture("npy_f4_2x2x2.npy")); },
                     {"3-D array of shape (2, 2, 2)", "reshape it to (items, dim)"});
  expect_input_error([] { read_npy_matrix(fixture("npy_scalar_f4.npy")); },
                     {"0-D array of shape ()"});
}

TEST(NpyRead, Vector) {
  const std::vector<float> v = read_npy_vector(fixture("npy_vec_f4_5.npy"));
  EXPECT_EQ(v, (std::vector<float>{1.0f, 2.0f, -3.5f, 0.0f, 7.25f}));
  expect_input_error([] { read_npy_vector(fixture("npy_f4_2x3.npy")); },
                     {"2-D array of shape (2, 3)", "expected a 1-D array"});
}

TEST(NpyRead, ZeroRowsAreAValidMatrix) {
  const Matrix m = read_npy_matrix(fixture("npy_f4_0x4.npy"));
  EXPECT_EQ(m.rows, 0u);
  EXPECT_EQ(m.cols, 4u);
  EXPECT_TRUE(m.data.empty());
}

TEST(NpyRead, RefusedDtypesSayWhatIsAccepted) {
  expect_input_error([] { read_npy_matrix(fixture("npy_i8_2x2.npy")); },
                     {"npy_i8_2x2.npy", "'<i8' (8-byte signed integer)", "'<f4' (float32)"});
  expect_input_error([] { read_npy_vector(fixture("npy_bool_3.npy")); },
                     {"'|b1' (boolean)", "float arrays only"});
  expect_input_error([] { read_npy_vector(fixture("npy_struct_2.npy")); }, {"structured dtype"});
  expect_input_error(
      [] { parse(npy_image("{'descr': '|O', 'fortran_order': False, 'shape': ()}", "")); },
      {"'|O' (Python objects (pickled))"});
  expect_input_error(
      [] {
        parse(
            npy_image("{'descr': '<f16', 'fortran_order': False, "
                      "'shape': ()}"));
      },
      {"'<f16' (16-byte float"});
  expect_input_error(
      [] {
        parse(
            npy_image("{'descr': '<M8[ns]', 'fortran_order': False, "
                      "'shape': ()}"));
      },
      {"'<M8[ns]' (datetime64)"});
}

TEST(NpyRead, TolerantHeaderSyntax) {
  const std::string data = f32_bytes({1, 2, 3, 4, 5, 6});
  for (const char* header : {
           "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",
           "{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(2,3)}",
           "  {  'descr' : '<f4' ,\t'fortran_order' :False , 'shape' : ( 2 , 3 , ) , }  \n",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }\n",
           "{'descr': '|f4', 'fortran_order': False, 'shape': (2, 3)}",
           "{'descr': 'f4', 'fortran_order': False, 'shape': (2, 3)}",
       }) {
    SCOPED_TRACE(header);
    const NpyArray a = parse(npy_image(header, data));
    EXPECT_EQ(a.shape(), (std::vector<std::size_t>{2, 3}));
    EXPECT_EQ(a.data[5], 6.0f);
  }
  const NpyArray one =
      parse(npy_image("{'descr':'<f4','fortran_order':False,'shape':(1,)}", f32_bytes({9})));
  EXPECT_EQ(one.shape(), (std::vector<std::size_t>{1}));
  const NpyArray scalar =
      parse(npy_image("{'descr':'<f4','fortran_order':False,'shape':()}", f32_bytes({9})));
  EXPECT_TRUE(scalar.shape().empty());
  EXPECT_EQ(scalar.data, (std::vector<float>{9}));
}

// ---------------------------------------------------------------------------

class NpyHostile : public TempDirTest {};

TEST_F(NpyHostile, EmptyFile) {
  write_bytes(path("empty.npy"), {});
  expect_input_error([&] { read_npy_matrix(path("empty.npy")); },
                     {"empty.npy' is empty", "expected a .npy file"});
}

TEST_F(NpyHostile, MissingFileAndDirectory) {
  expect_input_error([&] { read_npy_matrix(path("missing.npy")); },
                     {"cannot open", "missing.npy", "No such file"});
  expect_input_error([&] { read_npy_matrix(dir_); }, {"is a folder"});
}

TEST_F(NpyHostile, BadMagic) {
  expect_input_error([] { parse(bytes_of("hello world, not numpy")); },
                     {"mem.npy' is not a .npy file", "\\x93NUMPY"});
  expect_input_error([] { parse(bytes_of("PK\x03\x04 rest of zip")); }, {"zip archive (.npz?)"});
  expect_input_error([] { parse(bytes_of("\x93NUM")); }, {"is not a .npy file"});
}

TEST_F(NpyHostile, TruncatedPreamble) {
  expect_input_error([] { parse(bytes_of("\x93NUMPY\x01")); }, {"ends inside the .npy preamble"});
  expect_input_error([] { parse(bytes_of(std::string("\x93NUMPY\x01\x00\x10", 9))); },
                     {"ends inside the .npy header length"});
  expect_input_error([] { parse(bytes_of(std::string("\x93NUMPY\x02\x00\x10\x00\x00", 11))); },
                     {"ends inside the .npy header length"});
}

TEST_F(NpyHostile, UnknownVersion) {
  expect_input_error([] { parse(npy_image(kDict2x3, "", 4)); },
                     {"version 4.0", "reads versions 1.0, 2.0 and 3.0"});
  auto b = npy_image(kDict2x3);
  b[7] = 1;
  expect_input_error([&] { parse(b); }, {"version 1.1"});
}

TEST_F(NpyHostile, HeaderLengthPastEndOfFile) {
  auto b = npy_image(kDict2x3);
  b[8] = 0xf4;
  b[9] = 0x01;  // 500 bytes
  expect_input_error([&] { parse(b); },
                     {"is truncated", "header should be 500 bytes but only 60 bytes follow"});
}

TEST_F(NpyHostile, HeaderLengthOverTheCap) {
  std::string b("\x93NUMPY\x02\x00\x00\x00\x00\x40", 12);  // 1 GiB header
  b += kDict2x3;
  expect_input_error([&] { parse(bytes_of(b)); },
                     {"declares a 1073741824-byte .npy header", "1048576-byte limit"});
}

TEST_F(NpyHostile, HeaderNotADict) {
  expect_input_error([] { parse(npy_image("[('descr', '<f4')]")); },
                     {"malformed .npy header", "expected a dict", "got a list"});
  expect_input_error([] { parse(npy_image("")); },
                     {"expected a value at character 0 but found the end of the header"});
  expect_input_error([] { parse(npy_image("{'descr': '<f4'} junk")); },
                     {"expected the end of the header", "found 'j'"});
  expect_input_error([] { parse(npy_image("{1: '<f4'}")); },
                     {"dictionary keys must be strings, found an integer"});
  expect_input_error([] { parse(npy_image("{'descr': '<f4")); }, {"a closing ' quote"});
  expect_input_error([] { parse(npy_image("{'descr' '<f4'}")); }, {"expected ':'"});
  expect_input_error([] { parse(npy_image("{'a': Truth}")); }, {"expected a string, number, True"});
  expect_input_error([] { parse(npy_image("{'a': 1.5}")); }, {"an integer (digits only)"});
}

TEST_F(NpyHostile, MissingExtraAndRepeatedKeys) {
  expect_input_error([] { parse(npy_image("{'descr': '<f4', 'shape': (2, 3)}")); },
                     {"no 'fortran_order' key"});
  expect_input_error(
      [] {
        parse(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
                        f32_bytes({1})));
      },
      {"unexpected key 'extra'"});
  expect_input_error(
      [] {
        parse(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'shape': (1,)}",
                        f32_bytes({1})));
      },
      {"repeats the key 'shape'"});
}

TEST_F(NpyHostile, BadValues) {
  expect_input_error(
      [] { parse(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}")); },
      {"malformed .npy header", "expected a string, number", "found 'x'"});
  expect_input_error(
      [] { parse(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}")); },
      {"'shape' must be a tuple", "got a list"});
  expect_input_error(
      [] { parse(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (3)}")); },
      {"'shape' must be a tuple", "got 3"});
  expect_input_error(
      [] { parse(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}")); },
      {"non-negative integers, got -3"});
  expect_input_error(
      [] { parse(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': ('2',)}")); },
      {"non-negative integers, got '2'"});
  expect_input_error(
      [] { parse(npy_image("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}")); },
      {"'fortran_order' must be True or False, got 0"});
  expect_input_error(
      [] { parse(npy_image("{'descr': 4, 'fortran_order': False, 'shape': (2,)}")); },
      {"'descr' must be a dtype string", "got 4"});
}

TEST_F(NpyHostile, HugeShapes) {
  expect_input_error(
      [] {
        parse(npy_image(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4)}"));
      },
      {"(4611686018427387904, 4)", "overflows 64 bits"});
  expect_input_error(
      [] {
        parse(
            npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(99999999999999999999999,)}"));
      },
      {"a number beyond 64 bits"});
  // A zero dimension makes the array empty whatever the others are, but the
  // others still may not overflow.
  expect_input_error(
      [] {
        parse(
            npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(0, 4294967296, 4294967296)}"));
      },
      {"overflows 64 bits"});
  const NpyArray a =
      parse(npy_image("{'descr': '<f4', 'fortran_order': True, 'shape': (0, 4294967296)}"));
  EXPECT_EQ(a.header.count, 0u);
}

TEST_F(NpyHostile, DeepNesting) {
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  expect_input_error([&] { parse(npy_image("{'descr': " + deep + "}")); },
                     {"at most 32 levels of nesting"});
}

TEST_F(NpyHostile, TruncatedAndTrailingData) {
  expect_input_error([] { parse(npy_image(kDict2x3, std::string(20, '\0'))); },
                     {"is truncated", "shape (2, 3) of '<f4' needs 24 data bytes but only 20"});
  expect_input_error([] { parse(npy_image(kDict2x3, std::string(28, '\0'))); },
                     {"4 unexpected bytes after the 24 data bytes"});
  // The same through a file on disk.
  auto b = read_bytes(fixture("npy_f2_3x4.npy"));
  b.resize(b.size() - 3);
  write_bytes(path("cut.npy"), b);
  expect_input_error([&] { read_npy_matrix(path("cut.npy")); },
                     {"cut.npy' is truncated", "needs 24 data bytes but only 21"});
}

TEST_F(NpyHostile, MessagesEscapeBinaryHeaderBytes) {
  try {
    parse(npy_image(std::string("{'descr': '\x01\xff", 13) + "', 'fortran_order': False, "
                                                             "'shape': ()}"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'\\x01\\xff'"));
  }
}

// ---------------------------------------------------------------------------

class NpyWrite : public TempDirTest {};

TEST_F(NpyWrite, RoundTripIsBitExact) {
  Rng rng(7);
  Matrix m(37, 19);
  for (float& v : m.data) v = static_cast<float>(rng.uniform01() * 2e6 - 1e6);
  m.at(0, 0) = -0.0f;
  m.at(1, 1) = std::numeric_limits<float>::denorm_min();
  m.at(2, 2) = std::numeric_limits<float>::max();
  write_npy(path("m.npy"), m);
  EXPECT_TRUE(testing_util::leftover_temporaries(dir_).empty());
  const Matrix back = read_npy_matrix(path("m.npy"));
  ASSERT_EQ(back.rows, m.rows);
  ASSERT_EQ(back.cols, m.cols);
  for (std::size_t i = 0; i < m.data.size(); ++i) ASSERT_EQ(bits(back.data[i]), bits(m.data[i]));
}

TEST_F(NpyWrite, ByteIdenticalToNumpy) {
  write_npy(path("a.npy"), read_npy_matrix(fixture("npy_f4_2x3.npy")));
  EXPECT_EQ(read_bytes(path("a.npy")), read_bytes(fixture("npy_f4_2x3.npy")));
  write_npy(path("z.npy"), read_npy_matrix(fixture("npy_f4_0x4.npy")));
  EXPECT_EQ(read_bytes(path("z.npy")), read_bytes(fixture("npy_f4_0x4.npy")));
  write_npy_vector(path("v.npy"), read_npy_vector(fixture("npy_vec_f4_5.npy")));
  EXPECT_EQ(read_bytes(path("v.npy")), read_bytes(fixture("npy_vec_f4_5.npy")));
}

TEST_F(NpyWrite, HeaderIsPaddedTo64Bytes) {
  for (const std::vector<std::size_t>& shape :
       {std::vector<std::size_t>{},
        {0},
        {1, 1},
        {123456789, 512},
        {std::numeric_limits<std::size_t>::max(), std::numeric_limits<std::size_t>::max()}}) {
    const std::string h = npy_float32_header(shape);
    EXPECT_EQ(h.size() % 64, 0u);
    EXPECT_EQ(h.back(), '\n');
    if (shape.size() == 2 && shape[0] > 1000) continue;  // too big to attach data
    std::size_t count = 1;
    for (std::size_t d : shape) count *= d;
    const std::string image = h + std::string(count * 4, '\0');
    const NpyHeader parsed = parse_npy_header(bytes_of(image), "h.npy");
    EXPECT_EQ(parsed.shape, shape);
    EXPECT_EQ(parsed.data_offset, h.size());
  }
}

TEST_F(NpyWrite, ReplacesExistingFileAndFailsCleanly) {
  write_npy(path("m.npy"), Matrix(2, 2));
  write_npy(path("m.npy"), Matrix(3, 1));
  EXPECT_EQ(read_npy_matrix(path("m.npy")).rows, 3u);
  expect_input_error([&] { write_npy(path("no/such/dir/m.npy"), Matrix(1, 1)); },
                     {"cannot write", "no/such/dir/m.npy", "No such file"});
}

// ---------------------------------------------------------------------------

class MappedFileTest : public TempDirTest {};

TEST_F(MappedFileTest, MapsContentAndMoves) {
  write_bytes(path("f.bin"), bytes_of("abcdef"));
  MappedFile a(path("f.bin"), MapAccess::Sequential);
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(std::memcmp(a.data(), "abcdef", 6), 0);
  const std::uint8_t* p = a.data();
  MappedFile b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(a.size(), 0u);
  MappedFile c;
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.path(), path("f.bin"));
}

TEST_F(MappedFileTest, EmptyFileHasNoMapping) {
  write_bytes(path("e.bin"), {});
  const MappedFile f(path("e.bin"));
  EXPECT_EQ(f.size(), 0u);
  EXPECT_EQ(f.data(), nullptr);
  EXPECT_TRUE(f.bytes().empty());
}

TEST_F(MappedFileTest, Errors) {
  expect_input_error([&] { MappedFile f(path("nope")); }, {"cannot open", "nope"});
  expect_input_error([&] { MappedFile f(dir_); }, {"is a folder"});
  expect_input_error([&] { MappedFile f("/dev/null"); }, {"not a regular file"});
}

// ---------------------------------------------------------------------------

// Independent reference: the binary16 value from its definition.
float half_reference(std::uint16_t h) {
  const int sign = h >> 15;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  double v;
  if (exp == 0x1f) {
    v = mant == 0 ? std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), -24);
  } else {
    v = std::ldexp(static_cast<double>(1024 + mant), exp - 25);
  }
  return static_cast<float>(sign ? -v : v);
}

TEST(HalfFloat, ExhaustiveAgainstDefinition) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const float got = io_internal::half_to_float(static_cast<std::uint16_t>(h));
    const float want = half_reference(static_cast<std::uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << h;
      // Payload kept, sign kept.
      ASSERT_EQ(bits(got), ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13)) << h;
    } else {
      ASSERT_EQ(bits(got), bits(want)) << h;
    }
  }
  EXPECT_EQ(io_internal::half_to_float(0x0001), 0x1p-24f);
  EXPECT_EQ(io_internal::half_to_float(0x7bff), 65504.0f);
  EXPECT_TRUE(std::signbit(io_internal::half_to_float(0x8000)));
}

TEST(HalfFloat, Bfloat16IsTheTopHalf) {
  for (std::uint32_t b = 0; b <= 0xffff; ++b) {
    ASSERT_EQ(bits(io_internal::bfloat16_to_float(static_cast<std::uint16_t>(b))), b << 16);
  }
  EXPECT_EQ(io_internal::bfloat16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(io_internal::bfloat16_to_float(0xff80), -std::numeric_limits<float>::infinity());
}

TEST(HalfFloat, DecodeArraySwapsAndReorders) {
  // A big-endian float16 (2, 2) array in Fortran order: [[1, 2], [3, 4]].
  const std::uint8_t src[] = {0x3c, 0x00, 0x42, 0x00, 0x40, 0x00, 0x44, 0x00};
  const std::size_t shape[] = {2, 2};
  float dst[4];
  io_internal::decode_float_array(src, io_internal::FloatKind::F16, /*swap=*/true, shape,
                                  /*fortran=*/true, NonFinite::Reject, "x", dst);
  EXPECT_EQ(std::vector<float>(dst, dst + 4), (std::vector<float>{1, 2, 3, 4}));
}

TEST(NpyFiniteCheck, PositionsAndMessages) {
  const std::size_t s0[] = {0};
  EXPECT_EQ(describe_position(std::span<const std::size_t>(), 0), "the scalar value");
  EXPECT_EQ(describe_position(std::span(s0, 1), 7), "element 7");
  const std::size_t s2[] = {4, 5};
  EXPECT_EQ(describe_position(s2, 13), "row 2, column 3");
  const std::size_t s3[] = {2, 3, 4};
  EXPECT_EQ(describe_position(s3, 23), "index (1, 2, 3)");

  std::vector<float> v(5000, 1.0f);
  EXPECT_EQ(find_nonfinite(v.data(), v.size()), v.size());
  v[4321] = -std::numeric_limits<float>::infinity();
  v[4999] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(find_nonfinite(v.data(), v.size()), 4321u);
  const MatrixView m(v.data(), 50, 100);
  expect_input_error([&] { require_finite(m, "'emb'"); },
                     {"'emb' has -inf at row 43, column 21 (0-based)", "expected finite"});
}

}  // namespace in_npy_test
}  // namespace
}  // namespace vlbias
