#pragma once
// What the generate CLI tests share (generate_test.cpp, generate_hardening_test.cpp,
// score_endpoints_test.cpp): the fixture images and the manifest of an LVLM spec, an OpenAI
// chat server's request parser and answers, the API key every test exports and the search for
// it in a run folder, a reply of the test server, a child process to kill.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "generate/http_test_server.h"
#include "vlbias/io/base64.h"

namespace vlbias::generate_test {

namespace fs = std::filesystem;
using cli_util::read_file;
using cli_util::run_cli;
using nlohmann::json;
using test_http::Request;
using test_http::Response;
using test_http::Server;

inline constexpr const char* kSecret = "sk-test-DO-NOT-LEAK-4f1c9e";

inline const fs::path kImages = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/images";
inline const std::vector<std::string> kImageFiles = {"jpg_1x1.jpg", "jpg_420.jpg", "jpg_422.jpg",
                                                     "jpg_444.jpg", "png_1x1.png", "png_l8.png"};

inline void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

inline Response reply(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// Runs `vlbias ARGS` as a child process with the key exported; returns its pid.
inline pid_t spawn(const std::vector<std::string>& args, const fs::path& log) {
  const char* binary = testing_util::vlbias_binary();  // read before fork
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("VLBIAS_TEST_API_KEY", kSecret, 1);
    std::FILE* f = std::freopen(log.c_str(), "w", stdout);
    if (f != nullptr) ::dup2(::fileno(stdout), 2);
    std::vector<char*> argv{const_cast<char*>(binary)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary, argv.data());
    ::_exit(127);
  }
  return pid;
}

inline std::vector<json> read_jsonl(const fs::path& path) {
  std::vector<json> rows;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) rows.push_back(json::parse(line));
  }
  return rows;
}

// Every file under `dir` and the command's output: the key (and every other secret) must be
// in none of them.
inline void expect_no_secret(const fs::path& dir, const cli_util::CliResult& r,
                             const std::vector<std::string>& secrets = {kSecret}) {
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) ++files;
  }
  EXPECT_GE(files, 4u);
  for (const std::string& secret : secrets) {
    SCOPED_TRACE(secret);
    EXPECT_EQ(r.out.find(secret), std::string::npos);
    EXPECT_EQ(r.err.find(secret), std::string::npos);
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      EXPECT_EQ(read_file(entry.path()).find(secret), std::string::npos) << entry.path();
    }
  }
}

inline std::map<std::string, json> by_key(const std::vector<json>& rows) {
  std::map<std::string, json> out;
  for (const auto& r : rows) {
    EXPECT_TRUE(out.emplace(r["key"].get<std::string>(), r).second) << "key twice: " << r["key"];
  }
  return out;
}

// ------------------------------------------------------------------ LVLM chat server

// Knows each fixture image by its base64 text, so it can say which image a request carried.
struct ImageIndex {
  std::map<std::string, std::string> name_of_base64;
  ImageIndex() {
    for (const auto& f : kImageFiles) name_of_base64[base64_encode(read_file(kImages / f))] = f;
  }
};

struct ChatCall {
  std::string image, mime, prompt, system, auth;
  json body;
};

// Parses an OpenAI chat completion request carrying one image; empty image when malformed.
inline ChatCall parse_chat(const Request& req, const ImageIndex& images) {
  ChatCall c;
  c.auth = req.header("authorization");
  c.body = json::parse(req.body, nullptr, false);
  if (c.body.is_discarded()) return c;
  for (const auto& m : c.body["messages"]) {
    if (m["role"] == "system") c.system = m["content"];
    if (m["role"] != "user") continue;
    for (const auto& part : m["content"]) {
      if (part["type"] == "text") c.prompt = part["text"];
      if (part["type"] == "image_url") {
        const std::string url = part["image_url"]["url"];
        const auto comma = url.find(',');
        c.mime = url.substr(5, url.find(';') - 5);
        const auto it = images.name_of_base64.find(url.substr(comma + 1));
        if (it != images.name_of_base64.end()) c.image = it->second;
      }
    }
  }
  return c;
}

inline std::string chat_answer(const std::string& text, const std::string& finish = "stop",
                               const json& refusal = nullptr) {
  return json{{"id", "chatcmpl-1"},
              {"object", "chat.completion"},
              {"model", "tiny-llava"},
              {"choices",
               {{{"index", 0},
                 {"message", {{"role", "assistant"}, {"content", text}, {"refusal", refusal}}},
                 {"finish_reason", finish}}}},
              {"usage", {{"prompt_tokens", 600}, {"completion_tokens", 12}}}}
      .dump();
}

inline std::string expected_text(const std::string& image, const std::string& prompt,
                                 std::uint64_t seed) {
  return fmt::format("{} / {} / seed {}", image, prompt, seed);
}

inline const char* const kPrompts[] = {"Describe this person.", "What is this person's job?"};

// A manifest of the six fixture images with two label columns, and a spec asking two
// prompts x two seeds of each (24 requests).
inline fs::path write_lvlm_spec(const fs::path& dir, const Server& server,
                                const std::string& extra = "",
                                const std::string& model = "tiny-llava") {
  std::string manifest = "id,file,race,gender\n";
  const char* races[] = {"Asian", "Black", "White"};
  for (std::size_t i = 0; i < kImageFiles.size(); ++i)
    manifest +=
        fmt::format("img{},{},{},{}\n", i, kImageFiles[i], races[i % 3], i % 2 ? "female" : "male");
  write(dir / "images.csv", manifest);
  const std::string spec = fmt::format(R"(version: 1
kind: generate-lvlm
endpoint:
  url: {}
  model: {}
  api_key_env: VLBIAS_TEST_API_KEY
  timeout_s: 1
manifest: images.csv
image_root: {}
columns: {{image: file, id: id}}
system: "Answer briefly."
prompts:
  - {{name: describe, text: "{}"}}
  - {{name: job, text: "{}"}}
seeds: [0, 1]
sampling: {{temperature: 0.7, max_tokens: 64, top_p: 0.9}}
requests: {{concurrency: 4, max_attempts: 4, base_delay_s: 0.01, max_delay_s: 0.05}}
{})",
                                       server.url("/v1/chat/completions"), model, kImages.string(),
                                       kPrompts[0], kPrompts[1], extra);
  write(dir / "spec.yaml", spec);
  return dir / "spec.yaml";
}

inline cli_util::CliResult run_with_key(const std::string& args) {
  return run_cli(args, std::string("VLBIAS_TEST_API_KEY=") + kSecret);
}

inline fs::path write_prompts(const fs::path& dir) {
  write(dir / "prompts.csv",
        "prompt,object,region\n"
        "a photo of a house in Africa,house,Africa\n"
        "a photo of a car in Europe,car,Europe\n"
        "a photo of a stove in Asia,stove,Asia\n");
  return dir / "prompts.csv";
}

}  // namespace vlbias::generate_test
