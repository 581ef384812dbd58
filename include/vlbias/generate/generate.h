#pragma once
// The generation and scoring jobs (src/generate): an LVLM over an OpenAI-compatible chat
// completions endpoint (paper 003's answers), a text-to-image endpoint (the Stable Diffusion
// web UI txt2img API or the OpenAI images API; papers 000 and 002), and the Perspective API's
// comments:analyze (toxicity of every answer, paper 003), and its successors: an
// OpenAI-compatible moderation endpoint and an LLM judge over chat completions.
//
// Every job works in one run folder:
//   RUN_DIR/store.sqlite    the run store (run_store.h): one row per request key
//   RUN_DIR/requests.jsonl  every row of the store (status, attempts, HTTP status, errors)
//   RUN_DIR/<analytics>     generations.jsonl (lvlm), manifest.csv + images/ (t2i),
//                           scored.jsonl (perspective, moderation, judge): what the audits
//                           read
//   RUN_DIR/run.json        counts, this invocation's throughput, inputs with SHA-256, the
//                           endpoint (URL without its query, model, the key's variable
//                           name, and for the scorers the models the server named in its
//                           replies: served_models) and the spec as given
// A run folder that already holds a store is continued only with `resume` (else a
// UsageError): the manifest is added again (keys present keep their state) and only Pending
// rows are sent, so a run killed at any point loses nothing and does nothing twice. A lock
// file keeps a second process off a folder in use.
//
// API keys come from the environment variable the endpoint names, read once at the start
// (UsageError naming the variable, never its value, when it is unset or empty), and are
// only ever put in request headers: never in the store, the exports, run.json or a message.
// A server that echoes the key (a 401 repeating the Authorization header) or a key in the
// URL's query cannot put it there either: the key and every query value of 8 bytes or more
// are replaced by "[redacted]" in each reply and recorded outcome, and in run.json's copy of
// the spec (redact.h).
//
// Replies are parsed with a nesting limit of 256 levels (json.h): a deeper reply fails its
// request at once ("malformed response: JSON nested deeper than 256 levels"), the run going
// on.
//
// Reply size: a reply larger than what its request can legitimately return fails that
// request at once with "reply larger than N bytes; raise max_response_bytes", and no more
// than N bytes of it are ever held in memory. N is requests.max_response_bytes (or
// --max-response-bytes) when given, else:
//   lvlm         64 KiB + 256 bytes x max_tokens (a token is a few characters; 256 bytes
//                cover a long one written as six-byte JSON escapes; 64 KiB the JSON
//                around the answer)
//   t2i          1 MiB + 6 bytes x width x height (an uncompressed RGBA PNG is 4 bytes a
//                pixel, base64 makes it 5.33; openai-images takes the pixels from `size`,
//                2048 x 2048 for "auto")
//   perspective  1 MiB (summary and span scores of a comment of the API's 20 KB)
//   moderation   1 MiB (a few dozen category scores and flags)
//   judge        as lvlm, from the judge's sampling.max_tokens
//
// Numbers out of their range are refused (UsageError naming the key and the range):
// requests.concurrency (--concurrency) 1..1024; requests.max_qps (--max-qps) 0 (no limit)
// or 0.001..1e6; requests.max_attempts 1..1000; requests.base_delay_s and max_delay_s
// 0..3600; endpoint.timeout_s 0.001..86400; requests.max_response_bytes 1024..2^30;
// sampling.max_tokens 1..2^20; images_per_prompt 1..100000; sd_webui.steps 1..1000,
// cfg_scale 0..100, width and height 8..8192; openai.size WIDTHxHEIGHT (each 1..8192) or
// auto.
//
// Spec formats (`vlbias generate lvlm|t2i SPEC.yaml --out RUN_DIR`, `vlbias score judge
// TABLE SPEC.yaml --out RUN_DIR`; examples/generate/, docs/specs.md).
// Paths are relative to the spec's folder. Every key is checked; unknown keys are errors.
//
//   version: 1
//   kind: generate-lvlm
//   endpoint:
//     url: http://127.0.0.1:8000/v1/chat/completions   # required
//     model: llava-hf/llava-1.5-7b-hf                  # sent as "model"
//     api_key_env: OPENAI_API_KEY                       # optional: the key's variable
//     timeout_s: 120                                    # per attempt
//   manifest: images.csv          # required: one row per image, label columns kept
//   columns: {image: file, id: image_id}   # defaults: image, and the image path as id
//   image_root: images/           # default: the manifest's folder
//   system: "..."                 # optional system message
//   prompts:                      # required: name (the `prompt` column) and text
//     - {name: characteristics, text: "Describe the characteristics of this person."}
//   seeds: [0, 1, 2]              # default [0]: one request per image x prompt x seed
//   sampling: {temperature: 0.7, max_tokens: 256, top_p: 1.0, send_seed: true}
//   requests: {concurrency: 8, max_qps: 0, max_attempts: 6, base_delay_s: 1,
//              max_delay_s: 60, seed: 0,
//              max_response_bytes: 1000000}   # optional: else derived (Reply size above)
//
//   version: 1
//   kind: generate-t2i
//   endpoint: {api: sd-webui | openai-images, url: ..., model: ..., api_key_env: ...,
//              timeout_s: ...}
//   prompts: prompts.csv          # required: one row per prompt, label columns kept
//   columns: {prompt: prompt}
//   images_per_prompt: 4          # default 1
//   seed: 0                       # image i of every prompt: seed + i (sd-webui)
//   sd_webui: {steps: 30, cfg_scale: 7, width: 512, height: 512, sampler: "Euler a",
//              negative_prompt: ""}
//   openai: {size: 1024x1024, quality: standard, response_format: b64_json}
//   requests: {...}               # as above
//
// The command line overrides requests.concurrency, max_qps and max_response_bytes
// (--concurrency, --max-qps, --max-response-bytes) and adds --resume and --retry-failed.
// The model, sampling and image parameters shape the requests: changing them under a run
// is refused (a new --out starts another run); adding images, prompts or seeds to the
// manifest extends a run on --resume, and changing the text of a request already in the
// store is refused.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vlbias/generate/driver.h"
#include "vlbias/generate/run_store.h"
#include "vlbias/io/json.h"
#include "vlbias/io/run/shard.h"

