#pragma once
// The image models' constructors, behind open_image_model (src/encode/image_model.cpp).
#include <filesystem>
#include <memory>

#include "vlbias/encode/image_model.h"

namespace vlbias::encode_internal {

// The FID Inception-v3 from a .safetensors file with pytorch-fid's names.
std::unique_ptr<ImageFeatureModel> open_inception(const std::filesystem::path& weights,
                                                  FidPreprocess mode, InceptionOutput output);

}  // namespace vlbias::encode_internal
