// The report sections of the social-perception audit about its prompts and valences: the
// prompts' geometry (paper 001 App. D, Table S.5) and the valence correlations over a factor's
// levels (App. C.1, Table S.4).
#include <fmt/format.h>

#include "report_page.h"

namespace vlbias::report_internal {

namespace {

// Within- and cross-valence cosines of the prompts (paper 001 Table S.5).
void prompt_geometry_section(Page& page) {
  const Node g = page.root()["analyses"]["prompt_geometry"];
  if (g.null()) return;
  page.section("prompt_geometry", "How close the two valences lie", g["definition"].str());
  DataTable t;
  t.name = "prompt_geometry";
  t.columns = {"dimension", "within_positive", "within_negative",
               "cross",     "p_positive",      "p_negative"};
  for (std::size_t i = 0; i < g["dimensions"].size(); ++i) {
    const Node d = g["dimensions"][i];
    t.add({cell(d["dimension"].str()), cell(d["within_positive"]["mean"]),
           cell(d["within_negative"]["mean"]), cell(d["cross"]["mean"]),
           cell(d["positive_vs_cross"]["p_value"], Fmt::p),
           cell(d["negative_vs_cross"]["p_value"], Fmt::p)});
  }
  page.table(
      "Mean cosine between word pairs within each valence and across; one-sided Welch "
      "p that within-valence pairs are closer (paper 001 Table S.5). The PCA "
      "coordinates are in tables/prompt_pca.csv.",
      std::move(t));
}

// Pearson r of a dimension's two valences over a factor's levels (paper 001 Table S.4).
void valence_correlation_section(Page& page) {
  const Node v = page.root()["analyses"]["valence_correlation"];
  if (v.null()) return;
  page.section("valence_correlation", "Do the factors move the two valences together?",
               v["definition"].str());
  DataTable t;
  t.name = "valence_correlation";
  t.columns = {"factor", "dimension", "levels", "r", "r_lower", "r_upper", "p"};
  for (std::size_t f = 0; f < v["factors"].size(); ++f) {
    const Node factor = v["factors"][f];
    std::string label = factor["factor"].str();
    if (!v["within"].null()) {
      const std::string w = v["within"].str();
      label += fmt::format(" ({} = {})", w, factor["within"][w].str());
    }
    for (std::size_t i = 0; i < factor["pairs"].size(); ++i) {
      const Node p = factor["pairs"][i];
      const Node r = p["pearson"];
      t.add({cell(label), cell(fmt::format("{} / {}", p["positive"].str(), p["negative"].str())),
             cell(std::to_string(factor["levels"].size())), cell(r["statistic"]),
             cell(r["ci"]["lower"]), cell(r["ci"]["upper"]), cell(r["p_value"], Fmt::p)});
    }
    t.add({cell(label), cell("average r"), cell(""), cell(factor["average_r"]), cell(""), cell(""),
           cell("")});
  }
  page.table(
      "Pearson r over the factor's levels between the mean Delta cos of the positive and of the "
      "negative valence (paper 001 Table S.4); the level means are in "
      "tables/valence_level_means.csv.",
      std::move(t));
}

}  // namespace

void prompt_sections(Page& page) {
  prompt_geometry_section(page);
  valence_correlation_section(page);
}

}  // namespace vlbias::report_internal