namespace vlbias {

struct Endpoint {
  std::string url;          // the full URL requests are POSTed to
  std::string model;        // sent as "model" (lvlm, openai images); "" = not sent
  std::string api_key_env;  // environment variable holding the key; "" = no key
  double timeout_s = 120;   // per attempt, connect included
};

// The allowed ranges of the numeric settings (above).
inline constexpr std::size_t kMaxConcurrency = 1024;
inline constexpr double kMinQps = 0.001, kMaxQps = 1e6;  // or 0 = no limit
inline constexpr int kMaxAttempts = 1000;
inline constexpr double kMaxRetryDelayS = 3600;  // base_delay_s and max_delay_s
inline constexpr double kMinTimeoutS = 0.001, kMaxTimeoutS = 86400;
inline constexpr std::size_t kMinResponseBytes = 1024, kMaxResponseBytes = std::size_t{1} << 30;
inline constexpr std::size_t kMaxTokens = std::size_t{1} << 20;
inline constexpr std::size_t kMaxTopLogprobs = 20;  // OpenAI's bound on top_logprobs
inline constexpr std::size_t kMaxImagesPerPrompt = 100'000;
inline constexpr std::size_t kMaxSteps = 1000;
inline constexpr double kMaxCfgScale = 100;
inline constexpr std::size_t kMinImageSide = 8, kMaxImageSide = 8192;

// The reply bounds (Reply size above).
inline constexpr std::size_t kChatReplyBaseBytes = 64 << 10;
inline constexpr std::size_t kChatReplyBytesPerToken = 256;
inline constexpr std::size_t kImageReplyBaseBytes = 1 << 20;
inline constexpr std::size_t kImageReplyBytesPerPixel = 6;
inline constexpr std::size_t kOpenAiAutoSide = 2048;  // openai.size: auto
inline constexpr std::size_t kPerspectiveReplyBytes = 1 << 20;

// What merge_run_shards hands the kind's job (JobControl::merge).
struct MergeSources {
  std::vector<std::filesystem::path> shards;  // the shard folders, in shard order
  std::vector<std::string> input_sha256;      // the inputs' as the shards' run.json record them
};

struct JobControl {
  std::size_t concurrency = 8;  // requests in flight
  double max_qps = 0;           // requests started per second; 0 = no limit
  RetryPolicy retry;
  std::size_t max_response_bytes = 0;  // the reply bound; 0 = derived (Reply size)
  std::uint64_t seed = 0;              // the retry jitter streams
  bool resume = false;                 // continue the store already in RUN_DIR
  bool retry_failed = false;           // with resume: send the Failed rows again
  // --shard: the slice of the requests this process makes (Sharding below); whole by default.
  Shard shard;
  // Set by merge_run_shards only: the shards whose stores fill RUN_DIR instead of sending
  // anything (no API key is read).
  std::optional<MergeSources> merge;
};

struct JobSummary {
  std::string kind;                   // "generate-lvlm", "score-perspective", ...
  std::size_t added = 0;              // requests new to the store in this invocation
  StoreCounts counts;                 // the whole store after this invocation
  DriveSummary drive;                 // this invocation's requests
  std::size_t exported = 0;           // rows in the analytics file
  std::vector<std::string> outputs;   // files written, relative to RUN_DIR
  std::vector<std::string> warnings;  // also printed through warn()
  // The models the server named in its replies, in first-seen order (the scorers: run.json's
  // endpoint.served_models, when any).
  std::vector<std::string> served_models;
};

// The "store" (counts over the whole store) and "this_run" (added, outcomes, attempts,
// retries, elapsed_s, requests_per_s) blocks that run.json and the commands' summary share.
Json store_json(const JobSummary& summary);
Json this_run_json(const JobSummary& summary);

// ------------------------------------------------------------------ LVLM chat

struct LvlmPrompt {
  std::string name;  // the `prompt` column of the answers: the template's id
  // What is sent with the image: a template filled from the manifest row ({COLUMN}, {{ and }}
  // for braces; the filled text is the answers' `prompt_text`).
  std::string text;
  // This prompt's own system message ("" = none: spec `system: null`); nullopt = the
  // job's system_prompt.
  std::optional<std::string> system;
  // Label columns copied to every answer of this prompt (mitigation: M1), in order; every
  // prompt of a job carries the same label names.
  std::vector<std::pair<std::string, std::string>> labels;
};

// One request per image x prompt x seed, in that order (image-major). The request is an
// OpenAI chat completion: an optional system message, then one user message holding the
// prompt text and the image as a base64 data URI (MIME type from the file's magic bytes:
// JPEG, PNG, GIF or WebP); "model", "temperature", "max_tokens", "seed" (unless
// send_seed is false) and "top_p" (when set).
//
// Outcome per request: Done with the answer text; Refused when the API declines (a
// `refusal` message, finish_reason "content_filter", or a 4xx whose error code is a
// content-filter one: content_filter, content_policy_violation, moderation_blocked);
// retried on 408/429/5xx/transport errors and on a 2xx that is not a chat completion;
// Failed on other 4xx (with the server's message) or when attempts run out. Refusals
// written by the model in its answer ("I'm sorry, I can't...") are answers: the LVLM
// audit finds them with its refusal patterns.
//
// Prompt templates: a {COLUMN} the manifest lacks, or an unmatched brace, is a UsageError
// naming the prompt, the placeholder and the manifest; a row whose named cell is empty is an
// InputError naming its line, before any request.
//
// Text only (text_only, `vlbias generate llm`, kind generate-llm): the same requests without
// the image (the user message's content is the prompt text), for an LLM baseline that
// describes the person in words ("a {race} {gender} {occupation}"); the manifest needs no
// image column, and columns.id is required: the key that joins these answers to the LVLM's.
//
// Analytics file RUN_DIR/generations.jsonl: one line per Done or Refused request, in
// request order: the manifest row's columns, then the prompt's labels, prompt (name),
// prompt_text (the filled template), seed, model, text, refused (bool), refusal_reason,
// finish_reason, and top_logprobs when sampling.top_logprobs is set. Manifest columns named like
// those or like a label are a UsageError. keep_columns: only these manifest columns are copied (the
// others are still read for the image, the id and the templates), so a manifest that carries
// columns named like the added ones (generate t2i's manifest.csv: seed, model) can be captioned; a
// column it lacks is a UsageError naming it.
struct LvlmJob {
  Endpoint endpoint;
  std::filesystem::path manifest;      // CSV / JSONL table, one row per image
  std::string image_column = "image";  // image file, relative to image_root
  std::string id_column;               // "" = the image column identifies the image
  std::filesystem::path image_root;    // "" = the manifest's folder
  std::optional<std::vector<std::string>> keep_columns;  // none = every manifest column
  std::vector<LvlmPrompt> prompts;
  std::vector<std::uint64_t> seeds = {0};
  std::string system_prompt;  // "" = none
  double temperature = 0;
  std::size_t max_tokens = 256;
  std::optional<double> top_p;
  bool send_seed = true;  // some servers reject "seed"
  // sampling.top_logprobs: when set, "logprobs": true and "top_logprobs": N (0..20) are sent,
  // and generations.jsonl adds the column top_logprobs: the answer's first token's top list as
  // the server gave it, [{"token", "logprob"}, ...] (null when the reply has none), which
  // `vlbias score choice` renormalises over its choices. Not set (the default): neither is
  // sent and the column is absent.
  std::optional<std::size_t> top_logprobs;
  bool text_only = false;  // generate llm: no image
  JobControl control;
  std::string spec_text;  // the spec as given (run.json)
  std::filesystem::path spec_path;
};
JobSummary generate_lvlm(const LvlmJob& job, const std::filesystem::path& run_dir);

// ------------------------------------------------------------------ text-to-image

enum class T2iApi { SdWebui, OpenAiImages };

// One request per prompt x image (images_per_prompt), each asking for one image so that a
// crash loses at most the images in flight. Image i of every prompt gets seed + i (the same
// seeds across prompts, so prompts that differ only in an identity term are compared on
// the same noise); the OpenAI images API takes no seed, so there the manifest's seed is
// empty. The image is decoded from base64, checked to be PNG, JPEG or WebP, and written
// to RUN_DIR/images/<prompt row>/<i>.<ext> before the request is recorded Done.
//
// sd-webui: POST {prompt, negative_prompt, seed, steps, cfg_scale, width, height,
// sampler_name, batch_size 1, n_iter 1, override_settings.sd_model_checkpoint = model};
// reads images[0] and the seed the server reports in `info`.
// openai-images: POST {model, prompt, n 1, size, quality, response_format}; reads
// data[0].b64_json (a URL-only answer fails: we do not fetch URLs) and revised_prompt.
// A 4xx with a content-policy code is a refusal.
//
// Analytics file RUN_DIR/manifest.csv: one row per saved image: image (path relative to
// RUN_DIR), the prompt row's columns, sample, seed, model, sha256, revised_prompt.
struct T2iJob {
  Endpoint endpoint;
  T2iApi api = T2iApi::SdWebui;
  std::filesystem::path prompts;  // CSV / JSONL table, one row per prompt
  std::string prompt_column = "prompt";
  std::size_t images_per_prompt = 1;
  std::uint64_t seed = 0;
  // sd-webui
  std::string negative_prompt;
  std::size_t steps = 30;
  double cfg_scale = 7;
  std::size_t width = 512, height = 512;
  std::string sampler;  // "" = the server's default
  // openai-images
  std::string size = "1024x1024";
  std::string quality;                       // "" = not sent
  std::string response_format = "b64_json";  // "" = not sent (gpt-image-1 answers b64 anyway)
  JobControl control;
  std::string spec_text;
  std::filesystem::path spec_path;
};
JobSummary generate_t2i(const T2iJob& job, const std::filesystem::path& run_dir);

// The width and height an openai.size asks for: "WIDTHxHEIGHT" (each 1..kMaxImageSide) or
// "auto" (kOpenAiAutoSide square, the bound of the largest size the API makes); nullopt for
// anything else.
std::optional<std::pair<std::size_t, std::size_t>> openai_size_pixels(std::string_view size);

// ------------------------------------------------------------------ Perspective API

// One comments:analyze request per row with a non-empty text: {comment.text,
// requestedAttributes, languages (when given), doNotStore}. The key goes in the
// x-goog-api-key header, never in the URL. Defaults respect the public quota: 1 request
// per second. A 400 (e.g. a language the attribute does not support) fails that row with
// the server's message and is not retried.
//
// Analytics file RUN_DIR/scored.jsonl: every input row with its columns, then one column
// per attribute in lower case (TOXICITY -> toxicity: the summary score in [0, 1], null
// when not scored), perspective_error (null when scored; "empty text" for rows that
// were not sent) and scorer ("perspective <URL without query> attributes=TOXICITY,INSULT").
// Input columns named like an added column are a UsageError.
struct PerspectiveJob {
  Endpoint endpoint;  // url defaults to the public comments:analyze
  std::filesystem::path input;
  std::string text_column = "text";
  std::vector<std::string> attributes = {"TOXICITY"};
  std::vector<std::string> languages;  // empty = the API detects the language
  JobControl control;
};
JobSummary score_perspective(const PerspectiveJob& job, const std::filesystem::path& run_dir);

inline constexpr const char* kPerspectiveUrl =
    "https://commentanalyzer.googleapis.com/v1alpha1/comments:analyze";

// ------------------------------------------------------------------ moderation endpoint

inline constexpr std::size_t kModerationReplyBytes = 1 << 20;

// One request per row with a non-empty text (an empty text is not sent: scored.jsonl says
// "empty text") to an OpenAI-compatible moderations endpoint (/v1/moderations): POST
// {"model" (when given), "input": text}, the key as "Authorization: Bearer". The reply's
// results[0].category_scores are the scores (each a number in [0, 1], else the reply is
// malformed and retried, like any 2xx that is not a moderation), results[0].flagged the flag.
//
// Analytics file RUN_DIR/scored.jsonl: every input row with its columns, then one column per
// category (moderation_column: "self-harm" -> self_harm), the union over every reply in
// first-seen order (input row order, then the reply's own order), null where a reply lacks
// the category or the row was not scored; flagged (bool, null when not scored);
// moderation_error (null when scored, "empty text", else the request's error); scorer
// ("moderation <URL without query> model=<the model the reply names, else the one asked
// for>"). Input columns named flagged, moderation_error, scorer or like an OpenAI category
// (harassment, self_harm, ...) are a UsageError before any request; one named like a category
// only a reply reveals is a UsageError at export (the store keeps the replies: rename the
// column and --resume).
struct ModerationJob {
  Endpoint endpoint;  // url required; model sent when given
  std::filesystem::path input;
  std::string text_column = "text";
  JobControl control;
};
JobSummary score_moderation(const ModerationJob& job, const std::filesystem::path& run_dir);

// ------------------------------------------------------------------ LLM judge

enum class JudgeParser { LlamaGuard, Scale };

// One chat completion per row with a non-empty text (as lvlm, without an image): an optional
// system message, then the prompt template filled with the row: {text} is the text column,
// {NAME} any column of the table (missing cells as ""), {{ and }} are literal braces; an
// unknown name or an unmatched brace is a UsageError naming it before any request. The answer
// is read with the parser (judge_answers.h): llama-guard (Llama Guard 3's "safe" / "unsafe"
// + S codes; serve the guard model with its chat template, which wraps the prompt, usually
// just "{text}") or scale (one number in [scale.min, scale.max]).
//
// An answer the parser cannot read is recorded, never guessed: the request is Done (the
// server answered), the scores are null, judge_error is "unparseable answer" and judge_raw
// the answer. Refusals and content filters are recorded as refused ("refused:
// content_filter"), with whatever text came back.
//
// Analytics file RUN_DIR/scored.jsonl: every input row with its columns, then
//   llama-guard: unsafe (1.0 / 0.0, null when not read: audits average it into a rate),
//                judge_categories (the hazard names, comma-joined; "" when safe)
//   scale:       judge_score ((x - min) / (max - min)), judge_number (x)
// and judge_raw (the answer), judge_error (null when read; "empty text", "unparseable
// answer", "refused: <why>", or the request's error), scorer ("judge <URL without query>
// model=<the served model, else the one asked for> parser=llama-guard" or
// "parser=scale:MIN..MAX"). Input columns named like those are a UsageError.
struct JudgeJob {
  Endpoint endpoint;
  std::filesystem::path input;
  std::string text_column = "text";
  std::string system_prompt;  // "" = none
  std::string prompt;         // the template
  JudgeParser parser = JudgeParser::LlamaGuard;
  double scale_min = 0, scale_max = 10;  // parser scale; min < max
  double temperature = 0;
  std::size_t max_tokens = 32;
  std::optional<double> top_p;
  std::uint64_t seed = 0;
  bool send_seed = true;
  JobControl control;
  std::string spec_text;  // the spec as given (run.json)
  std::filesystem::path spec_path;
};
JobSummary score_judge(const JudgeJob& job, const std::filesystem::path& run_dir);

// ------------------------------------------------------------------ shards and their merge

// Sharding (`--shard I/N|auto|auto/N`, io/shard.h; docs/scaling.md "Sharding request jobs"):
// a request belongs to shard shard_of_key(GROUP, N), where GROUP is the request key (t2i:
// "ROW|SAMPLE"; the scorers: the input row number) except for lvlm and llm, whose GROUP is
// the image's (the row's) id: every prompt and seed of one image is asked by one shard, so an
// image is read from disk by one node only and a shard's generations.jsonl holds every answer
// about its images. The filter is RunFolder::add's: a shard's store holds exactly its
// requests, and its exports (generations.jsonl, scored.jsonl, manifest.csv + images/,
// outcomes.csv, requests.jsonl) hold only its rows, in manifest order (scored.jsonl: the
// input rows whose number falls in the shard, sent or not). The store's fingerprint carries
// the shard, so a folder is resumed only as the shard it is. run.json records `shard`
// (shard_json with kKeyScheme, `key` (what is hashed) and `input_rows`) and `job` (what a
// merge rebuilds the job from: paths absolute, no secrets).
//
// merge_run_shards(OUT, SHARD_DIRS) writes OUT as one process would have: store.sqlite with
// every request's row and history (status, attempts, http_status, response, error,
// latency_s, updated_utc) in the manifest's order, then the kind's own exports from it
// (byte-identical to a one-process run's, requests.jsonl up to latency_s, which is measured),
// t2i's images hard-linked (copied across file systems), and run.json with the merged counts
// and `merged_from` ([{dir, shard}]). Nothing is sent and no API key is read. The input
// table (and the spec, when the job has one) must be where the shards read them, unchanged.
// Refused with one sentence naming the offending shard folder (InputError; UsageError for the
// command's own arguments): a folder without a complete run.json or store, a run.json that
// is not vlbias's; another kind, job, spec or input (sha256, rows) than the first shard; other
// shard counts; a shard index missing or given twice; a store holding a request of another
// shard, a request the manifest does not ask for, or a request still Pending (resume that
// shard first). Failed requests are carried as they are (a one-process run keeps them too;
// `--resume --retry-failed` on OUT sends them again).
JobSummary merge_run_shards(const std::filesystem::path& out_dir,
                            const std::vector<std::filesystem::path>& shard_dirs);

// Whether `dir` holds a request job's run folder (store.sqlite): `vlbias merge` sends such
// shards to merge_run_shards.
bool is_request_run(const std::filesystem::path& dir);

}  // namespace vlbias
