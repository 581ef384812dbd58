// ClipModel against the float64 reference forwards of tools/make_clip_fixtures.py (open_clip's
// modules for the open_clip layout, transformers' modeling_clip math for the HF layout), for every
// committed case: layouts, F32 / F16 / BF16 weights, quick_gelu / gelu, argmax / first-EOS
// pooling. Plus packing, thread-count and call-order invariances.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "encode/clip_model_test_util.h"
#include "vlbias/core/blas.h"
#include "vlbias/core/parallel.h"
#include "vlbias/encode/models/clip_model.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_clip_model_parity_test {

using namespace clip_test;

constexpr double kAtol = 1e-5;  // max |ours - reference|
constexpr double kRtol = 1e-4;  // per element, beyond a 1e-6 floor

struct Diff {
  double max_abs = 0.0;
  double max_rel = 0.0;  // |d| / max(|ref|, 1e-2)
};

Diff compare(const Matrix& got, const Matrix& ref, const std::string& what) {
  Diff d;
  EXPECT_EQ(got.rows, ref.rows) << what;
  EXPECT_EQ(got.cols, ref.cols) << what;
  for (std::size_t i = 0; i < got.rows && i < ref.rows; ++i) {
    for (std::size_t j = 0; j < got.cols && j < ref.cols; ++j) {
      const double r = ref.at(i, j), e = std::abs(got.at(i, j) - r);
      d.max_abs = std::max(d.max_abs, e);
      d.max_rel = std::max(d.max_rel, e / std::max(std::abs(r), 1e-2));
      EXPECT_LE(e, 1e-6 + kRtol * std::abs(r)) << what << " row " << i << " col " << j;
    }
  }
  EXPECT_LE(d.max_abs, kAtol) << what;
  return d;
}

struct Case {
  std::string name, layout, dtype, pixels, activation;
  bool pool_argmax = false;
  std::size_t image_size = 0, embed_dim = 0;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  const nlohmann::json j = read_json(models_dir() / "cases.json");
  for (const auto& c : j.at("cases")) {
    out.push_back({c.at("name"), c.at("layout"), c.at("dtype"), c.at("pixels"), c.at("activation"),
                   c.at("pool_argmax"), c.at("image_size"), c.at("embed_dim")});
  }
  return out;
}

TEST(ClipModelParity, EveryCaseMatchesItsReference) {
  const std::vector<Case> all = cases();
  ASSERT_EQ(all.size(), 5u);
  for (const Case& c : all) {
    SCOPED_TRACE(c.name);
    const fs::path dir = models_dir() / c.name;
    const ClipModel model = ClipModel::load(dir);
    const ClipConfig& cfg = model.config();
    EXPECT_EQ(cfg.layout, c.layout == "hf" ? ClipLayout::HuggingFace : ClipLayout::OpenClip);
    const Activation act = c.activation == "gelu" ? Activation::Gelu : Activation::QuickGelu;
    EXPECT_EQ(cfg.vision.activation, act);
    EXPECT_EQ(cfg.text.activation, act);
    EXPECT_EQ(cfg.pool_argmax, c.pool_argmax);
    EXPECT_EQ(cfg.image_size, c.image_size);
    EXPECT_EQ(cfg.embed_dim, c.embed_dim);
    // exp() of the stored log(1 / 0.07), which F16 / BF16 round.
    EXPECT_NEAR(std::log(cfg.logit_scale), std::log(1.0 / 0.07), c.dtype == "F32" ? 1e-6 : 4e-3);
    EXPECT_EQ(model.weights_path().filename(),
              c.layout == "hf" ? "model.safetensors" : "open_clip_model.safetensors");

    const Matrix pixels = read_npy_matrix(models_dir() / c.pixels);
    ASSERT_EQ(pixels.cols, 3 * c.image_size * c.image_size);
    const Matrix images = model.encode_images(pixels.data.data(), pixels.rows);
    const Diff di = compare(images, read_npy_matrix(dir / "image_embeddings.npy"), "images");

    const auto texts = read_texts(dir);
    const Matrix text = model.encode_texts(texts);
    const Diff dt = compare(text, read_npy_matrix(dir / "text_embeddings.npy"), "texts");
    std::printf(
        "[ parity ] %-16s %-9s %-4s images max|d| %.2e (rel %.1e), texts max|d| %.2e "
        "(rel %.1e)\n",
        c.name.c_str(), c.layout.c_str(), c.dtype.c_str(), di.max_abs, di.max_rel, dt.max_abs,
        dt.max_rel);
  }
}

