// The HTML report's building blocks (src/report/report_page.h).
#include "report_page.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "svg_chart.h"
#include "vlbias/core/error.h"
#include "vlbias/report/summary.h"

namespace vlbias::report_internal {

std::string format_number(double value, Fmt fmt) {
  if (std::isnan(value)) return "n/a";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  switch (fmt) {
    case Fmt::g4:
      return fmt::format("{:.4g}", value);
    case Fmt::p:
      if (value != 0 && std::abs(value) < 1e-3) return fmt::format("{:.2e}", value);
      return fmt::format("{:.3g}", value);
    case Fmt::integer:
      return fmt::format("{:.0f}", value);
    case Fmt::pct:
      return fmt::format("{:.1f}%", value * 100.0);
  }
  return fmt::format("{}", value);
}

const char* fmt_name(Fmt fmt) {
  switch (fmt) {
    case Fmt::g4:
      return "g4";
    case Fmt::p:
      return "p";
    case Fmt::integer:
      return "int";
    case Fmt::pct:
      return "pct";
  }
  return "g4";
}

Fmt parse_fmt(const std::string& name) {
  for (Fmt f : {Fmt::g4, Fmt::p, Fmt::integer, Fmt::pct}) {
    if (name == fmt_name(f)) return f;
  }
  VLBIAS_FAIL(InputError, "unknown number format '{}' (expected g4, p, int or pct)", name);
}

// ---------------------------------------------------------------- Node

namespace {

// RFC 6901: '~' -> "~0", '/' -> "~1".
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

const Json& null_json() {
  static const Json null_value;
  return null_value;
}

}  // namespace

Node Node::operator[](const std::string& key) const {
  const Json* child = nullptr;
  if (json_ != nullptr && json_->is_object()) {
    const auto it = json_->find(key);
    if (it != json_->end()) child = &*it;
  }
  return Node(child, ptr_ + "/" + pointer_token(key));
}

Node Node::operator[](std::size_t index) const {
  const Json* child = nullptr;
  if (json_ != nullptr && json_->is_array() && index < json_->size()) child = &(*json_)[index];
  return Node(child, ptr_ + "/" + std::to_string(index));
}

bool Node::has(const std::string& key) const {
  return json_ != nullptr && json_->is_object() && json_->contains(key);
}

std::size_t Node::size() const {
  return json_ != nullptr && (json_->is_array() || json_->is_object()) ? json_->size() : 0;
}

double Node::number() const {
  return json_ != nullptr && json_->is_number() ? json_->get<double>() : NAN;
}

std::string Node::str() const {
  return json_ != nullptr && json_->is_string() ? json_->get<std::string>() : std::string();
}

bool Node::boolean() const {
  return json_ != nullptr && json_->is_boolean() && json_->get<bool>();
}

const Json& Node::json() const {
  return json_ != nullptr ? *json_ : null_json();
}

std::vector<std::string> Node::keys() const {
  std::vector<std::string> out;
  if (json_ != nullptr && json_->is_object()) {
    for (auto it = json_->begin(); it != json_->end(); ++it) out.push_back(it.key());
  }
  return out;
}

std::string group_label(const Node& key) {
  if (!key.json().is_object()) return key.str();
  std::string out;
  for (const std::string& k : key.keys()) {
    if (!out.empty()) out += ' ';
    const Json& v = key.json()[k];
    out += v.is_string() ? v.get<std::string>() : v.dump();
  }
  return out.empty() ? "all" : out;
}

std::string value_span(const NumberAt& x, Fmt fmt) {
  return fmt::format("<span class=\"num\" data-ptr=\"{}\" data-fmt=\"{}\">{}</span>",
                     xml_escape(x.ptr), fmt_name(fmt), format_number(x.value, fmt));
}

std::string value_span(const Node& node, Fmt fmt) {
  return value_span(NumberAt{node.number(), node.ptr()}, fmt);
}

Cell cell(const NumberAt& x, Fmt fmt) {
  Cell c;
  c.value = x.value;
  c.text = format_number(c.value, fmt);
  c.ptr = x.ptr;
  c.fmt = fmt;
  c.numeric = true;
  return c;
}

Cell cell(const Node& node, Fmt fmt) {
  return cell(NumberAt{node.number(), node.ptr()}, fmt);
}

Cell cell(std::string text) {
  Cell c;
  c.text = std::move(text);
  return c;
}

void add_unique(std::vector<std::string>& v, const std::string& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

std::string by_label(const Node& by) {
  if (by.null() || by.size() == 0) return "all";
  std::string out;
  for (const std::string& k : by.keys()) {
    if (!out.empty()) out += ", ";
    out += k + "=" + by[k].str();
  }
  return out;
}

void fill_heatmap(const std::vector<GridItem>& items, Heatmap& h, DataTable& table) {
  std::map<std::pair<std::string, std::string>, std::size_t> at;
  h.row_labels.clear();
  h.col_labels.clear();
  for (std::size_t i = 0; i < items.size(); ++i) {
    add_unique(h.row_labels, items[i].row);
    add_unique(h.col_labels, items[i].col);
    at[{items[i].row, items[i].col}] = i;
  }
  h.values.clear();
  h.marks.clear();
  for (const std::string& r : h.row_labels) {
    for (const std::string& c : h.col_labels) {
      const auto it = at.find({r, c});
      if (it == at.end()) {
        h.values.push_back(NAN);
        h.marks.emplace_back();
        continue;
      }
      const GridItem& item = items[it->second];
      h.values.push_back(item.value);
      h.marks.push_back(item.p_holm < kAlpha ? "*" : "");
      table.add(item.table_row);
    }
  }
}

std::string p_text(const std::string& name, const NumberAt& p) {
  return xml_escape(name) + " = " + value_span(p, Fmt::p);
}

std::string p_text(const std::string& name, const Node& p) {
  return p_text(name, NumberAt{p.number(), p.ptr()});
}

std::string ci_text(const NumberAt& lower, const NumberAt& upper, double level) {
  const std::string lv =
      std::isnan(level) ? std::string("CI") : fmt::format("{:g}% CI", level * 100.0);
  return fmt::format("{} [{}, {}]", lv, value_span(lower), value_span(upper));
}

std::string ci_text(const Node& ci, double fallback_level) {
  const double level = ci["level"].null() ? fallback_level : ci["level"].number();
  return ci_text(NumberAt{ci["lower"].number(), ci["lower"].ptr()},
                 NumberAt{ci["upper"].number(), ci["upper"].ptr()}, level);
}

std::vector<Cell> rate_test_cells(const stats::TestResult& test, const std::string& ptr) {
  return {cell(NumberAt{test.statistic, ptr + "/statistic"}),
          cell(NumberAt{test.df.empty() ? stats::kNaN : test.df[0], ptr + "/df/0"}, Fmt::integer),
          cell(NumberAt{test.p_value, ptr + "/p_value"}, Fmt::p),
          cell(NumberAt{test.effect_size, ptr + "/effect_size"}), cell(test.note)};
}

std::vector<Cell> rate_test_cells(const Node& test) {
  return rate_test_cells(test_result_from_json(test.json()), test.ptr());
}

void rate_test_finding(Page& page, const stats::TestResult& test, const std::string& ptr,
                       const std::string& what, const std::string& across) {
  if (!(test.p_value < kAlpha)) return;
  page.finding({1, test.effect_size,
                fmt::format("{} differs across {} (chi2 = {}, Cramer's V = {}, {}).", what, across,
                            value_span(NumberAt{test.statistic, ptr + "/statistic"}),
                            value_span(NumberAt{test.effect_size, ptr + "/effect_size"}),
                            p_text("p", NumberAt{test.p_value, ptr + "/p_value"}))});
}

void rate_test_finding(Page& page, const Node& test, const std::string& what,
                       const std::string& across) {
  rate_test_finding(page, test_result_from_json(test.json()), test.ptr(), what, across);
}

// ---------------------------------------------------------------- Page

namespace {

// Print-friendly, readable at 100% zoom, no web fonts (the report works offline).
constexpr const char* kCss = R"(
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; font-size: 15px; line-height: 1.45;
       color: #1d1d1d; max-width: 980px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 20px; border-bottom: 2px solid #0072B2; padding-bottom: 3px; margin-top: 36px; }
h3 { font-size: 16px; }
header dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0; }
header dt { font-weight: bold; color: #444; }
header dd { margin: 0; }
.about { background: #fff4e0; border-left: 4px solid #E69F00; padding: 6px 12px; margin: 8px 0; }
nav ol { columns: 2; margin: 4px 0; }
figure { margin: 20px 0; page-break-inside: avoid; break-inside: avoid; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 14px; color: #333; margin-top: 4px; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0 12px; }
th, td { border-bottom: 1px solid #ddd; padding: 2px 8px; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f2f2f2; }
details summary { cursor: pointer; color: #0072B2; font-size: 13px; }
.findings li { margin: 4px 0; }
.findings li.more { list-style: none; font-style: italic; color: #444; }
.hash { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; word-break: break-all; }
pre { background: #f6f6f6; padding: 8px; font-size: 12px; overflow-x: auto; white-space: pre-wrap; }
.notes li { color: #444; font-size: 14px; }
@media print { details { display: block; } nav { display: none; } a { color: inherit; } }
)";

std::string slug(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    // Dimension names end in + or - (agency+, agency-): keep them apart.
    if ((c == '+' || c == '-') && (i + 1 == s.size() || s[i + 1] == '_' || s[i + 1] == ' ')) {
      if (!out.empty() && out.back() != '_') out += '_';
      out += c == '+' ? "pos" : "neg";
      continue;
    }
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "table" : out;
}

}  // namespace

Page::Page(const Json& results) : root_(&results, "") {}

std::string Page::unique_name(const std::string& name) {
  const std::string base = "fig_" + slug(name);
  std::string out = base;
  for (int k = 2; !used_names_.insert(out).second; ++k) out = base + "_" + std::to_string(k);
  return out;
}

void Page::fact(std::string label, std::string html) {
  facts_.emplace_back(std::move(label), std::move(html));
}

void Page::about(std::string text) {
  about_.push_back(std::move(text));
}

void Page::close_section() {
  if (in_section_) body_ += "</section>\n";
  in_section_ = false;
}

void Page::section(const std::string& id, const std::string& title, const std::string& intro) {
  close_section();
  body_ += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", xml_escape(id), xml_escape(title));
  if (!intro.empty()) body_ += "<p>" + xml_escape(intro) + "</p>\n";
  toc_.emplace_back(id, title);
  in_section_ = true;
}

void Page::paragraph_html(std::string html) {
  body_ += "<p>" + html + "</p>\n";
}

std::string Page::table_html(const DataTable& t) const {
  std::string out = "<table class=\"data\">\n<thead><tr>";
  for (const std::string& c : t.columns) out += "<th>" + xml_escape(c) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (const Cell& c : row) {
      if (c.numeric) {
        out += fmt::format("<td class=\"n\" data-ptr=\"{}\" data-fmt=\"{}\">{}</td>",
                           xml_escape(c.ptr), fmt_name(c.fmt), xml_escape(c.text));
      } else {
        out += "<td>" + xml_escape(c.text) + "</td>";
      }
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n";
  return out;
}

void Page::figure(std::string svg, const std::string& caption, DataTable numbers) {
  if (numbers.rows.empty()) {
    note("The chart \"" + caption + "\" has no data in this run and is left out.");
    return;
  }
  numbers.name = unique_name(numbers.name);
  ++figures_;
  body_ += fmt::format("<figure class=\"chart-figure\" id=\"{}\">\n", xml_escape(numbers.name));
  body_ += svg;
  body_ += fmt::format(
      "<figcaption><strong>Figure {}.</strong> {} <a "
      "href=\"tables/{}.csv\">tables/{}.csv</a></figcaption>\n",
      figures_, xml_escape(caption), xml_escape(numbers.name), xml_escape(numbers.name));
  body_ += "<details><summary>The numbers in this chart</summary>\n" + table_html(numbers) +
           "</details>\n</figure>\n";
  tables_.push_back(std::move(numbers));
}

void Page::table(const std::string& caption, DataTable numbers) {
  if (numbers.rows.empty()) return;
  numbers.name = unique_name(numbers.name);
  body_ += fmt::format(
      "<div class=\"table\" id=\"{}\"><p><strong>{}</strong> <a "
      "href=\"tables/{}.csv\">tables/{}.csv</a></p>\n",
      xml_escape(numbers.name), xml_escape(caption), xml_escape(numbers.name),
      xml_escape(numbers.name));
  body_ += table_html(numbers) + "</div>\n";
  tables_.push_back(std::move(numbers));
}

std::string Page::render_head(const std::string& title) const {
  const Node prov = root_["provenance"];
  const std::string kind = root_["kind"].str();
  std::string out;
  out += "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n";
  out +=
      "<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, "
      "initial-scale=1\"/>\n";
  out += "<meta name=\"generator\" content=\"vlbias " + xml_escape(prov["vlbias_version"].str()) +
         "\"/>\n";
  out += "<title>" + xml_escape(title) + "</title>\n<style>" + kCss + "</style>\n</head>\n<body>\n";

  // Header: what, when, how.
  out += "<header>\n<h1>" + xml_escape(title) + "</h1>\n";
  for (const std::string& a : about_) out += "<p class=\"about\">" + xml_escape(a) + "</p>\n";
  out += "<dl>\n";
  out += "<dt>Audit kind</dt><dd>" + xml_escape(kind) + "</dd>\n";
  for (const auto& [label, html] : facts_)
    out += "<dt>" + xml_escape(label) + "</dt><dd>" + html + "</dd>\n";
  out += "<dt>Seed</dt><dd>" + value_span(prov["seed"], Fmt::integer) + "</dd>\n";
  out += "<dt>vlbias version</dt><dd>" + xml_escape(prov["vlbias_version"].str()) + "</dd>\n";
  out += "<dt>Run at (UTC)</dt><dd>" + xml_escape(prov["created_utc"].str()) + "</dd>\n";
  if (has_summary(root_["kind"].str())) {
    out +=
        "<dt>Summary</dt><dd><a href=\"summary.json\">summary.json</a> (every headline quantity, "
        "machine-readable)</dd>\n";
  }
  out += "</dl>\n";
  const Node inputs = prov["inputs"];
  if (inputs.size() > 0) {
    out +=
        "<table "
        "class=\"inputs\">\n<thead><tr><th>Input</th><th>Bytes</th><th>SHA-256</th></tr></"
        "thead>\n<tbody>\n";
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      out += fmt::format(
          "<tr><td>{}</td><td class=\"n\" data-ptr=\"{}\" data-fmt=\"int\">{}</td><td "
          "class=\"hash\">{}</td></tr>\n",
          xml_escape(inputs[i]["path"].str()), xml_escape(inputs[i]["bytes"].ptr()),
          format_number(inputs[i]["bytes"].number(), Fmt::integer),
          xml_escape(inputs[i]["sha256"].str()));
    }
    out += "</tbody>\n</table>\n";
  }
  out += "<details><summary>The spec as run</summary>\n<pre>" +
         xml_escape(prov["parameters"].json().dump(2)) + "</pre>\n</details>\n";
  out += "</header>\n";

  return out;
}

std::string Page::render_findings() const {
  std::string out;
  // Findings, largest first within each study.
  std::vector<Finding> findings = findings_;
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.magnitude > b.magnitude;
  });
  out += "<section id=\"findings\">\n<h2>Findings</h2>\n";
  // A comparison of runs states its own level and correction (options); audits use Holm at
  // kAlpha.
  const Node options = root_["options"];
  const double alpha = options["alpha"].null() ? kAlpha : options["alpha"].number();
  const char* correction = options["correction"].str() == "bh" ? "Benjamini-Hochberg" : "Holm";
  if (findings.empty()) {
    out += fmt::format(
        "<p>No effect is significant at &#945; = {:g} after correction for multiple "
        "comparisons.</p>\n",
        alpha);
  } else {
    out += fmt::format(
        "<p>Tests significant at &#945; = {:g} after {} correction, and estimates whose "
        "interval excludes no effect (as each sentence says), largest first within each "
        "kind of effect.</p>\n<ol class=\"findings\">\n",
        alpha, correction);
    // At most kFindingsPerKind sentences per kind of effect; the rest are counted (every
    // effect is in its section's chart and table).
    constexpr std::size_t kFindingsPerKind = 10;
    std::size_t shown = 0, hidden = 0;
    for (std::size_t i = 0; i < findings.size(); ++i) {
      if (i > 0 && findings[i].rank != findings[i - 1].rank) shown = 0;
      if (shown++ < kFindingsPerKind) {
        out += "<li>" + findings[i].html + "</li>\n";
      } else {
        ++hidden;
      }
      const bool last_of_kind =
          i + 1 == findings.size() || findings[i + 1].rank != findings[i].rank;
      if (last_of_kind && hidden > 0) {
        out += fmt::format(
            "<li class=\"more\">&#8230; and {} smaller significant effect{} of the same "
            "kind (in the sections below).</li>\n",
            hidden, hidden == 1 ? "" : "s");
        hidden = 0;
      }
    }
    out += "</ol>\n";
  }
  out += "</section>\n";

  return out;
}

std::string Page::render_notes() const {
  std::string out;
  out += "<section id=\"notes\">\n<h2>Notes</h2>\n<ul class=\"notes\">\n";
  const Node run_notes = root_["notes"];
  for (std::size_t i = 0; i < run_notes.size(); ++i)
    out += "<li>" + xml_escape(run_notes[i].str()) + "</li>\n";
  for (const std::string& n : notes_) out += "<li>" + xml_escape(n) + "</li>\n";
  if (run_notes.size() == 0 && notes_.empty()) out += "<li>None.</li>\n";
  out += "</ul>\n</section>\n";
  return out;
}

std::string Page::render() const {
  const Node prov = root_["provenance"];
  std::string title = root_["title"].str();
  if (title.empty()) title = "vlbias audit: " + root_["kind"].str();

  std::string out = render_head(title);
  // Contents.
  out += "<nav>\n<h2>Contents</h2>\n<ol>\n<li><a href=\"#findings\">Findings</a></li>\n";
  for (const auto& [id, t] : toc_)
    out += fmt::format("<li><a href=\"#{}\">{}</a></li>\n", xml_escape(id), xml_escape(t));
  out += "<li><a href=\"#notes\">Notes</a></li>\n</ol>\n</nav>\n";

  out += render_findings();
  out += body_;
  if (in_section_) out += "</section>\n";
  out += render_notes();
  out += "<footer><p>Written by vlbias " + xml_escape(prov["vlbias_version"].str()) +
         " from results.json; <code>vlbias report RUN_DIR</code> re-renders it.</p></footer>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace vlbias::report_internal
