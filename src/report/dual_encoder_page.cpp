// Report pages of the dual-encoder audits (papers 001 and 004): social-perception and
// trait-pairs (src/report/report_page.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report_page.h"
#include "svg_chart.h"
#include "vlbias/report/dual_encoder_results.h"

namespace vlbias::report_internal {

// "welch" -> "Welch t": the statistic each test reports.
std::string statistic_name(const std::string& test) {
  static const std::map<std::string, std::string> names{{"anova", "ANOVA F"},
                                                        {"welch", "Welch t"},
                                                        {"student", "Student t"},
                                                        {"paired_t", "paired t"},
                                                        {"mannwhitney", "Mann-Whitney U"},
                                                        {"kruskal", "Kruskal-Wallis H"}};
  const auto it = names.find(test);
  return it == names.end() ? test : it->second;
}

std::string effect_name(const std::string& name) {
  static const std::map<std::string, std::string> names{
      {"eta_squared", "eta squared"},       {"cohens_d", "Cohen's d"},
      {"cohens_d_av", "Cohen's d_av"},      {"cohens_dz", "Cohen's d_z"},
      {"rank_biserial", "rank-biserial r"}, {"epsilon_squared", "epsilon squared"}};
  const auto it = names.find(name);
  return it == names.end() ? name : it->second;
}

namespace {

// SC-WEAT names an intersectional group "Black|female"; the report writes "Black female".
std::string spaced(std::string s) {
  std::replace(s.begin(), s.end(), '|', ' ');
  return s;
}

void dual_facts(Page& page) {
  const Node& r = page.root();
  page.fact("Images", value_span(r["images"], Fmt::integer) + " (embedding dimension " +
                          value_span(r["embedding_dim"], Fmt::integer) + ")");
  page.fact("Prompts", value_span(r["prompts"], Fmt::integer) + " over " +
                           std::to_string(r["templates"].size()) + " templates and " +
                           std::to_string(r["dimensions"].size()) + " dimensions");
  const Node groups = r["spec"]["factors"]["groups"];
  std::string g;
  for (std::size_t i = 0; i < groups.size(); ++i) g += (i ? " x " : "") + groups[i].str();
  if (!g.empty()) page.fact("Groups", esc(g));
}

// Each group against the mean of the others (the association's contrasts): heatmap and forest
// plot, with a finding per significant contrast.
void contrasts_section(Page& page, const AssociationSection& a) {
  const bool delta = a.has_delta;
  if (a.contrasts.empty()) return;
  // Contrast i's number `key` (its JSON pointer for the page's data-ptr).
  const auto at = [](std::size_t i, double v, const char* key) {
    return NumberAt{v, association_contrast_pointer(i) + "/" + key};
  };
  const auto label = [](std::size_t i, const AssociationContrast& e) {
    return group_label(Node(&e.key, association_contrast_pointer(i) + "/key"));
  };
  Heatmap h;
  h.title = "Each group minus the mean of the other groups";
  h.value_label = delta ? "difference in Delta cos" : "difference in cosine";
  DataTable th;
  th.name = "association_contrasts_heatmap";
  th.columns = {"group", "dimension", "estimate", "p_holm"};
  std::vector<GridItem> items;
  for (std::size_t i = 0; i < a.contrasts.size(); ++i) {
    const AssociationContrast& e = a.contrasts[i];
    const std::string g = label(i, e), dn = e.dimension;
    items.push_back({g,
                     dn,
                     e.estimate,
                     e.p_holm,
                     {cell(g), cell(dn), cell(at(i, e.estimate, "estimate")),
                      cell(at(i, e.p_holm, "p_holm"), Fmt::p)}});
  }
  fill_heatmap(items, h, th);
  page.section("contrasts", "Each group against the others",
               "A group's mean minus the unweighted mean of the other groups' means (Welch t test, "
               "Holm and Benjamini-Hochberg over every contrast).");
  page.figure(svg_heatmap(h), "Contrasts of every group on every dimension; * marks p_holm < 0.05.",
              std::move(th));
  ForestChart f;
  f.title = "Contrasts with confidence intervals";
  f.x_label = h.value_label;
  DataTable tf;
  tf.name = "association_contrasts";
  tf.columns = {"group", "dimension", "n", "estimate", "ci_lower", "ci_upper", "p_value", "p_holm"};
  for (std::size_t i = 0; i < a.contrasts.size(); ++i) {
    const AssociationContrast& e = a.contrasts[i];
    const NumberAt lower = at(i, e.ci_lower, "ci/lower"), upper = at(i, e.ci_upper, "ci/upper");
    f.rows.push_back({label(i, e) + " \u00b7 " + e.dimension, e.estimate, e.ci_lower, e.ci_upper,
                      e.p_holm < kAlpha});
    tf.add({cell(label(i, e)), cell(e.dimension), cell(at(i, e.n, "n"), Fmt::integer),
            cell(at(i, e.estimate, "estimate")), cell(lower), cell(upper),
            cell(at(i, e.p_value, "p_value"), Fmt::p), cell(at(i, e.p_holm, "p_holm"), Fmt::p)});
    if (e.p_holm < kAlpha) {
      const double est = e.estimate;
      page.finding(
          {0, std::abs(est),
           fmt::format("Images labelled <strong>{}</strong> score {} on <strong>{}</strong> "
                       "than the mean of the other groups: difference {} in {}, {}, {}.",
                       esc(label(i, e)), est < 0 ? "lower" : "higher", esc(e.dimension),
                       value_span(at(i, e.estimate, "estimate")), delta ? "Delta cos" : "cosine",
                       ci_text(lower, upper, e.ci_level),
                       p_text("p_holm", at(i, e.p_holm, "p_holm")))});
    }
  }
  page.figure(
      svg_forest_chart(f),
      "Each contrast with its confidence interval; filled: significant after Holm correction.",
      std::move(tf));
}

// Group means with CI bars, one small chart per dimension (paper 001's group comparisons);
// analyses.association read through its typed contract (dual_encoder_results.h).
void association_section(Page& page, const std::string& measure) {
  const auto a = association_from_json(page.root()["analyses"].json());
  if (!a) return;
  const bool delta = a->has_delta;
  const std::string value_key = delta ? "delta_cos_mean" : "cos_mean";
  const std::string unit = delta ? "Delta cos (cosine minus the neutral prompt's)" : "cosine";
  page.section(kAssociationSection, "Association: group means",
               "Mean " + std::string(delta ? "Delta cos" : "cosine") +
                   " of each group's images with each dimension's prompts, with bootstrap " +
                   "confidence intervals over images.");
  for (std::size_t d = 0; d < a->dimensions.size(); ++d) {
    const AssociationDimension& dim = a->dimensions[d];
    BarChart chart;
    chart.title = measure + ": " + dim.dimension;
    chart.x_label = unit;
    chart.points = true;
    BarSeries s;
    s.name = dim.dimension;
    DataTable t;
    t.name = "association_" + dim.dimension;
    t.columns = {"group", "dimension", "n", value_key, "ci_lower", "ci_upper"};
    for (std::size_t g = 0; g < dim.groups.size(); ++g) {
      const AssociationGroup& grp = dim.groups[g];
      const std::string ptr = association_group_pointer(d, g);
      const std::string label = group_label(Node(&grp.key, ptr + "/key"));
      const double value = delta ? grp.delta_cos_mean : grp.cos_mean;
      const double lower = grp.ci ? grp.ci->lower : NAN, upper = grp.ci ? grp.ci->upper : NAN;
      chart.categories.push_back(label);
      s.value.push_back(value);
      s.lower.push_back(lower);
      s.upper.push_back(upper);
      t.add({cell(label), cell(dim.dimension), cell(NumberAt{grp.n, ptr + "/n"}, Fmt::integer),
             cell(NumberAt{value, ptr + "/" + value_key}), cell(NumberAt{lower, ptr + "/ci/lower"}),
             cell(NumberAt{upper, ptr + "/ci/upper"})});
    }
    chart.series.push_back(std::move(s));
    const bool level =
        !dim.groups.empty() && dim.groups[0].ci && !std::isnan(dim.groups[0].ci->level);
    page.figure(
        svg_bar_chart(chart),
        "Group means on " + dim.dimension + " with " +
            (!level ? std::string("no intervals")
                    : fmt::format("{:g}% bootstrap intervals", 100 * dim.groups[0].ci->level)) +
            ".",
        std::move(t));
  }
  contrasts_section(page, *a);
}

// SC-WEAT effect sizes over group pairs x dimensions.
void scweat_section(Page& page) {
  const Node s = page.root()["analyses"]["scweat"];
  if (s.null()) return;
  const Node tests = s["tests"];
  page.section("scweat", "SC-WEAT between groups",
               "Single-category WEAT effect sizes of one group's images against another's, per "
               "dimension and for every dimension together (\"all\"), with " +
                   s["p_test"].str() + " p-values, Holm-corrected over the table.");
  std::vector<GridItem> items;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const Node t = tests[i];
    std::string row = t["group_a"].str() + " vs " + t["group_b"].str();
    std::replace(row.begin(), row.end(), '|', ' ');
    items.push_back({row,
                     t["dimension"].str(),
                     t["effect_size"].number(),
                     t["p_holm"].number(),
                     {cell(row), cell(t["dimension"].str()), cell(t["n_a"], Fmt::integer),
                      cell(t["n_b"], Fmt::integer), cell(t["effect_size"]),
                      cell(t["p_value"], Fmt::p), cell(t["p_holm"], Fmt::p)}});
    if (t["p_holm"].number() < kAlpha) {
      const double d = t["effect_size"].number();
      page.finding(
          {1, std::abs(d),
           fmt::format("On <strong>{}</strong>, images of <strong>{}</strong> associate {} "
                       "with the prompts than images of <strong>{}</strong> (SC-WEAT effect "
                       "size {}, {}).",
                       esc(t["dimension"].str()), esc(spaced(t["group_a"].str())),
                       d > 0 ? "more" : "less", esc(spaced(t["group_b"].str())),
                       value_span(t["effect_size"]), p_text("p_holm", t["p_holm"]))});
    }
  }
  Heatmap h;
  h.title = "SC-WEAT effect size (first group minus second)";
  h.value_label = "effect size";
  DataTable table;
  table.name = "scweat_heatmap";
  table.columns = {"groups", "dimension", "n_a", "n_b", "effect_size", "p_value", "p_holm"};
  fill_heatmap(items, h, table);
  page.figure(svg_heatmap(h), "SC-WEAT effect sizes; * marks p_holm < 0.05.", std::move(table));
}

void markedness_section(Page& page) {
  const Node m = page.root()["analyses"]["markedness"];
  if (m.null()) return;
  page.section("markedness", "Markedness", m["definition"].str());
  BarChart chart;
  chart.title = "Marked images per group";
  chart.x_label = "percent of the group's images";
  BarSeries s;
  s.name = "percent";
  DataTable t;
  t.name = "markedness";
  t.columns = {"attribute", "level", "n", "percent", "ci_lower", "ci_upper"};
  for (std::size_t i = 0; i < m["groups"].size(); ++i) {
    const Node g = m["groups"][i];
    chart.categories.push_back(g["attribute"].str() + " = " + g["level"].str());
    s.value.push_back(g["percent"].number());
    s.lower.push_back(g["ci"]["lower"].number());
    s.upper.push_back(g["ci"]["upper"].number());
    t.add({cell(g["attribute"].str()), cell(g["level"].str()), cell(g["n"], Fmt::integer),
           cell(g["percent"]), cell(g["ci"]["lower"]), cell(g["ci"]["upper"])});
  }
  chart.series.push_back(std::move(s));
  page.figure(svg_bar_chart(chart),
              "Share of each group's images that are marked, with bootstrap intervals.",
              std::move(t));
}

// The neutral-prompt reference per group (paper 001 App. G): group means with intervals, and
// the pairs of groups that differ after Holm correction as findings.
void neutral_section(Page& page) {
  const Node n = page.root()["analyses"]["neutral"];
  if (n.null()) return;
  page.section("neutral", "Cosine with the neutral prompt", n["definition"].str());
  BarChart chart;
  chart.title = "Mean cosine with the neutral prompt per group";
  chart.x_label = "cos(image, neutral prompt)";
  chart.points = true;
  BarSeries s;
  s.name = "mean";
  DataTable t;
  t.name = "neutral_groups";
  t.columns = {"group", "n", "mean", "sd", "ci_lower", "ci_upper"};
  for (std::size_t i = 0; i < n["groups"].size(); ++i) {
    const Node g = n["groups"][i];
    chart.categories.push_back(group_label(g["key"]));
    s.value.push_back(g["mean"].number());
    s.lower.push_back(g["mean_ci"]["lower"].number());
    s.upper.push_back(g["mean_ci"]["upper"].number());
    t.add({cell(group_label(g["key"])), cell(g["n"], Fmt::integer), cell(g["mean"]), cell(g["sd"]),
           cell(g["mean_ci"]["lower"]), cell(g["mean_ci"]["upper"])});
  }
  chart.series.push_back(std::move(s));
  page.figure(svg_bar_chart(chart),
              "Each group's mean cosine with the neutral prompt, with bootstrap intervals "
              "(paper 001 Fig. S.14-S.15); one-way ANOVA across groups: " +
                  p_text("p", n["anova"]["p_value"]) + ".",
              std::move(t));
  DataTable pairs;
  pairs.name = "neutral_pairs";
  pairs.columns = {"group_a", "group_b", "n", "difference", "t", "p", "p_holm"};
  const bool paired = !n["pair_key"].null();
  if (paired) pairs.columns.push_back("pearson_r");
  for (std::size_t i = 0; i < n["pairs"].size(); ++i) {
    const Node e = n["pairs"][i];
    std::vector<Cell> row = {cell(group_label(e["a"])),    cell(group_label(e["b"])),
                             cell(e["n"], Fmt::integer),   cell(e["difference"]),
                             cell(e["test"]["statistic"]), cell(e["test"]["p_value"], Fmt::p),
                             cell(e["p_holm"], Fmt::p)};
    if (paired) row.push_back(cell(e["pearson"]["statistic"]));
    pairs.add(std::move(row));
    if (e["p_holm"].number() < kAlpha) {
      const double d = e["difference"].number();
      page.finding(
          {2, std::abs(d),
           fmt::format("Before any social word, images of <strong>{}</strong> are {} "
                       "similar to the neutral prompt than images of <strong>{}</strong> "
                       "(difference {}, {}).",
                       esc(group_label(e["a"])), d < 0 ? "less" : "more", esc(group_label(e["b"])),
                       value_span(e["difference"]), p_text("p_holm", e["p_holm"]))});
    }
  }
  page.table(paired ? "Pairs of groups: paired t over shared identities, and Pearson's r of "
                      "their values (Fig. S.15, S.16)."
                    : "Pairs of groups: Welch's t over their images.",
             std::move(pairs));
}

void ranking_section(Page& page) {
  const Node r = page.root()["analyses"]["ranking"];
  if (r.null()) return;
  page.section("ranking", "Ranking: Skew@k and NDKL", r["score"].str());
  // One heatmap of Skew@k per attribute: levels x dimensions.
  std::vector<std::string> attributes;
  for (std::size_t i = 0; i < r["results"].size(); ++i) {
    const std::string a = r["results"][i]["attribute"].str();
    if (std::find(attributes.begin(), attributes.end(), a) == attributes.end())
      attributes.push_back(a);
  }
  for (const std::string& attr : attributes) {
    Heatmap h;
    h.title = "Skew@k of " + attr + " among the top-ranked images";
    h.value_label = "log(share in top k / desired share)";
    DataTable t;
    t.name = "ranking_skew_" + attr;
    t.columns = {"level", "dimension", "k", "skew", "ndkl"};
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < r["results"].size(); ++i) {
      if (r["results"][i]["attribute"].str() == attr) idx.push_back(i);
    }
    if (idx.empty()) continue;
    h.row_labels = r["results"][idx[0]]["skew"].keys();
    for (std::size_t i : idx) h.col_labels.push_back(r["results"][i]["dimension"].str());
    for (const std::string& level : h.row_labels) {
      for (std::size_t i : idx) {
        const Node e = r["results"][i];
        h.values.push_back(e["skew"][level].number());
        t.add({cell(level), cell(e["dimension"].str()), cell(e["k"], Fmt::integer),
               cell(e["skew"][level]), cell(e["ndkl"])});
      }
    }
    page.figure(svg_heatmap(h),
                "Skew@k per level of " + attr +
                    " and dimension (0 = the desired share; NDKL in the table).",
                std::move(t));
  }
}

