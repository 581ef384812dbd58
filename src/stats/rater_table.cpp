// Ratings read from tables, long (one row per rating) or wide (one column per rater), and the
// names of scales and weights (include/vlbias/stats/rater_agreement.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/stats/rater_agreement.h"

namespace vlbias::stats {

namespace {

// One rating before the units are laid out: where it came from and what it says.
struct RawRating {
  std::uint32_t unit = 0, rater = 0, category = 0;
  std::size_t row = 0;
};

// The distinct ratings of `columns` in scale order. Numbers when every column is Numeric
// (or when `need_numbers`: a String column is then the InputError Table::numeric raises,
// naming its first non-numeric row), texts otherwise.
class CategoryIndex {
 public:
  CategoryIndex(const Table& table, const std::vector<const Column*>& columns, bool need_numbers) {
    numeric_ = std::all_of(columns.begin(), columns.end(),
                           [](const Column* c) { return c->type == ColumnType::Numeric; });
    if (need_numbers && !numeric_) {
      for (const Column* c : columns) table.numeric(c->name, true);  // throws, naming the row
    }
    for (const Column* c : columns) {
      for (std::size_t row = 0; row < table.rows; ++row) {
        if (c->missing(row)) continue;
        if (numeric_) {
          numbers_.try_emplace(c->numbers[row], Entry{c->text(row), 0});
        } else {
          texts_.emplace(c->text(row), 0);
        }
      }
    }
    std::uint32_t next = 0;
    for (auto& entry : numbers_) entry.second.index = next++;
    for (auto& entry : texts_) entry.second = next++;
  }

  // Category index of a present cell.
  std::uint32_t of(const Column& column, std::size_t row) const {
    if (numeric_) return numbers_.at(column.numbers[row]).index;
    return texts_.at(column.text(row));
  }

  void fill(RatingData& data) const {
    for (const auto& entry : numbers_) {
      data.categories.push_back(entry.second.text);
      data.values.push_back(entry.first);
    }
    for (const auto& entry : texts_) {
      data.categories.push_back(entry.first);
      data.values.push_back(kNaN);
    }
  }

