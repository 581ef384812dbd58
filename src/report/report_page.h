#pragma once
// The HTML report's building blocks (src/report): a cursor into results.json that
// remembers where each number came from, data tables whose numbers carry their JSON
// pointer, and the page (header, findings, sections, figures) written as polyglot
// XHTML: well-formed XML that browsers read as HTML5, with inline CSS and SVG only.
//
// Every number printed from results.json is written as
//   <span|td data-ptr="/analyses/..." data-fmt="g4">0.02134</span|td>
// so a test can check that the report shows exactly what results.json holds.
#include <cmath>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "svg_chart.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/power_results.h"
#include "vlbias/report/scores_results.h"

namespace vlbias::report_internal {

// How a number is shown: g4 = 4 significant digits, p = a p-value (3 significant digits,
// scientific below 0.001), int = an integer count, pct = a share in [0, 1] as a percent
// with one decimal. null / NaN shows "n/a", infinities "inf" / "-inf".
enum class Fmt { g4, p, integer, pct };
std::string format_number(double value, Fmt fmt);
const char* fmt_name(Fmt fmt);
// The Fmt named by fmt_name; InputError for anything else.
Fmt parse_fmt(const std::string& name);

// A node of results.json and its RFC 6901 pointer. A missing key or index gives a null
// node (whose pointer still names where it was looked for).
class Node {
 public:
  Node(const Json* json, std::string ptr) : json_(json), ptr_(std::move(ptr)) {}
  Node operator[](const std::string& key) const;
  Node operator[](std::size_t index) const;
  bool null() const { return json_ == nullptr || json_->is_null(); }
  bool has(const std::string& key) const;
  std::size_t size() const;  // array/object size; 0 otherwise
  double number() const;     // NaN for null or non-numbers
  std::string str() const;   // "" for non-strings
  bool boolean() const;      // false for non-booleans
  const Json& json() const;
  const std::string& ptr() const { return ptr_; }
  // The object's keys, in order.
  std::vector<std::string> keys() const;

 private:
  const Json* json_;
  std::string ptr_;
};

// A group key object ({"race": "Black", "gender": "female"}) as "Black female".
std::string group_label(const Node& key);

// A number of results.json read through a typed section (e.g. lvlm_results.h), with its
// pointer: what a Node gives, for readers that hold structs, not Json.
struct NumberAt {
  double value;
  std::string ptr;
};

// An inline number from results.json: <span data-ptr=... data-fmt=...>text</span>.
std::string value_span(const Node& node, Fmt fmt = Fmt::g4);
std::string value_span(const NumberAt& x, Fmt fmt = Fmt::g4);

struct Cell {
  std::string text;  // shown text (numbers: format_number)
  double value = 0;  // numbers: the full-precision value (NaN = null)
  std::string ptr;   // numbers: where in results.json
  Fmt fmt = Fmt::g4;
  bool numeric = false;
};
Cell cell(const Node& node, Fmt fmt = Fmt::g4);
Cell cell(const NumberAt& x, Fmt fmt = Fmt::g4);
Cell cell(std::string text);

// The numbers behind a chart (or a plain table), written to RUN_DIR/tables/<name>.csv.
struct DataTable {
  std::string name;
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  void add(std::vector<Cell> row) { rows.push_back(std::move(row)); }
};

// One sentence of the findings summary; `magnitude` orders them, largest first, within
// their study (`rank` orders studies: smaller first).
struct Finding {
  int rank = 0;
  double magnitude = 0;
  std::string html;
};

class Page {
 public:
  explicit Page(const Json& results);
  const Node& root() const { return root_; }

  // Header: what was audited, as label -> inline HTML (may hold value spans).
  void fact(std::string label, std::string html);
  // A sentence shown under the title (e.g. that the data are synthetic).
  void about(std::string text);
  void finding(Finding f) { findings_.push_back(std::move(f)); }
  // Starts a section (closing the previous one); `intro` is plain text.
  void section(const std::string& id, const std::string& title, const std::string& intro = "");
  void paragraph_html(std::string html);
  // A chart with its caption, its numbers in a collapsible table under it, and the CSV
  // written beside results.json. A chart without rows is left out (with a note).
  void figure(std::string svg, const std::string& caption, DataTable numbers);
  // A table shown in full (also written as CSV).
  void table(const std::string& caption, DataTable numbers);
  void note(std::string text) { notes_.push_back(std::move(text)); }

  std::string render() const;
  // Every DataTable of the page, for writing as CSV.
  const std::vector<DataTable>& tables() const { return tables_; }

 private:
  std::string table_html(const DataTable& t) const;
  // "fig_<slug of name>", made unique within the page (_2, _3, ...).
  std::string unique_name(const std::string& name);
  void close_section();
  // The parts of render(): the <head> and header (what, when, how), the findings section,
  // the notes section.
  std::string render_head(const std::string& title) const;
  std::string render_findings() const;
  std::string render_notes() const;