void absdiff_section(Page& page) {
  const Node a = page.root()["analyses"]["absdiff"];
  if (a.null()) return;
  page.section("absdiff", "AbsDiff: how much each factor moves the scores",
               "Absolute differences of Delta cos between images that differ only in one factor (" +
                   a["sampling"].str() + "); boxes per factor, pooled over dimensions.");
  BoxChart chart;
  chart.title = "AbsDiff per factor (all dimensions)";
  chart.x_label = "|Delta cos difference|";
  DataTable t;
  t.name = "absdiff_boxes";
  t.columns = {"factor", "n", "whisker_low", "q25", "median", "q75", "whisker_high", "mean"};
  for (std::size_t i = 0; i < a["cells"].size(); ++i) {
    const Node c = a["cells"][i];
    if (!c["dimension"].str().empty()) continue;
    chart.items.push_back({c["factor"].str(), c["whisker_low"].number(), c["q25"].number(),
                           c["median"].number(), c["q75"].number(), c["whisker_high"].number(),
                           c["mean"].number()});
    t.add({cell(c["factor"].str()), cell(c["n"], Fmt::integer), cell(c["whisker_low"]),
           cell(c["q25"]), cell(c["median"]), cell(c["q75"]), cell(c["whisker_high"]),
           cell(c["mean"])});
  }
  page.figure(
      svg_box_chart(chart),
      "Box: quartiles; line: median; diamond: mean; whiskers: the most extreme values within "
      "1.5 IQR of the box (paper 001 Fig. 2).",
      std::move(t));
  const Node tests = a["tests"];
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const Node e = tests[i];
    if (!(e["p_holm"].number() < kAlpha)) continue;
    const double r = e["effect_size"].number();
    const std::string dim = e["dimension"].str().empty() ? "all dimensions" : e["dimension"].str();
    page.finding(
        {2, std::abs(r),
         fmt::format("On <strong>{}</strong>, changing <strong>{}</strong> moves the scores "
                     "{} than changing <strong>{}</strong> (AbsDiff, rank-biserial r = {}, {}).",
                     esc(dim), esc(r > 0 ? e["factor_a"].str() : e["factor_b"].str()), "more",
                     esc(r > 0 ? e["factor_b"].str() : e["factor_a"].str()),
                     value_span(e["effect_size"]), p_text("p_holm", e["p_holm"]))});
  }
}

