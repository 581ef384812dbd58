// `vlbias explain --faces`: where the evidence lies, per group (issue 40, item 4). The share of
// each map's mass inside the image's face boxes (rows.csv's cam_in_face) and inside their
// skin-coloured pixels (cam_in_skin), summarised per --by group with a percentile bootstrap
// interval of the mean, and compared across groups with Kruskal-Wallis and pairwise Mann-Whitney
// U tests, Holm-adjusted over the pairs: the engine of `vlbias describe` and `vlbias compare` on
// rows.csv, so the numbers are those commands' numbers.
#include "explain_internal.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/compare.h"

namespace vlbias::explain_internal {

namespace {

// The comparison of every group at once, or of each pair, on one value column.
Json explain_mass_comparison(const Table& rows, const std::string& value,
                             const std::vector<std::string>& by, GroupTest test, bool pairwise,
                             std::uint64_t seed) {
  CompareOptions c;
  c.value = value;
  c.by = by;
  c.test = test;
  c.pairwise = pairwise;
  c.seed = seed;
  return to_json(compare_groups(rows, c));
}

// One value column's groups, test and pairs.
Json explain_cam_mass_of(const Table& rows, const std::string& value,
                         const std::vector<std::string>& by, std::size_t bootstrap,
                         std::uint64_t seed) {
  DescribeOptions d;
  d.value = value;
  d.by = by;
  d.bootstrap = bootstrap;
  d.seed = seed;
  const DescribeReport described = describe_groups(rows, d);
  Json groups = to_json(described);
  Json out{{"groups", std::move(groups["groups"])}, {"rows", std::move(groups["rows"])}};
  std::size_t with_values = 0;
  for (const GroupDescription& g : described.groups) with_values += g.summary.n > 0 ? 1 : 0;
  if (by.empty() || with_values < 2) {
    out["test"] = nullptr;
    out["pairwise"] = nullptr;
    out["note"] = "fewer than two groups with a face: no test across groups";
    return out;
  }
  out["test"] = explain_mass_comparison(rows, value, by, GroupTest::Kruskal, false, seed);
  out["pairwise"] = explain_mass_comparison(rows, value, by, GroupTest::MannWhitney, true, seed);
  return out;
}

}  // namespace

Json explain_cam_mass(const Table& rows, const std::vector<std::string>& by, std::size_t bootstrap,
                      std::uint64_t seed) {
  return Json{
      {"by", by},
      {"bootstrap", bootstrap},
      {"seed", seed},
      {"definitions",
       Json{{kExplainCamInFace,
             "share of the map's mass inside the image's face boxes (images with a face)"},
            {kExplainCamInSkin,
             "share of the map's mass inside the skin-coloured pixels of the face boxes, the "
             "skin rule of HEIM's skin-tone metric on the model's input crop "
             "(docs/methods.md#clip-cam)"}}},
      {kExplainCamInFace, explain_cam_mass_of(rows, kExplainCamInFace, by, bootstrap, seed)},
      {kExplainCamInSkin, explain_cam_mass_of(rows, kExplainCamInSkin, by, bootstrap, seed)}};
}

}  // namespace vlbias::explain_internal
