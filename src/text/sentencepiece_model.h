#pragma once
// Internal to vlbias_text: the parts of a SentencePiece ModelProto (protobuf, proto2;
// sentencepiece_model.proto) that encoding needs, read by a minimal wire-format
// parser that refuses truncated or malformed input with InputError. Unknown fields
// are skipped, as protobuf does.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vlbias::text_internal {

struct SentencePieceModel {
  // ModelProto.SentencePiece.Type
  enum class PieceType : std::uint8_t {
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6
  };
  struct Piece {
    std::string piece;
    float score = 0;
    PieceType type = PieceType::Normal;
  };
  std::vector<Piece> pieces;  // ModelProto.pieces (1)
  // TrainerSpec (2)
  int model_type = 1;  // 1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR
  bool byte_fallback = false;
  bool treat_whitespace_as_suffix = false;
  // NormalizerSpec (3)
  std::string normalizer_name;
  std::string precompiled_charsmap;
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
};

// Parses a serialized ModelProto from `source` (a file name for messages). Checks
// the wire format and the pieces (non-empty UTF-8, known type); the meaning of the
// model (one <unk>, no repeated piece...) is checked by its user.
SentencePieceModel parse_sentencepiece_model(std::string_view bytes, const std::string& source);

}  // namespace vlbias::text_internal
