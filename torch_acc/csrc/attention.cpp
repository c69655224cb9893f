// Scaled dot product attention, routed the way PyTorch lets a PrivateUse1
// backend route it: acc registers its choice function for PrivateUse1
// (`_fused_sdp_choice_stub`), which answers SDPBackend::overrideable wherever
// the peer has a fused kernel for the call, and implements the overrideable
// forward and backward over peer aliases of its memory:
//
// - over host memory, with the CPU's flash attention kernels;
// - over CUDA memory, with the kernels CUDA itself would pick: cuDNN's
//   attention, flash attention, or memory-efficient attention.
//
// Where the peer has no fused kernel (dropout on the CPU, a mask that needs a
// gradient, ...), the choice is the math path, which decomposes into
// operators acc runs like any other.
#include "acc.h"

#include <ATen/Context.h>
#include <ATen/ExpandUtils.h>
#include <ATen/SDPBackend.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/_fused_sdp_choice_native.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu_backward.h>
#include <torch/library.h>

#ifdef TORCH_ACC_CUDA
#include <ATen/ops/_scaled_dot_product_cudnn_attention.h>
#include <ATen/ops/_scaled_dot_product_cudnn_attention_backward.h>
#include <ATen/ops/_scaled_dot_product_efficient_attention.h>
#include <ATen/ops/_scaled_dot_product_efficient_attention_backward.h>
#include <ATen/ops/_scaled_dot_product_flash_attention.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_backward.h>
#endif

#include <algorithm>
#include <numeric>
#include <vector>

namespace torch_acc {
namespace {

// A peer tensor with `t`'s metadata and no memory. The choice function runs
// while Dynamo and AOTAutograd trace, on fake tensors whose memory must not
// be touched; the peer's choice function reads metadata only.
at::Tensor peer_twin(const at::Tensor& t) {
  c10::Storage storage(
      c10::Storage::use_byte_size_t(), 0, c10::DataPtr(nullptr, peer_device(0)),
      /*allocator=*/nullptr, /*resizable=*/false);
  auto twin = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(kPeerKey), t.dtype());
  twin.unsafeGetTensorImpl()->set_sizes_and_strides(
      t.sym_sizes(), t.sym_strides(), t.sym_storage_offset());
  return twin;
}

std::optional<at::Tensor> peer_twin(const std::optional<at::Tensor>& t) {
  if (!t.has_value() || !t->defined()) {
    return std::nullopt;
  }
  return peer_twin(*t);
}

// On acc, SDPBackend::overrideable is what selects the peer's fused kernels;
// the flags sdpa_kernel sets for the peer's own flash and memory-efficient
// attention do not apply to acc. This enables them while acc asks the peer's
// choice function. (The flags are process-wide; sdpa_kernel sets them the
// same way.)
class PeerFusedKernelsEnabled {
 public:
  PeerFusedKernelsEnabled()
      : flash_(at::globalContext().userEnabledFlashSDP()),
        mem_efficient_(at::globalContext().userEnabledMemEfficientSDP()) {
    at::globalContext().setSDPUseFlash(true);
    at::globalContext().setSDPUseMemEfficient(true);
  }
  ~PeerFusedKernelsEnabled() {
    at::globalContext().setSDPUseFlash(flash_);
    at::globalContext().setSDPUseMemEfficient(mem_efficient_);
  }
  PeerFusedKernelsEnabled(const PeerFusedKernelsEnabled&) = delete;
  PeerFusedKernelsEnabled& operator=(const PeerFusedKernelsEnabled&) = delete;

