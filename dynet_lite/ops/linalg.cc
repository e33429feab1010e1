// Tensor contractions and matrix functions: contract3d_1d, contract3d_1d_1d,
// inverse, logdet, trace_of_product, weight_norm.
//
// Every kernel works batch element by batch element and broadcasts an argument
// with a batch of 1, so all of them batch as Elementwise.  Matrix functions use
// Eigen's LU with partial pivoting in place on scratch memory; a matrix whose LU
// has a (numerically) zero pivot is reported as singular.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using cpu::MatMap;
using cpu::VecMap;
using ConstMatMap = Eigen::Map<const Eigen::MatrixXf>;
using ConstVecMap = Eigen::Map<const Eigen::VectorXf>;
using LU = Eigen::PartialPivLU<Eigen::Ref<Eigen::MatrixXf>>;

// The common batch size of the arguments (each equal to it or 1); throws naming
// the op and every argument's shape otherwise.
unsigned common_batch(const char* op, const Tensor* const* xs, unsigned n, const char* const* names) {
  unsigned bd = 1;
  for (unsigned k = 0; k < n; ++k) bd = std::max(bd, xs[k]->d.bd);
  for (unsigned k = 0; k < n; ++k) {
    if (xs[k]->d.bd == 1 || xs[k]->d.bd == bd) continue;
    std::ostringstream os;
    os << op << ": batch sizes must be equal or 1, got";
    for (unsigned j = 0; j < n; ++j) os << (j ? "," : "") << " " << names[j] << " " << xs[j]->d;
    throw dim_error(os.str());
  }
  return bd;
}

// ---------------------------------------------------------------- contract3d_1d

// y[i, j] = sum_k x[i, j, k] z[k] (+ b[i, j]):  with X = x seen as (A B) x C,
// y = X z.  dX += dy z^T,  dz += X^T dy,  db += dy
Dim contract1_shape(const Tensor* const* xs, unsigned n, const Node&) {
  DYNET_LITE_DIM_CHECK(n == 2 || n == 3, "contract3d_1d: takes x, y and optionally b, got " << n << " arguments");
  const Dim& x = xs[0]->d;
  const Dim& y = xs[1]->d;
  DYNET_LITE_DIM_CHECK(x.nd <= 3 && y.nd <= 1 && y[0] == x[2],
                       "contract3d_1d: x " << x << " must be {A,B,C} and y " << y << " a vector {C} with C = " << x[2]);
  static const char* const names[] = {"x", "y", "b"};
  unsigned bd = common_batch("contract3d_1d", xs, n, names);
  if (n == 3) {
    const Dim& b = xs[2]->d;
    DYNET_LITE_DIM_CHECK(b.nd <= 2 && b[0] == x[0] && b[1] == x[1],
                         "contract3d_1d: bias b " << b << " must be {" << x[0] << "," << x[1] << "} for x " << x);
  }
  return Dim({x[0], x[1]}, bd);
}

void contract1_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext&) {
  const Tensor& x = *xs[0];
  Tensor& y = node.value;
  const Eigen::Index ab = Eigen::Index(x.d[0]) * x.d[1], c = x.d[2];
  for (unsigned b = 0; b < y.d.bd; ++b) {
    VecMap yb(y.batch_ptr(b), ab);
    yb.noalias() = ConstMatMap(x.batch_ptr(b), ab, c) * ConstVecMap(xs[1]->batch_ptr(b), c);
    if (n == 3) yb += ConstVecMap(xs[2]->batch_ptr(b), ab);
  }
}

void contract1_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                        ExecContext&) {
  const Tensor& x = *xs[0];
  const Eigen::Index ab = Eigen::Index(x.d[0]) * x.d[1], c = x.d[2];
  for (unsigned b = 0; b < dy.d.bd; ++b) {
    ConstVecMap g(dy.batch_ptr(b), ab);
    if (i == 0)
      MatMap(dx.batch_ptr(b), ab, c).noalias() += g * ConstVecMap(xs[1]->batch_ptr(b), c).transpose();
    else if (i == 1)
      VecMap(dx.batch_ptr(b), c).noalias() += ConstMatMap(x.batch_ptr(b), ab, c).transpose() * g;
    else
      VecMap(dx.batch_ptr(b), ab) += g;
  }
}

// ---------------------------------------------------------------- contract3d_1d_1d

