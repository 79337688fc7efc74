// run_if_available: runs a test command only where a backend has devices.
//
//   run_if_available <type> <command> [args...]
//
// Probes <type> (cuda, hip, xpu, sim) through anydev's registry; when it is
// available, replaces itself with <command> (so the test process starts from
// scratch); otherwise prints the backend's reason and exits 77, which ctest's
// SKIP_RETURN_CODE reports as skipped. This is how the accelerator conformance
// suite is registered for every real backend (conformance.cuda, ...) without
// turning a machine without that GPU red.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "absl/status/statusor.h"
#include "anydev/anydev.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <device type> <command> [args...]\n", argv[0]);
    return 2;
  }
  absl::StatusOr<anydev::DeviceType> type = anydev::ParseDeviceType(argv[1]);
  if (!type.ok()) {
    std::fprintf(stderr, "run_if_available: %s\n", std::string(type.status().message()).c_str());
    return 2;
  }
  for (const anydev::BackendInfo& info : anydev::ListBackends()) {
    if (info.type != *type) continue;
    if (!info.available) {
      std::printf("skipped: %s has no devices here: %s\n", argv[1], info.reason.c_str());
      return 77;
    }
    std::printf("%s: %d device(s); running %s\n", argv[1], info.device_count, argv[2]);
    std::fflush(stdout);
    execv(argv[2], argv + 2);
    std::fprintf(stderr, "run_if_available: cannot run %s: %s\n", argv[2], std::strerror(errno));
    return 2;
  }
  return 2;
}
