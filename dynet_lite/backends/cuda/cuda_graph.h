#pragma once
// What a CudaDevice keeps while its work is recorded as a CUDA graph
// (backends/device_graph.h, cuda_graph.cc).
#include <cuda_runtime_api.h>

#include <vector>

#include "dynet_lite/backends/cuda/cuda_device.h"
#include "dynet_lite/backends/device_graph.h"

namespace dynet_lite {

/// Device staging memory handed out in order from blocks that never move (the
/// recorded copies read their addresses).
struct StagingBlocks {
  struct Block {
    char* base;
    size_t size, used;
  };
  std::vector<Block> blocks;
  /// `bytes` of device memory; `block` and `offset` say where.
  char* take(size_t bytes, size_t& block, size_t& offset);
  void release();  // frees every block
};

struct CudaDevice::Recording {
  std::vector<HostRange> live;
  /// Copies whose host source lies in `live`: filled again before each launch,
  /// from one pinned mirror of the live blocks.
  StagingBlocks live_stage;
  struct LiveCopy {
    size_t block, offset, bytes;
    const void* src;
  };
  std::vector<LiveCopy> live_copies;
  /// Every other upload, as it was when recorded: copied once, after recording.
  StagingBlocks fixed_stage;
  struct FixedCopy {
    char* stage;
    std::vector<char> data;
  };
  std::vector<FixedCopy> fixed_copies;
  /// Steps (mark_device_step): the graph nodes the work queued before the
  /// first mark ended on, and those each marked step ended on.
  bool marked = false;
  std::vector<cudaGraphNode_t> before_steps;
  std::vector<std::vector<cudaGraphNode_t>> step_ends;
};

}  // namespace dynet_lite
