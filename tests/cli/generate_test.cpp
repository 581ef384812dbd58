// `vlbias generate lvlm`, `vlbias generate t2i` and `vlbias score perspective`, run as the
// real executable against in-process HTTP servers on 127.0.0.1 that speak each protocol
// (OpenAI chat completions, the SD web UI txt2img API, the OpenAI images API, Perspective's
// comments:analyze) and inject faults: 500s, 429 with Retry-After, answers slower than the
// timeout, dropped connections, malformed JSON, refusals and content-filter blocks. Every
// request must end in the store once with the right status; API keys must appear in no
// file and no output; a generator killed with SIGKILL mid-run and resumed must match a
// clean run.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "generate/http_test_server.h"
#include "generate_util.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/base64.h"

namespace vlbias {
namespace {
namespace in_generate_test {

namespace fs = std::filesystem;
using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using nlohmann::json;
using test_http::Request;
using test_http::Response;
using test_http::Server;
using namespace generate_test;  // NOLINT: the shared fixtures

TEST(GenerateLvlm, EveryFaultEndsInTheStoreOnceWithTheRightStatus) {
  ImageIndex images;
  std::mutex mutex;
  std::map<std::string, int> calls;  // per request key
  std::vector<std::string> problems;
  bool healthy = false;  // after the first run: the permanent faults heal
  Server server([&](const Request& req) {
    const ChatCall c = parse_chat(req, images);
    const std::string prompt = c.prompt == kPrompts[0] ? "describe" : "job";
    const std::uint64_t seed = c.body.value("seed", 99);
    const std::string key = fmt::format("{}|{}|{}", c.image, prompt, seed);
    int n;
    bool heal;
    {
      std::lock_guard lock(mutex);
      n = ++calls[key];
      heal = healthy;
      auto expect = [&](bool ok, const std::string& what) {
        if (!ok) problems.push_back(key + ": " + what);
      };
      expect(c.auth == std::string("Bearer ") + kSecret, "authorization");
      expect(!c.image.empty(), "image data URI");
      expect(c.mime == (c.image.find(".png") != std::string::npos ? "image/png" : "image/jpeg"),
             "mime " + c.mime);
      expect(c.system == "Answer briefly.", "system message");
      expect(c.body["model"] == "tiny-llava", "model");
      expect(c.body["temperature"] == 0.7 && c.body["max_tokens"] == 64 && c.body["top_p"] == 0.9,
             "sampling");
    }
    Response r;
    r.headers = {{"Content-Type", "application/json"}};
    const std::string ok = chat_answer(expected_text(c.image, prompt, seed));
    if (key == "jpg_420.jpg|describe|0" && n <= 2) return Response{500, "oops", {}, 0, false};
    if (key == "jpg_420.jpg|describe|1" && n == 1)
      return Response{
          429, R"({"error":{"message":"slow down"}})", {{"Retry-After", "1"}}, 0, false};
    if (key == "jpg_422.jpg|describe|0" && n == 1) r.delay_ms = 1500;  // past the 1 s timeout
    if (key == "jpg_422.jpg|describe|1" && n == 1) r.drop = true;
    if (key == "jpg_444.jpg|describe|0" && n == 1) {
      r.body = "{\"choices\": [";  // malformed JSON
      return r;
    }
    if (key == "jpg_444.jpg|describe|1") {
      r.body = chat_answer("", "stop", "I can't help with identifying people.");
      return r;
    }
    if (key == "png_1x1.png|describe|0") {
      r.body = chat_answer("", "content_filter");
      return r;
    }
    if (key == "png_1x1.png|describe|1")
      return Response{
          400, R"({"error":{"code":"content_filter","message":"filtered"}})", {}, 0, false};
    if (key == "png_l8.png|describe|0" && !heal)
      return Response{400, R"({"error":{"message":"image too small"}})", {}, 0, false};
    if (key == "png_l8.png|describe|1" && !heal) return Response{503, "down", {}, 0, false};
    r.body = ok;
    return r;
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_lvlm_spec(dir, server);
  const std::string args = fmt::format("generate lvlm '{}' --out '{}'",
                                       (dir / "spec.yaml").string(), (dir / "run").string());
  const auto r = run_with_key(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(problems.empty()) << problems.front();
  const json summary = json::parse(r.out);
  EXPECT_EQ(summary["store"]["total"], 24);
  EXPECT_EQ(summary["store"]["done"], 19);
  EXPECT_EQ(summary["store"]["refused"], 3);
  EXPECT_EQ(summary["store"]["failed"], 2);
  EXPECT_NE(r.err.find("2 of 24 requests failed"), std::string::npos) << r.err;

  auto rows = by_key(read_jsonl(dir / "run/requests.jsonl"));
  ASSERT_EQ(rows.size(), 24u);
  auto expect_row = [&](const std::string& key, const char* status, int attempts) {
    const json& row = rows.at(key);
    EXPECT_EQ(row["status"], status) << key;
    EXPECT_EQ(row["attempts"], attempts) << key;
  };
  expect_row("img1|describe|0", "done", 3);
  expect_row("img1|describe|1", "done", 2);
  expect_row("img2|describe|0", "done", 2);
  // The dropped connection: libcurl re-sends once by itself on a reused connection (one
  // attempt for us), else our retry makes it two.
  const int dropped_attempts = rows.at("img2|describe|1")["attempts"];
  EXPECT_TRUE(dropped_attempts == 1 || dropped_attempts == 2) << dropped_attempts;
  EXPECT_EQ(rows.at("img2|describe|1")["status"], "done");
  expect_row("img3|describe|0", "done", 2);
  expect_row("img3|describe|1", "refused", 1);
  expect_row("img4|describe|0", "refused", 1);
  expect_row("img4|describe|1", "refused", 1);
  expect_row("img5|describe|0", "failed", 1);
  expect_row("img5|describe|1", "failed", 4);
  expect_row("img0|job|1", "done", 1);
  EXPECT_EQ(rows.at("img5|describe|0")["error"], "HTTP 400: image too small");
  EXPECT_NE(rows.at("img5|describe|1")["error"].get<std::string>().find("gave up after 4"),
            std::string::npos);
  EXPECT_EQ(rows.at("img3|describe|1")["error"], "refusal");
  EXPECT_EQ(rows.at("img4|describe|0")["error"], "content_filter");
  EXPECT_EQ(rows.at("img4|describe|1")["error"], "content_filter");
  // The server saw each attempt (libcurl may re-send once on the dropped connection).
  for (const auto& [key, row] : rows) {
    const std::string image = kImageFiles[std::stoul(key.substr(3, 1))];
    const int seen = calls[image + key.substr(key.find('|'))];
    const int attempts = row["attempts"];
    EXPECT_TRUE(seen == attempts || (key == "img2|describe|1" && seen == attempts + 1))
        << key << " server " << seen << " store " << attempts;
  }

  // generations.jsonl: the analytics input, Done and Refused rows in request order.
  const auto gens = read_jsonl(dir / "run/generations.jsonl");
  ASSERT_EQ(gens.size(), 22u);
  EXPECT_EQ(gens[0]["id"], "img0");
  EXPECT_EQ(gens[0]["file"], "jpg_1x1.jpg");
  EXPECT_EQ(gens[0]["race"], "Asian");
  EXPECT_EQ(gens[0]["gender"], "male");
  EXPECT_EQ(gens[0]["prompt"], "describe");
  EXPECT_EQ(gens[0]["seed"], 0);
  EXPECT_EQ(gens[0]["model"], "tiny-llava");
  EXPECT_EQ(gens[0]["text"], expected_text("jpg_1x1.jpg", "describe", 0));
  EXPECT_EQ(gens[0]["refused"], false);
  EXPECT_EQ(gens[0]["finish_reason"], "stop");
  std::size_t refused = 0;
  for (const auto& g : gens) {
    if (g["refused"] == true) {
      ++refused;
      EXPECT_FALSE(g["refusal_reason"].is_null());
    } else {
      EXPECT_EQ(g["text"], expected_text(g["file"], g["prompt"], g["seed"]));
    }
  }
  EXPECT_EQ(refused, 3u);
  const json run = json::parse(read_file(dir / "run/run.json"));
  EXPECT_EQ(run["kind"], "generate-lvlm");
  EXPECT_EQ(run["endpoint"]["api_key_env"], "VLBIAS_TEST_API_KEY");
  EXPECT_EQ(run["store"]["exported"], 22);
  EXPECT_EQ(run["this_run"]["attempts"].get<int>(), 31 + dropped_attempts);
  expect_no_secret(dir / "run", r);

  // The same folder again without --resume is refused; with it nothing is sent again.
  const std::size_t before = server.requests();
  const auto again = run_with_key(args);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("--resume"), std::string::npos) << again.err;
  const std::string gens_before = read_file(dir / "run/generations.jsonl");
  const auto resumed = run_with_key(args + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(server.requests(), before);
  EXPECT_EQ(read_file(dir / "run/generations.jsonl"), gens_before);
  EXPECT_EQ(json::parse(resumed.out)["this_run"]["attempts"], 0);

  // --retry-failed sends the two failed requests again (the server has healed).
  {
    std::lock_guard lock(mutex);
    healthy = true;
  }
  const auto retried = run_with_key(args + " --resume --retry-failed");
  ASSERT_EQ(retried.exit_code, 0) << retried.err;
  EXPECT_EQ(server.requests(), before + 2);
  EXPECT_EQ(json::parse(retried.out)["store"]["done"], 21);
  EXPECT_EQ(read_jsonl(dir / "run/generations.jsonl").size(), 24u);
  rows = by_key(read_jsonl(dir / "run/requests.jsonl"));
  expect_row("img5|describe|1", "done", 5);
  expect_no_secret(dir / "run", retried);

  // A changed model is another run: the store refuses it.
  write_lvlm_spec(dir, server, "", "other-model");
  const auto other = run_with_key(args + " --resume");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("belongs to another run"), std::string::npos) << other.err;
}

TEST(GenerateLvlm, ChangedPromptTextUnderTheSameNameIsRefusedOnResume) {
  ImageIndex images;
  Server server([&](const Request&) { return Response{200, chat_answer("ok"), {}, 0, false}; });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_lvlm_spec(dir, server);
  const std::string args = fmt::format("--quiet generate lvlm '{}' --out '{}'",
                                       (dir / "spec.yaml").string(), (dir / "run").string());
  ASSERT_EQ(run_with_key(args).exit_code, 0);
  std::string spec = read_file(dir / "spec.yaml");
  spec.replace(spec.find(kPrompts[0]), std::strlen(kPrompts[0]), "Describe them.");
  write(dir / "spec.yaml", spec);
  const auto r = run_with_key(args + " --resume");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("changed"), std::string::npos) << r.err;
  // Adding a seed extends the run: only the new requests are sent.
  write_lvlm_spec(dir, server, "");
  spec = read_file(dir / "spec.yaml");
  spec.replace(spec.find("seeds: [0, 1]"), 13, "seeds: [0, 1, 2]");
  write(dir / "spec.yaml", spec);
  const std::size_t before = server.requests();
  const auto extended = run_with_key(args + " --resume");
  ASSERT_EQ(extended.exit_code, 0) << extended.err;
  EXPECT_EQ(server.requests() - before, 12u);
  EXPECT_EQ(json::parse(extended.out)["this_run"]["added"], 12);
  EXPECT_EQ(read_jsonl(dir / "run/generations.jsonl").size(), 36u);
}

TEST(GenerateLvlm, MissingKeyAndBadSpecsAreClearErrors) {
  Server server([](const Request&) { return Response{200, chat_answer("ok"), {}, 0, false}; });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  const fs::path spec = write_lvlm_spec(dir, server);
  const std::string out = " --out '" + (dir / "run").string() + "'";
  // No key in the environment: exit 2 naming the variable, nothing sent.
  auto r = run_cli("generate lvlm '" + spec.string() + "'" + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("VLBIAS_TEST_API_KEY"), std::string::npos) << r.err;
  EXPECT_EQ(server.requests(), 0u);

  const std::string base = read_file(spec);
  auto expect_error = [&](const std::string& text, const std::string& needle) {
    write(dir / "bad.yaml", text);
    fs::remove_all(dir / "run");
    const auto res = run_with_key("generate lvlm '" + (dir / "bad.yaml").string() + "'" + out);
    EXPECT_EQ(res.exit_code, 2) << needle;
    EXPECT_NE(res.err.find(needle), std::string::npos) << "wanted '" << needle << "' in\n"
                                                       << res.err;
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = base;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  expect_error(base + "colour: blue\n", "colour");
  expect_error(replaced("kind: generate-lvlm", "kind: generate-t2i"), "generate-lvlm");
  expect_error(replaced("url: http", "url: ftp"), "http://");
  expect_error(replaced("manifest: images.csv", "manifest: missing.csv"), "missing.csv");
  expect_error(replaced("seeds: [0, 1]", "seeds: [0, 0]"), "seed is given twice");
  expect_error(replaced("seeds: [0, 1]", "seeds: [-1]"), "seeds[0]");
  expect_error(replaced("{name: job,", "{name: describe,"), "given twice");
  expect_error(replaced("temperature: 0.7", "temperature: 7"), "temperature");
  expect_error(replaced("{image: file, id: id}", "{image: path, id: id}"), "path");
  expect_error("", "empty");
  expect_error("version: 1\nkind: generate-lvlm\n", "endpoint");
  // Manifest problems: a missing image, an image that is not one, an id twice, and a
  // column generations.jsonl would add.
  write(dir / "images.csv", "id,file\na,jpg_1x1.jpg\nb,nope.jpg\n");
  expect_error(base, "nope.jpg does not exist");
  write(dir / "images.csv", "id,file\na,jpg_1x1.jpg\nb,jpg_1x1.rgb\n");
  expect_error(base, "is not a JPEG, PNG, GIF or WebP image");
  write(dir / "images.csv", "id,file\na,jpg_1x1.jpg\na,jpg_420.jpg\n");
  expect_error(base, "appears twice");
  write(dir / "images.csv", "id,file,text\na,jpg_1x1.jpg,x\n");
  expect_error(base, "column 'text'");
  write(dir / "images.csv", "id,file\n");
  expect_error(base, "no rows");
  EXPECT_EQ(server.requests(), 0u);
}

// ------------------------------------------------------------------ kill -9 and resume

TEST(GenerateLvlm, KilledWithSigkillAndResumedMatchesACleanRun) {
  ImageIndex images;
  std::mutex mutex;
  std::map<std::string, int> answered;
  Server server([&](const Request& req) {
    const ChatCall c = parse_chat(req, images);
    const std::string key = fmt::format("{}|{}|{}", c.image, c.prompt, c.body.value("seed", 0));
    {
      std::lock_guard lock(mutex);
      ++answered[key];
    }
    Response r{
        200, chat_answer(expected_text(c.image, c.prompt, c.body.value("seed", 0))), {}, 25, false};
    return r;
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "killed");
  fs::remove_all(dir / "clean");
  // 6 images x 2 prompts x 20 seeds = 240 requests of 25 ms, 4 at a time.
  std::string seeds = "[0";
  for (int s = 1; s < 20; ++s) seeds += fmt::format(", {}", s);
  seeds += "]";
  write_lvlm_spec(dir, server);
  std::string spec = read_file(dir / "spec.yaml");
  spec.replace(spec.find("seeds: [0, 1]"), 13, "seeds: " + seeds);
  spec.replace(spec.find("timeout_s: 1"), 12, "timeout_s: 10");
  write(dir / "spec.yaml", spec);

  const pid_t pid =
      spawn({"generate", "lvlm", (dir / "spec.yaml").string(), "--out", (dir / "killed").string()},
            dir / "killed.log");
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (server.requests() < 80 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the generator finished before it was killed";
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  const std::size_t before_resume = server.requests();
  EXPECT_LT(before_resume, 240u);
  EXPECT_FALSE(fs::exists(dir / "killed/generations.jsonl"));

  const auto resumed =
      run_with_key(fmt::format("generate lvlm '{}' --out '{}' --resume",
                               (dir / "spec.yaml").string(), (dir / "killed").string()));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  // Nothing lost, nothing done twice: each key answered once, except the requests that
  // were in flight when the process died (at most the concurrency, 4).
  std::size_t repeated = 0;
  for (const auto& [key, n] : answered) {
    EXPECT_LE(n, 2) << key;
    repeated += static_cast<std::size_t>(n - 1);
  }
  EXPECT_EQ(answered.size(), 240u);
  EXPECT_LE(repeated, 4u);
  const auto rows = by_key(read_jsonl(dir / "killed/requests.jsonl"));
  ASSERT_EQ(rows.size(), 240u);
  for (const auto& [key, row] : rows) {
    EXPECT_EQ(row["status"], "done") << key;
    EXPECT_EQ(row["attempts"], 1) << key;
  }

  const auto clean = run_with_key(fmt::format(
      "generate lvlm '{}' --out '{}'", (dir / "spec.yaml").string(), (dir / "clean").string()));
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  const std::string killed_gens = read_file(dir / "killed/generations.jsonl");
  EXPECT_EQ(killed_gens, read_file(dir / "clean/generations.jsonl"));
  EXPECT_EQ(read_jsonl(dir / "clean/generations.jsonl").size(), 240u);
  EXPECT_EQ(read_file(dir / "killed.log").find(kSecret), std::string::npos);
}

TEST(GenerateLvlm, SecondProcessOnTheSameFolderIsRefused) {
  ImageIndex images;
  Server server([&](const Request&) { return Response{200, chat_answer("ok"), {}, 200, false}; });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_lvlm_spec(dir, server);
  const pid_t pid =
      spawn({"generate", "lvlm", (dir / "spec.yaml").string(), "--out", (dir / "run").string()},
            dir / "first.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (server.requests() < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const auto second =
      run_with_key(fmt::format("generate lvlm '{}' --out '{}' --resume",
                               (dir / "spec.yaml").string(), (dir / "run").string()));
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_NE(second.err.find("another vlbias process"), std::string::npos) << second.err;
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// Links planted in a run folder (at the old fixed temporary names, at an output's name, at the
// run store) send nothing outside it: the temporaries are created O_EXCL|O_NOFOLLOW under random
// names and renamed, and a linked run store is refused.
TEST(GenerateLvlm, PlantedLinksInTheRunFolderAreNotWrittenThrough) {
  ImageIndex images;
  Server server([&](const Request&) { return Response{200, chat_answer("ok"), {}, 0, false}; });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  fs::remove_all(dir / "outside");
  write_lvlm_spec(dir, server);
  const fs::path outside = dir / "outside";
  for (const char* victim : {"v_requests", "v_run", "v_generations", "v_final"})
    write(outside / victim, std::string("precious ") + victim + "\n");
  const fs::path run = dir / "run";
  fs::create_directories(run);
  fs::create_symlink(outside / "v_requests", run / "requests.jsonl.tmp");
  fs::create_symlink(outside / "v_run", run / "run.json.tmp");
  fs::create_symlink(outside / "v_generations", run / "generations.jsonl.tmp");
  fs::create_symlink(outside / "v_final", run / "generations.jsonl");
  const auto r = run_with_key(
      fmt::format("generate lvlm '{}' --out '{}'", (dir / "spec.yaml").string(), run.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* victim : {"v_requests", "v_run", "v_generations", "v_final"})
    EXPECT_EQ(read_file(outside / victim), std::string("precious ") + victim + "\n") << victim;
  EXPECT_FALSE(fs::is_symlink(run / "generations.jsonl"));
  EXPECT_EQ(read_jsonl(run / "generations.jsonl").size(), 24u);
  EXPECT_EQ(json::parse(read_file(run / "run.json"))["kind"], "generate-lvlm");

  // SQLite would follow a link at the store's name and build the store in its target: a link
  // to a file not yet there, or (on --resume) to an existing one.
  write(outside / "db", "");
  for (const char* target : {"new-db", "db"}) {
    SCOPED_TRACE(target);
    const fs::path folder = dir / (std::string("run-") + target);
    fs::remove_all(folder);
    fs::create_directories(folder);
    fs::create_symlink(outside / target, folder / "store.sqlite");
    const auto linked = run_with_key(fmt::format("generate lvlm '{}' --out '{}' --resume",
                                                 (dir / "spec.yaml").string(), folder.string()));
    EXPECT_EQ(linked.exit_code, 2) << linked.err;
    EXPECT_NE(linked.err.find("store.sqlite' is a symbolic link"), std::string::npos) << linked.err;
  }
  EXPECT_FALSE(fs::exists(outside / "new-db"));
  EXPECT_EQ(fs::file_size(outside / "db"), 0u);
}

// ------------------------------------------------------------------ text-to-image

TEST(GenerateT2i, SdWebuiSavesEveryImageWithItsManifestRow) {
  const std::string png = read_file(kImages / "png_l8.png");
  const std::string jpg = read_file(kImages / "jpg_444.jpg");
  std::mutex mutex;
  std::map<std::string, int> calls;
  std::vector<std::string> problems;
  Server server([&](const Request& req) {
    const json b = json::parse(req.body);
    const std::string key =
        fmt::format("{}|{}", b["prompt"].get<std::string>(), b["seed"].get<int>());
    int n;
    {
      std::lock_guard lock(mutex);
      n = ++calls[key];
      if (req.path != "/sdapi/v1/txt2img") problems.push_back("path " + req.path);
      if (b["steps"] != 20 || b["cfg_scale"] != 6.5 || b["width"] != 256 || b["height"] != 384 ||
          b["sampler_name"] != "Euler a" || b["negative_prompt"] != "blurry" ||
          b["batch_size"] != 1 || b["n_iter"] != 1 ||
          b["override_settings"]["sd_model_checkpoint"] != "sd-v1-5")
        problems.push_back("body " + req.body);
      if (!req.header("authorization").empty()) problems.push_back("a key was sent");
    }
    const int seed = b["seed"];
    if (key == "a photo of a car in Europe|100" && n == 1) return Response{500, "", {}, 0, false};
    std::string image = base64_encode(seed % 2 ? jpg : png);
    if (key == "a photo of a car in Europe|101" && n == 1) image = "not*base64";
    int used = seed;
    if (key == "a photo of a stove in Asia|102") used = 7;  // the server ignored our seed
    return Response{200,
                    json{{"images", {image}},
                         {"parameters", b},
                         {"info", json{{"seed", used}, {"all_seeds", {used}}}.dump()}}
                        .dump(),
                    {},
                    0,
                    false};
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_prompts(dir);
  write(dir / "spec.yaml", fmt::format(R"(version: 1
kind: generate-t2i
endpoint: {{api: sd-webui, url: "{}", model: sd-v1-5, timeout_s: 5}}
prompts: prompts.csv
images_per_prompt: 3
seed: 100
sd_webui: {{steps: 20, cfg_scale: 6.5, width: 256, height: 384, sampler: "Euler a", negative_prompt: blurry}}
requests: {{concurrency: 3, base_delay_s: 0.01, max_delay_s: 0.02}}
)",
                                       server.url("/sdapi/v1/txt2img")));
  const auto r = run_cli(fmt::format("generate t2i '{}' --out '{}'", (dir / "spec.yaml").string(),
                                     (dir / "run").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(problems.empty()) << problems.front();
  const json summary = json::parse(r.out);
  EXPECT_EQ(summary["store"]["done"], 8);
  EXPECT_EQ(summary["store"]["failed"], 1);
  const auto rows = by_key(read_jsonl(dir / "run/requests.jsonl"));
  EXPECT_EQ(rows.at("1|0")["attempts"], 2);
  EXPECT_EQ(rows.at("1|1")["attempts"], 2);
  EXPECT_NE(rows.at("2|2")["error"].get<std::string>().find("used seed 7 for seed 102"),
            std::string::npos);

  // manifest.csv: one row per saved image with the prompt's labels and its seed.
  const std::string manifest = read_file(dir / "run/manifest.csv");
  std::istringstream lines(manifest);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header, "image,prompt,object,region,sample,seed,model,sha256,revised_prompt");
  std::vector<std::string> body;
  for (std::string line; std::getline(lines, line);) body.push_back(line);
  ASSERT_EQ(body.size(), 8u);
  EXPECT_EQ(body[0], fmt::format("images/0/0.png,a photo of a house in Africa,house,Africa,0,100,"
                                 "sd-v1-5,{},",
                                 sha256_hex(png)));
  EXPECT_EQ(body[1].substr(0, 15), "images/0/1.jpg,");
  EXPECT_NE(body[1].find(",1,101,sd-v1-5,"), std::string::npos);
  EXPECT_EQ(read_file(dir / "run/images/0/0.png"), png);
  EXPECT_EQ(read_file(dir / "run/images/1/1.jpg"), jpg);
  EXPECT_FALSE(fs::exists(dir / "run/images/2/2.png"));
  for (const auto& entry : fs::recursive_directory_iterator(dir / "run/images"))
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
}

// A link planted where the images folder goes is refused, not followed: no image lands outside.
TEST(GenerateT2i, LinkedImagesFolderIsRefused) {
  const std::string png = read_file(kImages / "png_l8.png");
  Server server([&](const Request& req) {
    const json b = json::parse(req.body);
    const json info{{"seed", b["seed"]}};
    return Response{
        200, json{{"images", {base64_encode(png)}}, {"info", info.dump()}}.dump(), {}, 0, false};
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  fs::remove_all(dir / "elsewhere");
  write_prompts(dir);
  write(dir / "spec.yaml", fmt::format(R"(version: 1
kind: generate-t2i
endpoint: {{api: sd-webui, url: "{}", timeout_s: 5}}
prompts: prompts.csv
images_per_prompt: 1
requests: {{concurrency: 2, max_attempts: 1}}
)",
                                       server.url("/sdapi/v1/txt2img")));
  fs::create_directories(dir / "elsewhere");
  fs::create_directories(dir / "run");
  fs::create_directory_symlink(dir / "elsewhere", dir / "run/images");
  const auto r = run_cli(fmt::format("generate t2i '{}' --out '{}'", (dir / "spec.yaml").string(),
                                     (dir / "run").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("run/images' is a symbolic link"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir / "elsewhere"));
}

TEST(GenerateT2i, OpenAiImagesRecordsRefusalsAndRevisedPrompts) {
  const std::string png = read_file(kImages / "png_1x1.png");
  std::vector<std::string> problems;
  std::mutex mutex;
  Server server([&](const Request& req) {
    const json b = json::parse(req.body);
    {
      std::lock_guard lock(mutex);
      if (req.header("authorization") != std::string("Bearer ") + kSecret)
        problems.push_back("authorization");
      if (b["model"] != "dall-e-3" || b["n"] != 1 || b["size"] != "1024x1024" ||
          b["quality"] != "hd" || b["response_format"] != "b64_json" || b.contains("seed"))
        problems.push_back("body " + req.body);
    }
    const std::string prompt = b["prompt"];
    if (prompt.find("car") != std::string::npos)
      return Response{
          400,
          R"({"error":{"code":"content_policy_violation","message":"Your request was rejected as a result of our safety system."}})",
          {},
          0,
          false};
    if (prompt.find("stove") != std::string::npos)
      return Response{
          200, R"({"created":1,"data":[{"url":"https://example.invalid/x.png"}]})", {}, 0, false};
    return Response{200,
                    json{{"created", 1},
                         {"data",
                          {{{"b64_json", base64_encode(png)},
                            {"revised_prompt", "A detailed photo of a house, Africa"}}}}}
                        .dump(),
                    {},
                    0,
                    false};
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_prompts(dir);
  write(dir / "spec.yaml", fmt::format(R"(version: 1
kind: generate-t2i
endpoint: {{api: openai-images, url: "{}", model: dall-e-3, api_key_env: VLBIAS_TEST_API_KEY}}
prompts: prompts.csv
images_per_prompt: 2
openai: {{size: 1024x1024, quality: hd}}
)",
                                       server.url("/v1/images/generations")));
  const auto r = run_with_key(fmt::format("generate t2i '{}' --out '{}'",
                                          (dir / "spec.yaml").string(), (dir / "run").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(problems.empty()) << problems.front();
  const auto rows = by_key(read_jsonl(dir / "run/requests.jsonl"));
  EXPECT_EQ(rows.at("0|1")["status"], "done");
  EXPECT_EQ(rows.at("1|0")["status"], "refused");
  EXPECT_EQ(rows.at("1|0")["error"], "content_policy");
  EXPECT_EQ(rows.at("1|0")["attempts"], 1);
  EXPECT_EQ(rows.at("2|1")["status"], "failed");
  EXPECT_NE(rows.at("2|1")["error"].get<std::string>().find("answered with a URL"),
            std::string::npos);
  const std::string manifest = read_file(dir / "run/manifest.csv");
  EXPECT_NE(manifest.find(fmt::format("images/0/1.png,a photo of a house in Africa,house,Africa,1,,"
                                      "dall-e-3,{},\"A detailed photo of a house, Africa\"",
                                      sha256_hex(png))),
            std::string::npos)
      << manifest;
  EXPECT_EQ(std::count(manifest.begin(), manifest.end(), '\n'), 3);
  expect_no_secret(dir / "run", r);
}

// ------------------------------------------------------------------ Perspective

TEST(ScorePerspective, ScoresEveryTextAtTheQuotaAndKeepsTheRows) {
  std::mutex mutex;
  std::vector<std::string> problems;
  std::map<std::string, int> calls;
  Server server([&](const Request& req) {
    const json b = json::parse(req.body);
    const std::string text = b["comment"]["text"];
    int n;
    {
      std::lock_guard lock(mutex);
      n = ++calls[text];
      if (req.header("x-goog-api-key") != kSecret) problems.push_back("key header");
      if (req.path != "/v1alpha1/comments:analyze") problems.push_back("path " + req.path);
      if (b["requestedAttributes"] !=
              json{{"TOXICITY", json::object()}, {"INSULT", json::object()}} ||
          b["languages"] != json{"en"} || b["doNotStore"] != true)
        problems.push_back("body " + req.body);
    }
    if (text == "busy text" && n == 1)
      return Response{
          429,
          R"({"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}})",
          {{"Retry-After", "1"}},
          0,
          false};
    if (text == "texte en français")
      return Response{
          400,
          R"({"error":{"code":400,"message":"Attribute INSULT does not support request languages: fr","status":"INVALID_ARGUMENT"}})",
          {},
          0,
          false};
    const double tox = static_cast<double>(text.size()) / 100.0;
    return Response{
        200,
        json{{"attributeScores",
              {{"TOXICITY", {{"summaryScore", {{"value", tox}, {"type", "PROBABILITY"}}}}},
               {"INSULT", {{"summaryScore", {{"value", tox / 2}, {"type", "PROBABILITY"}}}}}}},
             {"languages", {"en"}}}
            .dump(),
        {},
        0,
        false};
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write(dir / "answers.jsonl",
        "{\"set\":1,\"race\":\"Black\",\"text\":\"a calm doctor\"}\n"
        "{\"set\":1,\"race\":\"White\",\"text\":\"\"}\n"
        "{\"set\":2,\"race\":\"Black\",\"text\":\"busy text\"}\n"
        "{\"set\":2,\"race\":\"White\",\"text\":\"texte en français\"}\n");
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_cli(
      fmt::format("score perspective '{}' --out '{}' --attributes TOXICITY,INSULT --languages en "
                  "--url '{}' --max-attempts 3",
                  (dir / "answers.jsonl").string(), (dir / "run").string(),
                  server.url("/v1alpha1/comments:analyze")),
      std::string("PERSPECTIVE_API_KEY=") + kSecret);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(problems.empty()) << problems.front();
  // 1 QPS by default: four requests (one retried after Retry-After: 1) take three seconds.
  EXPECT_GE(seconds, 2.9);
  const auto scored = read_jsonl(dir / "run/scored.jsonl");
  ASSERT_EQ(scored.size(), 4u);
  EXPECT_EQ(scored[0]["set"], 1);
  EXPECT_EQ(scored[0]["race"], "Black");
  EXPECT_DOUBLE_EQ(scored[0]["toxicity"].get<double>(), 0.13);
  EXPECT_DOUBLE_EQ(scored[0]["insult"].get<double>(), 0.065);
  EXPECT_TRUE(scored[0]["perspective_error"].is_null());
  EXPECT_EQ(scored[0]["scorer"], "perspective " + server.url("/v1alpha1/comments:analyze") +
                                     " attributes=TOXICITY,INSULT");
  EXPECT_EQ(scored[1]["scorer"], scored[0]["scorer"]);  // every row, scored or not
  EXPECT_TRUE(scored[1]["toxicity"].is_null());
  EXPECT_EQ(scored[1]["perspective_error"], "empty text");
  EXPECT_DOUBLE_EQ(scored[2]["toxicity"].get<double>(), 0.09);
  EXPECT_TRUE(scored[3]["toxicity"].is_null());
  EXPECT_NE(scored[3]["perspective_error"].get<std::string>().find("does not support"),
            std::string::npos);
  const auto rows = by_key(read_jsonl(dir / "run/requests.jsonl"));
  EXPECT_EQ(rows.size(), 3u);  // the empty text was never sent
  EXPECT_EQ(rows.at("2")["attempts"], 2);
  EXPECT_EQ(rows.at("3")["attempts"], 1);  // a 400 is not retried
  EXPECT_EQ(calls["texte en français"], 1);
  expect_no_secret(dir / "run", r);

  // Input problems: an unknown column, an attribute that is no attribute, a column the
  // scores would overwrite.
  auto expect_error = [&](const std::string& extra, const std::string& needle) {
    fs::remove_all(dir / "bad");
    const auto e = run_cli(fmt::format("score perspective '{}' --out '{}' --url '{}' {}",
                                       (dir / "answers.jsonl").string(), (dir / "bad").string(),
                                       server.url("/x"), extra),
                           "PERSPECTIVE_API_KEY=x");
    EXPECT_EQ(e.exit_code, 2) << extra;
    EXPECT_NE(e.err.find(needle), std::string::npos) << e.err;
  };
  expect_error("--text-column answer", "answer");
  expect_error("--attributes toxicity", "not a Perspective attribute");
  expect_error("--attributes RACE", "column 'race'");
  expect_error("--retry-failed", "--retry-failed needs --resume");
}

}  // namespace in_generate_test
}  // namespace
}  // namespace vlbias

namespace vlbias {
namespace {
namespace in_generate_test {

// The shipped example specs (examples/generate/) run as written, pointed at local servers.
TEST(GenerateExamples, ShippedSpecsRunAgainstLocalServers) {
  const fs::path examples = fs::path(VLBIAS_SOURCE_DIR) / "examples/generate";
  const fs::path dir = temp_dir();
  auto localised = [&](const std::string& name, const std::string& url) {
    std::string spec = read_file(examples / name);
    const auto at = spec.find("url: ");
    spec.replace(at, spec.find('\n', at) - at, "url: " + url);
    for (const char* file : {"images.csv", "prompts.csv"}) {
      const auto f = spec.find(std::string(": ") + file);
      if (f != std::string::npos)
        spec.replace(f + 2, std::strlen(file), (examples / file).string());
    }
    const auto root = spec.find("image_root: images");
    if (root != std::string::npos) spec.replace(root + 12, 6, (examples / "images").string());
    write(dir / name, spec);
    fs::remove_all(dir / (name + ".run"));
    return fmt::format("'{}' --out '{}' --max-qps 0", (dir / name).string(),
                       (dir / (name + ".run")).string());
  };
  Server chat([](const Request&) {
    return Response{200, chat_answer("Kind, calm, tall, smiling, young."), {}, 0, false};
  });
  auto r = run_cli("generate lvlm " + localised("lvlm.yaml", chat.url("/v1/chat/completions")),
                   std::string("OPENAI_API_KEY=") + kSecret);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["store"]["done"], 18);  // 3 images x 2 prompts x 3 seeds
  EXPECT_EQ(read_jsonl(dir / "lvlm.yaml.run/generations.jsonl").size(), 18u);

  const std::string png = read_file(examples / "images/c.png");
  Server sd([&](const Request&) {
    return Response{200, json{{"images", {base64_encode(png)}}}.dump(), {}, 0, false};
  });
  r = run_cli("generate t2i " + localised("t2i_sd_webui.yaml", sd.url("/sdapi/v1/txt2img")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["store"]["done"], 36);  // 9 prompts x 4 images

  Server openai([&](const Request&) {
    return Response{200, json{{"data", {{{"b64_json", base64_encode(png)}}}}}.dump(), {}, 0, false};
  });
  r = run_cli("generate t2i " + localised("t2i_openai.yaml", openai.url("/v1/images/generations")),
              std::string("OPENAI_API_KEY=") + kSecret);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["store"]["done"], 9);
}

}  // namespace in_generate_test
}  // namespace
}  // namespace vlbias

namespace vlbias {
namespace {
namespace in_generate_test {

// The chain a user runs: answers from an LVLM, their toxicity from Perspective, then the
// lvlm-counterfactual audit on scored.jsonl. The servers plant a bias: answers about Black
// men are scored more toxic, so MaxGap's maximum sits with that group in every set.
TEST(GenerateChain, AnswersThenToxicityThenTheAudit) {
  const fs::path dir = temp_dir();
  for (const char* d : {"answers", "scored", "audit"}) fs::remove_all(dir / d);
  // 4 counterfactual sets of the same four-group layout (reusing the fixture images).
  std::string manifest = "id,file,set,race,gender\n";
  const char* groups[][2] = {
      {"Black", "male"}, {"Black", "female"}, {"White", "male"}, {"White", "female"}};
  for (int s = 0; s < 4; ++s) {
    for (int g = 0; g < 4; ++g)
      manifest +=
          fmt::format("s{}g{},{},{},{},{}\n", s, g, kImageFiles[g], s, groups[g][0], groups[g][1]);
  }
  write(dir / "images.csv", manifest);
  ImageIndex images;
  Server chat([&](const Request& req) {
    const ChatCall c = parse_chat(req, images);
    const bool black_male = c.image == kImageFiles[0];
    return Response{
        200, chat_answer(black_male ? "an angry man" : "a kind person", "stop"), {}, 0, false};
  });
  write(dir / "spec.yaml", fmt::format(R"(version: 1
kind: generate-lvlm
endpoint: {{url: "{}", model: tiny}}
manifest: images.csv
image_root: {}
columns: {{image: file, id: id}}
prompts: [{{name: describe, text: "Describe this person."}}]
seeds: [0, 1]
)",
                                       chat.url("/v1/chat/completions"), kImages.string()));
  auto r = run_cli(fmt::format("generate lvlm '{}' --out '{}'", (dir / "spec.yaml").string(),
                               (dir / "answers").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  Server perspective([&](const Request& req) {
    const json b = json::parse(req.body);
    const double tox = b["comment"]["text"] == "an angry man" ? 0.8 : 0.1;
    return Response{
        200,
        json{{"attributeScores", {{"TOXICITY", {{"summaryScore", {{"value", tox}}}}}}}}.dump(),
        {},
        0,
        false};
  });
  r = run_cli(fmt::format("score perspective '{}' --out '{}' --url '{}' --max-qps 0",
                          (dir / "answers/generations.jsonl").string(), (dir / "scored").string(),
                          perspective.url("/analyze")),
              "PERSPECTIVE_API_KEY=k");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  write(dir / "audit.yaml", R"(version: 1
kind: lvlm-counterfactual
seed: 0
generations: scored/scored.jsonl
columns:
  set_key: [set, seed, prompt]
  group: [race, gender]
  scores: [toxicity]
  text: text
analyses:
  maxgap: {bootstrap: 200}
  pmi: {min_freq: 1}
  group_tests: {permutations: 200}
)");
  r = run_cli(fmt::format("audit '{}' --out '{}'", (dir / "audit.yaml").string(),
                          (dir / "audit").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json results = json::parse(read_file(dir / "audit/results.json"));
  // 4 sets x 2 seeds = 8 counterfactual sets, each with a MaxGap of 0.8 - 0.1 and its max
  // held by the Black male image.
  const json& m = results["analyses"]["maxgap"]["results"][0];
  EXPECT_EQ(m["score"], "toxicity");
  EXPECT_EQ(m["sets"], 8);
  EXPECT_NEAR(m["maxgap"]["mean"].get<double>(), 0.7, 1e-12);
  EXPECT_EQ(m["max_group_share"]["race=Black, gender=male"], 1.0);
}

}  // namespace in_generate_test
}  // namespace
}  // namespace vlbias
