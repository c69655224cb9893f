// torch_acc: a PrivateUse1 device whose memory belongs to a peer device, the
// CPU (host memory, built by default) or CUDA (built with TORCH_ACC_CUDA).
//
// Every operator either has an explicit kernel here (allocation, copies,
// storage and view metadata) or runs on the peer through the boxed fallback,
// which aliases the acc memory as peer tensors instead of copying it.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>
#include <c10/core/Device.h>

namespace torch_acc {

#ifdef TORCH_ACC_CUDA
constexpr c10::DeviceType kPeerType = c10::DeviceType::CUDA;
constexpr c10::DispatchKey kPeerKey = c10::DispatchKey::CUDA;
#else
constexpr c10::DeviceType kPeerType = c10::DeviceType::CPU;
constexpr c10::DispatchKey kPeerKey = c10::DispatchKey::CPU;
constexpr c10::DeviceIndex kDeviceCount = 2;
#endif

// Device state (host/guard.cpp, cuda/device.cpp).
c10::DeviceIndex device_count();
c10::DeviceIndex current_device();
void set_device(c10::DeviceIndex index);
void check_device_index(c10::DeviceIndex index);
int64_t raw_stream(c10::DeviceIndex index);

// Memory (host/allocator.cpp, cuda/device.cpp).
c10::Allocator* allocator();
int64_t memory_allocated(c10::DeviceIndex index);
std::optional<c10::DeviceIndex> device_of_pointer(const void* ptr);

// The peer device an acc device's memory is aliased on, and its allocator.
c10::Device peer_device(c10::DeviceIndex index);
c10::Allocator* peer_allocator();

// Random numbers (host/hooks.cpp, cuda/device.cpp).
const at::Generator& default_generator(c10::DeviceIndex index);

// Aliasing between acc and peer tensors (alias.cpp).
at::Tensor peer_alias(const at::Tensor& acc);
// `t` itself unless it is an acc tensor, whose peer alias it is then.
at::Tensor as_peer(const at::Tensor& t);
at::Tensor adopt_as_acc(const at::Tensor& peer, c10::Device device);
// After a peer kernel wrote through `peer` (an alias of `acc`): follow a
// resize into new memory, or new sizes and strides.
void sync_from_peer_alias(const at::Tensor& acc, const at::Tensor& peer);

// Whether acc's convolutions keep channels-last (kernels.cpp), settled by the
// first call for the rest of the process, which is answered: acc's
// DeviceInterface declares BackendFeature.CHANNELS_LAST_CONVOLUTION by it, so
// that fake tensors and the kernels agree on every result's layout.
bool settle_channels_last_convolutions(bool keep);
// Contiguous while unsettled.
bool channels_last_convolutions_enabled();

} // namespace torch_acc
