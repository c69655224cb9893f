// torch.autocast("acc"): the AutocastPrivateUse1 key gets CUDA's policies.
// Every operator falls through the key unless a policy below casts its
// arguments first (lower precision for products and convolutions, fp32 for
// ops that lose accuracy in it, the widest type for mixed-input ops), so an
// op's dtype under autocast on acc is the one it has under autocast on cuda.
// The op lists are ATen's own (ATen/autocast_mode.h), which CUDA registers.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace {

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

} // namespace

#define ACC_LOWER_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define ACC_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define ACC_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define ACC_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)

// The op lists name their types unqualified, as ATen's own namespace sees
// them (and the types differ between releases): they are expanded there.
namespace at {
namespace {

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  AT_FORALL_LOWER_PRECISION_FP(ACC_LOWER_PRECISION_FP)
  AT_FORALL_FP32(ACC_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(ACC_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(ACC_PROMOTE)
}

} // namespace
} // namespace at
