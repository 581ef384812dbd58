// The shape predictor file read in dlib 19's serialization format (dlib/serialize.h,
// dlib/image_processing/shape_predictor.h), every count and index checked:
//   int version (1); matrix<float,0,1> initial_shape;
//   vector<vector<regression_tree>> forests;   tree: vector<split_feature> splits,
//                                               vector<matrix<float,0,1>> leaf_values;
//                                               split: ulong idx1, ulong idx2, float thresh
//   vector<vector<ulong>> anchor_idx; vector<vector<vector<float,2>>> deltas.
// Integers are a control byte (low nibble: byte count 1-8; bit 7: negative for signed types)
// and that many little-endian bytes; a float is float_details (int64 mantissa, int16
// exponent; 32000-32002 mark inf, -inf, NaN); a vector is its ulong size and its elements; a
// matrix is its rows and columns as longs (negated in the current format) and its elements.
#include <algorithm>
#include <cmath>
#include <limits>

#include "shape_predictor_file.h"
#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"

namespace vlbias::faces_internal {

namespace {

class PredictorReader {
 public:
  PredictorReader(std::span<const std::uint8_t> bytes, const std::string& name)
      : bytes_(bytes), name_(name) {}

  [[noreturn]] void fail(const std::string& what) const {
    VLBIAS_FAIL(UsageError,
                "Shape predictor {}: {} at byte {}; expected a dlib shape predictor file (e.g. "
                "{} from Debian's libdlib-data).",
                name_, what, at_, kDebianShapePredictor);
  }

  std::size_t left() const { return bytes_.size() - at_; }

  // An integer of at most `max_bytes` bytes; `is_signed` reads bit 7 of the control byte as
  // the sign (dlib's unpack_int for signed types), else bit 7 makes the count invalid.
  std::int64_t integer(std::size_t max_bytes, bool is_signed, const char* what) {
    if (left() < 1) fail(fmt::format("the file ends before {}", what));
    const std::uint8_t control = bytes_[at_];
    const bool negative = is_signed && (control & 0x80) != 0;
    const std::size_t count = is_signed ? (control & 0x0F) : (control & 0x8F);
    if (count == 0 || count > max_bytes) {
      fail(fmt::format("{} has an invalid size byte 0x{:02x}", what, control));
    }
    if (left() < 1 + count) fail(fmt::format("the file ends inside {}", what));
    std::uint64_t value = 0;
    for (std::size_t i = count; i > 0; --i) value = (value << 8) | bytes_[at_ + i];
    at_ += 1 + count;
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail(fmt::format("{} is out of range", what));
    }
    const auto v = static_cast<std::int64_t>(value);
    return negative ? -v : v;
  }

  // A count of elements that each take at least `min_bytes` bytes: never more than fit in
  // what is left of the file, so no count in it can make anyone allocate more than the file.
  std::size_t count(std::size_t min_bytes, const char* what) {
    const std::int64_t n = integer(8, false, what);
    if (static_cast<std::uint64_t>(n) > left() / min_bytes) {
      fail(fmt::format("{} is {}, more than the {} bytes left can hold", what, n, left()));
    }
    return static_cast<std::size_t>(n);
  }

  // dlib's float_details in the binary format (the old ASCII format is refused).
  float real(const char* what) {
    if (float v = 0; common_real(v)) return v;
    if (left() >= 1 && (bytes_[at_] & 0x70) != 0) {
      fail(fmt::format("{} is not in dlib's binary float format", what));
    }
    const std::int64_t mantissa = integer(8, true, what);
    const std::int64_t exponent = integer(2, true, what);
    if (exponent >= 32000) fail(fmt::format("{} is not finite", what));
    // As dlib's float_details::convert_to_T<float>: the mantissa made a float, then scaled.
    const float v = std::ldexp(static_cast<float>(mantissa), static_cast<int>(exponent));
    if (!std::isfinite(v)) fail(fmt::format("{} is not a finite float", what));
    return v;
  }

