#pragma once
// A trainer's element-wise rule on one parameter: the backend's kernel where
// the parameter lives on a GPU, the CPU kernels of the instruction set in use
// (backends/cpu/vector_kernels.cc) otherwise.
#include "dynet_lite/backends/cpu/isa.h"
#include "dynet_lite/backends/update_rules.h"
#include "dynet_lite/training.h"

namespace dynet_lite {

inline void cpu_or_device_rule(const UpdateSpan& span, DeviceRule rule, const DeviceRuleArgs& args) {
  if (rule_on_device(span, rule, args)) return;
  cpu::active_vector_kernels().update_rule(rule, args, span.values, span.grads, span.state, span.size);
}

}  // namespace dynet_lite
