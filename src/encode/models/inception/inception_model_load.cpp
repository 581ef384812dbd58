// Loading the FID Inception-v3 from pytorch-fid's state dict names (see
// include/vlbias/encode/models/inception_model.h): the topology is fixed, the channel counts are
// read from the weights and checked to chain (every layer's input is what feeds it).
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "inception_model_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/nn/weights.h"

namespace vlbias {

namespace {

using encode_internal::InceptionA;
using encode_internal::InceptionB;
using encode_internal::InceptionC;
using encode_internal::InceptionD;
using encode_internal::InceptionE;

// TensorFlow's batch norm epsilon, which the port keeps (BatchNorm2d(eps=0.001)).
constexpr double kBatchNormEps = 1e-3;

class Loader {
 public:
  Loader(const SafetensorsFile& file, encode_internal::InceptionNames names)
      : file_(file), names_(std::move(names)), reader_(file, context_of(file, names_.empty())) {}

  // The file's name of the tensor pytorch-fid calls `canonical`.
  std::string name(const std::string& canonical) const {
    if (names_.empty()) return canonical;
    const auto it = names_.find(canonical);
    return it == names_.end() ? canonical : it->second;
  }

  // BasicConv2d `prefix` (prefix.conv.weight [out, in, kh, kw] + prefix.bn.*) with its batch
  // norm folded in and ReLU after it.
  Conv2d conv(const std::string& prefix, std::size_t in, std::size_t kh, std::size_t kw,
              std::size_t stride = 1, std::size_t pad_h = 0, std::size_t pad_w = 0) {
    const std::string name = this->name(prefix + ".conv.weight");
    Conv2d c;
    c.out =
        file_.contains(name) && file_.info(name).shape.size() == 4 ? file_.info(name).shape[0] : 1;
    c.in = in, c.kernel_h = kh, c.kernel_w = kw, c.stride = stride, c.pad_h = pad_h;
    c.pad_w = pad_w, c.relu = true;
    // Names the expected input width and kernel: a mis-chained width-scaled model is refused
    // here, at the first layer that does not fit.
    c.w = reader_.read(name, {c.out, in, kh, kw});
    VLBIAS_CHECK(c.out > 0, InputError, "'{}': tensor '{}' has no output channels", file_.source(),
                 name);
    // A norm without scale (TF's scale=False; a by-order file without a gamma): gamma = 1.
    const std::string gamma = this->name(prefix + ".bn.weight");
    fold_batch_norm(c, gamma.empty() ? std::vector<float>() : reader_.read(gamma, {c.out}),
                    reader_.read(this->name(prefix + ".bn.bias"), {c.out}),
                    reader_.read(this->name(prefix + ".bn.running_mean"), {c.out}),
                    reader_.read(this->name(prefix + ".bn.running_var"), {c.out}), kBatchNormEps);
    if (kh == 3 && kw == 3 && stride == 1) prepare_winograd(c);
    return c;
  }

  InceptionA block_a(const std::string& p, std::size_t in) {
    InceptionA a;
    a.b1x1 = conv(p + ".branch1x1", in, 1, 1);
    a.b5x5_1 = conv(p + ".branch5x5_1", in, 1, 1);
    a.b5x5_2 = conv(p + ".branch5x5_2", a.b5x5_1.out, 5, 5, 1, 2, 2);
    a.b3x3dbl_1 = conv(p + ".branch3x3dbl_1", in, 1, 1);
    a.b3x3dbl_2 = conv(p + ".branch3x3dbl_2", a.b3x3dbl_1.out, 3, 3, 1, 1, 1);
    a.b3x3dbl_3 = conv(p + ".branch3x3dbl_3", a.b3x3dbl_2.out, 3, 3, 1, 1, 1);
    a.pool = conv(p + ".branch_pool", in, 1, 1);
    return a;
  }

  InceptionB block_b(const std::string& p, std::size_t in) {
    InceptionB b;
    b.b3x3 = conv(p + ".branch3x3", in, 3, 3, 2);
    b.b3x3dbl_1 = conv(p + ".branch3x3dbl_1", in, 1, 1);
    b.b3x3dbl_2 = conv(p + ".branch3x3dbl_2", b.b3x3dbl_1.out, 3, 3, 1, 1, 1);
    b.b3x3dbl_3 = conv(p + ".branch3x3dbl_3", b.b3x3dbl_2.out, 3, 3, 2);
    return b;
  }

