// `vlbias audit` writes RUN_DIR/report.html and `vlbias report RUN_DIR` re-renders it: for
// every bundled example, the report is well-formed (libxml2), shows exactly the numbers of
// results.json, has the charts its study calls for, and every chart's numbers are in
// tables/fig_*.csv. Then the same reports are loaded in headless Chromium (Debian's
// `chromium`, installed by scripts/test.sh): each chart must lay out with visible marks,
// text at least 11px, no horizontal overflow; screenshots land in the build directory
// (build/report_screens/).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "audit_run.h"
#include "cli_util.h"
#include "example_runs.h"
#include "report_checks.h"
#include "vlbias/core/build_type.h"
#include "vlbias/encode/image/image.h"

namespace vlbias {
namespace {
namespace in_report_test {

using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;

struct Example {
  std::string name;
  std::vector<std::string> charts;  // chart kinds the study calls for
  std::size_t min_findings;
};

const std::vector<Example>& examples() {
  static const std::vector<Example> list{
      {"social_perception", {"bar", "heatmap", "forest", "box", "line", "scatter"}, 3},
      {"trait_pairs", {"bar", "heatmap", "forest"}, 3},
      {"geo_diversity", {"bar", "forest", "heatmap", "box", "map"}, 3},
      {"lvlm_counterfactual", {"histogram", "ecdf", "bar", "heatmap", "forest"}, 3},
      {"visual_stereotypes", {"bar", "scatter", "map"}, 2},
      {"representation", {"stacked", "scatter", "bar"}, 3},
  };
  return list;
}

// Every example audit comes from the runs shared by the test processes (example_runs.h); each
// call gives a fresh copy at `dir` (build/report_screens/<name> for the browser tests).
using cli_util::example_run;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(Report, EveryExampleMatchesItsResults) {
  for (const Example& ex : examples()) {
    SCOPED_TRACE(ex.name);
    const auto dir = example_run(ex.name, temp_dir() / ex.name);
    const report_checks::ReportSummary s = report_checks::check_report(dir);
    EXPECT_GT(s.numbers, 50u);
    EXPECT_GE(s.charts, ex.charts.size());
    for (const std::string& kind : ex.charts) {
      EXPECT_NE(std::find(s.chart_kinds.begin(), s.chart_kinds.end(), kind), s.chart_kinds.end())
          << "no " << kind << " chart";
    }
    const std::string html = read_file(dir / "report.html");
    // The header says what was audited and that the data are synthetic where they are.
    EXPECT_NE(html.find("SYNTHETIC"), std::string::npos);
    EXPECT_NE(html.find("SHA-256"), std::string::npos);
    // Findings: the planted effects are found, largest first, in sentences.
    const auto findings = html.find("<ol class=\"findings\">");
    ASSERT_NE(findings, std::string::npos);
    const std::string list = html.substr(findings, html.find("</ol>", findings) - findings);
    EXPECT_GE(count(list, "<li"), ex.min_findings);
  }
}

TEST(Report, PlantedEffectLeadsTheFindings) {
  const auto dir = example_run("social_perception", temp_dir() / "sp");
  const std::string html = read_file(dir / "report.html");
  const auto first = html.find("<ol class=\"findings\">");
  ASSERT_NE(first, std::string::npos);
  const std::string item = html.substr(first, html.find("</li>", first) - first);
  // tools/make_example_study.py shifts Black women's images toward competence.
  EXPECT_NE(item.find("<strong>Black female</strong> score higher on <strong>competence</strong>"),
            std::string::npos)
      << item;
  EXPECT_NE(item.find("p_holm = "), std::string::npos);
  EXPECT_NE(item.find("95% CI ["), std::string::npos);
}

// The checks above can fail: a report whose number differs from results.json, or whose chart
// table differs from its CSV, or that is not well-formed, is caught.
TEST(Report, ChecksCatchTamperedReports) {
  const auto dir = example_run("visual_stereotypes", temp_dir() / "vs");
  const std::string html = read_file(dir / "report.html");
  auto with = [&](const std::string& changed) {
    std::ofstream(dir / "report.html", std::ios::binary) << changed;
  };
  // A number shown wrong (the first g4 number of a sentence).
  std::string t = html;
  const auto p = t.find("data-fmt=\"g4\">", t.find("<ol class=\"findings\">"));
  ASSERT_NE(p, std::string::npos);
  t.insert(p + std::string("data-fmt=\"g4\">").size(), "1");
  with(t);
  EXPECT_NONFATAL_FAILURE(report_checks::check_report(dir), "results.json has");
  // A pointer to nowhere.
  t = html;
  t.replace(t.find("data-ptr=\"/"), 11, "data-ptr=\"/x");
  with(t);
  EXPECT_FATAL_FAILURE(
      {
        const auto d = temp_dir() / "vs";
        report_checks::check_report(d);
      },
      "is not in results.json");
  // Broken markup.
  with(html.substr(0, html.size() / 2));
  EXPECT_NONFATAL_FAILURE(report_checks::check_report(dir), "not well-formed");
  // A chart's CSV that disagrees with its table.
  with(html);
  const auto csv = dir / "tables" / "fig_pull_identities.csv";
  const std::string original = read_file(csv);
  std::string bad = original;
  bad.replace(bad.find('\n') + 1, 1, "X");
  std::ofstream(csv, std::ios::binary) << bad;
  EXPECT_NONFATAL_FAILURE(report_checks::check_report(dir), "fig_pull_identities row 0");
  std::ofstream(csv, std::ios::binary) << original;
  EXPECT_GT(report_checks::check_report(dir).numbers, 0u);
}

TEST(Report, RerenderIsIdenticalAndNeedsOnlyResults) {
  const auto dir = example_run("lvlm_counterfactual", temp_dir() / "lvlm");
  const std::string before = read_file(dir / "report.html");
  const std::string csv = read_file(dir / "tables" / "fig_maxgap_histogram_toxicity.csv");
  ASSERT_FALSE(csv.empty());
  // Only results.json is needed: remove the report and the chart tables, then re-render.
  std::filesystem::remove(dir / "report.html");
  std::filesystem::remove(dir / "tables" / "fig_maxgap_histogram_toxicity.csv");
  const auto r = run_cli("report '" + dir.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir / "report.html"), before);
  EXPECT_EQ(read_file(dir / "tables" / "fig_maxgap_histogram_toxicity.csv"), csv);
  // A chart table the report no longer draws (e.g. from an older version) is removed.
  std::ofstream(dir / "tables" / "fig_stale.csv") << "a\n1\n";
  ASSERT_EQ(run_cli("report '" + dir.string() + "'").exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(dir / "tables" / "fig_stale.csv"));
  EXPECT_TRUE(std::filesystem::exists(dir / "tables" / "maxgap.csv"));
  EXPECT_NE(r.err.find("report.html"), std::string::npos);
}

TEST(Report, MaxGapHistogramCountsEverySet) {
  const auto dir = example_run("lvlm_counterfactual", temp_dir() / "lvlm");
  const auto results = nlohmann::json::parse(read_file(dir / "results.json"));
  for (const auto& r : results["analyses"]["maxgap"]["results"]) {
    const auto& h = r["histogram"];
    ASSERT_EQ(h["edges"].size(), 21u);
    ASSERT_EQ(h["counts"].size(), 20u);
    std::size_t total = 0;
    for (const auto& c : h["counts"]) total += c.get<std::size_t>();
    EXPECT_EQ(total, r["sets"].get<std::size_t>());
    EXPECT_DOUBLE_EQ(h["cumulative_share"].back().get<double>(), 1.0);
    EXPECT_EQ(h["edges"][0].get<double>(), 0.0);
    // The last edge is the largest MaxGap of the score over every by-level, so no
    // by-level's max lies above it.
    EXPECT_LE(r["maxgap"]["max"].get<double>(), h["edges"].back().get<double>());
  }
}

TEST(Report, BadRunFoldersGetClearErrors) {
  const auto dir = temp_dir() / "bad";
  std::filesystem::create_directories(dir);
  auto expect_error = [&](const std::string& content, const std::string& message) {
    { std::ofstream(dir / "results.json") << content; }
    const auto r = run_cli("report '" + dir.string() + "'");
    EXPECT_EQ(r.exit_code, 2) << content;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  };
  const auto missing = run_cli("report '" + (dir / "nope").string() + "'");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos) << missing.err;
  expect_error("", "is empty; expected an audit's results.json");
  expect_error("{\"kind\": ", "not valid JSON");
  // 150,000 levels: copying or printing such a tree recursively overflows the stack.
  expect_error("{\"kind\": \"social-perception\", \"analyses\": " + std::string(150'000, '[') +
                   std::string(150'000, ']') + "}",
               "results.json is JSON nested deeper than 256 levels");
  expect_error("[1, 2]", "no \"kind\"");
  expect_error("{\"kind\": 3}", "no \"kind\"");
  expect_error("{\"kind\": \"teapot\"}", "kind 'teapot'");
  // Results of the right kind but the wrong shape render what they can, without crashing.
  for (const char* shaped :
       {"{\"kind\": \"social-perception\", \"analyses\": {\"association\": {\"dimensions\": 5}}}",
        "{\"kind\": \"geo-diversity\", \"analyses\": [1]}",
        "{\"kind\": \"lvlm-counterfactual\", \"analyses\": {\"maxgap\": {\"results\": "
        "[{\"histogram\": "
        "{\"edges\": [0], \"counts\": [1, 2]}}]}}}",
        "{\"kind\": \"visual-stereotypes\", \"analyses\": {\"pull\": {\"per_identity\": [{}]}}}",
        "{\"kind\": \"trait-pairs\", \"provenance\": {\"inputs\": [{\"path\": \"<&>\"}]}}"}) {
    { std::ofstream(dir / "results.json") << shaped; }
    const auto r = run_cli("report '" + dir.string() + "'");
    EXPECT_EQ(r.exit_code, 0) << shaped << "\n" << r.err;
    std::string error;
    EXPECT_TRUE(report_checks::parse_xml(read_file(dir / "report.html"), error))
        << shaped << ": " << error;
  }
}

// ------------------------------------------------------------------ headless Chromium

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return name;
  }
  return "";
}

// Runs a shell command, returning its stdout.
std::string capture(const std::string& cmd) {
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  std::size_t got;
  while ((got = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, got);
  pclose(pipe);
  return out;
}

// Chromium's headless flags, with a profile of the test's own.
std::string chromium_flags() {
  return " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars"
         " --no-first-run --disable-extensions --user-data-dir='" +
         (temp_dir() / "profile").string() + "'";
}

// Loads a copy of `html` carrying `probe` (a script that appends <pre id="vlbias-probe">JSON
// </pre> once the page has loaded) in headless Chromium and returns the probe's JSON; null,
// with a failure recorded, when the page did not finish loading.
nlohmann::json run_probe(const std::string& chromium, const std::string& html, const char* probe,
                         const std::string& name) {
  std::string probed = html;
  probed.insert(probed.rfind("</body>"), probe);
  const auto probe_file = temp_dir() / (name + "_probe.html");
  { std::ofstream(probe_file) << probed; }
  const std::string dom =
      capture("timeout 120 " + chromium + chromium_flags() +
              " --window-size=1000,900 --virtual-time-budget=10000 --dump-dom 'file://" +
              probe_file.string() + "' 2>/dev/null");
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("<pre id=\"vlbias-probe\">([^<]*)</pre>"))) {
    ADD_FAILURE() << "the page did not finish loading in Chromium; DOM starts: "
                  << dom.substr(0, 300);
    return nullptr;
  }
  return nlohmann::json::parse(m[1].str());
}

