// _foreach_copy_, the copy CUDA graph trees make of each replay's inputs into
// the buffers the graph was recorded with, and the copy an optimizer's
// foreach step makes. ATen's kernel for backends without their own copies
// tensor by tensor through copy_ and _copy_from; this one hands the whole
// list, as peer aliases, to the peer's kernel, which over CUDA memory is one
// fused launch for the lot.
#include "acc.h"

#include <ATen/ops/_foreach_copy.h>
#include <torch/library.h>

#include <vector>

namespace torch_acc {
namespace {

std::vector<at::Tensor> as_peers(at::TensorList tensors) {
  std::vector<at::Tensor> peers;
  peers.reserve(tensors.size());
  for (const at::Tensor& t : tensors) {
    peers.push_back(as_peer(t));
  }
  return peers;
}

void foreach_copy_(at::TensorList self, at::TensorList src, bool non_blocking) {
  // copy_ broadcasts a source into its destination and never resizes it, so
  // writing through the aliases leaves nothing to bring back.
  at::_foreach_copy_(as_peers(self), as_peers(src), non_blocking);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_foreach_copy_", foreach_copy_);
}

} // namespace
} // namespace torch_acc