// out[i] = sum_{j,k} x[i, j, k] y[k] z[j] (+ b[i]):  T = X y (an A x B matrix),
// out = T z.  With M = dout z^T:  dX += vec(M) y^T,  dy += X^T vec(M),
// dz += T^T dout,  db += dout
Dim contract2_shape(const Tensor* const* xs, unsigned n, const Node&) {
  DYNET_LITE_DIM_CHECK(n == 3 || n == 4, "contract3d_1d_1d: takes x, y, z and optionally b, got " << n << " arguments");
  const Dim& x = xs[0]->d;
  const Dim& y = xs[1]->d;
  const Dim& z = xs[2]->d;
  DYNET_LITE_DIM_CHECK(x.nd <= 3 && y.nd <= 1 && z.nd <= 1 && y[0] == x[2] && z[0] == x[1],
                       "contract3d_1d_1d: x " << x << " must be {A,B,C}, y " << y << " a vector {C} with C = " << x[2]
                                              << " and z " << z << " a vector {B} with B = " << x[1]);
  static const char* const names[] = {"x", "y", "z", "b"};
  unsigned bd = common_batch("contract3d_1d_1d", xs, n, names);
  if (n == 4) {
    const Dim& b = xs[3]->d;
    DYNET_LITE_DIM_CHECK(b.nd <= 1 && b[0] == x[0],
                         "contract3d_1d_1d: bias b " << b << " must be {" << x[0] << "} for x " << x);
  }
  return Dim({x[0]}, bd);
}

void contract2_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  Tensor& y = node.value;
  const Eigen::Index A = x.d[0], B = x.d[1], C = x.d[2];
  MatMap t(ctx.scratch_floats(size_t(A * B)), A, B);
  for (unsigned b = 0; b < y.d.bd; ++b) {
    VecMap(t.data(), A * B).noalias() = ConstMatMap(x.batch_ptr(b), A * B, C) * ConstVecMap(xs[1]->batch_ptr(b), C);
    VecMap yb(y.batch_ptr(b), A);
    yb.noalias() = t * ConstVecMap(xs[2]->batch_ptr(b), B);
    if (n == 4) yb += ConstVecMap(xs[3]->batch_ptr(b), A);
  }
}

void contract2_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                        ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const Eigen::Index A = x.d[0], B = x.d[1], C = x.d[2];
  if (i == 3) {
    for (unsigned b = 0; b < dy.d.bd; ++b) VecMap(dx.batch_ptr(b), A) += ConstVecMap(dy.batch_ptr(b), A);
    return;
  }
  MatMap t(ctx.scratch_floats(size_t(A * B)), A, B);
  for (unsigned b = 0; b < dy.d.bd; ++b) {
    ConstVecMap g(dy.batch_ptr(b), A);
    ConstMatMap X(x.batch_ptr(b), A * B, C);
    ConstVecMap yv(xs[1]->batch_ptr(b), C);
    ConstVecMap zv(xs[2]->batch_ptr(b), B);
    if (i == 2) {
      VecMap(t.data(), A * B).noalias() = X * yv;
      VecMap(dx.batch_ptr(b), B).noalias() += t.transpose() * g;
      continue;
    }
    t.noalias() = g * zv.transpose();
    ConstVecMap m(t.data(), A * B);
    if (i == 0)
      MatMap(dx.batch_ptr(b), A * B, C).noalias() += m * yv.transpose();
    else
      VecMap(dx.batch_ptr(b), C).noalias() += X.transpose() * m;
  }
}

// ---------------------------------------------------------------- inverse, logdet

Dim square_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  const char* op = op_name(node.op);
  DYNET_LITE_DIM_CHECK(n == 1, op << ": takes one argument, got " << n);
  const Dim& x = xs[0]->d;
  DYNET_LITE_DIM_CHECK(x.nd <= 2 && x.rows() == x.cols() && x.rows() > 0,
                       op << ": x " << x << " must be a non-empty square matrix");
  if (node.op == OpKind::LogDet) return Dim({1}, x.bd);
  return x;
}

