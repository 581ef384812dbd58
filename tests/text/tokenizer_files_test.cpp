// Hostile tokenizer files: every reader (tokenizer.json sections, vocab.txt, vocab.json,
// merges.txt, tokenizer_config.json) refuses malformed or unsupported input with one
// InputError sentence naming the file, the place and what was expected.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "text/text_tokenizer_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/text/tokenizer.h"

namespace vlbias {
namespace {
namespace in_tokenizer_files_test {

namespace fs = std::filesystem;
using nlohmann::json;
using testing_text::copy_model;
using testing_text::read_bytes;
using testing_text::TempDir;
using testing_text::write_bytes;
using testing_util::error_of;

class TokenizerFiles : public ::testing::Test {
 protected:
  // The error of loading model `name` after `edit` changed its tokenizer.json.
  std::string json_error(const std::string& name, const std::function<void(json&)>& edit) {
    const fs::path dir = copy_model(name, tmp_.path() / std::to_string(count_++));
    json tok = json::parse(read_bytes(dir / "tokenizer.json"));
    edit(tok);
    write_bytes(dir / "tokenizer.json", tok.dump());
    file_ = (dir / "tokenizer.json").string();
    return with_file_named(load_error(dir, TokenizerSource::TokenizerJson));
  }
  // The error of loading model `name` from its legacy files after `file` got `bytes`.
  std::string legacy_error(const std::string& name, const std::string& file,
                           const std::string& bytes) {
    const fs::path dir = copy_model(name, tmp_.path() / std::to_string(count_++));
    write_bytes(dir / file, bytes);
    file_ = (dir / file).string();
    return with_file_named(load_error(dir, TokenizerSource::LegacyFiles));
  }
  static std::string load_error(const fs::path& dir, TokenizerSource source) {
    TokenizerOptions options;
    options.source = source;
    return error_of<InputError>([&] { (void)TextTokenizer::from_folder(dir, options); });
  }
  // The message with the edited file's path written FILE (and its folder DIR).
  std::string with_file_named(std::string message) const {
    const std::string dir = std::filesystem::path(file_).parent_path().string();
    for (const auto& [from, to] :
         {std::pair{file_, std::string("FILE")}, std::pair{dir, std::string("DIR")}}) {
      for (std::size_t at = message.find(from); at != std::string::npos; at = message.find(from)) {
        message.replace(at, from.size(), to);
      }
    }
    return message;
  }
  static std::string in_file(const std::string& rest) { return "'FILE'" + rest; }

