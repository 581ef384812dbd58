// The native sequence classifiers (src/score/classifier*.cpp) against the float64 PyTorch
// forward of tools/make_classifier_fixtures.py on five tiny random models (BERT, RoBERTa, XLM-R,
// DistilBERT; erf and tanh GELU; sigmoid and softmax), and their refusals of bad folders.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/io/json.h"
#include "vlbias/score/classifier.h"

namespace vlbias {
namespace {
namespace in_classifier_test {

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing_util::error_of;
using testing_util::fixture_json;

const char* const kCases[] = {"bert_multilabel", "roberta_multilabel", "xlmr_multilabel",
                              "distilbert_single", "bert_tanh_single"};

fs::path fixture_dir(const std::string& name) {
  return fs::path(VLBIAS_SOURCE_DIR) / "tests" / "fixtures" / "classifier" / name;
}

std::vector<std::string> fixture_texts() {
  std::vector<std::string> texts;
  for (const auto& t : fixture_json("classifier/expected.json")["texts"]) {
    texts.push_back(t["text"].get<std::string>());
  }
  return texts;
}

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& t : fixture_json("classifier/expected.json")["texts"]) {
    names.push_back(t["name"].get<std::string>());
  }
  return names;
}

bool close(double got, double want) {
  return std::abs(got - want) <= 1e-5 + 1e-4 * std::abs(want);
}

TEST(SequenceClassifier, MatchesTheIndependentForwardOnEveryFixtureText) {
  const auto& expected = fixture_json("classifier/expected.json");
  const std::vector<std::string> texts = fixture_texts(), names = fixture_names();
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const auto& want = expected["cases"][name];
    const SequenceClassifier model = SequenceClassifier::load(fixture_dir(name));
    std::vector<std::string> labels;
    for (const auto& l : want["labels"]) labels.push_back(l.get<std::string>());
    EXPECT_EQ(model.labels(), labels);
    const ClassifierScores scores = model.score(texts);
    ASSERT_EQ(scores.logits.rows, texts.size());
    EXPECT_EQ(scores.truncated_count, want["truncated"].get<std::size_t>());
    double worst_abs = 0.0, worst_rel = 0.0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      SCOPED_TRACE(names[i]);
      const auto& row = want["rows"][i];
      const std::vector<std::int32_t> ids = row["ids"].get<std::vector<std::int32_t>>();
      EXPECT_EQ(model.tokenizer().encode(texts[i]).ids, ids);
      EXPECT_EQ(scores.tokens[i], ids.size());
      for (std::size_t j = 0; j < labels.size(); ++j) {
        const double logit = row["logits"][j].get<double>();
        const double prob = row["probabilities"][j].get<double>();
        const double got = scores.logits.row(i)[j];
        EXPECT_PRED2(close, got, logit) << "label " << labels[j];
        EXPECT_PRED2(close, scores.probabilities[i * labels.size() + j], prob)
            << "label " << labels[j];
        worst_abs = std::max(worst_abs, std::abs(got - logit));
        worst_rel = std::max(worst_rel, std::abs(got - logit) / std::max(std::abs(logit), 1e-3));
      }
    }
    std::cout << name << ": max |logit error| " << worst_abs << ", max relative " << worst_rel
              << "\n";
  }
}

TEST(SequenceClassifier, DefaultsTheActivationFromTheProblemTypeAndTakesAnOverride) {
  EXPECT_EQ(SequenceClassifier::load(fixture_dir("bert_multilabel")).activation(),
            ScoreActivation::Sigmoid);
  EXPECT_EQ(SequenceClassifier::load(fixture_dir("distilbert_single")).activation(),
            ScoreActivation::Softmax);  // no problem_type
  EXPECT_EQ(SequenceClassifier::load(fixture_dir("bert_tanh_single")).activation(),
            ScoreActivation::Softmax);
  ClassifierOptions o;
  o.activation = ScoreActivation::Sigmoid;
  const SequenceClassifier m = SequenceClassifier::load(fixture_dir("distilbert_single"), o);
  EXPECT_EQ(m.activation(), ScoreActivation::Sigmoid);
  const ClassifierScores s = m.score({"a sentence"});
  EXPECT_DOUBLE_EQ(s.probabilities[0], 1.0 / (1.0 + std::exp(-double{s.logits.row(0)[0]})));
  EXPECT_EQ(parse_score_activation("softmax"), ScoreActivation::Softmax);
  EXPECT_THAT(error_of<UsageError>([] { parse_score_activation("relu"); }), HasSubstr("relu"));
}

