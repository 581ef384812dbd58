// The `vlbias score classifier` job: table rows -> checkpointed chunks of logits -> scored.jsonl
// and manifest.json. See include/vlbias/score/classifier_job.h.
#include "vlbias/score/classifier_job.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "classifier_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/sha256.h"
#include "vlbias/core/timestamp.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/run/run_lock.h"
#include "vlbias/io/run/shard.h"
#include "vlbias/io/table/column_texts.h"
#include "vlbias/io/table/table.h"
#include "vlbias/version.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

std::string chunk_name(std::size_t c) {
  return fmt::format("chunk_{:06d}.json", c);
}

std::string lower_label(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The columns scored.jsonl adds: the labels lower_label-cased, then the truncation flag and the
// scorer, each behind the prefix; distinct, and none already in the input.
struct OutputColumns {
  std::vector<std::string> labels;
  std::string truncated, scorer;
};

OutputColumns output_columns(const SequenceClassifier& model, const Table& input,
                             const fs::path& input_path, const std::string& prefix) {
  // A '.' would read as a nested key where tables are read by dotted names (record_stream.h).
  VLBIAS_CHECK(std::all_of(prefix.begin(), prefix.end(),
                           [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-'; }),
               UsageError, "--prefix '{}' may hold only letters, digits, '_' and '-'", prefix);
  OutputColumns out;
  out.truncated = prefix + "classifier_truncated";
  out.scorer = prefix + "scorer";
  std::set<std::string> seen{out.truncated, out.scorer};
  for (const std::string& label : model.labels()) {
    std::string name = prefix + lower_label(label);
    VLBIAS_CHECK(
        seen.insert(name).second, InputError,
        "the model's labels give the column '{}' twice once lower_label-cased (or clash with "
        "'{}' or '{}'); rename one in config.json's id2label",
        name, out.truncated, out.scorer);
    out.labels.push_back(std::move(name));
  }
  for (const std::string& name : seen) {
    VLBIAS_CHECK(!input.find(name).has_value(), UsageError,
                 "{}: the input already has a column '{}', which scored.jsonl adds (rename it, "
                 "or give the scores a --prefix)",
                 input_path.string(), name);
  }
  return out;
}

// The `scorer` cell of every row: what scored it, so a file read on its own still says so
// (the architecture, the folder's name and the first 16 hex digits of the weights' SHA-256;
// manifest.json has the whole digest).
std::string scorer_text(const SequenceClassifier& model, const fs::path& dir,
                        const std::string& weights_sha256) {
  const fs::path name = dir.filename().empty() ? dir.parent_path().filename() : dir.filename();
  return fmt::format("classifier {} {} sha256:{}", to_string(model.config().architecture),
                     name.string(), weights_sha256.substr(0, 16));
}

Json read_checkpoint(const fs::path& path, const fs::path& dir) {
  try {
    Json j = parse_json(read_file_text(path, "a checkpoint"), path.string());
    if (j.is_object()) return j;
  } catch (const InputError&) {
  }
  VLBIAS_FAIL(UsageError, "checkpoint {} is damaged; delete {} and start over", path.string(),
              dir.string());
}

struct ChunkResult {
  std::vector<std::vector<float>> logits;
  std::vector<std::size_t> tokens;
  std::vector<bool> truncated;
};

// Scores rows [begin, end) in batches and writes the chunk's checkpoint.
void score_chunk(const SequenceClassifier& model, const std::vector<std::string>& texts,
                 std::size_t begin, std::size_t end, std::size_t batch, const fs::path& file,
                 Progress& progress) {
  Json logits = Json::array(), tokens = Json::array(), truncated = Json::array();
  for (std::size_t b = begin; b < end; b += batch) {
    const std::size_t e = std::min(end, b + batch);
    const std::vector<std::string> part(texts.begin() + static_cast<std::ptrdiff_t>(b),
                                        texts.begin() + static_cast<std::ptrdiff_t>(e));
    const ClassifierScores s = model.score(part);
    for (std::size_t i = 0; i < part.size(); ++i) {
      logits.push_back(std::vector<float>(s.logits.row(i), s.logits.row(i) + s.logits.cols));
      tokens.push_back(s.tokens[i]);
      truncated.push_back(static_cast<bool>(s.truncated[i]));
    }
    progress.advance(e - b);
  }
  const Json chunk{{"begin", begin},
                   {"end", end},
                   {"logits", logits},
                   {"tokens", tokens},
                   {"truncated", truncated}};
  write_file_atomically(file, chunk.dump() + "\n");
}

// The chunk's checkpoint, checked against the rows and labels it must hold, and its logits
// finite as the live forward's are (score_internal::check_finite_logits).
ChunkResult load_chunk(const fs::path& file, const fs::path& dir, std::size_t begin,
                       std::size_t end, std::size_t labels) {
  const Json j = read_checkpoint(file, dir);
  ChunkResult r;
  std::vector<std::vector<double>> logits;  // as stored: a float cast of 1e39 would be inf
  try {
    VLBIAS_CHECK(j.at("begin").get<std::size_t>() == begin && j.at("end").get<std::size_t>() == end,
                 UsageError, "rows");
    for (const Json& row : j.at("logits")) {
      logits.push_back(row.get<std::vector<double>>());
      VLBIAS_CHECK(logits.back().size() == labels, UsageError, "labels");
    }
    r.tokens = j.at("tokens").get<std::vector<std::size_t>>();
    for (const Json& t : j.at("truncated")) r.truncated.push_back(t.get<bool>());
  } catch (const std::exception&) {
    logits.clear();
  }
  const std::size_t n = end - begin;
  VLBIAS_CHECK(logits.size() == n && r.tokens.size() == n && r.truncated.size() == n, UsageError,
               "checkpoint {} does not hold rows {} to {}; delete {} and start over", file.string(),
               begin, end, dir.string());
  const std::string remedy =
      fmt::format("the checkpoint is damaged; delete {} and start over", dir.string());
  for (std::size_t i = 0; i < n; ++i) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    std::vector<float> row(labels);
    for (std::size_t k = 0; k < labels; ++k) {
      const double v = logits[i][k];  // past float's range: infinite as a float logit
      row[k] = std::fabs(v) <= std::numeric_limits<float>::max() ? static_cast<float>(v)
               : v < 0                                           ? -kInf
                                                                 : kInf;
    }
    score_internal::check_finite_logits(
        row.data(), labels, fmt::format("row {} in checkpoint {}", begin + i, file.string()),
        remedy);
    r.logits.push_back(std::move(row));
  }
  return r;
}

// Creates the checkpoint folder with job.json, or checks an existing one against `job`.
void open_checkpoints(const fs::path& dir, const Json& job, bool resume) {
  refuse_symbolic_link(dir, "the checkpoint folder");
  if (!fs::exists(dir)) {
    fs::create_directories(dir);
    write_file_atomically(dir / "job.json", job.dump(2) + "\n");
    return;
  }
  VLBIAS_CHECK(resume, UsageError,
               "{} holds an interrupted run; pass --resume to continue it, or delete the folder "
               "to start over",
               dir.string());
  const Json previous = read_checkpoint(dir / "job.json", dir);
  for (auto it = job.begin(); it != job.end(); ++it) {
    VLBIAS_CHECK(previous.contains(it.key()) && previous[it.key()] == it.value(), UsageError,
                 "cannot resume {}: its '{}' differs from this run's (the model, input or "
                 "options changed); delete the folder to start over",
                 dir.string(), it.key());
  }
}

// scored.jsonl: the input rows `rows` (all of them, or a shard's) with their scores
// (logits[i], truncated[i] of rows[i]), written atomically.
void write_scored(const fs::path& path, const Table& input, const std::vector<std::size_t>& rows,
                  const SequenceClassifier& model, const OutputColumns& columns,
                  const std::string& scorer, const std::vector<std::vector<float>>& logits,
                  const std::vector<bool>& truncated) {
  AtomicWriter writer(path);
  std::vector<double> p(columns.labels.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t r = rows[i];
    Json line;
    for (std::size_t c = 0; c < input.columns.size(); ++c) {
      line[input.columns[c].name] = cell_json(input, c, r);
    }
    model.activate(logits[i].data(), p.data());
    for (std::size_t j = 0; j < p.size(); ++j) line[columns.labels[j]] = p[j];
    line[columns.truncated] = static_cast<bool>(truncated[i]);
    line[columns.scorer] = scorer;
    const std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
    writer.write(text.data(), text.size());
  }
  writer.commit();
}

Json model_json(const SequenceClassifier& model, const fs::path& dir) {
  const ClassifierConfig& c = model.config();
  return Json{{"folder", dir.string()},
              {"architecture", to_string(c.architecture)},
              {"weights_sha256", sha256_file(model.weights_path().string())},
              {"config_sha256", sha256_file((dir / "config.json").string())},
              {"labels", model.labels()},
              {"activation", to_string(model.activation())},
              {"hidden_size", c.hidden},
              {"layers", c.layers},
              {"max_length", model.max_length()},
              {"max_length_source", model.tokenizer().max_length_source()}};
}

}  // namespace

ClassifierJobResult run_classifier_job(const ClassifierJobOptions& o) {
  RunLock lock(o.run_dir);
  const fs::path checkpoints = o.run_dir / "checkpoints";
  ClassifierJobResult result;
  result.scored = o.run_dir / "scored.jsonl";
  result.manifest = o.run_dir / "manifest.json";
  VLBIAS_CHECK(o.resume || !fs::exists(result.scored), UsageError,
               "{} already holds scored.jsonl; pass --resume to write it again from the "
               "checkpoints, or choose another --out",
               o.run_dir.string());
  const SequenceClassifier model = SequenceClassifier::load(o.model_dir, o.classifier);
  const Table input = read_table(o.input.string());
  const std::vector<std::string> texts = column_texts(input, o.text_column);
  const OutputColumns columns = output_columns(model, input, o.input, o.prefix);
  const std::size_t n = texts.size(), batch = o.batch ? o.batch : 64;
  const std::size_t chunk = o.chunk ? o.chunk : 2048, chunks = (n + chunk - 1) / chunk;
  Json model_info = model_json(model, o.model_dir);
  // Everything that shapes the checkpoints: a resumed run must agree on all of it.
  const Json job{{"weights_sha256", model_info["weights_sha256"]},
                 {"config_sha256", model_info["config_sha256"]},
                 {"tokenizer", model.tokenizer().source()},
                 {"max_length", model.max_length()},
                 {"input_sha256", sha256_file(o.input.string())},
                 {"text_column", o.text_column},
                 {"prefix", o.prefix},
                 {"rows", n},
                 {"chunk", chunk},
                 {"batch", batch},
                 {"checkpoint_format", 1}};
  // A shard scores the chunks c with c mod count == index (io/shard.h); whole runs keep the key.
  const auto owns = [&](std::size_t c) {
    return shard_of_chunk(c, o.shard.count) == o.shard.index;
  };
  std::vector<std::size_t> rows;  // the input rows this run scores, in order
  for (std::size_t r = 0; r < n; ++r) {
    if (owns(r / chunk)) rows.push_back(r);
  }
  Json key = job;
  if (!o.shard.whole()) key["shard"] = Json{{"index", o.shard.index}, {"count", o.shard.count}};
  open_checkpoints(checkpoints, key, o.resume);

  const auto start = std::chrono::steady_clock::now();
  std::size_t scored_tokens = 0;
  std::vector<bool> resumed_chunk(chunks, false);
  {
    Progress progress("score texts", rows.size());
    for (std::size_t c = 0; c < chunks; ++c) {
      const std::size_t begin = c * chunk, end = std::min(n, begin + chunk);
      if (!owns(c)) continue;
      if (fs::exists(checkpoints / chunk_name(c))) {
        result.resumed += end - begin;
        resumed_chunk[c] = true;
        progress.advance(end - begin);
        continue;
      }
      score_chunk(model, texts, begin, end, batch, checkpoints / chunk_name(c), progress);
    }
    progress.finish();
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<std::vector<float>> logits;
  std::vector<bool> truncated;
  std::size_t empty = 0;
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::size_t begin = c * chunk, end = std::min(n, begin + chunk);
    if (!owns(c)) continue;
    ChunkResult r =
        load_chunk(checkpoints / chunk_name(c), checkpoints, begin, end, columns.labels.size());
    for (std::size_t i = 0; i < r.logits.size(); ++i) {
      logits.push_back(std::move(r.logits[i]));
      truncated.push_back(r.truncated[i]);
      result.truncated += r.truncated[i] ? 1 : 0;
      if (!resumed_chunk[c]) scored_tokens += r.tokens[i];
    }
  }
  for (const std::size_t r : rows) empty += texts[r].empty() ? 1 : 0;
  const std::string scorer = scorer_text(model, o.model_dir, model_info["weights_sha256"]);
  write_scored(result.scored, input, rows, model, columns, scorer, logits, truncated);

  result.rows = rows.size();
  const double fresh = static_cast<double>(rows.size() - result.resumed);
  result.texts_per_second = fresh / std::max(result.seconds, 1e-9);
  Json manifest{{"vlbias_version", VLBIAS_VERSION},
                {"created_utc", utc_now()},
                {"command", "score classifier"},
                {"complete", true},
                {"model", model_info},
                {"tokenizer", Json{{"kind", to_string(model.tokenizer().kind())},
                                   {"source", model.tokenizer().source()},
                                   {"unicode", TextTokenizer::unicode_version()}}},
                {"input", Json{{"path", o.input.string()},
                               {"sha256", job["input_sha256"]},
                               {"rows", n},
                               {"text_column", o.text_column}}},
                {"output", Json{{"path", "scored.jsonl"},
                                {"columns", columns.labels},
                                {"truncated_column", columns.truncated},
                                {"scorer_column", columns.scorer},
                                {"scorer", scorer}}},
                {"truncated", result.truncated},
                {"empty_texts", empty},
                {"resumed_rows", result.resumed},
                {"throughput", Json{{"seconds", result.seconds},
                                    {"texts_per_second", result.texts_per_second},
                                    {"tokens_per_second", static_cast<double>(scored_tokens) /
                                                              std::max(result.seconds, 1e-9)},
                                    {"threads", thread_count()},
                                    {"batch", batch}}}};
  manifest["chunk"] = chunk;  // rows per checkpoint, and the unit of shards
  if (!o.shard.whole()) {
    manifest["shard"] = shard_json(o.shard, kChunkScheme);
    manifest["shard"]["items"] = rows.size();
    // What merge checks the shard's rows by (classifier_merge.cpp): scored.jsonl as written.
    manifest["shard"]["scored_sha256"] = sha256_file(result.scored.string());
  }
  write_file_atomically(result.manifest, manifest.dump(2) + "\n");
  fs::remove_all(checkpoints);
  return result;
}

}  // namespace vlbias
