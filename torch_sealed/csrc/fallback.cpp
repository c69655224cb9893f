// The boxed fallback: every operator without a sealed kernel runs the CPU's,
// on CPU views of the sealed memory, which is open for exactly that call.
// Results that view an input become sealed views of the input's storage;
// fresh results are copied into sealed memory; in-place and out= arguments
// follow what the CPU kernel did to their sizes and memory.
#include "sealed.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>

#include <vector>

namespace torch_sealed {
namespace {

bool is_written(const c10::Argument& argument) {
  return argument.alias_info() != nullptr && argument.alias_info()->isWrite();
}

class FallbackCall {
 public:
  explicit FallbackCall(const c10::FunctionSchema& schema) : schema_(schema) {}

  void prepare(torch::jit::Stack* stack) {
    const auto& arguments = schema_.arguments();
    const size_t begin = stack->size() - arguments.size();
    for (size_t i = 0; i < arguments.size(); ++i) {
      auto& value = (*stack)[begin + i];
      const bool written = is_written(arguments[i]);
      if (value.isTensor()) {
        value = to_cpu(value.toTensor(), written);
      } else if (value.isTensorList()) {
        auto list = value.toTensorList().copy();
        for (size_t j = 0; j < list.size(); ++j) {
          list.set(j, to_cpu(list.get(j), written));
        }
        value = std::move(list);
      } else if (value.isList() && value.toList().elementType()->isSubtypeOf(
                                       *c10::OptionalType::ofTensor())) {
        auto list = value.toList().copy();
        for (size_t j = 0; j < list.size(); ++j) {
          c10::IValue element = list.get(j);
          if (element.isTensor()) {
            list.set(j, to_cpu(element.toTensor(), written));
          }
        }
        value = std::move(list);
      } else if (value.isDevice() && value.toDevice().is_privateuseone()) {
        note_device(value.toDevice());
        value = c10::Device(c10::kCPU);
      }
    }
  }

  void finish(torch::jit::Stack* stack) {
    for (auto& [sealed, cpu] : written_) {
      follow(sealed, cpu);
    }
    const size_t returns = schema_.returns().size();
    const size_t begin = stack->size() - returns;
    for (size_t i = 0; i < returns; ++i) {
      auto& value = (*stack)[begin + i];
      if (value.isTensor()) {
        value = to_sealed(value.toTensor());
      } else if (value.isTensorList()) {
        std::vector<at::Tensor> out;
        for (const at::Tensor& t : value.toTensorList()) {
          out.push_back(to_sealed(t));
        }
        value = c10::List<at::Tensor>(out);
      }
    }
  }

 private:
  c10::Device device() const {
    return device_.value_or(c10::Device(c10::DeviceType::PrivateUse1, current_device()));
  }

  void note_device(c10::Device device) {
    if (!device_.has_value() && device.index() >= 0) {
      device_ = device;
    }
  }

  at::Tensor to_cpu(const at::Tensor& t, bool written) {
    if (!t.defined() || !t.is_privateuseone()) {
      return t;
    }
    note_device(t.device());
    open_.open(t);
    at::Tensor cpu = cpu_alias(t);
    aliases_.emplace_back(cpu.storage().unsafeGetStorageImpl(), t);
    if (written) {
      written_.emplace_back(t, cpu);
    }
    return cpu;
  }

  // After the CPU kernel wrote through `cpu`, a view of `sealed`: follow a
  // move to new (CPU) memory, and new sizes and strides.
  void follow(const at::Tensor& sealed, const at::Tensor& cpu) {
    auto* impl = sealed.unsafeGetTensorImpl();
    if (cpu.storage().data() != sealed.storage().data() ||
        cpu.storage().nbytes() != sealed.storage().nbytes()) {
      impl->set_storage_keep_dtype(sealed_copy(cpu, sealed.device()).storage());
    }
    impl->set_sizes_and_strides(cpu.sizes(), cpu.strides(), cpu.storage_offset());
  }

  at::Tensor to_sealed(const at::Tensor& t) {
    if (!t.defined() || !t.is_cpu()) {
      return t;
    }
    for (auto& [sealed, cpu] : written_) {
      if (cpu.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) {
        return sealed; // an in-place or out= operator returning its argument
      }
    }
    const c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
    for (auto& [cpu_storage, sealed] : aliases_) {
      if (cpu_storage == storage && t.storage().data() == sealed.storage().data()) {
        // A view of an input: the input's sealed storage, the view's layout.
        return with_layout(sealed.storage(), c10::DispatchKey::PrivateUse1, t);
      }
    }
    for (auto& [cpu_storage, sealed] : fresh_) {
      if (cpu_storage == storage) { // another result over the same fresh memory
        return with_layout(sealed.storage(), c10::DispatchKey::PrivateUse1, t);
      }
    }
    at::Tensor sealed = sealed_copy(t, device());
    fresh_.emplace_back(storage, sealed);
    return sealed;
  }

  const c10::FunctionSchema& schema_;
  std::optional<c10::Device> device_;
  std::vector<std::pair<const c10::StorageImpl*, at::Tensor>> aliases_;
  std::vector<std::pair<const c10::StorageImpl*, at::Tensor>> fresh_;
  std::vector<std::pair<at::Tensor, at::Tensor>> written_;
  // Declared last, so destroyed first: the memory is sealed again while the
  // tensors above still keep it alive.
  Unsealed open_;
};

void sealed_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  FallbackCall call(op.schema());
  call.prepare(stack);
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
  call.finish(stack);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sealed_fallback>());
}

// Structured losses whose reducing form a backend without their kernels
// computes through their out= kernel: that path passes the out= kernel the
// meta function's 0-dim result, which the kernel resizes to the inputs'
// shape and back, warning that a non-empty output was resized. The CPU's own
// functional kernel runs without that detour.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name : {"mse_loss", "smooth_l1_loss", "huber_loss"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&sealed_fallback>());
  }
}

} // namespace
} // namespace torch_sealed
