// hello_anydev: the current accelerator, a stream, and a timed event, through
// anydev's C++ API. Run with ANYDEV_SIM_DEVICES=2 on a machine without a GPU.
#include <anydev/anydev.h>

#include <iostream>

namespace {

absl::Status Run() {
  absl::StatusOr<anydev::DeviceType> type = anydev::acc::GetAccelerator();
  if (!type.ok()) return type.status();
  std::cout << "accelerator: " << *type << " with " << anydev::acc::DeviceCount()
            << " device(s)\n";

  // Work on the last device for this scope; the guard restores the index.
  absl::StatusOr<anydev::acc::DeviceIndexGuard> guard =
      anydev::acc::DeviceIndexGuard::Make(anydev::acc::DeviceCount() - 1);
  if (!guard.ok()) return guard.status();

  absl::StatusOr<int> index = anydev::acc::CurrentDeviceIndex();
  if (!index.ok()) return index.status();
  absl::StatusOr<anydev::Stream> stream = anydev::Stream::New(anydev::Device(*type, *index));
  if (!stream.ok()) return stream.status();

  anydev::Event start(*type, /*enable_timing=*/true), end(*type, /*enable_timing=*/true);
  if (absl::Status s = start.Record(*stream); !s.ok()) return s;
  if (absl::Status s = stream->Sleep(absl::Milliseconds(10)); !s.ok() && !absl::IsUnimplemented(s)) {
    return s;
  }
  if (absl::Status s = end.Record(*stream); !s.ok()) return s;
  if (absl::Status s = end.Synchronize(); !s.ok()) return s;
  absl::StatusOr<double> ms = start.ElapsedTime(end);
  if (!ms.ok()) return ms.status();
  std::cout << "on " << *stream << ": " << *ms << " ms between the events\n";
  return absl::OkStatus();
}

}  // namespace

int main() {
  if (absl::Status s = Run(); !s.ok()) {
    std::cerr << "hello_anydev: " << s << "\n";
    return 1;
  }
  return 0;
}
