// Matrix products, the extern kernels Inductor's generated code calls most
// (out= variants): direct kernels on CPU aliases. The boxed fallback would
// give the same result; these skip its per-argument bookkeeping, which costs
// about as much as a small product itself.
#include "../acc.h"

#include <ATen/ops/addmm_cpu_dispatch.h>
#include <ATen/ops/baddbmm_cpu_dispatch.h>
#include <ATen/ops/bmm_cpu_dispatch.h>
#include <ATen/ops/mm_cpu_dispatch.h>
#include <torch/library.h>

namespace torch_acc {
namespace {

// Runs `kernel` with a CPU alias of `out`, then brings `out` up to date.
template <typename Kernel>
at::Tensor& into(at::Tensor& out, Kernel kernel) {
  at::Tensor peer_out = as_peer(out);
  kernel(peer_out);
  sync_from_peer_alias(out, peer_out);
  return out;
}

at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  return into(out, [&](at::Tensor& o) { at::cpu::mm_out(o, as_peer(self), as_peer(mat2)); });
}

at::Tensor& addmm_out(
    const at::Tensor& self,
    const at::Tensor& mat1,
    const at::Tensor& mat2,
    const c10::Scalar& beta,
    const c10::Scalar& alpha,
    at::Tensor& out) {
  return into(out, [&](at::Tensor& o) {
    at::cpu::addmm_out(o, as_peer(self), as_peer(mat1), as_peer(mat2), beta, alpha);
  });
}

at::Tensor& bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  return into(out, [&](at::Tensor& o) { at::cpu::bmm_out(o, as_peer(self), as_peer(mat2)); });
}

at::Tensor& baddbmm_out(
    const at::Tensor& self,
    const at::Tensor& batch1,
    const at::Tensor& batch2,
    const c10::Scalar& beta,
    const c10::Scalar& alpha,
    at::Tensor& out) {
  return into(out, [&](at::Tensor& o) {
    at::cpu::baddbmm_out(o, as_peer(self), as_peer(batch1), as_peer(batch2), beta, alpha);
  });
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mm.out", mm_out);
  m.impl("addmm.out", addmm_out);
  m.impl("bmm.out", bmm_out);
  m.impl("baddbmm.out", baddbmm_out);
}

} // namespace
} // namespace torch_acc
