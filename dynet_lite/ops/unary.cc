// Element-wise functions y = f(x): their rows and expressions.  The math of each
// (forward y = f(x), backward dx += f'(x) dy) is in backends/elementwise_math.h.
#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/backends/elementwise_math.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using op_params::OneFloat;

using cpu::ArrMap;

Dim same_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return xs[0]->d;
}

// F's Eigen array forms over one node's floats (also for fusion: exec/fusion.h),
// a packet at a time (cpu::in_packets: no scalar tail).
template <class F>
void map_span_forward(const float* const* x, unsigned, float* y, size_t n, const Node& node) {
  const float a = node.p<OneFloat>().a;
  cpu::in_packets(
      n, [a](const auto& xa, auto ya) { F::array_forward(xa, ya, a); }, x[0], y);
}
template <class F>
void map_span_backward(const float* const* x, unsigned, const float* y, const float* dy, unsigned, float* dx, size_t n,
                       bool assign, const Node& node) {
  if (assign) ArrMap(dx, static_cast<Eigen::Index>(n)).setZero();  // the functors only accumulate
  const float a = node.p<OneFloat>().a;
  cpu::in_packets(
      n, [a](const auto& xa, const auto& ya, const auto& dya, auto dxa) { F::array_backward(xa, ya, dya, dxa, a); },
      x[0], y, dy, dx);
}

// The CPU kernels: the same over the argument, value and gradients.
template <class F>
void map_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const float* x = xs[0]->v;
  map_span_forward<F>(&x, 1, n.value.v, n.value.d.size(), n);
}
template <class F>
void map_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                  ExecContext&) {
  const float* x = xs[0]->v;
  map_span_backward<F>(&x, 1, n.value.v, dy.v, 0, dx.v, n.value.d.size(), false, n);
}

}  // namespace

void register_unary_ops(OpTable& t) {
  math::for_each_unary([&t](OpKind op, const char* name, auto functor) {
    using F = decltype(functor);
    OpInfo& row = t.define(op, "unary", name, same_shape, map_forward<F>, map_backward<F>, BatchKind::Elementwise,
                           Purity::Pure, Devices::CpuAndCuda);
    row.span_forward = map_span_forward<F>;
    row.span_backward = map_span_backward<F>;
  });
}

namespace {

Expression unary(OpKind op, const Expression& x, float a = 0.f) {
  OneFloat p;
  p.a = a;
  return detail::add(op, {x}, p);
}

}  // namespace

// One expression function per line of DYNET_LITE_UNARY_OPS (core/op_kind.h).
#define DYNET_LITE_UNARY_EXPRESSION(Kind, name) \
  Expression name(const Expression& x) { return unary(OpKind::Kind, x); }
#define DYNET_LITE_UNARY_EXPRESSION_A(Kind, name) \
  Expression name(const Expression& x, float a) { return unary(OpKind::Kind, x, a); }
DYNET_LITE_UNARY_OPS(DYNET_LITE_UNARY_EXPRESSION, DYNET_LITE_UNARY_EXPRESSION_A)
#undef DYNET_LITE_UNARY_EXPRESSION
#undef DYNET_LITE_UNARY_EXPRESSION_A
Expression operator-(const Expression& x) { return unary(OpKind::Negate, x); }

}  // namespace dynet_lite