  InceptionC block_c(const std::string& p, std::size_t in) {
    InceptionC c;
    c.b1x1 = conv(p + ".branch1x1", in, 1, 1);
    c.b7x7_1 = conv(p + ".branch7x7_1", in, 1, 1);
    c.b7x7_2 = conv(p + ".branch7x7_2", c.b7x7_1.out, 1, 7, 1, 0, 3);
    c.b7x7_3 = conv(p + ".branch7x7_3", c.b7x7_2.out, 7, 1, 1, 3, 0);
    c.b7x7dbl_1 = conv(p + ".branch7x7dbl_1", in, 1, 1);
    c.b7x7dbl_2 = conv(p + ".branch7x7dbl_2", c.b7x7dbl_1.out, 7, 1, 1, 3, 0);
    c.b7x7dbl_3 = conv(p + ".branch7x7dbl_3", c.b7x7dbl_2.out, 1, 7, 1, 0, 3);
    c.b7x7dbl_4 = conv(p + ".branch7x7dbl_4", c.b7x7dbl_3.out, 7, 1, 1, 3, 0);
    c.b7x7dbl_5 = conv(p + ".branch7x7dbl_5", c.b7x7dbl_4.out, 1, 7, 1, 0, 3);
    c.pool = conv(p + ".branch_pool", in, 1, 1);
    return c;
  }

  InceptionD block_d(const std::string& p, std::size_t in) {
    InceptionD d;
    d.b3x3_1 = conv(p + ".branch3x3_1", in, 1, 1);
    d.b3x3_2 = conv(p + ".branch3x3_2", d.b3x3_1.out, 3, 3, 2);
    d.b7x7x3_1 = conv(p + ".branch7x7x3_1", in, 1, 1);
    d.b7x7x3_2 = conv(p + ".branch7x7x3_2", d.b7x7x3_1.out, 1, 7, 1, 0, 3);
    d.b7x7x3_3 = conv(p + ".branch7x7x3_3", d.b7x7x3_2.out, 7, 1, 1, 3, 0);
    d.b7x7x3_4 = conv(p + ".branch7x7x3_4", d.b7x7x3_3.out, 3, 3, 2);
    return d;
  }

  InceptionE block_e(const std::string& p, std::size_t in, bool max_pool) {
    InceptionE e;
    e.b1x1 = conv(p + ".branch1x1", in, 1, 1);
    e.b3x3_1 = conv(p + ".branch3x3_1", in, 1, 1);
    e.b3x3_2a = conv(p + ".branch3x3_2a", e.b3x3_1.out, 1, 3, 1, 0, 1);
    e.b3x3_2b = conv(p + ".branch3x3_2b", e.b3x3_1.out, 3, 1, 1, 1, 0);
    e.b3x3dbl_1 = conv(p + ".branch3x3dbl_1", in, 1, 1);
    e.b3x3dbl_2 = conv(p + ".branch3x3dbl_2", e.b3x3dbl_1.out, 3, 3, 1, 1, 1);
    e.b3x3dbl_3a = conv(p + ".branch3x3dbl_3a", e.b3x3dbl_2.out, 1, 3, 1, 0, 1);
    e.b3x3dbl_3b = conv(p + ".branch3x3dbl_3b", e.b3x3dbl_2.out, 3, 1, 1, 1, 0);
    e.pool = conv(p + ".branch_pool", in, 1, 1);
    e.max_pool = max_pool;
    return e;
  }

  std::size_t fc_classes(std::size_t width) {
    const std::string w = name("fc.weight");
    if (!file_.contains(w)) return 0;
    const auto& shape = file_.info(w).shape;
    return shape.size() == 2 && shape[1] == width ? shape[0] : 1;  // 1: let read() name it
  }

