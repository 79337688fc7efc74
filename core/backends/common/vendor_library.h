// backends/common/vendor_library.h: a vendor runtime opened with dlopen, and
// the X-macro machinery that fills a struct of function pointers from it.
//
// Vendor runtimes are never linked: a backend opens its library when it is
// probed, so one build of anydev runs on machines with and without the
// library, and a missing library is a reason in anydev.backends(), not an
// import error. Libraries are never closed: their handles must outlive every
// static destructor that may still call into them.
//
// Example (one symbol list per library, in the vendor's api header):
//   #define ANYDEV_CUDART_SYMBOLS(_) _(GetDeviceCount, cudaGetDeviceCount) ...
//   struct CudaRt { ANYDEV_CUDART_SYMBOLS(ANYDEV_DECLARE_VENDOR_FN) };
//   ANYDEV_ASSIGN_OR_RETURN(VendorLibrary lib, VendorLibrary::Open(kCudaRuntimeLibrary));
//   CudaRt* table = ...;   // the names `lib` and `table` are what the macro uses
//   ANYDEV_CUDART_SYMBOLS(ANYDEV_RESOLVE_VENDOR_FN)
#ifndef ANYDEV_BACKENDS_COMMON_VENDOR_LIBRARY_H_
#define ANYDEV_BACKENDS_COMMON_VENDOR_LIBRARY_H_

#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/common/vendor_libraries.h"

namespace anydev::internal {

class VendorLibrary {
 public:
  // Opens the library: the override variable's value when it is set, else the
  // first soname that loads (RTLD_NOW | RTLD_LOCAL). Never prints. The error
  // is Unavailable and reads "cuda: libcudart.so.13 not found (dlopen: ...);
  // also tried libcudart.so.12, libcudart.so".
  static absl::StatusOr<VendorLibrary> Open(const VendorLibrarySpec& spec);

  // Returns the address of `symbol`, or nullptr.
  void* Find(const char* symbol) const;

  // Looks `symbol` up into the function pointer `*fn`; false when missing.
  template <typename Fn>
  bool Resolve(const char* symbol, Fn** fn) const {
    void* address = Find(symbol);
    static_assert(sizeof(address) == sizeof(*fn), "function and object pointers differ");
    std::memcpy(fn, &address, sizeof(address));
    return address != nullptr;
  }

  // The Unavailable error for a required symbol the library lacks: "cuda:
  // libcudart.so.12 (/path) lacks cudaFoo, so it is too old for anydev".
  absl::Status MissingSymbol(const char* symbol) const;

  // The name that loaded ("libcudart.so.13", or the override's value).
  const std::string& name() const { return name_; }
  // The file the dynamic loader mapped (from dladdr/dlinfo), or the name.
  const std::string& path() const { return path_; }
  const VendorLibrarySpec& spec() const { return *spec_; }

 private:
  VendorLibrary(const VendorLibrarySpec* spec, void* handle, std::string name, std::string path)
      : spec_(spec), handle_(handle), name_(std::move(name)), path_(std::move(path)) {}

  const VendorLibrarySpec* spec_;
  void* handle_;
  std::string name_;
  std::string path_;
};

}  // namespace anydev::internal

// Stringizes after macro expansion, so that a vendor header's renaming macro
// (hipGetDeviceProperties -> hipGetDevicePropertiesR0600 in ROCm 6) names the
// symbol that header's declaration really binds to.
#define ANYDEV_VENDOR_STR_(x) #x
#define ANYDEV_VENDOR_STR(x) ANYDEV_VENDOR_STR_(x)

// For a symbol list entry _(Field, vendorSymbol): declares the pointer field
// (typed from the vendor header's declaration) and its symbol's name.
#define ANYDEV_DECLARE_VENDOR_FN(field, symbol) \
  decltype(&::symbol) field = nullptr;          \
  static constexpr const char* field##Symbol = ANYDEV_VENDOR_STR(symbol);

// The same for an entry _(Field, vendorSymbol, FnType) whose name the header
// overloads (HIP's C++ template hipMalloc<T>): the C entry point's type is
// spelled out.
#define ANYDEV_DECLARE_TYPED_VENDOR_FN(field, symbol, type) \
  type field = nullptr;                                      \
  static constexpr const char* field##Symbol = ANYDEV_VENDOR_STR(symbol);

// Resolves one required entry of a symbol list, with `lib` (a VendorLibrary)
// and `table` (a pointer to the struct) in scope; returns the library's
// MissingSymbol error from the enclosing function when the symbol is absent.
#define ANYDEV_RESOLVE_VENDOR_FN(field, symbol)                   \
  if (!lib.Resolve(table->field##Symbol, &table->field)) {        \
    return lib.MissingSymbol(table->field##Symbol);               \
  }
#define ANYDEV_RESOLVE_TYPED_VENDOR_FN(field, symbol, type) \
  ANYDEV_RESOLVE_VENDOR_FN(field, symbol)
// Resolves one optional entry: the pointer stays null when it is absent, and
// the code that uses it checks.
#define ANYDEV_RESOLVE_OPTIONAL_VENDOR_FN(field, symbol) \
  (void)lib.Resolve(table->field##Symbol, &table->field);

#endif  // ANYDEV_BACKENDS_COMMON_VENDOR_LIBRARY_H_
