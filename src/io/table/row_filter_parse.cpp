// Row filter parser (row_filter.h): a tokenizer and a recursive-descent parser whose
// recursion is bounded by RowFilter::kMaxNesting, so hostile input neither overflows the
// stack nor takes more than linear time.
#include <cstdint>
#include <optional>
#include <utility>

#include "row_filter_program.h"
#include "table_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/core/utf8.h"
#include "vlbias/io/table/row_filter.h"

namespace vlbias::io_internal {
namespace {

struct Token {
  enum class Kind { Word, Column, Text, Number, Op, LParen, RParen, Comma, End };
  Kind kind = Kind::End;
  std::string text;  // Word / Column: the name; Text: unescaped; Number, Op: as written
  std::size_t position = 0;
  double number = 0;
};

bool is_word_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_word_char(char c) {
  return is_word_start(c) || (c >= '0' && c <= '9') || c == '.';
}
bool keyword(const Token& t, std::string_view word) {
  if (t.kind != Token::Kind::Word || t.text.size() != word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    char c = t.text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != word[i]) return false;
  }
  return true;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Parser {
 public:
  Parser(std::string_view expression, std::string origin) : s_(expression) {
    program_.expression = std::string(expression);
    program_.origin = std::move(origin);
  }

  FilterProgram run() {
    const std::size_t bad = first_invalid_utf8(s_);
    if (bad < s_.size()) fail(bad, "invalid UTF-8");
    advance();
    if (tok_.kind == Token::Kind::End) fail(tok_.position, "the expression is empty");
    program_.root = parse_or(0);
    if (tok_.kind != Token::Kind::End) {
      fail(tok_.position, tok_.kind == Token::Kind::RParen ? "')' without a matching '('"
                                                           : "expected 'and', 'or' or the end");
    }
    return std::move(program_);
  }

 private:
  [[noreturn]] void fail(std::size_t position, std::string_view what) const {
    VLBIAS_FAIL(UsageError, "{}: {} at character {} of the row filter:\n{}", program_.origin, what,
                position + 1, filter_caret(s_, position));
  }

  // ------------------------------------------------------------------ tokens
  void advance() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
    tok_ = Token{};
    tok_.position = i_;
    if (i_ == s_.size()) return;
    const char c = s_[i_];
    if (c == '(' || c == ')' || c == ',') {
      tok_.kind =
          c == '(' ? Token::Kind::LParen : (c == ')' ? Token::Kind::RParen : Token::Kind::Comma);
      ++i_;
    } else if (c == '"' || c == '\'') {
      read_text(c);
    } else if (c == '`') {
      read_quoted_column();
    } else if (is_digit(c) || ((c == '.' || c == '-' || c == '+') && i_ + 1 < s_.size() &&
                               (is_digit(s_[i_ + 1]) || s_[i_ + 1] == '.'))) {
      read_number();
    } else if (is_word_start(c)) {
      tok_.kind = Token::Kind::Word;
      while (i_ < s_.size() && is_word_char(s_[i_])) tok_.text += s_[i_++];
    } else {
      read_operator();
    }
  }

  void read_operator() {
    const std::string_view rest = s_.substr(i_);
    for (const std::string_view op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (rest.substr(0, op.size()) == op) {
        tok_.kind = Token::Kind::Op;
        tok_.text = std::string(op);
        i_ += op.size();
        return;
      }
    }
    if (rest[0] == '=') fail(i_, "'=' is not an operator (write '==')");
    fail(i_, fmt::format("unexpected character {}", io_internal::quoted(rest.substr(0, 1))));
  }