  // real()'s value without its checks one byte at a time, for the common case (a real model
  // holds tens of millions of floats): both sizes valid, the mantissa in range, the value finite
  // and enough bytes left for any float. False, reading nothing, for anything else: real()'s
  // checks then decide, so a float reads the same either way.
  bool common_real(float& v) {
    constexpr std::size_t kLongestFloat = (1 + 8) + (1 + 2);
    if (left() < kLongestFloat) return false;
    const std::uint8_t* p = bytes_.data() + at_;
    const std::size_t m_bytes = p[0] & 0x0F, e_bytes = p[1 + m_bytes] & 0x0F;
    if ((p[0] & 0x70) != 0 || m_bytes == 0 || m_bytes > 8) return false;
    if ((p[1 + m_bytes] & 0x70) != 0 || e_bytes == 0 || e_bytes > 2) return false;
    std::uint64_t m = 0, e = 0;
    for (std::size_t i = m_bytes; i > 0; --i) m = (m << 8) | p[i];
    for (std::size_t i = e_bytes; i > 0; --i) e = (e << 8) | p[1 + m_bytes + i];
    if (m > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
    const std::int64_t mantissa =
        (p[0] & 0x80) != 0 ? -static_cast<std::int64_t>(m) : static_cast<std::int64_t>(m);
    const std::int64_t exponent =
        (p[1 + m_bytes] & 0x80) != 0 ? -static_cast<std::int64_t>(e) : static_cast<std::int64_t>(e);
    if (exponent >= 32000) return false;
    v = std::ldexp(static_cast<float>(mantissa), static_cast<int>(exponent));
    if (!std::isfinite(v)) return false;
    at_ += 2 + m_bytes + e_bytes;
    return true;
  }

  // A column vector matrix<float,0,1>, its values appended to `out`: its number of rows.
  std::size_t column(const char* what, std::vector<float>& out) {
    std::int64_t rows = integer(8, true, what), cols = integer(8, true, what);
    if (rows < 0 || cols < 0) rows = -rows, cols = -cols;  // the current format's negation
    if (cols != 1 || rows < 0) {
      fail(fmt::format("{} is a {} x {} matrix, not a column", what, rows, cols));
    }
    if (static_cast<std::uint64_t>(rows) > left() / 2) {
      fail(fmt::format("{} claims {} values, more than the bytes left", what, rows));
    }
    const std::size_t first = out.size();  // at most twice the bytes left (checked above)
    out.resize(first + static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) out[first + static_cast<std::size_t>(r)] = real(what);
    return static_cast<std::size_t>(rows);
  }

  std::size_t position() const { return at_; }

 private:
  std::span<const std::uint8_t> bytes_;
  const std::string& name_;
  std::size_t at_ = 0;
};

// Per cascade, the feature pixels its trees' splits compare (one more than the largest index,
// 0 for trees without splits): the cascade's offset list must hold that many.
std::vector<std::size_t> read_forests(PredictorReader& in, ShapePredictorModel& m) {
  const std::size_t shape_rows = m.initial_shape.size();
  const std::size_t cascades = in.count(1, "the number of cascades");
  std::vector<std::size_t> pixels_needed;
  for (std::size_t c = 0; c < cascades; ++c) {
    pixels_needed.push_back(0);
    const std::size_t trees = in.count(2, "the number of trees of a cascade");
    std::vector<PredictorTree>& forest = m.forests.emplace_back();
    for (std::size_t t = 0; t < trees; ++t, ++m.info.trees) {
      PredictorTree& tree = forest.emplace_back();
      const std::size_t splits = in.count(6, "the number of splits of a tree");
      for (std::size_t k = 0; k < splits; ++k) {
        PredictorSplit& split = tree.splits.emplace_back();
        split.idx1 = static_cast<unsigned long>(in.integer(8, false, "a split's first pixel"));
        split.idx2 = static_cast<unsigned long>(in.integer(8, false, "a split's second pixel"));
        pixels_needed[c] =
            std::max<std::size_t>({pixels_needed[c], split.idx1 + 1, split.idx2 + 1});
        split.thresh = in.real("a split's threshold");
      }
      // A leaf is a column: its two sizes and a value per shape row, at least 2 bytes each.
      const std::size_t leaves = in.count(2 + 2 * shape_rows, "the number of leaves of a tree");
      // Prediction walks i -> 2i + 1 or 2i + 2 while i < splits and reads leaf i - splits:
      // leaves 0 .. splits, so a tree has one leaf more than it has splits.
      if (leaves != splits + 1) {
        in.fail(fmt::format("cascade {} tree {} has {} splits and {} leaves (expected {} leaves)",
                            c, t, splits, leaves, splits + 1));
      }
      tree.leaf_values.reserve(leaves * shape_rows);
      for (std::size_t l = 0; l < leaves; ++l) {
        if (in.column("a leaf value", tree.leaf_values) != shape_rows) {
          in.fail(fmt::format("a leaf of cascade {} tree {} is not a shape of {} values", c, t,
                              shape_rows));
        }
      }
    }
  }
  return pixels_needed;
}

}  // namespace

ShapePredictorModel read_shape_predictor(std::span<const std::uint8_t> bytes,
                                         const std::string& name) {
  PredictorReader in(bytes, name);
  if (in.integer(4, true, "the format version") != 1) in.fail("the format version is not 1");
  ShapePredictorModel m;
  const std::size_t shape_rows = in.column("the initial shape", m.initial_shape);
  ShapePredictorInfo& info = m.info;
  info.parts = shape_rows / 2;
  if (shape_rows % 2 != 0 || (info.parts != 5 && info.parts != 68)) {
    in.fail(
        fmt::format("the initial shape has {} values, not 5 or 68 points (10 or 136)", shape_rows));
  }
  const std::vector<std::size_t> pixels_needed = read_forests(in, m);
  info.cascades = pixels_needed.size();
  const std::size_t anchors = in.count(1, "the number of anchor lists");
  if (anchors != info.cascades) {
    in.fail(fmt::format("{} anchor lists for {} cascades", anchors, info.cascades));
  }
  // Lists grow as their elements are read; a count in the file reserves only what the bytes
  // left can hold.
  for (std::size_t c = 0; c < anchors; ++c) {
    const std::size_t pixels = in.count(2, "the number of feature pixels of a cascade");
    std::vector<unsigned long>& anchor_idx = m.anchor_idx.emplace_back();
    for (std::size_t k = 0; k < pixels; ++k) {
      const auto anchor =
          static_cast<unsigned long>(in.integer(8, false, "a feature pixel's anchor landmark"));
      anchor_idx.push_back(anchor);
      if (anchor >= info.parts) {
        in.fail(fmt::format("cascade {} anchors a feature pixel at landmark {} of {}", c, anchor,
                            info.parts));
      }
    }
    if (pixels_needed[c] > m.anchor_idx[c].size()) {
      in.fail(fmt::format("a tree of cascade {} compares feature pixel {} of {}", c,
                          pixels_needed[c] - 1, m.anchor_idx[c].size()));
    }
    info.feature_pixels += m.anchor_idx[c].size();
  }
  const std::size_t delta_lists = in.count(1, "the number of offset lists");
  if (delta_lists != anchors) {
    in.fail(fmt::format("{} offset lists for {} cascades", delta_lists, anchors));
  }
  for (std::size_t c = 0; c < delta_lists; ++c) {
    if (in.count(4, "the number of offsets of a cascade") != m.anchor_idx[c].size()) {
      in.fail(fmt::format("cascade {} has another number of offsets than feature pixels", c));
    }
    std::vector<std::array<float, 2>>& deltas = m.deltas.emplace_back();
    for (std::size_t k = 0; k < m.anchor_idx[c].size(); ++k) {
      const float x = in.real("an offset's x");
      deltas.push_back({x, in.real("an offset's y")});
    }
  }
  if (in.left() != 0) in.fail(fmt::format("{} bytes follow the predictor", in.left()));
  return m;
}

ShapePredictorInfo check_shape_predictor(std::span<const std::uint8_t> bytes,
                                         const std::string& name) {
  return read_shape_predictor(bytes, name).info;
}

}  // namespace vlbias::faces_internal
