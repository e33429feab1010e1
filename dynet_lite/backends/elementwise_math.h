#pragma once
// The element-wise ops' math, written once for the CPU kernels (ops/unary.cc,
// ops/arith.cc) and the CUDA kernels (backends/cuda/unary.cu, arith.cu).
//
// A unary functor carries, side by side:
//   f(x, a)                 y for one element (a: the op's float, e.g. elu's alpha)
//   d(x, y, a)              the derivative factor: dx += d(x, y, a) * dy
//   array_forward / array_backward
//                           the same over Eigen arrays (templates, so that nvcc
//                           never sees Eigen), kept because Eigen's vectorised
//                           tanh / exp differ in the last bit from the scalar ones
// A binary functor: f(a, b) and the partials da(a, b, y), db(a, b, y).
// The for_each_* lists pair every functor with its op and name: the family file
// declares a row for each, the CUDA backend fills the GPU column of each.  The unary
// functions' list is DYNET_LITE_UNARY_OPS (core/op_kind.h): a functor here and its
// line there make a unary op's enumerator, row, CUDA kernels and expression.
#include <math.h>

#include "dynet_lite/core/host_device.h"
#include "dynet_lite/core/op_kind.h"


namespace dynet_lite {
namespace math {

// ---------------------------------------------------------------- unary functions (ops/unary.cc)

// y = tanh(x);  dx += (1 - y^2) dy
struct Tanh {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return tanhf(x); }
  DYNET_LITE_HOST_DEVICE static float d(float, float y, float) { return 1.f - y * y; }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = x.tanh();
  }
  template <class A>
  static void array_backward(const A&, const A& y, const A& dy, A dx, float) {
    dx += (1.f - y.square()) * dy;
  }
};
// y = 1 / (1 + e^-x);  dx += y (1 - y) dy
struct Logistic {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return 1.f / (1.f + expf(-x)); }
  DYNET_LITE_HOST_DEVICE static float d(float, float y, float) { return y * (1.f - y); }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = 1.f / (1.f + (-x).exp());
  }
  template <class A>
  static void array_backward(const A&, const A& y, const A& dy, A dx, float) {
    dx += y * (1.f - y) * dy;
  }
};
// y = max(0, x);  dx += [x > 0] dy   (gradient 0 at the kink x = 0)
struct Rectify {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return x > 0.f ? x : 0.f; }
  DYNET_LITE_HOST_DEVICE static float d(float x, float, float) { return x > 0.f ? 1.f : 0.f; }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = x.max(0.f);
  }
  template <class A>
  static void array_backward(const A& x, const A&, const A& dy, A dx, float) {
    dx += (x > 0.f).template cast<float>() * dy;
  }
};
// y = x if x > 0 else a (e^x - 1);  dx += (x > 0 ? 1 : y + a) dy
struct Elu {
  DYNET_LITE_HOST_DEVICE static float f(float x, float a) { return x > 0.f ? x : a * (expf(x) - 1.f); }
  DYNET_LITE_HOST_DEVICE static float d(float x, float y, float a) { return x > 0.f ? 1.f : y + a; }
  template <class A>
  static void array_forward(const A& x, A y, float a) {
    y = (x > 0.f).select(x, a * (x.exp() - 1.f));
  }
  template <class A>
  static void array_backward(const A& x, const A& y, const A& dy, A dx, float a) {
    dx += (x > 0.f).select(dy, (y + a) * dy);
  }
};
// selu: y = s * elu(x, alpha) with the constants of Klambauer et al. 2017;
// dx += (x > 0 ? s : y + s alpha) dy
constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
constexpr float kSeluScale = 1.0507009873554804934193349852946f;
struct Selu {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) {
    return kSeluScale * (x > 0.f ? x : kSeluAlpha * (expf(x) - 1.f));
  }
  DYNET_LITE_HOST_DEVICE static float d(float x, float y, float) {
    return x > 0.f ? kSeluScale : y + kSeluScale * kSeluAlpha;
  }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = kSeluScale * (x > 0.f).select(x, kSeluAlpha * (x.exp() - 1.f));
  }
  template <class A>
  static void array_backward(const A& x, const A& y, const A& dy, A dx, float) {
    dx += (x > 0.f).select(kSeluScale * dy, (y + kSeluScale * kSeluAlpha) * dy);
  }
};
// y = x * sigmoid(b x);  dx += (s + b x s (1 - s)) dy, s = sigmoid(b x)
struct Silu {
  DYNET_LITE_HOST_DEVICE static float f(float x, float b) { return x / (1.f + expf(-b * x)); }
  DYNET_LITE_HOST_DEVICE static float d(float x, float, float b) {
    float s = 1.f / (1.f + expf(-b * x));
    return s + b * x * s * (1.f - s);
  }
  template <class A>
  static void array_forward(const A& x, A y, float b) {
    y = x / (1.f + (-b * x).exp());
  }
  template <class A>
  static void array_backward(const A& x, const A&, const A& dy, A dx, float b) {
    // element by element, so that no temporary array is allocated per node
    dx += x.binaryExpr(dy, [b](float xv, float g) { return d(xv, 0.f, b) * g; });
  }
};
// y = x / (1 + |x|);  dx += dy / (1 + |x|)^2
struct Softsign {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return x / (1.f + fabsf(x)); }
  DYNET_LITE_HOST_DEVICE static float d(float x, float, float) {
    float t = 1.f + fabsf(x);
    return 1.f / (t * t);
  }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = x / (1.f + x.abs());
  }
  template <class A>
  static void array_backward(const A& x, const A&, const A& dy, A dx, float) {
    dx += dy / (1.f + x.abs()).square();
  }
};
// y = e^x;  dx += y dy
struct Exp {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return expf(x); }
  DYNET_LITE_HOST_DEVICE static float d(float, float y, float) { return y; }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = x.exp();
  }
  template <class A>
  static void array_backward(const A&, const A& y, const A& dy, A dx, float) {
    dx += y * dy;
  }
};
// y = ln x;  dx += dy / x
struct Log {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return logf(x); }
  DYNET_LITE_HOST_DEVICE static float d(float x, float, float) { return 1.f / x; }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = x.log();
  }
  template <class A>
  static void array_backward(const A& x, const A&, const A& dy, A dx, float) {
    dx += dy / x;
  }
};
// y = sqrt(x);  dx += dy / (2 y)
struct Sqrt {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return sqrtf(x); }
  DYNET_LITE_HOST_DEVICE static float d(float, float y, float) { return 0.5f / y; }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = x.sqrt();
  }
  template <class A>
  static void array_backward(const A&, const A& y, const A& dy, A dx, float) {
    dx += dy / (2.f * y);
  }
};
// y = x^2;  dx += 2 x dy
struct Square {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return x * x; }
  DYNET_LITE_HOST_DEVICE static float d(float x, float, float) { return 2.f * x; }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = x.square();
  }
  template <class A>
  static void array_backward(const A& x, const A&, const A& dy, A dx, float) {
    dx += 2.f * x * dy;
  }
};
// y = x^3;  dx += 3 x^2 dy
struct Cube {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return x * x * x; }
  DYNET_LITE_HOST_DEVICE static float d(float x, float, float) { return 3.f * x * x; }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = x.cube();
  }
  template <class A>
  static void array_backward(const A& x, const A&, const A& dy, A dx, float) {
    dx += 3.f * x.square() * dy;
  }
};
// y = |x|;  dx += sign(x) dy   (0 at x = 0, as DyNet)
struct Abs {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return fabsf(x); }
  DYNET_LITE_HOST_DEVICE static float d(float x, float, float) { return x > 0.f ? 1.f : (x < 0.f ? -1.f : 0.f); }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = x.abs();
  }
  template <class A>
  static void array_backward(const A& x, const A&, const A& dy, A dx, float) {
    dx += x.sign() * dy;
  }
};
// y = erf(x);  dx += 2/sqrt(pi) e^{-x^2} dy
struct Erf {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return erff(x); }
  DYNET_LITE_HOST_DEVICE static float d(float x, float, float) { return 1.1283791670955126f * expf(-x * x); }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = x.unaryExpr([](float v) { return f(v, 0.f); });
  }
  template <class A>
  static void array_backward(const A& x, const A&, const A& dy, A dx, float) {
    dx += 1.1283791670955126f * (-x.square()).exp() * dy;
  }
};
// y = log sigmoid(x) = min(x, 0) - log(1 + e^{-|x|}) (stable for large |x|);
// dx += (1 - sigmoid(x)) dy = dy / (1 + e^x)
struct LogSigmoid {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return fminf(x, 0.f) - logf(1.f + expf(-fabsf(x))); }
  DYNET_LITE_HOST_DEVICE static float d(float x, float, float) { return 1.f / (1.f + expf(x)); }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = x.min(0.f) - (1.f + (-x.abs()).exp()).log();
  }
  template <class A>
  static void array_backward(const A& x, const A&, const A& dy, A dx, float) {
    dx += dy / (1.f + x.exp());
  }
};
// y = -x;  dx -= dy
struct Negate {
  DYNET_LITE_HOST_DEVICE static float f(float x, float) { return -x; }
  DYNET_LITE_HOST_DEVICE static float d(float, float, float) { return -1.f; }
  template <class A>
  static void array_forward(const A& x, A y, float) {
    y = -x;
  }
  template <class A>
  static void array_backward(const A&, const A&, const A& dy, A dx, float) {
    dx -= dy;
  }
};

