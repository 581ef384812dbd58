#pragma once
// The FID Inception-v3's layers (include/vlbias/encode/models/inception_model.h), shared by its
// loader (inception_model_load.cpp) and its forward (inception_model.cpp).
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "vlbias/encode/models/inception_model.h"
#include "vlbias/nn/conv.h"

namespace vlbias::encode_internal {

// Mixed_5b/5c/5d (pytorch-fid FIDInceptionA).
// `head` stacks the 1x1 convolutions that read the block's input (b1x1, b5x5_1, b3x3dbl_1 and
// the pool branch's, which commutes with its average pool) into one GEMM; the parts keep only
// their shapes.
struct InceptionA {
  Conv2d b1x1, b5x5_1, b5x5_2, b3x3dbl_1, b3x3dbl_2, b3x3dbl_3, pool;
  Conv2d head;
};
// Mixed_6a (torchvision InceptionB).
struct InceptionB {
  Conv2d b3x3, b3x3dbl_1, b3x3dbl_2, b3x3dbl_3;
};
// Mixed_6b..6e (FIDInceptionC).
// `head`: b1x1, b7x7_1, b7x7dbl_1 and pool stacked (as InceptionA's).
struct InceptionC {
  Conv2d b1x1, b7x7_1, b7x7_2, b7x7_3, b7x7dbl_1, b7x7dbl_2, b7x7dbl_3, b7x7dbl_4, b7x7dbl_5, pool;
  Conv2d head;
};
// Mixed_7a (torchvision InceptionD).
struct InceptionD {
  Conv2d b3x3_1, b3x3_2, b7x7x3_1, b7x7x3_2, b7x7x3_3, b7x7x3_4;
};
// Mixed_7b (FIDInceptionE_1: average pool) and Mixed_7c (FIDInceptionE_2: max pool).
// `head`: b1x1, b3x3_1, b3x3dbl_1 and, after an average pool only, pool stacked.
struct InceptionE {
  Conv2d b1x1, b3x3_1, b3x3_2a, b3x3_2b, b3x3dbl_1, b3x3dbl_2, b3x3dbl_3a, b3x3dbl_3b, pool;
  bool max_pool = false;
  Conv2d head;
};

// Builds the blocks' heads from their loaded 1x1 convolutions.
void stack_block_heads(InceptionA& a);
void stack_block_heads(InceptionC& c);
void stack_block_heads(InceptionE& e);

// pytorch-fid's name -> the name in a weights file ("" for a tensor the file does not hold: a
// batch norm without scale). Empty: the file uses pytorch-fid's names.
using InceptionNames = std::map<std::string, std::string>;

// The 94 convolutions' pytorch-fid prefixes (Conv2d_1a_3x3, ..., Mixed_7c.branch_pool) in the
// graph's order.
std::vector<std::string> inception_conv_prefixes();

// Names for weights under other names (a TorchScript port of the TF graph): the file's 4-D
// tensors in file order are the 94 convolutions in the graph's order, each followed by its batch
// norm's 1-D tensors (recognised by name: *mean*, *var*, beta/bias, gamma/weight), and a 2-D
// tensor with its bias is the fc layer. InputError when the counts differ.
InceptionNames inception_names_by_order(const SafetensorsFile& file);

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

  // Work buffers of features(): block input and output, branch temporaries.
  mutable FloatBuffer ping, pong, t1, t2, t3;
};

}  // namespace vlbias