void trends_section(Page& page) {
  const Node t = page.root()["analyses"]["trends"];
  if (t.null()) return;
  page.section("trends", "Trends over ordinal factors",
               t["model"].str() + ", fitted to " + t["fit_to"].str() +
                   " per group (paper 001 Figs. 3 and 5).");
  // One chart per (x, dimension), a series per group.
  std::vector<std::pair<std::string, std::string>> charts;
  const Node fits = t["fits"];
  for (std::size_t i = 0; i < fits.size(); ++i) {
    const std::pair<std::string, std::string> k{fits[i]["x"].str(), fits[i]["dimension"].str()};
    if (std::find(charts.begin(), charts.end(), k) == charts.end()) charts.push_back(k);
  }
  for (const auto& [x, dim] : charts) {
    LineChart chart;
    chart.title = dim + " over " + x;
    chart.x_label = x;
    chart.y_label = "mean Delta cos";
    DataTable table;
    table.name = "trends_" + x + "_" + dim;
    table.columns = {"group", "x", "level", "level_mean", "level_n", "b0", "b1", "b2", "r_squared"};
    for (std::size_t i = 0; i < fits.size(); ++i) {
      const Node f = fits[i];
      if (f["x"].str() != x || f["dimension"].str() != dim) continue;
      LineSeries s;
      s.name = group_label(f["key"]);
      for (std::size_t l = 0; l < f["levels"].size(); ++l) {
        s.x.push_back(f["levels"][l].number());
        s.y.push_back(f["level_means"][l].number());
        table.add({cell(s.name), cell(x), cell(f["levels"][l]), cell(f["level_means"][l]),
                   cell(f["level_n"][l], Fmt::integer), cell(f["coefficients"][0]),
                   cell(f["coefficients"][1]), cell(f["coefficients"][2]), cell(f["r_squared"])});
      }
      for (std::size_t k = 0; k < f["coefficients"].size(); ++k)
        s.coefficients.push_back(f["coefficients"][k].number());
      chart.series.push_back(std::move(s));
    }
    page.figure(svg_line_chart(chart),
                "Mean Delta cos on " + dim + " per level of " + x +
                    " (points) and the quadratic fit per group (lines).",
                std::move(table));
  }
}