 private:
  const bool flash_;
  const bool mem_efficient_;
};

// What the peer's own choice function answers for these arguments, its fused
// kernels enabled. (Called directly: an extension cannot call a
// DispatchStub, whose call path depends on how ATen itself was compiled.)
at::SDPBackend peer_choice(
    const at::Tensor& query,
    const at::Tensor& key,
    const at::Tensor& value,
    const std::optional<at::Tensor>& attn_mask,
    double dropout_p,
    bool is_causal,
    std::optional<double> scale,
    bool enable_gqa) {
  const PeerFusedKernelsEnabled enabled;
#ifdef TORCH_ACC_CUDA
  const auto choose = &at::native::_fused_sdp_choice_cuda;
#else
  const auto choose = &at::native::_fused_sdp_choice_cpp;
#endif
  return static_cast<at::SDPBackend>(choose(
      peer_twin(query), peer_twin(key), peer_twin(value), peer_twin(attn_mask), dropout_p,
      is_causal, scale, enable_gqa));
}

int64_t fused_sdp_choice(
    const at::Tensor& query,
    const at::Tensor& key,
    const at::Tensor& value,
    const std::optional<at::Tensor>& attn_mask,
    double dropout_p,
    bool is_causal,
    std::optional<double> scale,
    bool enable_gqa) {
  // The overrideable kernels have no enable_gqa argument and cannot give a
  // mask its gradient: those calls take the math path.
  const bool mask_needs_grad = attn_mask.has_value() && attn_mask->defined() &&
      attn_mask->requires_grad();
  if (at::globalContext().userEnabledOverrideableSDP() && !mask_needs_grad) {
    const auto peer = peer_choice(
        query, key, value, attn_mask, dropout_p, is_causal, scale, /*enable_gqa=*/false);
    if (peer != at::SDPBackend::math && peer != at::SDPBackend::error) {
      return static_cast<int64_t>(at::SDPBackend::overrideable);
    }
  }
  TORCH_CHECK(
      at::globalContext().userEnabledMathSDP(),
      "acc: no scaled_dot_product_attention backend is enabled for these inputs");
  return static_cast<int64_t>(at::SDPBackend::math);
}

// The strides of `torch.empty_like(t)`: `t`'s if it is dense, else dense
// strides in `t`'s dimension order.
std::vector<int64_t> strides_of_empty_like(const at::Tensor& t) {
  if (t.is_non_overlapping_and_dense()) {
    return t.strides().vec();
  }
  return at::infer_dense_strides(t.sizes(), t.strides());
}

// The strides the meta function of the overrideable forward gives its output
// (alloc_with_matching_layout): `shape`, in the query's dimension order.
std::vector<int64_t> strides_like_query(const at::Tensor& query, c10::IntArrayRef shape) {
  if (query.sizes() == shape) {
    return strides_of_empty_like(query);
  }
  std::vector<int64_t> order(query.dim());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const auto sa = query.stride(a) ? query.stride(a) : INT64_MAX;
    const auto sb = query.stride(b) ? query.stride(b) : INT64_MAX;
    return sa < sb;
  });
  std::vector<int64_t> strides(query.dim());
  int64_t stride = 1;
  for (const auto dim : order) {
    strides[dim] = stride;
    stride *= shape[dim];
  }
  return strides;
}

// `t` with `strides`: Inductor checks the strides of the tensors an extern
// kernel returns against the meta function's.
at::Tensor with_strides(const at::Tensor& t, c10::IntArrayRef strides) {
  if (!t.defined() || t.strides() == strides) {
    return t;
  }
  return at::empty_strided(t.sizes(), strides, t.options()).copy_(t);
}

std::optional<at::Tensor> peer_or_none(const std::optional<at::Tensor>& t) {
  if (!t.has_value() || !t->defined()) {
    return std::nullopt;
  }
  return peer_alias(*t);
}

// `t`'s peer alias if it is an acc tensor, else `t` (undefined included).
at::Tensor maybe_peer(const at::Tensor& t) {
  return t.defined() ? as_peer(t) : t;
}

// A peer kernel's result as an acc tensor; tensors it keeps elsewhere (the
// CPU random state of a CUDA kernel) stay where they are.
at::Tensor back_to_acc(const at::Tensor& t, c10::Device device) {
  return t.defined() && t.device().type() == kPeerType ? adopt_as_acc(t, device) : t;
}

using ForwardResult = std::tuple<
    at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor,
    at::Tensor, at::Tensor>;

#ifdef TORCH_ACC_CUDA
// The peer's fused kernel CUDA itself would pick for these arguments: cuDNN's
// attention, flash attention, or else memory-efficient attention (which has
// dropout, a mask and fp32). Forward and backward decide alike, from the same
// metadata.
enum class PeerKernel { cudnn, flash, efficient };

PeerKernel peer_kernel(
    const at::Tensor& query,
    const at::Tensor& key,
    const at::Tensor& value,
    const std::optional<at::Tensor>& attn_bias,
    double dropout_p,
    bool is_causal,
    std::optional<double> scale) {
  switch (peer_choice(query, key, value, attn_bias, dropout_p, is_causal, scale, false)) {
    case at::SDPBackend::cudnn_attention:
      return PeerKernel::cudnn;
    case at::SDPBackend::flash_attention:
      return PeerKernel::flash;
    default:
      return PeerKernel::efficient;
  }
}

// `t` (B, H, S, D) laid out as the peer's fused forward lays out its output:
// (B, S, H, D) in memory. The memory-efficient backward reads the forward's
// output with that layout's strides, whatever the tensor's own are.
at::Tensor in_peer_output_layout(const at::Tensor& t) {
  const auto bshd = t.transpose(1, 2);
  return bshd.is_contiguous() ? t : bshd.contiguous().transpose(1, 2);
}

constexpr int64_t kEfficientLseAlignment = 32;
constexpr int64_t kEfficientBiasAlignment = 16;