  Linear fc(std::size_t classes, std::size_t width) {
    Linear l;
    l.out = classes;
    l.in = width;
    l.w = reader_.read(name("fc.weight"), {classes, width});
    l.b = reader_.read(name("fc.bias"), {classes});
    return l;
  }

  WeightsReader& reader() { return reader_; }

 private:
  static WeightsContext context_of(const SafetensorsFile& file, bool canonical) {
    WeightsContext context{canonical ? "the FID Inception-v3 (pytorch-fid's names)"
                                     : "the FID Inception-v3 (layers matched by order)",
                           {}};
    for (const std::string& name : file.names()) {
      // BatchNorm2d's training counter, which the forward does not use.
      if (name.ends_with("num_batches_tracked")) context.ignored.insert(name);
    }
    return context;
  }

  const SafetensorsFile& file_;
  encode_internal::InceptionNames names_;
  WeightsReader reader_;
};

std::size_t out_a(const InceptionA& a) {
  return a.b1x1.out + a.b5x5_2.out + a.b3x3dbl_3.out + a.pool.out;
}
std::size_t out_c(const InceptionC& c) {
  return c.b1x1.out + c.b7x7_3.out + c.b7x7dbl_5.out + c.pool.out;
}
std::size_t out_e(const InceptionE& e) {
  return e.b1x1.out + e.b3x3_2a.out + e.b3x3_2b.out + e.b3x3dbl_3a.out + e.b3x3dbl_3b.out +
         e.pool.out;
}

}  // namespace

InceptionModel InceptionModel::load(const SafetensorsFile& weights) {
  return load_with(weights, {});
}

InceptionModel InceptionModel::load_by_order(const SafetensorsFile& weights) {
  return load_with(weights, encode_internal::inception_names_by_order(weights));
}

InceptionModel InceptionModel::load_with(const SafetensorsFile& weights,
                                         const std::map<std::string, std::string>& names) {
  Loader l(weights, names);
  auto net = std::make_unique<Net>();
  net->conv1a = l.conv("Conv2d_1a_3x3", 3, 3, 3, 2);
  net->conv2a = l.conv("Conv2d_2a_3x3", net->conv1a.out, 3, 3);
  net->conv2b = l.conv("Conv2d_2b_3x3", net->conv2a.out, 3, 3, 1, 1, 1);
  net->conv3b = l.conv("Conv2d_3b_1x1", net->conv2b.out, 1, 1);
  net->conv4a = l.conv("Conv2d_4a_3x3", net->conv3b.out, 3, 3);
  std::size_t width = net->conv4a.out;
  const char* a_names[] = {"Mixed_5b", "Mixed_5c", "Mixed_5d"};
  for (int i = 0; i < 3; ++i) {
    net->mixed_5[i] = l.block_a(a_names[i], width);
    width = out_a(net->mixed_5[i]);
  }
  net->mixed_6a = l.block_b("Mixed_6a", width);
  width += net->mixed_6a.b3x3.out + net->mixed_6a.b3x3dbl_3.out;  // + the max-pooled input
  const char* c_names[] = {"Mixed_6b", "Mixed_6c", "Mixed_6d", "Mixed_6e"};
  for (int i = 0; i < 4; ++i) {
    net->mixed_6[i] = l.block_c(c_names[i], width);
    width = out_c(net->mixed_6[i]);
  }
  net->mixed_7a = l.block_d("Mixed_7a", width);
  width += net->mixed_7a.b3x3_2.out + net->mixed_7a.b7x7x3_4.out;
  net->mixed_7[0] = l.block_e("Mixed_7b", width, false);
  width = out_e(net->mixed_7[0]);
  net->mixed_7[1] = l.block_e("Mixed_7c", width, true);
  width = out_e(net->mixed_7[1]);
  for (InceptionA& a : net->mixed_5) encode_internal::stack_block_heads(a);
  for (InceptionC& c : net->mixed_6) encode_internal::stack_block_heads(c);
  for (InceptionE& e : net->mixed_7) encode_internal::stack_block_heads(e);
  if (const std::size_t classes = l.fc_classes(width); classes > 0) {
    net->fc = l.fc(classes, width);
  }
  l.reader().require_all_used();
  return InceptionModel(std::move(net));
}

}  // namespace vlbias
