// Passes over whole parameters, compiled for every instruction set like the op
// kernels (isa.h): the trainers call them once per parameter and update, and
// on small models (a tagger trained one sentence at a time) they are a sixth
// of the time, where AVX2 runs them 1.25-2.1x faster than SSE2 (bench/param_passes).  The
// adaptive trainers' rules are here too (each trainer in train/*.cc states its formula).
#include <algorithm>
#include <cmath>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/backends/cpu/isa.h"
#include "dynet_lite/backends/update_rules.h"

namespace dynet_lite {
namespace cpu {

namespace {

using ConstArr = Eigen::Map<const Eigen::ArrayXf>;
inline ArrMap arr(float* p, size_t n) { return ArrMap(p, static_cast<Eigen::Index>(n)); }
inline ConstArr carr(const float* p, size_t n) { return ConstArr(p, static_cast<Eigen::Index>(n)); }

double squared_norm(const float* x, size_t n) { return carr(x, n).matrix().squaredNorm(); }

// Blocks small enough to stay in L1 between the step and the clearing, so the
// gradient is streamed once.
void sgd_step_and_clear(float* values, float* grads, size_t n, float rate) {
  constexpr size_t kBlock = 2048;
  for (size_t off = 0; off < n; off += kBlock) {
    const size_t len = std::min(kBlock, n - off);
    arr(values + off, len) -= rate * carr(grads + off, len);
    arr(grads + off, len).setZero();
  }
}

// The adaptive trainers' rules (their formulas: train/sgd.cc, train/adaptive.cc).
void update_rule(DeviceRule rule, const DeviceRuleArgs& p, float* values, const float* grads, float* const* state,
                 size_t n) {
  auto g = carr(grads, n) * p.gscale;
  auto x = arr(values, n);
  switch (rule) {
    case DeviceRule::Momentum: {
      auto v = arr(state[0], n);
      v = p.a * v - (p.rate * p.gscale) * carr(grads, n);
      x += v;
      return;
    }
    case DeviceRule::Adagrad: {
      auto s = arr(state[0], n);
      s += g.square();
      x -= p.rate * g / (s + p.eps).sqrt();
      return;
    }
    case DeviceRule::Adadelta: {
      float* hg = state[0];
      float* hd = state[1];
      // One scalar loop: d is needed twice and an Eigen expression would evaluate it twice.
      for (size_t i = 0; i < n; ++i) {
        const float gi = grads[i] * p.gscale;
        hg[i] = p.a * hg[i] + (1 - p.a) * gi * gi;
        const float d = -gi * std::sqrt(hd[i] + p.eps) / std::sqrt(hg[i] + p.eps);
        hd[i] = p.a * hd[i] + (1 - p.a) * d * d;
        values[i] += p.rate * d;
      }
      return;
    }
    case DeviceRule::RMSProp: {
      auto s = arr(state[0], n);
      s = p.a * s + (1 - p.a) * g.square();
      x -= p.rate * g / (s + p.eps).sqrt();
      return;
    }
    case DeviceRule::Adam:
    case DeviceRule::Amsgrad: {
      auto m = arr(state[0], n);
      auto v = arr(state[1], n);
      m = p.a * m + (1 - p.a) * g;
      v = p.b * v + (1 - p.b) * g.square();
      if (rule == DeviceRule::Adam) {
        x -= p.rate * m / (v.sqrt() + p.eps);
        return;
      }
      auto vhat = arr(state[2], n);
      vhat = vhat.max(v);
      x -= p.rate * m / (vhat.sqrt() + p.eps);
      return;
    }
  }
}

const VectorKernels kKernels{squared_norm, sgd_step_and_clear, update_rule};

}  // namespace

#ifndef DYNET_LITE_ISA
const VectorKernels& active_vector_kernels() {
  const VectorKernels* wider = vector_kernels(active_isa());
  return wider ? *wider : kKernels;
}
#endif

}  // namespace cpu
}  // namespace dynet_lite

#ifdef DYNET_LITE_ISA
extern "C" const dynet_lite::cpu::VectorKernels* DYNET_LITE_ISA_ENTRY(dynet_lite_vector_kernels)() {
  return &dynet_lite::cpu::kKernels;
}
#endif
