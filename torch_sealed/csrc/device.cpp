// The current device, the device guard and the PrivateUse1 hooks. sealed has
// no streams and no events: the guard reports the default stream only, and
// asking it for another stream or an event fails (the interface's defaults).
#include "sealed.h"

#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace torch_sealed {
namespace {

thread_local c10::DeviceIndex tls_device = 0;

c10::Device sealed_device(c10::DeviceIndex index) {
  return c10::Device(c10::DeviceType::PrivateUse1, index);
}

struct SealedGuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override {
    return c10::DeviceType::PrivateUse1;
  }

  c10::Device exchangeDevice(c10::Device device) const override {
    const auto previous = getDevice();
    setDevice(device);
    return previous;
  }

  c10::Device getDevice() const override {
    return sealed_device(tls_device);
  }

  void setDevice(c10::Device device) const override {
    TORCH_CHECK(device.is_privateuseone(), "sealed: expected a sealed device, got ", device);
    if (device.index() >= 0) {
      set_device(device.index());
    }
  }

  void uncheckedSetDevice(c10::Device device) const noexcept override {
    if (device.index() >= 0 && device.index() < kDeviceCount) {
      tls_device = device.index();
    }
  }

  c10::Stream getStream(c10::Device device) const override {
    return c10::Stream(c10::Stream::DEFAULT, sealed_device(device.index() >= 0 ? device.index() : tls_device));
  }

  c10::Stream exchangeStream(c10::Stream stream) const override {
    TORCH_CHECK(stream.id() == 0, "sealed has no streams but the default one");
    return stream;
  }

  c10::DeviceIndex deviceCount() const noexcept override {
    return kDeviceCount;
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, SealedGuardImpl);

struct SealedHooks final : at::PrivateUse1HooksInterface {
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

  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    resize_storage(storage.unsafeGetStorageImpl(), newsize);
  }
};

bool hooks_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new SealedHooks());
  return true;
}();

} // namespace

void check_device_index(c10::DeviceIndex index) {
  TORCH_CHECK_INDEX(
      index >= 0 && index < kDeviceCount,
      "sealed: device index ",
      static_cast<int>(index),
      " is out of range; there are ",
      static_cast<int>(kDeviceCount),
      " sealed devices");
}

c10::DeviceIndex current_device() {
  return tls_device;
}

void set_device(c10::DeviceIndex index) {
  check_device_index(index);
  tls_device = index;
}

} // namespace torch_sealed
