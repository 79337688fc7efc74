// The operators of the sim backend (sim_backend.h).
//
// Note [Zero-copy CPU fallback]: sim memory is host memory, so PyTorch's CPU
// kernels can work on it in place. Every operator without a sim kernel of its
// own reaches SimFallback, which
//   1. gives each sim tensor argument a CPU twin over the same memory (its
//      own TensorImpl and StorageImpl, one StorageImpl per sim storage, so
//      aliasing between arguments is kept), replaces sim device arguments by
//      the CPU and the generator by the sim device's (Note [Sim generators]);
//   2. runs the operator's CPU kernel (redispatchBoxed to the CPU key);
//   3. maps the results back: a result that is an argument's twin is that
//      argument; one that shares a twin's storage is a view of the sim
//      storage; a fresh CPU tensor is copied into sim memory (one memcpy). A
//      twin the kernel resized (an out= argument) hands its new memory, which
//      came from the sim allocator, to the sim storage.
// Structured operators (add, mm, relu, ... most of what a model runs) reach
// the fallback through their out= variant with an output PyTorch already
// allocated on sim, so their results are written in place and never copied.
// PyTorch's own at::native::cpu_fallback (used by its OpenReg test backend)
// copies every argument to the CPU and back instead.
//
// Note [Operators and streams]: operators run on the calling thread, as the
// CPU kernels they are; asynchronous work lives on anydev's sim streams
// (non_blocking copies, event records and waits, anydev.testing.sleep). An
// operator first waits for the work queued on the calling thread's current
// stream of its device, so it is ordered after that work exactly as a kernel
// launched on that stream would be, and work queued after it (an event record)
// comes after it. Work on other streams is not waited for: a tensor used on
// another stream without wait_stream races, as on CUDA.
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/op_registration/op_registration.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/ops/_local_scalar_dense_native.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/_fused_sdp_choice.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/util/SmallVector.h>
#include <torch/library.h>

#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "sim_backend.h"

namespace anydev_torch {
namespace {

constexpr c10::DispatchKeySet kSimKeys{c10::DispatchKey::PrivateUse1};
constexpr c10::DispatchKeySet kCpuKeys{c10::DispatchKey::CPU};

int DeviceIndexOf(const at::Tensor& t) {
  const int index = t.device().index();
  return index < 0 ? CurrentDevice() : index;
}

void CopyBits(const at::Tensor& from, c10::TensorImpl* to) {
  if (from.is_conj()) to->_set_conj(true);
  if (from.is_neg()) to->_set_neg(true);
}

// Returns a CPU tensor over the memory of `sim`'s storage `storage` (its
// twin), with `sim`'s shape.
at::Tensor TwinOf(const at::Tensor& sim, c10::Storage storage) {
  auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(storage), kCpuKeys, sim.dtype());
  impl->set_sizes_and_strides(sim.sizes(), sim.strides(), sim.storage_offset());
  CopyBits(sim, impl.get());
  return at::Tensor(std::move(impl));
}

// A CPU storage over the memory of the sim storage `sim`. With `resizable`,
// a resize allocates from `sim`'s device allocator (see Aliases::SyncBack).
c10::Storage TwinStorage(c10::StorageImpl* sim, bool write, int device, bool resizable) {
  void* data = write ? sim->mutable_data() : const_cast<void*>(sim->data());
  return c10::Storage(c10::make_intrusive<c10::StorageImpl>(
      c10::StorageImpl::use_byte_size_t(), sim->nbytes(),
      c10::DataPtr(data, c10::Device(c10::kCPU)),
      resizable ? DeviceAllocatorFor(device) : nullptr, resizable && sim->resizable()));
}

// A CPU twin of `sim` for a copy or a read.
at::Tensor CpuTwin(const at::Tensor& sim, bool write) {
  return TwinOf(sim, TwinStorage(sim.storage().unsafeGetStorageImpl(), write, DeviceIndexOf(sim),
                                 /*resizable=*/false));
}

at::Tensor EmptyStridedOn(c10::IntArrayRef size, c10::IntArrayRef stride,
                          c10::ScalarType dtype, int device) {
  return at::detail::empty_strided_generic(size, stride, DeviceAllocatorFor(device), kSimKeys,
                                           dtype);
}

// --- the fallback ----------------------------------------------------------------

class Aliases {
 public:
  explicit Aliases(int device) : device_(device) {}

