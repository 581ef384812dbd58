// The report page of the geo-diversity audit (paper 002, DIG-In; src/report/report_page.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "report_page.h"
#include "svg_chart.h"
#include "vlbias/report/geo_results.h"

namespace vlbias::report_internal {

namespace {

// Region gaps (geo-diversity): findings, and a forest plot per prompt form.
void gap_findings_and_forest(Page& page, const Node& gaps, const std::string& name,
                             const std::string& what, int rank, double level) {
  std::vector<std::string> forms;
  for (std::size_t i = 0; i < gaps.size(); ++i) add_unique(forms, gaps[i]["form"].str());
  for (const std::string& form : forms) {
    ForestChart f;
    f.title = "Region gaps in " + what + ": \"" + form + "\" prompts";
    f.x_label = "difference (first region minus second)";
    DataTable t;
    t.name = name + "_" + form;
    t.columns = {"form",     "metric",   "region_a", "region_b", "difference",
                 "ci_lower", "ci_upper", "p_value",  "p_holm"};
    for (std::size_t i = 0; i < gaps.size(); ++i) {
      const Node g = gaps[i];
      if (g["form"].str() != form) continue;
      const bool sig = g["p_holm"].number() < kAlpha;
      f.rows.push_back(
          {g["metric"].str() + ": " + g["region_a"].str() + " \u2212 " + g["region_b"].str(),
           g["difference"].number(), g["ci"]["lower"].number(), g["ci"]["upper"].number(), sig});
      t.add({cell(g["form"].str()), cell(g["metric"].str()), cell(g["region_a"].str()),
             cell(g["region_b"].str()), cell(g["difference"]), cell(g["ci"]["lower"]),
             cell(g["ci"]["upper"]), cell(g["p_value"], Fmt::p), cell(g["p_holm"], Fmt::p)});
      if (sig) {
        const double d = g["difference"].number();
        page.finding(
            {rank, std::abs(d),
             fmt::format("For \"{}\" prompts, generated images for <strong>{}</strong> have {} "
                         "<strong>{}</strong> than those for <strong>{}</strong>: difference {}, "
                         "{}, {}.",
                         esc(form), esc(g["region_a"].str()), d < 0 ? "lower" : "higher",
                         esc(g["metric"].str()), esc(g["region_b"].str()),
                         value_span(g["difference"]), ci_text(g["ci"], level),
                         p_text("p_holm", g["p_holm"]))});
      }
    }
    page.figure(
        svg_forest_chart(f),
        "Pairwise region differences for \"" + form +
            "\" prompts with bootstrap intervals; filled: significant after Holm correction.",
        std::move(t));
  }
}

// Whether an analysis drew bootstrap intervals: with bootstrap: 0 results.json holds none, and
// the page shows neither interval columns nor error bars.
bool has_intervals(const Node& analysis) {
  return analysis["bootstrap"].number() > 0;
}

// "with 95% bootstrap intervals (what was resampled)" or that there are none.
std::string intervals_text(const Node& analysis, const std::string& resampled) {
  if (!has_intervals(analysis)) return "without intervals (bootstrap: 0)";
  return fmt::format("with {:g}% bootstrap intervals{}", 100 * analysis["ci"].number(),
                     resampled.empty() ? "" : " (" + resampled + ")");
}

// Appends an interval's bounds to a chart series (error bars) and a table row.
void add_interval(const Node& ci, BarSeries& series, std::vector<Cell>& row) {
  series.lower.push_back(ci["lower"].number());
  series.upper.push_back(ci["upper"].number());
  row.push_back(cell(ci["lower"]));
  row.push_back(cell(ci["upper"]));
}

// Precision per region of a prompt form that names the region, on the world map.
void precision_map(Page& page, const Node& form) {
  Choropleth map;
  map.title = "Precision (realism) per region on the map (" + form["form"].str() + ")";
  map.value_label = "precision (0 to 1)";
  DataTable t;
  t.name = "region_map_" + form["form"].str();
  t.columns = {"form", "region", "countries", "precision"};
  for (std::size_t i = 0; i < form["regions"].size(); ++i) {
    const Node g = form["regions"][i];
    map.areas.push_back({g["region"].str(), g["precision"].number()});
    t.add({cell(form["form"].str()), cell(g["region"].str()),
           cell(std::to_string(map_area_countries(g["region"].str()).size())),
           cell(g["precision"])});
  }
  page.figure(svg_choropleth(map),
              "Precision of the generated images for each region, drawn on the region's countries "
              "(UN M49 sub-regions; docs/reports.md); grey: no region of this audit.",
              std::move(t));
}

// Realism and diversity per region (paper 002 Fig. 2), and the gaps between regions.
void region_section(Page& page, const Node& a) {
  const Node region = a["region"];
  if (region.null()) return;
  const bool intervals = has_intervals(region);
  page.section("region", "Realism (precision) and diversity (coverage) per region",
               fmt::format("Precision and coverage of the generated images against the real ones "
                           "(k = {:g}, {} ball), {}.",
                           region["k"].number(), region["ball"].str(),
                           intervals_text(region, region["resampled"].str())));
  for (std::size_t fi = 0; fi < region["forms"].size(); ++fi) {
    const Node form = region["forms"][fi];
    BarChart chart;
    chart.title = "Prompt \"" + form["prompt"].str() + "\"";
    chart.x_label = "precision / coverage (0 to 1)";
    BarSeries prec{"precision", {}, {}, {}}, cov{"coverage", {}, {}, {}};
    DataTable t;
    t.name = "region_" + form["form"].str();
    t.columns = {"form", "region", "n_real", "n_generated", "precision"};
    if (intervals) t.columns.insert(t.columns.end(), {"precision_lower", "precision_upper"});
    t.columns.push_back("coverage");
    if (intervals) t.columns.insert(t.columns.end(), {"coverage_lower", "coverage_upper"});
    for (std::size_t i = 0; i < form["regions"].size(); ++i) {
      const Node g = form["regions"][i];
      chart.categories.push_back(g["region"].str());
      prec.value.push_back(g["precision"].number());
      cov.value.push_back(g["coverage"].number());
      std::vector<Cell> row = {cell(form["form"].str()), cell(g["region"].str()),
                               cell(g["n_real"], Fmt::integer),
                               cell(g["n_generated"], Fmt::integer), cell(g["precision"])};
      if (intervals) add_interval(g["precision_ci"], prec, row);
      row.push_back(cell(g["coverage"]));
      if (intervals) add_interval(g["coverage_ci"], cov, row);
      t.add(std::move(row));
    }
    chart.series = {prec, cov};
    page.figure(svg_bar_chart(chart),
                "Precision (realism) and coverage (diversity) per region for " +
                    form["form"].str() + " prompts, " + intervals_text(region, "") +
                    " (paper 002 Fig. 2).",
                std::move(t));
    if (form["form"].str() != "object") precision_map(page, form);
  }
  gap_findings_and_forest(page, a["region_gaps"], "region_gaps", "precision and coverage", 0,
                          region["ci"].number());
}

// Object x region heatmaps.
void object_region_section(Page& page, const Node& a) {
  const Node obj = a["object_region"];
  if (obj.null() || obj["cells"].size() == 0) return;
  page.section("object_region", "Per object and region",
               "Precision per object (rows) and region (columns), one heatmap per prompt form.");
  std::vector<std::string> forms;
  for (std::size_t i = 0; i < obj["cells"].size(); ++i)
    add_unique(forms, obj["cells"][i]["form"].str());
  for (const std::string& form : forms) {
    for (const char* metric : {"precision", "coverage"}) {
      Heatmap h;
      h.title = std::string(metric) + " per object and region (" + form + ")";
      h.value_label = metric;
      h.diverging = false;
      DataTable t;
      t.name = std::string("object_region_") + metric + "_" + form;
      t.columns = {"object", "region", "n_generated", metric};
      if (has_intervals(obj)) t.columns.insert(t.columns.end(), {"ci_lower", "ci_upper"});
      std::vector<GridItem> items;
      for (std::size_t i = 0; i < obj["cells"].size(); ++i) {
        const Node c = obj["cells"][i];
        if (c["form"].str() != form) continue;
        std::vector<Cell> row = {cell(c["object"].str()), cell(c["region"].str()),
                                 cell(c["n_generated"], Fmt::integer), cell(c[metric])};
        if (has_intervals(obj)) {
          const Node ci = c[std::string(metric) + "_ci"];
          row.push_back(cell(ci["lower"]));
          row.push_back(cell(ci["upper"]));
        }
        items.push_back(
            {c["object"].str(), c["region"].str(), c[metric].number(), NAN, std::move(row)});
      }
      fill_heatmap(items, h, t);
      page.figure(
          svg_heatmap(h),
          std::string("Generated ") + metric + " per object and region for " + form + " prompts.",
          std::move(t));
    }
  }
}

// Per form that names regions: the distribution of the per-object percentiles per region as
// boxes (paper 002 Fig. 17), and the indicator per region on a world map.
void consistency_distribution_figures(Page& page, const Node& cons) {
  for (std::size_t fi = 0; fi < cons["forms"].size(); ++fi) {
    const Node form = cons["forms"][fi];
    if (form["regions"].size() == 0) continue;
    const std::string name = form["form"].str();
    BoxChart box;
    box.title = "Per-object consistency per region (" + name + ")";
    box.x_label =
        fmt::format("per-object {:g}th percentile CLIPScore", cons["percentile"].number());
    DataTable t;
    t.name = "consistency_objects_" + name;
    t.columns = {"form",   "region", "objects",      "whisker_low", "q25",
                 "median", "q75",    "whisker_high", "mean",        "fliers"};
    Choropleth map;
    map.title = "Consistency per region on the map (" + name + ")";
    map.value_label = "consistency indicator (" + cons["aggregate"].str() + ")";
    DataTable mt;
    mt.name = "consistency_map_" + name;
    mt.columns = {"form", "region", "countries", "indicator"};
    for (std::size_t i = 0; i < form["regions"].size(); ++i) {
      const Node g = form["regions"][i];
      std::vector<double> values;
      for (std::size_t k = 0; k < g["per_object"].size(); ++k)
        values.push_back(g["per_object"][k]["value"].number());
      BoxItem b = box_item(g["region"].str(), values);
      box.items.push_back(b);
      std::vector<Cell> row = {cell(name), cell(g["region"].str()),
                               cell(std::to_string(values.size()))};
      for (double v : {b.whisker_low, b.q25, b.median, b.q75, b.whisker_high, b.mean})
        row.push_back(cell(format_number(v, Fmt::g4)));
      row.push_back(cell(std::to_string(b.fliers.size())));
      t.add(std::move(row));
      map.areas.push_back({g["region"].str(), g["indicator"].number()});
      mt.add({cell(name), cell(g["region"].str()),
              cell(std::to_string(map_area_countries(g["region"].str()).size())),
              cell(g["indicator"])});
    }
    if (!box.items.empty() && form["regions"][0]["per_object"].size() > 0) {
      page.figure(
          svg_box_chart(box),
          "The per-object percentiles behind each region's indicator (paper 002 Fig. 17): "
          "quartiles as numpy.percentile (linear), whiskers at the furthest object within "
          "1.5 IQR of the box (matplotlib), objects beyond them as circles, mean as the diamond.",
          std::move(t));
    }
    page.figure(svg_choropleth(map),
                "The consistency indicator of each region on its countries (UN M49 sub-regions; "
                "docs/reports.md); grey: no region of this audit.",
                std::move(mt));
  }
}

// Consistency per region and prompt form, and the gaps between regions.
void consistency_section(Page& page, const Node& a) {
  const Node cons = a["consistency"];
  if (cons.null()) return;
  page.section(
      "consistency", "Consistency (CLIPScore) per region",
      fmt::format(
          "Prompt-image consistency: {} of the per-object {:g}th percentile CLIPScore ({}), "
          "{}.",
          cons["aggregate"].str(), cons["percentile"].number(), cons["variant"].str(),
          intervals_text(cons, "")));
  BarChart chart;
  chart.title = "Consistency per region and prompt form";
  chart.x_label = "CLIPScore indicator";
  chart.points = true;
  std::vector<std::string> regions;
  for (std::size_t fi = 0; fi < cons["forms"].size(); ++fi) {
    for (std::size_t i = 0; i < cons["forms"][fi]["regions"].size(); ++i)
      add_unique(regions, cons["forms"][fi]["regions"][i]["region"].str());
  }
  chart.categories = regions;
  DataTable t;
  t.name = "consistency";
  const bool intervals = has_intervals(cons);
  t.columns = {"form", "region", "n", "indicator"};
  if (intervals) t.columns.insert(t.columns.end(), {"ci_lower", "ci_upper"});
  for (std::size_t fi = 0; fi < cons["forms"].size(); ++fi) {
    const Node form = cons["forms"][fi];
    if (form["regions"].size() == 0) continue;
    BarSeries s;
    s.name = form["form"].str();
    for (const std::string& rg : regions) {
      double v = NAN, lo = NAN, hi = NAN;
      for (std::size_t i = 0; i < form["regions"].size(); ++i) {
        const Node g = form["regions"][i];
        if (g["region"].str() != rg) continue;
        v = g["indicator"].number();
        std::vector<Cell> row = {cell(form["form"].str()), cell(rg), cell(g["n"], Fmt::integer),
                                 cell(g["indicator"])};
        if (intervals) {
          lo = g["ci"]["lower"].number();
          hi = g["ci"]["upper"].number();
          row.push_back(cell(g["ci"]["lower"]));
          row.push_back(cell(g["ci"]["upper"]));
        }
        t.add(std::move(row));
      }
      s.value.push_back(v);
      s.lower.push_back(lo);
      s.upper.push_back(hi);
    }
    chart.series.push_back(std::move(s));
  }
  page.figure(svg_bar_chart(chart),
              "Consistency per region for each prompt form that names a region.", std::move(t));
  consistency_distribution_figures(page, cons);
  gap_findings_and_forest(page, a["consistency_gaps"], "consistency_gaps", "consistency", 1,
                          cons["ci"].number());
}

// FID and Vendi score per region and prompt form, with their bootstrap intervals and FID_inf
// when the analysis computed them.
void distribution_section(Page& page, const Node& a) {
  const Node dist = a["distribution"];
  if (dist.null() || dist["cells"].size() == 0) return;
  const bool ci = has_intervals(dist);
  const bool fid_inf = dist.has("fid_inf_points");
  page.section("distribution", "Distribution metrics per region",
               fmt::format("FID of the generated images against the real ones, and the Vendi "
                           "score (effective number of distinct images) of each, {}.{}",
                           intervals_text(dist, "the generated images; real images fixed"),
                           fid_inf ? " FID_inf extrapolates FID to infinitely many generated "
                                     "images (Chong & Forsyth 2020): FID is biased upwards "
                                     "at small n."
                                   : ""));
  BarChart fid;
  fid.title = "FID per region and prompt form (lower = closer to the real images)";
  fid.x_label = "FID";
  BarChart vendi;
  vendi.title = "Vendi score per region and prompt form";
  vendi.x_label = "Vendi score (effective number of images)";
  BarSeries fs{"FID", {}, {}, {}}, vg{"generated", {}, {}, {}}, vr{"real", {}, {}, {}};
  DataTable t;
  t.name = "distribution";
  t.columns = {"form", "region", "n_real", "n_generated", "fid"};
  if (ci) t.columns.insert(t.columns.end(), {"fid_lower", "fid_upper"});
  if (fid_inf) t.columns.push_back("fid_inf");
  t.columns.push_back("vendi_generated");
  if (ci) t.columns.insert(t.columns.end(), {"vendi_generated_lower", "vendi_generated_upper"});
  t.columns.push_back("vendi_real");
  for (std::size_t i = 0; i < dist["cells"].size(); ++i) {
    const Node c = dist["cells"][i];
    const std::string label = c["form"].str() + " \u00b7 " + c["region"].str();
    fid.categories.push_back(label);
    vendi.categories.push_back(label);
    fs.value.push_back(c["fid"].number());
    vg.value.push_back(c["vendi_generated"].number());
    vr.value.push_back(c["vendi_real"].number());
    std::vector<Cell> row = {cell(c["form"].str()), cell(c["region"].str()),
                             cell(c["n_real"], Fmt::integer), cell(c["n_generated"], Fmt::integer),
                             cell(c["fid"])};
    if (ci) add_interval(c["fid_ci"], fs, row);
    if (fid_inf) row.push_back(cell(c["fid_inf"]["fid_inf"]));
    row.push_back(cell(c["vendi_generated"]));
    if (ci) add_interval(c["vendi_generated_ci"], vg, row);
    row.push_back(cell(c["vendi_real"]));
    t.add(std::move(row));
  }
  fid.series = {fs};
  vendi.series = {vg, vr};
  DataTable t2 = t;
  t2.name = "distribution_vendi";
  page.figure(svg_bar_chart(fid), "FID per region and prompt form.", std::move(t));
  page.figure(svg_bar_chart(vendi), "Vendi score of the generated and the real images.",
              std::move(t2));
}

// Refused and filtered generations per region (generate t2i's outcomes.csv), with the
// chi-square test of equal rates; a finding when the regions differ.
// analyses.filtered is read through its typed contract (geo_results.h).
void filtered_section(Page& page, const Node& a) {
  const auto f = geo_filtered_from_json(a.json());
  if (!f) return;
  page.section(kGeoFilteredSection, "Refused and filtered generations per region", f->definition);
  DataTable t;
  t.name = kGeoFilteredSection;
  // The table's columns (tables/filtered.csv), not results.json's keys.
  t.columns = {"region", "requested", "refused", "filtered", "rate", "ci_lower", "ci_upper"};
  for (std::size_t i = 0; i < f->regions.size(); ++i) {
    const GeoFilteredRegion& r = f->regions[i];
    const auto at = [&](const char* field) { return geo_filtered_region_pointer(i, field); };
    t.add({cell(r.region), cell(NumberAt{r.requested, at("requested")}, Fmt::integer),
           cell(NumberAt{r.refused, at("refused")}, Fmt::integer),
           cell(NumberAt{r.filtered, at("filtered")}, Fmt::integer),
           cell(NumberAt{r.rate, at("rate")}), cell(NumberAt{r.ci_lower, at("ci/lower")}),
           cell(NumberAt{r.ci_upper, at("ci/upper")})});
  }
  page.table("Generations refused or filtered per region (Wilson intervals).", std::move(t));
  const stats::TestResult x = f->test.value_or(stats::TestResult{});
  const std::string ptr = geo_filtered_test_pointer();
  DataTable tests;
  tests.name = "filtered_test";
  tests.columns = {"regions", "chi_square", "df", "p", "cramers_v", "note"};
  std::vector<Cell> row = {cell(std::to_string(f->regions.size()))};
  for (Cell& c : rate_test_cells(x, ptr)) row.push_back(std::move(c));
  tests.add(std::move(row));
  rate_test_finding(page, x, ptr, "The share of generations refused or filtered", "regions");
  page.table("Do the regions share one refusal rate? Pearson's chi-square test.", std::move(tests));
}

}  // namespace

void build_geo_diversity(Page& page) {
  const Node& r = page.root();
  page.fact("Real images", value_span(r["real"]["images"], Fmt::integer) + " over " +
                               std::to_string(r["real"]["regions"].size()) + " regions and " +
                               value_span(r["real"]["objects"], Fmt::integer) + " objects");
  page.fact("Generated images", value_span(r["generated"]["images"], Fmt::integer));
  const Node a = r["analyses"];
  region_section(page, a);
  object_region_section(page, a);
  consistency_section(page, a);
  distribution_section(page, a);
  filtered_section(page, a);
  if (const auto s = scores_from_json(a.json())) scores_section(page, *s);
  exemplars_section(page, r["exemplars"], "generated images");
}

}  // namespace vlbias::report_internal
