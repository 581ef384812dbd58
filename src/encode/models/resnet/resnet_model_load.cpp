// Loading torchvision's ResNet from its state_dict names (see
// include/vlbias/encode/models/resnet_model.h): the block kind, block counts and channel counts are
// read from the weights and checked to chain (every layer's input is what feeds it).
#include <string>
#include <utility>
#include <vector>

#include "resnet_model_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/nn/weights.h"

namespace vlbias {

namespace {

using encode_internal::ResNetBlock;

// torch.nn.BatchNorm2d's default epsilon, which torchvision's ResNet keeps.
constexpr double kResNetBatchNormEps = 1e-5;

// The prefix under which `file` holds torchvision's names: the shortest p with p + "conv1.weight",
// p + "bn1.running_mean" and p + "fc.weight" all present. UsageError when there is none.
std::string resnet_prefix(const SafetensorsFile& file) {
  const std::string stem = "conv1.weight";
  bool found = false;
  std::string best;
  for (const std::string& name : file.names()) {
    if (!name.ends_with(stem)) continue;
    const std::string p = name.substr(0, name.size() - stem.size());
    if (!p.empty() && p.back() != '.') continue;
    if (!file.contains(p + "bn1.running_mean") || !file.contains(p + "fc.weight")) continue;
    if (!found || p.size() < best.size()) best = p, found = true;
  }
  VLBIAS_CHECK(found, UsageError,
               "'{}' holds no torchvision ResNet: expected the tensors conv1.weight, "
               "bn1.running_mean and fc.weight (optionally under one prefix such as 'module.'); "
               "is it a model of another architecture?",
               file.source());
  return best;
}

class ResNetLoader {
 public:
  ResNetLoader(const SafetensorsFile& file, std::string prefix)
      : file_(file), prefix_(std::move(prefix)), reader_(file, context_of(file)) {}

  bool has(const std::string& name) const { return file_.contains(prefix_ + name); }

  // Convolution `conv` ([out, in, k, k], no bias) with batch norm `bn` folded in.
  Conv2d conv(const std::string& conv, const std::string& bn, std::size_t in, std::size_t k,
              std::size_t stride, std::size_t pad, bool relu) {
    const std::string name = prefix_ + conv + ".weight";
    Conv2d c;
    c.out =
        file_.contains(name) && file_.info(name).shape.size() == 4 ? file_.info(name).shape[0] : 1;
    c.in = in, c.kernel_h = k, c.kernel_w = k, c.stride = stride, c.pad_h = pad, c.pad_w = pad;
    c.relu = relu;
    c.w = reader_.read(name, {c.out, in, k, k});
    VLBIAS_CHECK(c.out > 0, InputError, "'{}': tensor '{}' has no output channels", file_.source(),
                 name);
    const std::string b = prefix_ + bn;
    const std::vector<float> var = reader_.read(b + ".running_var", {c.out});
    for (const float v : var) {
      VLBIAS_CHECK(v >= 0.0f, InputError,
                   "'{}': tensor '{}.running_var' holds the negative variance {}; expected >= 0",
                   file_.source(), b, v);
    }
    fold_batch_norm(c, reader_.read(b + ".weight", {c.out}), reader_.read(b + ".bias", {c.out}),
                    reader_.read(b + ".running_mean", {c.out}), var, kResNetBatchNormEps);
    if (k == 3 && stride == 1 && pad == 1) {
      prepare_winograd(c, 4);          // a classifier: F(4x4, 3x3)
      std::vector<float>().swap(c.w);  // the transformed weights alone are used
    }
    return c;
  }

  // Block `p` ("layer2.0") reading `in` channels; its output channels are the last conv's.
  ResNetBlock block(const std::string& p, std::size_t in, std::size_t stride, bool bottleneck) {
    ResNetBlock b;
    std::size_t out = 0;
    if (bottleneck) {
      b.c1 = conv(p + ".conv1", p + ".bn1", in, 1, 1, 0, true);
      b.c2 = conv(p + ".conv2", p + ".bn2", b.c1.out, 3, stride, 1, true);
      // The block's ReLU comes after the shortcut's add, which conv2d fuses (residual).
      b.c3 = conv(p + ".conv3", p + ".bn3", b.c2.out, 1, 1, 0, true);
      out = b.c3.out;
    } else {
      b.c1 = conv(p + ".conv1", p + ".bn1", in, 3, stride, 1, true);
      b.c2 = conv(p + ".conv2", p + ".bn2", b.c1.out, 3, 1, 1, true);  // ReLU after the add
      out = b.c2.out;
    }
    b.has_downsample = has(p + ".downsample.0.weight");
    if (b.has_downsample) {
      b.downsample = conv(p + ".downsample.0", p + ".downsample.1", in, 1, stride, 0, false);
      VLBIAS_CHECK(b.downsample.out == out, InputError,
                   "'{}': tensor '{}{}.downsample.0.weight' has {} output channels; expected {} "
                   "(the block's output)",
                   file_.source(), prefix_, p, b.downsample.out, out);
    } else {
      VLBIAS_CHECK(stride == 1 && in == out, InputError,
                   "'{}': block '{}{}' maps {} channels to {} with stride {} but has no "
                   "downsample ('{}{}.downsample.0.weight' is missing)",
                   file_.source(), prefix_, p, in, out, stride, prefix_, p);
    }
    return b;
  }

  Linear fc(std::size_t width) {
    const std::string w = prefix_ + "fc.weight";
    const auto& shape = file_.info(w).shape;
    Linear l;
    l.out = shape.size() == 2 && shape[0] > 0 ? shape[0] : 1;  // 1: let read() name it
    l.in = width;
    l.w = reader_.read(w, {l.out, width});
    l.b = reader_.read(prefix_ + "fc.bias", {l.out});
    return l;
  }

  WeightsReader& reader() { return reader_; }

 private:
  static WeightsContext context_of(const SafetensorsFile& file) {
    WeightsContext context{"a torchvision ResNet", {}};
    for (const std::string& name : file.names()) {
      // BatchNorm2d's training counter, which the forward does not use.
      if (name.ends_with("num_batches_tracked")) context.ignored.insert(name);
    }
    return context;
  }

  const SafetensorsFile& file_;
  std::string prefix_;
  WeightsReader reader_;
};

}  // namespace

ResNetModel ResNetModel::load(const SafetensorsFile& weights) {
  auto net = std::make_unique<Net>();
  net->prefix = resnet_prefix(weights);
  ResNetLoader l(weights, net->prefix);
  net->stem = l.conv("conv1", "bn1", 3, 7, 2, 3, true);
  net->bottleneck = l.has("layer1.0.conv3.weight");
  std::size_t width = net->stem.out;
  for (std::size_t layer = 0; layer < 4; ++layer) {
    const std::string name = "layer" + std::to_string(layer + 1);
    std::size_t count = 0;
    // Block 0 is always read (a missing one is named by the reader).
    while (count == 0 || l.has(name + "." + std::to_string(count) + ".conv1.weight")) {
      const std::size_t stride = layer > 0 && count == 0 ? 2 : 1;
      net->blocks.push_back(
          l.block(name + "." + std::to_string(count), width, stride, net->bottleneck));
      const encode_internal::ResNetBlock& b = net->blocks.back();
      width = net->bottleneck ? b.c3.out : b.c2.out;
      ++count;
    }
    net->counts[layer] = count;
  }
  net->fc = l.fc(width);
  l.reader().require_all_used();
  return ResNetModel(std::move(net));
}

}  // namespace vlbias
