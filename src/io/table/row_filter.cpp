// Row filter evaluation (row_filter.h) over a Table or a streamed Record.
#include "vlbias/io/table/row_filter.h"

#include <cmath>
#include <optional>

#include "row_filter_program.h"
#include "table_detail.h"
#include "vlbias/core/error.h"

namespace vlbias {
namespace io_internal {
namespace {

// A value during evaluation: a cell or a literal.
struct FilterValue {
  bool missing = false;
  bool number_typed = false;  // an unquoted number in the expression
  bool is_number = false;     // `number` holds its value
  double number = 0;
  std::string_view text;      // text; empty view for a Numeric column's cell (formatted lazily)
  bool text_pending = false;  // text must be formatted from `number`
  const FilterOperand* operand = nullptr;
};

// Where the cells of one row come from.
class CellSource {
 public:
  virtual ~CellSource() = default;
  virtual FilterValue cell(std::size_t column) const = 0;
  virtual std::string row_name() const = 0;
};

class Evaluator {
 public:
  Evaluator(const FilterProgram& p, const CellSource& cells) : p_(p), cells_(cells) {}

  bool eval(std::size_t index) const {
    const FilterNode& n = p_.nodes[index];
    switch (n.op) {
      case FilterOp::And:
        for (const std::size_t c : n.children) {
          if (!eval(c)) return false;
        }
        return true;
      case FilterOp::Or:
        for (const std::size_t c : n.children) {
          if (eval(c)) return true;
        }
        return false;
      case FilterOp::Not:
        return !eval(n.children[0]);
      case FilterOp::IsEmpty:
      case FilterOp::IsNotEmpty:
        return value(n.lhs).missing == (n.op == FilterOp::IsEmpty);
      case FilterOp::In:
      case FilterOp::NotIn:
        return in_list(n);
      default:
        return compare(n);
    }
  }

 private:
  FilterValue value(const FilterOperand& o) const {
    FilterValue v;
    if (o.kind == FilterOperand::Kind::Column) {
      v = cells_.cell(o.column);
    } else if (o.kind == FilterOperand::Kind::Number) {
      v.number_typed = v.is_number = true;
      v.number = o.number;
      v.text = o.text;
    } else {
      v.is_number = o.text_is_number;
      v.number = o.number;
      v.text = o.text;
    }
    v.operand = &o;
    return v;
  }

  // The value as text ("3", "2.5" for a Numeric column's cell, as Column::text writes it).
  static std::string_view text_of(const FilterValue& v, std::string& scratch) {
    if (!v.text_pending) return v.text;
    scratch = fmt::format("{}", v.number);
    return scratch;
  }

  static bool equal(const FilterValue& a, const FilterValue& b) {
    if (a.is_number && b.is_number) return a.number == b.number;
    std::string sa, sb;
    return text_of(a, sa) == text_of(b, sb);
  }

  bool in_list(const FilterNode& n) const {
    const FilterValue a = value(n.lhs);
    if (a.missing) return false;
    bool found = false;
    for (const FilterOperand& item : n.list) {
      if (equal(a, value(item))) {
        found = true;
        break;
      }
    }
    return n.op == FilterOp::In ? found : !found;
  }

  bool compare(const FilterNode& n) const {
    const FilterValue a = value(n.lhs);
    const FilterValue b = value(n.rhs);
    if (a.missing || b.missing) return false;
    if (n.op == FilterOp::Eq) return equal(a, b);
    if (n.op == FilterOp::Ne) return !equal(a, b);
    int order = 0;
    if (a.is_number && b.is_number) {
      order = a.number < b.number ? -1 : (a.number > b.number ? 1 : 0);
    } else {
      if (a.number_typed || b.number_typed) not_a_number(n, a.is_number ? b : a);
      std::string sa, sb;
      const int c = text_of(a, sa).compare(text_of(b, sb));
      order = c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    switch (n.op) {
      case FilterOp::Lt:
        return order < 0;
      case FilterOp::Le:
        return order <= 0;
      case FilterOp::Gt:
        return order > 0;
      default:
        return order >= 0;
    }
  }

  [[noreturn]] void not_a_number(const FilterNode& n, const FilterValue& v) const {
    const std::string_view op = std::string_view(p_.expression).substr(n.position, 2);
    const std::string shown(op.substr(0, op.size() > 1 && op[1] == '=' ? 2 : 1));
    if (v.operand->kind == FilterOperand::Kind::Column) {
      VLBIAS_FAIL(InputError,
                  "{}: {}, column '{}' holds {}, which is not a number, but '{}' at character {} "
                  "compares it with a number (compare as text by quoting both sides, or filter "
                  "such rows out first)",
                  p_.origin, cells_.row_name(), p_.columns[v.operand->column],
                  io_internal::quoted(v.text), shown, n.position + 1);
    }
    VLBIAS_FAIL(InputError,
                "{}: the text {} at character {} is not a number, but '{}' compares it with "
                "numbers ({})",
                p_.origin, io_internal::quoted(v.text), v.operand->position + 1, shown,
                cells_.row_name());
  }

  const FilterProgram& p_;
  const CellSource& cells_;
};

class TableCells : public CellSource {
 public:
  TableCells(const FilterProgram& p, const Table& t) : t_(t) {
    for (std::size_t c = 0; c < p.columns.size(); ++c) {
      const std::optional<std::size_t> at = t.find(p.columns[c]);
      if (!at) unknown_column(p, c);
      const Column& col = t.columns[*at];
      columns_.push_back(&col);
      // A String column's levels are read as numbers once, not per row.
      std::vector<std::optional<double>> numbers;
      if (col.type == ColumnType::String) {
        for (const std::string& level : col.levels) {
          double v = 0;
          numbers.push_back(parse_number(level, &v) ? std::optional<double>(v) : std::nullopt);
        }
      }
      level_numbers_.push_back(std::move(numbers));
    }
  }

