// anydev/anydev.h: the whole public C++ API of anydev's runtime.
//
//   anydev::Device, anydev::DeviceType      device.h
//   anydev::Stream, anydev::Event           stream.h
//   anydev::DeviceCount, Synchronize, ...   runtime.h  (device-generic, rule 2)
//   anydev::acc::CurrentDeviceIndex, ...    accelerator.h (current accelerator, rule 3)
//   anydev::Backend, ListBackends           backend.h
//   anydev::Graph (capture and replay)      graph.h
//   anydev::Buffer, MemoryStats, acc::EmptyCache, ...  memory.h (caching allocator)
#ifndef ANYDEV_ANYDEV_H_
#define ANYDEV_ANYDEV_H_

#include "anydev/accelerator.h"
#include "anydev/backend.h"
#include "anydev/device.h"
#include "anydev/graph.h"
#include "anydev/memory.h"
#include "anydev/runtime.h"
#include "anydev/stream.h"

#endif  // ANYDEV_ANYDEV_H_
