// Arithmetic: binary element-wise ops with broadcasting, ops with a scalar
// constant, and the n-ary sum.
#include <cmath>
#include <cstring>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/backends/elementwise_math.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/broadcast.h"
#include "dynet_lite/ops/map_kernels.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using op_params::OneFloat;

using cpu::arr;
using cpu::ArrMap;

// ---------------------------------------------------------------- binary
Dim binary_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 2, op_name(node.op) << ": takes two arguments, got " << n);
  return broadcast_shape(op_name(node.op), xs[0]->d, xs[1]->d);
}

// Over arguments of the node's shape (defined with the spans below).
template <class F>
void binary_span_forward(const float* const* x, unsigned, float* __restrict__ y, size_t n, const Node&);
template <class F, bool kFirst, bool kAssign>
void binary_span_partial(const float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ y,
                         const float* __restrict__ dy, float* __restrict__ dx, size_t n);

// The functors (y = f(a, b) and the partials) are in backends/elementwise_math.h.
template <class F>
void binary_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const Tensor &a = *xs[0], &b = *xs[1];
  float* y = n.value.v;
  size_t sz = n.value.d.size();
  if (a.d.size() == sz && b.d.size() == sz) {
    const float* args[2] = {a.v, b.v};
    binary_span_forward<F>(args, 2, y, sz, n);
    return;
  }
  // Walk both arguments' broadcast indices together.
  BroadcastIndex ia(n.value.d, a.d), ib(n.value.d, b.d);
  float* bidx_vals = y;  // first pass stores a's element, second combines
  ia.for_each([&](size_t o, size_t k) { bidx_vals[o] = a.v[k]; });
  ib.for_each([&](size_t o, size_t k) { y[o] = F::f(y[o], b.v[k]); });
}

template <class F>
void binary_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext& ctx) {
  const Tensor &a = *xs[0], &b = *xs[1];
  const float* y = n.value.v;
  size_t sz = n.value.d.size();
  if (a.d.size() == sz && b.d.size() == sz) {
    (i == 0 ? binary_span_partial<F, true, false> : binary_span_partial<F, false, false>)(a.v, b.v, y, dy.v, dx.v, sz);
    return;
  }
  // Expand both arguments to the output shape in scratch, then reduce into dx.
  float* ea = ctx.scratch_floats(sz);
  float* eb = ctx.scratch_floats(sz);
  BroadcastIndex ia(n.value.d, a.d), ib(n.value.d, b.d);
  ia.for_each([&](size_t o, size_t k) { ea[o] = a.v[k]; });
  ib.for_each([&](size_t o, size_t k) { eb[o] = b.v[k]; });
  if (i == 0)
    ia.for_each([&](size_t o, size_t k) { dx.v[k] += F::da(ea[o], eb[o], y[o]) * dy.v[o]; });
  else
    ib.for_each([&](size_t o, size_t k) { dx.v[k] += F::db(ea[o], eb[o], y[o]) * dy.v[o]; });
}

// ---------------------------------------------------------------- with a scalar

Dim unary_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return xs[0]->d;
}

// ---------------------------------------------------------------- n-ary sum
// All arguments have the same shape; batch sizes are equal or 1.
Dim sum_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim r = xs[0]->d;
  for (unsigned k = 1; k < n; ++k) {
    const Dim& d = xs[k]->d;
    DYNET_LITE_DIM_CHECK(same_shape_ignoring_batch(d, r), op_name(node.op) << ": argument " << k << " has shape " << d
                                                                           << ", argument 0 has " << xs[0]->d);
    DYNET_LITE_DIM_CHECK(d.bd == r.bd || d.bd == 1 || r.bd == 1, op_name(node.op)
                                                                     << ": argument " << k << " has batch size " << d.bd
                                                                     << ", others have " << r.bd);
    if (d.bd > r.bd) r.bd = d.bd;
  }
  return r;
}
// y = sum_k x_k (a batch of 1 is added to every batch element)
void sum_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext&) {
  const Dim& d = node.value.d;
  size_t per = d.batch_size();
  float* y = node.value.v;
  std::memset(y, 0, d.size() * sizeof(float));
  for (unsigned k = 0; k < n; ++k) {
    const Tensor& x = *xs[k];
    if (x.d.bd == d.bd) {
      cpu::arr(node.value) += cpu::arr(x);
    } else {
      for (unsigned b = 0; b < d.bd; ++b) cpu::batch_arr(node.value, b) += cpu::batch_arr(x, 0);
    }
  }
  (void)per;
}
// dx_k += dy (summed over the batch when x_k has a batch of 1)
void sum_backward(const Tensor* const*, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                  ExecContext&) {
  if (dx.d.bd == dy.d.bd) {
    arr(dx) += arr(dy);
  } else {
    for (unsigned b = 0; b < dy.d.bd; ++b) cpu::batch_arr(dx, 0) += cpu::batch_arr(dy, b);
  }
  (void)node;
}

