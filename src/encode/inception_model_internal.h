#pragma once
// The FID Inception-v3's layers (include/vlbias/encode/inception_model.h), shared by its loader
// (inception_model_load.cpp) and its forward (inception_model.cpp).
#include <cstddef>
#include <vector>

#include "vlbias/encode/inception_model.h"
#include "vlbias/nn/conv.h"

namespace vlbias::encode_internal {

// Mixed_5b/5c/5d (pytorch-fid FIDInceptionA).
struct InceptionA {
  Conv2d b1x1, b5x5_1, b5x5_2, b3x3dbl_1, b3x3dbl_2, b3x3dbl_3, pool;
};
// Mixed_6a (torchvision InceptionB).
struct InceptionB {
  Conv2d b3x3, b3x3dbl_1, b3x3dbl_2, b3x3dbl_3;
};
// Mixed_6b..6e (FIDInceptionC).
struct InceptionC {
  Conv2d b1x1, b7x7_1, b7x7_2, b7x7_3, b7x7dbl_1, b7x7dbl_2, b7x7dbl_3, b7x7dbl_4, b7x7dbl_5, pool;
};
// Mixed_7a (torchvision InceptionD).
struct InceptionD {
  Conv2d b3x3_1, b3x3_2, b7x7x3_1, b7x7x3_2, b7x7x3_3, b7x7x3_4;
};
// Mixed_7b (FIDInceptionE_1: average pool) and Mixed_7c (FIDInceptionE_2: max pool).
struct InceptionE {
  Conv2d b1x1, b3x3_1, b3x3_2a, b3x3_2b, b3x3dbl_1, b3x3dbl_2, b3x3dbl_3a, b3x3dbl_3b, pool;
  bool max_pool = false;
};

}  // namespace vlbias::encode_internal

namespace vlbias {

struct InceptionModel::Net {
  Conv2d conv1a, conv2a, conv2b, conv3b, conv4a;
  encode_internal::InceptionA mixed_5[3];
  encode_internal::InceptionB mixed_6a;
  encode_internal::InceptionC mixed_6[4];
  encode_internal::InceptionD mixed_7a;
  encode_internal::InceptionE mixed_7[2];
  Linear fc;  // fc.out == 0 when the weights hold none

  // Work buffers of features(): block input and output, branch temporaries, im2col columns.
  mutable FloatBuffer ping, pong, t1, t2, t3, cols;
};

}  // namespace vlbias
