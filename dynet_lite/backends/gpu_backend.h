#pragma once
// What the optional GPU backend provides at start-up: its devices and its kernels
// in the op table.  backends/cuda/ defines these when DYNET_LITE_CUDA is on;
// backends/no_cuda.cc otherwise (has_cuda_backend() is declared in init.h).
#include "dynet_lite/core/op_info.h"
#include "dynet_lite/devices.h"
#include "dynet_lite/init.h"

namespace dynet_lite {

/// Creates the GPU devices asked for by --dynet-gpus / --dynet-devices, or throws
/// (no GPU backend built, no GPU present, bad device name).
void initialize_gpu_devices(const DynetParams& params);
/// Adds a device created by a backend to all_devices().
void register_device(Device* d);
/// Fills the GPU column of the op table (a no-op without the CUDA backend).
void register_cuda_kernels(OpTable& t);

}  // namespace dynet_lite
