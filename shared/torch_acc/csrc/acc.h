// torch_acc: a PrivateUse1 device whose memory is host memory.
//
// Every operator either has an explicit kernel here (allocation, copies,
// storage and view metadata) or runs on the CPU through the boxed fallback,
// which aliases the acc memory as CPU tensors instead of copying it.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/Allocator.h>
#include <c10/core/Device.h>

namespace torch_acc {

constexpr c10::DeviceIndex kDeviceCount = 2;

// Device state (guard.cpp).
c10::DeviceIndex current_device();
void set_device(c10::DeviceIndex index);
void check_device_index(c10::DeviceIndex index);
int64_t raw_stream(c10::DeviceIndex index);

// Memory (allocator.cpp).
c10::Allocator* allocator();
int64_t memory_allocated(c10::DeviceIndex index);
std::optional<c10::DeviceIndex> device_of_pointer(const void* ptr);

// Random numbers (hooks.cpp).
const at::Generator& default_generator(c10::DeviceIndex index);

// Aliasing between acc and CPU tensors (alias.cpp).
at::Tensor cpu_alias(const at::Tensor& acc);
at::Tensor adopt_as_acc(const at::Tensor& cpu, c10::Device device);
// After a CPU kernel wrote through `cpu` (an alias of `acc`): follow a resize
// into new memory, or new sizes and strides.
void sync_from_cpu_alias(const at::Tensor& acc, const at::Tensor& cpu);

} // namespace torch_acc
