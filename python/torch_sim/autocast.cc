// torch.autocast("sim") (sim_backend.h): the casting policy CUDA has, from
// the op lists PyTorch keeps for every backend to reuse (ATen/autocast_mode.h:
// AT_FORALL_LOWER_PRECISION_FP and the others), registered for
// AutocastPrivateUse1. PyTorch registers no fallthrough for that key itself,
// so the operators outside the lists get one here.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

#include "sim_backend.h"

namespace anydev_torch {
namespace {

// As at::autocast's (autocast_mode.cpp, not exported): the message CUDA gives.
at::Tensor BinaryCrossEntropyBanned(const at::Tensor&, const at::Tensor&,
                                    const std::optional<at::Tensor>&, int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
              "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
              "layer.\nIn this case, combine the two layers using "
              "torch.nn.functional.binary_cross_entropy_with_logits\nor "
              "torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and "
              "BCEWithLogits are\nsafe to autocast.");
}

}  // namespace

void RegisterAutocast() {
  // The op lists name ATen's types unqualified (they are expanded inside
  // namespace at in PyTorch).
  using at::IntArrayRef;
  using at::Scalar;
  using at::ScalarType;
  using at::Tensor;
  // Leaked: a Library unregisters its operators when destroyed.
  auto* fallthrough = new torch::Library(torch::Library::IMPL, "_",
                                         c10::DispatchKey::AutocastPrivateUse1, __FILE__, __LINE__);
  fallthrough->fallback(torch::CppFunction::makeFallthrough());

  torch::Library& m = *new torch::Library(
      torch::Library::IMPL, "aten", c10::DispatchKey::AutocastPrivateUse1, __FILE__, __LINE__);
#define ANYDEV_SIM_LOWER_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define ANYDEV_SIM_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define ANYDEV_SIM_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define ANYDEV_SIM_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(ANYDEV_SIM_LOWER_PRECISION_FP)
  AT_FORALL_FP32(ANYDEV_SIM_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(ANYDEV_SIM_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(ANYDEV_SIM_PROMOTE)
#undef ANYDEV_SIM_LOWER_PRECISION_FP
#undef ANYDEV_SIM_FP32
#undef ANYDEV_SIM_FP32_SET_OPT_DTYPE
#undef ANYDEV_SIM_PROMOTE
  // As on CUDA: binary_cross_entropy is unsafe to autocast.
  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"),
         TORCH_FN(BinaryCrossEntropyBanned));
}

}  // namespace anydev_torch
