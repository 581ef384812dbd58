// `vlbias metric trends`: quadratic trend fits per group and k-sigma covariance
// ellipses (paper 001, Hausladen et al. Fig. 3, 4, S.2, S.3; docs/methods.md#trends;
// src/stats/trends.cpp).
//
// Each --values column is one dimension (e.g. Delta cos of "agency+" and
// "agency-"); rows are images. Rows with a missing --x or --by cell are skipped
// by the fits; a used row with a missing value is an InputError naming its line.
#include <CLI/CLI.hpp>

#include <cmath>
#include <memory>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/trends.h"

namespace vlbias::cli_internal {

namespace {

struct TrendsArgs {
  std::string table, values, x, by, fit_to = "means", points_by, out;
  std::vector<std::string> planes;
  int degree = 2;
  double k_sigma = 2.0;
};

std::pair<std::string, std::string> parse_plane(const std::string& text) {
  const auto colon = text.find(':');
  VLBIAS_CHECK(colon != std::string::npos && colon > 0 && colon + 1 < text.size() &&
                   text.find(':', colon + 1) == std::string::npos,
               UsageError, "--plane expects X:Y (two dimension names); got '{}'.", text);
  return {text.substr(0, colon), text.substr(colon + 1)};
}

}  // namespace

void add_trends_metric(CLI::App& metric) {
  auto args = std::make_shared<TrendsArgs>();
  CLI::App* cmd = metric.add_subcommand(
      "trends",
      "Quadratic trend fits per group and 2-sigma covariance ellipses (Hausladen et al.; paper "
      "001)");
  cmd->add_option("--table", args->table, "CSV/TSV/JSONL table, one row per image")->required();
  cmd->add_option("--values", args->values,
                  "Comma list of numeric columns, one per dimension (e.g. agency+,agency-)")
      ->required();
  cmd->add_option("--x", args->x, "Numeric ordinal factor to fit against (age, smiling)")
      ->required();
  cmd->add_option("--by", args->by, "Comma list of grouping columns (e.g. race,gender)");
  cmd->add_option("--degree", args->degree, "Polynomial degree")->capture_default_str();
  cmd->add_option("--fit-to", args->fit_to,
                  "Fit the per-level means (as the paper) or every image: means | images")
      ->capture_default_str();
  cmd->add_option("--ellipse-points-by", args->points_by,
                  "One ellipse point per level of this column (its means); default every image");
  cmd->add_option("--plane", args->planes,
                  "Ellipse plane X:Y of two dimensions (repeatable); default name+:name-");
  cmd->add_option("--k-sigma", args->k_sigma, "Ellipse size in standard deviations")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  cmd->callback([args] {
    VLBIAS_CHECK(args->fit_to == "means" || args->fit_to == "images", UsageError,
                 "--fit-to must be 'means' or 'images'; got '{}'.", args->fit_to);
    VLBIAS_CHECK(args->degree >= 0, UsageError, "--degree must be at least 0; got {}.",
                 args->degree);
    VLBIAS_CHECK(std::isfinite(args->k_sigma) && args->k_sigma > 0, UsageError,
                 "--k-sigma must be a positive number; got {}.", args->k_sigma);
    const std::vector<std::string> dimensions = split_list(args->values, "--values");
    std::vector<std::string> by;
    if (!args->by.empty()) by = split_list(args->by, "--by");
    std::vector<std::pair<std::string, std::string>> planes;
    for (const auto& p : args->planes) planes.push_back(parse_plane(p));

    Provenance p;
    p.inputs = {args->table};
    start_hashing_inputs(p);
    const Table table = read_table(args->table);
    // values: rows x dimensions, row-major; missing cells are NaN and refused by
    // the library for the rows it uses.
    const std::vector<double> values = value_matrix(table, dimensions, /*allow_missing=*/true);

    TrendOptions to;
    to.x = args->x;
    to.by = by;
    to.degree = args->degree;
    to.fit_to_means = args->fit_to == "means";
    const std::vector<TrendFit> fits = trend_fits(table, values, dimensions, to);

    EllipseOptions eo;
    eo.by = by;
    eo.points_by = args->points_by;
    eo.k_sigma = args->k_sigma;
    eo.planes = planes;
    const std::vector<GroupEllipse> ellipses = group_ellipses(table, values, dimensions, eo);

    Json out = Json::object();
    Json fits_json = Json::array();
    for (const TrendFit& f : fits) fits_json.push_back(to_json(f, by));
    out["fits"] = std::move(fits_json);
    Json ellipses_json = Json::array();
    for (const GroupEllipse& g : ellipses) ellipses_json.push_back(to_json(g, by));
    out["ellipses"] = std::move(ellipses_json);

    Json planes_json = Json::array();
    for (const auto& [px, py] : planes) planes_json.push_back(Json::array({px, py}));
    p.command = "metric trends";
    p.parameters = Json{{"values", dimensions},
                        {"x", args->x},
                        {"by", by},
                        {"degree", args->degree},
                        {"fit_to", args->fit_to},
                        {"ellipse_points_by", args->points_by},
                        {"planes", planes_json},
                        {"k_sigma", args->k_sigma}};
    out["provenance"] = provenance_json(p);
    write_json(out, args->out);
  });
}

}  // namespace vlbias::cli_internal