  // Returns the CPU twin of the sim tensor `sim`.
  at::Tensor Twin(const at::Tensor& sim, bool write) {
    c10::StorageImpl* storage = sim.storage().unsafeGetStorageImpl();
    size_t s = 0;
    while (s < storages_.size() && storages_[s].sim.unsafeGetStorageImpl() != storage) ++s;
    if (s == storages_.size()) {
      c10::Storage twin = TwinStorage(storage, /*write=*/true, device_, /*resizable=*/true);
      storages_.push_back(StorageTwin{sim.storage(), twin, twin.data_ptr().get(), twin.nbytes()});
    }
    at::Tensor twin = TwinOf(sim, storages_[s].twin);
    if (write) args_.push_back(ArgTwin{sim, twin, s});
    else readonly_.push_back(ArgTwin{sim, twin, s});
    return twin;
  }

  // Carries what the CPU kernel did to written twins over to their sim
  // tensors: a resized storage (an out= argument of another size) and new
  // sizes, strides and offsets.
  void SyncBack() {
    for (StorageTwin& s : storages_) {
      c10::StorageImpl* twin = s.twin.unsafeGetStorageImpl();
      if (twin->data_ptr().get() == s.data && twin->nbytes() == s.nbytes) continue;
      // resize_bytes_cpu allocated the new memory from the twin's allocator,
      // the sim device's: hand it to the sim storage.
      c10::StorageImpl* sim = s.sim.unsafeGetStorageImpl();
      sim->set_data_ptr_noswap(std::move(twin->mutable_data_ptr()));
      sim->set_nbytes(twin->nbytes());
    }
    for (ArgTwin& a : args_) {
      c10::TensorImpl* twin = a.twin.unsafeGetTensorImpl();
      c10::TensorImpl* sim = a.sim.unsafeGetTensorImpl();
      if (twin->storage().unsafeGetStorageImpl() !=
          storages_[a.storage].twin.unsafeGetStorageImpl()) {
        // The kernel pointed the argument at a storage of its own (set_):
        // copy that storage into sim memory.
        at::Tensor copy = ToSim(a.twin);
        sim->set_storage_keep_dtype(copy.storage());
        sim->set_sizes_and_strides(copy.sizes(), copy.strides(), copy.storage_offset());
        continue;
      }
      if (twin->sizes() != sim->sizes() || twin->strides() != sim->strides() ||
          twin->storage_offset() != sim->storage_offset()) {
        sim->set_sizes_and_strides(twin->sizes(), twin->strides(), twin->storage_offset());
      }
    }
  }

  // Returns the sim tensor for a result of the CPU kernel.
  at::Tensor ToSim(const at::Tensor& out) {
    if (!out.defined()) return out;
    const c10::TensorImpl* impl = out.unsafeGetTensorImpl();
    for (const ArgTwin& a : args_) {
      if (a.twin.unsafeGetTensorImpl() == impl) return a.sim;
    }
    for (const ArgTwin& a : readonly_) {
      if (a.twin.unsafeGetTensorImpl() == impl) return a.sim;
    }
    if (!out.is_cpu()) return out;
    TORCH_CHECK(out.layout() == c10::kStrided && !out.is_quantized(),
                "sim supports strided tensors only; an operator returned a ", out.layout(),
                " tensor");
    const c10::StorageImpl* storage = out.storage().unsafeGetStorageImpl();
    for (const StorageTwin& s : storages_) {
      if (s.twin.unsafeGetStorageImpl() == storage) return ViewOf(s.sim, out);
    }
    return CopyOf(out);
  }

 private:
  struct StorageTwin {
    c10::Storage sim;
    c10::Storage twin;
    const void* data;  // the twin's memory when made
    size_t nbytes;
  };
  struct ArgTwin {
    at::Tensor sim;
    at::Tensor twin;
    size_t storage;  // index into storages_
  };

