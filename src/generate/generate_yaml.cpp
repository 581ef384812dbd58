// The generate specs (include/vlbias/generate/generate_yaml.h): `vlbias generate lvlm|llm|t2i
// SPEC.yaml` and the spec of `vlbias score judge`, the drivers of
// include/vlbias/generate/generate.h, where the spec formats are documented; every key is
// checked like an audit spec's (io/spec_yaml.h).
#include "vlbias/generate/generate_yaml.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/generate/generate.h"
#include "vlbias/io/spec_yaml.h"

namespace vlbias {

namespace {

using namespace yaml;  // NOLINT(build/namespaces): the spec vocabulary
// (yaml::describe qualified: driver.cpp's describe shares a unity batch's anonymous namespace.)

// Numbers with an allowed range (generate.h): anything else names the key and the range.
double number_in(Context& ctx, const YAML::Node& node, const std::string& path, double lo,
                 double hi) {
  const double v = as_double(ctx, node, path);
  if (!(v >= lo && v <= hi))
    fail(ctx, node, path,
         fmt::format("must be between {} and {}, got {}", lo, hi, yaml::describe(node)));
  return v;
}

std::size_t integer_in(Context& ctx, const YAML::Node& node, const std::string& path,
                       std::size_t lo, std::size_t hi) {
  const std::string range =
      fmt::format("must be an integer from {} to {}, got {}", lo, hi, yaml::describe(node));
  // 1e11, 2.5, -1 or 20 digits: the range says what is wanted (a quoted "10" is left to
  // as_size, which says to unquote it).
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  if (text.empty() || text.size() > 18 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    fail(ctx, node, path, range);
  const std::size_t v = as_size(ctx, node, path);
  if (v < lo || v > hi) fail(ctx, node, path, range);
  return v;
}

// What every generate spec shares: version, kind, endpoint and requests.
struct CommonKeys {
  Endpoint endpoint;
  JobControl control;
  std::string api;  // t2i only
};

bool http_url(const std::string& url) {
  return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
}

// endpoint.url, or the URL in the environment variable endpoint.url_env names (read when the
// spec is: a URL whose query holds a key stays out of the spec, as the paper recipes keep
// it); exactly one of the two. Messages name the variable, never its value.
std::string endpoint_url(Context& ctx, const YAML::Node& node, const Entries& e) {
  const YAML::Node* env = find(e, "url_env");
  if (env == nullptr) {
    if (find(e, "url") == nullptr)
      fail(ctx, node, "endpoint", "needs url (or url_env, the variable holding the URL)");
    const std::string url = as_string(ctx, *find(e, "url"), "endpoint.url");
    VLBIAS_CHECK(http_url(url), UsageError, "{}: endpoint.url must start with http:// or https://",
                 ctx.source);
    return url;
  }
  if (find(e, "url") != nullptr)
    fail(ctx, *env, "endpoint.url_env", "cannot be given with endpoint.url: give one of the two");
  const std::string name = as_string(ctx, *env, "endpoint.url_env");
  const char* value = name.empty() ? nullptr : std::getenv(name.c_str());
  VLBIAS_CHECK(value != nullptr && *value != '\0', UsageError,
               "{}: endpoint.url_env names the variable '{}', which is not set (or empty); export "
               "the endpoint's URL in it before the run",
               ctx.source, name);
  VLBIAS_CHECK(http_url(value), UsageError,
               "{}: the URL in the variable {} (endpoint.url_env) must start with http:// or "
               "https://",
               ctx.source, name);
  return value;
}

void parse_endpoint(Context& ctx, const YAML::Node& node, CommonKeys& out, bool with_api) {
  const Entries e = with_api
                        ? check_map(ctx, node, "endpoint",
                                    {"api", "url", "url_env", "model", "api_key_env", "timeout_s"})
                        : check_map(ctx, node, "endpoint",
                                    {"url", "url_env", "model", "api_key_env", "timeout_s"});
  out.endpoint.url = endpoint_url(ctx, node, e);
  if (const auto* v = find(e, "model")) out.endpoint.model = as_string(ctx, *v, "endpoint.model");
  if (const auto* v = find(e, "api_key_env"))
    out.endpoint.api_key_env = as_string(ctx, *v, "endpoint.api_key_env");
  if (const auto* v = find(e, "timeout_s"))
    out.endpoint.timeout_s = number_in(ctx, *v, "endpoint.timeout_s", kMinTimeoutS, kMaxTimeoutS);
  if (with_api) {
    out.api = as_choice(ctx, require(ctx, node, e, "endpoint", "api"), "endpoint.api",
                        {"sd-webui", "openai-images"});
  }
}

void parse_requests(Context& ctx, const YAML::Node& node, JobControl& control) {
  const Entries e = check_map(ctx, node, "requests",
                              {"concurrency", "max_qps", "max_attempts", "base_delay_s",
                               "max_delay_s", "seed", "max_response_bytes"});
  if (const auto* v = find(e, "concurrency"))
    control.concurrency = integer_in(ctx, *v, "requests.concurrency", 1, kMaxConcurrency);
  if (const auto* v = find(e, "max_qps")) {
    control.max_qps = as_double(ctx, *v, "requests.max_qps");
    if (control.max_qps != 0 && !(control.max_qps >= kMinQps && control.max_qps <= kMaxQps)) {
      fail(ctx, *v, "requests.max_qps",
           fmt::format("must be 0 (no limit) or between {} and {}, got {}", kMinQps, kMaxQps,
                       yaml::describe(*v)));
    }
  }
  if (const auto* v = find(e, "max_attempts")) {
    control.retry.max_attempts =
        static_cast<int>(integer_in(ctx, *v, "requests.max_attempts", 1, kMaxAttempts));
  }
  if (const auto* v = find(e, "base_delay_s"))
    control.retry.base_delay_s = number_in(ctx, *v, "requests.base_delay_s", 0, kMaxRetryDelayS);
  if (const auto* v = find(e, "max_delay_s"))
    control.retry.max_delay_s = number_in(ctx, *v, "requests.max_delay_s", 0, kMaxRetryDelayS);
  if (const auto* v = find(e, "seed")) control.seed = as_uint64(ctx, *v, "requests.seed");
  if (const auto* v = find(e, "max_response_bytes")) {
    control.max_response_bytes =
        integer_in(ctx, *v, "requests.max_response_bytes", kMinResponseBytes, kMaxResponseBytes);
  }
}

YAML::Node load_spec(Context& ctx, const std::string& text, const char* kind, const char* holds) {
  const YAML::Node root = load_document(text, ctx.source, holds);
  if (!root.IsMap()) fail(ctx, root, "the spec", "must be a map");
  const YAML::Node version = root["version"];
  if (!version) fail(ctx, root, "version", "is required (version: 1)");
  if (as_uint64(ctx, version, "version") != 1) fail(ctx, version, "version", "must be 1");
  const YAML::Node k = root["kind"];
  if (!k) fail(ctx, root, "kind", fmt::format("is required (kind: {})", kind));
  if (as_string(ctx, k, "kind") != kind)
    fail(ctx, k, "kind", fmt::format("must be {} for this command", kind));
  return root;
}

// Reads the spec file into the job's provenance fields and returns its checked root.
template <typename Job>
YAML::Node open_spec(Job& job, Context& ctx, const char* kind, const char* holds) {
  job.spec_path = ctx.source;
  job.spec_text = read_spec_file(job.spec_path, "generate spec");
  return load_spec(ctx, job.spec_text, kind, holds);
}

}  // namespace

namespace {

// prompts: a non-empty list of {name, text, system, labels}.
void parse_prompts(Context& ctx, const YAML::Node& prompts, LvlmJob& job) {
  if (!prompts.IsSequence() || prompts.size() == 0)
    fail(ctx, prompts, "prompts", "must be a non-empty list of {name, text}");
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    const std::string p = fmt::format("prompts[{}]", i);
    const Entries pe = check_map(ctx, prompts[i], p, {"name", "text", "system", "labels"});
    LvlmPrompt prompt{as_string(ctx, require(ctx, prompts[i], pe, p, "name"), p + ".name"),
                      as_string(ctx, require(ctx, prompts[i], pe, p, "text"), p + ".text"),
                      std::nullopt,
                      {}};
    if (const auto* v = find(pe, "system"))  // null: no system message for this prompt
      prompt.system = v->IsNull() ? std::string() : as_string(ctx, *v, p + ".system");
    if (const auto* v = find(pe, "labels")) {
      if (!v->IsMap() || v->size() == 0)
        fail(ctx, *v, p + ".labels", "must be a non-empty map of label column: value");
      for (const auto& kv : *v) {
        const std::string name = as_string(ctx, kv.first, p + ".labels");
        prompt.labels.emplace_back(name,
                                   as_string(ctx, kv.second, fmt::format("{}.labels.{}", p, name)));
      }
    }
    job.prompts.push_back(std::move(prompt));
  }
}

void parse_chat_sampling(Context& ctx, const YAML::Node& node, LvlmJob& job) {
  const Entries s = check_map(ctx, node, "sampling",
                              {"temperature", "max_tokens", "top_p", "send_seed", "top_logprobs"});
  if (const auto* x = find(s, "temperature"))
    job.temperature = number_in(ctx, *x, "sampling.temperature", 0, 2);
  if (const auto* x = find(s, "max_tokens"))
    job.max_tokens = integer_in(ctx, *x, "sampling.max_tokens", 1, kMaxTokens);
  if (const auto* x = find(s, "top_p")) job.top_p = as_finite_positive(ctx, *x, "sampling.top_p");
  if (const auto* x = find(s, "send_seed")) job.send_seed = as_bool(ctx, *x, "sampling.send_seed");
  if (const auto* x = find(s, "top_logprobs"))
    job.top_logprobs = integer_in(ctx, *x, "sampling.top_logprobs", 0, kMaxTopLogprobs);
}

// The generate-lvlm spec, or generate-llm's (text only: no image column, no image_root).
LvlmJob parse_chat_spec(const std::string& path, bool text_only) {
  LvlmJob job;
  job.text_only = text_only;
  Context ctx{path, std::filesystem::path(path).parent_path(), 0};
  const YAML::Node root =
      text_only ? open_spec(job, ctx, "generate-llm", "a map with endpoint, manifest and prompts")
                : open_spec(job, ctx, "generate-lvlm",
                            "a map with endpoint, manifest, prompts and seeds");
  const Entries e =
      text_only ? check_map(ctx, root, "",
                            {"version", "kind", "endpoint", "manifest", "columns", "prompts",
                             "seeds", "system", "sampling", "requests"})
                : check_map(ctx, root, "",
                            {"version", "kind", "endpoint", "manifest", "columns", "image_root",
                             "prompts", "seeds", "system", "sampling", "requests"});
  CommonKeys common;
  parse_endpoint(ctx, require(ctx, root, e, "", "endpoint"), common, false);
  job.endpoint = common.endpoint;
  job.manifest = as_path(ctx, require(ctx, root, e, "", "manifest"), "manifest");
  if (const auto* v = find(e, "columns")) {
    const Entries c = text_only ? check_map(ctx, *v, "columns", {"id", "keep"})
                                : check_map(ctx, *v, "columns", {"image", "id", "keep"});
    if (const auto* x = find(c, "image")) job.image_column = as_string(ctx, *x, "columns.image");
    if (const auto* x = find(c, "id")) job.id_column = as_string(ctx, *x, "columns.id");
    if (const auto* x = find(c, "keep")) {
      job.keep_columns = x->IsScalar()
                             ? std::vector<std::string>{as_string(ctx, *x, "columns.keep")}
                             : as_string_list(ctx, *x, "columns.keep", true);
    }
  }
  if (text_only && job.id_column.empty())
    fail(ctx, root, "columns.id",
         "is required for generate-llm: the column naming each row (the key joining the answers "
         "to the LVLM's)");
  if (const auto* v = find(e, "image_root")) job.image_root = as_path(ctx, *v, "image_root");
  parse_prompts(ctx, require(ctx, root, e, "", "prompts"), job);
  if (const auto* v = find(e, "seeds")) {
    if (!v->IsSequence() || v->size() == 0) fail(ctx, *v, "seeds", "must be a non-empty list");
    job.seeds.clear();
    for (std::size_t i = 0; i < v->size(); ++i)
      job.seeds.push_back(as_uint64(ctx, (*v)[i], fmt::format("seeds[{}]", i)));
  }
  if (const auto* v = find(e, "system")) job.system_prompt = as_string(ctx, *v, "system");
  if (const auto* v = find(e, "sampling")) parse_chat_sampling(ctx, *v, job);
  if (const auto* v = find(e, "requests")) parse_requests(ctx, *v, job.control);
  return job;
}

}  // namespace

LvlmJob parse_lvlm_spec(const std::string& path) {
  return parse_chat_spec(path, false);
}

LvlmJob parse_llm_spec(const std::string& path) {
  return parse_chat_spec(path, true);
}

T2iJob parse_t2i_spec(const std::string& path) {
  T2iJob job;
  Context ctx{path, std::filesystem::path(path).parent_path(), 0};
  const YAML::Node root =
      open_spec(job, ctx, "generate-t2i", "a map with endpoint, prompts and images_per_prompt");
  const Entries e = check_map(ctx, root, "",
                              {"version", "kind", "endpoint", "prompts", "columns",
                               "images_per_prompt", "seed", "sd_webui", "openai", "requests"});
  CommonKeys common;
  parse_endpoint(ctx, require(ctx, root, e, "", "endpoint"), common, true);
  job.endpoint = common.endpoint;
  job.api = common.api == "sd-webui" ? T2iApi::SdWebui : T2iApi::OpenAiImages;
  job.prompts = as_path(ctx, require(ctx, root, e, "", "prompts"), "prompts");
  if (const auto* v = find(e, "columns")) {
    const Entries c = check_map(ctx, *v, "columns", {"prompt"});
    if (const auto* x = find(c, "prompt")) job.prompt_column = as_string(ctx, *x, "columns.prompt");
  }
  if (const auto* v = find(e, "images_per_prompt"))
    job.images_per_prompt = integer_in(ctx, *v, "images_per_prompt", 1, kMaxImagesPerPrompt);
  if (const auto* v = find(e, "seed")) job.seed = as_uint64(ctx, *v, "seed");
  if (const auto* v = find(e, "sd_webui")) {
    if (job.api != T2iApi::SdWebui) fail(ctx, *v, "sd_webui", "applies to endpoint.api: sd-webui");
    const Entries s =
        check_map(ctx, *v, "sd_webui",
                  {"negative_prompt", "steps", "cfg_scale", "width", "height", "sampler"});
    if (const auto* x = find(s, "negative_prompt"))
      job.negative_prompt = as_string(ctx, *x, "sd_webui.negative_prompt");
    if (const auto* x = find(s, "steps"))
      job.steps = integer_in(ctx, *x, "sd_webui.steps", 1, kMaxSteps);
    if (const auto* x = find(s, "cfg_scale"))
      job.cfg_scale = number_in(ctx, *x, "sd_webui.cfg_scale", 0, kMaxCfgScale);
    if (const auto* x = find(s, "width"))
      job.width = integer_in(ctx, *x, "sd_webui.width", kMinImageSide, kMaxImageSide);
    if (const auto* x = find(s, "height"))
      job.height = integer_in(ctx, *x, "sd_webui.height", kMinImageSide, kMaxImageSide);
    if (const auto* x = find(s, "sampler")) job.sampler = as_string(ctx, *x, "sd_webui.sampler");
  }
  if (const auto* v = find(e, "openai")) {
    if (job.api != T2iApi::OpenAiImages)
      fail(ctx, *v, "openai", "applies to endpoint.api: openai-images");
    const Entries s = check_map(ctx, *v, "openai", {"size", "quality", "response_format"});
    if (const auto* x = find(s, "size")) {
      job.size = as_string(ctx, *x, "openai.size");
      if (!openai_size_pixels(job.size)) {
        fail(ctx, *x, "openai.size",
             fmt::format("must be WIDTHxHEIGHT (each 1 to {}, e.g. 1024x1024) or auto, got {}",
                         kMaxImageSide, yaml::describe(*x)));
      }
    }
    if (const auto* x = find(s, "quality")) job.quality = as_string(ctx, *x, "openai.quality");
    if (const auto* x = find(s, "response_format")) {
      job.response_format =
          x->IsNull() ? std::string() : as_string(ctx, *x, "openai.response_format");
    }
  }
  if (const auto* v = find(e, "requests")) parse_requests(ctx, *v, job.control);
  return job;
}

JudgeJob parse_judge_spec(const std::string& path) {
  JudgeJob job;
  Context ctx{path, std::filesystem::path(path).parent_path(), 0};
  const YAML::Node root =
      open_spec(job, ctx, "score-judge", "a map with endpoint, prompt and parser");
  const Entries e = check_map(ctx, root, "",
                              {"version", "kind", "endpoint", "text_column", "system", "prompt",
                               "parser", "scale", "sampling", "requests"});
  CommonKeys common;
  parse_endpoint(ctx, require(ctx, root, e, "", "endpoint"), common, false);
  job.endpoint = common.endpoint;
  if (const auto* v = find(e, "text_column")) job.text_column = as_string(ctx, *v, "text_column");
  if (const auto* v = find(e, "system")) job.system_prompt = as_string(ctx, *v, "system");
  job.prompt = as_string(ctx, require(ctx, root, e, "", "prompt"), "prompt");
  job.parser = as_choice(ctx, require(ctx, root, e, "", "parser"), "parser",
                         {"llama-guard", "scale"}) == "scale"
                   ? JudgeParser::Scale
                   : JudgeParser::LlamaGuard;
  if (const auto* v = find(e, "scale")) {
    if (job.parser != JudgeParser::Scale) fail(ctx, *v, "scale", "applies to parser: scale");
    const Entries s = check_map(ctx, *v, "scale", {"min", "max"});
    job.scale_min = as_double(ctx, require(ctx, *v, s, "scale", "min"), "scale.min");
    job.scale_max = as_double(ctx, require(ctx, *v, s, "scale", "max"), "scale.max");
    if (!(std::isfinite(job.scale_min) && std::isfinite(job.scale_max) &&
          job.scale_min < job.scale_max))
      fail(ctx, *v, "scale", "needs finite numbers with min below max");
  } else if (job.parser == JudgeParser::Scale) {
    fail(ctx, root, "scale", "is required with parser: scale ({min: 0, max: 10})");
  }
  if (const auto* v = find(e, "sampling")) {
    const Entries s =
        check_map(ctx, *v, "sampling", {"temperature", "max_tokens", "top_p", "seed", "send_seed"});
    if (const auto* x = find(s, "temperature"))
      job.temperature = number_in(ctx, *x, "sampling.temperature", 0, 2);
    if (const auto* x = find(s, "max_tokens"))
      job.max_tokens = integer_in(ctx, *x, "sampling.max_tokens", 1, kMaxTokens);
    if (const auto* x = find(s, "top_p")) job.top_p = number_in(ctx, *x, "sampling.top_p", 0, 1);
    if (const auto* x = find(s, "seed")) job.seed = as_uint64(ctx, *x, "sampling.seed");
    if (const auto* x = find(s, "send_seed"))
      job.send_seed = as_bool(ctx, *x, "sampling.send_seed");
  }
  if (const auto* v = find(e, "requests")) parse_requests(ctx, *v, job.control);
  return job;
}

namespace {

// One question: `attribute` and `question` (at `path`), or a list of them under `questions`.
std::pair<std::string, std::string> label_question(Context& ctx, const YAML::Node& map,
                                                   const Entries& e, const std::string& path) {
  std::pair<std::string, std::string> q;
  const YAML::Node& attribute = require(ctx, map, e, path, "attribute");
  q.first = as_string(ctx, attribute, join_path(path, "attribute"));
  if (q.first.empty() || q.first.find('|') != std::string::npos)
    fail(ctx, attribute, join_path(path, "attribute"), "must be a non-empty name without '|'");
  const YAML::Node& question = require(ctx, map, e, path, "question");
  q.second = as_string(ctx, question, join_path(path, "question"));
  if (q.second.empty()) fail(ctx, question, join_path(path, "question"), "must not be empty");
  return q;
}

void parse_label_questions(Context& ctx, const YAML::Node& root, const Entries& e,
                           LabelVlmSpec& spec) {
  const auto* list = find(e, "questions");
  if (list == nullptr) {
    spec.questions.push_back(label_question(ctx, root, e, ""));
    return;
  }
  if (find(e, "attribute") != nullptr || find(e, "question") != nullptr)
    fail(ctx, *list, "questions", "excludes attribute and question: give one form");
  if (!list->IsSequence() || list->size() == 0)
    fail(ctx, *list, "questions", "must be a non-empty list of {attribute, question}");
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string p = fmt::format("questions[{}]", i);
    const Entries q = check_map(ctx, (*list)[i], p, {"attribute", "question"});
    spec.questions.push_back(label_question(ctx, (*list)[i], q, p));
    for (std::size_t j = 0; j + 1 < spec.questions.size(); ++j) {
      if (spec.questions[j].first == spec.questions.back().first)
        fail(ctx, (*list)[i], p + ".attribute",
             fmt::format("'{}' is asked about twice", spec.questions.back().first));
    }
  }
}

}  // namespace

