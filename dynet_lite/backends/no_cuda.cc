// Built when DYNET_LITE_CUDA is off: asking for a GPU, or for work on a non-CPU
// device, is a clear error.
#include "dynet_lite/backends/batch_copies.h"
#include "dynet_lite/backends/device_graph.h"
#include "dynet_lite/backends/gpu_backend.h"
#include "dynet_lite/backends/update_rules.h"
#include "dynet_lite/except.h"

namespace dynet_lite {

bool has_cuda_backend() { return false; }

void initialize_gpu_devices(const DynetParams& params) {
  DYNET_LITE_CHECK(false, unsupported_error,
                   "initialize: a GPU was requested (--dynet-gpus " << params.requested_gpus << ", --dynet-devices '"
                       << params.devices
                       << "') but this build of dynet_lite has no GPU backend; configure with "
                          "-DDYNET_LITE_CUDA=ON where nvcc is available");
}

void register_cuda_kernels(OpTable&) {}

void device_sgd_step_and_clear(Device* d, float*, float*, size_t, float) {
  DYNET_LITE_CHECK(false, unsupported_error, "SimpleSGD: updating parameters on " << d->name
                                                 << " needs the CUDA backend (this build has none)");
}

void device_update_rule(Device* d, DeviceRule, const DeviceRuleArgs&, float*, const float*, float* const*, size_t) {
  DYNET_LITE_CHECK(false, unsupported_error, "trainer: updating parameters on " << d->name
                                                 << " needs the CUDA backend (this build has none)");
}

void device_sgd_rows_step_and_clear(Device* d, float*, float*, const unsigned*, unsigned, size_t, float) {
  DYNET_LITE_CHECK(false, unsupported_error,
                   "SimpleSGD: updating lookup rows on " << d->name << " needs the CUDA backend (this build has none)");
}

void device_gather(Device* d, float*, const float* const*, size_t, unsigned, Arena&) {
  DYNET_LITE_CHECK(false, unsupported_error,
                   "batched execution: gathering on " << d->name << " needs the CUDA backend (this build has none)");
}

void device_scatter_add(Device* d, float* const*, const float*, size_t, unsigned, Arena&) {
  DYNET_LITE_CHECK(
      false, unsupported_error,
      "batched execution: scattering gradients on " << d->name << " needs the CUDA backend (this build has none)");
}

bool can_record_device_graph(const Device*) { return false; }

void begin_device_graph(Device* d, std::vector<HostRange>) {
  DYNET_LITE_CHECK(false, unsupported_error,
                   "compiled program: recording " << d->name << "'s work needs the CUDA backend (this build has none)");
}

void mark_device_step(Device*, const uint32_t*, size_t) {}

std::unique_ptr<DeviceGraph> end_device_graph(Device*) { return nullptr; }

// Nothing is ever recorded without the CUDA backend: the accumulate functions
// have no device side to leave out.
HostEffectsOnly::HostEffectsOnly(Device* d) : d_(d) {}
HostEffectsOnly::~HostEffectsOnly() = default;

}  // namespace dynet_lite
