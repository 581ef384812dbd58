// A minimal protobuf wire-format reader for SentencePiece's ModelProto (see
// sentencepiece_model.h). Wire types: 0 varint, 1 fixed64, 2 length-delimited,
// 5 fixed32; groups (3, 4) are refused, as no SentencePiece model has them.
#include "sentencepiece_model.h"

#include <cstring>
#include <string>

#include "text_files.h"
#include "vlbias/core/error.h"
#include "vlbias/text/unicode_text.h"

namespace vlbias::text_internal {
namespace {

class WireReader {
 public:
  WireReader(std::string_view data, std::size_t base, const std::string& source,
             std::string_view message)
      : data_(data), base_(base), source_(source), message_(message) {}

  bool done() const { return pos_ >= data_.size(); }

  // The next field's number and wire type.
  std::pair<std::uint32_t, std::uint32_t> tag() {
    field_at_ = pos_;
    const std::uint64_t key = varint();
    const auto wire = static_cast<std::uint32_t>(key & 7);
    const std::uint64_t number = key >> 3;
    VLBIAS_CHECK(number > 0 && number < (1u << 29), InputError,
                 "'{}' has a field number {} at byte {} of a {}; expected 1 to 2^29 - 1", source_,
                 number, where(), message_);
    VLBIAS_CHECK(wire != 3 && wire != 4 && wire != 6 && wire != 7, InputError,
                 "'{}' has wire type {} at byte {} of a {}; expected 0, 1, 2 or 5 (protobuf "
                 "without groups)",
                 source_, wire, where(), message_);
    return {static_cast<std::uint32_t>(number), wire};
  }

  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      VLBIAS_CHECK(pos_ < data_.size(), InputError,
                   "'{}' is cut off inside a varint at byte {} of a {}", source_, where(),
                   message_);
      const auto b = static_cast<unsigned char>(data_[pos_++]);
      value |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return value;
    }
    VLBIAS_FAIL(InputError, "'{}' has a varint longer than 10 bytes at byte {} of a {}", source_,
                where(), message_);
  }

  std::string_view bytes(std::size_t n) {
    VLBIAS_CHECK(n <= data_.size() - pos_, InputError,
                 "'{}' is cut off: a field at byte {} of a {} needs {} bytes, {} remain", source_,
                 where(), message_, n, data_.size() - pos_);
    const std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }

  std::string_view length_delimited() { return bytes(static_cast<std::size_t>(length())); }

  float fixed32_float() {
    const std::string_view b = bytes(4);
    std::uint32_t bits = 0;
    for (int k = 3; k >= 0; --k) bits = (bits << 8) | static_cast<unsigned char>(b[k]);
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }

  void skip(std::uint32_t wire) {
    if (wire == 0) {
      (void)varint();
    } else if (wire == 1) {
      (void)bytes(8);
    } else if (wire == 2) {
      (void)length_delimited();
    } else {
      (void)bytes(4);
    }
  }

  // A known field must have its declared wire type.
  void expect(std::uint32_t wire, std::uint32_t expected, std::string_view field) {
    VLBIAS_CHECK(wire == expected, InputError,
                 "'{}' has {} of a {} with wire type {} at byte {}; expected wire type {}", source_,
                 field, message_, wire, where(), expected);
  }

  std::size_t offset() const { return base_ + pos_; }

 private:
  std::uint64_t length() {
    const std::uint64_t n = varint();
    VLBIAS_CHECK(n <= data_.size() - pos_, InputError,
                 "'{}' is cut off: a field at byte {} of a {} declares {} bytes, {} remain",
                 source_, where(), message_, n, data_.size() - pos_);
    return n;
  }
  std::size_t where() const { return base_ + field_at_; }

  std::string_view data_;
  std::size_t base_;
  std::size_t pos_ = 0;
  std::size_t field_at_ = 0;
  const std::string& source_;
  std::string_view message_;
};

