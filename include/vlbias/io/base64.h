#pragma once
// Base64 (RFC 4648, standard alphabet): image data URIs and image answers of the generation
// drivers, the precompiled charsmap of SentencePiece tokenizers.
#include <optional>
#include <string>
#include <string_view>

namespace vlbias {

// With '=' padding.
std::string base64_encode(std::string_view bytes);
// Lenient, as servers write it: padding optional, ASCII whitespace ignored. nullopt when
// malformed (a symbol outside the alphabet, a symbol after padding, a lone last symbol).
std::optional<std::string> base64_decode(std::string_view text);
// Strict: groups of 4 symbols, '=' only as the last one or two of the last group, no
// whitespace. InputError naming `what` and the first offending character.
std::string base64_decode_strict(std::string_view text, std::string_view what);

}  // namespace vlbias
