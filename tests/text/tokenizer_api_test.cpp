// TextTokenizer's contract beyond the ids themselves: special tokens around the
// content, truncation that is counted, the maximum length and where it comes from,
// the choice of files, UTF-8 errors, and concurrent use.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "test_util.h"
#include "text/text_tokenizer_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/text/tokenizer.h"

namespace vlbias {
namespace {
namespace in_tokenizer_api_test {

using testing_text::copy_model;
using testing_text::fixture_tokenizer;
using testing_text::model_dir;
using testing_text::TempDir;
using testing_util::error_of;

const std::vector<std::string> kAllKeys = {"bert_uncased/legacy",
                                           "bert_uncased/tokenizer.json",
                                           "distilbert_cased/legacy",
                                           "distilbert_cased/tokenizer.json",
                                           "roberta/legacy",
                                           "roberta/tokenizer.json",
                                           "xlmr/legacy",
                                           "xlmr/tokenizer.json",
                                           "xlmr_old_json/tokenizer.json",
                                           "xlmr_bytes/legacy",
                                           "xlmr_bytes/tokenizer.json"};

std::vector<std::int32_t> concat(std::vector<std::int32_t> a, const std::vector<std::int32_t>& b,
                                 const std::vector<std::int32_t>& c) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

TEST(TextTokenizer, EachFamilyWrapsTheContentInItsSpecialTokens) {
  const TextTokenizer& bert = fixture_tokenizer("bert_uncased/legacy");
  EXPECT_EQ(bert.kind(), TokenizerKind::WordPiece);
  EXPECT_EQ(bert.source(), "vocab.txt");
  EXPECT_EQ(bert.prefix_ids(), std::vector<std::int32_t>{*bert.token_to_id("[CLS]")});
  EXPECT_EQ(bert.suffix_ids(), std::vector<std::int32_t>{*bert.token_to_id("[SEP]")});
  EXPECT_EQ(bert.pad_id(), *bert.token_to_id("[PAD]"));
  const TextTokenizer& roberta = fixture_tokenizer("roberta/tokenizer.json");
  EXPECT_EQ(roberta.kind(), TokenizerKind::ByteLevelBpe);
  EXPECT_EQ(roberta.source(), "tokenizer.json");
  EXPECT_EQ(roberta.prefix_ids(), std::vector<std::int32_t>{0});  // <s>
  EXPECT_EQ(roberta.suffix_ids(), std::vector<std::int32_t>{2});  // </s>
  EXPECT_EQ(roberta.pad_id(), 1);
  // XLM-R from the SentencePiece model: fairseq's layout, <mask> after the pieces.
  const TextTokenizer& xlmr = fixture_tokenizer("xlmr/legacy");
  EXPECT_EQ(xlmr.kind(), TokenizerKind::Unigram);
  EXPECT_EQ(xlmr.source(), "sentencepiece.bpe.model");
  EXPECT_EQ(xlmr.prefix_ids(), std::vector<std::int32_t>{0});
  EXPECT_EQ(xlmr.suffix_ids(), std::vector<std::int32_t>{2});
  EXPECT_EQ(xlmr.token_to_id("<pad>"), 1);
  EXPECT_EQ(xlmr.token_to_id("<unk>"), 3);
  EXPECT_EQ(*xlmr.token_to_id("<mask>") + 1, static_cast<std::int32_t>(xlmr.vocab_size()));
  EXPECT_EQ(xlmr.vocab_size(), fixture_tokenizer("xlmr/tokenizer.json").vocab_size());
  EXPECT_FALSE(xlmr.token_to_id("no such piece").has_value());
}

// Byte-level BPE keeps whitespace as tokens ("Ġ"), and so does the Unigram
// tokenizer.json of older converters (Metaspace turns each space into "▁"); the
// other tokenizers drop it.
TEST(TextTokenizer, EmptyAndWhitespaceTextsGiveTheSpecialTokensAlone) {
  for (const std::string& key : kAllKeys) {
    SCOPED_TRACE(key);
    const TextTokenizer& tok = fixture_tokenizer(key);
    for (const char* text : {"", " ", "\t\n  \r\n"}) {
      const TokenizedText t = tok.encode(text);
      const bool keeps_spaces =
          tok.kind() == TokenizerKind::ByteLevelBpe || key == "xlmr_old_json/tokenizer.json";
      if (keeps_spaces && text[0] != '\0') {
        EXPECT_GT(t.content_length, 0u);
        continue;
      }
      EXPECT_EQ(t.ids, concat(tok.prefix_ids(), {}, tok.suffix_ids()));
      EXPECT_EQ(t.content_length, 0u);
      EXPECT_FALSE(t.truncated);
      EXPECT_EQ(t.attention_length(), t.ids.size());
    }
  }
}

TEST(TextTokenizer, TruncationKeepsTheFirstContentIdsAndSaysSo) {
  const std::string text =
      "The quick brown fox jumps over the lazy dog while the teacher was friendly today.";
  for (const std::string& key : kAllKeys) {
    SCOPED_TRACE(key);
    const TextTokenizer& tok = fixture_tokenizer(key);
    const std::vector<std::int32_t> content = tok.content_ids(text);
    ASSERT_GT(content.size(), 8u);
    const std::size_t specials = tok.prefix_ids().size() + tok.suffix_ids().size();
    const TokenizedText cut = tok.encode(text, specials + 5);
    EXPECT_TRUE(cut.truncated);
    EXPECT_EQ(cut.content_length, content.size());
    EXPECT_EQ(cut.ids,
              concat(tok.prefix_ids(), {content.begin(), content.begin() + 5}, tok.suffix_ids()));
    const TokenizedText fits = tok.encode(text, specials + content.size());
    EXPECT_FALSE(fits.truncated);
    EXPECT_EQ(fits.ids, concat(tok.prefix_ids(), content, tok.suffix_ids()));
    EXPECT_TRUE(tok.encode(text, specials + content.size() - 1).truncated);
    EXPECT_EQ(tok.encode(text).ids, fits.ids);  // 512 by default
  }
}

TEST(TextTokenizer, ALengthWithoutRoomForContentIsAUsageError) {
  const TextTokenizer& tok = fixture_tokenizer("bert_uncased/legacy");
  EXPECT_EQ(error_of<UsageError>([&] { (void)tok.encode("hello", 2); }),
            "a maximum length of 2 leaves no room for content beside the 2 special tokens; "
            "expected at least 3");
  TokenizerOptions options;
  options.max_length = 1;
  EXPECT_NE(error_of<UsageError>(
                [&] { (void)TextTokenizer::from_folder(model_dir("roberta"), options); }),
            "");
}

TEST(TextTokenizer, MaxLengthComesFromTheModelConfigWithRobertasOffset) {
  EXPECT_EQ(fixture_tokenizer("bert_uncased/tokenizer.json").max_length(), 512u);
  EXPECT_EQ(fixture_tokenizer("bert_uncased/tokenizer.json").max_length_source(),
            "config.json max_position_embeddings 512");
  for (const char* key : {"roberta/legacy", "xlmr/tokenizer.json"}) {
    EXPECT_EQ(fixture_tokenizer(key).max_length(), 512u);
  }
  EXPECT_EQ(fixture_tokenizer("roberta/legacy").max_length_source(),
            "config.json max_position_embeddings 514 - 2 (roberta position offset)");
  TokenizerOptions options;
  options.max_length = 64;
  const TextTokenizer given = TextTokenizer::from_folder(model_dir("xlmr"), options);
  EXPECT_EQ(given.max_length(), 64u);
  EXPECT_EQ(given.max_length_source(), "given");
  // Without config.json: tokenizer_config.json's model_max_length, and without that,
  // no length at all.
  TempDir tmp;
  const auto dir = copy_model("bert_uncased", tmp.path(), {"config.json"});
  const TextTokenizer legacy = TextTokenizer::from_folder(dir);
  EXPECT_EQ(legacy.max_length_source(), "tokenizer_config.json model_max_length");
  std::filesystem::remove(dir / "tokenizer_config.json");
  TokenizerOptions legacy_only;
  legacy_only.source = TokenizerSource::LegacyFiles;
  EXPECT_EQ(error_of<UsageError>([&] { (void)TextTokenizer::from_folder(dir, legacy_only); }),
            fmt::format("'{}' states no maximum sequence length (config.json "
                        "max_position_embeddings, tokenizer.json truncation, "
                        "tokenizer_config.json model_max_length); give one",
                        dir.string()));
}

TEST(TextTokenizer, TokenizerJsonIsPreferredAndEitherSourceCanBeChosen) {
  EXPECT_EQ(TextTokenizer::from_folder(model_dir("bert_uncased")).source(), "tokenizer.json");
  TokenizerOptions legacy;
  legacy.source = TokenizerSource::LegacyFiles;
  EXPECT_EQ(TextTokenizer::from_folder(model_dir("roberta"), legacy).source(),
            "vocab.json + merges.txt");
  TempDir tmp;
  const auto dir = copy_model("xlmr", tmp.path(), {"tokenizer.json"});
  EXPECT_EQ(TextTokenizer::from_folder(dir).source(), "sentencepiece.bpe.model");
  TokenizerOptions json_only;
  json_only.source = TokenizerSource::TokenizerJson;
  EXPECT_NE(error_of<InputError>([&] {
              (void)TextTokenizer::from_folder(dir, json_only);
            }).find("tokenizer.json' does not exist"),
            std::string::npos);
  const auto empty = tmp.path() / "empty";
  std::filesystem::create_directories(empty);
  EXPECT_EQ(error_of<InputError>([&] { (void)TextTokenizer::from_folder(empty); }),
            fmt::format("'{}' has no tokenizer: expected tokenizer.json, vocab.txt (BERT), "
                        "vocab.json + merges.txt (RoBERTa) or sentencepiece.bpe.model "
                        "(XLM-RoBERTa)",
                        empty.string()));
  EXPECT_NE(error_of<InputError>([&] { (void)TextTokenizer::from_folder(tmp.path() / "nope"); }),
            "");
}

TEST(TextTokenizer, SpecialTokenStringsInTheTextBecomeTheirIds) {
  const TextTokenizer& bert = fixture_tokenizer("bert_uncased/tokenizer.json");
  EXPECT_EQ(bert.content_ids("[SEP]"), std::vector<std::int32_t>{*bert.token_to_id("[SEP]")});
  EXPECT_NE(bert.content_ids("[sep]"), bert.content_ids("[SEP]"));  // exact spelling only
  // <mask> takes the spaces before it (lstrip), in both RoBERTa sources.
  for (const char* key : {"roberta/legacy", "roberta/tokenizer.json"}) {
    const TextTokenizer& roberta = fixture_tokenizer(key);
    EXPECT_EQ(roberta.content_ids("a  <mask>"), roberta.content_ids("a<mask>"));
    EXPECT_EQ(roberta.content_ids("<mask>").back(), *roberta.token_to_id("<mask>"));
  }
}

TEST(TextTokenizer, InvalidUtf8IsAnInputErrorNamingTheByte) {
  const auto& cases = testing_util::fixture_json("text/invalid_utf8.json");
  for (const std::string& key : {std::string("bert_uncased/legacy"), std::string("xlmr/legacy")}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(key + " " + c.at("name").get<std::string>());
      const std::string hex = c.at("hex");
      std::string bytes;
      for (std::size_t i = 0; i < hex.size(); i += 2) {
        bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
      }
      const std::string message =
          error_of<InputError>([&] { (void)fixture_tokenizer(key).encode(bytes); });
      EXPECT_EQ(message.rfind("the text to tokenize is not valid UTF-8", 0), 0u) << message;
      const std::string at = std::to_string(c.at("offset").get<int>());
      EXPECT_TRUE(message.find("byte " + at + " ") != std::string::npos ||
                  message.find("bytes " + at + "..") != std::string::npos)
          << message;
    }
  }
}

TEST(TextTokenizer, ConcurrentEncodesGiveTheSameIds) {
  const TextTokenizer& tok = fixture_tokenizer("xlmr/tokenizer.json");
  const std::vector<std::string> texts = {"Hello, world!", "我爱北京天安门", "naïve café 😀",
                                          "<mask> and <s>"};
  std::vector<std::vector<std::int32_t>> want;
  for (const std::string& t : texts) want.push_back(tok.encode(t).ids);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&, w] {
      for (int round = 0; round < 200; ++round) {
        for (std::size_t i = 0; i < texts.size(); ++i) {
          if (tok.encode(texts[i]).ids != want[i]) ++mismatches[w];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

}  // namespace in_tokenizer_api_test
}  // namespace
}  // namespace vlbias