/// visit(op, name, Functor{}) for every unary function: those of DYNET_LITE_UNARY_OPS
/// (core/op_kind.h), then negate.
template <class Visit>
void for_each_unary(Visit&& visit) {
#define DYNET_LITE_VISIT_UNARY(Kind, name) visit(OpKind::Kind, #name, Kind{});
  DYNET_LITE_UNARY_OPS(DYNET_LITE_VISIT_UNARY, DYNET_LITE_VISIT_UNARY)
#undef DYNET_LITE_VISIT_UNARY
  visit(OpKind::Negate, "negate", Negate{});
}

// ---------------------------------------------------------------- with a scalar c (ops/arith.cc)

// y = x + c;  dx += dy
struct AddScalar {
  DYNET_LITE_HOST_DEVICE static float f(float x, float c) { return x + c; }
  DYNET_LITE_HOST_DEVICE static float d(float, float, float) { return 1.f; }
  template <class A>
  static void array_forward(const A& x, A y, float c) {
    y = x + c;
  }
  template <class A>
  static void array_backward(const A&, const A&, const A& dy, A dx, float) {
    dx += dy;
  }
};
// y = c x;  dx += c dy
struct MultiplyScalar {
  DYNET_LITE_HOST_DEVICE static float f(float x, float c) { return c * x; }
  DYNET_LITE_HOST_DEVICE static float d(float, float, float c) { return c; }
  template <class A>
  static void array_forward(const A& x, A y, float c) {
    y = x * c;
  }
  template <class A>
  static void array_backward(const A&, const A&, const A& dy, A dx, float c) {
    dx += dy * c;
  }
};
// y = c - x;  dx -= dy
struct ScalarMinus {
  DYNET_LITE_HOST_DEVICE static float f(float x, float c) { return c - x; }
  DYNET_LITE_HOST_DEVICE static float d(float, float, float) { return -1.f; }
  template <class A>
  static void array_forward(const A& x, A y, float c) {
    y = c - x;
  }
  template <class A>
  static void array_backward(const A&, const A&, const A& dy, A dx, float) {
    dx -= dy;
  }
};
// y = c / x;  dx -= y / x dy
struct ScalarDivide {
  DYNET_LITE_HOST_DEVICE static float f(float x, float c) { return c / x; }
  DYNET_LITE_HOST_DEVICE static float d(float x, float y, float) { return -y / x; }
  template <class A>
  static void array_forward(const A& x, A y, float c) {
    y = c / x;
  }
  template <class A>
  static void array_backward(const A& x, const A& y, const A& dy, A dx, float) {
    dx -= y / x * dy;
  }
};

