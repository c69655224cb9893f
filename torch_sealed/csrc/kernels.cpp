// The operators sealed implements itself: allocation, copies, and storage and
// view metadata (which never touch the memory). Everything else runs through
// the fallback (fallback.cpp).
#include "sealed.h"

#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

namespace torch_sealed {
namespace {

constexpr c10::DispatchKeySet kSealedKeys(c10::DispatchKey::PrivateUse1);

void check_factory_options(
    std::optional<c10::Layout> layout,
    std::optional<c10::Device> device,
    std::optional<bool> pin_memory) {
  TORCH_CHECK(
      c10::layout_or_default(layout) == c10::Layout::Strided,
      "sealed: only strided tensors are supported");
  TORCH_CHECK(!c10::pinned_memory_or_default(pin_memory), "sealed: pinned memory is CPU-only");
  TORCH_CHECK(c10::device_or_default(device).is_privateuseone(), "sealed: expected a sealed device");
}

at::Tensor empty_memory_format(
    c10::IntArrayRef size,
    std::optional<c10::ScalarType> dtype,
    std::optional<c10::Layout> layout,
    std::optional<c10::Device> device,
    std::optional<bool> pin_memory,
    std::optional<c10::MemoryFormat> memory_format) {
  check_factory_options(layout, device, pin_memory);
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_generic(
      size, allocator(), kSealedKeys, c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(
    c10::IntArrayRef size,
    c10::IntArrayRef stride,
    std::optional<c10::ScalarType> dtype,
    std::optional<c10::Layout> layout,
    std::optional<c10::Device> device,
    std::optional<bool> pin_memory) {
  check_factory_options(layout, device, pin_memory);
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_strided_generic(
      size, stride, allocator(), kSealedKeys, c10::dtype_or_default(dtype));
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  const auto reachable = [](const at::Tensor& t) { return t.is_privateuseone() || t.is_cpu(); };
  TORCH_CHECK(reachable(self), "sealed: cannot copy from ", self.device());
  TORCH_CHECK(reachable(dst), "sealed: cannot copy to ", dst.device());
  const auto as_cpu = [](const at::Tensor& t) { return t.is_privateuseone() ? cpu_alias(t) : t; };
  Unsealed open;
  open.open(self);
  open.open(dst);
  as_cpu(dst).copy_(as_cpu(self), non_blocking);
  return dst;
}

// Sizes, strides and offset of `self`, growing its storage (in sealed
// memory) when they reach past it. Never touches the elements otherwise.
void set_layout(
    const at::Tensor& self,
    c10::IntArrayRef size,
    std::optional<c10::IntArrayRef> stride,
    int64_t storage_offset) {
  auto* impl = self.unsafeGetTensorImpl();
  const size_t itemsize = self.dtype().itemsize();
  size_t needed = stride.has_value()
      ? at::detail::computeStorageNbytes(size, *stride, itemsize, storage_offset)
      : at::detail::computeStorageNbytesContiguous(size, itemsize, storage_offset);
  if (c10::multiply_integers(size) > 0 && needed > self.storage().nbytes()) {
    resize_storage(self.storage().unsafeGetStorageImpl(), needed);
  }
  impl->set_storage_offset(storage_offset);
  if (stride.has_value()) {
    impl->set_sizes_and_strides(size, *stride);
  } else {
    impl->set_sizes_contiguous(size);
  }
}

const at::Tensor& resize_(
    const at::Tensor& self,
    c10::SymIntArrayRef size,
    std::optional<c10::MemoryFormat> memory_format) {
  set_layout(self, C10_AS_INTARRAYREF_SLOW(size), std::nullopt, self.storage_offset());
  if (memory_format.has_value() && *memory_format != c10::MemoryFormat::Preserve) {
    self.unsafeGetTensorImpl()->empty_tensor_restride(*memory_format);
  }
  return self;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  resize_(dst, self.sym_sizes(), std::nullopt);
  return copy_from(self, dst, false);
}

at::Tensor& set_storage(
    at::Tensor& self,
    at::Storage source,
    int64_t storage_offset,
    c10::IntArrayRef size,
    c10::IntArrayRef stride) {
  at::native::checkSetStorage(self, source, storage_offset, size, stride);
  std::optional<c10::IntArrayRef> strides;
  if (stride.data() != nullptr) {
    strides = stride;
  }
  set_layout(self, size, strides, storage_offset);
  return self;
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, allocator(), /*resizable=*/true);
  return set_storage(self, std::move(storage), 0, {0}, {});
}

at::Tensor as_strided(
    const at::Tensor& self,
    c10::IntArrayRef size,
    c10::IntArrayRef stride,
    std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("set_.source_Storage", TORCH_FN(at::native::set_));
  m.impl("set_.source_Storage_storage_offset", set_storage);
  m.impl("set_.source_Tensor", TORCH_FN(at::native::set_tensor_));
  m.impl("set_", set_empty);
  m.impl("resize_", resize_);
  m.impl("as_strided", as_strided);
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
}

} // namespace
} // namespace torch_sealed
