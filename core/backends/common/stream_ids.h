// backends/common/stream_ids.h: the stream ids of every backend with pools of
// streams (sim, CUDA/HIP, Level Zero), as PyTorch's CUDA stream pools.
//
// Note [Stream ids]: id 0 is a device's default stream. The other streams
// come from one pool of kPoolSize per priority level, level 0 being the
// least priority (priority `least`, then least - 1, ...): pool stream k of
// level L has id 1 + L * kPoolSize + k, and a new stream takes the level's
// streams round robin. Ids are per device; a backend with `levels` levels
// has the ids 0..levels * kPoolSize.
#ifndef ANYDEV_BACKENDS_COMMON_STREAM_IDS_H_
#define ANYDEV_BACKENDS_COMMON_STREAM_IDS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "anydev/backend.h"

namespace anydev::stream_ids {

inline constexpr int kPoolSize = 32;  // streams per priority level, as PyTorch's pools

// The level of a stream of `priority` on a device whose least priority is
// `least` and that has `levels` levels (out-of-range priorities clamp).
inline int LevelOf(int priority, int least, int levels) {
  return std::clamp(least - priority, 0, levels - 1);
}

// The level of stream `id` (the default stream is at level 0).
inline int LevelOfId(StreamId id) {
  return id == 0 ? 0 : static_cast<int>((id - 1) / kPoolSize);
}

// The next pool stream of `level`, taken round robin with `next_in_level`.
inline StreamId Next(int level, std::atomic<uint32_t>& next_in_level) {
  return 1 + static_cast<StreamId>(level) * kPoolSize +
         static_cast<StreamId>(next_in_level.fetch_add(1) % kPoolSize);
}

// InvalidArgument unless `id` is a stream id of a device with `levels`
// levels; `device` names the device in the message.
inline absl::Status Validate(StreamId id, int levels, absl::string_view device) {
  const StreamId last = static_cast<StreamId>(levels) * kPoolSize;
  if (id < 0 || id > last) {
    return absl::InvalidArgumentError(absl::StrCat("stream id ", id, " is not a stream of ",
                                                   device, " (valid ids: 0..", last, ")"));
  }
  return absl::OkStatus();
}

}  // namespace anydev::stream_ids

#endif  // ANYDEV_BACKENDS_COMMON_STREAM_IDS_H_
