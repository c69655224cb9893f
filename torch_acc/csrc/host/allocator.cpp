// Aligned host memory, accounted per acc device.
#include "../acc.h"

#include <c10/core/CachingDeviceAllocator.h>
#include <unistd.h>

#include <algorithm>
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
int64_t peak[kDeviceCount] = {};

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

// A DeviceAllocator, as torch.accelerator's memory functions require of the
// accelerator's allocator (AOTInductor's packaging calls
// torch.accelerator.empty_cache()): acc caches nothing, so there is nothing to
// release and no stream to record; its statistics are the bytes allocated.
struct AccAllocator final : c10::DeviceAllocator {
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
      peak[device] = std::max(peak[device], allocated[device]);
    }
    return {ptr, ptr, &release, c10::Device(c10::DeviceType::PrivateUse1, device)};
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return &release;
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

  bool initialized() override {
    return true;
  }

  void emptyCache(c10::MempoolId_t /*mempool_id*/) override {}

  void recordStream(const c10::DataPtr& /*ptr*/, c10::Stream /*stream*/) override {}

  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    check_device_index(device);
    c10::CachingDeviceAllocator::DeviceStats stats;
    std::lock_guard<std::mutex> lock(blocks_mutex);
    for (auto* stat : {&stats.allocated_bytes, &stats.reserved_bytes, &stats.active_bytes}) {
      auto& aggregate = (*stat)[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)];
      aggregate.current = allocated[device];
      aggregate.peak = peak[device];
    }
    return stats;
  }

  void resetAccumulatedStats(c10::DeviceIndex device) override {
    check_device_index(device);
  }

  void resetPeakStats(c10::DeviceIndex device) override {
    check_device_index(device);
    std::lock_guard<std::mutex> lock(blocks_mutex);
    peak[device] = allocated[device];
  }

  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    check_device_index(device);
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return {
        static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES)) * page,
        static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * page};
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
