// The Python extension (torch_acc._C over host memory, torch_acc._C_cuda over
// CUDA memory): device, memory, stream and generator queries for the
// torch.acc device module, and the allocator generated code calls.
#include "acc.h"

#include <ATen/EmptyTensor.h>

#include <torch/csrc/Dtype.h>
#include <torch/csrc/Event.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/Storage.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/python_numbers.h>
#include <torch/python.h>

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

c10::SmallVector<int64_t, 8> int_sequence(PyObject* obj, const char* what) {
  TORCH_CHECK_TYPE(
      PyTuple_Check(obj) || PyList_Check(obj), "_empty_strided: ", what, " must be a tuple");
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
  PyObject** items = PySequence_Fast_ITEMS(obj);
  c10::SmallVector<int64_t, 8> out(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    out[i] = THPUtils_unpackLong(items[i]);
  }
  return out;
}

// _empty_strided(size, stride, dtype, index=None): the fast allocator of
// generated code, called once per buffer, so its arguments are parsed by hand
// as torch._C._dynamo.guards._empty_strided_cuda's are. Allocates on the
// current device, or on device `index` where generated code has no device
// guard (host mode).
PyObject* empty_strided(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  TORCH_CHECK(nargs == 3 || nargs == 4, "_empty_strided(size, stride, dtype, index=None)");
  const auto size = int_sequence(args[0], "size");
  const auto stride = int_sequence(args[1], "stride");
  TORCH_CHECK_TYPE(THPDtype_Check(args[2]), "_empty_strided: dtype must be a torch.dtype");
  const auto dtype = reinterpret_cast<THPDtype*>(args[2])->scalar_type;
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
  if (nargs == 4 && args[3] != Py_None) {
    const auto index = static_cast<c10::DeviceIndex>(THPUtils_unpackLong(args[3]));
    if (index != device_switch.previous) {
      set_device(checked(index));
      device_switch.switched = true;
    }
  }
  return THPVariable_Wrap(at::detail::empty_strided_generic(
      size, stride, allocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), dtype));
  END_HANDLE_TH_ERRORS
}

PyMethodDef empty_strided_def = {
    "_empty_strided",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(empty_strided)),
    METH_FASTCALL,
    "_empty_strided(size, stride, dtype, index=None) -> Tensor on acc"};

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "acc: a PrivateUse1 device over the memory of a peer device";
  m.def("_device_count", [] { return static_cast<int64_t>(device_count()); });
  m.def("_get_device", [] { return static_cast<int64_t>(current_device()); });
  m.def("_set_device", [](int64_t index) { set_device(checked(index)); });
  m.def("_exchange_device", [](int64_t index) {
    const auto previous = current_device();
    if (index >= 0) {
      set_device(checked(index));
    }
    return static_cast<int64_t>(previous);
  });
  m.add_object(
      "_empty_strided",
      py::reinterpret_steal<py::object>(PyCFunction_New(&empty_strided_def, nullptr)));
  m.def("_memory_allocated", [](int64_t index) { return memory_allocated(checked(index)); });
  m.def("_raw_stream", [](int64_t index) { return raw_stream(checked(index)); });
  // torch.Event.elapsed_time only accepts torch.Event itself, not subclasses.
  m.def("_elapsed_time", [](py::handle start, py::handle end) {
    return event_of(start).elapsedTime(event_of(end));
  });
  // Graph trees restore a graph pool's checkpoint through the peer's caching
  // allocator, which hands the live storages DataPtrs of its own, labelled as
  // peer memory: label them acc:index again (an acc tensor is only set on a
  // storage of acc memory). Takes StorageImpl addresses, as storage._cdata.
  m.def("_label_storages_as_acc", [](const std::vector<int64_t>& storages, int64_t index) {
    const c10::Device device(c10::DeviceType::PrivateUse1, checked(index));
    for (const auto address : storages) {
      reinterpret_cast<c10::StorageImpl*>(address)->mutable_data_ptr().unsafe_set_device(device);
    }
  });
  // Graph trees rebuild a replayed graph's outputs on their storages at every
  // replay: without an allocation and a set_() dispatch, as CUDA's own
  // _construct_CUDA_Tensor_From_Storage_And_Metadata does.
  m.def(
      "_tensor_from_storage",
      [](py::handle storage,
         py::handle dtype,
         const std::vector<int64_t>& size,
         const std::vector<int64_t>& stride,
         int64_t storage_offset) {
        TORCH_CHECK_TYPE(THPStorage_Check(storage.ptr()), "expected an UntypedStorage");
        TORCH_CHECK_TYPE(THPDtype_Check(dtype.ptr()), "expected a torch.dtype");
        c10::Storage data = THPStorage_Unpack(storage.ptr());
        TORCH_CHECK(
            data.device_type() == c10::DeviceType::PrivateUse1,
            "_tensor_from_storage: the storage is on ",
            data.device(),
            ", not acc");
        const auto meta =
            c10::scalarTypeToTypeMeta(reinterpret_cast<THPDtype*>(dtype.ptr())->scalar_type);
        at::Tensor tensor = at::detail::make_tensor_base<c10::TensorImpl>(
            std::move(data), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), meta);
        tensor.unsafeGetTensorImpl()->set_sizes_and_strides(size, stride, storage_offset);
        return py::reinterpret_steal<py::object>(THPVariable_Wrap(std::move(tensor)));
      });
  m.def("_settle_channels_last_convolutions", &settle_channels_last_convolutions);
  m.def("_channels_last_convolutions", &channels_last_convolutions_enabled);
  m.def("_default_generator", [](int64_t index) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(default_generator(checked(index))));
  });
}

} // namespace torch_acc
