#pragma once
// Ranking fairness metrics of paper 001 (docs/methods.md#skew), after
// Geyik, Ambler and Kenthapadi (2019), "Fairness-Aware Ranking in Search &
// Recommendation Systems": Skew@k, MaxSkew@k and NDKL.
//
// Items are ranked by score, descending. Ties are broken by input order (a
// stable sort): of two items with equal scores, the one given first ranks
// higher. kTieRule states this rule in outputs.
//
// Errors: no items, fewer than two classes, a class with no item, a label
// outside the classes, scores and labels of different lengths, or a NaN score
// are InputError (bad data); k outside 1..n is UsageError (bad option).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vlbias {
struct Table;
}

namespace vlbias {

inline constexpr const char* kTieRule = "stable: input order";

// The items to rank: scores[i] and labels[i] belong to item i; labels index
// class_names (0 .. class_names.size()-1). Every class must occur at least once,
// so that the base-rate desired distribution is positive for every class.
struct RankedItems {
  std::vector<double> scores;
  std::vector<std::uint32_t> labels;
  std::vector<std::string> class_names;
};

// The desired (target) class distribution: uniform over the classes (default),
// or the base rate, i.e. each class's share of all n items.
enum class DesiredDistribution { Uniform, BaseRate };

// Skew@k of a class absent from the top k: ln 0 = -inf (the authors' code,
// default), or 0 (the SocialCounterfactuals code).
enum class AbsentClass { NegativeInfinity, Zero };

// "uniform" / "base-rate" and "-inf" / "zero"; parse_* throw UsageError naming
// the accepted values.
std::string to_string(DesiredDistribution d);
std::string to_string(AbsentClass a);
DesiredDistribution parse_desired_distribution(const std::string& text);
AbsentClass parse_absent_class(const std::string& text);

struct SkewOptions {
  std::size_t k = 0;  // 1..n
  DesiredDistribution desired = DesiredDistribution::Uniform;
  AbsentClass absent = AbsentClass::NegativeInfinity;
};

struct SkewResult {
  std::size_t k = 0;
  std::size_t n = 0;
  std::vector<double> skew;               // per class: ln(p_topk(c) / p_desired(c))
  double max_skew = 0.0;                  // max over classes (may be -inf)
  std::vector<std::size_t> topk_counts;   // per class: items of the class in the top k
  std::vector<double> desired;            // per class: p_desired(c)
  std::vector<std::size_t> class_counts;  // per class: items of the class among all n
};

struct NdklResult {
  double ndkl = 0.0;
  std::size_t n = 0;
  std::vector<double> desired;            // per class
  std::vector<std::size_t> class_counts;  // per class
};

// The classes of the items from column `attribute` of `table` (one row per item): labels and
// class names, ordered as group_by orders the column's values (numbers numerically, text by
// bytes). InputError naming the table for a row without a class, fewer than two classes, or
// no rows. The scores are the caller's.
void set_classes(RankedItems& items, const Table& table, const std::string& attribute);

// Item indices from best to worst: score descending, ties by input order.
// Throws InputError for a NaN score (naming the item, 0-based).
std::vector<std::size_t> rank_order(const std::vector<double>& scores);

// The desired distribution over the classes of `items` (validated).
std::vector<double> desired_distribution(const RankedItems& items, DesiredDistribution desired);

// Skew@k(c) = ln(p_topk(c) / p_desired(c)) for every class c, and
// MaxSkew@k = max_c Skew@k(c) (Geyik et al. 2019, section 3.1).
SkewResult skew_at_k(const RankedItems& items, const SkewOptions& options);

// NDKL = (1/Z) sum_{i=1..n} KL(D_top_i || D_desired) / log2(i+1),
// Z = sum_{i=1..n} 1/log2(i+1), KL with natural logarithms and 0 ln 0 = 0
// (Geyik et al. 2019, section 3.2). n is the number of items. NDKL is 0 only
// when every prefix matches the desired distribution, which with two or more
// classes is impossible at i = 1: it is positive for every input.
NdklResult ndkl(const RankedItems& items, DesiredDistribution desired);

}  // namespace vlbias
