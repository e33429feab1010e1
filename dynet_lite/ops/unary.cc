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

using cpu::arr;
using cpu::ArrMap;

Dim same_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return xs[0]->d;
}

// The CPU kernels: F's Eigen array forms over the argument, value and gradients.
template <class F>
void map_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  F::array_forward(arr(*xs[0]), arr(n.value), n.p<OneFloat>().a);
}
template <class F>
void map_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                  ExecContext&) {
  F::array_backward(arr(*xs[0]), arr(n.value), arr(dy), arr(dx), n.p<OneFloat>().a);
}

// The same over one node's floats, for fusion (exec/fusion.h).
template <class F>
void map_span_forward(const float* const* x, unsigned, float* y, size_t n, const Node& node) {
  const Eigen::Index len = static_cast<Eigen::Index>(n);
  F::array_forward(ArrMap(const_cast<float*>(x[0]), len), ArrMap(y, len), node.p<OneFloat>().a);
}
template <class F>
void map_span_backward(const float* const* x, unsigned, const float* y, const float* dy, unsigned, float* dx, size_t n,
                       bool assign, const Node& node) {
  const Eigen::Index len = static_cast<Eigen::Index>(n);
  if (assign) ArrMap(dx, len).setZero();  // the functors only accumulate
  F::array_backward(ArrMap(const_cast<float*>(x[0]), len), ArrMap(const_cast<float*>(y), len),
                    ArrMap(const_cast<float*>(dy), len), ArrMap(dx, len), node.p<OneFloat>().a);
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