  void read_number() {
    const std::size_t start = i_;
    if (s_[i_] == '-' || s_[i_] == '+') ++i_;
    while (i_ < s_.size() && (is_digit(s_[i_]) || s_[i_] == '.')) ++i_;
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '-' || s_[i_] == '+')) ++i_;
      while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
    }
    tok_.kind = Token::Kind::Number;
    tok_.text = std::string(s_.substr(start, i_ - start));
    if (i_ < s_.size() && is_word_char(s_[i_])) {
      fail(start,
           "a number runs into letters (a column name starting with a digit is written "
           "in backticks)");
    }
    if (!parse_number(tok_.text, &tok_.number)) {
      fail(start, fmt::format("{} is not a finite decimal number", io_internal::quoted(tok_.text)));
    }
  }

  void read_text(char quote) {
    const std::size_t start = i_++;
    tok_.kind = Token::Kind::Text;
    while (true) {
      if (i_ >= s_.size()) fail(start, "unterminated text (no closing quote)");
      const char c = s_[i_++];
      if (c == quote) return;
      if (c != '\\') {
        tok_.text += c;
        continue;
      }
      if (i_ >= s_.size()) fail(start, "unterminated text (no closing quote)");
      const char e = s_[i_++];
      switch (e) {
        case '"':
        case '\'':
        case '\\':
          tok_.text += e;
          break;
        case 'n':
          tok_.text += '\n';
          break;
        case 't':
          tok_.text += '\t';
          break;
        case 'r':
          tok_.text += '\r';
          break;
        case 'u':
          read_unicode_escape();
          break;
        default:
          fail(i_ - 2, "unknown escape (known: \\\" \\' \\\\ \\n \\t \\r \\uXXXX)");
      }
    }
  }

  void read_unicode_escape() {
    const std::size_t at = i_ - 2;
    std::uint32_t cp = 0;
    for (int k = 0; k < 4; ++k, ++i_) {
      const char h = i_ < s_.size() ? s_[i_] : '\0';
      const int v = is_digit(h)              ? h - '0'
                    : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                    : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                             : -1;
      if (v < 0) fail(at, "\\u needs four hexadecimal digits");
      cp = cp * 16 + static_cast<std::uint32_t>(v);
    }
    if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) fail(at, "\\u escape of NUL or a surrogate");
    append_utf8(tok_.text, cp);
  }

  void read_quoted_column() {
    const std::size_t start = i_++;
    tok_.kind = Token::Kind::Column;
    while (true) {
      if (i_ >= s_.size()) fail(start, "unterminated column name (no closing `)");
      const char c = s_[i_++];
      if (c == '`') {
        if (i_ < s_.size() && s_[i_] == '`') {  // `` is a backtick inside the name
          tok_.text += '`';
          ++i_;
          continue;
        }
        break;
      }
      tok_.text += c;
    }
    if (tok_.text.empty()) fail(start, "empty column name ``");
  }

  // ------------------------------------------------------------------ grammar
  std::size_t add(FilterNode node) {
    program_.nodes.push_back(std::move(node));
    return program_.nodes.size() - 1;
  }

  std::size_t parse_chain(int depth, bool is_or) {
    FilterNode chain;
    chain.op = is_or ? FilterOp::Or : FilterOp::And;
    chain.position = tok_.position;
    chain.children.push_back(is_or ? parse_chain(depth, false) : parse_unary(depth));
    while (keyword(tok_, is_or ? "or" : "and")) {
      advance();
      chain.children.push_back(is_or ? parse_chain(depth, false) : parse_unary(depth));
    }
    return chain.children.size() == 1 ? chain.children[0] : add(std::move(chain));
  }
  std::size_t parse_or(int depth) { return parse_chain(depth, true); }

  std::size_t parse_unary(int depth) {
    if (depth >= RowFilter::kMaxNesting) {
      fail(tok_.position, fmt::format("nesting deeper than {} levels", RowFilter::kMaxNesting));
    }
    if (keyword(tok_, "not")) {
      FilterNode node;
      node.op = FilterOp::Not;
      node.position = tok_.position;
      advance();
      node.children.push_back(parse_unary(depth + 1));
      return add(std::move(node));
    }
    if (tok_.kind == Token::Kind::LParen) {
      const std::size_t open = tok_.position;
      advance();
      const std::size_t inner = parse_or(depth + 1);
      if (tok_.kind != Token::Kind::RParen) {
        fail(tok_.kind == Token::Kind::End ? open : tok_.position,
             tok_.kind == Token::Kind::End ? "'(' is never closed" : "expected ')'");
      }
      advance();
      return inner;
    }
    return parse_comparison();
  }

  std::size_t parse_comparison() {
    FilterNode node;
    node.lhs = parse_operand("a column or a value");
    node.position = tok_.position;
    if (tok_.kind == Token::Kind::Op) {
      static constexpr std::pair<std::string_view, FilterOp> kOps[] = {
          {"==", FilterOp::Eq}, {"!=", FilterOp::Ne}, {"<", FilterOp::Lt},
          {"<=", FilterOp::Le}, {">", FilterOp::Gt},  {">=", FilterOp::Ge}};
      for (const auto& op : kOps) {
        if (tok_.text == op.first) node.op = op.second;
      }
      advance();
      node.rhs = parse_operand("a column or a value after the operator");
    } else if (keyword(tok_, "in") || keyword(tok_, "not")) {
      node.op = keyword(tok_, "in") ? FilterOp::In : FilterOp::NotIn;
      advance();
      if (node.op == FilterOp::NotIn) {
        if (!keyword(tok_, "in")) fail(tok_.position, "expected 'in' after 'not'");
        advance();
      }
      parse_list(node);
    } else if (keyword(tok_, "is")) {
      advance();
      node.op = FilterOp::IsEmpty;
      if (keyword(tok_, "not")) {
        node.op = FilterOp::IsNotEmpty;
        advance();
      }
      if (!keyword(tok_, "empty")) fail(tok_.position, "expected 'empty' after 'is'");
      advance();
    } else {
      fail(tok_.position, "expected a comparison (== != < <= > >=, in, not in, is empty)");
    }
    return add(std::move(node));
  }

  void parse_list(FilterNode& node) {
    if (tok_.kind != Token::Kind::LParen) fail(tok_.position, "expected '(' to open the list");
    advance();
    while (tok_.kind != Token::Kind::RParen) {
      if (tok_.kind != Token::Kind::Text && tok_.kind != Token::Kind::Number) {
        fail(tok_.position, "expected a quoted text or a number in the list");
      }
      node.list.push_back(parse_operand(""));
      if (tok_.kind == Token::Kind::Comma) {
        advance();
      } else if (tok_.kind != Token::Kind::RParen) {
        fail(tok_.position, "expected ',' or ')' in the list");
      }
    }
    if (node.list.empty()) fail(tok_.position, "an empty list");
    advance();
  }

  FilterOperand parse_operand(std::string_view expected) {
    FilterOperand o;
    o.position = tok_.position;
    if (tok_.kind == Token::Kind::Number) {
      o.kind = FilterOperand::Kind::Number;
      o.number = tok_.number;
      o.text = tok_.text;
    } else if (tok_.kind == Token::Kind::Text) {
      o.kind = FilterOperand::Kind::Text;
      o.text = tok_.text;
      o.text_is_number = parse_number(o.text, &o.number);
    } else if (tok_.kind == Token::Kind::Column ||
               (tok_.kind == Token::Kind::Word && !is_reserved(tok_))) {
      o.kind = FilterOperand::Kind::Column;
      o.column = column_index(tok_.text, tok_.position);
    } else {
      fail(tok_.position, fmt::format("expected {}", expected));
    }
    advance();
    return o;
  }

  static bool is_reserved(const Token& t) {
    for (const std::string_view k : {"and", "or", "not", "in", "is", "empty"}) {
      if (keyword(t, k)) return true;
    }
    return false;
  }

  std::size_t column_index(const std::string& name, std::size_t position) {
    for (std::size_t c = 0; c < program_.columns.size(); ++c) {
      if (program_.columns[c] == name) return c;
    }
    program_.columns.push_back(name);
    program_.column_position.push_back(position);
    return program_.columns.size() - 1;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  Token tok_;
  FilterProgram program_;
};

}  // namespace

FilterProgram parse_filter(std::string_view expression, std::string origin) {
  return Parser(expression, std::move(origin)).run();
}

std::string filter_caret(std::string_view expression, std::size_t position) {
  // Show at most ~70 bytes around the position, on whole code points.
  constexpr std::size_t kBefore = 50, kAfter = 30;
  std::size_t begin = position > kBefore ? position - kBefore : 0;
  std::size_t end = std::min(expression.size(), position + kAfter);
  const auto continuation = [&](std::size_t k) {
    return k < expression.size() && (static_cast<unsigned char>(expression[k]) & 0xC0) == 0x80;
  };
  while (begin > 0 && continuation(begin)) --begin;
  while (continuation(end)) ++end;
  std::string line = "  ";
  std::string caret = "  ";
  if (begin > 0) {
    line += "...";
    caret += "   ";
  }
  for (std::size_t k = begin; k < end; ++k) {
    const char c = expression[k];
    line += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
    if (k < position && !continuation(k)) caret += ' ';
  }
  if (end < expression.size()) line += "...";
  return line + "\n" + caret + "^";
}

}  // namespace vlbias::io_internal