Expression scalar_op(OpKind op, const Expression& x, float c) {
  OneFloat p;
  p.a = c;
  return detail::add(op, {x}, p);
}

// ---------------------------------------------------------------- spans, for fusion (exec/fusion.h)
// The kernels above over one node's floats, every argument of the node's shape.
// The outputs never overlap the inputs (a node's value or gradient is its own
// memory), so the loops are marked free of aliasing and vectorise.
template <class F>
void binary_span_forward(const float* const* x, unsigned, float* __restrict__ y, size_t n, const Node&) {
  const float* __restrict__ a = x[0], * __restrict__ b = x[1];
  for (size_t i = 0; i < n; ++i) y[i] = F::f(a[i], b[i]);
}
template <class F, bool kFirst, bool kAssign>
void binary_span_partial(const float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ y,
                         const float* __restrict__ dy, float* __restrict__ dx, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    const float g = (kFirst ? F::da(a[k], b[k], y[k]) : F::db(a[k], b[k], y[k])) * dy[k];
    dx[k] = kAssign ? g : dx[k] + g;
  }
}
template <class F>
void binary_span_backward(const float* const* x, unsigned, const float* y, const float* dy, unsigned i, float* dx,
                          size_t n, bool assign, const Node&) {
  if (i == 0)
    (assign ? binary_span_partial<F, true, true> : binary_span_partial<F, true, false>)(x[0], x[1], y, dy, dx, n);
  else
    (assign ? binary_span_partial<F, false, true> : binary_span_partial<F, false, false>)(x[0], x[1], y, dy, dx, n);
}
// y = sum_k x_k, in the order of sum_forward;  dx_k += dy
void sum_span_forward(const float* const* x, unsigned nargs, float* y, size_t n, const Node&) {
  const Eigen::Index len = static_cast<Eigen::Index>(n);
  ArrMap out(y, len);
  out.setZero();
  for (unsigned k = 0; k < nargs; ++k) out += ArrMap(const_cast<float*>(x[k]), len);
}
void sum_span_backward(const float* const*, unsigned, const float*, const float* dy, unsigned, float* dx, size_t n,
                       bool assign, const Node&) {
  const Eigen::Index len = static_cast<Eigen::Index>(n);
  if (assign)
    ArrMap(dx, len) = ArrMap(const_cast<float*>(dy), len);
  else
    ArrMap(dx, len) += ArrMap(const_cast<float*>(dy), len);
}

// Where backward for argument k is dx += dy: x + y, x - y for x, sum and x + c,
// the argument of the node's shape (no batch or dimension broadcast).
bool same_shape_argument(const Tensor* const* xs, unsigned, const Node& node, unsigned k) {
  return xs[k]->d == node.value.d;
}
bool first_of_same_shape(const Tensor* const* xs, unsigned n, const Node& node, unsigned k) {
  return k == 0 && same_shape_argument(xs, n, node, k);
}

template <class Forward, class Backward>
void set_spans(OpInfo& row, Forward forward, Backward backward) {
  row.span_forward = forward;
  row.span_backward = backward;
}

}  // namespace

