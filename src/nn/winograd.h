#pragma once
// Winograd F(m x m, 3 x 3) convolution (see prepare_winograd in include/vlbias/nn/conv.h), called
// by conv2d for a convolution that holds transformed weights.
#include <cstddef>

#include "vlbias/nn/conv.h"

namespace vlbias::nn_internal {

// conv2d's contract (CNHW x of conv.in channels into y), for a 3 x 3 stride-1 convolution with
// conv.winograd filled.
void winograd_conv2d(const Conv2d& conv, const float* x, std::size_t images, std::size_t h,
                     std::size_t w, float* y, const float* residual);

}  // namespace vlbias::nn_internal
