// More element-wise functions: trigonometric and hyperbolic functions and their
// inverses, log-gamma, and rounding.  Each row: forward y = f(x), backward
// dx += f'(x) * dy (written with x or y, whichever is cheaper).
#include <cmath>
#include <limits>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using cpu::arr;
using A = cpu::ArrMap;

struct RoundingParams {
  bool straight_through = false;
};

Dim same_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return xs[0]->d;
}

template <class F>
void map_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  F::forward(arr(*xs[0]), arr(n.value));
}
template <class F>
void map_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                  ExecContext&) {
  F::backward(arr(*xs[0]), arr(n.value), arr(dy), arr(dx));
}

// y = sin x;  dx += cos(x) dy
struct SinF {
  static void forward(const A& x, A y) { y = x.sin(); }
  static void backward(const A& x, const A&, const A& dy, A dx) { dx += x.cos() * dy; }
};
// y = cos x;  dx -= sin(x) dy
struct CosF {
  static void forward(const A& x, A y) { y = x.cos(); }
  static void backward(const A& x, const A&, const A& dy, A dx) { dx -= x.sin() * dy; }
};
// y = tan x;  dx += (1 + y^2) dy
struct TanF {
  static void forward(const A& x, A y) { y = x.tan(); }
  static void backward(const A&, const A& y, const A& dy, A dx) { dx += (1.f + y.square()) * dy; }
};
// y = asin x;  dx += dy / sqrt(1 - x^2)
struct AsinF {
  static void forward(const A& x, A y) { y = x.asin(); }
  static void backward(const A& x, const A&, const A& dy, A dx) { dx += dy / (1.f - x.square()).sqrt(); }
};
// y = acos x;  dx -= dy / sqrt(1 - x^2)
struct AcosF {
  static void forward(const A& x, A y) { y = x.acos(); }
  static void backward(const A& x, const A&, const A& dy, A dx) { dx -= dy / (1.f - x.square()).sqrt(); }
};
// y = atan x;  dx += dy / (1 + x^2)
struct AtanF {
  static void forward(const A& x, A y) { y = x.atan(); }
  static void backward(const A& x, const A&, const A& dy, A dx) { dx += dy / (1.f + x.square()); }
};
// y = sinh x;  dx += cosh(x) dy
struct SinhF {
  static void forward(const A& x, A y) { y = x.sinh(); }
  static void backward(const A& x, const A&, const A& dy, A dx) { dx += x.cosh() * dy; }
};
// y = cosh x;  dx += sinh(x) dy
struct CoshF {
  static void forward(const A& x, A y) { y = x.cosh(); }
  static void backward(const A& x, const A&, const A& dy, A dx) { dx += x.sinh() * dy; }
};
// y = asinh x;  dx += dy / sqrt(x^2 + 1)
struct AsinhF {
  static void forward(const A& x, A y) {
    y = x.unaryExpr([](float v) { return std::asinh(v); });
  }
  static void backward(const A& x, const A&, const A& dy, A dx) { dx += dy / (x.square() + 1.f).sqrt(); }
};
// y = acosh x (x >= 1);  dx += dy / sqrt(x^2 - 1)
struct AcoshF {
  static void forward(const A& x, A y) {
    y = x.unaryExpr([](float v) { return std::acosh(v); });
  }
  static void backward(const A& x, const A&, const A& dy, A dx) { dx += dy / (x.square() - 1.f).sqrt(); }
};
// y = atanh x (|x| < 1);  dx += dy / (1 - x^2)
struct AtanhF {
  static void forward(const A& x, A y) {
    y = x.unaryExpr([](float v) { return std::atanh(v); });
  }
  static void backward(const A& x, const A&, const A& dy, A dx) { dx += dy / (1.f - x.square()); }
};

// digamma(x) = d/dx ln Gamma(x): shift x up to >= 6 with psi(x) = psi(x + 1) - 1/x,
// then the asymptotic series; reflection psi(1 - x) - psi(x) = pi cot(pi x) for x < 0.5.
double digamma(double x) {
  if (std::isnan(x)) return x;
  if (x <= 0.0 && x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();  // poles
  double result = 0.0;
  if (x < 0.5) {
    const double pi = 3.14159265358979323846;
    result -= pi / std::tan(pi * x);
    x = 1.0 - x;
  }
  while (x < 6.0) {
    result -= 1.0 / x;
    x += 1.0;
  }
  double inv = 1.0 / x, inv2 = inv * inv;
  // ln x - 1/(2x) - 1/(12x^2) + 1/(120x^4) - 1/(252x^6) + 1/(240x^8) - 1/(132x^10)
  double series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 * (1.0 / 132)))));
  return result + std::log(x) - 0.5 * inv - series;
}

