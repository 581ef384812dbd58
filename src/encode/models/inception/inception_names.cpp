// The FID Inception's weights under other names than pytorch-fid's: a TorchScript port of the
// TF graph (clean-fid's and StyleGAN's inception-2015-12-05.pt) holds the same 94 convolutions,
// batch norms and fc layer in the graph's order, named after the graph (layers.conv,
// layers.mixed.tower.conv_1, ...). They are matched to pytorch-fid's names by ORDER (the
// tensors' order in the file) and checked by SHAPE when the network loads, so a file whose
// order differs is refused at the first layer that does not fit, never silently mis-wired.
#include <algorithm>
#include <string>
#include <vector>

#include "inception_model_internal.h"
#include "models/image_model_internal.h"
#include "vlbias/core/error.h"

namespace vlbias::encode_internal {

namespace {

void add_block(std::vector<std::string>& out, const std::string& block,
               const std::vector<std::string>& branches) {
  for (const std::string& b : branches) out.push_back(block + "." + b);
}

// The last component of a dotted name, lower-case.
std::string leaf(const std::string& name) {
  std::string l = name.substr(name.rfind('.') + 1);
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  return l;
}

}  // namespace

std::vector<std::string> inception_conv_prefixes() {
  std::vector<std::string> out = {"Conv2d_1a_3x3", "Conv2d_2a_3x3", "Conv2d_2b_3x3",
                                  "Conv2d_3b_1x1", "Conv2d_4a_3x3"};
  const std::vector<std::string> a = {"branch1x1",      "branch5x5_1",    "branch5x5_2",
                                      "branch3x3dbl_1", "branch3x3dbl_2", "branch3x3dbl_3",
                                      "branch_pool"};
  const std::vector<std::string> c = {
      "branch1x1",      "branch7x7_1",    "branch7x7_2",    "branch7x7_3",    "branch7x7dbl_1",
      "branch7x7dbl_2", "branch7x7dbl_3", "branch7x7dbl_4", "branch7x7dbl_5", "branch_pool"};
  const std::vector<std::string> e = {"branch1x1",       "branch3x3_1",     "branch3x3_2a",
                                      "branch3x3_2b",    "branch3x3dbl_1",  "branch3x3dbl_2",
                                      "branch3x3dbl_3a", "branch3x3dbl_3b", "branch_pool"};
  for (const char* b : {"Mixed_5b", "Mixed_5c", "Mixed_5d"}) add_block(out, b, a);
  add_block(out, "Mixed_6a", {"branch3x3", "branch3x3dbl_1", "branch3x3dbl_2", "branch3x3dbl_3"});
  for (const char* b : {"Mixed_6b", "Mixed_6c", "Mixed_6d", "Mixed_6e"}) add_block(out, b, c);
  add_block(out, "Mixed_7a",
            {"branch3x3_1", "branch3x3_2", "branch7x7x3_1", "branch7x7x3_2", "branch7x7x3_3",
             "branch7x7x3_4"});
  for (const char* b : {"Mixed_7b", "Mixed_7c"}) add_block(out, b, e);
  return out;
}

std::size_t inception_conv_count() {
  return inception_conv_prefixes().size();
}

InceptionNames inception_names_by_order(const SafetensorsFile& file) {
  // The file's tensors in the order they were written (their data offsets).
  std::vector<std::string> order = file.names();
  std::sort(order.begin(), order.end(), [&](const std::string& x, const std::string& y) {
    return file.info(x).begin < file.info(y).begin;
  });
  struct Group {
    std::string weight;
    std::vector<std::string> vectors;  // the 1-D tensors after it
  };
  std::vector<Group> convs, dense;
  std::vector<Group>* last = nullptr;
  for (const std::string& name : order) {
    const std::size_t rank = file.info(name).shape.size();
    if (rank == 4 || rank == 2) {
      last = rank == 4 ? &convs : &dense;
      last->push_back({name, {}});
    } else if (rank == 1 && last != nullptr && leaf(name) != "num_batches_tracked") {
      last->back().vectors.push_back(name);
    }
  }
  const std::vector<std::string> prefixes = inception_conv_prefixes();
  VLBIAS_CHECK(convs.size() == prefixes.size() && dense.size() <= 1, InputError,
               "'{}' holds {} convolution kernels and {} matrices; the FID Inception-v3 has {} "
               "convolutions and at most one fc layer (its names are not pytorch-fid's, so the "
               "layers are matched by order)",
               file.source(), convs.size(), dense.size(), prefixes.size());
  InceptionNames names;
  for (std::size_t i = 0; i < convs.size(); ++i) {
    const std::string& p = prefixes[i];
    names[p + ".conv.weight"] = convs[i].weight;
    for (const std::string& v : convs[i].vectors) {
      const std::string l = leaf(v);
      const std::string role = l.find("mean") != std::string::npos  ? "running_mean"
                               : l.find("var") != std::string::npos ? "running_var"
                               : l == "beta" || l == "bias"         ? "bias"
                               : l == "gamma" || l == "weight"      ? "weight"
                                                                    : "";
      VLBIAS_CHECK(!role.empty(), InputError,
                   "'{}': tensor '{}' follows the convolution '{}' but is not a batch norm's "
                   "mean, var, beta/bias or gamma/weight",
                   file.source(), v, convs[i].weight);
      names[p + ".bn." + role] = v;
    }
    // TF's batch norm without scale (gamma = 1): no weight tensor.
    if (names.count(p + ".bn.weight") == 0) names[p + ".bn.weight"] = "";
  }
  if (!dense.empty()) {
    names["fc.weight"] = dense[0].weight;
    if (!dense[0].vectors.empty()) names["fc.bias"] = dense[0].vectors[0];
  }
  return names;
}

}  // namespace vlbias::encode_internal
