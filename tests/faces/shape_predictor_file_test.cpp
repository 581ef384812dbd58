// The checks a shape predictor file passes before dlib reads it (src/faces/shape_predictor_file.h):
// Debian's real 68-point model passes; small predictors written here in dlib's serialization
// format pass, and each defect dlib would act on (a count larger than the file, an index out of
// range, a tree whose leaves do not match its splits, a value that is not finite, bytes after the
// end, every truncation) is a usage error naming the file.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "shape_predictor_file.h"
#include "vlbias/core/error.h"
#include "vlbias/io/mapped_file.h"

namespace {
namespace in_shape_predictor_file_test {

using vlbias::ShapePredictorInfo;
using vlbias::UsageError;
using vlbias::faces_internal::check_shape_predictor;
using Bytes = std::vector<std::uint8_t>;

// dlib's integer encoding (serialize.h pack_int): a control byte (byte count, bit 7 negative)
// and the value's bytes, little-endian.
void put_int(Bytes& b, std::int64_t v) {
  const bool negative = v < 0;
  std::uint64_t u = negative ? static_cast<std::uint64_t>(-v) : static_cast<std::uint64_t>(v);
  std::uint8_t body[8];
  std::uint8_t n = 0;
  do {
    body[n++] = static_cast<std::uint8_t>(u & 0xFF);
    u >>= 8;
  } while (u != 0);
  b.push_back(static_cast<std::uint8_t>(n | (negative ? 0x80 : 0)));
  b.insert(b.end(), body, body + n);
}

// dlib's float_details: mantissa and exponent (value = mantissa * 2^exponent).
void put_float(Bytes& b, std::int64_t mantissa, std::int64_t exponent = 0) {
  put_int(b, mantissa);
  put_int(b, exponent);
}

// A column matrix<float,0,1> in the current format (rows and columns negated).
void put_column(Bytes& b, std::size_t rows, std::int64_t value = 1) {
  put_int(b, -static_cast<std::int64_t>(rows));
  put_int(b, -1);
  for (std::size_t r = 0; r < rows; ++r) put_float(b, value);
}

// What a small predictor holds, and the defects to give it.
struct Spec {
  std::size_t parts = 5;
  std::size_t pixels = 2;       // feature pixels of the one cascade
  std::size_t split_index = 1;  // the second pixel a split compares
  std::size_t leaves = 2;       // a tree with one split has two
  std::size_t anchor = 4;       // the landmark a feature pixel hangs on
  std::size_t offsets = 2;
  std::int64_t threshold_exponent = 0;
  std::size_t cascades_claimed = 1;
  bool trailing_byte = false;
};

Bytes predictor_bytes(const Spec& s) {
  Bytes b;
  put_int(b, 1);  // version
  put_column(b, 2 * s.parts);
  put_int(b, static_cast<std::int64_t>(s.cascades_claimed));  // forests
  put_int(b, 1);                                              // trees in the cascade
  put_int(b, 1);                                              // splits
  put_int(b, 0);
  put_int(b, static_cast<std::int64_t>(s.split_index));
  put_float(b, 3, s.threshold_exponent);
  put_int(b, static_cast<std::int64_t>(s.leaves));
  for (std::size_t l = 0; l < s.leaves; ++l) put_column(b, 2 * s.parts, 0);
  put_int(b, 1);  // anchor lists
  put_int(b, static_cast<std::int64_t>(s.pixels));
  for (std::size_t k = 0; k < s.pixels; ++k) put_int(b, static_cast<std::int64_t>(s.anchor));
  put_int(b, 1);  // offset lists
  put_int(b, static_cast<std::int64_t>(s.offsets));
  for (std::size_t k = 0; k < s.offsets; ++k) {
    put_float(b, 1, -2);
    put_float(b, -1, -2);
  }
  if (s.trailing_byte) b.push_back(0);
  return b;
}

std::string refusal(const Bytes& b) {
  try {
    check_shape_predictor(b, "/models/sp.dat");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ShapePredictorFile, DebiansSixtyEightPointModelPassesWithItsShape) {
  const vlbias::MappedFile file(vlbias::kDebianShapePredictor);
  const ShapePredictorInfo info =
      check_shape_predictor(file.bytes(), vlbias::kDebianShapePredictor);
  EXPECT_EQ(info.parts, 68u);
  EXPECT_EQ(info.cascades, 15u);
  EXPECT_EQ(info.trees, 15u * 500u);
  EXPECT_EQ(info.feature_pixels, 15u * 500u);
}

TEST(ShapePredictorFile, ASmallFivePointPredictorWrittenInDlibsFormatPasses) {
  const ShapePredictorInfo info = check_shape_predictor(predictor_bytes({}), "sp.dat");
  EXPECT_EQ(info.parts, 5u);
  EXPECT_EQ(info.cascades, 1u);
  EXPECT_EQ(info.trees, 1u);
  EXPECT_EQ(info.feature_pixels, 2u);
}

TEST(ShapePredictorFile, EachDefectDlibWouldActOnIsAUsageErrorNamingTheFile) {
  struct Case {
    const char* what;
    Spec spec;
    const char* says;
  };
  Spec anchor, split, leaves, offsets, parts, infinite, cascades, trailing;
  anchor.anchor = 5;
  split.split_index = 2;
  leaves.leaves = 3;
  offsets.offsets = 1;
  parts.parts = 7;
  infinite.threshold_exponent = 32000;
  cascades.cascades_claimed = 1000000;
  trailing.trailing_byte = true;
  const Case cases[] = {
      {"an anchor landmark out of range", anchor, "anchors a feature pixel at landmark 5 of 5"},
      {"a split comparing a pixel the cascade lacks", split, "compares feature pixel 2 of 2"},
      {"a tree with a leaf too many", leaves, "has 1 splits and 3 leaves"},
      {"fewer offsets than feature pixels", offsets, "another number of offsets"},
      {"7 landmarks", parts, "not 5 or 68 points"},
      {"an infinite threshold", infinite, "is not finite"},
      {"a count larger than the file", cascades, "more than the"},
      {"a byte after the end", trailing, "1 bytes follow the predictor"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string message = refusal(predictor_bytes(c.spec));
    EXPECT_NE(message.find("/models/sp.dat"), std::string::npos) << message;
    EXPECT_NE(message.find(c.says), std::string::npos) << message;
  }
}

TEST(ShapePredictorFile, EveryTruncationOfASmallPredictorIsRefused) {
  const Bytes whole = predictor_bytes({});
  for (std::size_t n = 0; n < whole.size(); ++n) {
    SCOPED_TRACE(n);
    const Bytes cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_NE(refusal(cut), "");
  }
}

TEST(ShapePredictorFile, TextAndDlibsOldAsciiFloatsAreRefused) {
  const std::string text = "not a model\n";
  EXPECT_NE(refusal(Bytes(text.begin(), text.end())).find("invalid size byte"), std::string::npos);
  Bytes ascii;
  put_int(ascii, 1);
  put_int(ascii, -1);
  put_int(ascii, -1);
  const std::string old = "0.5 ";
  ascii.insert(ascii.end(), old.begin(), old.end());
  EXPECT_NE(refusal(ascii).find("not in dlib's binary float format"), std::string::npos);
}

TEST(ShapePredictorFile, TruncationsOfTheRealModelAreRefusedBeforeAnyAllocation) {
  const vlbias::MappedFile file(vlbias::kDebianShapePredictor);
  const std::span<const std::uint8_t> all = file.bytes();
  for (const std::size_t n : {std::size_t{1}, std::size_t{1000}, all.size() / 2, all.size() - 1}) {
    SCOPED_TRACE(n);
    EXPECT_NE(refusal(Bytes(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n))), "");
  }
}

}  // namespace in_shape_predictor_file_test
}  // namespace
