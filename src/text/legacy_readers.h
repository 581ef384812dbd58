#pragma once
// Internal to vlbias_text: vocab.txt and merges.txt (legacy_readers.cpp).
#include <filesystem>

#include "byte_bpe.h"
#include "wordpiece.h"

namespace vlbias::text_internal {

TokenIds read_vocab_txt(const std::filesystem::path& file);
void read_merges_txt(const std::filesystem::path& file, BpeVocab& vocab);

}  // namespace vlbias::text_internal
