#pragma once
// The image models' constructors, behind open_image_model (src/encode/models/image_model.cpp).
#include <filesystem>
#include <memory>

#include "vlbias/encode/models/image_model.h"

namespace vlbias::encode_internal {

// Convolutions of the FID Inception-v3 (inception_names.cpp).
std::size_t inception_conv_count();

// The FID Inception-v3 from a .safetensors file with pytorch-fid's names.
std::unique_ptr<ImageFeatureModel> open_inception(const std::filesystem::path& weights,
                                                  FidPreprocess mode, InceptionOutput output);

}  // namespace vlbias::encode_internal
