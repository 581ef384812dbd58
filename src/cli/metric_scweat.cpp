// `vlbias metric scweat`: SC-WEAT of text embeddings against two image sets
// (docs/methods.md#sc-weat; Caliskan et al. 2017 WEAT; Hausladen et al. SC-WEAT).
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/metrics/association.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/metric_json.h"

namespace vlbias::cli_internal {

namespace {

struct ScweatArgs {
  std::string targets, a, b, p_test = "permutation", out;
  std::size_t permutations = 10000;
  std::uint64_t seed = 0;
};

}  // namespace

void add_scweat_metric(CLI::App& metric) {
  auto args = std::make_shared<ScweatArgs>();
  CLI::App* cmd = metric.add_subcommand(
      "scweat",
      "Single-category WEAT of text embeddings against image sets A and B: per-target\n"
      "mean cosine difference and effect size, with a permutation or sign-flip p-value");
  cmd->add_option("--targets", args->targets, "Text embeddings (.npy, rows = targets)")->required();
  cmd->add_option("--a", args->a, "Image embeddings of set A (.npy, rows = images)")->required();
  cmd->add_option("--b", args->b, "Image embeddings of set B (.npy, rows = images)")->required();
  cmd->add_option("--p-test", args->p_test,
                  "permutation (relabel A u B) | sign-flip (signs of per-target differences)")
      ->capture_default_str();
  cmd->add_option("--permutations", args->permutations,
                  "Resamples B (all relabellings are enumerated when there are at most B)")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the resampling")->capture_default_str();
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  cmd->callback([args] {
    ScweatOptions o;
    o.p_test = parse_scweat_p_test(args->p_test);
    o.permutations = args->permutations;
    o.seed = args->seed;
    o.targets_name = args->targets;
    o.a_name = args->a;
    o.b_name = args->b;
    Provenance p;
    p.inputs = {args->targets, args->a, args->b};
    start_hashing_inputs(p);
    const Matrix targets = read_npy_matrix(args->targets);
    const Matrix a = read_npy_matrix(args->a);
    const Matrix b = read_npy_matrix(args->b);
    const ScweatResult result = sc_weat(targets, a, b, o);
    Json out = scweat_json(result);
    p.command = "metric scweat";
    p.parameters = Json{{"p_test", to_string(o.p_test)},
                        {"permutations", o.permutations},
                        {"alternative", "two-sided"}};
    p.seed = o.seed;
    out["provenance"] = provenance_json(p);
    write_json(out, args->out);
  });
}

}  // namespace vlbias::cli_internal
