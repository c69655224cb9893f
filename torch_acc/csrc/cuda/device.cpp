// acc over CUDA memory: acc:i is CUDA device i under another name. Memory
// comes from CUDA's caching allocator, the device guard forwards to CUDA's
// (acc streams and events are CUDA streams and events), and the generators
// are CUDA's own. Built only with TORCH_ACC_CUDA.
#include "../acc.h"

#include <ATen/Context.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

namespace torch_acc {
namespace {

c10::Device as_cuda(c10::Device device) {
  return c10::Device(c10::kCUDA, device.index());
}

c10::Device as_acc(c10::Device device) {
  return c10::Device(c10::DeviceType::PrivateUse1, device.index());
}

c10::Stream as_cuda(c10::Stream stream) {
  return c10::Stream(c10::Stream::UNSAFE, as_cuda(stream.device()), stream.id());
}

c10::Stream as_acc(c10::Stream stream) {
  return c10::Stream(c10::Stream::UNSAFE, as_acc(stream.device()), stream.id());
}

const c10::impl::DeviceGuardImplInterface& cuda_guard() {
  static const auto* impl = c10::impl::getDeviceGuardImpl(c10::kCUDA);
  return *impl;
}

c10::DeviceAllocator& cuda_allocator() {
  // The first acc tensor of a process may come before any CUDA one: CUDA's
  // lazy initialization (its caching allocator among it) runs here then, as
  // it would for a first cuda tensor. call_once inside; cheap afterwards.
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
  return *c10::cuda::CUDACachingAllocator::get();
}

// CUDA's caching allocator, with the blocks labelled as acc memory: the same
// fast path and the same pool as cuda tensors. A DeviceAllocator, as
// torch.accelerator's memory functions require of the accelerator's
// allocator (AOTInductor's packaging calls torch.accelerator.empty_cache()):
// its cache, streams and statistics are CUDA's.
struct AccAllocator final : c10::DeviceAllocator {
  c10::DataPtr allocate(size_t nbytes) override {
    c10::DataPtr data = cuda_allocator().allocate(nbytes);
    data.unsafe_set_device(as_acc(data.device()));
    return data;
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return cuda_allocator().raw_deleter();
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    cuda_allocator().copy_data(dest, src, count);
  }

  bool initialized() override {
    return cuda_allocator().initialized();
  }

  void emptyCache(c10::MempoolId_t mempool_id) override {
    cuda_allocator().emptyCache(mempool_id);
  }

  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override {
    cuda_allocator().recordStream(ptr, as_cuda(stream));
  }

  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    return cuda_allocator().getDeviceStats(device);
  }

  void resetAccumulatedStats(c10::DeviceIndex device) override {
    cuda_allocator().resetAccumulatedStats(device);
  }

  void resetPeakStats(c10::DeviceIndex device) override {
    cuda_allocator().resetPeakStats(device);
  }

  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    return cuda_allocator().getMemoryInfo(device);
  }
};

AccAllocator global_allocator;

struct AccGuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override {
    return c10::DeviceType::PrivateUse1;
  }
  c10::Device exchangeDevice(c10::Device device) const override {
    return as_acc(cuda_guard().exchangeDevice(as_cuda(device)));
  }
  c10::Device getDevice() const override {
    return as_acc(cuda_guard().getDevice());
  }
  void setDevice(c10::Device device) const override {
    cuda_guard().setDevice(as_cuda(device));
  }
  void uncheckedSetDevice(c10::Device device) const noexcept override {
    cuda_guard().uncheckedSetDevice(as_cuda(device));
  }
  c10::Stream getStream(c10::Device device) const override {
    return as_acc(cuda_guard().getStream(as_cuda(device)));
  }
  c10::Stream getDefaultStream(c10::Device device) const override {
    return as_acc(cuda_guard().getDefaultStream(as_cuda(device)));
  }
  c10::Stream getNewStream(c10::Device device, int priority = 0) const override {
    return as_acc(cuda_guard().getNewStream(as_cuda(device), priority));
  }
  c10::Stream getStreamFromGlobalPool(c10::Device device, bool high_priority = false)
      const override {
    return as_acc(cuda_guard().getStreamFromGlobalPool(as_cuda(device), high_priority));
  }
  c10::Stream exchangeStream(c10::Stream stream) const override {
    return as_acc(cuda_guard().exchangeStream(as_cuda(stream)));
  }
  void* getStreamNativeHandle(const c10::Stream stream) const override {
    return cuda_guard().getStreamNativeHandle(as_cuda(stream));
  }
  void destroyEvent(void* event, const c10::DeviceIndex device_index) const noexcept override {
    cuda_guard().destroyEvent(event, device_index);
  }
  void record(
      void** event,
      const c10::Stream& stream,
      const c10::DeviceIndex device_index,
      const c10::EventFlag flag) const override {
    cuda_guard().record(event, as_cuda(stream), device_index, flag);
  }
  void block(void* event, const c10::Stream& stream) const override {
    cuda_guard().block(event, as_cuda(stream));
  }
  bool queryEvent(void* event) const override {
    return cuda_guard().queryEvent(event);
  }
  void synchronizeEvent(void* event) const override {
    cuda_guard().synchronizeEvent(event);
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex device_index)
      const override {
    return cuda_guard().elapsedTime(start, end, device_index);
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return cuda_guard().deviceCount();
  }
  bool queryStream(const c10::Stream& stream) const override {
    return cuda_guard().queryStream(as_cuda(stream));
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    cuda_guard().synchronizeStream(as_cuda(stream));
  }
  void synchronizeDevice(const c10::DeviceIndex device_index) const override {
    cuda_guard().synchronizeDevice(device_index);
  }
  void recordDataPtrOnStream(const c10::DataPtr& data_ptr, const c10::Stream& stream)
      const override {
    cuda_guard().recordDataPtrOnStream(data_ptr, as_cuda(stream));
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, AccGuardImpl);

