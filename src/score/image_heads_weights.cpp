// Reading the image heads' weights in their published formats (image_heads.h): safetensors
// and PyTorch checkpoints through open_weights_file, Q16's pickled numpy array through
// read_pickled_numpy_matrix, CLIP-IQA's prompts as `vlbias encode` embeddings and a table.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/embeddings.h"
#include "vlbias/io/tensor/pickled_array.h"
#include "vlbias/io/tensor/torch_checkpoint.h"
#include "vlbias/score/image_heads.h"

namespace vlbias {

namespace {

std::string head_tensor_list(const SafetensorsFile& f) {
  const std::size_t shown = std::min<std::size_t>(f.names().size(), 8);
  std::string out = fmt::format(
      "{}", fmt::join(f.names().begin(), f.names().begin() + static_cast<long>(shown), ", "));
  if (f.names().size() > shown) out += fmt::format(", ... ({} in all)", f.names().size());
  return out.empty() ? "no tensors" : out;
}

// "[17, 768]"; a 0 in an expected shape is shown as D (any width).
std::string head_shape_text(const std::vector<std::size_t>& shape, bool expected) {
  std::vector<std::string> parts;
  for (std::size_t d : shape) parts.push_back(expected && d == 0 ? "D" : std::to_string(d));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

// The tensors a head reads from one weights file, checked by name and shape.
class HeadTensorFile {
 public:
  HeadTensorFile(const std::filesystem::path& path, std::string_view head)
      : file_(open_weights_file(path)), head_(head) {}

  // The float tensor `name` of shape `expected` (a 0 takes any size there); its shape in
  // `*shape`.
  std::vector<float> get(const std::string& name, const std::vector<std::size_t>& expected,
                         std::vector<std::size_t>* shape = nullptr) const {
    VLBIAS_CHECK(file_.contains(name), InputError,
                 "{} has no tensor '{}', which the {} head reads (it holds {}): is it the weights "
                 "of another head?",
                 file_.source(), name, head_, head_tensor_list(file_));
    const SafetensorsTensorInfo& t = file_.info(name);
    bool ok = t.shape.size() == expected.size() && dtype_is_float(t.dtype);
    for (std::size_t i = 0; ok && i < expected.size(); ++i) {
      ok = expected[i] == 0 ? t.shape[i] > 0 : t.shape[i] == expected[i];
    }
    VLBIAS_CHECK(ok, InputError,
                 "{}: tensor '{}' is {} {}; the {} head expects {} floats: is it the weights of "
                 "another head?",
                 file_.source(), name, dtype_name(t.dtype), head_shape_text(t.shape, false), head_,
                 head_shape_text(expected, true));
    if (shape) *shape = t.shape;
    return file_.read_floats(name);
  }

  // InputError when the file holds a tensor outside `expected`.
  void refuse_others(const std::vector<std::string>& expected) const {
    for (const std::string& name : file_.names()) {
      VLBIAS_CHECK(std::find(expected.begin(), expected.end(), name) != expected.end(), InputError,
                   "{} holds tensor '{}', which the {} head does not have (it reads {}): is it "
                   "the weights of another head?",
                   file_.source(), name, head_, fmt::join(expected, ", "));
    }
  }

  const std::string& source() const { return file_.source(); }

 private:
  SafetensorsFile file_;
  std::string head_;
};

Matrix head_matrix(std::vector<float> values, std::size_t rows, std::size_t cols) {
  Matrix m;
  m.rows = rows;
  m.cols = cols;
  m.data = std::move(values);
  return m;
}

// The Linear layer `prefix`weight [out, in] and `prefix`bias [out]; `in` 0 takes any width,
// `out` 0 any.
ImageHeadLinear read_head_linear(const HeadTensorFile& f, const std::string& prefix, std::size_t in,
                                 std::size_t out) {
  std::vector<std::size_t> shape;
  std::vector<float> w = f.get(prefix + "weight", {out, in}, &shape);
  ImageHeadLinear l;
  l.weight = head_matrix(std::move(w), shape[0], shape[1]);
  l.bias = f.get(prefix + "bias", {shape[0]});
  return l;
}

}  // namespace

SafetyCheckerWeights read_safety_checker_weights(const std::filesystem::path& path) {
  const HeadTensorFile f(path, "safety-checker");
  SafetyCheckerWeights w;
  std::vector<std::size_t> shape;
  // diffusers safety_checker.py: concept_embeds = nn.Parameter(torch.ones(17, projection_dim)),
  // special_care_embeds (3, projection_dim), and their thresholds concept_embeds_weights (17),
  // special_care_embeds_weights (3).
  std::vector<float> concepts = f.get("concept_embeds", {17, 0}, &shape);
  w.concepts = head_matrix(std::move(concepts), 17, shape[1]);
  w.special = head_matrix(f.get("special_care_embeds", {3, shape[1]}), 3, shape[1]);
  w.concept_thresholds = f.get("concept_embeds_weights", {17});
  w.special_thresholds = f.get("special_care_embeds_weights", {3});
  return w;
}

LaionAestheticWeights read_laion_aesthetic_weights(const std::filesystem::path& path) {
  const HeadTensorFile f(path, "laion-aesthetic");
  // simple_inference.py MLP.layers: Linear(768, 1024), Dropout, Linear(1024, 128), Dropout,
  // Linear(128, 64), Dropout, Linear(64, 16), Linear(16, 1): nn.Sequential indices 0 2 4 6 7.
  LaionAestheticWeights w;
  std::vector<std::string> names;
  std::size_t in = 0;
  for (int index : {0, 2, 4, 6, 7}) {
    const std::string prefix = fmt::format("layers.{}.", index);
    w.layers.push_back(read_head_linear(f, prefix, in, index == 7 ? 1 : 0));
    in = w.layers.back().weight.rows;
    names.push_back(prefix + "weight");
    names.push_back(prefix + "bias");
  }
  f.refuse_others(names);
  return w;
}

ImageHeadLinear read_heim_aesthetic_weights(const std::filesystem::path& path) {
  const HeadTensorFile f(path, "heim-aesthetic");
  // helm aesthetics_scorer.py: torch.nn.Linear(768, 1).load_state_dict(torch.load(path)).
  ImageHeadLinear l = read_head_linear(f, "", 0, 1);
  f.refuse_others({"weight", "bias"});
  return l;
}

Matrix read_q16_weights(const std::filesystem::path& path) {
  Matrix m = read_pickled_numpy_matrix(path);
  VLBIAS_CHECK(m.rows == 2 && m.cols > 0, InputError,
               "{} holds a {} x {} array; Q16's prompts are 2 x D (D = 768 for ViT-L/14): one "
               "embedding per class, appropriate then inappropriate",
               path.string(), m.rows, m.cols);
  return m;
}

ClipIqaWeights read_clip_iqa_weights(const std::filesystem::path& embeddings,
                                     const std::filesystem::path& prompts) {
  const Matrix e = read_embeddings(embeddings);
  const Table t = read_table(prompts.string());
  const Column& name = t.column("name");
  const Column& polarity = t.column("polarity");
  const Column& text = t.column("text");
  VLBIAS_CHECK(e.rows == t.rows, UsageError,
               "{} holds {} embeddings but the prompts table {} has {} rows; encode that table's "
               "text column (`vlbias encode --texts {} --column text`)",
               embeddings.string(), e.rows, prompts.string(), t.rows, prompts.string());
  std::filesystem::path rows_file = embeddings;
  rows_file.replace_extension(".rows.csv");
  if (std::filesystem::exists(rows_file)) {
    const Table r = read_table(rows_file.string());
    const Column& encoded = r.column("text");
    for (std::size_t i = 0; i < std::min(r.rows, t.rows); ++i) {
      VLBIAS_CHECK(encoded.text(i) == text.text(i), UsageError,
                   "{} row {} encoded '{}' but {} row {} has the text '{}': the embeddings are "
                   "not of these prompts",
                   rows_file.string(), i, encoded.text(i).substr(0, 80), prompts.string(), i,
                   text.text(i).substr(0, 80));
    }
  }
  // Per pair name: the rows of its positive and negative prompt.
  std::vector<std::string> names;
  std::map<std::string, std::pair<std::size_t, std::size_t>> rows;
  const std::size_t none = t.rows;
  for (std::size_t i = 0; i < t.rows; ++i) {
    const std::string n = name.text(i), p = polarity.text(i);
    VLBIAS_CHECK(!n.empty() && (p == "positive" || p == "negative"), InputError,
                 "{}: line {}: expected a pair name and the polarity positive or negative, got "
                 "'{}', '{}'",
                 prompts.string(), i + 2, n.substr(0, 80), p.substr(0, 20));
    auto [it, added] = rows.try_emplace(n, none, none);
    if (added) names.push_back(n);
    std::size_t& slot = p == "positive" ? it->second.first : it->second.second;
    VLBIAS_CHECK(slot == none, InputError, "{}: line {}: pair '{}' has a second {} prompt",
                 prompts.string(), i + 2, n.substr(0, 80), p);
    slot = i;
  }
  ClipIqaWeights w;
  w.names = names;
  w.positive = Matrix(names.size(), e.cols);
  w.negative = Matrix(names.size(), e.cols);
  for (std::size_t p = 0; p < names.size(); ++p) {
    const auto [pos, neg] = rows[names[p]];
    VLBIAS_CHECK(pos != none && neg != none, InputError,
                 "{}: pair '{}' has no {} prompt; each name needs one positive and one negative",
                 prompts.string(), names[p].substr(0, 80), pos == none ? "positive" : "negative");
    std::copy(e.row(pos), e.row(pos) + e.cols, w.positive.row(p));
    std::copy(e.row(neg), e.row(neg) + e.cols, w.negative.row(p));
  }
  return w;
}

}  // namespace vlbias
