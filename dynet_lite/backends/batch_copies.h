#pragma once
// The copies of batched execution on a non-CPU device, one kernel each instead
// of one copy per member.  backends/cuda/ defines these when DYNET_LITE_CUDA is
// on; backends/no_cuda.cc otherwise (they throw).
#include <cstddef>

#include "dynet_lite/core/arena.h"
#include "dynet_lite/devices.h"

namespace dynet_lite {

/// Gather: dst[j n, (j+1) n) = srcs[j][0, n) for j < k.
/// Scatter-add: dsts[j][0, n) += src[j n, (j+1) n) for the non-null dsts[j] (a
/// destination may repeat).  The pointer lists are host memory; their device copy
/// comes from `scratch` (a device arena) and may be rewound as soon as these return.
void device_gather(Device* d, float* dst, const float* const* srcs, size_t n, unsigned k, Arena& scratch);
void device_scatter_add(Device* d, float* const* dsts, const float* src, size_t n, unsigned k, Arena& scratch);

}  // namespace dynet_lite