  // A sim tensor over `storage` shaped as the CPU view `out`.
  static at::Tensor ViewOf(const c10::Storage& storage, const at::Tensor& out) {
    auto impl = c10::make_intrusive<c10::TensorImpl>(c10::TensorImpl::VIEW, c10::Storage(storage),
                                                     kSimKeys, out.dtype());
    impl->set_sizes_and_strides(out.sizes(), out.strides(), out.storage_offset());
    CopyBits(out, impl.get());
    return at::Tensor(std::move(impl));
  }

  // A sim tensor with the contents of the fresh CPU tensor `out`.
  at::Tensor CopyOf(const at::Tensor& out) {
    at::Tensor sim;
    if (out.is_non_overlapping_and_dense()) {
      // Same strides, so the same bytes in the same places: one memcpy.
      sim = EmptyStridedOn(out.sizes(), out.strides(), out.scalar_type(), device_);
      if (out.numel() > 0) std::memcpy(sim.data_ptr(), out.const_data_ptr(), out.nbytes());
    } else {
      sim = at::detail::empty_generic(out.sizes(), DeviceAllocatorFor(device_), kSimKeys,
                                      out.scalar_type(), std::nullopt);
      at::Tensor twin = CpuTwin(sim, /*write=*/true);
      at::native::copy_(twin, out, false);
    }
    CopyBits(out, sim.unsafeGetTensorImpl());
    return sim;
  }

  int device_;
  c10::SmallVector<StorageTwin, 4> storages_;
  c10::SmallVector<ArgTwin, 4> args_;      // written arguments
  c10::SmallVector<ArgTwin, 4> readonly_;  // the others
};

bool IsWrite(const c10::Argument& arg) {
  return arg.alias_info() != nullptr && arg.alias_info()->isWrite();
}

bool IsOptionalGenerator(const c10::Argument& arg) {
  const c10::TypePtr& type = arg.type();
  return type->kind() == c10::TypeKind::OptionalType &&
         type->expectRef<c10::OptionalType>().getElementType()->kind() ==
             c10::TypeKind::GeneratorType;
}

// What the first pass learns of an operator's arguments.
struct Devices {
  int sim = -1;               // the sim device, -1 if no argument is on sim
  bool cpu_tensor = false;    // a CPU tensor that is not a 0-dim scalar
  void Sim(int index) {
    if (sim < 0) {
      sim = index;
    } else {
      TORCH_CHECK(sim == index, "Expected all tensors to be on the same device, but found at "
                  "least two devices, sim:", sim, " and sim:", index, "!");
    }
  }
  void Note(const at::Tensor& t, bool cpu_allowed) {
    if (!t.defined()) return;
    if (t.device().type() == kSim) {
      Sim(DeviceIndexOf(t));
    } else if (t.is_cpu() && t.dim() != 0 && !cpu_allowed) {
      cpu_tensor = true;
    }
  }
};

void SimFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const std::vector<c10::Argument>& arguments = schema.arguments();
  const size_t first = stack->size() - arguments.size();

