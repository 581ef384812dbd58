// The weights reader (src/nn/weights.cpp) over small safetensors files written here: stacking,
// scalars, every refusal with its message, leftover and ignored tensors, and values that stay
// right after a tensor's mapped pages are released.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/nn/weights.h"

namespace vlbias {
namespace {
namespace in_weights_test {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

struct Tensor {
  std::string name;
  std::vector<std::size_t> shape;
  std::vector<float> values;  // F32 unless dtype says otherwise (then zero bytes of its size)
  std::string dtype = "F32";
};

// A safetensors file of `tensors` in order under a fresh temporary folder.
class WeightsReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("vlbias-nn-weights-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::vector<Tensor>& tensors) {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    std::string data;
    for (const Tensor& t : tensors) {
      std::size_t bytes = 4 * t.values.size();
      if (t.dtype == "I32" || t.dtype == "F32") {
        bytes = 4;
        for (std::size_t s : t.shape) bytes *= s;
      }
      const std::size_t begin = data.size();
      data.append(bytes, '\0');
      if (t.dtype == "F32") std::memcpy(data.data() + begin, t.values.data(), 4 * t.values.size());
      header[t.name] = {
          {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    const fs::path path = dir_ / "model.safetensors";
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((text.size() >> (8 * i)) & 0xff));
    out << text << data;
    return path;
  }

  fs::path dir_;
};

const WeightsContext kContext = {"the model described by config.json", {"buffers.position_ids"}};

std::vector<float> iota(std::size_t n, float start) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

TEST_F(WeightsReaderTest, StacksLinearLayersInTheOrderGiven) {
  const fs::path path = write({{"q.weight", {2, 3}, iota(6, 0)},
                               {"q.bias", {2}, iota(2, 100)},
                               {"k.weight", {2, 3}, iota(6, 10)},
                               {"k.bias", {2}, iota(2, 200)},
                               {"ln.weight", {3}, iota(3, 1)},
                               {"ln.bias", {3}, iota(3, -1)},
                               {"scale", {}, {2.5f}}});
  const SafetensorsFile file = SafetensorsFile::open(path);
  WeightsReader r(file, kContext);
  const Linear qk = r.stacked_linear({"q", "k"}, 2, 3);
  EXPECT_EQ(qk.out, 4u);
  EXPECT_EQ(qk.in, 3u);
  std::vector<float> w = iota(6, 0);
  const std::vector<float> kw = iota(6, 10);
  w.insert(w.end(), kw.begin(), kw.end());
  EXPECT_EQ(qk.w, w);
  EXPECT_EQ(qk.b, (std::vector<float>{100, 101, 200, 201}));
  const LayerNormWeights ln = r.layer_norm("ln", 3);
  EXPECT_EQ(ln.gamma, iota(3, 1));
  EXPECT_EQ(ln.beta, iota(3, -1));
  EXPECT_EQ(r.scalar("scale"), 2.5f);
  EXPECT_NO_THROW(r.require_all_used());
}

TEST_F(WeightsReaderTest, ValuesStayRightAfterTheirPagesAreReleased) {
  // Several pages per tensor, read twice: the second read pages the released ones in again.
  const std::size_t n = 5000;
  const fs::path path =
      write({{"a.weight", {n, 3}, iota(3 * n, 0.5f)}, {"a.bias", {n}, iota(n, -7)}});
  const SafetensorsFile file = SafetensorsFile::open(path);
  WeightsReader r(file, kContext);
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE(pass);
    const Linear a = r.linear("a", n, 3);
    EXPECT_EQ(a.w, iota(3 * n, 0.5f));
    EXPECT_EQ(a.b, iota(n, -7));
  }
}

TEST_F(WeightsReaderTest, RefusalsNameTheFileTheTensorAndWhatWasExpected) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const fs::path path = write({{"w.weight", {2, 3}, iota(6, 0)},
                               {"ints", {2}, {}, "I32"},
                               {"bad", {2}, {1.0f, nan}},
                               {"vec", {2}, iota(2, 0)}});
  const SafetensorsFile file = SafetensorsFile::open(path);
  WeightsReader r(file, kContext);
  const std::string source = "'" + path.string() + "'";
  using testing_util::error_of;
  EXPECT_THAT(error_of<InputError>([&] { r.read("missing.weight", {2}); }),
              AllOf(HasSubstr(source), HasSubstr("no tensor 'missing.weight'"),
                    HasSubstr("the model described by config.json")));
  EXPECT_THAT(
      error_of<InputError>([&] {
        r.read("w.weight", {3, 2});
      }),
      AllOf(HasSubstr(source), HasSubstr("tensor 'w.weight' has shape [2, 3]; expected [3, 2]"),
            HasSubstr("config.json")));
  EXPECT_THAT(error_of<InputError>([&] { r.read("ints", {2}); }),
              AllOf(HasSubstr("'ints' has dtype I32"), HasSubstr("F32, F16 or BF16")));
  EXPECT_THAT(error_of<InputError>([&] { r.read("bad", {2}); }), HasSubstr("bad"));
  EXPECT_THAT(error_of<InputError>([&] { r.scalar("vec"); }),
              HasSubstr("'vec' has shape [2]; expected a scalar"));
}

TEST_F(WeightsReaderTest, ATensorLeftUnreadIsRefusedUnlessIgnored) {
  const fs::path path = write({{"w.weight", {1, 1}, {1.0f}},
                               {"buffers.position_ids", {1}, {0.0f}},
                               {"extra.gamma", {1}, {1.0f}}});
  const SafetensorsFile file = SafetensorsFile::open(path);
  WeightsReader r(file, kContext);
  r.linear("w", 1, 1, /*bias=*/false);
  EXPECT_THAT(testing_util::error_of<InputError>([&] { r.require_all_used(); }),
              AllOf(HasSubstr("holds tensor 'extra.gamma'"),
                    HasSubstr("the model described by config.json does not have")));
  r.read("extra.gamma", {1});
  EXPECT_NO_THROW(r.require_all_used());
}

}  // namespace in_weights_test
}  // namespace
}  // namespace vlbias