// y = ln |Gamma(x)|;  dx += digamma(x) dy
struct LgammaF {
  static void forward(const A& x, A y) {
    y = x.unaryExpr([](float v) { return std::lgamma(v); });
  }
  static void backward(const A& x, const A&, const A& dy, A dx) {
    dx += x.binaryExpr(dy, [](float v, float g) { return static_cast<float>(digamma(v)) * g; });
  }
};

template <class F>
void set_row(OpTable& t, OpKind op, const char* name) {
  t.define(op, "trig", name, same_shape, map_forward<F>, map_backward<F>, BatchKind::Elementwise, Purity::Impure);
}

// ---------------------------------------------------------------- rounding
// y = round(x) / ceil(x) / floor(x);  dx += 0 (zero_gradient, the true derivative
// wherever it exists) or dx += dy (straight_through_gradient).
void round_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  arr(n.value) = arr(*xs[0]).unaryExpr([](float v) { return std::round(v); });
}
void ceil_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) { arr(n.value) = arr(*xs[0]).ceil(); }
void floor_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) { arr(n.value) = arr(*xs[0]).floor(); }
void rounding_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                       ExecContext&) {
  if (n.p<RoundingParams>().straight_through) arr(dx) += arr(dy);
}

void set_rounding_row(OpTable& t, OpKind op, const char* name, ForwardFn f) {
  t.define(op, "trig", name, same_shape, f, rounding_backward, BatchKind::Elementwise, Purity::Impure);
}

Expression rounding(OpKind op, const Expression& x, GradientMode mode) {
  DYNET_LITE_ARG_CHECK(mode == zero_gradient || mode == straight_through_gradient,
                       op_name(op) << ": unknown gradient mode " << static_cast<int>(mode) << " for x "
                                   << (x.is_stale() ? std::string("(stale)") : to_string(x.dim())));
  RoundingParams p;
  p.straight_through = mode == straight_through_gradient;
  return detail::add(op, {x}, p);
}

}  // namespace

void register_trig_ops(OpTable& t) {
  set_row<SinF>(t, OpKind::Sin, "sin");
  set_row<CosF>(t, OpKind::Cos, "cos");
  set_row<TanF>(t, OpKind::Tan, "tan");
  set_row<AsinF>(t, OpKind::Asin, "asin");
  set_row<AcosF>(t, OpKind::Acos, "acos");
  set_row<AtanF>(t, OpKind::Atan, "atan");
  set_row<SinhF>(t, OpKind::Sinh, "sinh");
  set_row<CoshF>(t, OpKind::Cosh, "cosh");
  set_row<AsinhF>(t, OpKind::Asinh, "asinh");
  set_row<AcoshF>(t, OpKind::Acosh, "acosh");
  set_row<AtanhF>(t, OpKind::Atanh, "atanh");
  set_row<LgammaF>(t, OpKind::Lgamma, "lgamma");
  set_rounding_row(t, OpKind::Round, "round", round_forward);
  set_rounding_row(t, OpKind::Ceil, "ceil", ceil_forward);
  set_rounding_row(t, OpKind::Floor, "floor", floor_forward);
}

Expression sin(const Expression& x) { return detail::add(OpKind::Sin, {x}); }
Expression cos(const Expression& x) { return detail::add(OpKind::Cos, {x}); }
Expression tan(const Expression& x) { return detail::add(OpKind::Tan, {x}); }
Expression asin(const Expression& x) { return detail::add(OpKind::Asin, {x}); }
Expression acos(const Expression& x) { return detail::add(OpKind::Acos, {x}); }
Expression atan(const Expression& x) { return detail::add(OpKind::Atan, {x}); }
Expression sinh(const Expression& x) { return detail::add(OpKind::Sinh, {x}); }
Expression cosh(const Expression& x) { return detail::add(OpKind::Cosh, {x}); }
Expression asinh(const Expression& x) { return detail::add(OpKind::Asinh, {x}); }
Expression acosh(const Expression& x) { return detail::add(OpKind::Acosh, {x}); }
Expression atanh(const Expression& x) { return detail::add(OpKind::Atanh, {x}); }
Expression lgamma(const Expression& x) { return detail::add(OpKind::Lgamma, {x}); }
Expression round(const Expression& x, GradientMode gradient_mode) { return rounding(OpKind::Round, x, gradient_mode); }
Expression ceil(const Expression& x, GradientMode gradient_mode) { return rounding(OpKind::Ceil, x, gradient_mode); }
Expression floor(const Expression& x, GradientMode gradient_mode) { return rounding(OpKind::Floor, x, gradient_mode); }

}  // namespace dynet_lite
