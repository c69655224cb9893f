// Matrix products, the extern kernels Inductor's generated code calls most
// (out= variants), and their functional forms, which eager code and the
// compiled backward call: direct kernels on peer aliases, CPU's over host
// memory and CUDA's over CUDA memory. The boxed fallback would give the same
// result; these skip its per-argument bookkeeping, which costs about as much
// as a small product itself, and in a host-bound compiled step is the gap to
// the peer device's own speed.
#include "acc.h"

#include <torch/library.h>

#ifdef TORCH_ACC_CUDA
#include <ATen/ops/addmm_cuda_dispatch.h>
#include <ATen/ops/baddbmm_cuda_dispatch.h>
#include <ATen/ops/bmm_cuda_dispatch.h>
#include <ATen/ops/mm_cuda_dispatch.h>
namespace peer_ops = at::cuda;
#else
#include <ATen/ops/addmm_cpu_dispatch.h>
#include <ATen/ops/baddbmm_cpu_dispatch.h>
#include <ATen/ops/bmm_cpu_dispatch.h>
#include <ATen/ops/mm_cpu_dispatch.h>
namespace peer_ops = at::cpu;
#endif

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
  return into(out, [&](at::Tensor& o) { peer_ops::mm_out(o, as_peer(self), as_peer(mat2)); });
}

at::Tensor& addmm_out(
    const at::Tensor& self,
    const at::Tensor& mat1,
    const at::Tensor& mat2,
    const c10::Scalar& beta,
    const c10::Scalar& alpha,
    at::Tensor& out) {
  return into(out, [&](at::Tensor& o) {
    peer_ops::addmm_out(o, as_peer(self), as_peer(mat1), as_peer(mat2), beta, alpha);
  });
}

at::Tensor& bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  return into(out, [&](at::Tensor& o) { peer_ops::bmm_out(o, as_peer(self), as_peer(mat2)); });
}

at::Tensor& baddbmm_out(
    const at::Tensor& self,
    const at::Tensor& batch1,
    const at::Tensor& batch2,
    const c10::Scalar& beta,
    const c10::Scalar& alpha,
    at::Tensor& out) {
  return into(out, [&](at::Tensor& o) {
    peer_ops::baddbmm_out(o, as_peer(self), as_peer(batch1), as_peer(batch2), beta, alpha);
  });
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  return adopt_as_acc(peer_ops::mm(as_peer(self), as_peer(mat2)), self.device());
}

at::Tensor addmm(
    const at::Tensor& self,
    const at::Tensor& mat1,
    const at::Tensor& mat2,
    const c10::Scalar& beta,
    const c10::Scalar& alpha) {
  return adopt_as_acc(
      peer_ops::addmm(as_peer(self), as_peer(mat1), as_peer(mat2), beta, alpha), mat1.device());
}

at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2) {
  return adopt_as_acc(peer_ops::bmm(as_peer(self), as_peer(mat2)), self.device());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mm", mm);
  m.impl("addmm", addmm);
  m.impl("bmm", bmm);
  m.impl("mm.out", mm_out);
  m.impl("addmm.out", addmm_out);
  m.impl("bmm.out", bmm_out);
  m.impl("baddbmm.out", baddbmm_out);
}

} // namespace
} // namespace torch_acc
