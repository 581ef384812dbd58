// `vlbias convert-weights IN OUT.safetensors`: a PyTorch checkpoint (zip or legacy torch.save,
// or a torch.jit.save archive) read as data and written as safetensors (torch_checkpoint.h).
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/io/json.h"
#include "vlbias/io/tensor/torch_checkpoint.h"

namespace vlbias::cli_internal {

namespace {

struct ConvertArgs {
  std::string in, out, dtype = "keep";
};

WeightsDtype weights_dtype(const std::string& name) {
  if (name == "f32") return WeightsDtype::F32;
  if (name == "f16") return WeightsDtype::F16;
  return WeightsDtype::Keep;
}

}  // namespace

void add_convert_weights_command(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand(
      "convert-weights",
      "Convert PyTorch weights (.pth/.pt/.bin: torch.save in the zip or legacy format, or a\n"
      "torch.jit.save archive) to .safetensors without Python: the pickles are read as data by\n"
      "a restricted reader that refuses anything but tensors, storages, OrderedDicts and\n"
      "TorchScript module objects, and no code is run. Nested names are joined with '.'.\n"
      "Prints one JSON line: format, tensors, skipped non-tensor values, bytes written");
  cmd->add_option("input", args->in, "The checkpoint")->required();
  cmd->add_option("output", args->out, "The .safetensors file to write")->required();
  cmd->add_option("--dtype", args->dtype,
                  "keep (as stored), f32 or f16: the dtype of float tensors (integer and bool\n"
                  "tensors are kept); f16 rounds to nearest even, as Tensor.half()")
      ->check(CLI::IsMember({"keep", "f32", "f16"}))
      ->capture_default_str();
  cmd->callback([args] {
    VLBIAS_CHECK(std::filesystem::path(args->out).extension() == ".safetensors", UsageError,
                 "convert-weights writes safetensors: name the output '*.safetensors', not '{}'",
                 args->out);
    const TorchCheckpoint checkpoint = TorchCheckpoint::open(args->in);
    const WeightsDtype target = weights_dtype(args->dtype);
    write_torch_as_safetensors(checkpoint, args->out, target);
    std::uint64_t bytes = 0;
    for (const TorchTensorInfo& t : checkpoint.tensors()) {
      bytes += static_cast<std::uint64_t>(t.count) * dtype_size(converted_dtype(t.dtype, target));
    }
    Json summary = {{"input", args->in},
                    {"format", torch_format_name(checkpoint.format())},
                    {"output", args->out},
                    {"dtype", args->dtype},
                    {"tensors", checkpoint.tensors().size()},
                    {"skipped_values", checkpoint.ignored_leaves()},
                    {"tensor_bytes", bytes}};
    const std::string line = summary.dump() + "\n";
    std::fputs(line.c_str(), stdout);
  });
}

}  // namespace vlbias::cli_internal