 private:
  struct Entry {
    std::string text;  // of the first cell holding the number
    std::uint32_t index = 0;
  };
  bool numeric_ = true;
  std::map<double, Entry> numbers_;
  std::map<std::string, std::uint32_t> texts_;  // by bytes
};

// Lays out `ratings` by unit (table order), raters sorted within a unit. A rater rating a unit
// several times: identical repeats count once (data.repeated); differing ones are an
// InputError naming two rows, or, with `drop_conflicting`, dropped (data.conflicting).
void lay_out(const Table& table, std::vector<RawRating>& ratings, bool drop_conflicting,
             RatingData& data) {
  VLBIAS_CHECK(!ratings.empty(), InputError,
               "{} has no ratings ({} rows: {} without a rating, {} without a unit or rater): "
               "nothing to agree on",
               table.source, table.rows, data.missing, data.unattributed);
  std::stable_sort(ratings.begin(), ratings.end(), [](const RawRating& a, const RawRating& b) {
    return a.unit != b.unit ? a.unit < b.unit : a.rater < b.rater;
  });
  data.offsets.assign(data.units.size() + 1, 0);
  for (std::size_t i = 0; i < ratings.size();) {
    const RawRating& r = ratings[i];
    std::size_t end = i + 1;
    const RawRating* differing = nullptr;
    for (; end < ratings.size() && ratings[end].unit == r.unit && ratings[end].rater == r.rater;
         ++end) {
      if (ratings[end].category != r.category && differing == nullptr) differing = &ratings[end];
    }
    if (differing != nullptr) {
      VLBIAS_CHECK(drop_conflicting, InputError,
                   "{}: rater '{}' rates unit '{}' twice, differently (rows {} and {}); expected "
                   "one rating per rater and unit (--conflicting drop leaves such ratings out)",
                   table.source, data.raters[r.rater], data.units[r.unit], table.line_of_row[r.row],
                   table.line_of_row[differing->row]);
      ++data.conflicting;
    } else {
      data.repeated += end - i - 1;
      data.rater_of.push_back(r.rater);
      data.category_of.push_back(r.category);
      ++data.offsets[r.unit + 1];
    }
    i = end;
  }
  for (std::size_t u = 0; u < data.units.size(); ++u) data.offsets[u + 1] += data.offsets[u];
}

std::vector<const Column*> columns_of(const Table& table, const std::vector<std::string>& names) {
  std::vector<const Column*> out;
  for (const std::string& name : names) out.push_back(&table.column(name));
  return out;
}

// The unit key of a row: the unit columns' texts joined by ", " (the lookup key joins them by
// a control character so that "a, b" + "c" and "a" + "b, c" stay apart).
std::string unit_text(const std::vector<const Column*>& columns, std::size_t row,
                      std::string* lookup) {
  std::string shown;
  lookup->clear();
  for (const Column* c : columns) {
    const std::string text = c->text(row);
    shown += (shown.empty() ? "" : ", ") + text;
    *lookup += text;
    lookup->push_back('\x1f');
  }
  return shown;
}

}  // namespace

RatingScale parse_rating_scale(const std::string& text, const char* option) {
  if (text == "nominal") return RatingScale::Nominal;
  if (text == "ordinal") return RatingScale::Ordinal;
  if (text == "interval") return RatingScale::Interval;
  VLBIAS_FAIL(UsageError, "{} must be nominal, ordinal or interval; got '{}'.", option, text);
}

KappaWeights parse_kappa_weights(const std::string& text, const char* option) {
  if (text == "none") return KappaWeights::None;
  if (text == "linear") return KappaWeights::Linear;
  if (text == "quadratic") return KappaWeights::Quadratic;
  VLBIAS_FAIL(UsageError, "{} must be none, linear or quadratic; got '{}'.", option, text);
}

const char* rating_scale_name(RatingScale scale) {
  return scale == RatingScale::Nominal   ? "nominal"
         : scale == RatingScale::Ordinal ? "ordinal"
                                         : "interval";
}

const char* kappa_weights_name(KappaWeights weights) {
  return weights == KappaWeights::None     ? "none"
         : weights == KappaWeights::Linear ? "linear"
                                           : "quadratic";
}

RatingData ratings_from_long_table(const Table& table, const std::vector<std::string>& unit_columns,
                                   const std::string& rater_column,
                                   const std::string& rating_column, bool need_numbers,
                                   bool drop_conflicting) {
  VLBIAS_CHECK(!unit_columns.empty(), InputError, "{}: no unit column was named", table.source);
  const std::vector<const Column*> units = columns_of(table, unit_columns);
  const Column& rater = table.column(rater_column);
  const Column& rating = table.column(rating_column);
  const CategoryIndex categories(table, {&rating}, need_numbers);
  RatingData data;
  categories.fill(data);
  std::unordered_map<std::string, std::uint32_t> unit_of, rater_of;
  std::vector<RawRating> ratings;
  std::string lookup;
  for (std::size_t row = 0; row < table.rows; ++row) {
    if (rating.missing(row)) {
      ++data.missing;
      continue;
    }
    const bool unnamed =
        rater.missing(row) ||
        std::any_of(units.begin(), units.end(), [row](const Column* c) { return c->missing(row); });
    if (unnamed) {  // a rating of nobody or of nothing: it cannot be paired
      ++data.unattributed;
      continue;
    }
    const std::string shown = unit_text(units, row, &lookup);
    const auto unit = unit_of.emplace(lookup, static_cast<std::uint32_t>(data.units.size()));
    if (unit.second) data.units.push_back(shown);
    const std::string who = rater.text(row);
    const auto r = rater_of.emplace(who, static_cast<std::uint32_t>(data.raters.size()));
    if (r.second) data.raters.push_back(who);
    ratings.push_back({unit.first->second, r.first->second, categories.of(rating, row), row});
  }
  lay_out(table, ratings, drop_conflicting, data);
  return data;
}

RatingData ratings_from_wide_table(const Table& table, const std::vector<std::string>& unit_columns,
                                   const std::vector<std::string>& rater_columns,
                                   bool need_numbers) {
  VLBIAS_CHECK(!rater_columns.empty(), InputError, "{}: no rater column was named", table.source);
  const std::vector<const Column*> units = columns_of(table, unit_columns);
  const std::vector<const Column*> raters = columns_of(table, rater_columns);
  const CategoryIndex categories(table, raters, need_numbers);
  RatingData data;
  categories.fill(data);
  data.raters = rater_columns;
  std::vector<RawRating> ratings;
  std::string lookup;
  for (std::size_t row = 0; row < table.rows; ++row) {
    const auto unit = static_cast<std::uint32_t>(row);
    data.units.push_back(units.empty() ? fmt::format("row {}", table.line_of_row[row])
                                       : unit_text(units, row, &lookup));
    for (std::size_t r = 0; r < raters.size(); ++r) {
      if (raters[r]->missing(row)) {
        ++data.missing;
        continue;
      }
      ratings.push_back({unit, static_cast<std::uint32_t>(r), categories.of(*raters[r], row), row});
    }
  }
  lay_out(table, ratings, false, data);
  return data;
}

}  // namespace vlbias::stats
