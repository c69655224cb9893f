// A minimal PrivateUse1 device over host memory, in one file: allocator,
// device guard, hooks, the kernels the dispatcher cannot do without, a boxed
// fallback that runs every other operator's CPU kernel, autocast's policies,
// and the functions the Python device module calls. The same extension serves
// the host-class and the GPU-class example: what makes a device one or the
// other is its Python.
#include <ATen/EmptyTensor.h>
#include <ATen/autocast_mode.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/extension.h>
#include <torch/library.h>

#include <cstdlib>

namespace {

constexpr c10::DeviceIndex kDeviceCount = 2;
constexpr auto kDevice = c10::DeviceType::PrivateUse1;
thread_local c10::DeviceIndex current = 0;

void set_device(c10::DeviceIndex index) {
  TORCH_CHECK_INDEX(index >= 0 && index < kDeviceCount, "no device ", int(index));
  current = index;
}

// --- Allocator: aligned host memory, labelled with the current device. ----
void release(void* ptr) {
  std::free(ptr);
}

struct Allocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* ptr = nbytes ? std::aligned_alloc(64, (nbytes + 63) / 64 * 64) : nullptr;
    TORCH_CHECK(ptr || !nbytes, "out of memory allocating ", nbytes, " bytes");
    return {ptr, ptr, &release, c10::Device(kDevice, current)};
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return &release;
  }
  void copy_data(void* dest, const void* src, size_t count) const override {
    default_copy_data(dest, src, count);
  }
} allocator;
REGISTER_ALLOCATOR(kDevice, &allocator);

// --- Device guard: the current device; one stream (0) per device. ----------
struct Guard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override {
    return kDevice;
  }
  c10::Device exchangeDevice(c10::Device d) const override {
    auto previous = getDevice();
    setDevice(d);
    return previous;
  }
  c10::Device getDevice() const override {
    return {kDevice, current};
  }
  void setDevice(c10::Device d) const override {
    if (d.index() >= 0) set_device(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0 && d.index() < kDeviceCount) current = d.index();
  }
  c10::Stream getStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  // torch.Stream(device=...) asks for a new stream: there is only the one.
  c10::Stream getNewStream(c10::Device d, int) const override {
    return getDefaultStream(d);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    return s;
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return kDeviceCount;
  }
  // Every kernel has finished when it returns: nothing to wait for.
  void synchronizeDevice(c10::DeviceIndex) const override {}
};
C10_REGISTER_GUARD_IMPL(PrivateUse1, Guard);

// --- Hooks: availability, devices, and resizing a storage's bytes. --------
struct Hooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override {
    return true;
  }
  bool isAvailable() const override {
    return true;
  }
  bool hasPrimaryContext(c10::DeviceIndex) const override {
    return true;
  }
  c10::DeviceIndex deviceCount() const override {
    return kDeviceCount;
  }
  c10::DeviceIndex getCurrentDevice() const override {
    return current;
  }
  void setCurrentDevice(c10::DeviceIndex d) const override {
    set_device(d);
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t nbytes) const override {
    at::native::resize_bytes_cpu(storage.unsafeGetStorageImpl(), nbytes);  // host memory
  }
};
const bool hooks_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new Hooks());
  return true;
}();

// --- Aliasing: a CPU tensor over a device tensor's memory, and back. ------
// The alias's storage holds a reference to the original, so the memory lives
// as long as either. It is resizable: a CPU kernel may resize an out=
// argument (see finish() below).
c10::Storage borrow(const c10::Storage& source, c10::Device device, c10::Allocator* alloc) {
  auto* keep = new c10::intrusive_ptr<c10::StorageImpl>(
      c10::intrusive_ptr<c10::StorageImpl>::reclaim_copy(source.unsafeGetStorageImpl()));
  c10::DataPtr data(source.mutable_data(), keep, [](void* ctx) {
    delete static_cast<c10::intrusive_ptr<c10::StorageImpl>*>(ctx);
  }, device);
  return c10::Storage(
      c10::Storage::use_byte_size_t(), source.nbytes(), std::move(data), alloc,
      /*resizable=*/true);
}

at::Tensor with_layout(c10::Storage storage, c10::DispatchKey key, const at::Tensor& like) {
  auto t = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(key), like.dtype());
  t.unsafeGetTensorImpl()->set_sizes_and_strides(
      like.sizes(), like.strides(), like.storage_offset());
  return t;
}

at::Tensor to_cpu_alias(const at::Tensor& t) {
  if (!t.defined() || !t.is_privateuseone()) return t;
  return with_layout(
      borrow(t.storage(), c10::kCPU, c10::GetAllocator(c10::kCPU)), c10::DispatchKey::CPU, t);
}

at::Tensor adopt(const at::Tensor& cpu, c10::Device device) {
  return with_layout(borrow(cpu.storage(), device, &allocator), c10::DispatchKey::PrivateUse1, cpu);
}

