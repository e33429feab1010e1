// Element-wise functions y = f(x): their rows and expressions.  The math of each
// (forward y = f(x), backward dx += f'(x) dy) is in backends/elementwise_math.h.
#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/backends/elementwise_math.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/map_kernels.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using op_params::OneFloat;

Dim same_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return xs[0]->d;
}

}  // namespace

void register_unary_ops(OpTable& t) {
  math::for_each_unary([&t](OpKind op, const char* name, auto functor) {
    using F = decltype(functor);
    OpInfo& row = t.define(op, "unary", name, same_shape, map_kernels::forward<F>, map_kernels::backward<F>,
                           BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);
    row.span_forward = map_kernels::span_forward<F>;
    row.span_backward = map_kernels::span_backward<F>;
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
