#pragma once
// Helpers of the ClipModel tests: fixture paths, temporary model directories, and a small
// safetensors rewriter (any shape and dtype) for hostile-file cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/io/tensor/safetensors.h"

namespace vlbias::clip_test {

namespace fs = std::filesystem;

inline fs::path models_dir() {
  return fs::path(VLBIAS_SOURCE_DIR) / "tests" / "fixtures" / "encode" / "models";
}

inline nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "missing " << path;
  return nlohmann::json::parse(in);
}

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::vector<std::int32_t>> read_texts(const fs::path& dir) {
  std::vector<std::vector<std::int32_t>> out;
  const nlohmann::json j = read_json(dir / "texts.json");  // outlives the loop
  for (const auto& t : j.at("texts")) {
    out.push_back(t.get<std::vector<std::int32_t>>());
  }
  return out;
}

using testing_util::TempDir;

// A copy of fixture model `name` in `dst` (its files only).
inline fs::path copy_model(const std::string& name, const fs::path& dst) {
  const fs::path to = dst / name;
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(models_dir() / name)) {
    fs::copy_file(e.path(), to / e.path().filename());
  }
  return to;
}

// One tensor as raw little-endian bytes.
struct RawTensor {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", "I32", ...
  std::vector<std::size_t> shape;
  std::vector<std::uint8_t> bytes;
};

inline std::vector<RawTensor> read_raw(const fs::path& path) {
  const SafetensorsFile f = SafetensorsFile::open(path);
  std::vector<RawTensor> out;
  for (const std::string& name : f.names()) {
    const SafetensorsTensorInfo& t = f.info(name);
    const auto b = f.bytes(name);
    out.push_back({name, std::string(dtype_name(t.dtype)), t.shape, {b.begin(), b.end()}});
  }
  return out;
}

// Writes tensors in order (header padded to 8 bytes like the reference writer).
inline void write_raw(const fs::path& path, const std::vector<RawTensor>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::size_t offset = 0;
  for (const RawTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << text;
  for (const RawTensor& t : tensors) {
    out.write(reinterpret_cast<const char*>(t.bytes.data()),
              static_cast<std::streamsize>(t.bytes.size()));
  }
}

inline RawTensor f32_tensor(std::string name, std::vector<std::size_t> shape,
                            const std::vector<float>& values) {
  RawTensor t{std::move(name), "F32", std::move(shape), {}};
  t.bytes.resize(values.size() * 4);
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

// n values uniform on [-scale sqrt 3, scale sqrt 3] (standard deviation `scale`).
inline std::vector<float> random_values(std::size_t n, float scale, Rng& rng) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>((rng.uniform01() * 2.0 - 1.0) * 1.7320508) * scale;
  return v;
}

// max |a - b| over two equally shaped matrices.
inline double max_abs_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  double m = 0.0;
  for (std::size_t i = 0; i < a.data.size() && i < b.data.size(); ++i) {
    m = std::max(m, std::abs(static_cast<double>(a.data[i]) - b.data[i]));
  }
  return m;
}

inline bool bitwise_equal(const Matrix& a, const Matrix& b) {
  return a.rows == b.rows && a.cols == b.cols &&
         std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0;
}

}  // namespace vlbias::clip_test