  Devices devices;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::IValue& v = (*stack)[first + i];
    if (v.isTensor()) {
      devices.Note(v.toTensor(), false);
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList()) devices.Note(t, false);
    } else if (v.isOptionalTensorList()) {
      // Indices (Tensor?[]) may live on the CPU, as on CUDA (x[cpu_index]).
      for (const std::optional<at::Tensor>& t : v.toOptionalTensorList()) {
        if (t.has_value()) devices.Note(*t, true);
      }
    } else if (v.isDevice() && v.toDevice().type() == kSim) {
      const c10::Device d = v.toDevice();
      devices.Sim(d.has_index() ? d.index() : CurrentDevice());
    }
  }
  if (devices.sim < 0) {
    // Nothing on sim (the dispatcher came here for a sim generator): the CPU
    // kernel says what is wrong ("Expected a 'cpu' device type for generator
    // but found 'sim'").
    op.redispatchBoxed(kCpuKeys, stack);
    return;
  }
  const int device = devices.sim;
  TORCH_CHECK_NOT_IMPLEMENTED(
      op.hasKernelForDispatchKey(c10::DispatchKey::CPU), "Could not run '",
      schema.operator_name(), "' with arguments from the 'sim' backend: anydev's sim runs "
      "operators on PyTorch's CPU kernels, and this operator has none (it exists only for other "
      "devices).");
  TORCH_CHECK(!devices.cpu_tensor, "Expected all tensors to be on the same device, but found at "
              "least two devices, sim:", device, " and cpu!");
  CheckDeviceIndex(device);
  CheckUsable();

  Aliases aliases(device);
  for (size_t i = 0; i < arguments.size(); ++i) {
    c10::IValue& v = (*stack)[first + i];
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (t.defined() && t.device().type() == kSim) v = aliases.Twin(t, IsWrite(arguments[i]));
    } else if (v.isTensorList()) {
      const bool write = IsWrite(arguments[i]);
      c10::List<at::Tensor> list = v.toTensorList();
      c10::List<at::Tensor> twins;
      twins.reserve(list.size());
      for (const at::Tensor& t : list) {
        twins.push_back(t.defined() && t.device().type() == kSim ? aliases.Twin(t, write) : t);
      }
      v = c10::IValue(std::move(twins));
    } else if (v.isOptionalTensorList()) {
      c10::List<std::optional<at::Tensor>> list = v.toOptionalTensorList();
      c10::List<std::optional<at::Tensor>> twins;
      twins.reserve(list.size());
      for (const std::optional<at::Tensor>& t : list) {
        if (t.has_value() && t->defined() && t->device().type() == kSim) {
          twins.push_back(aliases.Twin(*t, false));
        } else {
          twins.push_back(t);
        }
      }
      v = c10::IValue(std::move(twins));
    } else if (v.isDevice()) {
      if (v.toDevice().type() == kSim) v = c10::IValue(c10::Device(c10::kCPU));
    } else if (v.isGenerator()) {
      const at::Generator gen = v.toGenerator();
      std::optional<at::Generator> cpu = CpuGeneratorOf(gen);
      TORCH_CHECK(cpu.has_value(), "Expected a 'sim' device type for generator but found '",
                  gen.device().type(), "'");
      v = c10::IValue(std::move(*cpu));
    } else if (v.isNone() && IsOptionalGenerator(arguments[i])) {
      v = c10::IValue(DefaultCpuGenerator(device));
    }
  }

  WaitForCurrentStream(device);
  op.redispatchBoxed(kCpuKeys, stack);
  aliases.SyncBack();

  const size_t returns = schema.returns().size();
  for (size_t i = stack->size() - returns; i < stack->size(); ++i) {
    c10::IValue& r = (*stack)[i];
    if (r.isTensor()) {
      r = c10::IValue(aliases.ToSim(r.toTensor()));
    } else if (r.isTensorList()) {
      c10::List<at::Tensor> list = r.toTensorList();
      c10::List<at::Tensor> sims;
      sims.reserve(list.size());
      for (const at::Tensor& t : list) sims.push_back(aliases.ToSim(t));
      r = c10::IValue(std::move(sims));
    }
  }
}

// --- native kernels ------------------------------------------------------------

int TargetDevice(std::optional<c10::Device> device_opt) {
  const c10::Device d = c10::device_or_default(device_opt);
  TORCH_CHECK(d.type() == kSim, "sim: expected a sim device, got ", d);
  const int index = d.has_index() ? d.index() : CurrentDevice();
  CheckDeviceIndex(index);
  return index;
}

void CheckFactoryOptions(std::optional<c10::Layout> layout, std::optional<bool> pin_memory) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::kStrided,
              "sim supports strided tensors only, got layout ", c10::layout_or_default(layout));
  TORCH_CHECK(!c10::pinned_memory_or_default(pin_memory), "Only dense CPU tensors can be pinned");
}

at::Tensor Empty(c10::SymIntArrayRef size, std::optional<c10::ScalarType> dtype,
                 std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                 std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  CheckFactoryOptions(layout, pin_memory);
  const int index = TargetDevice(device);
  return at::detail::empty_generic(C10_AS_INTARRAYREF_SLOW(size), DeviceAllocatorFor(index),
                                   kSimKeys, c10::dtype_or_default(dtype), memory_format);
}

