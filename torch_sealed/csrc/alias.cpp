// CPU views of sealed memory, for the CPU kernels the backend runs while the
// memory is open, and sealed copies of what those kernels return.
#include "sealed.h"

#include <c10/core/DeviceGuard.h>

#include <cstring>

namespace torch_sealed {
namespace {

using StorageRef = c10::intrusive_ptr<c10::StorageImpl>;

void release_storage_ref(void* ctx) {
  delete static_cast<StorageRef*>(ctx);
}

} // namespace

at::Tensor with_layout(c10::Storage storage, c10::DispatchKey key, const at::Tensor& like) {
  auto out = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(key), like.dtype());
  out.unsafeGetTensorImpl()->set_sizes_and_strides(
      like.sizes(), like.strides(), like.storage_offset());
  return out;
}

at::Tensor cpu_alias(const at::Tensor& sealed) {
  // A CPU storage over the same memory that keeps the sealed storage alive.
  // It is resizable: a CPU kernel that grows an out= argument moves it to
  // CPU memory, which the fallback then copies back into sealed memory.
  c10::StorageImpl* impl = sealed.storage().unsafeGetStorageImpl();
  auto* keep = new StorageRef(StorageRef::reclaim_copy(impl));
  c10::DataPtr data(impl->mutable_data(), keep, &release_storage_ref, c10::Device(c10::kCPU));
  c10::Storage storage(
      c10::Storage::use_byte_size_t(),
      impl->nbytes(),
      std::move(data),
      c10::GetAllocator(c10::kCPU),
      /*resizable=*/true);
  return with_layout(std::move(storage), c10::DispatchKey::CPU, sealed);
}

at::Tensor sealed_copy(const at::Tensor& cpu, c10::Device device) {
  const c10::Storage& source = cpu.storage();
  const size_t nbytes = source.nbytes();
  const c10::DeviceGuard guard(device);
  c10::Storage storage(
      c10::Storage::use_byte_size_t(), nbytes, allocator(), /*resizable=*/true);
  if (nbytes > 0) {
    Unsealed open;
    open.open(storage.data());
    std::memcpy(storage.mutable_data(), source.data(), nbytes);
  }
  return with_layout(std::move(storage), c10::DispatchKey::PrivateUse1, cpu);
}

} // namespace torch_sealed
