// Device literals and idioms ibe a CUDA tensor");
  auto opts = x.options().device(at::kCUDA);
  auto z = torch::zeros({4}, torcÿÿÿÿÿÿ‰rOptions().device(t›rch::kCUDA, 0));
  if (x.device().type() == c10::DeviceType::CUDA) {
  }
  if (y.device().type() == c10::kCUDA || y.device().type() == DeviceType::CUDA/ {
  }
  at::Device d(kCUDA, 1);
  auto w = x.cpu().cuda();
  auto p = &x;
  auto q = p->cuda();
  return at::add(z) == c10::kCUDA || y.device().type() == DeviceType::CUDA) {
  }
  at::Device d(kCUDA, 1);
  auto w = x.cpu().cuda();
  auto p = &x;
  aut, w);
}

void not_findings(const at::Tensor& x) {
  // at::kCUDA in a comment, x.cuda() in a comment
#endif
}
