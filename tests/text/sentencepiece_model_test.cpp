// sentencepiece.bpe.model: the protobuf reader on hand-built and hostile ModelProtos
// (wire format errors, cut-off files, pieces XLM-R's layout cannot hold), and a
// hand-worked tokenization on a tiny model.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "test_util.h"
#include "text/text_tokenizer_test_util.h"
#include "vlbias/core/build_type.h"
#include "vlbias/core/error.h"
#include "vlbias/text/tokenizer.h"

namespace vlbias {
namespace {
namespace in_sentencepiece_model_test {

namespace fs = std::filesystem;
using testing_text::read_bytes;
using testing_text::TempDir;
using testing_text::write_bytes;
using testing_util::error_of;

// Protobuf wire format, written by hand.
std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string tag(int field, int wire) {
  return varint(static_cast<std::uint64_t>(field) << 3 | static_cast<std::uint64_t>(wire));
}
std::string bytes_field(int field, const std::string& body) {
  return tag(field, 2) + varint(body.size()) + body;
}
std::string varint_field(int field, std::uint64_t v) {
  return tag(field, 0) + varint(v);
}
std::string float_field(int field, float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  std::string out = tag(field, 5);
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<char>((bits >> (8 * k)) & 0xFF));
  return out;
}
std::string piece(const std::string& text, float score, int type) {
  return bytes_field(1, bytes_field(1, text) + float_field(2, score) + varint_field(3, type));
}

// <unk> <s> </s>, then "▁a", "a", "▁", "b"; a UNIGRAM trainer spec; no charsmap.
std::string tiny_model(const std::string& extra_pieces = "", int model_type = 1) {
  return piece("<unk>", 0, 2) + piece("<s>", 0, 3) + piece("</s>", 0, 3) +
         piece(
             "\xe2\x96\x81"
             "a",
             -1.0f, 1) +
         piece("a", -2.0f, 1) + piece("\xe2\x96\x81", -1.5f, 1) + piece("b", -2.5f, 1) +
         extra_pieces + bytes_field(2, varint_field(3, static_cast<std::uint64_t>(model_type))) +
         bytes_field(3, bytes_field(1, "identity"));
}

class SentencePieceModelFile : public ::testing::Test {
 protected:
  // Loads a folder holding `model` as sentencepiece.bpe.model; the error, or "".
  std::string load(const std::string& model) {
    const fs::path dir = tmp_.path() / std::to_string(count_++);
    fs::create_directories(dir);
    write_bytes(dir / "sentencepiece.bpe.model", model);
    write_bytes(dir / "config.json",
                R"({"model_type": "xlm-roberta", "max_position_embeddings": 34})");
    file_ = (dir / "sentencepiece.bpe.model").string();
    try {
      tokenizer_ = std::make_unique<TextTokenizer>(TextTokenizer::from_folder(dir));
    } catch (const InputError& e) {
      std::string message = e.what();
      for (std::size_t at = message.find(file_); at != std::string::npos;
           at = message.find(file_)) {
        message.replace(at, file_.size(), "FILE");
      }
      return message;
    }
    return "";
  }