void ellipses_section(Page& page) {
  const Node e = page.root()["analyses"]["ellipses"];
  if (e.null()) return;
  const Node fits = page.root()["analyses"]["trends"]["fits"];
  page.section("ellipses", "Covariance ellipses",
               fmt::format("{:g}-sigma covariance ellipses of the {} per group (paper 001 Fig. 4).",
                           e["k_sigma"].number(), e["points"].str()));
  // The points are the trends' level means of the ellipse's x variable, when present.
  std::string points_by = e["points"].str();
  const std::string prefix = "means per level of ";
  points_by = points_by.rfind(prefix, 0) == 0 ? points_by.substr(prefix.size()) : "";
  std::vector<std::pair<std::string, std::string>> pairs;
  const Node list = e["ellipses"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::pair<std::string, std::string> k{list[i]["x_dimension"].str(),
                                                list[i]["y_dimension"].str()};
    if (std::find(pairs.begin(), pairs.end(), k) == pairs.end()) pairs.push_back(k);
  }
  // The fits of points_by indexed once by (dimension, group key): a search of every fit for
  // every ellipse was quadratic in the groups.
  std::map<std::pair<std::string, std::string>, std::size_t> fit_of;
  for (std::size_t i = 0; i < fits.size(); ++i) {
    if (fits[i]["x"].str() != points_by) continue;
    fit_of.emplace(std::pair{fits[i]["dimension"].str(), fits[i]["key"].json().dump()}, i);
  }
  auto level_means = [&](const Json& key, const std::string& dim) -> Node {
    const auto it = fit_of.find({dim, key.dump()});
    return it == fit_of.end() ? Node(nullptr, "") : fits[it->second]["level_means"];
  };
  for (const auto& [xd, yd] : pairs) {
    ScatterChart chart;
    chart.title = xd + " against " + yd;
    chart.x_label = "mean Delta cos, " + xd;
    chart.y_label = "mean Delta cos, " + yd;
    DataTable table;
    table.name = "ellipses_" + xd + "_" + yd;
    table.columns = {"group",      "center_x",      "center_y", "semi_major",
                     "semi_minor", "angle_radians", "n"};
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Node el = list[i];
      if (el["x_dimension"].str() != xd || el["y_dimension"].str() != yd) continue;
      EllipseSeries s;
      s.name = group_label(el["key"]);
      s.cx = el["center"][0].number();
      s.cy = el["center"][1].number();
      s.semi_major = el["semi_major"].number();
      s.semi_minor = el["semi_minor"].number();
      s.angle = el["angle_radians"].number();
      s.has_ellipse = std::isfinite(s.semi_major);
      const Node px = level_means(el["key"].json(), xd), py = level_means(el["key"].json(), yd);
      for (std::size_t k = 0; k < px.size() && k < py.size(); ++k) {
        s.x.push_back(px[k].number());
        s.y.push_back(py[k].number());
      }
      table.add({cell(s.name), cell(el["center"][0]), cell(el["center"][1]), cell(el["semi_major"]),
                 cell(el["semi_minor"]), cell(el["angle_radians"]), cell(el["n"], Fmt::integer)});
      chart.series.push_back(std::move(s));
    }
    page.figure(svg_scatter_chart(chart),
                "Points: the group's mean per level of " + points_by +
                    "; ellipses: " + fmt::format("{:g}", e["k_sigma"].number()) +
                    "-sigma covariance of those points.",
                std::move(table));
  }
}

}  // namespace

void build_social_perception(Page& page) {
  dual_facts(page);
  association_section(page, "Delta cos");
  scweat_section(page);
  markedness_section(page);
  neutral_section(page);
  prompt_sections(page);
  ranking_section(page);
  absdiff_section(page);
  trends_section(page);
  ellipses_section(page);
  exemplars_section(page, page.root()["exemplars"], "images");
}

void build_trait_pairs(Page& page) {
  dual_facts(page);
  confidence_section(page);
  association_section(page, "Association");
  scweat_section(page);
  explain_section(page);
  exemplars_section(page, page.root()["exemplars"], "images");
}

}  // namespace vlbias::report_internal
