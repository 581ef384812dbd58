// ClipEncoder: a CLIP directory's weights, tokenizer and image preprocessing.
#include <cmath>

#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/sha256.h"
#include "vlbias/encode/encode.h"
#include "vlbias/io/json.h"

namespace vlbias {

namespace fs = std::filesystem;

CropRounding parse_crop_rounding(const std::string& name) {
  if (name == "floor") return CropRounding::Floor;
  if (name == "round") return CropRounding::Round;
  VLBIAS_FAIL(UsageError,
              "Unknown crop rounding '{}'; expected floor (Hugging Face) or round (torchvision).",
              name);
}

TextCleaning parse_text_cleaning(const std::string& name) {
  if (name == "hf") return TextCleaning::HuggingFace;
  if (name == "open_clip") return TextCleaning::OpenClip;
  VLBIAS_FAIL(UsageError, "Unknown text cleaning '{}'; expected hf or open_clip.", name);
}

namespace {

const char* to_string(CropRounding r) {
  return r == CropRounding::Floor ? "floor" : "round";
}
const char* to_string(TextCleaning c) {
  return c == TextCleaning::HuggingFace ? "hf" : "open_clip";
}
const char* to_string(Activation a) {
  return a == Activation::QuickGelu ? "quick_gelu" : "gelu";
}

Json tower_json(const ClipTowerConfig& t) {
  return Json{{"width", t.width},
              {"layers", t.layers},
              {"heads", t.heads},
              {"mlp_width", t.mlp_width},
              {"layer_norm_eps", t.layer_norm_eps},
              {"activation", to_string(t.activation)}};
}

// L2-normalises the rows of `m` in place (norms in double). A zero row cannot be
// normalised: the model produced a degenerate embedding, which is an error.
void normalize_embeddings(Matrix& m, const std::string& what) {
  const std::vector<double> norms = normalize_rows_in_place(m);
  for (std::size_t i = 0; i < norms.size(); ++i) {
    VLBIAS_CHECK(norms[i] > 0.0 && std::isfinite(norms[i]), InputError,
                 "The {} embedding of item {} has norm {}; it cannot be L2-normalised.", what, i,
                 norms[i]);
  }
}

}  // namespace

ClipEncoder ClipEncoder::open(const fs::path& dir, const ClipEncoderOptions& options) {
  ClipEncoder e(ClipModel::load(dir));
  e.dir_ = dir;
  const bool hf = e.model_.config().layout == ClipLayout::HuggingFace;

  e.vocab_path_ = dir / "vocab.json";
  e.merges_path_ = dir / "merges.txt";
  const TextCleaning cleaning =
      options.text_cleaning.value_or(hf ? TextCleaning::HuggingFace : TextCleaning::OpenClip);
  if (fs::exists(e.vocab_path_) && fs::exists(e.merges_path_)) {
    e.tokenizer_ = ClipTokenizer::from_files(e.vocab_path_, e.merges_path_, cleaning);
    VLBIAS_CHECK(e.tokenizer_->vocab_size() <= e.model_.config().vocab_size, InputError,
                 "{}: the tokenizer has {} ids but the model's token embedding has {} rows.",
                 dir.string(), e.tokenizer_->vocab_size(), e.model_.config().vocab_size);
  } else {
    e.tokenizer_missing_ = fmt::format("{} has no {}", dir.string(),
                                       fs::exists(e.vocab_path_) ? "merges.txt" : "vocab.json");
  }

  if (hf) {
    const fs::path p = dir / "preprocessor_config.json";
    if (fs::exists(p)) {
      e.preprocess_ = read_hf_preprocessor_config(p);
      e.preprocess_source_ = p.filename().string();
    } else {
      // CLIPImageProcessor's defaults, sized to the model.
      e.preprocess_ = ImagePreprocess{};
      e.preprocess_.shortest_edge = e.model_.config().image_size;
      e.preprocess_.crop_width = e.preprocess_.crop_height = e.model_.config().image_size;
      e.preprocess_source_ = "CLIPImageProcessor defaults";
    }
  } else {
    e.preprocess_ = read_open_clip_preprocess(dir / "open_clip_config.json");
    e.preprocess_source_ = "open_clip_config.json preprocess_cfg";
  }
  if (options.crop_rounding) e.preprocess_.crop_rounding = *options.crop_rounding;
  const std::size_t s = e.model_.config().image_size;
  VLBIAS_CHECK(!e.preprocess_.do_center_crop ||
                   (e.preprocess_.crop_width == s && e.preprocess_.crop_height == s),
               InputError, "{}: the preprocessing crops to {}x{} but the model takes {}x{} images.",
               dir.string(), e.preprocess_.crop_width, e.preprocess_.crop_height, s, s);
  return e;
}

const ClipTokenizer& ClipEncoder::tokenizer() const {
  VLBIAS_CHECK(tokenizer_.has_value(), InputError,
               "{}; texts need the tokenizer files vocab.json and merges.txt.", tokenizer_missing_);
  return *tokenizer_;
}

std::vector<std::int32_t> ClipEncoder::tokenize(std::string_view text) const {
  return tokenizer().encode(text, model_.config().context_length);
}

std::size_t ClipEncoder::pixels_per_image() const {
  const std::size_t s = model_.config().image_size;
  return 3 * s * s;
}

void ClipEncoder::pixels(const RgbImage& image, float* out) const {
  if (!preprocess_.do_center_crop) {
    // Without a crop the resized image itself must already be the model's size.
    const std::size_t s = model_.config().image_size;
    std::size_t w = image.width, h = image.height;
    if (preprocess_.do_resize) std::tie(w, h) = shortest_edge_size(w, h, preprocess_.shortest_edge);
    VLBIAS_CHECK(w == s && h == s, InputError,
                 "An image preprocesses to {}x{} without a center crop, but the model takes "
                 "{}x{}.",
                 w, h, s, s);
  }
  preprocess_image(image, preprocess_, out);
}

Matrix ClipEncoder::encode_texts(const std::vector<std::string>& texts, bool normalize) const {
  std::vector<std::vector<std::int32_t>> ids;
  ids.reserve(texts.size());
  for (const std::string& t : texts) ids.push_back(tokenize(t));
  Matrix m = model_.encode_texts(ids);
  if (normalize) normalize_embeddings(m, "text");
  return m;
}

Matrix ClipEncoder::encode_images(const std::vector<RgbImage>& images, bool normalize) const {
  const std::size_t per = pixels_per_image();
  std::vector<float> px(images.size() * per);
  for (std::size_t i = 0; i < images.size(); ++i) pixels(images[i], px.data() + i * per);
  Matrix m = model_.encode_images(px.data(), images.size());
  if (normalize) normalize_embeddings(m, "image");
  return m;
}

Json ClipEncoder::describe() const {
  const ClipConfig& c = model_.config();
  Json model{{"dir", dir_.string()},
             {"layout", c.layout == ClipLayout::HuggingFace ? "huggingface" : "open_clip"},
             {"weights", model_.weights_path().filename().string()},
             {"weights_sha256", sha256_file(model_.weights_path().string())},
             {"embed_dim", c.embed_dim},
             {"image_size", c.image_size},
             {"patch_size", c.patch_size},
             {"context_length", c.context_length},
             {"vocab_size", c.vocab_size},
             {"eos_token_id", c.eos_token_id},
             {"text_pooling", c.pool_argmax ? "argmax of ids" : "first eos_token_id"},
             {"vision", tower_json(c.vision)},
             {"text", tower_json(c.text)}};
  const ImagePreprocess& p = preprocess_;
  Json pre{{"source", preprocess_source_},
           {"convert_rgb", "Pillow 9.4 convert(\"RGB\")"},
           {"resize", p.do_resize
                          ? Json{{"shortest_edge", p.shortest_edge}, {"resample", "Pillow bicubic"}}
                          : Json(nullptr)},
           {"center_crop", p.do_center_crop ? Json{{"width", p.crop_width},
                                                   {"height", p.crop_height},
                                                   {"rounding", to_string(p.crop_rounding)}}
                                            : Json(nullptr)},
           {"rescale_factor", p.do_rescale ? Json(p.rescale_factor) : Json(nullptr)},
           {"mean", p.do_normalize ? Json(p.mean) : Json(nullptr)},
           {"std", p.do_normalize ? Json(p.std) : Json(nullptr)}};
  Json tok = nullptr;
  if (tokenizer_) {
    tok = Json{{"vocab_sha256", sha256_file(vocab_path_.string())},
               {"merges_sha256", sha256_file(merges_path_.string())},
               {"cleaning", to_string(tokenizer_->cleaning())},
               {"context_length", c.context_length},
               {"packing", "no padding (each text at its own length; causal mask)"}};
  }
  return Json{{"model", model}, {"preprocessing", pre}, {"tokenizer", tok}};
}

}  // namespace vlbias