/// visit(op, name, Functor{}) for every op with a scalar constant.
template <class Visit>
void for_each_scalar_op(Visit&& visit) {
  visit(OpKind::AddScalar, "add_scalar", AddScalar{});
  visit(OpKind::MultiplyScalar, "multiply_scalar", MultiplyScalar{});
  visit(OpKind::ScalarMinus, "scalar_minus", ScalarMinus{});
  visit(OpKind::ScalarDivide, "scalar_divide", ScalarDivide{});
}

// ---------------------------------------------------------------- binary, with broadcasting (ops/arith.cc)

// y = a + b;  da += dy, db += dy
struct Add {
  DYNET_LITE_HOST_DEVICE static float f(float a, float b) { return a + b; }
  DYNET_LITE_HOST_DEVICE static float da(float, float, float) { return 1.f; }
  DYNET_LITE_HOST_DEVICE static float db(float, float, float) { return 1.f; }
};
// y = a - b;  da += dy, db -= dy
struct Subtract {
  DYNET_LITE_HOST_DEVICE static float f(float a, float b) { return a - b; }
  DYNET_LITE_HOST_DEVICE static float da(float, float, float) { return 1.f; }
  DYNET_LITE_HOST_DEVICE static float db(float, float, float) { return -1.f; }
};
// y = a * b;  da += b dy, db += a dy
struct CMult {
  DYNET_LITE_HOST_DEVICE static float f(float a, float b) { return a * b; }
  DYNET_LITE_HOST_DEVICE static float da(float, float b, float) { return b; }
  DYNET_LITE_HOST_DEVICE static float db(float a, float, float) { return a; }
};
// y = a / b;  da += dy / b, db -= y / b dy
struct CDiv {
  DYNET_LITE_HOST_DEVICE static float f(float a, float b) { return a / b; }
  DYNET_LITE_HOST_DEVICE static float da(float, float b, float) { return 1.f / b; }
  DYNET_LITE_HOST_DEVICE static float db(float, float b, float y) { return -y / b; }
};
// y = a ^ b;  da += b a^(b-1) dy, db += ln(a) y dy
struct Pow {
  DYNET_LITE_HOST_DEVICE static float f(float a, float b) { return powf(a, b); }
  DYNET_LITE_HOST_DEVICE static float da(float a, float b, float) { return b * powf(a, b - 1.f); }
  DYNET_LITE_HOST_DEVICE static float db(float a, float, float y) { return logf(a) * y; }
};
// y = max(a, b);  the larger side gets dy (a on ties)
struct Max {
  DYNET_LITE_HOST_DEVICE static float f(float a, float b) { return a >= b ? a : b; }
  DYNET_LITE_HOST_DEVICE static float da(float a, float b, float) { return a >= b ? 1.f : 0.f; }
  DYNET_LITE_HOST_DEVICE static float db(float a, float b, float) { return a >= b ? 0.f : 1.f; }
};
// y = min(a, b);  the smaller side gets dy (a on ties)
struct Min {
  DYNET_LITE_HOST_DEVICE static float f(float a, float b) { return a <= b ? a : b; }
  DYNET_LITE_HOST_DEVICE static float da(float a, float b, float) { return a <= b ? 1.f : 0.f; }
  DYNET_LITE_HOST_DEVICE static float db(float a, float b, float) { return a <= b ? 0.f : 1.f; }
};

/// visit(op, name, Functor{}) for every binary op.
template <class Visit>
void for_each_binary(Visit&& visit) {
  visit(OpKind::Add, "add", Add{});
  visit(OpKind::Subtract, "subtract", Subtract{});
  visit(OpKind::CMult, "cmult", CMult{});
  visit(OpKind::CDiv, "cdiv", CDiv{});
  visit(OpKind::Pow, "pow", Pow{});
  visit(OpKind::Max, "max", Max{});
  visit(OpKind::Min, "min", Min{});
}

}  // namespace math
}  // namespace dynet_lite