// Packed texts never see each other's tokens, so a text's logits in a batch equal its logits
// alone up to float rounding: OpenBLAS picks its kernels by matrix shape (a 10-row product may
// take the small-matrix kernel, a 2000-row one the blocked kernel), which moves the last bits.
TEST(SequenceClassifier, ScoresABatchAsOneTextAtATime) {
  const std::vector<std::string> texts = fixture_texts();
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const SequenceClassifier model = SequenceClassifier::load(fixture_dir(name));
    const ClassifierScores batch = model.score(texts);
    double worst = 0.0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      SCOPED_TRACE(i);
      const ClassifierScores one = model.score({texts[i]});
      for (std::size_t j = 0; j < model.labels().size(); ++j) {
        const double a = one.logits.row(0)[j], b = batch.logits.row(i)[j];
        EXPECT_NEAR(a, b, 1e-6 + 1e-6 * std::abs(b));
        worst = std::max(worst, std::abs(a - b));
      }
    }
    std::cout << name << ": batched vs one at a time, max |logit difference| " << worst << "\n";
  }
}

TEST(SequenceClassifier, GivesTheSameBitsForEveryThreadCount) {
  const std::vector<std::string> texts = fixture_texts();
  const unsigned before = thread_count();
  for (const char* name : {"bert_multilabel", "xlmr_multilabel"}) {
    SCOPED_TRACE(name);
    const SequenceClassifier model = SequenceClassifier::load(fixture_dir(name));
    set_thread_count(1);
    const Matrix one = model.score(texts).logits;
    for (unsigned threads : {2u, 3u, 8u}) {
      SCOPED_TRACE(threads);
      set_thread_count(threads);
      const Matrix many = model.score(texts).logits;
      EXPECT_EQ(std::memcmp(one.data.data(), many.data.data(), one.data.size() * sizeof(float)), 0);
    }
  }
  set_thread_count(before);
}

TEST(SequenceClassifier, ScoresEmptyTextsAndCountsTruncation) {
  const SequenceClassifier model = SequenceClassifier::load(fixture_dir("bert_multilabel"));
  EXPECT_EQ(model.max_length(), 40u);  // config.json max_position_embeddings
  std::string long_text;
  for (int i = 0; i < 60; ++i) long_text += "one two ";
  const ClassifierScores s = model.score({"", long_text, "short"});
  EXPECT_EQ(s.tokens,
            (std::vector<std::size_t>{
                2, 40, model.tokenizer().encode("short").ids.size()}));  // "": [CLS] [SEP]
  EXPECT_EQ(s.truncated, (std::vector<bool>{false, true, false}));
  EXPECT_EQ(s.truncated_count, 1u);
  EXPECT_TRUE(std::isfinite(s.logits.row(0)[0]));
  ClassifierOptions o;
  o.max_length = 8;
  const SequenceClassifier short_model =
      SequenceClassifier::load(fixture_dir("bert_multilabel"), o);
  EXPECT_EQ(short_model.max_length(), 8u);
  const ClassifierScores t = short_model.score({"one two three four five six seven"});
  EXPECT_EQ(t.tokens[0], 8u);
  EXPECT_EQ(t.truncated_count, 1u);
}

TEST(SequenceClassifier, RefusesAMaxLengthThePositionsCannotHoldAndIdsOutOfRange) {
  ClassifierOptions o;
  o.max_length = 41;
  EXPECT_THAT(
      error_of<UsageError>([&] { SequenceClassifier::load(fixture_dir("roberta_multilabel"), o); }),
      HasSubstr("1 to 40 tokens"));
  const SequenceClassifier model = SequenceClassifier::load(fixture_dir("bert_multilabel"));
  EXPECT_THAT(error_of<InputError>([&] {
                model.logits({{101, 3000, 102}});
              }),
              HasSubstr("token id 3000 at position 1"));
  EXPECT_THAT(error_of<InputError>([&] { model.logits({{}}); }), HasSubstr("0 tokens"));
  EXPECT_THAT(error_of<InputError>([&] { model.logits({std::vector<std::int32_t>(41, 5)}); }),
              HasSubstr("41 tokens"));
}

}  // namespace in_classifier_test
}  // namespace
}  // namespace vlbias