at::Tensor EmptyStrided(c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                        std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                        std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  CheckFactoryOptions(layout, pin_memory);
  const int index = TargetDevice(device);
  return EmptyStridedOn(C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride),
                        c10::dtype_or_default(dtype), index);
}

at::Tensor AsStrided(const at::Tensor& self, c10::SymIntArrayRef size,
                     c10::SymIntArrayRef stride, std::optional<c10::SymInt> storage_offset) {
  std::optional<int64_t> offset;
  if (storage_offset.has_value()) offset = storage_offset->expect_int();
  return at::native::as_strided_tensorimpl(self, C10_AS_INTARRAYREF_SLOW(size),
                                           C10_AS_INTARRAYREF_SLOW(stride), offset);
}

at::Tensor View(const at::Tensor& self, c10::SymIntArrayRef size) {
  return at::native::view(self, C10_AS_INTARRAYREF_SLOW(size));
}

at::Tensor ReshapeAlias(const at::Tensor& self, c10::SymIntArrayRef size,
                        c10::SymIntArrayRef stride) {
  return at::native::_reshape_alias(self, C10_AS_INTARRAYREF_SLOW(size),
                                    C10_AS_INTARRAYREF_SLOW(stride));
}

const at::Tensor& Resize(const at::Tensor& self, c10::SymIntArrayRef size,
                         std::optional<c10::MemoryFormat> memory_format) {
  // Growing copies the old contents on this thread: wait for queued work.
  WaitForCurrentStream(DeviceIndexOf(self));
  return at::native::resize_(self, C10_AS_INTARRAYREF_SLOW(size), memory_format);
}

c10::Scalar LocalScalarDense(const at::Tensor& self) {
  CheckUsable();
  WaitForCurrentStream(DeviceIndexOf(self));
  return at::native::_local_scalar_dense_cpu(CpuTwin(self, false));
}

bool IsPinned(const at::Tensor& host) {
  return host.is_cpu() && host.storage().data() != nullptr &&
         at::detail::getPrivateUse1Hooks().isPinnedPtr(host.storage().data());
}

// Copies between sim devices and between sim and the CPU (copy_ and .to()
// come here: at::native::copy_ redispatches to _copy_from when a tensor is
// on a PrivateUse1 device). `src` is the operator's `self`.
at::Tensor CopyFrom(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  const bool src_sim = src.device().type() == kSim;
  const bool dst_sim = dst.device().type() == kSim;
  TORCH_CHECK((src_sim || src.is_cpu()) && (dst_sim || dst.is_cpu()),
              "sim: cannot copy from ", src.device(), " to ", dst.device(),
              " (sim copies to and from sim and the CPU)");
  CheckUsable();
  if (dst.numel() == 0) return dst;
  if (non_blocking && src_sim != dst_sim && src.dtype() == dst.dtype() &&
      src.sizes() == dst.sizes() && src.is_contiguous() && dst.is_contiguous() &&
      src.is_conj() == dst.is_conj() && src.is_neg() == dst.is_neg()) {
    const at::Tensor& host = src_sim ? dst : src;
    if (IsPinned(host)) {
      // As cudaMemcpyAsync from pinned memory: queued on the current stream,
      // returns at once; the host storage lives until the copy is done.
      const int device = DeviceIndexOf(src_sim ? src : dst);
      ANYDEV_TORCH_CHECK(
          g_api->copy_async(ANYDEV_SIM, device, -1, dst.data_ptr(), src.const_data_ptr(),
                            dst.nbytes(), src_sim ? ANYDEV_DEVICE_TO_HOST : ANYDEV_HOST_TO_DEVICE),
          "copy");
      KeepAliveUntilStreamDone(device, host.storage());
      return dst;
    }
  }
  if (src_sim) WaitForCurrentStream(DeviceIndexOf(src));
  if (dst_sim && !(src_sim && DeviceIndexOf(src) == DeviceIndexOf(dst))) {
    WaitForCurrentStream(DeviceIndexOf(dst));
  }
  at::Tensor to = dst_sim ? CpuTwin(dst, true) : dst;
  at::native::copy_(to, src_sim ? CpuTwin(src, false) : src, false);
  return dst;
}