TEST(ClipModelParity, TextsCoverLengthsAndPoolingEdgeCases) {
  // The fixture texts: lengths 1 .. 77 (one of full context length); the first-EOS case has a
  // text with no EOS (pooled at 0) and one with tokens after its EOS.
  const fs::path dir = models_dir() / "hf_a_f32";
  const ClipModel model = ClipModel::load(dir);
  const auto texts = read_texts(dir);
  std::size_t longest = 0, no_eos = 0, after_eos = 0;
  for (const auto& t : texts) {
    longest = std::max(longest, t.size());
    const std::size_t p = model.pooled_position(t);
    if (p == 0 && t.size() > 1) ++no_eos;
    if (p + 1 < t.size()) ++after_eos;
  }
  EXPECT_EQ(longest, 77u);
  EXPECT_GE(no_eos, 1u);
  EXPECT_GE(after_eos, 2u);
  EXPECT_FALSE(model.config().pool_argmax);
  EXPECT_EQ(model.config().eos_token_id, 407);
}

TEST(ClipModelParity, PackedEqualsOneAtATime) {
  for (const char* name : {"oc_a_f16", "hf_b_bf16_eos2"}) {
    SCOPED_TRACE(name);
    const fs::path dir = models_dir() / name;
    const ClipModel model = ClipModel::load(dir);
    const auto texts = read_texts(dir);
    const Matrix packed = model.encode_texts(texts);
    double worst = 0.0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const Matrix one = model.encode_texts({texts[i]});
      for (std::size_t j = 0; j < one.cols; ++j) {
        worst = std::max(worst, static_cast<double>(std::abs(one.at(0, j) - packed.at(i, j))));
      }
    }
    // A row's GEMM tile position changes with the packing, so only the last bits may differ.
    EXPECT_LE(worst, 2e-6);
    const Matrix pixels = read_npy_matrix(
        models_dir() / (model.config().image_size == 32 ? "pixels_32.npy" : "pixels_24.npy"));
    const Matrix all = model.encode_images(pixels.data.data(), pixels.rows);
    double worst_img = 0.0;
    for (std::size_t i = 0; i < pixels.rows; ++i) {
      const Matrix one = model.encode_images(pixels.row(i), 1);
      for (std::size_t j = 0; j < one.cols; ++j) {
        worst_img = std::max(worst_img, static_cast<double>(std::abs(one.at(0, j) - all.at(i, j))));
      }
    }
    EXPECT_LE(worst_img, 2e-6);
    std::printf("[ packing ] %s: max |packed - single| texts %.2e, images %.2e\n", name, worst,
                worst_img);
  }
}

TEST(ClipModelParity, EmptyInputsGiveEmptyMatrices) {
  const ClipModel model = ClipModel::load(models_dir() / "oc_b_f32");
  const Matrix a = model.encode_images(nullptr, 0);
  EXPECT_EQ(a.rows, 0u);
  EXPECT_EQ(a.cols, 16u);
  const Matrix b = model.encode_texts({});
  EXPECT_EQ(b.rows, 0u);
  EXPECT_EQ(b.cols, 16u);
}

TEST(ClipModelParity, MovedModelStillEncodes) {
  ClipModel a = ClipModel::load(models_dir() / "oc_b_f32");
  const auto texts = read_texts(models_dir() / "oc_b_f32");
  const Matrix before = a.encode_texts(texts);
  ClipModel b = std::move(a);
  EXPECT_TRUE(bitwise_equal(before, b.encode_texts(texts)));
}

// ---- Thread-count invariance on a model big enough for sgemm's partition (products of
// >= 2^24 multiply-adds are split into blocks) and many attention tasks.

class ThreadGuard {
 public:
  ThreadGuard() : saved_(thread_count()) {}
  ~ThreadGuard() { set_thread_count(saved_); }

 private:
  unsigned saved_;
};

