// Current device, streams and events. Every acc operation completes before it
// returns, so streams order nothing: they are ids (stream 0 is the default),
// events are timestamps, and every query reports completion.
#include "../acc.h"

#include <atomic>
#include <chrono>

#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace torch_acc {
namespace {

thread_local c10::DeviceIndex tls_device = 0;
thread_local c10::StreamId tls_stream[kDeviceCount] = {};
std::atomic<c10::StreamId> next_stream_id[kDeviceCount] = {};

struct Event {
  c10::DeviceIndex device;
  double time_ms = 0;
  bool recorded = false;
};

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch())
      .count();
}

c10::Device acc_device(c10::DeviceIndex index) {
  return c10::Device(c10::DeviceType::PrivateUse1, index);
}

struct AccGuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override {
    return c10::DeviceType::PrivateUse1;
  }

  c10::Device exchangeDevice(c10::Device device) const override {
    const auto previous = getDevice();
    setDevice(device);
    return previous;
  }

  c10::Device getDevice() const override {
    return acc_device(tls_device);
  }

  void setDevice(c10::Device device) const override {
    TORCH_CHECK(device.is_privateuseone(), "acc: expected an acc device, got ", device);
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
    const auto index = device.index() >= 0 ? device.index() : tls_device;
    return c10::Stream(c10::Stream::UNSAFE, acc_device(index), tls_stream[index]);
  }

  c10::Stream getDefaultStream(c10::Device device) const override {
    const auto index = device.index() >= 0 ? device.index() : tls_device;
    return c10::Stream(c10::Stream::UNSAFE, acc_device(index), 0);
  }

  c10::Stream getNewStream(c10::Device device, int priority = 0) const override {
    const auto index = device.index() >= 0 ? device.index() : tls_device;
    check_device_index(index);
    return c10::Stream(c10::Stream::UNSAFE, acc_device(index), ++next_stream_id[index]);
  }

  c10::Stream getStreamFromGlobalPool(c10::Device device, bool high_priority = false)
      const override {
    return getNewStream(device, high_priority ? -1 : 0);
  }

  c10::Stream exchangeStream(c10::Stream stream) const override {
    const auto previous = getStream(stream.device());
    tls_stream[stream.device_index()] = stream.id();
    return previous;
  }

  void* getStreamNativeHandle(const c10::Stream stream) const override {
    return reinterpret_cast<void*>(
        (static_cast<intptr_t>(stream.device_index()) << 32) | (stream.id() + 1));
  }

  void destroyEvent(void* event, const c10::DeviceIndex /*device_index*/)
      const noexcept override {
    delete static_cast<Event*>(event);
  }

  void record(
      void** event,
      const c10::Stream& stream,
      const c10::DeviceIndex device_index,
      const c10::EventFlag /*flag*/) const override {
    TORCH_CHECK(
        device_index == -1 || device_index == stream.device_index(),
        "acc: event on device ",
        device_index,
        " cannot be recorded on a stream of device ",
        stream.device_index());
    if (*event == nullptr) {
      *event = new Event{stream.device_index()};
    }
    auto* e = static_cast<Event*>(*event);
    e->time_ms = now_ms();
    e->recorded = true;
  }

  void block(void* /*event*/, const c10::Stream& /*stream*/) const override {}

  bool queryEvent(void* /*event*/) const override {
    return true;
  }

  void synchronizeEvent(void* /*event*/) const override {}

  double elapsedTime(void* start, void* end, const c10::DeviceIndex /*device_index*/)
      const override {
    auto* a = static_cast<Event*>(start);
    auto* b = static_cast<Event*>(end);
    TORCH_CHECK(
        a != nullptr && b != nullptr && a->recorded && b->recorded,
        "acc: both events must be recorded before measuring elapsed time");
    return b->time_ms - a->time_ms;
  }

  c10::DeviceIndex deviceCount() const noexcept override {
    return kDeviceCount;
  }

  bool queryStream(const c10::Stream& /*stream*/) const override {
    return true;
  }

  void synchronizeStream(const c10::Stream& /*stream*/) const override {}

  void synchronizeDevice(const c10::DeviceIndex /*device_index*/) const override {}

  void recordDataPtrOnStream(const c10::DataPtr& /*data_ptr*/, const c10::Stream& /*stream*/)
      const override {}
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, AccGuardImpl);

} // namespace

void check_device_index(c10::DeviceIndex index) {
  TORCH_CHECK_INDEX(
      index >= 0 && index < kDeviceCount,
      "acc: device index ",
      static_cast<int>(index),
      " is out of range; there are ",
      static_cast<int>(kDeviceCount),
      " acc devices");
}

c10::DeviceIndex device_count() {
  return kDeviceCount;
}

c10::DeviceIndex current_device() {
  return tls_device;
}

void set_device(c10::DeviceIndex index) {
  check_device_index(index);
  tls_device = index;
}

int64_t raw_stream(c10::DeviceIndex index) {
  check_device_index(index);
  return (static_cast<int64_t>(index) << 32) | (tls_stream[index] + 1);
}

} // namespace torch_acc
