#pragma once
// Checks of an audit's report.html shared by tests/report and tests/cli: the file parses as
// well-formed XML (libxml2, an independent parser), every number marked with data-ptr shows
// exactly format_number(results.json at that pointer), and every chart's table in the HTML
// equals its RUN_DIR/tables/fig_*.csv cell by cell.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "report_page.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/json_output.h"

namespace vlbias::report_checks {

struct XmlDocFree {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};
using XmlDocPtr = std::unique_ptr<xmlDoc, XmlDocFree>;

// Parses `text` as XML (no network, no entity expansion from outside). On failure returns
// null and sets `error` to libxml2's message with its line.
inline XmlDocPtr parse_xml(const std::string& text, std::string& error) {
  xmlResetLastError();
  xmlDoc* doc = xmlReadMemory(text.data(), static_cast<int>(text.size()), "report.html", "UTF-8",
                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (doc == nullptr) {
    const xmlError* e = xmlGetLastError();
    error = e != nullptr ? std::string(e->message) + " at line " + std::to_string(e->line)
                         : "unknown XML error";
  }
  return XmlDocPtr(doc);
}

inline std::string attr(xmlNode* n, const char* name) {
  xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
  if (v == nullptr) return "";
  std::string s(reinterpret_cast<const char*>(v));
  xmlFree(v);
  return s;
}

inline std::string text_of(xmlNode* n) {
  xmlChar* v = xmlNodeGetContent(n);
  if (v == nullptr) return "";
  std::string s(reinterpret_cast<const char*>(v));
  xmlFree(v);
  return s;
}

inline std::string name_of(xmlNode* n) {
  return reinterpret_cast<const char*>(n->name);
}

template <typename F>
void walk(xmlNode* n, const F& f) {
  for (; n != nullptr; n = n->next) {
    if (n->type == XML_ELEMENT_NODE) {
      f(n);
      walk(n->children, f);
    }
  }
}

// Element children of `n` named `name`, depth first.
inline std::vector<xmlNode*> find_all(xmlNode* n, const std::string& name) {
  std::vector<xmlNode*> out;
  walk(n, [&](xmlNode* e) {
    if (name_of(e) == name) out.push_back(e);
  });
  return out;
}

struct ReportSummary {
  std::size_t numbers = 0;  // data-ptr elements checked
  std::size_t figures = 0;
  std::size_t charts = 0;  // <svg class="chart">
  std::vector<std::string> chart_kinds;
};

// The full check of RUN_DIR (report.html, results.json, tables/fig_*.csv). Records gtest
// failures; returns what it saw.
inline ReportSummary check_report(const std::filesystem::path& run_dir) {
  ReportSummary s;
  auto read = [](const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  const std::string html = read(run_dir / "report.html");
  EXPECT_FALSE(html.empty()) << run_dir;
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u)
      << "report.html must start with the HTML5 doctype";
  for (const char* banned : {"<script", "http://", "https://", "@import", "url("}) {
    // The SVG and XHTML namespace URIs are identifiers, not fetches.
    std::string stripped = html;
    for (const char* ns : {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xhtml"}) {
      for (std::size_t p; (p = stripped.find(ns)) != std::string::npos;)
        stripped.erase(p, std::strlen(ns));
    }
    EXPECT_EQ(stripped.find(banned), std::string::npos)
        << "report.html must be self-contained, found " << banned;
  }
  const Json results = Json::parse(read(run_dir / "results.json"));
  std::string error;
  const XmlDocPtr doc = parse_xml(html, error);
  EXPECT_TRUE(doc) << "report.html is not well-formed: " << error;
  if (!doc) return s;
  xmlNode* root = xmlDocGetRootElement(doc.get());

  // Every number equals results.json at its pointer, in its display format.
  walk(root, [&](xmlNode* e) {
    const std::string ptr = attr(e, "data-ptr");
    if (ptr.empty() && attr(e, "data-fmt").empty()) return;
    ++s.numbers;
    const Json::json_pointer pointer(ptr);
    ASSERT_TRUE(results.contains(pointer)) << "data-ptr " << ptr << " is not in results.json";
    const Json& v = results.at(pointer);
    ASSERT_TRUE(v.is_number() || v.is_null()) << ptr << " is not a number: " << v.dump();
    const double x = v.is_null() ? NAN : v.get<double>();
    EXPECT_EQ(text_of(e),
              report_internal::format_number(x, report_internal::parse_fmt(attr(e, "data-fmt"))))
        << "at " << ptr << " (results.json has " << v.dump() << ")";
  });

  for (xmlNode* svg : find_all(root, "svg")) {
    if (attr(svg, "class") != "chart") continue;
    ++s.charts;
    s.chart_kinds.push_back(attr(svg, "data-chart"));
    std::size_t marks = 0;
    walk(svg->children, [&](xmlNode* e) {
      const std::string c = attr(e, "class");
      if (c == "mark" || c.rfind("mark ", 0) == 0) ++marks;
    });
    EXPECT_GT(marks, 0u) << "a chart without marks: " << attr(svg, "aria-label");
  }

  // Each figure's table equals its CSV.
  for (xmlNode* fig : find_all(root, "figure")) {
    ++s.figures;
    const std::string id = attr(fig, "id");
    const std::filesystem::path csv = run_dir / "tables" / (id + ".csv");
    EXPECT_TRUE(std::filesystem::exists(csv)) << csv;
    if (!std::filesystem::exists(csv)) continue;
    const Table t = read_table(csv.string());
    const std::vector<xmlNode*> bodies = find_all(fig->children, "tbody");
    EXPECT_EQ(bodies.size(), 1u) << id;
    if (bodies.size() != 1) continue;
    const std::vector<xmlNode*> rows = find_all(bodies[0]->children, "tr");
    EXPECT_EQ(rows.size(), t.rows) << id;
    for (std::size_t r = 0; r < rows.size() && r < t.rows; ++r) {
      const std::vector<xmlNode*> cells = find_all(rows[r]->children, "td");
      EXPECT_EQ(cells.size(), t.columns.size()) << id << " row " << r;
      for (std::size_t c = 0; c < cells.size() && c < t.columns.size(); ++c) {
        const Column& col = t.columns[c];
        const std::string fmt = attr(cells[c], "data-fmt");
        if (fmt.empty()) {
          EXPECT_EQ(text_of(cells[c]), col.text(r)) << id << " row " << r << " column " << col.name;
        } else {
          const double x = col.missing(r) ? NAN : std::stod(col.text(r));
          EXPECT_EQ(text_of(cells[c]),
                    report_internal::format_number(x, report_internal::parse_fmt(fmt)))
              << id << " row " << r << " column " << col.name;
        }
      }
    }
  }
  EXPECT_EQ(s.figures, s.charts) << "every figure holds one chart";
  return s;
}

}  // namespace vlbias::report_checks
