// Element-wise functions y = f(x).  Each row: forward y = f(x) and backward
// dx += f'(x) * dy, written with x and/or y, whichever is cheaper.
#include <cmath>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using cpu::arr;

struct UnaryParams {
  float a = 0.f;  // elu's alpha, silu's beta
};

Dim same_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return xs[0]->d;
}

// Kernels over raw arrays: F(x, y, params) fills y; G(x, y, dy, dx, params) adds.
template <class F>
void map_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  F::forward(arr(*xs[0]), arr(n.value), n.p<UnaryParams>().a);
}
template <class F>
void map_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                  ExecContext&) {
  F::backward(arr(*xs[0]), arr(n.value), arr(dy), arr(dx), n.p<UnaryParams>().a);
}

using A = cpu::ArrMap;

// y = tanh(x);  dx += (1 - y^2) dy
struct TanhF {
  static void forward(const A& x, A y, float) { y = x.tanh(); }
  static void backward(const A&, const A& y, const A& dy, A dx, float) { dx += (1.f - y.square()) * dy; }
};
// y = 1 / (1 + e^-x);  dx += y (1 - y) dy
struct LogisticF {
  static void forward(const A& x, A y, float) { y = 1.f / (1.f + (-x).exp()); }
  static void backward(const A&, const A& y, const A& dy, A dx, float) { dx += y * (1.f - y) * dy; }
};
// y = max(0, x);  dx += [x > 0] dy   (gradient 0 at the kink x = 0)
struct RectifyF {
  static void forward(const A& x, A y, float) { y = x.max(0.f); }
  static void backward(const A& x, const A&, const A& dy, A dx, float) { dx += (x > 0.f).cast<float>() * dy; }
};
// y = x if x > 0 else a (e^x - 1);  dx += (x > 0 ? 1 : y + a) dy
struct EluF {
  static void forward(const A& x, A y, float a) { y = (x > 0.f).select(x, a * (x.exp() - 1.f)); }
  static void backward(const A& x, const A& y, const A& dy, A dx, float a) {
    dx += (x > 0.f).select(dy, (y + a) * dy);
  }
};
// selu: y = s * elu(x, alpha) with the constants of Klambauer et al. 2017
constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
constexpr float kSeluScale = 1.0507009873554804934193349852946f;
struct SeluF {
  static void forward(const A& x, A y, float) {
    y = kSeluScale * (x > 0.f).select(x, kSeluAlpha * (x.exp() - 1.f));
  }
  static void backward(const A& x, const A& y, const A& dy, A dx, float) {
    dx += (x > 0.f).select(kSeluScale * dy, (y + kSeluScale * kSeluAlpha) * dy);
  }
};
// y = x * sigmoid(b x);  dx += (s + b x s (1 - s)) dy, s = sigmoid(b x)
struct SiluF {
  static void forward(const A& x, A y, float b) { y = x / (1.f + (-b * x).exp()); }
  static void backward(const A& x, const A&, const A& dy, A dx, float b) {
    // element by element, so that no temporary array is allocated per node
    dx += x.binaryExpr(dy, [b](float xv, float g) {
      float s = 1.f / (1.f + std::exp(-b * xv));
      return (s + b * xv * s * (1.f - s)) * g;
    });
  }
};
// y = x / (1 + |x|);  dx += dy / (1 + |x|)^2
struct SoftsignF {
  static void forward(const A& x, A y, float) { y = x / (1.f + x.abs()); }
  static void backward(const A& x, const A&, const A& dy, A dx, float) { dx += dy / (1.f + x.abs()).square(); }
};
// y = e^x;  dx += y dy
struct ExpF {
  static void forward(const A& x, A y, float) { y = x.exp(); }
  static void backward(const A&, const A& y, const A& dy, A dx, float) { dx += y * dy; }
};
// y = ln x;  dx += dy / x
struct LogF {
  static void forward(const A& x, A y, float) { y = x.log(); }
  static void backward(const A& x, const A&, const A& dy, A dx, float) { dx += dy / x; }
};
// y = sqrt(x);  dx += dy / (2 y)
struct SqrtF {
  static void forward(const A& x, A y, float) { y = x.sqrt(); }
  static void backward(const A&, const A& y, const A& dy, A dx, float) { dx += dy / (2.f * y); }
};
// y = x^2;  dx += 2 x dy
struct SquareF {
  static void forward(const A& x, A y, float) { y = x.square(); }
  static void backward(const A& x, const A&, const A& dy, A dx, float) { dx += 2.f * x * dy; }
};
// y = x^3;  dx += 3 x^2 dy
struct CubeF {
  static void forward(const A& x, A y, float) { y = x.cube(); }
  static void backward(const A& x, const A&, const A& dy, A dx, float) { dx += 3.f * x.square() * dy; }
};
// y = |x|;  dx += sign(x) dy   (0 at x = 0, as DyNet)
struct AbsF {
  static void forward(const A& x, A y, float) { y = x.abs(); }
  static void backward(const A& x, const A&, const A& dy, A dx, float) { dx += x.sign() * dy; }
};
// y = erf(x);  dx += 2/sqrt(pi) e^{-x^2} dy
struct ErfF {
  static void forward(const A& x, A y, float) { y = x.unaryExpr([](float v) { return std::erf(v); }); }
  static void backward(const A& x, const A&, const A& dy, A dx, float) {
    dx += 1.1283791670955126f * (-x.square()).exp() * dy;
  }
};
// y = log sigmoid(x) = -softplus(-x);  dx += (1 - sigmoid(x)) dy = sigmoid(-x) dy
struct LogSigmoidF {
  static void forward(const A& x, A y, float) {
    // min(x, 0) - log(1 + e^{-|x|}) is stable for large |x|
    y = x.min(0.f) - (1.f + (-x.abs()).exp()).log();
  }
  static void backward(const A& x, const A&, const A& dy, A dx, float) { dx += dy / (1.f + x.exp()); }
};
// y = -x;  dx -= dy
struct NegateF {
  static void forward(const A& x, A y, float) { y = -x; }
  static void backward(const A&, const A&, const A& dy, A dx, float) { dx -= dy; }
};

