#pragma once
// Tables (src/io): CSV, JSONL or Parquet (parquet.h), one row per item, columns are its labels.
//
// A column is Numeric when every non-missing cell parses completely as a finite
// number; otherwise it is String (dictionary-encoded). An empty CSV cell or a
// JSON null/absent key is missing. Text such as "NaN" or "inf" makes a column a
// String column, so asking for it as a number is a clear error that names the
// first offending row.
//
// Numbers in CSV are decimal: an optional sign ('+' or '-'), digits with an
// optional '.', an optional exponent ("7", "-2.5", "+.5", "1e-3"), with ASCII
// spaces and tabs around them ignored for this test only (the text of a String
// column keeps them). Hex, "NaN", "inf" and values beyond double's range are
// text; values too small for a double read as 0. Leading zeros are allowed
// ("007" is 7). A column with no present cell at all is Numeric.
//
// Row numbers in messages are the file's line numbers for CSV (header = line 1)
// and the 1-based line numbers for JSONL.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vlbias {

enum class ColumnType { Numeric, String };

struct Column {
  static constexpr std::uint32_t kMissing = std::numeric_limits<std::uint32_t>::max();

  std::string name;
  ColumnType type = ColumnType::String;
  // Numeric: one value per row, NaN where missing.
  std::vector<double> numbers;
  // String: codes[row] indexes `levels` (in order of first appearance), kMissing where missing.
  std::vector<std::uint32_t> codes;
  std::vector<std::string> levels;
  // JSONL: a String column that also holds JSON numbers keeps where each kind first appeared,
  // so that asking for it as a number names both rows and their JSON types.
  struct MixedTypes {
    std::size_t number_row = 0;  // first row holding a JSON number
    std::size_t text_row = 0;    // first row holding something else
    const char* text_type = "";  // "a string", "a boolean", "an array"
  };
  std::optional<MixedTypes> mixed;

  std::size_t size() const { return type == ColumnType::Numeric ? numbers.size() : codes.size(); }
  bool missing(std::size_t row) const;
  // The cell as text: the level for strings, the shortest round-trip form for
  // numbers ("3", "2.5"), "" when missing.
  std::string text(std::size_t row) const;
};

struct Table {
  std::string source;  // file path (or "<memory>"), used in messages
  std::size_t rows = 0;
  std::vector<Column> columns;
  // Source line number of each row (for messages).
  std::vector<std::size_t> line_of_row;

  std::optional<std::size_t> find(std::string_view name) const;
  // Throws InputError naming the file, the column and the columns that exist.
  const Column& column(std::string_view name) const;
  // Values of a numeric column. Throws InputError if the column is absent, is a
  // String column (naming the first non-numeric row and its text), or, when
  // allow_missing is false, has a missing cell (naming its row).
  const std::vector<double>& numeric(std::string_view name, bool allow_missing = false) const;
};

// Appends a Numeric column (NaN = missing) of table.rows values, e.g. scores
// computed per item, so they can be grouped and written with the labels.
// InputError when the name exists or the length differs from table.rows.
void add_numeric_column(Table& table, std::string name, std::vector<double> values);
// Appends a String column of table.rows texts ("" = missing), dictionary-encoded.
void add_string_column(Table& table, std::string name, const std::vector<std::string>& values);

struct CsvOptions {
  char delimiter = ',';
  // Every column String, each cell's text as written (no number test): for re-writing a
  // file vlbias wrote byte for byte ("007" stays "007").
  bool text_only = false;
};

