// Device literals and idioms in C++ (AD95x): findings, then look-alikes that are not.
#include <torch/extension.h>

at::Tensor add(const at::Tensor& x, const at::Tensor& y) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  TORCH_CHECK(y.device().is_cuda(), "y must be a CUDA tensor");
  auto opts = x.options().device(at::kCUDA);
  auto z = torch::zeros({4}, torch::TensorOptions().device(torch::kCUDA, 0));
  if (x.device().type() == c10::DeviceType::CUDA) {
  }
  if (y.device().type() == c10::kCUDA || y.device().type() == DeviceType::CUDA) {
  }
  at::Device d(kCUDA, 1);
  auto w = x.cpu().cuda();
  auto p = &x;
  auto q = p->cuda();
  return at::add(z, w);
}

void not_findings(const at::Tensor& x) {
  // at::kCUDA in a comment, x.cuda() in a comment
  const char* s = "at::kCUDA x.is_cuda()";
  auto key = c10::DispatchKey::CUDA;
  auto backend = c10::Backend::CUDA;
  bool cuda = is_cuda(x);
  int kCUDAish = 0;
#if 0
  auto dead = x.cuda();
#endif
}
