// `vlbias label`: perceived attributes per image or face into LABELS.csv (issue 41;
// include/vlbias/labels/labels_table.h). The clip labeller: zero-shot prompts of a shipped or
// given prompt set (include/vlbias/labels/clip_labels.h); the fairface labeller: the FairFace
// classifier's heads (include/vlbias/labels/fairface_labels.h).
#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/sha256.h"
#include "vlbias/core/terminal.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/generate/generate.h"
#include "vlbias/generate/generate_yaml.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/table/table.h"
#include "vlbias/labels/clip_labels.h"
#include "vlbias/labels/fairface_labels.h"
#include "vlbias/labels/vlm_labels.h"
#include "vlbias/score/choice_job.h"

namespace vlbias::cli_internal {

namespace fs = std::filesystem;

namespace {

struct LabelArgs {
  std::string images, column, image_root, out, model, labeller = "clip", prompts = "fairface";
  std::string variant = "race7", classes, answers, image_column = "image", face_column;
  std::string shard, spec;
  std::vector<std::string> attributes;
  double margin = 0.0;
  std::size_t batch = 0, max_image_pixels = kPillowMaxImagePixels, chunk = 0;
  bool exif_transpose = false, resume = false;
};

void add_label_options(CLI::App* cmd, LabelArgs& a) {
  cmd->add_option("--images", a.images,
                  "A table with a path column, a Parquet table with the images inside, a folder\n"
                  "of .jpg/.jpeg/.png (as `vlbias encode --images`), or a FACES_DIR of `vlbias\n"
                  "faces` (each face's chip is labelled)");
  cmd->add_option("--out", a.out, "LABELS.csv: one row per image (or face) and attribute")
      ->required();
  cmd->add_option("--labeller", a.labeller,
                  "Who labels: clip (CLIP zero-shot prompts), fairface (the FairFace\n"
                  "ResNet-34 classifier) or vlm (a VLM's answers to a closed question: --spec or\n"
                  "--answers)")
      ->check(CLI::IsMember({"clip", "fairface", "vlm"}))
      ->capture_default_str();
  cmd->add_option("--model", a.model,
                  "clip: a CLIP model folder (Hugging Face or open_clip layout, with its\n"
                  "tokenizer); fairface: the .pt state_dict (e.g. res34_fair_align_multi_7_\n"
                  "20190809.pt), a .safetensors file or a converted folder");
  cmd->add_option("--attributes", a.attributes,
                  "Attributes to label, comma-separated. clip (required), of the prompt set:\n"
                  "fairface: gender, race, race4, age; heim: gender; dalleval: gender, race.\n"
                  "fairface (default: every head): gender, age, race (7-race) or race4.\n"
                  "vlm --spec with questions: the questions to ask (default: all)")
      ->delimiter(',');
  cmd->add_option("--answers", a.answers,
                  "vlm: a `vlbias score choice` RUN_DIR (scored.jsonl, manifest.json) of a closed\n"
                  "question about one attribute");
  cmd->add_option("--spec", a.spec,
                  "vlm: a label-vlm spec (docs/specs.md#label-vlm): the endpoint, attribute,\n"
                  "question and choices; the question is asked about every --images item through\n"
                  "`generate lvlm` and the answers mapped as `score choice` maps them");
  cmd->add_option("--image-column", a.image_column, "vlm: the answers' image column")
      ->capture_default_str();
  cmd->add_option("--face-column", a.face_column,
                  "vlm: the answers' face column (faces.csv's face index; default: none)");
  cmd->add_option("--variant", a.variant,
                  "fairface: race7 (the 7-race model) or race4 (the 4-race model)")
      ->capture_default_str();
  cmd->add_option("--classes", a.classes,
                  "fairface: a JSON file renaming the heads' classes ({\"race\": [...], ...})");
  cmd->add_option("--prompts", a.prompts,
                  "A shipped prompt set (fairface, heim, dalleval) or a JSON file of your own\n"
                  "(docs/methods.md#clip-zero-shot-labels)")
      ->capture_default_str();
  cmd->add_option("--margin", a.margin,
                  "Abstain (label unclear) when the top two probabilities differ by less;\n"
                  "0 never abstains")
      ->capture_default_str();
  add_image_table_options(cmd, a.column, a.image_root);
  cmd->add_option("--batch", a.batch, "Images per forward pass (default: clip 32, fairface 16)");
  cmd->add_option("--max-image-pixels", a.max_image_pixels,
                  "Pillow's MAX_IMAGE_PIXELS rule: images over twice this are refused, over it\n"
                  "warned")
      ->capture_default_str();
  cmd->add_flag("--exif-transpose", a.exif_transpose,
                "Rotate / flip each image by its EXIF orientation as PIL.ImageOps.exif_transpose");
  cmd->add_flag("--resume", a.resume,
                "Continue an interrupted run: clip / fairface from OUT.partial/ (the same job\n"
                "only: labeller, model, weights, prompt set, options and items); vlm --spec the\n"
                "requests of OUT.vlm/run/ (failed ones sent again)");
  add_shard_option(cmd, a.shard, "checkpoint chunks c (--chunk items each) with c mod N = I");
  cmd->add_option("--chunk", a.chunk,
                  "Items per checkpoint (default 64); the unit of --resume and --shard");
}

// The options both image labellers share (ClipLabelOptions, FairFaceLabelOptions).
template <typename Options>
Options image_label_options(const LabelArgs& a) {
  Options o;
  o.input = a.images;
  o.column = a.column;
  o.image_root = a.image_root;
  o.model = a.model;
  o.attributes = a.attributes;
  o.margin = a.margin;
  o.out = a.out;
  if (a.batch > 0) o.batch = a.batch;
  o.max_image_pixels = a.max_image_pixels;
  o.exif_transpose = a.exif_transpose;
  o.job.resume = a.resume;
  o.job.chunk = a.chunk;
  return o;
}

struct LabelVlmRun {
  std::filesystem::path spec, images, image_root, out;
  std::string column;
  bool resume = false;
  LabelJobOptions job;                  // --shard, --chunk (--resume is `resume`)
  std::vector<std::string> attributes;  // the spec's questions to ask (empty: all)
};

// The spec's questions about `attributes` (in the spec's order; all when none is named), and the
// choice recorded in LABELS.csv's options. UsageError for an attribute the spec has no question
// about, naming a few it has.
void select_label_vlm_questions(LabelVlmSpec& spec, const std::vector<std::string>& attributes,
                                const std::filesystem::path& path) {
  if (attributes.empty()) return;
  for (const std::string& a : attributes) {
    const bool asked = std::any_of(spec.questions.begin(), spec.questions.end(),
                                   [&](const auto& q) { return q.first == a; });
    std::string some;
    for (std::size_t i = 0; i < std::min<std::size_t>(5, spec.questions.size()); ++i) {
      some += (i ? ", " : "") + spec.questions[i].first;
    }
    VLBIAS_CHECK(asked, UsageError,
                 "--attributes names '{}', which {} has no question about (it asks about {}{}).", a,
                 path.string(), some, spec.questions.size() > 5 ? ", ..." : "");
  }
  std::erase_if(spec.questions, [&](const auto& q) {
    return std::find(attributes.begin(), attributes.end(), q.first) == attributes.end();
  });
}

// A question sent as is: braces doubled, so the prompt template fills nothing in.
std::string literal_template(const std::string& text) {
  std::string out;
  for (const char c : text) {
    out += c;
    if (c == '{' || c == '}') out += c;
  }
  return out;
}

// The items (`which` of them, in order) as the manifest of generate lvlm: item (the request's id:
// the image, and the face), path (absolute), image and face (as LABELS.csv names them).
std::string label_vlm_manifest(const LabelImageFiles& items,
                               const std::vector<std::size_t>& which) {
  std::string out = items.faces ? "item,path,image,face\n" : "item,path,image\n";
  for (const std::size_t k : which) {
    std::error_code ec;
    if (items.path[k].empty() || !fs::is_regular_file(items.path[k], ec)) {
      warn("{}: {}; skipped", items.image[k],
           items.path[k].empty() ? "the path cell is empty" : "no such file");
      continue;  // counted as failed: no answer
    }
    const std::string face = items.face[k] ? std::to_string(*items.face[k]) : "";
    append_csv_cell(out, items.faces ? items.image[k] + "#face" + face : items.image[k]);
    out += ',';
    append_csv_cell(out, fs::absolute(items.path[k]).string());
    out += ',';
    append_csv_cell(out, items.image[k]);
    if (items.faces) out += "," + face;
    out += '\n';
  }
  return out;
}

LabelRunCounts run_label_vlm_spec(const LabelVlmRun& o) {
  const auto start = std::chrono::steady_clock::now();
  LabelVlmSpec spec = parse_label_vlm_spec(o.spec);
  select_label_vlm_questions(spec, o.attributes, o.spec);
  const ChoiceSet set(spec.choices, spec.synonyms, spec.unclear, "choices");
  std::error_code ec;
  VLBIAS_CHECK(!o.out.empty() && !fs::is_directory(o.out, ec), UsageError,
               "--out {}: expected a file path for LABELS.csv.", o.out.string());
  const LabelImageFiles items = label_image_files(o.images, o.column, o.image_root);
  const fs::path work = o.out.string() + ".vlm";
  const fs::path run = work / "run", choice = work / "choice";
  VLBIAS_CHECK(o.resume || !fs::exists(run, ec), UsageError,
               "{} holds the requests of an earlier run; pass --resume to continue it, or delete "
               "the folder to start over.",
               run.string());
  fs::create_directories(work);
  const std::vector<std::size_t> which = label_shard_item_indices(items.path.size(), o.job);
  write_file_atomically(work / "items.csv", label_vlm_manifest(items, which));

  LvlmJob& job = spec.job;
  job.manifest = work / "items.csv";
  job.image_column = "path";
  job.id_column = "item";
  job.keep_columns = items.faces ? std::vector<std::string>{"item", "image", "face"}
                                 : std::vector<std::string>{"item", "image"};
  job.prompts.clear();
  for (const auto& [attribute, question] : spec.questions) {
    job.prompts.push_back(LvlmPrompt{attribute, literal_template(question), std::nullopt, {}});
  }
  job.control.resume = o.resume;
  job.control.retry_failed = o.resume;
  VlmLabelOptions v;
  v.attribute = spec.questions[0].first;
  if (spec.questions.size() > 1) {
    for (const auto& q : spec.questions) v.attributes.push_back(q.first);
  }
  v.image_column = "image";
  if (items.faces) v.face_column = "face";
  v.out = o.out;
  v.prompt_set = fmt::format("{} sha256:{}", o.spec.string(), sha256_file(o.spec.string()));
  if (which.empty()) {  // a shard that owns no item: nothing to ask
    LabelRunCounts r = run_vlm_label_shard(
        {v, spec.choices, spec.job.endpoint.model, o.images, o.column, o.image_root, o.job});
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
  const JobSummary summary = generate_lvlm(job, run);
  VLBIAS_CHECK(summary.exported > 0, InputError,
               "{}: no request was answered (see {}); fix the endpoint, then run again with "
               "--resume.",
               o.spec.string(), (run / "requests.jsonl").string());

  fs::remove_all(choice);
  ChoiceJobOptions c;
  c.input = run / "generations.jsonl";
  c.run_dir = choice;
  run_choice_job(set, c);

  v.answers = choice;
  if (!o.job.shard.whole()) {
    LabelRunCounts r = run_vlm_label_shard(
        {v, spec.choices, spec.job.endpoint.model, o.images, o.column, o.image_root, o.job});
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
  LabelRunCounts r = run_vlm_labels(v);
  r.faces = items.faces;
  r.items = items.path.size();
  r.failed = r.items - std::min(r.items, r.labelled);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace

void add_label_command(CLI::App& app) {
  auto args = std::make_shared<LabelArgs>();
  CLI::App* cmd = app.add_subcommand(
      "label",
      "Perceived attributes (gender, race, age, ...) per image or face into LABELS.csv: CLIP\n"
      "zero-shot prompt ensembles with their provenance (model, weights SHA-256, prompt set)");
  add_label_options(cmd, *args);
  cmd->callback([args, cmd] {
    LabelArgs& a = *args;
    const Shard shard = shard_and_out(a.shard, a.out, false);
    LabelRunCounts r;
    const bool vlm = a.labeller == "vlm";
    VLBIAS_CHECK(vlm || (a.answers.empty() && a.spec.empty()), UsageError,
                 "--answers and --spec are for --labeller vlm.");
    VLBIAS_CHECK(!vlm || a.answers.empty() != a.spec.empty(), UsageError,
                 "--labeller vlm labels from --answers (a `score choice` RUN_DIR) or --spec (a "
                 "label-vlm spec, the question asked here): give one of them.");
    VLBIAS_CHECK(a.labeller == "vlm" || (!a.images.empty() && !a.model.empty()), UsageError,
                 "--labeller {} needs --images and --model.", a.labeller);
    if (vlm && !a.spec.empty()) {
      VLBIAS_CHECK(!a.images.empty() && a.model.empty(), UsageError,
                   "--labeller vlm --spec takes --images (and --attributes, --resume, --shard, "
                   "--chunk); the spec names the endpoint, the questions and the choices (no "
                   "--model).");
      VLBIAS_CHECK(a.chunk == 0 || !shard.whole(), UsageError,
                   "--labeller vlm --spec takes --chunk with --shard only (the chunks are what "
                   "the shards share out; a whole run resumes by request).");
      LabelJobOptions job;
      job.chunk = a.chunk;
      job.shard = shard;
      job.resume = a.resume;
      r = run_label_vlm_spec(
          {a.spec, a.images, a.image_root, a.out, a.column, a.resume, job, a.attributes});
    } else if (vlm) {
      VLBIAS_CHECK(a.attributes.size() == 1 && a.images.empty() && a.model.empty(), UsageError,
                   "--labeller vlm takes --answers and one --attributes (what the question asked "
                   "about), no --images or --model (the answers name them).");
      VLBIAS_CHECK(!a.resume && shard.whole() && a.chunk == 0, UsageError,
                   "--resume, --shard and --chunk are for the image labellers (clip, fairface); "
                   "--labeller vlm reads a finished `score choice` run.");
      VlmLabelOptions o;
      o.answers = a.answers;
      o.attribute = a.attributes[0];
      o.image_column = a.image_column;
      o.face_column = a.face_column;
      o.out = a.out;
      r = run_vlm_labels(o);
    } else if (a.labeller == "fairface") {
      VLBIAS_CHECK(cmd->count("--prompts") == 0, UsageError,
                   "--prompts is for --labeller clip; the fairface labeller's classes are its "
                   "heads' (rename them with --classes).");
      FairFaceLabelOptions o = image_label_options<FairFaceLabelOptions>(a);
      o.variant = parse_fairface_variant(a.variant);
      o.classes = a.classes;
      o.job.shard = shard;
      r = run_fairface_labels(o);
    } else {
      VLBIAS_CHECK(!a.attributes.empty(), UsageError,
                   "--labeller clip needs --attributes (e.g. gender,race,age of --prompts {}).",
                   a.prompts);
      VLBIAS_CHECK(cmd->count("--variant") == 0 && a.classes.empty(), UsageError,
                   "--variant and --classes are for --labeller fairface.");
      ClipLabelOptions o = image_label_options<ClipLabelOptions>(a);
      o.prompts = a.prompts;
      o.job.shard = shard;
      r = run_clip_labels(o);
    }
    if (quiet()) return;
    eprint("vlbias: {} of {} {} labelled ({} unreadable, skipped){}{}, {} rows in {:.1f} s -> {}\n",
           r.labelled, r.items, r.faces ? "faces" : "images", r.failed,
           r.resumed ? fmt::format(", {} resumed", r.resumed) : "",
           shard.whole() ? "" : fmt::format(" (shard {} of {})", shard.index, shard.count), r.rows,
           r.seconds, a.out);
  });
}

}  // namespace vlbias::cli_internal
