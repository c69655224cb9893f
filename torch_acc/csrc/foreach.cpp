// _foreach_copy_ straight to the peer's kernel. Graph trees copy each replay's
// inputs into the recorded graph's static inputs with one _foreach_copy_, so
// on a launch-bound graph the fallback's per-argument bookkeeping (boxing,
// aliasing every list element, syncing metadata back) is a visible share of
// each call; a copy never resizes, so the aliases need no sync afterwards.
#include "acc.h"

#include <torch/library.h>

#include <vector>

namespace torch_acc {
namespace {

void foreach_copy_(at::TensorList self, at::TensorList src, bool non_blocking) {
  std::vector<at::Tensor> peer_self;
  std::vector<at::Tensor> peer_src;
  peer_self.reserve(self.size());
  peer_src.reserve(src.size());
  for (const auto& t : self) {
    peer_self.push_back(as_peer(t));
  }
  for (const auto& t : src) {
    peer_src.push_back(as_peer(t));
  }
  at::_foreach_copy_(peer_self, peer_src, non_blocking);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_foreach_copy_", foreach_copy_);
}

} // namespace
} // namespace torch_acc
