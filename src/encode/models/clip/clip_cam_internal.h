#pragma once
// Internals of the CLIP explainers (include/vlbias/encode/models/clip_cam.h), for their tests.
#include <cstddef>
#include <vector>

#include "vlbias/encode/models/clip_cam.h"
#include "vlbias/encode/models/clip_model.h"

namespace vlbias::encode_internal {

// T of one embedding row e (embed_dim values; `row` names it in the InputError for a zero row).
double trait_pair_value(const float* e, const TraitPairTarget& target, std::size_t row);

// T of one image whose last encoder block receives `block_input` (image_tokens() x width, the
// residual stream after the other blocks): the last block, the post-LayerNorm, the projection and
// the target, as clip_target_gradients runs them. For finite-difference checks of
// ClipTargetGradients::block_input_gradient.
double target_from_block_input(const ClipModel& model, const float* block_input,
                               const TraitPairTarget& target);

// The last block's input of one image (pixels: 3 x image_size^2 floats): image_tokens() x width.
std::vector<float> last_block_input(const ClipModel& model, const float* pixels);

}  // namespace vlbias::encode_internal
