// torch_sealed: a PrivateUse1 device unlike acc, written to test that the
// RFCs hold for host devices with guarded memory.
//
// - host-class: its compiled kernels are Inductor's C++ ones;
// - no streams and no events;
// - sealed memory: every allocation is its own mapping, kept PROT_NONE except
//   while one of the backend's own kernels runs on it. Code that touches it
//   at any other time (a generated wrapper that forgot to unseal it, say)
//   faults at once instead of reading memory it must not.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>
#include <c10/core/Device.h>

#include <vector>

namespace torch_sealed {

constexpr c10::DeviceIndex kDeviceCount = 2;

// The current device (device.cpp).
c10::DeviceIndex current_device();
void set_device(c10::DeviceIndex index);
void check_device_index(c10::DeviceIndex index);

// Sealed memory (memory.cpp).
c10::Allocator* allocator();
// Whether `ptr` points into sealed memory that is currently sealed.
bool is_sealed(const void* ptr);
// Replaces the memory of `storage` by a sealed allocation of `nbytes`,
// keeping the first bytes.
void resize_storage(c10::StorageImpl* storage, size_t nbytes);

// Opens the memory of sealed storages for the host while it lives, and
// seals it again when it ends, exceptions included. Openings nest: memory
// stays open while any opener holds it.
class Unsealed {
 public:
  Unsealed() = default;
  Unsealed(const Unsealed&) = delete;
  Unsealed& operator=(const Unsealed&) = delete;
  ~Unsealed();

  // Opens the memory `data` of a sealed storage (a no-op for null or
  // memory sealed does not own).
  void open(const void* data);
  void open(const at::Tensor& tensor);

 private:
  std::vector<const void*> opened_;
};

// A CPU tensor over the memory of a sealed tensor (open it first), and a
// sealed tensor with the layout of `like` over sealed storage.
at::Tensor cpu_alias(const at::Tensor& sealed);
at::Tensor with_layout(c10::Storage storage, c10::DispatchKey key, const at::Tensor& like);
// A sealed copy of a CPU tensor: fresh sealed storage with the CPU
// storage's bytes, the tensor's layout.
at::Tensor sealed_copy(const at::Tensor& cpu, c10::Device device);

} // namespace torch_sealed
