// AOTInductor packages on acc: the model runner libtorch's package loader
// (AOTIModelPackageLoader) creates for a package whose device key is "acc".
//
// libtorch registers runners for its own devices only; a package compiled for
// acc fails to load with "Unsupported device key found: acc" until a runner is
// registered under acc's name (torch::inductor::RegisterAOTIModelRunner). The
// runner is libtorch's own: it loads the model's shared library, and the
// proxy executor it creates from the package's extern-kernel nodes calls the
// ATen operators the model has no C shim for through the dispatcher, where
// acc's kernels and its boxed fallback serve them. acc's device index and
// streams reach the model through its device string and the stream handle of
// run(); the generated model maps them (AOTInductor's codegen for a
// PrivateUse1 device).
#include "acc.h"

#include <c10/core/DeviceGuard.h>
#include <torch/csrc/inductor/aoti_runner/model_container_runner.h>

#include <memory>
#include <string>
#include <vector>

namespace torch_acc {
namespace {

class AccModelContainerRunner : public torch::inductor::AOTIModelContainerRunner {
 public:
  AccModelContainerRunner(
      const std::string& model_so_path,
      size_t num_models,
      const std::string& device_str,
      const std::string& bin_dir,
      bool run_single_threaded)
      : AOTIModelContainerRunner(
            model_so_path, num_models, device_str, bin_dir, run_single_threaded) {}

 protected:
  // As libtorch's CUDA runner does with CUDA's: without a stream from the
  // caller, the model runs on acc's current stream (over CUDA memory a CUDA
  // stream; in host mode a handle the model, built without a GPU runtime,
  // does not read).
  std::vector<at::Tensor> run_impl(
      std::vector<AtenTensorHandle>& input_handles,
      void* stream_handle) override {
    if (stream_handle == nullptr) {
      stream_handle = reinterpret_cast<void*>(raw_stream(current_device()));
    }
    return AOTIModelContainerRunner::run_impl(input_handles, stream_handle);
  }
};

std::unique_ptr<torch::inductor::AOTIModelContainerRunner> create_runner(
    const std::string& model_so_path,
    size_t num_models,
    const std::string& device_str,
    const std::string& bin_dir,
    const bool run_single_threaded) {
  // The model loads its constants while it is constructed, onto the device
  // its device string names ("acc" or "acc:<index>"): that device is current
  // meanwhile, so that the host blobs it wraps are that device's memory.
  const c10::Device device(device_str);
  TORCH_CHECK(
      device.type() == c10::DeviceType::PrivateUse1,
      "acc's AOTInductor runner got the device ",
      device_str);
  c10::OptionalDeviceGuard guard;
  if (device.has_index()) {
    guard.reset_device(device);
  }
  return std::make_unique<AccModelContainerRunner>(
      model_so_path, num_models, device_str, bin_dir, run_single_threaded);
}

// At load of the extension (import torch_acc), before any package is loaded.
const torch::inductor::RegisterAOTIModelRunner register_runner("acc", &create_runner);

} // namespace
} // namespace torch_acc
