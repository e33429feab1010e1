#pragma once
// A device's work recorded once and launched again as one unit: a compiled
// program's forward pass, and the backward pass after it, on a GPU as CUDA
// graphs (exec/replay.cc).  The
// backend records the kernels, copies and library calls queued on the device
// between begin_device_graph() and end_device_graph() instead of running them.
// Copies from host memory inside `live` ranges (a program's slots) are read
// again at every launch; every other host copy is kept as it was recorded.
// backends/cuda/cuda_graph.cc defines these; backends/no_cuda.cc says no.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "dynet_lite/devices.h"

namespace dynet_lite {

/// Host memory that a recorded copy reads anew at each launch.
struct HostRange {
  const void* begin;
  size_t bytes;
};

/// Recorded work of one device.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  /// Copies the live host ranges in and queues the whole recording on the
  /// device (asynchronous, in order with the device's other work).
  virtual void launch() = 0;
};

/// Whether `d` can record its work (a GPU of the CUDA backend).
bool can_record_device_graph(const Device* d);
/// Starts recording on `d`: until end_device_graph(), work queued on `d` is
/// recorded, not run.
void begin_device_graph(Device* d, std::vector<HostRange> live);
/// While `d` records: the work queued from now until the next mark is the next
/// step (steps are numbered 0, 1, ... in the order marked) and waits only for
/// the steps in `after` (earlier ones) and for the work queued before the first
/// mark.  Steps no chain of `after` connects may run at the same time, so a
/// step must name every earlier step whose memory it reads or writes.  Without
/// marks a recording is one chain, in the order queued.  The work of one step
/// runs in the order queued.
void mark_device_step(Device* d, const uint32_t* after, size_t n);
/// Ends the recording: the graph, or null when the recorded work cannot be
/// replayed as one (a kernel waited for the device); nothing recorded has run.
std::unique_ptr<DeviceGraph> end_device_graph(Device* d);

/// While it lives, the parameters' and lookups' accumulate functions on `d` do
/// only their host side (which parameters and rows now have gradients): the
/// device work they queued when recorded runs in a launched graph.
class HostEffectsOnly {
 public:
  explicit HostEffectsOnly(Device* d);
  ~HostEffectsOnly();
  HostEffectsOnly(const HostEffectsOnly&) = delete;
  HostEffectsOnly& operator=(const HostEffectsOnly&) = delete;

 private:
  Device* d_;
};

}  // namespace dynet_lite
