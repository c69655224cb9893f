// Zero-copy views between acc and peer (CPU or CUDA) tensors. Each side's storage holds a
// reference to the other's, so the memory lives as long as either view.
#include "acc.h"

namespace torch_acc {
namespace {

using StorageRef = c10::intrusive_ptr<c10::StorageImpl>;

void release_storage_ref(void* ctx) {
  delete static_cast<StorageRef*>(ctx);
}

// A storage over the memory of `source` that keeps `source` alive.
c10::Storage borrow(const c10::Storage& source, c10::Device device, c10::Allocator* allocator) {
  c10::StorageImpl* impl = source.unsafeGetStorageImpl();
  auto* keep = new StorageRef(StorageRef::reclaim_copy(impl));
  c10::DataPtr data(impl->mutable_data(), keep, &release_storage_ref, device);
  return c10::Storage(
      c10::Storage::use_byte_size_t(), impl->nbytes(), std::move(data), allocator,
      /*resizable=*/true);
}

at::Tensor with_layout_of(c10::Storage storage, c10::DispatchKey key, const at::Tensor& like) {
  auto out = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(key), like.dtype());
  out.unsafeGetTensorImpl()->set_sizes_and_strides(
      like.sizes(), like.strides(), like.storage_offset());
  return out;
}

} // namespace

at::Tensor peer_alias(const at::Tensor& acc) {
  return with_layout_of(
      borrow(acc.storage(), peer_device(acc.device().index()), peer_allocator()),
      kPeerKey,
      acc);
}

at::Tensor as_peer(const at::Tensor& t) {
  return t.is_privateuseone() ? peer_alias(t) : t;
}

at::Tensor adopt_as_acc(const at::Tensor& peer, c10::Device device) {
  return with_layout_of(
      borrow(peer.storage(), device, allocator()), c10::DispatchKey::PrivateUse1, peer);
}

void sync_from_peer_alias(const at::Tensor& acc, const at::Tensor& peer) {
  auto* acc_impl = acc.unsafeGetTensorImpl();
  if (peer.storage().data() != acc.storage().data() ||
      peer.storage().nbytes() != acc.storage().nbytes()) {
    acc_impl->set_storage_keep_dtype(adopt_as_acc(peer, acc.device()).storage());
  }
  if (peer.sizes() != acc.sizes() || peer.strides() != acc.strides() ||
      peer.storage_offset() != acc.storage_offset()) {
    acc_impl->set_sizes_and_strides(peer.sizes(), peer.strides(), peer.storage_offset());
  }
}

} // namespace torch_acc
