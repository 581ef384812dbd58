// vlbias._vlbias: the Python bindings (issue 10), thin in the faiss way. The C++ API takes
// row-major float32 matrices, so a binding is mostly its signature: a numpy array becomes a
// MatrixView (copied only when it is not C-contiguous float32), the call runs without the
// GIL, and the result is the same JSON object the `vlbias metric` command prints (without
// its provenance block) as a dict. vlbias errors become vlbias.InputError / UsageError
// (both ValueError) and vlbias.InternalError (RuntimeError), with our messages.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fstream>
#include <sstream>

#include "convert.h"
#include "features.h"
#include "vlbias/audits/audit.h"
#include "vlbias/audits/lvlm_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/core/matrix.h"
#include "vlbias/core/parallel.h"
#include "vlbias/encode/encode.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/io/table/table.h"
#include "vlbias/metrics/association.h"
#include "vlbias/metrics/clipscore.h"
#include "vlbias/metrics/distribution_metrics.h"
#include "vlbias/metrics/lvlm.h"
#include "vlbias/metrics/prdc.h"
#include "vlbias/metrics/ranking_metrics.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/metric_json.h"
#include "vlbias/stats/compare.h"
#include "vlbias/version.h"

namespace py = pybind11;

namespace vlbias::python {

namespace {

std::vector<double> as_vector(const py::handle& obj, const char* name) {
  using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;
  DoubleArray a;
  try {
    a = DoubleArray::ensure(obj);
  } catch (const py::error_already_set&) {
    a = DoubleArray();
  }
  if (!a) throw py::type_error(std::string(name) + " must be a 1-D array of numbers");
  if (a.ndim() != 1) {
    throw py::value_error(std::string(name) + " must be 1-D (one value per item); got " +
                          std::to_string(a.ndim()) + " dimensions");
  }
  return std::vector<double>(a.data(), a.data() + a.shape(0));
}

// A table of `rows` rows built in memory from arguments (`source` names it in messages).
Table memory_table(std::size_t rows, const char* source) {
  Table t;
  t.source = source;
  t.rows = rows;
  t.line_of_row.resize(rows);
  for (std::size_t i = 0; i < rows; ++i) t.line_of_row[i] = i + 1;
  return t;
}

// Scores and class labels as RankedItems, the classes found as the CLI finds them in a table
// column (set_classes): integer labels make a numeric column (ordered numerically),
// anything else text (ordered by bytes).
RankedItems ranked_items(const py::handle& scores, const py::sequence& labels) {
  RankedItems items;
  items.scores = as_vector(scores, "scores");
  if (static_cast<std::size_t>(py::len(labels)) != items.scores.size()) {
    throw py::value_error(
        "labels must have one class per score: " + std::to_string(py::len(labels)) +
        " labels for " + std::to_string(items.scores.size()) + " scores");
  }
  bool all_int = true;
  std::vector<std::string> text;
  std::vector<double> ints;
  for (const auto& l : labels) {
    if (py::isinstance<py::bool_>(l) || !py::isinstance<py::int_>(l)) {
      all_int = false;
    } else {
      ints.push_back(static_cast<double>(l.cast<long long>()));
    }
    text.push_back(py::str(l));
  }
  Table table = memory_table(items.scores.size(), "<labels>");
  if (all_int) {
    add_numeric_column(table, "labels", std::move(ints));
  } else {
    add_string_column(table, "labels", text);
  }
  set_classes(items, table, "labels");
  return items;
}

py::dict prdc(const py::handle& real, const py::handle& fake, std::size_t k, bool inclusive) {
  const Matrix2d r = as_matrix(real, "real"), f = as_matrix(fake, "fake");
  if (r.view.cols != f.view.cols) {
    throw py::value_error("real has " + std::to_string(r.view.cols) + " columns but fake has " +
                          std::to_string(f.view.cols) +
                          "; both must come from the same feature extractor");
  }
  PrdcOptions o;
  o.k = k;
  o.rule = inclusive ? BallRule::Inclusive : BallRule::Strict;
  PrdcResult result;
  {
    py::gil_scoped_release release;
    result = prdc(r.view, f.view, o);
  }
  return to_python(prdc_json(result, r.view.cols));
}

py::dict fid(const py::handle& real, const py::handle& fake) {
  const Matrix2d r = as_matrix(real, "real"), f = as_matrix(fake, "fake");
  FidResult result;
  {
    py::gil_scoped_release release;
    result = fid(r.view, f.view);
  }
  return to_python(fid_json(result));
}

py::dict kid(const py::handle& real, const py::handle& fake, std::size_t subsets,
             std::size_t subset_size, std::uint64_t seed, int degree, double gamma, double coef0) {
  const Matrix2d r = as_matrix(real, "real"), f = as_matrix(fake, "fake");
  KidOptions o;
  o.subsets = subsets;
  o.subset_size = subset_size;
  o.seed = seed;
  o.degree = degree;
  o.gamma = gamma;
  o.coef0 = coef0;
  KidResult result;
  {
    py::gil_scoped_release release;
    result = kid(r.view, f.view, o);
  }
  return to_python(kid_json(result, o, gamma > 0 ? gamma : 1.0 / static_cast<double>(r.view.cols)));
}

py::dict vendi(const py::handle& features, double q) {
  const Matrix2d x = as_matrix(features, "features");
  VendiResult result;
  {
    py::gil_scoped_release release;
    result = vendi(x.view, q);
  }
  return to_python(vendi_json(result, q));
}

py::dict scweat(const py::handle& targets, const py::handle& a, const py::handle& b,
                const std::string& p_test, std::size_t permutations, std::uint64_t seed) {
  const Matrix2d t = as_matrix(targets, "targets"), ma = as_matrix(a, "a"), mb = as_matrix(b, "b");
  ScweatOptions o;
  o.p_test = parse_scweat_p_test(p_test);
  o.permutations = permutations;
  o.seed = seed;
  o.targets_name = "targets";
  o.a_name = "a";
  o.b_name = "b";
  ScweatResult result;
  {
    py::gil_scoped_release release;
    result = sc_weat(t.view, ma.view, mb.view, o);
  }
  return to_python(scweat_json(result));
}

py::dict skew(const py::handle& scores, const py::sequence& labels, std::size_t k,
              const std::string& desired, const std::string& absent) {
  const RankedItems items = ranked_items(scores, labels);
  SkewOptions o;
  o.k = k;
  o.desired = parse_desired_distribution(desired);
  o.absent = parse_absent_class(absent);
  if (k < 1 || k > items.scores.size()) {
    throw py::value_error("k must be between 1 and " + std::to_string(items.scores.size()) +
                          " (the number of items); got " + std::to_string(k));
  }
  return to_python(skew_json(skew_at_k(items, o), items.class_names));
}

py::dict ndkl(const py::handle& scores, const py::sequence& labels, const std::string& desired) {
  const RankedItems items = ranked_items(scores, labels);
  return to_python(ndkl_json(ndkl(items, parse_desired_distribution(desired)), items.class_names));
}

py::dict clipscore(const py::handle& images, const py::handle& texts, const std::string& variant,
                   const std::optional<std::vector<std::size_t>>& text_row,
                   const std::vector<double>& percentiles) {
  const Matrix2d im = as_matrix(images, "images"), tx = as_matrix(texts, "texts");
  const ClipScoreVariant v = parse_clipscore_variant(variant);
  const std::vector<std::size_t> rows = text_row ? *text_row : std::vector<std::size_t>{};
  ClipScores scores;
  ClipScoreSummary summary;
  {
    py::gil_scoped_release release;
    scores = clipscores(im.view, tx.view, rows, v);
    summary = summarize_clipscores(scores.score, percentiles);
  }
  Json out{{"variant", to_string(v)},
           {"pairing", clipscore_pairing(rows.empty(), tx.view.rows, im.view.rows)},
           {"overall", clipscore_summary_json(summary)}};
  py::dict d = to_python(out);
  // Per image (the CLI's --per-sample CSV), as arrays.
  d["cosine"] = py::array_t<double>(scores.cosine.size(), scores.cosine.data());
  d["score"] = py::array_t<double>(scores.score.size(), scores.score.data());
  return d;
}

// Columns of an in-memory table: a sequence of labels is one column named `name`; a dict
// maps column names to sequences (intersectional groups). Returns the column names.
std::vector<std::string> add_label_columns(Table& table, const py::handle& labels,
                                           const std::string& name) {
  std::vector<std::pair<std::string, py::sequence>> columns;
  if (py::isinstance<py::dict>(labels)) {
    for (const auto& [k, v] : labels.cast<py::dict>())
      columns.emplace_back(py::str(k), py::reinterpret_borrow<py::sequence>(v));
  } else {
    columns.emplace_back(name, py::reinterpret_borrow<py::sequence>(labels));
  }
  std::vector<std::string> names;
  for (const auto& [column, values] : columns) {
    if (static_cast<std::size_t>(py::len(values)) != table.rows) {
      throw py::value_error(name + " column '" + column + "' has " +
                            std::to_string(py::len(values)) + " labels for " +
                            std::to_string(table.rows) + " values");
    }
    std::vector<std::string> text;
    text.reserve(table.rows);
    for (const auto& v : values) text.push_back(v.is_none() ? "" : std::string(py::str(v)));
    add_string_column(table, column, text);
    names.push_back(column);
  }
  return names;
}

py::dict lvlm_measure(Table& table, LvlmConfig& config, const LvlmReportOptions& o, LvlmMeasure m) {
  Json out;
  {
    py::gil_scoped_release release;
    LvlmState state;
    lvlm_scan_table(table, config, state);
    canonicalize(state);
    out = lvlm_measure_json(state, config, o, m);
  }
  return to_python(out);
}

py::dict maxgap(const py::handle& scores, const py::handle& set_ids, const py::handle& groups,
                const py::handle& by, std::size_t bootstrap, double ci, std::uint64_t seed) {
  std::vector<std::pair<std::string, std::vector<double>>> columns;
  if (py::isinstance<py::dict>(scores)) {
    for (const auto& [k, v] : scores.cast<py::dict>())
      columns.emplace_back(py::str(k), as_vector(v, "scores"));
  } else {
    columns.emplace_back("score", as_vector(scores, "scores"));
  }
  if (columns.empty()) throw py::value_error("scores is empty: give at least one score column");
  Table table = memory_table(columns.front().second.size(), "<arrays>");
  LvlmConfig config;
  for (auto& [name, values] : columns) {
    if (values.size() != table.rows)
      throw py::value_error("every score column needs the same length");
    add_numeric_column(table, name, std::move(values));
    config.scores.push_back(name);
  }
  config.set_key = add_label_columns(table, set_ids, "set");
  config.group = add_label_columns(table, groups, "group");
  if (!by.is_none()) config.by = add_label_columns(table, by, "by");
  config.stop_words = "none";
  LvlmReportOptions o;
  o.bootstrap = bootstrap;
  o.ci = ci;
  o.seed = seed;
  return lvlm_measure(table, config, o, LvlmMeasure::MaxGap);
}

py::dict pmi(const std::vector<std::string>& texts, const py::handle& groups, const py::handle& by,
             std::size_t min_freq, double threshold, std::size_t top, double log_base) {
  Table table = memory_table(texts.size(), "<arrays>");
  add_string_column(table, "text", texts);
  LvlmConfig config;
  config.text = "text";
  config.pmi = true;
  config.stop_words = "none";
  config.group = add_label_columns(table, groups, "group");
  if (!by.is_none()) config.by = add_label_columns(table, by, "by");
  if (min_freq < 1) throw py::value_error("min_freq must be at least 1");
  LvlmReportOptions o;
  o.pmi_min_freq = min_freq;
  o.pmi_threshold = threshold;
  o.pmi_top = top;
  o.pmi_log_base = log_base;
  return lvlm_measure(table, config, o, LvlmMeasure::Pmi);
}

py::dict compare(const py::handle& values, const py::handle& groups, const std::string& test,
                 bool pairwise, const py::handle& within, std::size_t min_group_size) {
  std::vector<double> v = as_vector(values, "values");
  Table table = memory_table(v.size(), "<values>");
  add_numeric_column(table, "value", std::move(v));
  CompareOptions o;
  o.value = "value";
  o.by = add_label_columns(table, groups, "group");
  if (!within.is_none()) o.within = add_label_columns(table, within, "within");
  o.test = parse_group_test(test);
  o.pairwise = pairwise;
  o.min_group_size = min_group_size;
  CompareReport report;
  {
    py::gil_scoped_release release;
    report = compare_groups(table, o);
  }
  return to_python(to_json(report));
}

// A CLIP model directory (Hugging Face or open_clip layout) opened once.
class Clip {
 public:
  Clip(const std::filesystem::path& path, const std::optional<std::string>& crop_rounding,
       const std::optional<std::string>& text_cleaning) {
    ClipEncoderOptions o;
    if (crop_rounding) o.crop_rounding = parse_crop_rounding(*crop_rounding);
    if (text_cleaning) o.text_cleaning = parse_text_cleaning(*text_cleaning);
    py::gil_scoped_release release;
    encoder_ = std::make_unique<ClipEncoder>(ClipEncoder::open(path, o));
  }