// Measures the laid-out page from inside the browser. Only the test's copy of the report
// carries this script; the report itself has none.
constexpr const char* kProbe = R"(<script>
window.addEventListener('load', function () {
  var out = {charts: [], scrollWidth: document.documentElement.scrollWidth,
             innerWidth: window.innerWidth, minFont: 1e9, ready: document.readyState};
  document.querySelectorAll('svg.chart').forEach(function (s) {
    var r = s.getBoundingClientRect();
    var marks = s.querySelectorAll('.mark'), visible = 0;
    marks.forEach(function (m) { var b = m.getBBox(); if (b.width > 0 || b.height > 0) visible++; });
    out.charts.push({kind: s.getAttribute('data-chart'), width: r.width, height: r.height,
                     marks: marks.length, visible: visible});
    s.querySelectorAll('text').forEach(function (t) {
      var f = parseFloat(getComputedStyle(t).fontSize); if (f < out.minFont) out.minFont = f; });
  });
  var pre = document.createElement('pre');
  pre.id = 'vlbias-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
)";

// The report in `dir` loads in headless Chromium with every chart laid out and readable, and
// its screenshot (screens/NAME.png) shows the charts' colours.
void expect_renders_with_its_charts(const std::string& chromium, const std::filesystem::path& dir,
                                    const std::string& name, const std::filesystem::path& screens) {
  const std::string html = read_file(dir / "report.html");
  const std::size_t charts_in_html =
      count(html, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\"");
  ASSERT_GT(charts_in_html, 0u);

  const nlohmann::json probe = run_probe(chromium, html, kProbe, name);
  ASSERT_FALSE(probe.is_null());
  EXPECT_EQ(probe["ready"], "complete");
  ASSERT_EQ(probe["charts"].size(), charts_in_html)
      << "every chart element is in the rendered page";
  for (const auto& c : probe["charts"]) {
    EXPECT_GT(c["width"].get<double>(), 100) << c.dump();
    EXPECT_GT(c["height"].get<double>(), 60) << c.dump();
    EXPECT_GT(c["marks"].get<int>(), 0) << c.dump();
    EXPECT_EQ(c["visible"], c["marks"]) << "every mark has a laid-out box: " << c.dump();
  }
  EXPECT_GE(probe["minFont"].get<double>(), 11.0) << "chart text readable at 100% zoom";
  EXPECT_LE(probe["scrollWidth"].get<double>(), probe["innerWidth"].get<double>())
      << "no horizontal scrolling at 1000px";

  // A screenshot of the real report (no probe), tall enough for its first charts.
  const auto png = screens / (name + ".png");
  std::filesystem::remove(png);
  capture("timeout 120 " + chromium + chromium_flags() + " --window-size=1000,4000 --screenshot='" +
          png.string() + "' 'file://" + (dir / "report.html").string() + "' >/dev/null 2>&1");
  ASSERT_TRUE(std::filesystem::exists(png)) << png;
  const RgbImage shot = decode_image_file(png);
  EXPECT_EQ(shot.width, 1000u);
  // The charts drew: the palette's first colour (#0072B2) or the heatmap ramps appear,
  // and the page is not blank.
  std::size_t blue = 0, ink = 0;
  for (std::size_t i = 0; i + 2 < shot.pixels.size(); i += 3) {
    const int r = shot.pixels[i], g = shot.pixels[i + 1], b = shot.pixels[i + 2];
    if (std::abs(r - 0x00) < 40 && std::abs(g - 0x72) < 40 && std::abs(b - 0xB2) < 40) ++blue;
    if (r + g + b < 600) ++ink;
  }
  EXPECT_GT(blue, 500u) << "no chart colour in the screenshot " << png;
  EXPECT_GT(ink, 20000u) << "the screenshot is nearly blank " << png;
}

// The browser tests run once, in the Release build (the browser is not under test here); each
// finds Chromium and the folder of its screenshots (build/report_screens) in SetUp.
class ReportInChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    // The test objects are compiled once and linked into both suites, so the build is asked at
    // run time (a preprocessor test would see the same answer in both).
    if (!release_build()) {
      GTEST_SKIP() << "runs once, in the Release build (the browser is not under test here)";
    }
    chromium = find_chromium();
    ASSERT_FALSE(chromium.empty()) << "headless Chromium is needed (Debian: apt-get install "
                                      "chromium; scripts/test.sh installs it)";
    screens = testing_util::vlbias_binary_dir() / "report_screens";
    std::filesystem::create_directories(screens);
  }
  std::string chromium;
  std::filesystem::path screens;
};

