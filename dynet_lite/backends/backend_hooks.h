#pragma once
// The seam between the core and the optional CUDA backend.  backends/cuda/
// defines these when DYNET_LITE_CUDA is on; backends/no_cuda.cc otherwise.
#include "dynet_lite/core/arena.h"
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
/// The element-wise rules of the adaptive trainers on a non-CPU device, one
/// kernel over n floats, with the CPU rules' formulas (train/*.cc).  `rate` is
/// the learning rate (Adam and AMSGrad: the bias-corrected step rate); `a` and `b`
/// are momentum, rho or beta_1 / beta_2; state[0..2] the trainer's moment buffers.
enum class DeviceRule { Momentum, Adagrad, Adadelta, RMSProp, Adam, Amsgrad };
struct DeviceRuleArgs {
  float rate = 0.f, gscale = 1.f, a = 0.f, b = 0.f, eps = 0.f;
};
void device_update_rule(Device* d, DeviceRule rule, const DeviceRuleArgs& args, float* values, const float* grads,
                        float* const* state, size_t n);
/// The rows `rows[0, n)` (each `row` floats) of a lookup table in a non-CPU
/// device's memory, one kernel each (the trainers' sparse updates on a GPU):
/// the sum of their squared elements; values -= rate * grads, grads = 0 on them;
/// the same rows of `table` set to `value`.
float device_rows_squared_norm(Device* d, const float* table, const unsigned* rows, unsigned n, size_t row);
void device_sgd_rows_step_and_clear(Device* d, float* values, float* grads, const unsigned* rows, unsigned n,
                                    size_t row, float rate);
void device_fill_rows(Device* d, float* table, const unsigned* rows, unsigned n, size_t row, float value);
/// The copies of batched execution on a non-CPU device, one kernel each instead
/// of one copy per member.  Gather: dst[j n, (j+1) n) = srcs[j][0, n) for j < k.
/// Scatter-add: dsts[j][0, n) += src[j n, (j+1) n) for the non-null dsts[j] (a
/// destination may repeat).  The pointer lists are host memory; their device copy
/// comes from `scratch` (a device arena) and may be rewound as soon as these return.
void device_gather(Device* d, float* dst, const float* const* srcs, size_t n, unsigned k, Arena& scratch);
void device_scatter_add(Device* d, float* const* dsts, const float* src, size_t n, unsigned k, Arena& scratch);

}  // namespace dynet_lite
