// Sealed memory: each allocation is an anonymous mapping of whole pages,
// PROT_NONE unless opened. An open count per mapping lets openings nest
// (two kernels reading one input, a kernel inside a copy).
#include "sealed.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>

namespace torch_sealed {
namespace {

struct Block {
  size_t mapped; // bytes mapped: the request rounded up to whole pages
  int open_count;
};

std::mutex blocks_mutex;
std::map<const void*, Block> blocks; // by the mapping's first byte

size_t page_size() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

void protect(const void* base, size_t bytes, int prot) {
  TORCH_CHECK(
      mprotect(const_cast<void*>(base), bytes, prot) == 0,
      "sealed: mprotect failed: ",
      std::strerror(errno));
}

void release(void* ptr) {
  if (ptr == nullptr) {
    return;
  }
  size_t mapped = 0;
  {
    std::lock_guard<std::mutex> lock(blocks_mutex);
    auto it = blocks.find(ptr);
    TORCH_INTERNAL_ASSERT(it != blocks.end(), "sealed: freeing unknown memory");
    mapped = it->second.mapped;
    blocks.erase(it);
  }
  munmap(ptr, mapped);
}

// Opens (delta 1) or seals (delta -1) the mapping that starts at `base`;
// false if there is none (not sealed memory, or freed while open).
bool adjust(const void* base, int delta) {
  std::lock_guard<std::mutex> lock(blocks_mutex);
  auto it = blocks.find(base);
  if (it == blocks.end()) {
    return false;
  }
  Block& block = it->second;
  const int before = block.open_count;
  block.open_count += delta;
  TORCH_INTERNAL_ASSERT(block.open_count >= 0, "sealed: memory sealed more often than opened");
  if (before == 0 && block.open_count == 1) {
    protect(base, block.mapped, PROT_READ | PROT_WRITE);
  } else if (before == 1 && block.open_count == 0) {
    protect(base, block.mapped, PROT_NONE);
  }
  return true;
}

struct SealedAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    const auto device = c10::Device(c10::DeviceType::PrivateUse1, current_device());
    if (nbytes == 0) {
      return {nullptr, nullptr, &release, device};
    }
    const size_t mapped = (nbytes + page_size() - 1) / page_size() * page_size();
    void* ptr = mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    TORCH_CHECK_WITH(
        OutOfMemoryError,
        ptr != MAP_FAILED,
        "sealed: out of memory allocating ",
        nbytes,
        " bytes");
    std::lock_guard<std::mutex> lock(blocks_mutex);
    blocks.emplace(ptr, Block{mapped, 0});
    return {ptr, ptr, &release, device};
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return &release;
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    Unsealed open;
    open.open(dest);
    open.open(src);
    default_copy_data(dest, src, count);
  }
};

SealedAllocator global_allocator;

} // namespace

c10::Allocator* allocator() {
  return &global_allocator;
}

bool is_sealed(const void* ptr) {
  std::lock_guard<std::mutex> lock(blocks_mutex);
  auto it = blocks.upper_bound(ptr);
  if (it == blocks.begin()) {
    return false;
  }
  --it;
  const auto* base = static_cast<const char*>(it->first);
  return static_cast<const char*>(ptr) < base + it->second.mapped && it->second.open_count == 0;
}

void resize_storage(c10::StorageImpl* storage, size_t nbytes) {
  TORCH_CHECK(storage->resizable(), "sealed: trying to resize storage that is not resizable");
  c10::DataPtr fresh = global_allocator.allocate(nbytes);
  const size_t kept = std::min(nbytes, storage->nbytes());
  if (kept > 0) {
    global_allocator.copy_data(fresh.get(), storage->data(), kept);
  }
  storage->set_data_ptr_noswap(std::move(fresh));
  storage->set_nbytes(nbytes);
}

Unsealed::~Unsealed() {
  for (auto it = opened_.rbegin(); it != opened_.rend(); ++it) {
    adjust(*it, -1);
  }
}

void Unsealed::open(const void* data) {
  if (data != nullptr && adjust(data, 1)) {
    opened_.push_back(data);
  }
}

void Unsealed::open(const at::Tensor& tensor) {
  if (tensor.defined() && tensor.is_privateuseone() && tensor.has_storage()) {
    open(tensor.storage().data());
  }
}

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &global_allocator);

} // namespace torch_sealed