// Runs f(lu, b) with the LU of every batch element b of the n x n matrix x,
// factored in place in scratch memory.  Throws when a pivot is zero relative to
// x's largest entry (at float precision): the matrix is singular.
template <class F>
void for_each_lu(const Tensor& x, ExecContext& ctx, const char* op, F&& f) {
  const Eigen::Index n = x.d.rows();
  MatMap a(ctx.scratch_floats(size_t(n * n)), n, n);
  a = ConstMatMap(x.batch_ptr(0), n, n);
  LU lu(a);  // factors batch element 0
  for (unsigned b = 0; b < x.d.bd; ++b) {
    if (b > 0) {
      a = ConstMatMap(x.batch_ptr(b), n, n);
      lu.compute(a);
    }
    const float scale = ConstMatMap(x.batch_ptr(b), n, n).cwiseAbs().maxCoeff();
    for (Eigen::Index k = 0; k < n; ++k) {
      const float p = std::fabs(lu.matrixLU()(k, k));
      DYNET_LITE_CHECK(p > scale * float(n) * FLT_EPSILON && std::isfinite(p), std::runtime_error,
                       op << ": x " << x.d << " is singular" << (x.d.bd > 1 ? " in batch element " : "")
                          << (x.d.bd > 1 ? std::to_string(b) : std::string()) << " (pivot " << k
                          << " of its LU decomposition is " << lu.matrixLU()(k, k) << ")");
    }
    f(lu, b);
  }
}

// y = x^{-1};  dx += -y^T dy y^T
void inverse_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  const Eigen::Index n = xs[0]->d.rows();
  for_each_lu(*xs[0], ctx, "inverse",
              [&](const LU& lu, unsigned b) { MatMap(node.value.batch_ptr(b), n, n) = lu.inverse(); });
}

void inverse_backward(const Tensor* const*, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                      ExecContext& ctx) {
  const Tensor& y = node.value;
  const Eigen::Index n = y.d.rows();
  MatMap t(ctx.scratch_floats(size_t(n * n)), n, n);
  for (unsigned b = 0; b < dy.d.bd; ++b) {
    ConstMatMap yb(y.batch_ptr(b), n, n);
    t.noalias() = yb.transpose() * ConstMatMap(dy.batch_ptr(b), n, n);
    MatMap(dx.batch_ptr(b), n, n).noalias() -= t * yb.transpose();
  }
}

// y = log |det x|;  dx += dy x^{-T}
// (DyNet takes the log of the determinant itself, NaN when it is negative; the
// absolute value gives the same number and gradient wherever DyNet's is defined.)
void logdet_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  for_each_lu(*xs[0], ctx, "logdet", [&](const LU& lu, unsigned b) {
    node.value.batch_ptr(b)[0] = lu.matrixLU().diagonal().array().abs().log().sum();
  });
}

void logdet_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                     ExecContext& ctx) {
  const Eigen::Index n = xs[0]->d.rows();
  MatMap inv(ctx.scratch_floats(size_t(n * n)), n, n);
  for_each_lu(*xs[0], ctx, "logdet", [&](const LU& lu, unsigned b) {
    inv = lu.inverse();
    MatMap(dx.batch_ptr(b), n, n) += dy.batch_ptr(b)[0] * inv.transpose();
  });
}

// ---------------------------------------------------------------- trace_of_product

// y = tr(x z^T) = sum_ij x_ij z_ij;  dx += dy z,  dz += dy x
Dim trace_shape(const Tensor* const* xs, unsigned n, const Node&) {
  DYNET_LITE_DIM_CHECK(n == 2, "trace_of_product: takes two arguments, got " << n);
  const Dim& x = xs[0]->d;
  const Dim& y = xs[1]->d;
  DYNET_LITE_DIM_CHECK(x.nd <= 2 && y.nd <= 2 && x.rows() == y.rows() && x.cols() == y.cols(),
                       "trace_of_product: x " << x << " and y " << y << " must be matrices of the same shape");
  static const char* const names[] = {"x", "y"};
  return Dim({1}, common_batch("trace_of_product", xs, n, names));
}

void trace_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  for (unsigned b = 0; b < node.value.d.bd; ++b)
    node.value.batch_ptr(b)[0] = cpu::batch_vec(*xs[0], b).dot(cpu::batch_vec(*xs[1], b));
}

void trace_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                    ExecContext&) {
  const Tensor& other = *xs[1 - i];
  for (unsigned b = 0; b < dy.d.bd; ++b) cpu::batch_vec(dx, b) += dy.batch_ptr(b)[0] * cpu::batch_vec(other, b);
}

// ---------------------------------------------------------------- weight_norm