at::Tensor CopyFromAndResize(const at::Tensor& src, const at::Tensor& dst) {
  if (dst.device().type() == kSim) {
    Resize(dst, c10::fromIntArrayRefSlow(src.sizes()), std::nullopt);
  } else {
    at::native::resize_(dst, src.sizes(), std::nullopt);
  }
  return CopyFrom(src, dst, false);
}

at::Tensor& SetStorage(at::Tensor& self, c10::Storage source, c10::SymInt storage_offset,
                       c10::SymIntArrayRef size, c10::SymIntArrayRef stride) {
  return at::native::set_storage_cpu_(self, std::move(source), storage_offset.expect_int(),
                                      C10_AS_INTARRAYREF_SLOW(size),
                                      C10_AS_INTARRAYREF_SLOW(stride));
}

at::Tensor& SetSourceStorage(at::Tensor& self, c10::Storage source) {
  return at::native::set_(self, std::move(source));
}

at::Tensor& SetSourceTensor(at::Tensor& self, const at::Tensor& source) {
  return at::native::set_tensor_(self, source);
}

at::Tensor& SetEmpty(at::Tensor& self) {
  const int device = DeviceIndexOf(self);
  c10::Allocator* allocator = DeviceAllocatorFor(device);
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, allocator->allocate(0), allocator,
                       /*resizable=*/true);
  self.unsafeGetTensorImpl()->set_storage_keep_dtype(std::move(storage));
  self.unsafeGetTensorImpl()->set_sizes_contiguous({0});
  return self;
}

void RecordStream(at::Tensor& self, c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == kSim, "record_stream: expected a sim stream, got ",
              stream);
  c10::getDeviceAllocator(kSim)->recordStream(self.storage().data_ptr(), stream);
}

// Note [Overrideable convolution]: at::_convolution sends a tensor of a
// PrivateUse1 device to convolution_overrideable (ConvBackend::Overrideable),
// whose default throws, rather than to an operator the fallback could run.
// These run the CPU's own choice of convolution on the twins.
at::Tensor ConvolutionOverrideable(const at::Tensor& input, const at::Tensor& weight,
                                   const std::optional<at::Tensor>& bias,
                                   c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                   c10::SymIntArrayRef dilation, bool transposed,
                                   c10::SymIntArrayRef output_padding, c10::SymInt groups) {
  const int device = DeviceIndexOf(input);
  CheckUsable();
  WaitForCurrentStream(device);
  Aliases twins(device);
  std::optional<at::Tensor> bias_twin;
  if (bias.has_value() && bias->defined()) bias_twin = twins.Twin(*bias, false);
  return twins.ToSim(at::convolution(
      twins.Twin(input, false), twins.Twin(weight, false), bias_twin,
      C10_AS_INTARRAYREF_SLOW(stride), C10_AS_INTARRAYREF_SLOW(padding),
      C10_AS_INTARRAYREF_SLOW(dilation), transposed, C10_AS_INTARRAYREF_SLOW(output_padding),
      groups.expect_int()));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ConvolutionBackwardOverrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation,
    bool transposed, c10::SymIntArrayRef output_padding, c10::SymInt groups,
    std::array<bool, 3> output_mask) {
  const int device = DeviceIndexOf(input);
  CheckUsable();
  WaitForCurrentStream(device);
  Aliases twins(device);
  // The bias has one element per output channel.
  const int64_t channels = transposed ? weight.size(1) * groups.expect_int() : weight.size(0);
  const std::vector<int64_t> bias_sizes{channels};
  auto [grad_input, grad_weight, grad_bias] = at::convolution_backward(
      twins.Twin(grad_output, false), twins.Twin(input, false), twins.Twin(weight, false),
      output_mask[2] ? std::optional<at::IntArrayRef>(bias_sizes) : std::nullopt,
      C10_AS_INTARRAYREF_SLOW(stride), C10_AS_INTARRAYREF_SLOW(padding),
      C10_AS_INTARRAYREF_SLOW(dilation), transposed, C10_AS_INTARRAYREF_SLOW(output_padding),
      groups.expect_int(), output_mask);
  return {twins.ToSim(grad_input), twins.ToSim(grad_weight), twins.ToSim(grad_bias)};
}