  void set_row(std::size_t row) { row_ = row; }

  FilterValue cell(std::size_t c) const override {
    const Column& col = *columns_[c];
    FilterValue v;
    if (col.missing(row_)) {
      v.missing = true;
    } else if (col.type == ColumnType::Numeric) {
      // Not number_typed: a cell reads the same whether the table or a stream holds it.
      v.is_number = v.text_pending = true;
      v.number = col.numbers[row_];
    } else {
      const std::uint32_t code = col.codes[row_];
      v.text = col.levels[code];
      if (const std::optional<double>& x = level_numbers_[c][code]) {
        v.is_number = true;
        v.number = *x;
      }
    }
    return v;
  }

  std::string row_name() const override {
    return fmt::format("'{}' {}", t_.source, where_row(t_.line_of_row, row_));
  }

 private:
  [[noreturn]] void unknown_column(const FilterProgram& p, std::size_t c) const {
    std::string names;
    for (std::size_t k = 0; k < t_.columns.size() && k < 40; ++k) {
      names += (k ? ", " : "") + t_.columns[k].name;
    }
    if (t_.columns.size() > 40) names += fmt::format(" and {} more", t_.columns.size() - 40);
    VLBIAS_FAIL(InputError,
                "{}: the row filter names column '{}' (character {}), which '{}' does not have "
                "(its columns: {}); text values are quoted (\"text\"), column names with spaces "
                "or keywords are written in backticks:\n{}",
                p.origin, p.columns[c], p.column_position[c] + 1, t_.source, names,
                filter_caret(p.expression, p.column_position[c]));
  }

  const Table& t_;
  std::vector<const Column*> columns_;
  std::vector<std::vector<std::optional<double>>> level_numbers_;
  std::size_t row_ = 0;
};

class RecordCells : public CellSource {
 public:
  RecordCells(const Record& r, std::span<const std::size_t> slots) : r_(r), slots_(slots) {}

  FilterValue cell(std::size_t c) const override {
    const std::size_t i = slots_[c];
    FilterValue v;
    if (r_.missing(i)) {
      v.missing = true;
      return v;
    }
    v.text = r_.text(i);
    v.is_number = parse_number(v.text, &v.number);
    return v;
  }

  std::string row_name() const override {
    return fmt::format("'{}' line {}", r_.source(), r_.line());
  }

 private:
  const Record& r_;
  std::span<const std::size_t> slots_;
};

}  // namespace
}  // namespace io_internal

RowFilter RowFilter::parse(std::string_view expression, std::string origin) {
  RowFilter f;
  f.program_ = std::make_shared<const io_internal::FilterProgram>(
      io_internal::parse_filter(expression, std::move(origin)));
  return f;
}

const std::string& RowFilter::expression() const {
  return program_->expression;
}
const std::vector<std::string>& RowFilter::columns() const {
  return program_->columns;
}

std::vector<bool> RowFilter::evaluate(const Table& table) const {
  io_internal::TableCells cells(*program_, table);
  const io_internal::Evaluator evaluator(*program_, cells);
  std::vector<bool> pass(table.rows);
  for (std::size_t row = 0; row < table.rows; ++row) {
    cells.set_row(row);
    pass[row] = evaluator.eval(program_->root);
  }
  return pass;
}

bool RowFilter::matches(const Record& record, std::span<const std::size_t> record_columns) const {
  VLBIAS_CHECK(record_columns.size() == program_->columns.size(), InternalError,
               "row filter {}: {} record columns for {} filter columns", program_->origin,
               record_columns.size(), program_->columns.size());
  const io_internal::RecordCells cells(record, record_columns);
  return io_internal::Evaluator(*program_, cells).eval(program_->root);
}

}  // namespace vlbias