  TempDir tmp_;
  int count_ = 0;
  std::string file_;
};

TEST_F(TokenizerFiles, TokenizerJsonThatIsNotJsonIsRefused) {
  const fs::path dir = copy_model("bert_uncased", tmp_.path());
  const std::string text = read_bytes(dir / "tokenizer.json");
  write_bytes(dir / "tokenizer.json", text.substr(0, text.size() / 2));
  EXPECT_EQ(
      load_error(dir, TokenizerSource::TokenizerJson)
          .rfind(fmt::format("'{}' is not valid JSON: ", (dir / "tokenizer.json").string()), 0),
      0u);
  write_bytes(dir / "tokenizer.json", "");
  EXPECT_NE(load_error(dir, TokenizerSource::TokenizerJson).find("is empty"), std::string::npos);
  write_bytes(dir / "tokenizer.json", "[1, 2]");
  EXPECT_NE(load_error(dir, TokenizerSource::TokenizerJson).find("is not a JSON object"),
            std::string::npos);
}

TEST_F(TokenizerFiles, RepeatedJsonKeysAreRefused) {
  const fs::path dir = copy_model("bert_uncased", tmp_.path());
  std::string text = read_bytes(dir / "tokenizer.json");
  const std::size_t vocab = text.find("\"vocab\":{") + 9;
  text.insert(vocab, "\"[UNK]\":7,");
  write_bytes(dir / "tokenizer.json", text);
  EXPECT_EQ(load_error(dir, TokenizerSource::TokenizerJson),
            fmt::format("'{}' has the key '[UNK]' twice in one object; expected every key once",
                        (dir / "tokenizer.json").string()));
}

TEST_F(TokenizerFiles, UnsupportedComponentsAreRefusedByName) {
  EXPECT_EQ(json_error("bert_uncased", [](json& t) { t["model"]["type"] = "WordLevel"; }),
            in_file(" model: type 'WordLevel' is not supported; expected WordPiece (BERT, "
                    "DistilBERT), BPE (RoBERTa) or Unigram (XLM-RoBERTa)"));
  EXPECT_EQ(json_error("bert_uncased",
                       [](json& t) {
                         t["normalizer"] = {{"type", "NFKC"}};
                       }),
            in_file(" normalizer: type 'NFKC' is not supported with WordPiece; expected "
                    "BertNormalizer or null"));
  EXPECT_EQ(json_error("bert_uncased",
                       [](json& t) {
                         t["pre_tokenizer"] = {{"type", "Whitespace"}};
                       }),
            in_file(" pre_tokenizer: type 'Whitespace' is not supported with WordPiece; expected "
                    "BertPreTokenizer"));
  EXPECT_EQ(json_error("roberta",
                       [](json& t) {
                         t["normalizer"] = {{"type", "Lowercase"}};
                       }),
            in_file(" normalizer: type 'Lowercase' is not supported with BPE; expected null "
                    "(RoBERTa has no normalizer)"));
  EXPECT_EQ(json_error("roberta", [](json& t) { t["model"]["dropout"] = 0.1; }),
            in_file(" model: dropout is set; expected null (dropout makes tokenization random)"));
  EXPECT_EQ(json_error("roberta", [](json& t) { t["model"]["end_of_word_suffix"] = "</w>"; }),
            in_file(" model: end_of_word_suffix is '</w>'; expected null or \"\" (byte-level BPE "
                    "has none)"));
  EXPECT_EQ(json_error("xlmr",
                       [](json& t) {
                         t["pre_tokenizer"] = {{"type", "ByteLevel"}};
                       }),
            in_file(" pre_tokenizer: type 'ByteLevel' is not supported with Unigram; expected "
                    "Metaspace"));
  EXPECT_EQ(
      json_error("xlmr",
                 [](json& t) { t["normalizer"]["normalizers"][2]["pattern"]["Regex"] = "\\s+"; }),
      in_file(" normalizer: the Replace regex '\\x5cs+' is not supported; expected \" {2,}\" "
              "(the one transformers' SentencePiece converter writes)"));
  EXPECT_EQ(json_error("xlmr",
                       [](json& t) {
                         t["post_processor"] = {{"type", "Sequence"}};
                       }),
            in_file(" post_processor: type 'Sequence' is not supported; expected BertProcessing, "
                    "RobertaProcessing, TemplateProcessing or null"));
  EXPECT_EQ(json_error("bert_uncased", [](json& t) { t["added_tokens"][0]["single_word"] = true; }),
            in_file(" added_tokens entry 0: '[PAD]' has single_word true, which is not "
                    "supported"));
  EXPECT_EQ(json_error("bert_uncased",
                       [](json& t) {
                         t["truncation"] = {{"direction", "Left"}, {"max_length", 128}};
                       }),
            in_file(" truncation: direction is 'Left'; expected Right (the first tokens are "
                    "kept)"));
}

TEST_F(TokenizerFiles, MalformedModelSectionsAreRefused) {
  EXPECT_EQ(json_error("bert_uncased", [](json& t) { t["model"].erase("vocab"); }),
            in_file(" model: 'vocab' is missing; expected an object"));
  EXPECT_EQ(json_error("bert_uncased", [](json& t) { t["model"]["vocab"]["[UNK]"] = -4; }),
            in_file(" model vocab '[UNK]' is -4; expected an integer id in [0, 2^31)"));
  EXPECT_EQ(json_error("bert_uncased", [](json& t) { t["model"]["vocab"]["zzz"] = 0; }),
            in_file(" model vocab gives the id 0 to both '[PAD]' and 'zzz'; expected one token "
                    "per id"));
  EXPECT_EQ(json_error("bert_uncased", [](json& t) { t["model"]["unk_token"] = "<unk>"; }),
            in_file(" model: unk_token '<unk>' is not in the vocabulary"));
  EXPECT_EQ(json_error("roberta", [](json& t) { t["model"]["merges"][3] = "a b c"; }),
            in_file(" model merges entry 3 is 'a b c'; expected two tokens separated by one "
                    "space"));
  EXPECT_EQ(json_error("roberta", [](json& t) { t["model"]["merges"][3] = "qqq zzz"; }),
            in_file(" model merges entry 3 merges 'qqq' and 'zzz', but 'qqq' is not in the "
                    "vocabulary"));
  EXPECT_EQ(json_error("roberta", [](json& t) { t["model"]["vocab"].erase("!"); }),
            in_file(" model vocab lacks the symbol '!' of byte 0x21; a byte-level BPE "
                    "vocabulary has all 256 byte symbols"));
  EXPECT_EQ(json_error("xlmr", [](json& t) { t["model"]["vocab"][5] = json::array({"x"}); }),
            in_file(" model vocab entry 5 is [\"x\"]; expected [\"piece\", score]"));
  EXPECT_EQ(json_error("xlmr", [](json& t) { t["model"]["unk_id"] = 99999; }),
            in_file(" model: unk_id 99999 is not an index of the 2002 pieces"));
  EXPECT_EQ(json_error("xlmr", [](json& t) { t["model"]["vocab"][7][0] = "<s>"; }),
            in_file(" model: the piece '<s>' is given twice (ids 0 and 7); expected every piece "
                    "once"));
  EXPECT_EQ(
      json_error("xlmr",
                 [](json& t) { t["post_processor"]["single"][0]["SpecialToken"]["id"] = "<x>"; }),
      in_file(" post_processor: '<x>' is not in special_tokens"));
}

TEST_F(TokenizerFiles, BrokenCharsmapsAreRefused) {
  const auto set_charsmap = [](const std::string& b64) {
    return [b64](json& t) { t["normalizer"]["normalizers"][0]["precompiled_charsmap"] = b64; };
  };
  EXPECT_EQ(json_error("xlmr", set_charsmap("AAE")),
            in_file(" normalizer precompiled_charsmap has 3 characters; expected base64 in "
                    "groups of 4"));
  EXPECT_EQ(json_error("xlmr", set_charsmap("AA*A")),
            in_file(" normalizer precompiled_charsmap has '*' at character 2; expected base64"));
  // 4 bytes: only the header.
  EXPECT_EQ(json_error("xlmr", set_charsmap("CAAAAA==")),
            in_file(" normalizer precompiled_charsmap has 4 bytes; expected a 4-byte trie "
                    "size, the trie and its strings"));
  // A trie of 8 bytes in a blob of 7.
  EXPECT_EQ(json_error("xlmr", set_charsmap("CAAAAAAAAA==")),
            in_file(" normalizer precompiled_charsmap declares a trie of 8 bytes in a blob of 7; "
                    "expected a positive multiple of 4 that fits"));
  // A trie of 6 bytes.
  EXPECT_EQ(json_error("xlmr", set_charsmap("BgAAAAAAAAAAAAAA")),
            in_file(" normalizer precompiled_charsmap declares a trie of 6 bytes in a blob of "
                    "12; expected a positive multiple of 4 that fits"));
  // One unit, then strings that are not UTF-8.
  EXPECT_NE(json_error("xlmr", set_charsmap("BAAAAAAAAAD/"))
                .find("normalized strings is not "
                      "valid UTF-8"),
            std::string::npos);
}

TEST_F(TokenizerFiles, ACharsmapPointingOutsideItselfFailsWhenUsed) {
  // Root unit 0 with offset 0: a byte c leads to unit c, which lies outside the one unit.
  const fs::path dir = copy_model("xlmr", tmp_.path());
  json tok = json::parse(read_bytes(dir / "tokenizer.json"));
  tok["normalizer"]["normalizers"][0]["precompiled_charsmap"] = "BAAAAAAAAAB4";
  write_bytes(dir / "tokenizer.json", tok.dump());
  TokenizerOptions options;
  options.source = TokenizerSource::TokenizerJson;
  const TextTokenizer t = TextTokenizer::from_folder(dir, options);
  EXPECT_EQ(error_of<InputError>([&] { (void)t.encode("hello"); }),
            fmt::format("'{}' normalizer precompiled_charsmap has a trie that points at unit 104 "
                        "of its 1; the charsmap is corrupt",
                        (dir / "tokenizer.json").string()));
}

TEST_F(TokenizerFiles, MalformedVocabTxtIsRefused) {
  EXPECT_EQ(legacy_error("bert_uncased", "vocab.txt", ""),
            in_file(" is empty; expected a WordPiece vocabulary (one token per line)"));
  EXPECT_EQ(legacy_error("bert_uncased", "vocab.txt", "[PAD]\r\n[UNK]\r\n"),
            in_file(" line 1 has a carriage return; expected LF line ends (a CRLF vocab.txt gives "
                    "every token a '\\r')"));
  EXPECT_EQ(legacy_error("bert_uncased", "vocab.txt", "[PAD]\n\n[UNK]\n"),
            in_file(" line 2 is empty; expected one token per line"));
  EXPECT_EQ(legacy_error("bert_uncased", "vocab.txt", "[PAD]\n[UNK]\nx\n[PAD]\n"),
            in_file(" line 4 repeats the token '[PAD]' of line 1; expected each token once"));
  EXPECT_EQ(legacy_error("bert_uncased", "vocab.txt", "[PAD]\ncaf\xe9\n"),
            in_file(" line 2 is not valid UTF-8: the character starting at byte 3 is cut off at "
                    "the end"));
  EXPECT_EQ(legacy_error("bert_uncased", "vocab.txt", "[PAD]\n[CLS]\n"),
            "the unk_token '[UNK]' is not in 'FILE'; expected it in the vocabulary");
  EXPECT_EQ(legacy_error("bert_uncased", "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n"),
            "the mask_token '[MASK]' of 'DIR/tokenizer_config.json' is not in the vocabulary; "
            "expected the model's special tokens in it");
}

TEST_F(TokenizerFiles, MalformedMergesAndVocabJsonAreRefused) {
  EXPECT_EQ(legacy_error("roberta", "merges.txt", "\xc4\xa0 t\n"),
            in_file(" line 1 is '\\xc4\\xa0 t'; expected the '#version' header, which "
                    "RobertaTokenizer skips unread"));
  EXPECT_EQ(legacy_error("roberta", "merges.txt", "#version: 0.2\n\xc4\xa0 t"),
            in_file(" does not end with a newline; RobertaTokenizer would skip its last line "
                    "'\\xc4\\xa0 t'"));
  EXPECT_EQ(legacy_error("roberta", "merges.txt", "#version: 0.2\n\xc4\xa0 t x\n"),
            in_file(" line 2 is '\\xc4\\xa0 t x'; expected two symbols"));
  EXPECT_EQ(legacy_error("roberta", "merges.txt", "#version: 0.2\nqq zz\n"),
            in_file(" line 2 merges 'qq' and 'zz', but 'qq' is not in the vocabulary"));
  EXPECT_EQ(legacy_error("roberta", "vocab.json", "{\"a\": 0, \"b\": 0}"),
            in_file(" gives the id 0 to both 'a' and 'b'; expected one token per id"));
  EXPECT_EQ(
      legacy_error("roberta", "vocab.json", "{\"a\": 0,").rfind(in_file(" is not valid JSON: "), 0),
      0u);
}

TEST_F(TokenizerFiles, UnsupportedTokenizerOptionsAreRefused) {
  EXPECT_EQ(legacy_error("bert_uncased", "tokenizer_config.json", "{\"do_basic_tokenize\": false}"),
            in_file(": do_basic_tokenize false is not supported"));
  EXPECT_EQ(legacy_error("bert_uncased", "tokenizer_config.json", "{\"do_lower_case\": 1}"),
            in_file(": 'do_lower_case' is a non-negative integer; expected true or false"));
  EXPECT_EQ(legacy_error("roberta", "tokenizer_config.json",
                         "{\"mask_token\": {\"content\": \"<mask>\", \"single_word\": true}}"),
            in_file(" mask_token: single_word true is not supported"));
  EXPECT_EQ(legacy_error("roberta", "added_tokens.json", "{\"<new>\": 50265}"),
            in_file(" exists; added tokens beyond the special tokens are not supported"));
}

}  // namespace in_tokenizer_files_test
}  // namespace
}  // namespace vlbias