// Note [Attention on sim]: scaled_dot_product_attention picks its kernel
// through _fused_sdp_choice_stub, which has no PrivateUse1 entry, so sim would
// get the math decomposition: other numbers than the CPU's, and slower. sim's
// entry asks for the CPU's choice (the _fused_sdp_choice operator on the
// twins); the kernel chosen (_scaled_dot_product_flash_attention_for_cpu)
// then runs through the fallback.
int64_t FusedSdpChoice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                       const std::optional<at::Tensor>& attn_mask, double dropout_p,
                       bool is_causal, std::optional<double> scale, bool enable_gqa) {
  Aliases twins(DeviceIndexOf(query));
  auto twin = [&twins](const at::Tensor& t) {
    return t.defined() && t.device().type() == kSim ? twins.Twin(t, false) : t;
  };
  std::optional<at::Tensor> mask;
  if (attn_mask.has_value()) mask = twin(*attn_mask);
  return at::_fused_sdp_choice(twin(query), twin(key), twin(value), mask, dropout_p, is_causal,
                               scale, enable_gqa);
}

// anydev_sim::default_generator(int device) -> Generator?: the default
// generator of a sim device, as torch.cuda.default_generators.
at::Generator DefaultGeneratorOp(int64_t device) {
  return DefaultGeneratorFor(static_cast<int>(device));
}

}  // namespace

void RegisterKernels() {
  // Leaked: a Library unregisters its operators when destroyed.
  auto* aten = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1,
                                  __FILE__, __LINE__);
  aten->impl("empty.memory_format", TORCH_FN(Empty));
  aten->impl("empty_strided", TORCH_FN(EmptyStrided));
  aten->impl("as_strided", TORCH_FN(AsStrided));
  aten->impl("view", TORCH_FN(View));
  aten->impl("_reshape_alias", TORCH_FN(ReshapeAlias));
  aten->impl("resize_", TORCH_FN(Resize));
  aten->impl("_local_scalar_dense", TORCH_FN(LocalScalarDense));
  aten->impl("_copy_from", TORCH_FN(CopyFrom));
  aten->impl("_copy_from_and_resize", TORCH_FN(CopyFromAndResize));
  aten->impl("set_.source_Storage_storage_offset", TORCH_FN(SetStorage));
  aten->impl("set_.source_Storage", TORCH_FN(SetSourceStorage));
  aten->impl("set_.source_Tensor", TORCH_FN(SetSourceTensor));
  aten->impl("set_", TORCH_FN(SetEmpty));
  aten->impl("record_stream", TORCH_FN(RecordStream));
  aten->impl("convolution_overrideable", TORCH_FN(ConvolutionOverrideable));
  aten->impl("convolution_backward_overrideable", TORCH_FN(ConvolutionBackwardOverrideable));

  // Note [CPU kernels over composites]: a few operators have both a CPU
  // kernel and a CompositeExplicitAutograd one (native_layer_norm,
  // native_group_norm, addr, ...); PrivateUse1 would get the composite, a
  // decomposition that gives other numbers than the CPU (layer norm differs in
  // the last bits). sim runs them on the CPU kernel, as every other operator.
  c10::Dispatcher& dispatcher = c10::Dispatcher::singleton();
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    std::optional<c10::OperatorHandle> op = dispatcher.findOp(name);
    if (!op || !op->hasKernelForDispatchKey(c10::DispatchKey::CPU) ||
        !op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) ||
        op->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) {
      continue;
    }
    const std::string qualified =
        name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
    aten->impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&SimFallback>());
  }

  at::native::_fused_sdp_choice_stub.set_privateuse1_dispatch_ptr(&FusedSdpChoice);

  auto* fallback = new torch::Library(torch::Library::IMPL, "_", c10::DispatchKey::PrivateUse1,
                                      __FILE__, __LINE__);
  fallback->fallback(torch::CppFunction::makeFromBoxedFunction<&SimFallback>());

  auto* ops = new torch::Library(torch::Library::DEF, "anydev_sim", std::nullopt, __FILE__,
                                 __LINE__);
  ops->def("default_generator(int device) -> Generator?", TORCH_FN(DefaultGeneratorOp));
}

}  // namespace anydev_torch