// y = g w / |w|;  dg += (dy . w) / |w|,  dw += g / |w| (dy - (dy . w) w / |w|^2)
Dim weight_norm_shape(const Tensor* const* xs, unsigned n, const Node&) {
  DYNET_LITE_DIM_CHECK(n == 2, "weight_norm: takes w and g, got " << n << " arguments");
  const Dim& w = xs[0]->d;
  const Dim& g = xs[1]->d;
  DYNET_LITE_DIM_CHECK(g.batch_size() == 1, "weight_norm: g " << g << " must be a scalar (w is " << w << ")");
  DYNET_LITE_DIM_CHECK(w.batch_size() > 0, "weight_norm: w " << w << " must not be empty");
  static const char* const names[] = {"w", "g"};
  Dim r = w;
  r.bd = common_batch("weight_norm", xs, n, names);
  return r;
}

float checked_norm(const Tensor& w, unsigned b) {
  float norm = cpu::batch_vec(w, b).norm();
  DYNET_LITE_CHECK(norm > 0.f, std::runtime_error,
                   "weight_norm: w " << w.d << " is all zeros" << (w.d.bd > 1 ? " in batch element " : "")
                                     << (w.d.bd > 1 ? std::to_string(b) : std::string())
                                     << ": its direction is undefined");
  return norm;
}

void weight_norm_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor& w = *xs[0];
  for (unsigned b = 0; b < node.value.d.bd; ++b)
    cpu::batch_vec(node.value, b) = (xs[1]->batch_ptr(b)[0] / checked_norm(w, b)) * cpu::batch_vec(w, b);
}

void weight_norm_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                          ExecContext&) {
  const Tensor& w = *xs[0];
  for (unsigned b = 0; b < dy.d.bd; ++b) {
    auto wb = cpu::batch_vec(w, b);
    auto gb = cpu::batch_vec(dy, b);
    const float norm = checked_norm(w, b);
    const float dot = gb.dot(wb);
    if (i == 1) {
      dx.batch_ptr(b)[0] += dot / norm;
    } else {
      const float g = xs[1]->batch_ptr(b)[0];
      cpu::batch_vec(dx, b) += (g / norm) * (gb - (dot / (norm * norm)) * wb);
    }
  }
}

}  // namespace

void register_linalg_ops(OpTable& t) {
  t.define(OpKind::Contract3D1D, "linalg", "contract3d_1d", contract1_shape, contract1_forward, contract1_backward,
           BatchKind::Elementwise, Purity::Impure);
  t.define(OpKind::Contract3D1D1D, "linalg", "contract3d_1d_1d", contract2_shape, contract2_forward, contract2_backward,
           BatchKind::Elementwise, Purity::Impure);
  t.define(OpKind::Inverse, "linalg", "inverse", square_shape, inverse_forward, inverse_backward,
           BatchKind::Elementwise, Purity::Impure);
  t.define(OpKind::LogDet, "linalg", "logdet", square_shape, logdet_forward, logdet_backward, BatchKind::Elementwise,
           Purity::Impure);
  t.define(OpKind::TraceOfProduct, "linalg", "trace_of_product", trace_shape, trace_forward, trace_backward,
           BatchKind::Elementwise, Purity::Impure);
  t.define(OpKind::WeightNorm, "linalg", "weight_norm", weight_norm_shape, weight_norm_forward, weight_norm_backward,
           BatchKind::Elementwise, Purity::Impure);
}

Expression contract3d_1d(const Expression& x, const Expression& y) { return detail::add(OpKind::Contract3D1D, {x, y}); }
Expression contract3d_1d(const Expression& x, const Expression& y, const Expression& b) {
  return detail::add(OpKind::Contract3D1D, {x, y, b});
}
Expression contract3d_1d_1d(const Expression& x, const Expression& y, const Expression& z) {
  return detail::add(OpKind::Contract3D1D1D, {x, y, z});
}
Expression contract3d_1d_1d(const Expression& x, const Expression& y, const Expression& z, const Expression& b) {
  return detail::add(OpKind::Contract3D1D1D, {x, y, z, b});
}
Expression inverse(const Expression& x) { return detail::add(OpKind::Inverse, {x}); }
Expression logdet(const Expression& x) { return detail::add(OpKind::LogDet, {x}); }
Expression trace_of_product(const Expression& x, const Expression& y) {
  return detail::add(OpKind::TraceOfProduct, {x, y});
}
Expression weight_norm(const Expression& w, const Expression& g) { return detail::add(OpKind::WeightNorm, {w, g}); }

}  // namespace dynet_lite