TEST_F(ReportInChromium, EveryExampleRendersWithItsCharts) {
  for (const Example& ex : examples()) {
    SCOPED_TRACE(ex.name);
    expect_renders_with_its_charts(chromium, example_run(ex.name, screens / ex.name), ex.name,
                                   screens);
  }
}

TEST_F(ReportInChromium, TheExampleComparisonRendersItsForestPlot) {
  const auto dir = cli_util::run_example_comparison(screens / "comparison_runs");
  expect_renders_with_its_charts(chromium, dir, "comparison", screens);
}

// Counts the exemplar thumbnails that decoded in the browser (report.images).
constexpr const char* kImageProbe = R"(<script>
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('img.exemplar'), decoded = 0;
  imgs.forEach(function (i) { if (i.complete && i.naturalWidth > 0) decoded++; });
  var pre = document.createElement('pre');
  pre.id = 'vlbias-probe';
  pre.textContent = JSON.stringify({images: imgs.length, decoded: decoded});
  document.body.appendChild(pre);
});
</script>
)";

TEST_F(ReportInChromium, TheGeoImagesExampleShowsItsExemplarThumbnails) {
  const auto dir = example_run("geo_diversity_images", screens / "geo_diversity_images");
  const std::string html = read_file(dir / "report.html");
  // The example asks for 4 per cell: 3 regions x 2 objects.
  EXPECT_EQ(count(html, "<img class=\"exemplar\""), 24u);
  const nlohmann::json probe = run_probe(chromium, html, kImageProbe, "geo_images");
  ASSERT_FALSE(probe.is_null());
  EXPECT_EQ(probe["images"], 24);
  EXPECT_EQ(probe["decoded"], 24) << "every thumbnail decodes in the browser";
}

}  // namespace in_report_test
}  // namespace
}  // namespace vlbias