// The mask as the peer's fused kernels read it. SDPA hands the overrideable
// op the caller's mask as it is, broadcastable over batch and heads (what
// Hugging Face models pass: (B, 1, S, S) or (1, 1, S, S)); CUDA's own route
// expands it to (B, H, S_q, S_k) first, and the memory-efficient kernel also
// wants the key dimension's rows 16-aligned in memory. Expanding is a view;
// padding copies once.
std::optional<at::Tensor> peer_bias(
    const std::optional<at::Tensor>& attn_bias,
    const at::Tensor& query,
    const at::Tensor& key,
    PeerKernel kernel) {
  if (!attn_bias.has_value() || !attn_bias->defined()) {
    return std::nullopt;
  }
  at::Tensor bias = peer_alias(*attn_bias).expand(
      {query.size(0), query.size(1), query.size(2), key.size(2)});
  const int64_t keys = bias.size(-1);
  if (kernel == PeerKernel::efficient && keys % kEfficientBiasAlignment != 0) {
    const int64_t padded =
        (keys + kEfficientBiasAlignment - 1) / kEfficientBiasAlignment * kEfficientBiasAlignment;
    auto sizes = bias.sizes().vec();
    sizes.back() = padded;
    at::Tensor storage = at::empty(sizes, bias.options());
    bias = storage.narrow(-1, 0, keys).copy_(bias);
  }
  return bias;
}
#endif