SentencePieceModel::Piece parse_piece(std::string_view data, std::size_t base,
                                      const std::string& source, std::size_t index) {
  WireReader r(data, base, source, "SentencePiece");
  SentencePieceModel::Piece piece;
  bool has_piece = false;
  while (!r.done()) {
    const auto [number, wire] = r.tag();
    if (number == 1) {
      r.expect(wire, 2, "the piece");
      piece.piece = std::string(r.length_delimited());
      has_piece = true;
    } else if (number == 2) {
      r.expect(wire, 5, "the score");
      piece.score = r.fixed32_float();
    } else if (number == 3) {
      r.expect(wire, 0, "the type");
      const std::uint64_t type = r.varint();
      VLBIAS_CHECK(type >= 1 && type <= 6, InputError,
                   "'{}' gives piece {} the type {}; expected 1 (NORMAL) to 6 (BYTE)", source,
                   index, type);
      piece.type = static_cast<SentencePieceModel::PieceType>(type);
    } else {
      r.skip(wire);
    }
  }
  VLBIAS_CHECK(has_piece && !piece.piece.empty(), InputError,
               "'{}' has an empty piece at index {}; expected every piece to be a string", source,
               index);
  (void)unicode::decode_utf8(piece.piece, fmt::format("'{}' piece {}", source, index));
  return piece;
}

void parse_trainer_spec(std::string_view data, std::size_t base, const std::string& source,
                        SentencePieceModel& model) {
  WireReader r(data, base, source, "TrainerSpec");
  while (!r.done()) {
    const auto [number, wire] = r.tag();
    if (number == 3) {
      r.expect(wire, 0, "model_type");
      model.model_type = static_cast<int>(r.varint() & 0x7FFFFFFF);
    } else if (number == 24) {
      r.expect(wire, 0, "treat_whitespace_as_suffix");
      model.treat_whitespace_as_suffix = r.varint() != 0;
    } else if (number == 35) {
      r.expect(wire, 0, "byte_fallback");
      model.byte_fallback = r.varint() != 0;
    } else {
      r.skip(wire);
    }
  }
}

void parse_normalizer_spec(std::string_view data, std::size_t base, const std::string& source,
                           SentencePieceModel& model) {
  WireReader r(data, base, source, "NormalizerSpec");
  while (!r.done()) {
    const auto [number, wire] = r.tag();
    if (number == 1) {
      r.expect(wire, 2, "name");
      model.normalizer_name = std::string(r.length_delimited());
    } else if (number == 2) {
      r.expect(wire, 2, "precompiled_charsmap");
      model.precompiled_charsmap = std::string(r.length_delimited());
    } else if (number >= 3 && number <= 5) {
      r.expect(wire, 0, "a whitespace option");
      const bool value = r.varint() != 0;
      (number == 3   ? model.add_dummy_prefix
       : number == 4 ? model.remove_extra_whitespaces
                     : model.escape_whitespaces) = value;
    } else {
      r.skip(wire);
    }
  }
}

}  // namespace

SentencePieceModel parse_sentencepiece_model(std::string_view bytes, const std::string& source) {
  SentencePieceModel model;
  WireReader r(bytes, 0, source, "ModelProto");
  while (!r.done()) {
    const auto [number, wire] = r.tag();
    if (number >= 1 && number <= 3) {
      r.expect(wire, 2, number == 1 ? "a piece" : number == 2 ? "trainer_spec" : "normalizer_spec");
      const std::string_view body = r.length_delimited();
      const std::size_t body_base = r.offset() - body.size();
      if (number == 1) {
        model.pieces.push_back(parse_piece(body, body_base, source, model.pieces.size()));
      } else if (number == 2) {
        parse_trainer_spec(body, body_base, source, model);
      } else {
        parse_normalizer_spec(body, body_base, source, model);
      }
    } else {
      r.skip(wire);
    }
  }
  VLBIAS_CHECK(!model.pieces.empty(), InputError,
               "'{}' has no pieces; expected a SentencePiece model (ModelProto)", source);
  return model;
}

}  // namespace vlbias::text_internal
