#pragma once
// What the CPU kernels of the fused LSTM gates (ops/lstm.cc) and the GPU ones
// (backends/cuda/lstm.cu) share: the argument positions, and where forward left
// the weights it used (the parameters, or their noisy copies in node.aux).
#include "dynet_lite/core/node.h"

namespace dynet_lite {
namespace lstm_gates {

/// What DyNet's fused gates add to the forget gate's pre-activation (rows
/// [hid, 2 hid) of each column), so that a fresh LSTM starts by keeping its cell.
constexpr float kForgetGateBias = 1.f;

/// Argument positions of vanilla_lstm_gates (0-4) and vanilla_lstm_gates_dropout (0-6).
enum GateArg : unsigned { kX = 0, kH = 1, kWx = 2, kWh = 3, kB = 4, kMaskX = 5, kMaskH = 6 };

struct GateWeights {
  const float* wx;
  const float* wh;
  const float* b;
};

/// The weights forward used: with weight noise, node.aux holds noisy copies of
/// Wx, Wh and b, one after the other; else the parameters themselves.
inline GateWeights gate_weights(const Tensor* const* xs, const Node& node) {
  if (node.aux) {
    const float* wx = static_cast<const float*>(node.aux);
    const float* wh = wx + xs[kWx]->d.size();
    return {wx, wh, wh + xs[kWh]->d.size()};
  }
  return {xs[kWx]->v, xs[kWh]->v, xs[kB]->v};
}

/// What backward needs first, on either device: the sizes (gate rows = 4 * hid,
/// input rows, batch N), the dropout masks (null without dropout) and the
/// weights forward used.  Read with a structured binding.
struct BackwardArgs {
  size_t rows, hid, in;
  unsigned N;
  const Tensor* mask_x;
  const Tensor* mask_h;
  GateWeights w;
};

/// `n` arguments: 5, or 7 with dropout masks.
inline BackwardArgs backward_args(const Tensor* const* xs, unsigned n, const Node& node) {
  const Dim& d = node.value.d;
  const bool dropout = n == 7;
  return {d.rows(),
          d.rows() / 4,
          xs[kX]->d.rows(),
          d.bd,
          dropout ? xs[kMaskX] : nullptr,
          dropout ? xs[kMaskH] : nullptr,
          gate_weights(xs, node)};
}

}  // namespace lstm_gates
}  // namespace dynet_lite
