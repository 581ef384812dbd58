// The protocol readers (job.h): a response of each service read into a Verdict. They
// parse what a server sends, so they are fuzzed (fuzz/fuzz_responses.cpp).
#include <cmath>

#include <fmt/format.h>

#include "job.h"
#include "vlbias/generate/judge_answers.h"

namespace vlbias::generate_internal {

namespace {

// The text of a chat message's content: a string, null, or a list of parts.
std::string content_text(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (const auto& part : content) {
      if (part.is_object() && part.contains("text") && part["text"].is_string())
        text += part["text"].get<std::string>();
    }
  }
  return text;
}

}  // namespace

Verdict malformed(const ParsedJson& parsed) {
  // Too deep is no glitch of the moment: the same server sends it again, so it is not retried.
  return {parsed.too_deep ? RequestStatus::Failed : RequestStatus::Pending, "",
          "malformed response: " + parsed.error};
}

Verdict failed_with_message(const HttpResponse& r) {
  const std::string message = api_error_message(r.body);
  return {RequestStatus::Failed, "",
          message.empty() ? fmt::format("HTTP {}", r.status)
                          : fmt::format("HTTP {}: {}", r.status, message)};
}

namespace {

// choices[0].logprobs.content[0].top_logprobs as [{"token", "logprob"}] (OpenAI's layout, which
// vLLM and llama.cpp's server follow); null when absent or not of that shape.
Json first_token_top_logprobs(const Json& choice) {
  const auto lp = choice.find("logprobs");
  if (lp == choice.end() || !lp->is_object()) return Json();
  const auto content = lp->find("content");
  if (content == lp->end() || !content->is_array() || content->empty() ||
      !(*content)[0].is_object() || !(*content)[0].contains("top_logprobs") ||
      !(*content)[0]["top_logprobs"].is_array())
    return Json();
  Json out = Json::array();
  for (const Json& t : (*content)[0]["top_logprobs"]) {
    if (!t.is_object() || !t.contains("token") || !t["token"].is_string() ||
        !t.contains("logprob") || !t["logprob"].is_number())
      return Json();
    out.push_back({{"token", t["token"]}, {"logprob", t["logprob"]}});
  }
  return out;
}

}  // namespace

Verdict read_chat_completion(const HttpResponse& r) {
  if (r.status < 200 || r.status > 299) {
    if (!content_policy_error(r.body)) return failed_with_message(r);
    return {
        RequestStatus::Refused,
        Json{
            {"text", ""}, {"finish_reason", "content_filter"}, {"error", api_error_message(r.body)}}
            .dump(),
        "content_filter"};
  }
  const ParsedJson parsed = try_parse_json(r.body);
  if (!parsed.ok()) return malformed(parsed);
  const Json& j = parsed.value;
  if (!j.is_object()) return {RequestStatus::Pending, "", "malformed response: not JSON"};
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty() ||
      !(*choices)[0].is_object() || !(*choices)[0].contains("message") ||
      !(*choices)[0]["message"].is_object()) {
    return {RequestStatus::Pending, "", "malformed response: no choices[0].message"};
  }
  const Json& choice = (*choices)[0];
  const Json& message = choice["message"];
  Json out;
  out["text"] = content_text(message.value("content", Json()));
  out["finish_reason"] = choice.contains("finish_reason") && choice["finish_reason"].is_string()
                             ? choice["finish_reason"]
                             : Json();
  if (j.contains("model") && j["model"].is_string()) out["model"] = j["model"];
  if (j.contains("usage") && j["usage"].is_object()) {
    Json usage;
    for (const char* k : {"prompt_tokens", "completion_tokens"}) {
      if (j["usage"].contains(k) && j["usage"][k].is_number_integer()) usage[k] = j["usage"][k];
    }
    if (!usage.empty()) out["usage"] = usage;
  }
  if (Json top = first_token_top_logprobs(choice); !top.is_null()) out["top_logprobs"] = top;
  const auto refusal = message.find("refusal");
  if (refusal != message.end() && refusal->is_string() && !refusal->get<std::string>().empty()) {
    out["refusal"] = *refusal;
    if (out["text"].get<std::string>().empty()) out["text"] = *refusal;
    return {RequestStatus::Refused, out.dump(), "refusal"};
  }
  if (out["finish_reason"] == "content_filter")
    return {RequestStatus::Refused, out.dump(), "content_filter"};
  return {RequestStatus::Done, out.dump(), ""};
}