// Reads a table, choosing the format by extension: .csv / .tsv (tab) / .jsonl /
// .ndjson / .parquet, or a folder of .parquet shards read as one table (parquet.h).
// Throws InputError for unreadable files, unknown extensions and malformed content
// (one sentence naming file and line). A regular file or a pipe (named pipe,
// /dev/stdin) is read, a pipe once and hashed as read for provenance (Parquet is
// memory-mapped: pipes refused); a device, socket or folder (other than one of
// .parquet shards) is a UsageError before anything is read (input_file.h).
Table read_table(const std::string& path);
// RFC 4180 CSV with a header row, UTF-8 (a BOM is skipped). Quoted fields may
// contain delimiters, doubled quotes and newlines. Errors: empty file, header
// only (no rows) is allowed and gives rows = 0, duplicate or empty header names (except
// an empty first name, pandas' index column, which reads as "Unnamed: 0" as in pandas),
// ragged rows, unterminated quotes, text after a closing quote, invalid UTF-8.
// A quoted field written with a formula-injection guard ("'=x", "''-y": see append_csv_cell)
// reads without its first single quote ("=x", "'-y"); unquoted fields are kept as they are.
// Lines end in LF, CRLF or a lone CR; the last newline is optional. Empty lines
// are skipped (a missing value in a one-column file is written ""). A quote
// inside an unquoted field is kept as a literal character. Files are
// memory-mapped and parsed in one pass; pages behind the parser are released.
Table read_csv(const std::string& path, const CsvOptions& options = {});
Table parse_csv(std::string_view text, const std::string& source, const CsvOptions& options = {});
// JSON Lines, one object per line (blank lines skipped), parsed with simdjson
// in a streaming fashion. Nested objects are flattened with "." ("a.b");
// arrays are kept as their JSON text; booleans as "true"/"false"; null = missing.
// A key holding numbers in some rows and strings in others makes a String column.
// JSON strings stay text even when they hold digits ("3"); numbers in a String
// column read as their shortest round-trip text ("30", "2.5"). An empty string
// is missing, as an empty CSV cell is; an empty object adds no column. Errors
// name the line: malformed JSON, a line that is not an object, a key given
// twice (also after flattening: "a.b" and {"a":{"b":..}}), an empty key, and
// input without any object.
Table read_jsonl(const std::string& path);
Table parse_jsonl(std::string_view text, const std::string& source);

// Writes a table as RFC 4180 CSV (quoting only where needed). Written to a
// temporary name and renamed when complete. Numbers use their shortest
// round-trip text; text cells (and the header) go through append_csv_cell.
// Throws InputError (with strerror) when it cannot write.
void write_csv(const Table& table, const std::string& path);

// Appends one text cell as every CSV vlbias writes has it (write_csv, the report's chart
// tables): quoted where RFC 4180 needs it, and with spreadsheet formula injection defused as
// OWASP recommends: a text starting with =, +, -, @, tab, CR, LF or NUL is written quoted
// with a single quote in front ("'=HYPERLINK(...)"), which spreadsheets show as text instead
// of evaluating. Numbers are never changed: a text that is exactly a decimal number ("-1",
// "-0.5", "+2", "1e-3") is written as is, as is a text of one character ("-", "+": no formula
// fits in it). A text of single quotes followed by one of those characters gets one more
// quote, so that read_csv, which drops the first quote of a quoted field that starts with
// quotes and then one of those characters, reads back exactly what was written.
void append_csv_cell(std::string& out, std::string_view text);

// ------------------------------------------------------------------ grouping

// Rows grouped by the values of one or more columns (intersectional groups).
struct Grouping {
  static constexpr std::uint32_t kNoGroup = std::numeric_limits<std::uint32_t>::max();

  std::vector<std::string> columns;
  // keys[g][c] = text of column c for group g. Groups are sorted by key
  // (numeric columns numerically, string columns lexicographically by bytes).
  std::vector<std::vector<std::string>> keys;
  std::vector<std::size_t> sizes;  // n per group (all > 0)
  // kNoGroup where a key cell is missing, and for rows outside the row mask.
  std::vector<std::uint32_t> group_of_row;
  std::size_t rows_with_missing_key = 0;  // among the rows in the mask
  // Combinations of observed levels (cross product of the columns' levels)
  // that have no rows: the empty intersectional cells, reported not dropped.
  // A level is observed when some row in the mask holds it. In key order; left
  // empty, with a warning, when the cross product exceeds 100000 combinations.
  std::vector<std::vector<std::string>> empty_cells;

  std::size_t size() const { return keys.size(); }
  // "race=Black, gender=Female"
  std::string label(std::size_t g) const;
};

// Throws InputError for unknown columns (naming the file and available columns),
// an empty column list or a column listed twice. Only rows where `row_mask` is
// empty or true are grouped; a mask of the wrong length is an InternalError.
Grouping group_by(const Table& table, const std::vector<std::string>& columns,
                  const std::vector<bool>& row_mask = {});

// ------------------------------------------------------- embeddings x tables

// Maps each table row to a row of an embedding matrix with `matrix_rows` rows.
// By row (id_column empty): requires table.rows == matrix_rows, identity map.
// By id: `index` is a table with one row per matrix row (row i = matrix row i)
// holding `id_column`; every table row's id must appear exactly once in index.
// Throws InputError for count mismatches, duplicate ids in the index, and table
// ids absent from the index (naming the first few), or a missing id cell on
// either side; UsageError when an id column is given without an index. Ids
// compare as numbers when both columns are Numeric, otherwise as text (a
// Numeric column's shortest round-trip text). Table ids may repeat.
std::vector<std::size_t> join_rows(const Table& table, std::size_t matrix_rows,
                                   const std::string& id_column = "", const Table* index = nullptr);

}  // namespace vlbias
