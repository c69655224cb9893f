// The Python extension torch_sealed._C: the device queries behind torch.sealed,
// and the guard generated code enters around each of sealed's kernels.
#include "sealed.h"

#include <torch/csrc/autograd/python_variable.h>
#include <torch/python.h>

#include <memory>

namespace torch_sealed {
namespace {

// `with torch.sealed._unsealed(*args):` opens the memory of the sealed tensors
// among `args` for the block; other arguments (sizes, CPU tensors) are ignored.
class PyUnsealed {
 public:
  explicit PyUnsealed(const py::args& args) {
    for (const auto& arg : args) {
      if (THPVariable_Check(arg.ptr())) {
        tensors_.push_back(THPVariable_Unpack(arg.ptr()));
      }
    }
  }

  PyUnsealed& enter() {
    open_ = std::make_unique<Unsealed>();
    for (const auto& tensor : tensors_) {
      open_->open(tensor);
    }
    return *this;
  }

  void exit(const py::args& /*exc_info*/) {
    open_.reset();
  }

 private:
  std::vector<at::Tensor> tensors_;
  std::unique_ptr<Unsealed> open_;
};

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "sealed: a host PrivateUse1 device whose memory is sealed outside its kernels";
  m.def("_device_count", [] { return static_cast<int64_t>(kDeviceCount); });
  m.def("_get_device", [] { return static_cast<int64_t>(current_device()); });
  m.def("_set_device", [](int64_t index) {
    const auto device = static_cast<c10::DeviceIndex>(index);
    check_device_index(device);
    set_device(device);
  });
  m.def(
      "_is_sealed",
      [](const at::Tensor& tensor) {
        return tensor.has_storage() && tensor.storage().data() != nullptr &&
            is_sealed(tensor.storage().data());
      },
      "Whether the tensor's memory is sealed now (not open for a kernel).");
  py::class_<PyUnsealed>(m, "_unsealed")
      .def(py::init<const py::args&>())
      .def("__enter__", &PyUnsealed::enter, py::return_value_policy::reference)
      .def("__exit__", &PyUnsealed::exit);
}

} // namespace torch_sealed
