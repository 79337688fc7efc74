// The optional parts of the Backend interface: what a backend that lacks them
// answers (Note in backend.h: Unimplemented, never a silent no-op).
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "anydev/backend.h"

namespace anydev {
namespace {

absl::Status NoGraphs(const Backend& b) {
  return absl::UnimplementedError(
      absl::StrCat(DeviceTypeName(b.type()), " does not support graph capture"));
}

}  // namespace

absl::StatusOr<void*> Backend::AllocateHost(size_t nbytes) {
  void* p = std::aligned_alloc(256, (nbytes + 255) / 256 * 256);
  if (p == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("host out of memory: tried to allocate ", nbytes, " bytes"));
  }
  return p;
}

absl::Status Backend::FreeHost(void* ptr) {
  std::free(ptr);
  return absl::OkStatus();
}

absl::Status Backend::BeginCapture(int, StreamId, CaptureMode) { return NoGraphs(*this); }
absl::StatusOr<void*> Backend::EndCapture(int, StreamId) { return NoGraphs(*this); }
absl::StatusOr<bool> Backend::IsCapturing(int, StreamId) { return false; }
absl::StatusOr<void*> Backend::InstantiateGraph(int, void*) { return NoGraphs(*this); }
absl::Status Backend::LaunchGraph(int, void*, StreamId) { return NoGraphs(*this); }
void Backend::DestroyGraph(int, void*, void*) noexcept {}
absl::Status Backend::DumpGraph(int, void*, const std::string&) { return NoGraphs(*this); }

absl::StatusOr<uintptr_t> Backend::NativeStreamHandle(int, StreamId) {
  return absl::UnimplementedError(
      absl::StrCat(DeviceTypeName(type()), " backend doesn't support getting stream native handle."));
}

}  // namespace anydev
