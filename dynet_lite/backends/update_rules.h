#pragma once
// The trainers' update rules on a non-CPU device.  apply_update_rule is one
// element of an adaptive trainer's rule, shared by the GPU kernel
// (backends/cuda/buffers.cu) and the tests that check it against the CPU
// rules (train/adaptive.cc, train/sgd.cc) on machines without a GPU.  The
// device_* functions are defined by backends/cuda/ when DYNET_LITE_CUDA is on,
// by backends/no_cuda.cc otherwise (they throw).
#include <cmath>
#include <cstddef>

#include "dynet_lite/core/host_device.h"
#include "dynet_lite/devices.h"


namespace dynet_lite {

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
/// SimpleSGD's sparse update of the rows `rows[0, n)` (each `row` floats) of a
/// lookup table in a non-CPU device's memory, one kernel: values -= rate * grads,
/// grads = 0 on them.
void device_sgd_rows_step_and_clear(Device* d, float* values, float* grads, const unsigned* rows, unsigned n,
                                    size_t row, float rate);

/// Element i of `rule`.
DYNET_LITE_HOST_DEVICE inline void apply_update_rule(DeviceRule rule, const DeviceRuleArgs& p, size_t i, float* x,
                                                     const float* grads, float* s0, float* s1, float* s2) {
  const float g = grads[i] * p.gscale;
  switch (rule) {
    case DeviceRule::Momentum:  // v = mom v - (lr gscale) g;  x += v
      s0[i] = p.a * s0[i] - (p.rate * p.gscale) * grads[i];
      x[i] += s0[i];
      break;
    case DeviceRule::Adagrad:  // s += g^2;  x -= lr g / sqrt(s + eps)
      s0[i] += g * g;
      x[i] -= p.rate * g / sqrtf(s0[i] + p.eps);
      break;
    case DeviceRule::Adadelta: {  // hg = rho hg + (1-rho) g^2;  d = -g sqrt(hd+eps)/sqrt(hg+eps);  hd;  x += lr d
      s0[i] = p.a * s0[i] + (1 - p.a) * g * g;
      const float d = -g * sqrtf(s1[i] + p.eps) / sqrtf(s0[i] + p.eps);
      s1[i] = p.a * s1[i] + (1 - p.a) * d * d;
      x[i] += p.rate * d;
      break;
    }
    case DeviceRule::RMSProp:  // s = rho s + (1 - rho) g^2;  x -= lr g / sqrt(s + eps)
      s0[i] = p.a * s0[i] + (1 - p.a) * g * g;
      x[i] -= p.rate * g / sqrtf(s0[i] + p.eps);
      break;
    case DeviceRule::Adam:       // m, v;  x -= rate m / (sqrt(v) + eps)
    case DeviceRule::Amsgrad: {  // as Adam with vhat = max(vhat, v)
      s0[i] = p.a * s0[i] + (1 - p.a) * g;
      s1[i] = p.b * s1[i] + (1 - p.b) * g * g;
      float v = s1[i];
      if (rule == DeviceRule::Amsgrad) v = s2[i] = fmaxf(s2[i], v);
      x[i] -= p.rate * s0[i] / (sqrtf(v) + p.eps);
      break;
    }
  }
}

/// A trainer's rule on a span (training.h: UpdateSpan) in a non-CPU device's
/// memory: one kernel there.  False, and nothing done, for a span on the CPU.
template <class Span>
bool rule_on_device(const Span& span, DeviceRule rule, const DeviceRuleArgs& args) {
  if (span.device->type == DeviceType::CPU) return false;
  device_update_rule(span.device, rule, args, span.values, span.grads, span.state, span.size);
  return true;
}

}  // namespace dynet_lite