// --- Kernels: allocation, copies, and storage and view metadata. ----------
at::Tensor empty_memory_format(
    c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
    std::optional<c10::Layout>, std::optional<c10::Device> device,
    std::optional<bool>, std::optional<c10::MemoryFormat> memory_format) {
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_generic(
      size, &allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(
    c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
    std::optional<c10::Layout>, std::optional<c10::Device> device, std::optional<bool>) {
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_strided_generic(
      size, stride, &allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      c10::dtype_or_default(dtype));
}

// Every copy to, from or within the device is a copy between host memory.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  to_cpu_alias(dst).copy_(to_cpu_alias(self), non_blocking);
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

const at::Tensor& resize(
    const at::Tensor& self, c10::SymIntArrayRef size, std::optional<c10::MemoryFormat> format) {
  return at::native::resize_(self, C10_AS_INTARRAYREF_SLOW(size), format);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("resize_", resize);
  m.impl("set_.source_Storage", TORCH_FN(at::native::set_));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(at::native::set_storage_cpu_));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
}

// --- The boxed fallback: any other operator runs its CPU kernel. ----------
// Arguments become CPU aliases of the device memory (nothing is copied);
// results become device tensors again: an argument returned by an in-place
// or out= operator is that argument, a view of an argument is a device view
// of its storage, and a fresh result is adopted as a device tensor.
class FallbackCall {
 public:
  explicit FallbackCall(const c10::FunctionSchema& schema) : schema_(schema) {}

  void prepare(torch::jit::Stack* stack) {
    const auto& args = schema_.arguments();
    const size_t begin = stack->size() - args.size();
    for (size_t i = 0; i < args.size(); ++i) {
      auto& value = (*stack)[begin + i];
      const bool written = args[i].alias_info() && args[i].alias_info()->isWrite();
      if (value.isTensor()) {
        value = to_cpu(value.toTensor(), written);
      } else if (value.isTensorList()) {
        auto list = value.toTensorList().copy();
        for (size_t j = 0; j < list.size(); ++j) list.set(j, to_cpu(list.get(j), written));
        value = std::move(list);
      } else if (value.isDevice() && value.toDevice().is_privateuseone()) {
        device_ = value.toDevice();  // a factory's device= argument
        value = c10::Device(c10::kCPU);
      }
    }
  }

  void finish(torch::jit::Stack* stack) {
    // A CPU kernel may resize an out= argument, into new memory: follow it.
    for (auto& [dev, cpu] : written_) {
      if (cpu.storage().data() != dev.storage().data())
        dev.unsafeGetTensorImpl()->set_storage_keep_dtype(adopt(cpu, dev.device()).storage());
      dev.unsafeGetTensorImpl()->set_sizes_and_strides(
          cpu.sizes(), cpu.strides(), cpu.storage_offset());
    }
    const size_t n = schema_.returns().size();
    for (size_t i = stack->size() - n; i < stack->size(); ++i) {
      auto& value = (*stack)[i];
      if (value.isTensor()) {
        value = to_device(value.toTensor());
      } else if (value.isTensorList()) {
        std::vector<at::Tensor> out;
        for (const at::Tensor& t : value.toTensorList()) out.push_back(to_device(t));
        value = c10::List<at::Tensor>(out);
      }
    }
  }

 private:
  at::Tensor to_cpu(const at::Tensor& t, bool written) {
    if (!t.defined() || !t.is_privateuseone()) return t;
    if (!device_) device_ = t.device();
    at::Tensor cpu = to_cpu_alias(t);
    inputs_.emplace_back(t, cpu);
    if (written) written_.emplace_back(t, cpu);
    return cpu;
  }

  at::Tensor to_device(const at::Tensor& t) {
    if (!t.defined() || !t.is_cpu()) return t;
    for (auto& [dev, cpu] : written_)
      if (cpu.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) return dev;
    for (auto& [dev, cpu] : inputs_)
      if (cpu.storage().unsafeGetStorageImpl() == t.storage().unsafeGetStorageImpl())
        return with_layout(dev.storage(), c10::DispatchKey::PrivateUse1, t);  // a view
    return adopt(t, device_.value_or(c10::Device(kDevice, current)));
  }

  const c10::FunctionSchema& schema_;
  std::optional<c10::Device> device_;
  std::vector<std::pair<at::Tensor, at::Tensor>> inputs_, written_;  // (device, CPU alias)
};

void fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  FallbackCall call(op.schema());
  call.prepare(stack);
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
  call.finish(stack);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

// A reducing loss without a kernel of its own is computed through its out=
// kernel, which resizes the 0-dim result and warns; the CPU's functional
// kernel, through the fallback, does not take that detour.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mse_loss", torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

// Convolutions: ATen sends a PrivateUse1 device's convolution to
// convolution_overrideable, which has no CPU kernel for the fallback to run.
// Taken here instead, the CPU's convolution and its backward run on aliases;
// each result is made contiguous, the layout fake tensors promise for a
// PrivateUse1 device's convolution (the CPU's keeps channels-last).
void contiguous_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  fallback(op, stack);
  const size_t n = op.schema().returns().size();
  for (size_t i = stack->size() - n; i < stack->size(); ++i) {
    auto& value = (*stack)[i];
    if (value.isTensor() && value.toTensor().defined()) value = value.toTensor().contiguous();
  }
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution", torch::CppFunction::makeFromBoxedFunction<&contiguous_fallback>());
  m.impl(
      "convolution_backward", torch::CppFunction::makeFromBoxedFunction<&contiguous_fallback>());
}

}  // namespace

// --- Autocast: torch.autocast("mhost") enables the AutocastPrivateUse1 key. ---
// Every operator falls through it, unless ATen's policy lists (the ones CUDA
// registers) cast its arguments first: products and convolutions to the
// autocast dtype, ops that lose accuracy in it to float32.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

#define LOWER_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)

// The lists name ATen's types unqualified: they expand in its namespace.
namespace at {
namespace {
TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  AT_FORALL_LOWER_PRECISION_FP(LOWER_PRECISION_FP)
  AT_FORALL_FP32(FP32)
}
}  // namespace
}  // namespace at

// --- What the Python device module calls. ---------------------------------
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("device_count", [] { return int(kDeviceCount); });
  m.def("current_device", [] { return int(current); });
  m.def("set_device", [](int index) { set_device(index); });
  m.def("exchange_device", [](int index) {  // -1: leave the device as it is
    const int previous = current;
    if (index >= 0) set_device(index);
    return previous;
  });
}