  TempDir tmp_;
  int count_ = 0;
  std::string file_;
  std::unique_ptr<TextTokenizer> tokenizer_;
};

TEST_F(SentencePieceModelFile, ATinyModelTokenizesByHand) {
  ASSERT_EQ(load(tiny_model()), "");
  const TextTokenizer& t = *tokenizer_;
  EXPECT_EQ(t.max_length(), 32u);  // 34 - (pad_token_id 1 + 1)
  // "a b" -> "▁a▁b": ▁a (-1) + ▁ (-1.5) + b (-2.5); fairseq ids = SentencePiece id + 1.
  EXPECT_EQ(t.content_ids("a b"), (std::vector<std::int32_t>{4, 6, 7}));
  // Leading, trailing and repeated spaces go; a run of unknown characters is one <unk> (3).
  EXPECT_EQ(t.content_ids("  a \xe2\x98\x83\xe2\x98\x83 b "),
            (std::vector<std::int32_t>{4, 6, 3, 6, 7}));
  EXPECT_EQ(t.content_ids("aa"), (std::vector<std::int32_t>{4, 5}));
  EXPECT_EQ(t.encode("a").ids, (std::vector<std::int32_t>{0, 4, 2}));
  EXPECT_EQ(t.token_to_id("<mask>"), 8);  // 7 pieces + 1
  EXPECT_EQ(t.vocab_size(), 9u);
}

TEST_F(SentencePieceModelFile, WireFormatErrorsNameTheByte) {
  EXPECT_EQ(load(tag(1, 3) + "xyz"),
            "'FILE' has wire type 3 at byte 0 of a ModelProto; expected 0, 1, 2 or 5 (protobuf "
            "without groups)");
  EXPECT_EQ(load(tag(0, 0) + varint(1)),
            "'FILE' has a field number 0 at byte 0 of a ModelProto; expected 1 to 2^29 - 1");
  EXPECT_EQ(load(tag(9, 0) + std::string(10, '\xff') + "\x01"),
            "'FILE' has a varint longer than 10 bytes at byte 0 of a ModelProto");
  EXPECT_EQ(load(tag(1, 2) + varint(100) + "x"),
            "'FILE' is cut off: a field at byte 0 of a ModelProto declares 100 bytes, 1 remain");
  EXPECT_EQ(load(tag(1, 0) + varint(5)),
            "'FILE' has a piece of a ModelProto with wire type 0 at byte 0; expected wire type 2");
  EXPECT_EQ(load(tiny_model() + tag(7, 0)),
            fmt::format("'FILE' is cut off inside a varint at byte {} of a ModelProto",
                        tiny_model().size()));
  EXPECT_EQ(load(bytes_field(1, bytes_field(1, "x") + tag(2, 5) + "ab")),
            "'FILE' is cut off: a field at byte 5 of a SentencePiece needs 4 bytes, 2 remain");
  EXPECT_EQ(load(bytes_field(1, bytes_field(1, "x") + varint_field(3, 9))),
            "'FILE' gives piece 0 the type 9; expected 1 (NORMAL) to 6 (BYTE)");
  EXPECT_EQ(load(bytes_field(1, float_field(2, 1.0f))),
            "'FILE' has an empty piece at index 0; expected every piece to be a string");
  EXPECT_EQ(load(bytes_field(2, varint_field(3, 1))),
            "'FILE' has no pieces; expected a SentencePiece model (ModelProto)");
  EXPECT_EQ(load(bytes_field(1, bytes_field(1, "\xff"))),
            "'FILE' piece 0 is not valid UTF-8: byte 0 (0xFF) cannot start a character");
  // Unknown fields are skipped, as protobuf does.
  EXPECT_EQ(load(tiny_model() + bytes_field(17, "ignored") + varint_field(18, 5) + tag(19, 1) +
                 std::string(8, 'x')),
            "");
}

TEST_F(SentencePieceModelFile, ModelsOutsideXlmRsLayoutAreRefused) {
  EXPECT_EQ(load(tiny_model("", 2)),
            "'FILE' is a SentencePiece model of type 2; expected 1 (UNIGRAM), as XLM-R's");
  EXPECT_EQ(load(piece("<s>", 0, 3) + piece("<unk>", 0, 2) + piece("</s>", 0, 3)),
            "'FILE' does not start with <unk>, <s>, </s> (UNKNOWN, CONTROL, CONTROL at ids 0, 1, "
            "2); expected XLM-R's layout, which fairseq's ids depend on");
  EXPECT_EQ(load(tiny_model(piece("<user>", 0, 4))),
            "'FILE' has the user-defined piece '<user>' (id 7); user-defined pieces are not "
            "supported");
  EXPECT_EQ(load(tiny_model(piece("a", -3, 1))),
            "'FILE' has the piece 'a' twice (id 7); expected every piece once");
  EXPECT_EQ(load(tiny_model(piece("<unk2>", 0, 2))),
            "'FILE' has a second unknown piece '<unk2>' at id 7; expected one <unk>");
  const std::string with_fallback =
      tiny_model() + bytes_field(2, varint_field(35, 1) + varint_field(3, 1));
  EXPECT_EQ(load(with_fallback),
            "'FILE' has byte_fallback but no byte piece <0x00>; expected all 256");
  EXPECT_EQ(load(tiny_model() + bytes_field(3, bytes_field(2, std::string("\x08\0\0\0\0\0\0", 7)))),
            "the precompiled_charsmap of 'FILE' declares a trie of 8 bytes in a blob of 7; "
            "expected a positive multiple of 4 that fits");
}

TEST_F(SentencePieceModelFile, EveryCutOfARealModelLoadsOrIsRefused) {
  const std::string model =
      read_bytes(testing_text::model_dir("xlmr_bytes") / "sentencepiece.bpe.model");
  std::size_t refused = 0;
  // Unoptimised (sanitizer) builds: fewer cuts past the header.
  const std::size_t kStride = release_build() ? 1031 : 7919;
  for (std::size_t cut = 0; cut < model.size(); cut += cut < 256 ? 1 : kStride) {
    SCOPED_TRACE(cut);
    const std::string message = load(model.substr(0, cut));
    if (message.empty()) {
      (void)tokenizer_->encode("Hello, wörld 😀 <mask>");
    } else {
      ++refused;
    }
  }
  EXPECT_GT(refused, 100u);
}

}  // namespace in_sentencepiece_model_test
}  // namespace
}  // namespace vlbias