Verdict read_perspective(const HttpResponse& r, const std::vector<std::string>& attributes,
                         const std::vector<std::string>& columns) {
  if (r.status < 200 || r.status > 299) return failed_with_message(r);
  const ParsedJson parsed = try_parse_json(r.body);
  if (parsed.too_deep) return malformed(parsed);
  const Json& j = parsed.value;
  if (!j.is_object() || !j.contains("attributeScores") || !j["attributeScores"].is_object())
    return {RequestStatus::Pending, "", "malformed response: no attributeScores"};
  Json out = Json::object();
  for (std::size_t a = 0; a < attributes.size(); ++a) {
    const Json& scores = j["attributeScores"];
    const auto s = scores.find(attributes[a]);
    const Json* value = nullptr;
    if (s != scores.end() && s->is_object() && s->contains("summaryScore") &&
        (*s)["summaryScore"].is_object() && (*s)["summaryScore"].contains("value"))
      value = &(*s)["summaryScore"]["value"];
    if (value == nullptr || !value->is_number() || value->get<double>() < 0 ||
        value->get<double>() > 1) {
      return {RequestStatus::Pending, "",
              fmt::format("malformed response: no summary score in [0, 1] for {}", attributes[a])};
    }
    out[columns[a]] = *value;
  }
  return {RequestStatus::Done, out.dump(), ""};
}

Verdict read_moderation(const HttpResponse& r) {
  if (r.status < 200 || r.status > 299) return failed_with_message(r);
  const ParsedJson parsed = try_parse_json(r.body);
  if (!parsed.ok()) return malformed(parsed);
  const Json& j = parsed.value;
  const auto results = j.is_object() ? j.find("results") : j.end();
  if (!j.is_object() || results == j.end() || !results->is_array() || results->empty() ||
      !(*results)[0].is_object())
    return {RequestStatus::Pending, "", "malformed response: no results[0]"};
  const Json& result = (*results)[0];
  const auto scores = result.find("category_scores");
  if (scores == result.end() || !scores->is_object() || scores->empty())
    return {RequestStatus::Pending, "", "malformed response: no results[0].category_scores"};
  const auto flagged = result.find("flagged");
  if (flagged == result.end() || !flagged->is_boolean())
    return {RequestStatus::Pending, "", "malformed response: results[0].flagged is no boolean"};
  Json out = Json::object();
  if (j.contains("model") && j["model"].is_string()) out["model"] = j["model"];
  out["flagged"] = *flagged;
  Json columns = Json::object();
  for (const auto& [category, score] : scores->items()) {
    if (!score.is_number() || !std::isfinite(score.get<double>()) || score.get<double>() < 0 ||
        score.get<double>() > 1) {
      return {RequestStatus::Pending, "",
              fmt::format("malformed response: the score of {} is no number in [0, 1]",
                          Json(category).dump())};
    }
    const std::string column = moderation_column(category);
    // The same server would name its categories the same way again: not retried.
    if (column.empty() || columns.contains(column)) {
      return {
          RequestStatus::Failed, "",
          fmt::format("malformed response: category {} makes the column '{}' {}",
                      Json(category).dump(), column, column.empty() ? "(empty)" : "a second time")};
    }
    columns[column] = score;
  }
  out["scores"] = std::move(columns);
  return {RequestStatus::Done, out.dump(), ""};
}

}  // namespace vlbias::generate_internal