  py::array_t<float> encode_texts(const std::vector<std::string>& texts, bool normalize) const {
    Matrix m;
    {
      py::gil_scoped_release release;
      m = encoder_->encode_texts(texts, normalize);
    }
    return to_array(std::move(m));
  }

  // Paths (decoded as Pillow does) or H x W x 3 uint8 RGB arrays, `batch` at a time.
  py::array_t<float> encode_images(const py::sequence& images, bool normalize,
                                   std::size_t batch) const {
    if (batch == 0) throw py::value_error("batch_size must be at least 1");
    PyImages images_in = read_images(images);
    const std::size_t n = images_in.size();
    Matrix out(n, encoder_->model().config().embed_dim);
    {
      py::gil_scoped_release release;
      for (std::size_t start = 0; start < n; start += batch) {
        const std::size_t end = std::min(n, start + batch);
        std::vector<RgbImage> chunk;
        for (std::size_t i = start; i < end; ++i) chunk.push_back(images_in.take(i));
        const Matrix e = encoder_->encode_images(chunk, normalize);
        std::copy(e.data.begin(), e.data.end(), out.row(start));
      }
    }
    return to_array(std::move(out));
  }

  std::vector<std::int32_t> tokenize(const std::string& text) const {
    return encoder_->tokenize(text);
  }
  std::size_t embed_dim() const { return encoder_->model().config().embed_dim; }
  py::dict describe() const { return to_python(Json(encoder_->describe())); }

