#pragma once
// Internal to vlbias_text: readers of tokenizer.json sections (and of vocab.json,
// which has the layout of a model's "vocab"). Every reader throws InputError naming
// `where` (e.g. "'dir/tokenizer.json' model vocab") and what was expected.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "byte_bpe.h"
#include "tokenizer_pipeline.h"
#include "unigram.h"
#include "wordpiece.h"

namespace vlbias::text_internal {

// {"token": id, ...}: ids integers in [0, 2^31), no id given twice.
TokenIds read_vocab_object(const nlohmann::json& vocab, const std::string& where);
// ["a b", ...] or [["a", "b"], ...].
void read_merges(const nlohmann::json& merges, const std::string& where, BpeVocab& vocab);
// [["piece", score], ...].
void read_unigram_vocab(const nlohmann::json& vocab, const std::string& where, UnigramVocab& out);
// Precompiled, Replace, Strip, or a Sequence of them.
void read_unigram_normalizer(const nlohmann::json& normalizer, const std::string& where,
                             std::vector<NormalizerStep>& steps);
// Metaspace (null is refused).
MetaspaceOptions read_metaspace(const nlohmann::json* pre_tokenizer, const std::string& where);
// added_tokens: the splitters of p (normalized ones normalized by p.model) and added_ids.
void read_added_tokens(const nlohmann::json& root, const std::string& source, Pipeline& p);
// post_processor: p.prefix and p.suffix.
void read_post_processor(const nlohmann::json& root, const std::string& source, Pipeline& p);

}  // namespace vlbias::text_internal
