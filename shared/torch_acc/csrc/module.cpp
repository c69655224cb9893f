// The Python extension torch_acc._C: device, memory, stream and generator
// queries for the torch.acc device module.
#include "acc.h"

#include <ATen/EmptyTensor.h>

#include <torch/csrc/Event.h>
#include <torch/csrc/Generator.h>
#include <torch/extension.h>

namespace torch_acc {
namespace {

c10::DeviceIndex checked(int64_t index) {
  const auto device = static_cast<c10::DeviceIndex>(index);
  check_device_index(device);
  return device;
}

c10::Event& event_of(const py::handle& obj) {
  TORCH_CHECK_TYPE(
      THPEvent_Check(obj.ptr()),
      "expected a torch.Event, got ",
      py::str(py::type::of(obj)).cast<std::string>());
  return reinterpret_cast<THPEvent*>(obj.ptr())->event;
}

} // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "acc: a PrivateUse1 device over host memory";
  m.def("_device_count", [] { return static_cast<int64_t>(kDeviceCount); });
  m.def("_get_device", [] { return static_cast<int64_t>(current_device()); });
  m.def("_set_device", [](int64_t index) { set_device(checked(index)); });
  m.def("_exchange_device", [](int64_t index) {
    const auto previous = current_device();
    if (index >= 0) {
      set_device(checked(index));
    }
    return static_cast<int64_t>(previous);
  });
  // The fast allocator of generated code: on the current device, as
  // torch._C._dynamo.guards._empty_strided_cuda is, or on device `index`
  // where generated code has no device guard (host mode).
  m.def(
      "_empty_strided",
      [](std::vector<int64_t> size,
         std::vector<int64_t> stride,
         c10::ScalarType dtype,
         std::optional<int64_t> index) {
        // Restores the current device even when allocation throws.
        struct DeviceSwitch {
          c10::DeviceIndex previous = current_device();
          bool switched = false;
          ~DeviceSwitch() {
            if (switched) {
              set_device(previous);
            }
          }
        } device_switch;
        if (index.has_value() && *index != device_switch.previous) {
          set_device(checked(*index));
          device_switch.switched = true;
        }
        return at::Tensor(at::detail::empty_strided_generic(
            size,
            stride,
            allocator(),
            c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
            dtype));
      },
      py::arg("size"),
      py::arg("stride"),
      py::arg("dtype"),
      py::arg("index") = py::none());
  m.def("_memory_allocated", [](int64_t index) { return memory_allocated(checked(index)); });
  m.def("_raw_stream", [](int64_t index) { return raw_stream(checked(index)); });
  // torch.Event.elapsed_time only accepts torch.Event itself, not subclasses.
  m.def("_elapsed_time", [](py::handle start, py::handle end) {
    return event_of(start).elapsedTime(event_of(end));
  });
  m.def("_default_generator", [](int64_t index) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(default_generator(checked(index))));
  });
}

} // namespace torch_acc