 private:
  std::unique_ptr<ClipEncoder> encoder_;
};

py::dict audit(const std::filesystem::path& spec_path, const std::filesystem::path& out) {
  {
    py::gil_scoped_release release;
    run_audit(load_audit_spec(spec_path), out);  // each kind's runner; lvlm without shards
  }
  std::ifstream in(out / "results.json", std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return to_python(parse_json(text.str(), (out / "results.json").string()));
}

}  // namespace

}  // namespace vlbias::python

PYBIND11_MODULE(_vlbias, m) {
  using namespace vlbias::python;
  namespace v = vlbias;
  m.doc() = "vlbias: audit vision-language systems for social bias (C++ engine bindings)";
  m.attr("__version__") = VLBIAS_VERSION;

  static py::exception<v::Error> error(m, "Error", PyExc_Exception);
  static py::exception<v::InputError> input_error(
      m, "InputError", py::make_tuple(error, py::handle(PyExc_ValueError)).ptr());
  static py::exception<v::UsageError> usage_error(
      m, "UsageError", py::make_tuple(error, py::handle(PyExc_ValueError)).ptr());
  static py::exception<v::InternalError> internal_error(
      m, "InternalError", py::make_tuple(error, py::handle(PyExc_RuntimeError)).ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const v::InputError& e) {
      input_error(e.what());
    } catch (const v::UsageError& e) {
      usage_error(e.what());
    } catch (const v::InternalError& e) {
      internal_error(e.what());
    } catch (const v::Error& e) {
      error(e.what());
    }
  });

  bind_features(m);
  m.def(
      "set_threads",
      [](const py::int_& n) {
        // Any Python int: one beyond 64 bits is out of range too (UsageError, a ValueError).
        int overflow = 0;
        const long long value = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
        if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
        VLBIAS_CHECK(overflow == 0, v::UsageError,
                     "set_threads(n) must be an integer from 0 (all cores) to {}, got {}",
                     v::kMaxThreads, py::repr(n).cast<std::string>());
        v::check_thread_count(value, "set_threads(n)");
        v::set_thread_count(static_cast<unsigned>(value));
      },
      py::arg("n"),
      "Worker threads for every later call (0 = all cores, at most 256), as the CLI's --threads; "
      "vlbias.UsageError (a ValueError) outside 0..256.");
  m.def(
      "threads", [] { return v::thread_count(); }, "Worker threads in use.");

  m.def("compare", &compare, py::arg("values"), py::arg("groups"), py::arg("test") = "anova",
        py::arg("pairwise") = false, py::arg("within") = py::none(), py::arg("min_group_size") = 2,
        R"(Compare `values` across groups (as `vlbias compare`): one value per item, `groups` one
label per item, or a dict {column: labels} for intersectional groups; `within`: the same
shapes, one comparison per cell. test: anova | welch | student | mannwhitney | kruskal;
pairwise: one comparison per pair of groups. Returns the command's JSON (comparisons with
statistic, df, p_value, p_holm, p_bh, effect sizes and per-group n/mean/sd, absent groups,
empty cells).)");

  py::class_<Clip>(m, "Clip", R"(A CLIP model directory (Hugging Face: config.json,
model.safetensors, vocab.json, merges.txt, preprocessor_config.json; or open_clip), encoding
exactly as `vlbias encode` does: images decoded and preprocessed as Pillow and the HF
processor (or torchvision for open_clip), texts tokenized with CLIP's BPE.)")
      .def(py::init<const std::filesystem::path&, const std::optional<std::string>&,
                    const std::optional<std::string>&>(),
           py::arg("path"), py::arg("crop_rounding") = py::none(),
           py::arg("text_cleaning") = py::none())
      .def("encode_texts", &Clip::encode_texts, py::arg("texts"), py::arg("normalize") = true,
           "n texts -> float32 array (n, embed_dim), L2-normalised unless normalize=False.")
      .def("encode_images", &Clip::encode_images, py::arg("images"), py::arg("normalize") = true,
           py::arg("batch_size") = 32,
           "n image paths (or H x W x 3 uint8 RGB arrays) -> float32 array (n, embed_dim).")
      .def("tokenize", &Clip::tokenize, py::arg("text"), "Token ids [SOT ... EOT].")
      .def_property_readonly("embed_dim", &Clip::embed_dim)
      .def("describe", &Clip::describe, "The model config, preprocessing and tokenizer.");

  m.def("audit", &audit, py::arg("spec"), py::arg("out"),
        R"(Run the audit a YAML spec describes (as `vlbias audit SPEC --out OUT`): writes
OUT/results.json, OUT/tables/*.csv and OUT/report.html, and returns results.json as a dict.)");

  m.def("maxgap", &maxgap, py::arg("scores"), py::arg("set_ids"), py::arg("groups"),
        py::arg("by") = py::none(), py::arg("bootstrap") = 1000, py::arg("ci") = 0.95,
        py::arg("seed") = 0,
        R"(MaxGap over counterfactual sets (paper 003, Eq. 1): per set, the max - min of a score
over its rows, then the mean, p90 and describe over sets with bootstrap CIs, and which group
holds each set's max.

scores: one value per answer (a 1-D array), or a dict {name: array} of several score columns.
set_ids: the set of each answer (a list), or a dict of columns that together name the set.
groups: each answer's group (a list), or a dict of columns (intersectional). by: optional
split (a list or dict). Returns what `vlbias metric maxgap` prints (without provenance).)");
  m.def("pmi", &pmi, py::arg("texts"), py::arg("groups"), py::arg("by") = py::none(),
        py::arg("min_freq") = 10, py::arg("threshold") = 1.0, py::arg("top") = 0,
        py::arg("log_base") = 0.0,
        R"(Words over-represented in the answers about each group (paper 003's PMI):
log[(f(w,g)/N_g) / (f(w,not g)/N_not g)], kept when above `threshold` with f(w,g) >= min_freq;
`top` > 0 keeps the top words per group; log_base 0 = natural. Returns what `vlbias metric
pmi` prints (without provenance).)");
  m.def("clipscore", &clipscore, py::arg("images"), py::arg("texts"), py::arg("variant") = "raw",
        py::arg("text_row") = py::none(), py::arg("percentiles") = std::vector<double>{10, 50, 90},
        R"(CLIPScore of each image embedding against its text embedding.

texts: one row per image, one row for all, or rows picked per image by `text_row` (one
integer per image). variant: "raw" (cosine, DIG-In), "hessel" (2.5 max(cos, 0)) or
"torchmetrics" (max(100 cos, 0)). Returns variant, pairing, overall {n, mean, sd, min, max,
percentiles} as `vlbias metric clipscore`, plus per-image arrays cosine and score.)");
  m.def("prdc", &prdc, py::arg("real"), py::arg("fake"), py::arg("k") = 5,
        py::arg("inclusive") = false,
        R"(Precision, recall, density and coverage of generated features against real ones.

real, fake: 2-D arrays (rows = images, same columns); any float dtype or layout is converted
to C-contiguous float32. k: the neighbour defining each ball (DIG-In uses 3, prdc 5).
inclusive: a point on a ball's boundary is inside (d <= r); default strict (d < r).
Returns the dict `vlbias metric prdc` prints (without provenance): precision, recall,
density, coverage, k, ball, n_real, n_fake, dim, neighbours[, note].)");
  m.def("fid", &fid, py::arg("real"), py::arg("fake"),
        R"(Frechet distance between Gaussians fitted to real and generated features.

Returns fid, mean_term, trace_real, trace_fake, trace_sqrt, n_real, n_fake, dim, covariance.)");
  m.def("kid", &kid, py::arg("real"), py::arg("fake"), py::arg("subsets") = 100,
        py::arg("subset_size") = 1000, py::arg("seed") = 0, py::arg("degree") = 3,
        py::arg("gamma") = 0.0, py::arg("coef0") = 1.0,
        R"(Kernel Inception Distance: unbiased MMD^2 with the polynomial kernel
(gamma x.y + coef0)^degree (gamma 0 = 1 / dim), mean and sd over `subsets` random subsets of
`subset_size` rows (0 subsets: one estimate over all rows). Returns kid, sd, subsets,
subset_size, kernel, estimator, n_real, n_fake, dim, per_subset[, note].)");
  m.def("vendi", &vendi, py::arg("features"), py::arg("q") = 1.0,
        R"(Vendi score (effective number of distinct items) with the cosine kernel, order q
(1 = Shannon, float('inf') allowed). Returns vendi, q, kernel, n, dim, rank, eigenvalues_of.)");
  m.def("scweat", &scweat, py::arg("targets"), py::arg("a"), py::arg("b"),
        py::arg("p_test") = "permutation", py::arg("permutations") = 10000, py::arg("seed") = 0,
        R"(Single-category WEAT of text embeddings `targets` against image embedding sets a and b.

p_test: "permutation" (relabel a u b) or "sign-flip". Returns effect_size, mean_difference,
per_target [{difference, effect_size}], n_a, n_b, p_value, p_test, permutations, method,
seed[, note].)");
  m.def("skew", &skew, py::arg("scores"), py::arg("labels"), py::arg("k"),
        py::arg("desired") = "uniform", py::arg("absent") = "-inf",
        R"(Skew@k per class and MaxSkew@k of the ranking by `scores` (descending, ties by order).

labels: one class per item (strings, or integers). desired: "uniform" or "base-rate".
absent: skew of a class missing from the top k, "-inf" (authors' code) or "zero". Returns
skew {class: value or "-inf"}, max_skew, k, n, counts, desired, class_n, tie_rule.)");
  m.def("ndkl", &ndkl, py::arg("scores"), py::arg("labels"), py::arg("desired") = "uniform",
        R"(Normalized discounted KL divergence of the ranking by `scores`. Returns ndkl, n,
desired, class_n, tie_rule.)");
}
