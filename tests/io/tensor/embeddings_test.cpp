// read_embeddings: one entry point for .npy and .safetensors embedding matrices;
// add_numeric_column / add_string_column for score tables.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/embeddings.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/io/tensor/safetensors.h"

namespace vlbias {
namespace {
namespace in_embeddings_test {

std::filesystem::path scratch() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("vlbias_embeddings_" + std::to_string(::getpid()) + "_" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir;
}

Matrix sample(std::size_t rows, std::size_t cols) {
  Matrix m(rows, cols);
  for (std::size_t i = 0; i < m.data.size(); ++i) m.data[i] = 0.25f * static_cast<float>(i) - 1;
  return m;
}

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ReadEmbeddings, NpyAndSafetensorsGiveTheSameMatrix) {
  const auto dir = scratch();
  const Matrix m = sample(3, 4);
  write_npy(dir / "e.npy", m);
  write_safetensors(dir / "one.safetensors", {{"image_embeds", m}});
  write_safetensors(dir / "two.safetensors", {{"a", sample(2, 4)}, {"image_embeds", m}});
  for (const auto& [path, tensor] : std::vector<std::pair<std::filesystem::path, std::string>>{
           {dir / "e.npy", ""},
           {dir / "one.safetensors", ""},
           {dir / "two.safetensors", "image_embeds"}}) {
    const Matrix got = read_embeddings(path, tensor);
    EXPECT_EQ(got.rows, 3u);
    EXPECT_EQ(got.cols, 4u);
    EXPECT_EQ(got.data, m.data) << path;
  }
}

TEST(ReadEmbeddings, ErrorsNameTheFileAndWhatWasExpected) {
  const auto dir = scratch();
  write_safetensors(dir / "two.safetensors", {{"a", sample(2, 4)}, {"b", sample(2, 4)}});
  EXPECT_NE(
      message_of([&] { read_embeddings(dir / "two.safetensors"); }).find("holds 2 tensors (a, b)"),
      std::string::npos);
  EXPECT_NE(message_of([&] { read_embeddings(dir / "two.safetensors", "c"); }).find("c"),
            std::string::npos);
  write_npy(dir / "e.npy", sample(2, 2));
  EXPECT_THROW(read_embeddings(dir / "e.npy", "image_embeds"), UsageError);
  std::ofstream(dir / "e.txt") << "1 2 3\n";
  EXPECT_NE(message_of([&] {
              read_embeddings(dir / "e.txt");
            }).find("unknown embedding file type '.txt'"),
            std::string::npos);
  write_npy(dir / "empty.npy", Matrix(0, 8));
  EXPECT_NE(message_of([&] { read_embeddings(dir / "empty.npy"); }).find("(0, 8)"),
            std::string::npos);
  write_npy(dir / "nocols.npy", Matrix(5, 0));
  EXPECT_THROW(read_embeddings(dir / "nocols.npy"), InputError);
  Matrix nan = sample(2, 2);
  nan.at(1, 0) = std::nanf("");
  write_npy(dir / "nan.npy", nan);
  EXPECT_THROW(read_embeddings(dir / "nan.npy"), InputError);
  EXPECT_THROW(read_embeddings(dir / "missing.npy"), InputError);
}

TEST(AddColumns, AppendNumericAndStringColumns) {
  Table t = parse_csv("id\n1\n2\n3\n", "t.csv");
  add_numeric_column(t, "score", {0.5, std::nan(""), 2});
  add_string_column(t, "label", {"b", "", "b"});
  EXPECT_EQ(t.numeric("score", true)[0], 0.5);
  EXPECT_TRUE(t.column("score").missing(1));
  const Column& label = t.column("label");
  EXPECT_EQ(label.levels.size(), 1u);
  EXPECT_EQ(label.text(0), "b");
  EXPECT_TRUE(label.missing(1));
  EXPECT_EQ(label.text(2), "b");
  EXPECT_THROW(add_numeric_column(t, "id", {1, 2, 3}), InputError);
  EXPECT_THROW(add_numeric_column(t, "short", {1, 2}), InputError);
  EXPECT_THROW(add_string_column(t, "label", {"a", "b", "c"}), InputError);
  EXPECT_THROW(add_string_column(t, "long", {"a", "b", "c", "d"}), InputError);
}

}  // namespace in_embeddings_test
}  // namespace
}  // namespace vlbias
