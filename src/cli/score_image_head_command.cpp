// `vlbias score image-head`: scoring heads (safety checker, aesthetics, Q16, CLIP-IQA) on the
// CLIP image embeddings `vlbias encode --images` wrote (include/vlbias/score/image_heads.h).
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/log.h"
#include "vlbias/core/terminal.h"
#include "vlbias/score/image_heads.h"

namespace vlbias::cli_internal {

namespace {

struct ImageHeadArgs {
  std::string embeddings, rows, head, weights, prompts, out;
  double adjustment = 0.0;
};

}  // namespace

void add_score_image_head_command(CLI::App& score) {
  auto args = std::make_shared<ImageHeadArgs>();
  CLI::App* cmd = score.add_subcommand(
      "image-head",
      "Score images with a small head on their CLIP ViT-L/14 embeddings (from `vlbias encode\n"
      "--images`): safety-checker (Stable Diffusion's NSFW checker), laion-aesthetic,\n"
      "heim-aesthetic, q16 (inappropriate content) or clip-iqa; writes SCORES.csv: image, the\n"
      "scores, decisions as 0/1 and the head's provenance (kind, weights, SHA-256, options)");
  cmd->add_option("--embeddings", args->embeddings,
                  "Image embeddings (.npy or .safetensors) written by `vlbias encode --images`")
      ->required();
  cmd->add_option("--rows", args->rows, "The rows file encode wrote beside them (EMB.rows.csv)")
      ->required();
  cmd->add_option("--head", args->head,
                  "safety-checker | laion-aesthetic | heim-aesthetic | q16 | clip-iqa")
      ->required();
  cmd->add_option("--weights", args->weights,
                  "The head's weights as published: safety-checker model.safetensors or\n"
                  "pytorch_model.bin; laion-aesthetic sac+logos+ava1-l14-linearMSE.pth;\n"
                  "heim-aesthetic sa_0_4_vit_l_14_linear.pth; q16 prompts.p; clip-iqa the\n"
                  "prompts' text embeddings from `vlbias encode --texts`")
      ->required();
  cmd->add_option("--prompts", args->prompts,
                  "clip-iqa: the prompt pairs (name, polarity, text), e.g.\n"
                  "data/clip_iqa/prompts.csv, in the order of --weights' rows");
  cmd->add_option("--adjustment", args->adjustment,
                  "safety-checker: the starting adjustment added to every score (diffusers: 0.0;\n"
                  "its first release: 0.05)")
      ->capture_default_str()
      ->check(CLI::Range(-1.0, 1.0));
  cmd->add_option("--out", args->out, "SCORES.csv to write")->required();
  cmd->callback([args] {
    ImageHeadJobOptions o;
    o.kind = parse_image_head_kind(args->head);
    o.embeddings = args->embeddings;
    o.rows = args->rows;
    o.weights = args->weights;
    o.prompts = args->prompts;
    o.out = args->out;
    o.adjustment = args->adjustment;
    const ImageHeadJobResult r = run_image_head_job(o);
    if (!quiet()) {
      std::string flagged;
      for (std::size_t k = 0; k < r.decision_names.size(); ++k) {
        flagged += fmt::format(", {} {}", r.flagged[k], r.decision_names[k]);
      }
      eprint("vlbias: {} scored {} images{} -> {}\n", args->head, r.rows, flagged, o.out.string());
    }
  });
}

}  // namespace vlbias::cli_internal
