// Operators acc implements itself: allocation, copies, storage and view
// metadata. Everything else goes through the fallback (fallback.cpp).
#include "acc.h"

#include <ATen/EmptyTensor.h>
#include <ATen/native/ConvUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <atomic>

namespace torch_acc {
namespace {

constexpr c10::DispatchKeySet kAccKeys(c10::DispatchKey::PrivateUse1);

void check_factory_options(
    std::optional<c10::Layout> layout,
    std::optional<c10::Device> device,
    std::optional<bool> pin_memory) {
  TORCH_CHECK(
      c10::layout_or_default(layout) == c10::Layout::Strided,
      "acc: only strided tensors are supported");
  TORCH_CHECK(!c10::pinned_memory_or_default(pin_memory), "acc: pinned memory is CPU-only");
  TORCH_CHECK(c10::device_or_default(device).is_privateuseone(), "acc: expected an acc device");
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
      size, allocator(), kAccKeys, c10::dtype_or_default(dtype), memory_format);
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
      size, stride, allocator(), kAccKeys, c10::dtype_or_default(dtype));
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  const auto reachable = [](const at::Tensor& t) {
    return t.is_privateuseone() || t.is_cpu() || t.device().type() == kPeerType;
  };
  TORCH_CHECK(reachable(self), "acc: cannot copy from ", self.device());
  TORCH_CHECK(reachable(dst), "acc: cannot copy to ", dst.device());
  as_peer(dst).copy_(as_peer(self), non_blocking);
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

at::Tensor& set_storage(
    at::Tensor& self,
    at::Storage source,
    int64_t storage_offset,
    c10::IntArrayRef size,
    c10::IntArrayRef stride) {
  // Metadata only; a resize goes through the storage's own (acc) allocator.
  return at::native::set_storage_cpu_(self, std::move(source), storage_offset, size, stride);
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage storage(
      c10::Storage::use_byte_size_t(), 0, allocator(), /*resizable=*/true);
  return set_storage(self, std::move(storage), 0, {0}, {});
}

const at::Tensor& resize_(
    const at::Tensor& self,
    c10::SymIntArrayRef size,
    std::optional<c10::MemoryFormat> memory_format) {
#ifdef TORCH_ACC_CUDA
  // CUDA's resize copies device memory when the storage grows; acc follows.
  at::Tensor peer = peer_alias(self);
  peer.resize_(C10_AS_INTARRAYREF_SLOW(size), memory_format);
  sync_from_peer_alias(self, peer);
  return self;
#else
  return at::native::resize_(self, C10_AS_INTARRAYREF_SLOW(size), memory_format);
#endif
}

at::Tensor as_strided(
    const at::Tensor& self,
    c10::IntArrayRef size,
    c10::IntArrayRef stride,
    std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

at::Tensor& fill_(at::Tensor& self, const at::Scalar& value) {
  peer_alias(self).fill_(value);
  return self;
}

// Unsettled until acc's DeviceInterface first answers what acc has; then
// fixed for the process (settle_channels_last_convolutions).
enum class ConvolutionLayout : int8_t { Unsettled, Contiguous, ChannelsLast };
std::atomic<ConvolutionLayout> convolution_layout{ConvolutionLayout::Unsettled};

// The memory format fake tensors, and so Inductor, expect of an overrideable
// convolution's output and gradients. ATen's promise
// (`_determine_backend_memory_format`) is contiguous for every PrivateUse1
// device; where acc declares BackendFeature.CHANNELS_LAST_CONVOLUTION (the
// flag, settled once per process by the Python interface), a 2d or 3d
// convolution's results are channels-last where its input or its weight is,
// in real floating-point dtypes but float64: the rule of
// cudnn_conv_suggest_memory_format(), which fake tensors apply too. (A 1d
// convolution keeps the contiguous promise.)
at::MemoryFormat overrideable_format(const at::Tensor& input, const at::Tensor& weight) {
  const auto dims = weight.dim();
  const auto real_not_double = [](const at::Tensor& t) {
    return at::isFloatingType(t.scalar_type()) && t.scalar_type() != at::kDouble;
  };
  if (channels_last_convolutions_enabled() && (dims == 4 || dims == 5) &&
      input.dim() == dims && real_not_double(input) && real_not_double(weight)) {
    const auto channels_last =
        dims == 4 ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::ChannelsLast3d;
    if (input.suggest_memory_format() == channels_last ||
        weight.suggest_memory_format() == channels_last) {
      return channels_last;
    }
  }
  return at::native::_determine_backend_memory_format(
      input, weight, at::native::ConvBackend::Overrideable);
}

// The peer's kernel picks its format from its arguments (cuDNN and oneDNN
// answer channels_last when the input or the weight is). Handing it every
// argument in the promised format makes it compute in that format: for a
// channels-last model that is a copy of each (small) weight instead of a
// transpose of each activation in and of each result out.
// (Every such argument has the input's number of dimensions.)
at::Tensor peer_in_format(const at::Tensor& t, at::MemoryFormat format) {
  return peer_alias(t).contiguous(format);
}

// Results the peer's kernel still returns in another format are brought to
// the promised one, or the strides a compiled graph checks disagree.
at::Tensor in_format(const at::Tensor& t, const at::Tensor& input, at::MemoryFormat format) {
  return t.defined() && t.dim() == input.dim() ? t.contiguous(format) : t;
}

// Before aliasing: ATen checks that the arguments agree only once it has
// chosen a backend, which acc's kernels below skip.
void check_convolution_argument(const at::Tensor& t, const char* name) {
  TORCH_CHECK(
      !t.defined() || t.is_privateuseone(),
      "acc: convolution expected its ", name, " on acc like its input, got a tensor on ",
      t.device());
}

// ATen's convolution and its backward choose a backend by the arguments'
// device, and send a device they do not know to the overrideable pair. acc's
// kernels for the two hand their arguments to the peer's at once, as aliases
// in the format promised for `input` and `weight`, and the peer chooses
// (cuDNN over CUDA memory): each convolution a compiled graph calls costs one
// choice of backend on the host instead of two.
at::Tensor convolution_on_peer(
    const at::Tensor& input,
    const at::Tensor& weight,
    const std::optional<at::Tensor>& bias,
    c10::IntArrayRef stride,
    c10::IntArrayRef padding,
    c10::IntArrayRef dilation,
    bool transposed,
    c10::IntArrayRef output_padding,
    int64_t groups) {
  check_convolution_argument(input, "input");
  check_convolution_argument(weight, "weight");
  std::optional<at::Tensor> peer_bias;
  if (bias.has_value() && bias->defined()) {
    check_convolution_argument(*bias, "bias");
    peer_bias = peer_alias(*bias);
  }
  const auto format = overrideable_format(input, weight);
  auto out = at::convolution(
      peer_in_format(input, format), peer_in_format(weight, format), peer_bias, stride,
      padding, dilation, transposed, output_padding, groups);
  return adopt_as_acc(in_format(out, input, format), input.device());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_on_peer(
    const at::Tensor& grad_output,
    const at::Tensor& input,
    const at::Tensor& weight,
    at::OptionalIntArrayRef bias_sizes,
    c10::IntArrayRef stride,
    c10::IntArrayRef padding,
    c10::IntArrayRef dilation,
    bool transposed,
    c10::IntArrayRef output_padding,
    int64_t groups,
    std::array<bool, 3> output_mask) {
  check_convolution_argument(grad_output, "grad_output");
  check_convolution_argument(input, "input");
  check_convolution_argument(weight, "weight");
  const auto format = overrideable_format(input, weight);
  auto [grad_input, grad_weight, grad_bias] = at::convolution_backward(
      peer_in_format(grad_output, format), peer_in_format(input, format),
      peer_in_format(weight, format), bias_sizes, stride, padding, dilation, transposed,
      output_padding, groups, output_mask);
  auto back = [&](const at::Tensor& t) {
    return t.defined() ? adopt_as_acc(in_format(t, input, format), input.device()) : t;
  };
  return {back(grad_input), back(grad_weight), back(grad_bias)};
}

// What ATen's own choice of backend reaches for acc (`_convolution` called
// directly): the overrideable pair, whose default kernels raise.
std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_overrideable(
    const at::Tensor& grad_output,
    const at::Tensor& input,
    const at::Tensor& weight,
    c10::IntArrayRef stride,
    c10::IntArrayRef padding,
    c10::IntArrayRef dilation,
    bool transposed,
    c10::IntArrayRef output_padding,
    int64_t groups,
    std::array<bool, 3> output_mask) {
  const int64_t channels = transposed ? weight.size(1) * groups : weight.size(0);
  const std::vector<int64_t> bias_sizes{channels};
  return convolution_backward_on_peer(
      grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
      output_padding, groups, output_mask);
}

} // namespace

bool settle_channels_last_convolutions(bool keep) {
  auto expected = ConvolutionLayout::Unsettled;
  convolution_layout.compare_exchange_strong(
      expected, keep ? ConvolutionLayout::ChannelsLast : ConvolutionLayout::Contiguous);
  return channels_last_convolutions_enabled();
}

bool channels_last_convolutions_enabled() {
  return convolution_layout.load() == ConvolutionLayout::ChannelsLast;
}

namespace {

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
  m.impl("fill_.Scalar", fill_);
  m.impl("convolution", convolution_on_peer);
  m.impl("convolution_backward", convolution_backward_on_peer);
  m.impl("convolution_overrideable", convolution_on_peer);
  m.impl("convolution_backward_overrideable", convolution_backward_overrideable);
}

} // namespace
} // namespace torch_acc
