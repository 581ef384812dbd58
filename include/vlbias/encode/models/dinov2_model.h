#pragma once
// Native DINOv2 image features (Oquab et al. 2023, "DINOv2: Learning Robust Visual Features
// without Supervision"): the ViT of a Hugging Face `Dinov2Model` folder (config.json +
// model.safetensors, F32 / F16 / BF16) run in float32 on the shared transformer runtime
// (include/vlbias/nn/layers.h), and the features FD_DINOv2 (Stein et al. 2023) computes from it:
// the CLS token after the final layernorm (transformers' pooler_output, facebookresearch/dinov2's
// x_norm_clstoken).
//
// The forward, as transformers' models/dinov2/modeling_dinov2.py and facebookresearch/dinov2's
// vision_transformer.py compute it:
//   patches = Conv2d(3, width, kernel = stride = patch, bias)(pixels)   (trailing pixels that do
//             not fill a patch are dropped, as the strided convolution drops them)
//   h = [cls_token; patches] + positions, the learned positions resized bicubically to the input
//       grid when it differs from the trained one (interpolate_pos_encoding, below)
//   L x {h += lambda1 * attn(LN1(h)); h += lambda2 * MLP(LN2(h))}   (layer scale, pre-LN)
//   MLP = fc2(act(fc1 x)), or SwiGLU weights_out(silu(x1) * x2) with [x1 x2] = weights_in x
//   features = LN(h)[CLS]
// Position interpolation, two flavours (Dinov2Positions):
//   ScaleFactor (the default): facebookresearch/dinov2's interpolate_pos_encoding with
//     interpolate_offset 0.1 and no antialias, as torch.hub's models and FD_DINOv2's tools run it,
//     and transformers' Dinov2 before it switched to size=: the M x M trained positions go through
//     F.interpolate(mode="bicubic", align_corners=False,
//                   scale_factor=((gh + 0.1) / M, (gw + 0.1) / M))
//     for an input grid of gh x gw patches, so source positions step by M / (gh + 0.1);
//   Size: current transformers' Dinov2Embeddings, F.interpolate(size=(gh, gw), ...), steps of
//     M / gh.
// The two give visibly different features (about 2% of the feature scale on the test models):
// pick the one of the reference being reproduced. Both skip the interpolation when
// gh * gw == M^2 and the image is square.
//
// Determinism as ClipModel's (include/vlbias/encode/models/clip_model.h): results do not depend on
// the thread count.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "vlbias/core/matrix.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/nn/kernels.h"

namespace vlbias {

// How the trained position embeddings are resized to another grid (see above).
enum class Dinov2Positions { ScaleFactor, Size };

// "scale-factor" | "size" (UsageError otherwise), and back.
Dinov2Positions parse_dinov2_positions(const std::string& name);
const char* to_string(Dinov2Positions positions);

// How an image reaches the model's input size:
//   Processor    the folder's preprocessor_config.json (BitImageProcessor: shortest edge 256
//                bicubic, centre crop 224), as transformers' pipeline;
//   DgmEval      dgm-eval's FD_DINOv2 (Stein et al. 2023): torchvision Resize((224, 224),
//                BICUBIC) of the PIL image, i.e. Pillow's 8-bit bicubic to a square without
//                cropping (the aspect ratio is not kept), /255, ImageNet mean and std;
//   DgmEvalClean dgm-eval's clean_resize: Pillow's bicubic on each float channel (mode "F", as
//                clean-fid), clipped to [0, 255], /255, ImageNet mean and std.
// The square's side is 224, or --image-size.
enum class Dinov2Resize { Processor, DgmEval, DgmEvalClean };

// "processor" | "dgm-eval" | "dgm-eval-clean" (UsageError otherwise), and back.
Dinov2Resize parse_dinov2_resize(const std::string& name);
const char* to_string(Dinov2Resize resize);

// transformers' Dinov2Config, the parts that shape the forward.
struct Dinov2Config {
  std::size_t width = 768;       // hidden_size
  std::size_t layers = 12;       // num_hidden_layers
  std::size_t heads = 12;        // num_attention_heads; width % heads == 0
  double mlp_ratio = 4.0;        // mlp_ratio
  std::size_t mlp_width = 3072;  // the MLP's hidden size (see parse_dinov2_config)
  bool swiglu = false;           // use_swiglu_ffn (the giant model)
  // hidden_act of the plain MLP ("gelu", "gelu_new" / "gelu_pytorch_tanh", "quick_gelu");
  // Dinov2SwiGLUFFN ignores it.
  std::string hidden_act = "gelu";
  Activation activation = Activation::Gelu;
  bool qkv_bias = true;
  float layer_norm_eps = 1e-6f;
  std::size_t image_size = 224;  // the size the position embeddings were trained for
  std::size_t patch_size = 14;

