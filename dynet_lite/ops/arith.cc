// Arithmetic: binary element-wise ops with broadcasting, ops with a scalar
// constant, and the n-ary sum.
#include <cmath>
#include <cstring>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/broadcast.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using cpu::arr;

// ---------------------------------------------------------------- binary
Dim binary_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 2, op_name(node.op) << ": takes two arguments, got " << n);
  return broadcast_shape(op_name(node.op), xs[0]->d, xs[1]->d);
}

// Each functor gives y = f(a, b) and the partials dy/da, dy/db at (a, b, y).
// y = a + b;  da += dy, db += dy
struct AddF {
  static float f(float a, float b) { return a + b; }
  static float da(float, float, float) { return 1.f; }
  static float db(float, float, float) { return 1.f; }
};
// y = a - b;  da += dy, db -= dy
struct SubF {
  static float f(float a, float b) { return a - b; }
  static float da(float, float, float) { return 1.f; }
  static float db(float, float, float) { return -1.f; }
};
// y = a * b;  da += b dy, db += a dy
struct MulF {
  static float f(float a, float b) { return a * b; }
  static float da(float, float b, float) { return b; }
  static float db(float a, float, float) { return a; }
};
// y = a / b;  da += dy / b, db -= y / b dy
struct DivF {
  static float f(float a, float b) { return a / b; }
  static float da(float, float b, float) { return 1.f / b; }
  static float db(float, float b, float y) { return -y / b; }
};
// y = a ^ b;  da += b a^(b-1) dy, db += ln(a) y dy
struct PowF {
  static float f(float a, float b) { return std::pow(a, b); }
  static float da(float a, float b, float) { return b * std::pow(a, b - 1.f); }
  static float db(float a, float, float y) { return std::log(a) * y; }
};
// y = max(a, b);  the larger side gets dy (a on ties)
struct MaxF {
  static float f(float a, float b) { return a >= b ? a : b; }
  static float da(float a, float b, float) { return a >= b ? 1.f : 0.f; }
  static float db(float a, float b, float) { return a >= b ? 0.f : 1.f; }
};
// y = min(a, b);  the smaller side gets dy (a on ties)
struct MinF {
  static float f(float a, float b) { return a <= b ? a : b; }
  static float da(float a, float b, float) { return a <= b ? 1.f : 0.f; }
  static float db(float a, float b, float) { return a <= b ? 0.f : 1.f; }
};

template <class F>
void binary_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const Tensor &a = *xs[0], &b = *xs[1];
  float* y = n.value.v;
  size_t sz = n.value.d.size();
  if (a.d.size() == sz && b.d.size() == sz) {
    for (size_t i = 0; i < sz; ++i) y[i] = F::f(a.v[i], b.v[i]);
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
    if (i == 0)
      for (size_t k = 0; k < sz; ++k) dx.v[k] += F::da(a.v[k], b.v[k], y[k]) * dy.v[k];
    else
      for (size_t k = 0; k < sz; ++k) dx.v[k] += F::db(a.v[k], b.v[k], y[k]) * dy.v[k];
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

template <class F>
void set_binary(OpTable& t, OpKind op, const char* name) {
  OpInfo& o = t.row(op);
  o.name = name;
  o.shape = binary_shape;
  o.forward[0] = binary_forward<F>;
  o.backward[0] = binary_backward<F>;
  o.batch = BatchKind::Elementwise;
}

// ---------------------------------------------------------------- with a scalar
struct ScalarParams {
  float c = 0.f;
};

Dim unary_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return xs[0]->d;
}

// y = x + c;  dx += dy
void add_scalar_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  arr(n.value) = arr(*xs[0]) + n.p<ScalarParams>().c;
}
void add_scalar_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                         ExecContext&) {
  arr(dx) += arr(dy);
}
// y = c x;  dx += c dy
void mul_scalar_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  arr(n.value) = arr(*xs[0]) * n.p<ScalarParams>().c;
}
void mul_scalar_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                         ExecContext&) {
  arr(dx) += arr(dy) * n.p<ScalarParams>().c;
}
// y = c - x;  dx -= dy
void scalar_minus_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  arr(n.value) = n.p<ScalarParams>().c - arr(*xs[0]);
}
void scalar_minus_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                           ExecContext&) {
  arr(dx) -= arr(dy);
}
// y = c / x;  dx -= y / x dy
void scalar_divide_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  arr(n.value) = n.p<ScalarParams>().c / arr(*xs[0]);
}
void scalar_divide_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                            ExecContext&) {
  arr(dx) -= arr(n.value) / arr(*xs[0]) * arr(dy);
}

// ---------------------------------------------------------------- n-ary sum
// All arguments have the same shape; batch sizes are equal or 1.
Dim sum_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim r = xs[0]->d;
  for (unsigned k = 1; k < n; ++k) {
    const Dim& d = xs[k]->d;
    DYNET_LITE_DIM_CHECK(same_shape_ignoring_batch(d, r),
                         op_name(node.op) << ": argument " << k << " has shape " << d << ", argument 0 has " << xs[0]->d);
    DYNET_LITE_DIM_CHECK(d.bd == r.bd || d.bd == 1 || r.bd == 1,
                         op_name(node.op) << ": argument " << k << " has batch size " << d.bd << ", others have " << r.bd);
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
  ScalarParams p;
  p.c = c;
  return detail::add(op, {x}, p);
}

}  // namespace

void register_arith_ops(OpTable& t) {
  set_binary<AddF>(t, OpKind::Add, "add");
  set_binary<SubF>(t, OpKind::Subtract, "subtract");
  set_binary<MulF>(t, OpKind::CMult, "cmult");
  set_binary<DivF>(t, OpKind::CDiv, "cdiv");
  set_binary<PowF>(t, OpKind::Pow, "pow");
  set_binary<MaxF>(t, OpKind::Max, "max");
  set_binary<MinF>(t, OpKind::Min, "min");

  struct Row {
    OpKind op;
    const char* name;
    ForwardFn f;
    BackwardFn b;
  };
  for (Row r : {Row{OpKind::AddScalar, "add_scalar", add_scalar_forward, add_scalar_backward},
                Row{OpKind::MultiplyScalar, "multiply_scalar", mul_scalar_forward, mul_scalar_backward},
                Row{OpKind::ScalarMinus, "scalar_minus", scalar_minus_forward, scalar_minus_backward},
                Row{OpKind::ScalarDivide, "scalar_divide", scalar_divide_forward, scalar_divide_backward}}) {
    OpInfo& o = t.row(r.op);
    o.name = r.name;
    o.shape = unary_shape;
    o.forward[0] = r.f;
    o.backward[0] = r.b;
    o.batch = BatchKind::Elementwise;
  }

  OpInfo& s = t.row(OpKind::Sum);
  s.name = "sum";
  s.shape = sum_shape;
  s.forward[0] = sum_forward;
  s.backward[0] = sum_backward;
  s.batch = BatchKind::Elementwise;
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
  DYNET_LITE_DIM_CHECK(bd.rows() == x.dim().rows(),
                       "colwise_add: bias " << bd << " has " << bd.rows() << " rows, x " << x.dim() << " has "
                                            << x.dim().rows());
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