void register_arith_ops(OpTable& t) {
  math::for_each_binary([&t](OpKind op, const char* name, auto functor) {
    using F = decltype(functor);
    set_spans(t.define(op, "arith", name, binary_shape, binary_forward<F>, binary_backward<F>, BatchKind::Elementwise,
                       Purity::Pure, Devices::CpuAndCuda),
              binary_span_forward<F>, binary_span_backward<F>);
  });
  math::for_each_scalar_op([&t](OpKind op, const char* name, auto functor) {
    using F = decltype(functor);
    set_spans(t.define(op, "arith", name, unary_shape, map_kernels::forward<F>, map_kernels::backward<F>,
                       BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda),
              map_kernels::span_forward<F>, map_kernels::span_backward<F>);
  });
  set_spans(t.define(OpKind::Sum, "arith", "sum", sum_shape, sum_forward, sum_backward, BatchKind::Elementwise,
                     Purity::Pure, Devices::CpuAndCuda),
            sum_span_forward, sum_span_backward);
  t.row(OpKind::Add).passes_gradient = same_shape_argument;
  t.row(OpKind::Sum).passes_gradient = same_shape_argument;
  t.row(OpKind::AddScalar).passes_gradient = same_shape_argument;
  t.row(OpKind::Subtract).passes_gradient = first_of_same_shape;
}

Expression operator+(const Expression& x, const Expression& y) { return detail::add(OpKind::Add, {x, y}); }
Expression operator+(const Expression& x, real y) { return scalar_op(OpKind::AddScalar, x, y); }
Expression operator+(real x, const Expression& y) { return scalar_op(OpKind::AddScalar, y, x); }
Expression operator-(const Expression& x, const Expression& y) { return detail::add(OpKind::Subtract, {x, y}); }
Expression operator-(real x, const Expression& y) { return scalar_op(OpKind::ScalarMinus, y, x); }
Expression operator-(const Expression& x, real y) { return scalar_op(OpKind::AddScalar, x, -y); }
Expression operator*(const Expression& x, float y) { return scalar_op(OpKind::MultiplyScalar, x, y); }
Expression operator*(float y, const Expression& x) { return scalar_op(OpKind::MultiplyScalar, x, y); }
Expression operator/(const Expression& x, float y) {
  DYNET_LITE_ARG_CHECK(y != 0.f, "operator/: division of an expression of shape " << x.dim() << " by the scalar 0");
  return scalar_op(OpKind::MultiplyScalar, x, 1.f / y);
}
Expression operator/(float x, const Expression& y) { return scalar_op(OpKind::ScalarDivide, y, x); }
Expression cmult(const Expression& x, const Expression& y) { return detail::add(OpKind::CMult, {x, y}); }
Expression cdiv(const Expression& x, const Expression& y) { return detail::add(OpKind::CDiv, {x, y}); }
Expression colwise_add(const Expression& x, const Expression& bias) {
  Dim bd = bias.dim();
  DYNET_LITE_DIM_CHECK(bd.nd <= 1 || bd.truncate().nd == 1,
                       "colwise_add: bias must be a column vector, got " << bd << " (x is " << x.dim() << ")");
  DYNET_LITE_DIM_CHECK(bd.rows() == x.dim().rows(), "colwise_add: bias " << bd << " has " << bd.rows() << " rows, x "
                                                                         << x.dim() << " has " << x.dim().rows());
  return detail::add(OpKind::Add, {x, bias});
}
Expression pow(const Expression& x, const Expression& y) { return detail::add(OpKind::Pow, {x, y}); }
Expression min(const Expression& x, const Expression& y) { return detail::add(OpKind::Min, {x, y}); }
Expression max(const Expression& x, const Expression& y) { return detail::add(OpKind::Max, {x, y}); }
Expression max(const std::initializer_list<Expression>& xs) { return max(std::vector<Expression>(xs)); }
Expression max(const std::vector<Expression>& xs) {
  DYNET_LITE_ARG_CHECK(!xs.empty(), "max: empty list of expressions");
  Expression r = xs[0];
  for (size_t k = 1; k < xs.size(); ++k) r = max(r, xs[k]);
  return r;
}
Expression sum(const std::initializer_list<Expression>& xs) {
  return detail::add(OpKind::Sum, xs.begin(), static_cast<unsigned>(xs.size()), nullptr, 0);
}
Expression sum(const std::vector<Expression>& xs) { return detail::add(OpKind::Sum, xs); }
Expression average(const std::initializer_list<Expression>& xs) {
  DYNET_LITE_ARG_CHECK(xs.size() != 0, "average: empty list of expressions");
  return sum(xs) * (1.f / static_cast<float>(xs.size()));
}
Expression average(const std::vector<Expression>& xs) {
  DYNET_LITE_ARG_CHECK(!xs.empty(), "average: empty list of expressions");
  return sum(xs) * (1.f / static_cast<float>(xs.size()));
}

}  // namespace dynet_lite
