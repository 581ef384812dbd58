// Model weights by name with their checks: see include/vlbias/nn/weights.h.
#include "vlbias/nn/weights.h"

#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vlbias/core/error.h"

namespace vlbias {

WeightsReader::WeightsReader(const SafetensorsFile& file, WeightsContext context)
    : file_(file), context_(std::move(context)) {}

std::vector<float> WeightsReader::read(const std::string& name,
                                       const std::vector<std::size_t>& shape) {
  VLBIAS_CHECK(file_.contains(name), InputError, "'{}' has no tensor '{}'; expected it for {}",
               file_.source(), name, context_.model);
  const SafetensorsTensorInfo& t = file_.info(name);
  VLBIAS_CHECK(t.dtype == SafetensorsDtype::F32 || t.dtype == SafetensorsDtype::F16 ||
                   t.dtype == SafetensorsDtype::BF16,
               InputError, "'{}': tensor '{}' has dtype {}; expected F32, F16 or BF16",
               file_.source(), name, dtype_name(t.dtype));
  VLBIAS_CHECK(t.shape == shape, InputError,
               "'{}': tensor '{}' has shape [{}]; expected [{}] for {}", file_.source(), name,
               fmt::join(t.shape, ", "), fmt::join(shape, ", "), context_.model);
  used_.insert(name);
  std::vector<float> out = file_.read_floats(name, NonFinite::Reject);  // names a NaN / inf
  file_.release_pages(name);
  return out;
}

float WeightsReader::scalar(const std::string& name) {
  VLBIAS_CHECK(file_.contains(name), InputError, "'{}' has no tensor '{}'; expected it for {}",
               file_.source(), name, context_.model);
  const SafetensorsTensorInfo& t = file_.info(name);
  const bool scalar_shape = t.shape.empty() || (t.shape.size() == 1 && t.shape[0] == 1);
  VLBIAS_CHECK(scalar_shape, InputError,
               "'{}': tensor '{}' has shape [{}]; expected a scalar ([] or [1])", file_.source(),
               name, fmt::join(t.shape, ", "));
  return read(name, t.shape).at(0);
}

LayerNormWeights WeightsReader::layer_norm(const std::string& prefix, std::size_t width) {
  LayerNormWeights ln;
  ln.gamma = read(prefix + ".weight", {width});
  ln.beta = read(prefix + ".bias", {width});
  return ln;
}

Linear WeightsReader::linear(const std::string& prefix, std::size_t out, std::size_t in,
                             bool bias) {
  Linear l;
  l.out = out;
  l.in = in;
  l.w = read(prefix + ".weight", {out, in});
  if (bias) l.b = read(prefix + ".bias", {out});
  return l;
}

Linear WeightsReader::stacked_linear(const std::vector<std::string>& prefixes, std::size_t out,
                                     std::size_t in) {
  Linear stacked;
  stacked.out = prefixes.size() * out;
  stacked.in = in;
  stacked.w.reserve(stacked.out * in);
  stacked.b.reserve(stacked.out);
  for (const std::string& prefix : prefixes) {
    const Linear part = linear(prefix, out, in);
    stacked.w.insert(stacked.w.end(), part.w.begin(), part.w.end());
    stacked.b.insert(stacked.b.end(), part.b.begin(), part.b.end());
  }
  return stacked;
}

void WeightsReader::require_all_used() const {
  for (const std::string& name : file_.names()) {
    VLBIAS_CHECK(used_.count(name) > 0 || context_.ignored.count(name) > 0, InputError,
                 "'{}' holds tensor '{}', which {} does not have; the config and the weights "
                 "disagree, or the model has parts vlbias does not implement",
                 file_.source(), name, context_.model);
  }
}

}  // namespace vlbias
