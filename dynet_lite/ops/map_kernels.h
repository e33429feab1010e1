#pragma once
// The CPU kernels of an element-wise op y = f(x; a) whose functor F (backends/
// elementwise_math.h) has Eigen array forms F::array_forward(x, y, a) and
// F::array_backward(x, y, dy, dx, a), a the node's OneFloat (unused by ops
// without one): over one node's floats (span kernels, also for fusion:
// exec/fusion.h) and over its tensors.  A packet at a time (cpu::in_packets: no
// scalar tail).  The unary family (tanh, logistic, ...) and arith's ops with a
// scalar constant (x + a, x * a, ...) share them.
#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/node.h"

namespace dynet_lite {
namespace map_kernels {

template <class F>
void span_forward(const float* const* x, unsigned, float* y, size_t n, const Node& node) {
  const float a = node.p<op_params::OneFloat>().a;
  cpu::in_packets(
      n, [a](const auto& xa, auto ya) { F::array_forward(xa, ya, a); }, x[0], y);
}

template <class F>
void span_backward(const float* const* x, unsigned, const float* y, const float* dy, unsigned, float* dx, size_t n,
                   bool assign, const Node& node) {
  if (assign) cpu::ArrMap(dx, static_cast<Eigen::Index>(n)).setZero();  // the functors only accumulate
  const float a = node.p<op_params::OneFloat>().a;
  cpu::in_packets(
      n, [a](const auto& xa, const auto& ya, const auto& dya, auto dxa) { F::array_backward(xa, ya, dya, dxa, a); },
      x[0], y, dy, dx);
}

template <class F>
void forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const float* x = xs[0]->v;
  span_forward<F>(&x, 1, n.value.v, n.value.d.size(), n);
}

template <class F>
void backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx, ExecContext&) {
  const float* x = xs[0]->v;
  span_backward<F>(&x, 1, n.value.v, dy.v, 0, dx.v, n.value.d.size(), false, n);
}

}  // namespace map_kernels
}  // namespace dynet_lite