struct AccHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override {
    return true;
  }
  bool isAvailable() const override {
    return device_count() > 0;
  }
  bool hasPrimaryContext(c10::DeviceIndex device_index) const override {
    return at::detail::getCUDAHooks().hasPrimaryContext(device_index);
  }
  c10::DeviceIndex deviceCount() const override {
    return device_count();
  }
  void setCurrentDevice(c10::DeviceIndex device) const override {
    set_device(device);
  }
  c10::DeviceIndex getCurrentDevice() const override {
    return current_device();
  }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    return c10::cuda::ExchangeDevice(device);
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override {
    return c10::cuda::MaybeExchangeDevice(device);
  }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device_index) const override {
    return default_generator(device_index < 0 ? current_device() : device_index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex device_index = -1) const override {
    return at::cuda::detail::createCUDAGenerator(
        device_index < 0 ? current_device() : device_index);
  }
  at::Device getDeviceFromPtr(void* data) const override {
    auto index = device_of_pointer(data);
    TORCH_CHECK(index.has_value(), "acc: pointer ", data, " is not CUDA device memory");
    return c10::Device(c10::DeviceType::PrivateUse1, *index);
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
    TORCH_CHECK(impl->resizable(), "acc: trying to resize storage that is not resizable");
    c10::DataPtr data = global_allocator.allocate(newsize);
    const size_t keep = std::min(newsize, impl->nbytes());
    if (keep > 0) {
      C10_CUDA_CHECK(cudaMemcpyAsync(
          data.get(),
          impl->data(),
          keep,
          cudaMemcpyDeviceToDevice,
          c10::cuda::getCurrentCUDAStream()));
    }
    impl->set_data_ptr_noswap(std::move(data));
    impl->set_nbytes(newsize);
  }
};

bool hooks_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new AccHooks());
  return true;
}();

} // namespace

c10::DeviceIndex device_count() {
  return c10::cuda::device_count();
}

void check_device_index(c10::DeviceIndex index) {
  TORCH_CHECK_INDEX(
      index >= 0 && index < device_count(),
      "acc: device index ",
      static_cast<int>(index),
      " is out of range; there are ",
      static_cast<int>(device_count()),
      " acc devices");
}

c10::DeviceIndex current_device() {
  return c10::cuda::current_device();
}

void set_device(c10::DeviceIndex index) {
  check_device_index(index);
  c10::cuda::set_device(index);
}

int64_t raw_stream(c10::DeviceIndex index) {
  return reinterpret_cast<int64_t>(c10::cuda::getCurrentCUDAStream(index).stream());
}

c10::Allocator* allocator() {
  return &global_allocator;
}

int64_t memory_allocated(c10::DeviceIndex index) {
  // The pool is shared with cuda tensors on the same GPU.
  return c10::cuda::CUDACachingAllocator::getDeviceStats(index)
      .allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)]
      .current;
}

std::optional<c10::DeviceIndex> device_of_pointer(const void* ptr) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess ||
      attributes.type != cudaMemoryTypeDevice) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  return static_cast<c10::DeviceIndex>(attributes.device);
}

c10::Device peer_device(c10::DeviceIndex index) {
  return c10::Device(c10::kCUDA, index);
}

c10::Allocator* peer_allocator() {
  return &cuda_allocator();
}

const at::Generator& default_generator(c10::DeviceIndex index) {
  check_device_index(index);
  return at::cuda::detail::getDefaultCUDAGenerator(index);
}

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &global_allocator);

} // namespace torch_acc