// An open_clip-layout random model: image 64 / patch 8 (65 tokens), vision width 256 (4 heads,
// 2 layers, MLP 1024); text width 192 (3 heads, 2 layers), context 77, vocab 1000, embed 64.
fs::path write_mid_model(const fs::path& dir) {
  const std::size_t vw = 256, vm = 1024, tw = 192, tm = 768, e = 64, p = 8, tokens = 65;
  const std::size_t ctx = 77, vocab = 1000;
  Rng rng(20240601);
  std::vector<RawTensor> t;
  auto add = [&](const std::string& name, std::vector<std::size_t> shape, float scale) {
    std::size_t n = 1;
    for (std::size_t s : shape) n *= s;
    t.push_back(f32_tensor(name, shape, random_values(n, scale, rng)));
  };
  auto add_ln = [&](const std::string& name, std::size_t w) {
    std::vector<float> g = random_values(w, 0.1f, rng);
    for (float& x : g) x += 1.0f;
    t.push_back(f32_tensor(name + ".weight", {w}, g));
    add(name + ".bias", {w}, 0.1f);
  };
  auto tower = [&](const std::string& prefix, std::size_t w, std::size_t m) {
    for (int i = 0; i < 2; ++i) {
      const std::string b = prefix + "resblocks." + std::to_string(i) + ".";
      add_ln(b + "ln_1", w);
      add(b + "attn.in_proj_weight", {3 * w, w}, 1.5f / std::sqrt(static_cast<float>(w)));
      add(b + "attn.in_proj_bias", {3 * w}, 0.1f);
      add(b + "attn.out_proj.weight", {w, w}, 1.0f / std::sqrt(static_cast<float>(w)));
      add(b + "attn.out_proj.bias", {w}, 0.1f);
      add_ln(b + "ln_2", w);
      add(b + "mlp.c_fc.weight", {m, w}, 1.0f / std::sqrt(static_cast<float>(w)));
      add(b + "mlp.c_fc.bias", {m}, 0.5f);
      add(b + "mlp.c_proj.weight", {w, m}, 1.0f / std::sqrt(static_cast<float>(m)));
      add(b + "mlp.c_proj.bias", {w}, 0.1f);
    }
  };
  add("visual.conv1.weight", {vw, 3, p, p}, 1.0f / std::sqrt(192.0f));
  add("visual.class_embedding", {vw}, 1.0f);
  add("visual.positional_embedding", {tokens, vw}, 0.5f);
  add_ln("visual.ln_pre", vw);
  tower("visual.transformer.", vw, vm);
  add_ln("visual.ln_post", vw);
  add("visual.proj", {vw, e}, 1.0f / 16.0f);
  add("token_embedding.weight", {vocab, tw}, 1.0f);
  add("positional_embedding", {ctx, tw}, 0.5f);
  tower("transformer.", tw, tm);
  add_ln("ln_final", tw);
  add("text_projection", {tw, e}, 0.07f);
  t.push_back(f32_tensor("logit_scale", {}, {4.6052f}));
  const fs::path model = dir / "mid";
  fs::create_directories(model);
  write_raw(model / "open_clip_model.safetensors", t);
  write_text(model / "open_clip_config.json",
             R"({"model_cfg": {"embed_dim": 64, "quick_gelu": true,
                 "vision_cfg": {"image_size": 64, "layers": 2, "width": 256, "patch_size": 8},
                 "text_cfg": {"context_length": 77, "vocab_size": 1000, "width": 192,
                              "heads": 3, "layers": 2}},
                 "preprocess_cfg": {}})");
  return model;
}

TEST(ClipModelDeterminism, ThreadCountDoesNotChangeBits) {
  ThreadGuard guard;
  TempDir tmp;
  const ClipModel model = ClipModel::load(write_mid_model(tmp.path()));
  EXPECT_EQ(model.config().vision.heads, 4u);
  // 40 images x 65 tokens = 2600 rows: qkv is 2600 x 768 x 256 (> 2^24, partitioned).
  const std::size_t n = 40, floats = 3 * 64 * 64;
  Rng rng(7);
  const std::vector<float> pixels = random_values(n * floats, 1.0f, rng);
  std::vector<std::vector<std::int32_t>> texts;
  for (std::size_t i = 0; i < 120; ++i) {
    std::vector<std::int32_t> t = {998};
    const std::size_t len = 2 + rng.uniform_index(76);
    while (t.size() + 1 < len) t.push_back(1 + static_cast<std::int32_t>(rng.uniform_index(996)));
    t.push_back(999);
    texts.push_back(t);
  }
  set_thread_count(1);
  const Matrix img1 = model.encode_images(pixels.data(), n);
  const Matrix txt1 = model.encode_texts(texts);
  set_thread_count(2);
  const Matrix img2 = model.encode_images(pixels.data(), n);
  const Matrix txt2 = model.encode_texts(texts);
  set_thread_count(3);
  const Matrix img3 = model.encode_images(pixels.data(), n);
  EXPECT_TRUE(bitwise_equal(img1, img2));
  EXPECT_TRUE(bitwise_equal(txt1, txt2));
  EXPECT_TRUE(bitwise_equal(img1, img3));
  // Inside a pool task everything runs serially: the same bits again.
  set_thread_count(2);
  std::vector<Matrix> inside(2);
  parallel_for(2, [&](std::size_t i) {
    inside[i] = i == 0 ? model.encode_images(pixels.data(), n) : model.encode_texts(texts);
  });
  EXPECT_TRUE(bitwise_equal(img1, inside[0]));
  EXPECT_TRUE(bitwise_equal(txt1, inside[1]));
  // Sanity: embeddings are O(1) and differ between inputs.
  EXPECT_GT(max_abs_diff(img1, Matrix(img1.rows, img1.cols)), 0.1);
}

TEST(ClipModelDeterminism, ConcurrentCallsAgree) {
  const fs::path dir = models_dir() / "oc_a_f16";
  const ClipModel model = ClipModel::load(dir);
  const auto texts = read_texts(dir);
  const Matrix ref = model.encode_texts(texts);
  std::vector<Matrix> out(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < out.size(); ++i) {
    threads.emplace_back([&, i] { out[i] = model.encode_texts(texts); });
  }
  for (auto& th : threads) th.join();
  for (const Matrix& m : out) EXPECT_TRUE(bitwise_equal(ref, m));
}

}  // namespace in_clip_model_parity_test
}  // namespace
}  // namespace vlbias