LabelVlmSpec parse_label_vlm_spec(const std::string& path) {
  LabelVlmSpec spec;
  LvlmJob& job = spec.job;
  Context ctx{path, std::filesystem::path(path).parent_path(), 0};
  const YAML::Node root =
      open_spec(job, ctx, "label-vlm", "a map with endpoint, attribute, question and choices");
  const Entries e = check_map(ctx, root, "",
                              {"version", "kind", "endpoint", "attribute", "question", "questions",
                               "choices", "synonyms", "unclear", "system", "sampling", "requests"});
  CommonKeys common;
  parse_endpoint(ctx, require(ctx, root, e, "", "endpoint"), common, false);
  job.endpoint = common.endpoint;
  parse_label_questions(ctx, root, e, spec);
  const YAML::Node& choices = require(ctx, root, e, "", "choices");
  spec.choices = as_string_list(ctx, choices, "choices");
  if (spec.choices.size() < 2) fail(ctx, choices, "choices", "must list at least two choices");
  if (const auto* v = find(e, "synonyms")) {
    if (!v->IsMap()) fail(ctx, *v, "synonyms", "must be a map of choice: [synonym, ...]");
    for (const auto& kv : *v) {
      const std::string choice = as_string(ctx, kv.first, "synonyms");
      spec.synonyms[choice] = as_string_list(ctx, kv.second, "synonyms." + choice);
    }
  }
  if (const auto* v = find(e, "unclear")) spec.unclear = as_string_list(ctx, *v, "unclear", true);
  if (const auto* v = find(e, "system")) job.system_prompt = as_string(ctx, *v, "system");
  if (const auto* v = find(e, "sampling")) parse_chat_sampling(ctx, *v, job);
  if (const auto* v = find(e, "requests")) parse_requests(ctx, *v, job.control);
  return spec;
}

}  // namespace vlbias