ForwardResult fused_attention_forward(
    const at::Tensor& query,
    const at::Tensor& key,
    const at::Tensor& value,
    const std::optional<at::Tensor>& attn_bias,
    double dropout_p,
    bool is_causal,
    bool return_debug_mask,
    std::optional<double> scale) {
  TORCH_CHECK(query.dim() == 4, "acc: fused attention takes 4-D (B, H, S, D) inputs");
  const c10::Device device = query.device();
  const int64_t batch = query.size(0), heads = query.size(1), max_q = query.size(2);
  const int64_t max_k = key.size(2);
  std::vector<int64_t> out_shape(query.sizes().begin(), query.sizes().end());
  out_shape.back() = value.size(-1);

  at::Tensor output, logsumexp, seed, offset;
#ifdef TORCH_ACC_CUDA
  const auto kernel = peer_kernel(query, key, value, attn_bias, dropout_p, is_causal, scale);
  const auto bias = peer_bias(attn_bias, query, key, kernel);
  if (kernel == PeerKernel::cudnn) {
    auto result = at::_scaled_dot_product_cudnn_attention(
        peer_alias(query), peer_alias(key), peer_alias(value), bias,
        /*compute_log_sumexp=*/true, dropout_p, is_causal, /*return_debug_mask=*/false, scale);
    output = std::get<0>(result);
    logsumexp = std::get<1>(result).reshape({batch, heads, max_q});  // cuDNN's is (B, H, S, 1)
    seed = std::get<6>(result);
    offset = std::get<7>(result);
  } else if (kernel == PeerKernel::flash) {
    auto result = at::_scaled_dot_product_flash_attention(
        peer_alias(query), peer_alias(key), peer_alias(value), dropout_p, is_causal,
        /*return_debug_mask=*/false, scale);
    output = std::get<0>(result);
    logsumexp = std::get<1>(result);
    seed = std::get<6>(result);
    offset = std::get<7>(result);
  } else {
    auto [out, lse, philox_seed, philox_offset] = at::_scaled_dot_product_efficient_attention(
        peer_alias(query), peer_alias(key), peer_alias(value), bias,
        /*compute_log_sumexp=*/true, dropout_p, is_causal, scale);
    output = out;
    // Padded to a multiple of 32 queries; the overrideable op's is not.
    logsumexp = lse.narrow(-1, 0, max_q).contiguous();
    seed = philox_seed;
    offset = philox_offset;
  }
#else
  TORCH_CHECK(dropout_p == 0.0, "acc: fused attention on host memory has no dropout");
  auto [out, lse] = at::_scaled_dot_product_flash_attention_for_cpu(
      peer_alias(query), peer_alias(key), peer_alias(value), dropout_p, is_causal,
      peer_or_none(attn_bias), scale);
  output = out;
  logsumexp = lse.contiguous();  // the CPU's is (B, S, H) transposed
  seed = at::zeros({}, at::TensorOptions().dtype(at::kLong).device(kPeerType));
  offset = at::zeros({}, at::TensorOptions().dtype(at::kLong).device(kPeerType));
#endif
  TORCH_CHECK(
      logsumexp.sizes() == c10::IntArrayRef({batch, heads, max_q}),
      "acc: unexpected logsumexp shape ", logsumexp.sizes());
  return {
      adopt_as_acc(with_strides(output, strides_like_query(query, out_shape)), device),
      adopt_as_acc(logsumexp, device),
      at::Tensor(),
      at::Tensor(),
      c10::SymInt(max_q),
      c10::SymInt(max_k),
      back_to_acc(seed, device),
      back_to_acc(offset, device),
      at::Tensor(),
  };
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_attention_backward(
    const at::Tensor& grad_out,
    const at::Tensor& query,
    const at::Tensor& key,
    const at::Tensor& value,
    const at::Tensor& attn_bias,
    std::array<bool, 4> grad_input_mask,
    const at::Tensor& out,
    const at::Tensor& logsumexp,
    const at::Tensor& cum_seq_q,
    const at::Tensor& cum_seq_k,
    int64_t max_q,
    int64_t max_k,
    double dropout_p,
    bool is_causal,
    const at::Tensor& philox_seed,
    const at::Tensor& philox_offset,
    std::optional<double> scale) {
  const c10::Device device = query.device();
  std::optional<at::Tensor> bias;
  if (attn_bias.defined()) {
    bias = attn_bias;
  }
  at::Tensor grad_q, grad_k, grad_v, grad_bias;
#ifdef TORCH_ACC_CUDA
  const auto kernel = peer_kernel(query, key, value, bias, dropout_p, is_causal, scale);
  const auto peer_mask = peer_bias(bias, query, key, kernel);
  if (kernel == PeerKernel::cudnn) {
    std::tie(grad_q, grad_k, grad_v) = at::_scaled_dot_product_cudnn_attention_backward(
        peer_alias(grad_out), peer_alias(query), peer_alias(key), peer_alias(value),
        peer_alias(out), peer_alias(logsumexp).unsqueeze(-1), maybe_peer(philox_seed),
        maybe_peer(philox_offset), peer_mask.value_or(at::Tensor()),
        maybe_peer(cum_seq_q), maybe_peer(cum_seq_k), max_q, max_k, dropout_p, is_causal, scale);
  } else if (kernel == PeerKernel::flash) {
    std::tie(grad_q, grad_k, grad_v) = at::_scaled_dot_product_flash_attention_backward(
        peer_alias(grad_out), peer_alias(query), peer_alias(key), peer_alias(value),
        in_peer_output_layout(peer_alias(out)), peer_alias(logsumexp), maybe_peer(cum_seq_q),
        maybe_peer(cum_seq_k), max_q, max_k, dropout_p, is_causal, maybe_peer(philox_seed),
        maybe_peer(philox_offset), scale);
  } else {
    // The memory-efficient kernel reads a logsumexp padded to 32 queries.
    const int64_t padded =
        (max_q + kEfficientLseAlignment - 1) / kEfficientLseAlignment * kEfficientLseAlignment;
    at::Tensor lse = at::zeros(
        {logsumexp.size(0), logsumexp.size(1), padded},
        logsumexp.options().device(peer_device(device.index())));
    lse.narrow(-1, 0, max_q).copy_(peer_alias(logsumexp));
    std::tie(grad_q, grad_k, grad_v, grad_bias) =
        at::_scaled_dot_product_efficient_attention_backward(
            peer_alias(grad_out), peer_alias(query), peer_alias(key), peer_alias(value),
            peer_mask.value_or(at::Tensor()),
            in_peer_output_layout(peer_alias(out)), lse, maybe_peer(philox_seed),
            maybe_peer(philox_offset), dropout_p, grad_input_mask, is_causal, scale);
  }
#else
  TORCH_CHECK(
      !(attn_bias.defined() && grad_input_mask[3]),
      "acc: fused attention on host memory gives no gradient for attn_bias");
  std::tie(grad_q, grad_k, grad_v) = at::_scaled_dot_product_flash_attention_for_cpu_backward(
      peer_alias(grad_out), peer_alias(query), peer_alias(key), peer_alias(value),
      peer_alias(out), peer_alias(logsumexp), dropout_p, is_causal, peer_or_none(bias), scale);
#endif
  // The meta function's gradients are empty_like the inputs.
  return {
      back_to_acc(with_strides(grad_q, strides_of_empty_like(query)), device),
      back_to_acc(with_strides(grad_k, strides_of_empty_like(key)), device),
      back_to_acc(with_strides(grad_v, strides_of_empty_like(value)), device),
      back_to_acc(grad_bias, device),
  };
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_sdp_choice", fused_sdp_choice);
  m.impl("_scaled_dot_product_fused_attention_overrideable", fused_attention_forward);
  m.impl(
      "_scaled_dot_product_fused_attention_overrideable_backward", fused_attention_backward);
}

} // namespace
} // namespace torch_acc

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_acc::fused_sdp_choice);
} // namespace at::native