template <class F>
void set_row(OpTable& t, OpKind op, const char* name) {
  OpInfo& o = t.row(op);
  o.name = name;
  o.shape = same_shape;
  o.forward[0] = map_forward<F>;
  o.backward[0] = map_backward<F>;
  o.batch = BatchKind::Elementwise;
}

Expression unary(OpKind op, const Expression& x, float a = 0.f) {
  UnaryParams p;
  p.a = a;
  return detail::add(op, {x}, p);
}

}  // namespace

void register_unary_ops(OpTable& t) {
  set_row<TanhF>(t, OpKind::Tanh, "tanh");
  set_row<LogisticF>(t, OpKind::Logistic, "logistic");
  set_row<RectifyF>(t, OpKind::Rectify, "rectify");
  set_row<EluF>(t, OpKind::Elu, "elu");
  set_row<SeluF>(t, OpKind::Selu, "selu");
  set_row<SiluF>(t, OpKind::Silu, "silu");
  set_row<SoftsignF>(t, OpKind::Softsign, "softsign");
  set_row<ExpF>(t, OpKind::Exp, "exp");
  set_row<LogF>(t, OpKind::Log, "log");
  set_row<SqrtF>(t, OpKind::Sqrt, "sqrt");
  set_row<SquareF>(t, OpKind::Square, "square");
  set_row<CubeF>(t, OpKind::Cube, "cube");
  set_row<AbsF>(t, OpKind::Abs, "abs");
  set_row<ErfF>(t, OpKind::Erf, "erf");
  set_row<LogSigmoidF>(t, OpKind::LogSigmoid, "log_sigmoid");
  set_row<NegateF>(t, OpKind::Negate, "negate");
}

Expression tanh(const Expression& x) { return unary(OpKind::Tanh, x); }
Expression logistic(const Expression& x) { return unary(OpKind::Logistic, x); }
Expression rectify(const Expression& x) { return unary(OpKind::Rectify, x); }
Expression elu(const Expression& x, float alpha) { return unary(OpKind::Elu, x, alpha); }
Expression selu(const Expression& x) { return unary(OpKind::Selu, x); }
Expression silu(const Expression& x, float beta) { return unary(OpKind::Silu, x, beta); }
Expression softsign(const Expression& x) { return unary(OpKind::Softsign, x); }
Expression exp(const Expression& x) { return unary(OpKind::Exp, x); }
Expression log(const Expression& x) { return unary(OpKind::Log, x); }
Expression sqrt(const Expression& x) { return unary(OpKind::Sqrt, x); }
Expression square(const Expression& x) { return unary(OpKind::Square, x); }
Expression cube(const Expression& x) { return unary(OpKind::Cube, x); }
Expression abs(const Expression& x) { return unary(OpKind::Abs, x); }
Expression erf(const Expression& x) { return unary(OpKind::Erf, x); }
Expression log_sigmoid(const Expression& x) { return unary(OpKind::LogSigmoid, x); }
Expression operator-(const Expression& x) { return unary(OpKind::Negate, x); }

}  // namespace dynet_lite
