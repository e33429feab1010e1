#pragma once
// The seam between the core and the optional CUDA backend.  backends/cuda/
// defines these when DYNET_LITE_CUDA is on; backends/no_cuda.cc otherwise.
#include "dynet_lite/init.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

/// Creates the GPU devices asked for by --dynet-gpus / --dynet-devices, or throws
/// (no GPU backend built, no GPU present, bad device name).
void initialize_gpu_devices(const DynetParams& params);
/// Adds a device created by a backend to all_devices().
void register_device(Device* d);
/// SimpleSGD's step on a parameter in a non-CPU device's memory:
/// values -= rate * grads; grads = 0.  Throws unsupported_error without a kernel.
void device_sgd_step_and_clear(Device* d, float* values, float* grads, size_t n, float rate);

}  // namespace dynet_lite
