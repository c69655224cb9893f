// The boxed fallback: any operator without an acc kernel runs its peer's
// (CPU's or CUDA's) kernel on peer tensors that alias the acc memory. Nothing is copied: results that
// view an input are re-wrapped as acc views of the input's storage, fresh
// results are adopted as acc tensors, and in-place or out= arguments that the
// peer kernel resized or re-strided are updated to match.
#include "acc.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace torch_acc {
namespace {

bool is_generator_argument(const c10::Argument& argument) {
  // Built once: creating the type allocates, and this runs for every argument of every call.
  static const c10::TypePtr optional_generator =
      c10::OptionalType::create(c10::GeneratorType::get());
  return argument.type()->isSubtypeOf(*optional_generator);
}

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
        value = to_peer(value.toTensor(), written);
      } else if (value.isTensorList()) {
        auto list = value.toTensorList().copy();
        for (size_t j = 0; j < list.size(); ++j) {
          list.set(j, to_peer(list.get(j), written));
        }
        value = std::move(list);
      } else if (value.isList() && value.toList().elementType()->isSubtypeOf(
                                       *c10::OptionalType::ofTensor())) {
        auto list = value.toList().copy();
        for (size_t j = 0; j < list.size(); ++j) {
          c10::IValue element = list.get(j);
          if (element.isTensor()) {
            list.set(j, to_peer(element.toTensor(), written));
          }
        }
        value = std::move(list);
      } else if (value.isDevice() && value.toDevice().is_privateuseone()) {
        note_device(value.toDevice());
        value = peer_device(value.toDevice().index());
      }
    }
    // Generators last: a None generator draws from the default generator of
    // the device the tensors are on. Over CUDA memory, acc's generators are
    // CUDA's own and pass through.
    if constexpr (kPeerType != c10::DeviceType::CPU) {
      return;
    }
    for (size_t i = 0; i < arguments.size(); ++i) {
      auto& value = (*stack)[begin + i];
      if (!is_generator_argument(arguments[i])) {
        continue;
      }
      if (value.isGenerator() && value.toGenerator().device().is_privateuseone()) {
        value = borrow_generator(value.toGenerator());
      } else if (value.isNone()) {
        value = borrow_generator(default_generator(device().index()));
      }
    }
  }

  void finish(torch::jit::Stack* stack) {
    for (auto& [acc, cpu] : generators_) {
      acc.set_state(cpu.get_state());
    }
    for (auto& [acc, peer] : written_) {
      sync_from_peer_alias(acc, peer);
    }
    const size_t returns = schema_.returns().size();
    const size_t begin = stack->size() - returns;
    for (size_t i = 0; i < returns; ++i) {
      auto& value = (*stack)[begin + i];
      if (value.isTensor()) {
        value = to_acc(value.toTensor());
      } else if (value.isTensorList()) {
        auto list = value.toTensorList();
        std::vector<at::Tensor> out;
        out.reserve(list.size());
        for (const at::Tensor& t : list) {
          out.push_back(to_acc(t));
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

  at::Tensor to_peer(const at::Tensor& t, bool written) {
    if (!t.defined() || !t.is_privateuseone()) {
      return t;
    }
    note_device(t.device());
    at::Tensor peer = peer_alias(t);
    by_alias_.emplace_back(peer.storage().unsafeGetStorageImpl(), t);
    if (written) {
      written_.emplace_back(t, peer);
    }
    return peer;
  }

  at::Generator borrow_generator(at::Generator acc) {
    locks_.emplace_back(acc.mutex());
    auto cpu = at::make_generator<at::CPUGeneratorImpl>();
    cpu.set_state(acc.get_state());
    generators_.emplace_back(acc, cpu);
    return cpu;
  }

  at::Tensor to_acc(const at::Tensor& t) {
    if (!t.defined() || t.device().type() != kPeerType) {
      return t;
    }
    for (auto& [acc, peer] : written_) {
      if (peer.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) {
        return acc;  // an in-place or out= operator returning its argument
      }
    }
    const c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
    auto it = std::find_if(by_alias_.begin(), by_alias_.end(), [&](const auto& entry) {
      return entry.first == storage;
    });
    if (it != by_alias_.end() && t.storage().data() == it->second.storage().data()) {
      // A view of an input: the same acc storage, with the view's layout.
      auto view = at::detail::make_tensor<c10::TensorImpl>(
          c10::Storage(it->second.storage()),
          c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
          t.dtype());
      view.unsafeGetTensorImpl()->set_sizes_and_strides(
          t.sizes(), t.strides(), t.storage_offset());
      return view;
    }
    return adopt_as_acc(t, device());
  }

  const c10::FunctionSchema& schema_;
  std::optional<c10::Device> device_;
  // A handful of arguments: a vector beats a hash map.
  std::vector<std::pair<const c10::StorageImpl*, at::Tensor>> by_alias_;
  std::vector<std::pair<at::Tensor, at::Tensor>> written_;
  std::vector<std::pair<at::Generator, at::Generator>> generators_;
  std::vector<std::unique_lock<std::mutex>> locks_;
};

void acc_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  FallbackCall call(op.schema());
  call.prepare(stack);
  op.redispatchBoxed(c10::DispatchKeySet(kPeerKey), stack);
  call.finish(stack);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&acc_fallback>());
}

// Structured losses whose reducing form a backend without their kernels
// computes through their out= kernel: that path passes the out= kernel the
// meta function's 0-dim result, which the kernel resizes to the inputs'
// shape and back, warning that a non-empty output was resized. The peer's
// own functional kernel runs without that detour.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name : {"mse_loss", "smooth_l1_loss", "huber_loss"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&acc_fallback>());
  }
}

// Group norm runs the peer's kernels too: otherwise native_group_norm's
// CompositeExplicitAutograd kernel takes acc's calls, and before torch 2.15 it
// views a channels_last input as (N, groups, -1), which fails. ATen hands a
// PrivateUse1 device its input in the layout it came in, and CUDA's kernels
// take only contiguous (NCHW) tensors, as CUDA's own group_norm makes them;
// the CPU's take either layout.
void group_norm_on_peer(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if constexpr (kPeerKey == c10::DispatchKey::CUDA) {
    const size_t arguments = op.schema().arguments().size();
    for (size_t i = stack->size() - arguments; i < stack->size(); ++i) {
      auto& value = (*stack)[i];
      if (value.isTensor() && value.toTensor().defined()) {
        value = value.toTensor().contiguous();
      }
    }
  }
  acc_fallback(op, stack);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name : {"native_group_norm", "native_group_norm_backward"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&group_norm_on_peer>());
  }
}

} // namespace
} // namespace torch_acc
