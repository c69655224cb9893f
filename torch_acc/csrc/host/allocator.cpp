// Aligned host memory, accounted per acc device.
#include "../acc.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>

namespace torch_acc {
namespace {

constexpr size_t kAlignment = 64;

struct Block {
  size_t size;
  c10::DeviceIndex device;
};

std::mutex blocks_mutex;
std::unordered_map<void*, Block> blocks;
int64_t allocated[kDeviceCount] = {};

void release(void* ptr) {
  if (ptr == nullptr) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(blocks_mutex);
    auto it = blocks.find(ptr);
    TORCH_INTERNAL_ASSERT(it != blocks.end(), "acc: freeing unknown pointer");
    allocated[it->second.device] -= static_cast<int64_t>(it->second.size);
    blocks.erase(it);
  }
  std::free(ptr);
}

struct AccAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    const auto device = current_device();
    void* ptr = nullptr;
    if (nbytes > 0) {
      const size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
      TORCH_CHECK_WITH(
          OutOfMemoryError,
          posix_memalign(&ptr, kAlignment, rounded) == 0,
          "acc: out of memory allocating ",
          nbytes,
          " bytes");
      std::lock_guard<std::mutex> lock(blocks_mutex);
      blocks.emplace(ptr, Block{nbytes, device});
      allocated[device] += static_cast<int64_t>(nbytes);
    }
    return {ptr, ptr, &release, c10::Device(c10::DeviceType::PrivateUse1, device)};
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return &release;
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};

AccAllocator global_allocator;

} // namespace

c10::Allocator* allocator() {
  return &global_allocator;
}

int64_t memory_allocated(c10::DeviceIndex index) {
  check_device_index(index);
  std::lock_guard<std::mutex> lock(blocks_mutex);
  return allocated[index];
}

std::optional<c10::DeviceIndex> device_of_pointer(const void* ptr) {
  std::lock_guard<std::mutex> lock(blocks_mutex);
  auto it = blocks.find(const_cast<void*>(ptr));
  if (it == blocks.end()) {
    return std::nullopt;
  }
  return it->second.device;
}

c10::Device peer_device(c10::DeviceIndex /*index*/) {
  return c10::Device(c10::kCPU);
}

c10::Allocator* peer_allocator() {
  return c10::GetAllocator(c10::kCPU);
}

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &global_allocator);

} // namespace torch_acc
