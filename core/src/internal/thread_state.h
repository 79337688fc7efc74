// internal/thread_state.h: unchecked reads of the calling thread's device
// state (Note [Per-thread device state] in runtime.cc), for hot paths that
// have already validated the device (the caching allocator's).
#ifndef ANYDEV_INTERNAL_THREAD_STATE_H_
#define ANYDEV_INTERNAL_THREAD_STATE_H_

#include "anydev/backend.h"
#include "anydev/device.h"

namespace anydev::internal {

// Returns the id of the calling thread's current stream of device `index` of
// `type`, which must be a valid device (index in [0, device count)).
StreamId CurrentStreamIdUnchecked(DeviceType type, int index);

}  // namespace anydev::internal

#endif  // ANYDEV_INTERNAL_THREAD_STATE_H_