  Node root_;
  std::vector<std::pair<std::string, std::string>> facts_;
  std::vector<std::string> about_;
  std::vector<Finding> findings_;
  std::vector<std::pair<std::string, std::string>> toc_;
  std::string body_;
  bool in_section_ = false;
  int figures_ = 0;
  std::vector<DataTable> tables_;
  std::vector<std::string> notes_;
  std::set<std::string> used_names_;
};

// Kind-specific pages (report_<kind>.cpp): add the facts, findings and sections of one
// audit kind.
void build_social_perception(Page& page);
// The social-perception sections about prompts and valences (dual_encoder_page_prompts.cpp).
void prompt_sections(Page& page);
void build_trait_pairs(Page& page);
// The trait-pairs analyses.confidence section (trait_pairs_page.cpp).
void confidence_section(Page& page);
// A test's statistic and effect size in words ("welch" -> "Welch t", "cohens_d" -> "Cohen's
// d"; dual_encoder_page.cpp).
std::string statistic_name(const std::string& test);
std::string effect_name(const std::string& name);
// The trait-pairs analyses.explain section: CAM mass per group and the overlays
// (explain_page.cpp).
void explain_section(Page& page);
void build_geo_diversity(Page& page);
void build_lvlm_counterfactual(Page& page);
void build_visual_stereotypes(Page& page);
// The representation audit (issue 42; representation_page.cpp).
void build_representation(Page& page);
// The tests of one attribute against one hypothesis ("parity", "target") in the representation
// audit's analyses.tests, or a null node (representation_page.cpp; the summary reads it too).
Node representation_hypothesis(const Node& tests, const std::string& attribute,
                               const char* hypothesis);
// The comparison of runs (`vlbias compare-runs`, kind "comparison"; compare_runs_page.cpp).
void build_comparison(Page& page);

// Helpers shared by the kinds.
inline std::string esc(const std::string& s) {
  return xml_escape(s);
}
void add_unique(std::vector<std::string>& v, const std::string& x);
// "prompt=Hiring, mitigation=M1" for an LVLM by-level object; "all" when absent or empty.
std::string by_label(const Node& by);

// One cell of a heatmap over labelled rows and columns: its value, its p_holm (NaN for none;
// "*" marks p_holm < kAlpha) and its row in the chart's data table.
struct GridItem {
  std::string row, col;
  double value;
  double p_holm;
  std::vector<Cell> table_row;
};
// Fills `h` (row and column labels in first-seen order, values, marks) and `table` (the
// items' rows in grid order). A (row, column) without an item is an empty cell.
void fill_heatmap(const std::vector<GridItem>& items, Heatmap& h, DataTable& table);

// Findings helpers shared by the kinds.
constexpr double kAlpha = 0.05;
// "p_holm = <span>" or "p_holm &lt; 1e-300"-style text for a node.
std::string p_text(const std::string& name, const Node& p);
std::string p_text(const std::string& name, const NumberAt& p);
// "95% CI [<span>, <span>]" from an interval object {lower, upper, level}; `level` is used
// when the object has none (NaN: "CI").
std::string ci_text(const Node& ci, double level = NAN);
// The same from a typed contract's interval (a NaN level: "CI").
std::string ci_text(const NumberAt& lower, const NumberAt& upper, double level);

// Rates per group (refused answers, filtered generations): the table cells and the finding of
// a chi-square test of equal rates as results.json holds it (stats::chi_square_rates: statistic,
// df, p_value, effect_size = Cramer's V, note), shared by the pages that report rates.
// The cells: chi_square, df, p, cramers_v, note.
std::vector<Cell> rate_test_cells(const Node& test);
// The same for a typed contract's test (e.g. geo_results.h) at `ptr`.
std::vector<Cell> rate_test_cells(const stats::TestResult& test, const std::string& ptr);
// A finding "WHAT differs across ACROSS (chi2 = .., Cramer's V = .., p = ..)." when p < kAlpha.
void rate_test_finding(Page& page, const Node& test, const std::string& what,
                       const std::string& across);
void rate_test_finding(Page& page, const stats::TestResult& test, const std::string& ptr,
                       const std::string& what, const std::string& across);

// The power statement of a null test whose entry carries `power` (audits/power_pilot.h): "No
// significant gap in LABEL (p_holm = ..); with these sample sizes the study would detect a gap
// of MDE or more with 80% power (...)". power_section lists them for every such test of the
// dual-encoder analyses (power_page.cpp), when results.json has analyses.power.
// `w` is the entry at `ptr` (power_results.h).
std::string power_statement(const TestPower& w, const std::string& ptr);
void power_section(Page& page);

// analyses.scores of the representation and geo-diversity kinds (src/audits/scores_by_group.h;
// scores_page.cpp): per scored column and grouping a chart and table of each group's rate or
// mean with its interval, the test across groups and a finding when it is significant. Nothing
// when the node is null.
void scores_section(Page& page, const ScoresSection& scores);

// results.json's "exemplars" block (src/audits/exemplars.h; exemplars_page.cpp): a section
// "Exemplar images per <labels>" with each cell's grid of embedded thumbnails, a line naming the
// images not shown and why, and the table of every picked image's path. `what` names the images
// ("generated images"); `id` names the section and its table, `title` ("" = "Exemplar images per
// <labels>") heads it. Nothing when the block is null.
void exemplars_section(Page& page, const Node& block, const std::string& what,
                       const std::string& id = "exemplars", const std::string& title = "");

}  // namespace vlbias::report_internal
