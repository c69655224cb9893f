// The PrivateUse1 hooks (availability, devices, generators) and the acc
// generator: the CPU generator's algorithm and state layout, on an acc device,
// so that the CPU kernels the fallback runs can draw from it.
#include "../acc.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/Resize.h>

#include <array>
#include <mutex>

namespace torch_acc {
namespace {

struct AccGeneratorImpl final : at::CPUGeneratorImpl {
  explicit AccGeneratorImpl(c10::DeviceIndex index) {
    device_ = c10::Device(c10::DeviceType::PrivateUse1, index);
    key_set_ = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
  }
};

at::Generator make_generator(c10::DeviceIndex index) {
  auto generator = at::make_generator<AccGeneratorImpl>(index);
  generator.set_current_seed(c10::detail::getNonDeterministicRandom());
  return generator;
}

struct AccHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override {
    return true;
  }

  bool isAvailable() const override {
    return true;
  }

  bool hasPrimaryContext(c10::DeviceIndex /*device_index*/) const override {
    return true;
  }

  c10::DeviceIndex deviceCount() const override {
    return kDeviceCount;
  }

  void setCurrentDevice(c10::DeviceIndex device) const override {
    set_device(device);
  }

  c10::DeviceIndex getCurrentDevice() const override {
    return current_device();
  }

  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    const auto previous = current_device();
    set_device(device);
    return previous;
  }

  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override {
    return exchangeDevice(device);
  }

  const at::Generator& getDefaultGenerator(c10::DeviceIndex device_index) const override {
    return default_generator(device_index < 0 ? current_device() : device_index);
  }

  at::Generator getNewGenerator(c10::DeviceIndex device_index = -1) const override {
    return make_generator(device_index < 0 ? current_device() : device_index);
  }

  // acc memory is host memory: a host pointer acc did not allocate (a blob
  // wrapped with from_blob, as an AOTInductor model's constants are) is on the
  // current acc device.
  at::Device getDeviceFromPtr(void* data) const override {
    auto index = device_of_pointer(data);
    return c10::Device(c10::DeviceType::PrivateUse1, index.value_or(current_device()));
  }

  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    at::native::resize_bytes_cpu(storage.unsafeGetStorageImpl(), newsize);
  }
};

bool hooks_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new AccHooks());
  return true;
}();

} // namespace

const at::Generator& default_generator(c10::DeviceIndex index) {
  static std::once_flag once;
  static std::array<at::Generator, kDeviceCount> generators;
  check_device_index(index);
  std::call_once(once, [] {
    for (c10::DeviceIndex i = 0; i < kDeviceCount; ++i) {
      generators[i] = make_generator(i);
    }
  });
  return generators[index];
}

} // namespace torch_acc