  // The trained position grid per side, M = image_size / patch_size.
  std::size_t grid() const { return patch_size == 0 ? 0 : image_size / patch_size; }
  // Rows of embeddings.position_embeddings: M^2 + 1.
  std::size_t positions() const { return grid() * grid() + 1; }
};

// Parses transformers' Dinov2Config JSON. model_type must be "dinov2"; hidden_size,
// num_hidden_layers, num_attention_heads, mlp_ratio, hidden_act, use_swiglu_ffn, qkv_bias and
// image_size take Dinov2Config's defaults when absent; patch_size and layer_norm_eps are required
// (their defaults changed between transformers releases). mlp_width = int(width * mlp_ratio), and
// for SwiGLU (int(that * 2 / 3) + 7) // 8 * 8 (Dinov2SwiGLUFFN / DINOv2's SwiGLUFFNFused).
// InputError naming the file and key for malformed or inconsistent values, registers
// (model_type "dinov2_with_registers" or num_register_tokens), an unknown hidden_act (plain MLP)
// or num_channels other than 3. Training-only keys (drop_path_rate, dropouts, layerscale_value,
// use_mask_token) and backbone keys (out_features, apply_layernorm, ...) do not change the
// features and are ignored.
Dinov2Config parse_dinov2_config(std::string_view json_text, std::string_view source);
Dinov2Config read_dinov2_config(const std::filesystem::path& config_json);

class Dinov2Model {  // movable, immutable after load; encode_images is const
 public:
  // Loads dir/config.json and dir/model.safetensors. Every tensor is checked against the config
  // through WeightsReader (missing, wrong shape or dtype, non-finite: InputError naming the tensor
  // and file) and every tensor of the file must be used (embeddings.mask_token, a training-only
  // parameter, excepted).
  static Dinov2Model load(const std::filesystem::path& dir,
                          Dinov2Positions positions = Dinov2Positions::ScaleFactor);

  Dinov2Model(Dinov2Model&&) noexcept;
  Dinov2Model& operator=(Dinov2Model&&) noexcept;
  ~Dinov2Model();

  const Dinov2Config& config() const;
  const std::filesystem::path& weights_path() const;
  Dinov2Positions positions() const;

  // pixels: n images, each 3 x height x width float32 CHW (normalised), back to back; height and
  // width at least the patch size. Returns n x width features (NOT L2-normalised). The resized
  // positions are computed once per input grid and kept. InputError naming the image for a
  // non-finite pixel.
  Matrix encode_images(const float* pixels, std::size_t n, std::size_t height,
                       std::size_t width) const;

  struct Impl;

 private:
  explicit Dinov2Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct Dinov2EncoderOptions {
  // `--image-size N`: resize the shortest edge to N and centre-crop N x N, in place of the
  // preprocessor config's sizes (DINOv2 ships shortest edge 256, crop 224).
  std::optional<std::size_t> image_size;
  // The position interpolation (default: facebookresearch/dinov2's, FD_DINOv2's).
  Dinov2Positions positions = Dinov2Positions::ScaleFactor;
  Dinov2Resize resize = Dinov2Resize::Processor;
};

// A DINOv2 folder ready to compute image features; the image side of ClipEncoder's API
// (include/vlbias/encode/encode.h). Immutable after open(); call from one thread at a time.
class Dinov2Encoder {
 public:
  // Loads the model and the preprocessing: preprocessor_config.json (BitImageProcessor, as
  // facebook/dinov2-* ship it; read_hf_preprocessor_config) or, without one, DINOv2's
  // (shortest edge 256 bicubic, centre crop 224, ImageNet mean and std). UsageError when the
  // preprocessing does not centre-crop (the model needs one input size) or crops below one patch.
  static Dinov2Encoder open(const std::filesystem::path& dir,
                            const Dinov2EncoderOptions& options = {});

  const Dinov2Model& model() const { return model_; }
  const std::filesystem::path& dir() const { return dir_; }
  const ImagePreprocess& preprocess() const { return preprocess_; }

  // Floats per image tensor: 3 x crop height x crop width.
  std::size_t pixels_per_image() const;
  // The model's pixel tensor of a decoded image (CHW) into out[0, pixels_per_image()).
  void pixels(const RgbImage& image, float* out) const;
  // n images' tensors back to back -> n x dim() features (not L2-normalised).
  Matrix encode_pixels(const float* pixels, std::size_t n) const;
  // Feature size: the model's hidden size.
  std::size_t dim() const;

  // The model config, position interpolation and preprocessing as JSON, for manifests.
  nlohmann::ordered_json describe() const;

 private:
  explicit Dinov2Encoder(Dinov2Model model) : model_(std::move(model)) {}

  std::filesystem::path dir_;
  Dinov2Model model_;
  ImagePreprocess preprocess_;
  std::string preprocess_source_;
  Dinov2Resize resize_ = Dinov2Resize::Processor;
};

}  // namespace vlbias
