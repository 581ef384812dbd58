// `vlbias explain --faces`: where the evidence lies, per group (issue 40, item 4). The share of
// each map's mass inside the image's face boxes (rows.csv's cam_in_face) summarised per --by
// group with a percentile bootstrap interval of the mean, and compared across groups with
// Kruskal-Wallis and pairwise Mann-Whitney U tests, Holm-adjusted over the pairs: the engine of
// `vlbias describe` and `vlbias compare` on rows.csv, so the numbers are those commands' numbers.
#include "explain_job.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/compare.h"

namespace vlbias::cli_internal {

namespace {

// The comparison of every group at once, or of each pair, on cam_in_face.
Json explain_mass_comparison(const Table& rows, const std::vector<std::string>& by, GroupTest test,
                             bool pairwise, std::uint64_t seed) {
  CompareOptions c;
  c.value = kExplainCamInFace;
  c.by = by;
  c.test = test;
  c.pairwise = pairwise;
  c.seed = seed;
  return to_json(compare_groups(rows, c));
}

}  // namespace

Json explain_cam_mass(const Table& rows, const std::vector<std::string>& by, std::size_t bootstrap,
                      std::uint64_t seed) {
  DescribeOptions d;
  d.value = kExplainCamInFace;
  d.by = by;
  d.bootstrap = bootstrap;
  d.seed = seed;
  const DescribeReport described = describe_groups(rows, d);
  Json groups = to_json(described);
  Json out{{"value", kExplainCamInFace},
           {"definition",
            "share of the map's mass inside the image's face boxes, per explained image with a "
            "face (docs/methods.md#clip-cam)"},
           {"by", by},
           {"bootstrap", bootstrap},
           {"seed", seed},
           {"groups", std::move(groups["groups"])},
           {"rows", std::move(groups["rows"])}};
  std::size_t with_values = 0;
  for (const GroupDescription& g : described.groups) with_values += g.summary.n > 0 ? 1 : 0;
  if (by.empty() || with_values < 2) {
    out["test"] = nullptr;
    out["pairwise"] = nullptr;
    out["note"] = "fewer than two groups with a face: no test across groups";
    return out;
  }
  out["test"] = explain_mass_comparison(rows, by, GroupTest::Kruskal, false, seed);
  out["pairwise"] = explain_mass_comparison(rows, by, GroupTest::MannWhitney, true, seed);
  return out;
}

}  // namespace vlbias::cli_internal
