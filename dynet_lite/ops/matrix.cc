// Matrix products and transposition.
//
// Batch semantics (DyNet's): W * x is computed per batch element.  When W has a
// batch of 1 and x a batch of B, the B elements of x are laid side by side as
// columns (cpu::mat), so the whole batch is one GEMM; its gradient dW is one GEMM
// too (it sums over the batch by construction).
#include <cstring>
#include <string>
#include <type_traits>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/backends/cpu/gemm.h"
#include "dynet_lite/backends/cpu/transposed_weights.h"
#include "dynet_lite/backends/cpu/weight_grads.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/affine.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using op_params::TransposeParams;

using cpu::batch_mat;
using cpu::mat;

// ---------------------------------------------------------------- shapes

// Checks that `w` can multiply `x` (matrices, inner dims equal, batches
// compatible) and returns the shape of w * x.  The op's name is looked up only
// when a check fails: this runs on the build path of every product.
Dim product_shape(OpKind kind, const Dim& w, const Dim& x) {
  DYNET_LITE_DIM_CHECK(w.nd <= 2 && x.nd <= 2, op_name(kind) << ": W " << w << " and x " << x
                                                   << " must be matrices or vectors (at most 2 dimensions)");
  DYNET_LITE_DIM_CHECK(w.cols() == x.rows(), op_name(kind) << ": W " << w << " cannot multiply x " << x << ": inner dims "
                                                << w.cols() << " != " << x.rows());
  DYNET_LITE_DIM_CHECK(w.bd == x.bd || w.bd == 1 || x.bd == 1,
                       op_name(kind) << ": W " << w << " and x " << x << " have batch sizes " << w.bd << " and " << x.bd
                          << " (they must be equal or one of them 1)");
  Dim r;
  r.d[0] = w.rows();
  if (x.nd <= 1) {
    r.nd = 1;
  } else {
    r.d[1] = x.cols();
    r.nd = 2;
  }
  r.bd = w.bd > x.bd ? w.bd : x.bd;
  return r;
}

Dim matmul_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 2, op_name(node.op) << ": takes two arguments, got " << n);
  return product_shape(node.op, xs[0]->d, xs[1]->d);
}

// ---------------------------------------------------------------- product kernels

// Y (+)= W * X for every batch element of Y.  W and X broadcast a batch of 1.
template <bool kAccumulate>
void product(const Tensor& w, const Tensor& x, const Tensor& y) {
  const size_t m = w.d.rows(), k = w.d.cols();
  if (w.d.bd == 1 && x.d.bd == y.d.bd) {  // one product: x's batch elements are extra columns
    cpu::gemm(w.v, x.v, y.v, m, k, size_t(x.d.cols()) * x.d.bd, kAccumulate);
    return;
  }
  for (unsigned b = 0; b < y.d.bd; ++b) cpu::gemm(w.batch_ptr(b), x.batch_ptr(b), y.batch_ptr(b), m, k, x.d.cols(), kAccumulate);
}

// dW += dY X^T (summed over the batch elements that share W).  A parameter's
// term may be left for later, to be summed with its other uses (weight_grads.h).
void product_backward_w(const Tensor& x, const Tensor& dy, Tensor& dw, ExecContext& ctx) {
  const size_t m = dw.d.rows(), k = dw.d.cols();
  if (dw.d.bd == 1 && x.d.bd == dy.d.bd) {
    const size_t n = size_t(dy.d.cols()) * dy.d.bd;
    if (WeightGradSink* later = WeightGradSink::for_columns(ctx.weight_grads(), n)) {
      later->add(dw.v, dy.v, x.v, m, k, n);  // dW untouched, even when asked to assign it
      return;
    }
    cpu::gemm_nt(dy.v, x.v, dw.v, m, k, n, ctx.assign_dx());
    return;
  }
  ctx.zero_if_assigned(dw.v, dw.d.size());
  for (unsigned b = 0; b < dy.d.bd; ++b) cpu::gemm_nt(dy.batch_ptr(b), x.batch_ptr(b), dw.batch_ptr(b), m, k, x.d.cols());
}

// dX += W^T dY (summed over the batch elements that share X); = when the
// context asks to assign dX (ExecContext::assign_dx).
void product_backward_x(const Tensor& w, const Tensor& dy, Tensor& dx, ExecContext& ctx) {
  const size_t m = w.d.rows(), k = w.d.cols();
  if (w.d.bd == 1 && dx.d.bd == dy.d.bd) {
    gemm_tn(ctx, w.v, dy.v, dx.v, m, k, size_t(dy.d.cols()) * dy.d.bd, !ctx.assign_dx());
    return;
  }
  ctx.zero_if_assigned(dx.v, dx.d.size());
  for (unsigned b = 0; b < dy.d.bd; ++b) cpu::gemm_tn(w.batch_ptr(b), dy.batch_ptr(b), dx.batch_ptr(b), m, k, dx.d.cols());
}

// y = W x;  dW += dy x^T,  dx += W^T dy
void matmul_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  product<false>(*xs[0], *xs[1], node.value);
}
void matmul_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext& ctx) {
  if (i == 0) {
    product_backward_w(*xs[1], dy, dx, ctx);
  } else {
    product_backward_x(*xs[0], dy, dx, ctx);
  }
}

// y = b + sum_k W_k x_k;  db += dy (summed over broadcast columns / batch),
// dW_k += dy x_k^T,  dx_k += W_k^T dy
void affine_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext&) {
  affine::set_bias(*xs[0], node.value);
  affine::products(xs, n, node.value, true);
}

// ---------------------------------------------------------------- transpose

void print_perm(std::ostream& os, const TransposeParams& p) {
  os << '{';
  for (unsigned k = 0; k < p.n; ++k) os << (k ? "," : "") << static_cast<unsigned>(p.perm[k]);
  os << '}';
}
struct PermPrinter {
  const TransposeParams& p;
};
std::ostream& operator<<(std::ostream& os, const PermPrinter& pp) {
  print_perm(os, pp.p);
  return os;
}

Dim transpose_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, "transpose: takes one argument, got " << n);
  const TransposeParams& p = node.p<TransposeParams>();
  const Dim& x = xs[0]->d;
  for (unsigned k = p.n; k < x.nd; ++k)
    DYNET_LITE_DIM_CHECK(x.d[k] == 1, "transpose: x " << x << " has " << x.nd << " dimensions but dims "
                                                      << PermPrinter{p} << " permutes only " << unsigned(p.n));
  Dim r;
  r.nd = p.n;
  r.bd = x.bd;
  for (unsigned k = 0; k < p.n; ++k) r.d[k] = x[p.perm[k]];
  return r;
}

// The input's strides seen in output order, with unit dimensions dropped and
// contiguous runs merged; returns the number of loop levels.
unsigned transpose_loops(const Dim& x, const TransposeParams& p, size_t* size, size_t* stride) {
  size_t xstride[DYNET_MAX_TENSOR_DIM];
  size_t s = 1;
  for (unsigned k = 0; k < p.n; ++k) {
    xstride[k] = s;
    s *= x[k];
  }
  unsigned m = 0;
  for (unsigned k = 0; k < p.n; ++k) {
    size_t len = x[p.perm[k]], st = xstride[p.perm[k]];
    if (len == 1) continue;
    if (m > 0 && stride[m - 1] * size[m - 1] == st) {
      size[m - 1] *= len;  // continues the previous run in memory
      continue;
    }
    size[m] = len;
    stride[m] = st;
    ++m;
  }
  return m;
}

// Calls f(out_offset, in_offset) for every element of one batch element.
template <class F>
void transpose_walk(unsigned m, const size_t* size, const size_t* stride, F&& f) {
  size_t idx[DYNET_MAX_TENSOR_DIM] = {};
  size_t total = 1;
  for (unsigned k = 0; k < m; ++k) total *= size[k];
  size_t in = 0;
  for (size_t o = 0; o < total; ++o) {
    f(o, in);
    for (unsigned k = 0; k < m; ++k) {
      in += stride[k];
      if (++idx[k] < size[k]) break;
      in -= stride[k] * size[k];
      idx[k] = 0;
    }
  }
}

// y = x with its dimensions permuted;  dx += dy permuted back
void transpose_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor& x = *xs[0];
  Tensor& y = node.value;
  size_t size[DYNET_MAX_TENSOR_DIM], stride[DYNET_MAX_TENSOR_DIM];
  unsigned m = transpose_loops(x.d, node.p<TransposeParams>(), size, stride);
  if (m <= 1) {  // the layout does not change
    std::memcpy(y.v, x.v, x.d.size() * sizeof(float));
    return;
  }
  const size_t per = x.d.batch_size();
  if (m == 2 && stride[0] == size[1]) {  // a plain matrix transpose
    for (unsigned b = 0; b < x.d.bd; ++b)
      cpu::MatMap(y.v + b * per, size[0], size[1]) = cpu::MatMap(x.v + b * per, size[1], size[0]).transpose();
    return;
  }
  for (unsigned b = 0; b < x.d.bd; ++b) {
    const float* src = x.v + b * per;
    float* dst = y.v + b * per;
    transpose_walk(m, size, stride, [&](size_t o, size_t i) { dst[o] = src[i]; });
  }
}

void transpose_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                        ExecContext&) {
  size_t size[DYNET_MAX_TENSOR_DIM], stride[DYNET_MAX_TENSOR_DIM];
  unsigned m = transpose_loops(xs[0]->d, node.p<TransposeParams>(), size, stride);
  if (m <= 1) {
    cpu::arr(dx) += cpu::arr(dy);
    return;
  }
  const size_t per = dx.d.batch_size();
  if (m == 2 && stride[0] == size[1]) {
    for (unsigned b = 0; b < dx.d.bd; ++b)
      cpu::MatMap(dx.v + b * per, size[1], size[0]) += cpu::MatMap(dy.v + b * per, size[0], size[1]).transpose();
    return;
  }
  for (unsigned b = 0; b < dx.d.bd; ++b) {
    const float* src = dy.v + b * per;
    float* dst = dx.v + b * per;
    transpose_walk(m, size, stride, [&](size_t o, size_t i) { dst[i] += src[o]; });
  }
}

}  // namespace

namespace affine {

// y = b + W1 x1 + W2 x2 + ...;  b is {rows, cols} or a column {rows} added to
// every column, with a batch of 1 or B.
Dim shape(const Tensor* const* xs, unsigned n, const Node& node) {
  const char* op = op_name(node.op);
  DYNET_LITE_DIM_CHECK(n % 2 == 1, op << ": takes an odd number of arguments (b, W1, x1, W2, x2, ...), got " << n);
  const Dim& b = xs[0]->d;
  DYNET_LITE_DIM_CHECK(b.nd <= 2, op << ": bias " << b << " must be a matrix or a vector (at most 2 dimensions)");
  if (n == 1) return b;
  Dim r = product_shape(node.op, xs[1]->d, xs[2]->d);
  for (unsigned k = 3; k < n; k += 2) {
    Dim t = product_shape(node.op, xs[k]->d, xs[k + 1]->d);
    DYNET_LITE_DIM_CHECK(t.rows() == r.rows() && t.cols() == r.cols(),
                         op << ": W" << (k + 1) / 2 << " " << xs[k]->d << " * x" << (k + 1) / 2 << " " << xs[k + 1]->d
                            << " gives " << t.single_batch() << " but W1 " << xs[1]->d << " * x1 " << xs[2]->d
                            << " gives " << r.single_batch());
    DYNET_LITE_DIM_CHECK(t.bd == r.bd || t.bd == 1 || r.bd == 1, op << ": W" << (k + 1) / 2 << " * x" << (k + 1) / 2
                                                                    << " has batch size " << t.bd
                                                                    << " but the terms before it have " << r.bd);
    if (t.bd > r.bd) r.bd = t.bd;
  }
  DYNET_LITE_DIM_CHECK(b.rows() == r.rows() && (b.cols() == r.cols() || b.cols() == 1),
                       op << ": bias " << b << " cannot be added to W1 * x1 " << r.single_batch() << " (W1 " << xs[1]->d
                          << ", x1 " << xs[2]->d << "): it must be " << r.single_batch() << " or a column {" << r.rows()
                          << "}");
  DYNET_LITE_DIM_CHECK(b.bd == r.bd || b.bd == 1 || r.bd == 1,
                       op << ": bias " << b << " has batch size " << b.bd << " but W1 * x1 has " << r.bd);
  if (b.bd > r.bd) r.bd = b.bd;
  return r;
}

void products(const Tensor* const* xs, unsigned n, const Tensor& y, bool accumulate) {
  for (unsigned k = 1; k < n; k += 2) {
    if (accumulate || k > 1)
      product<true>(*xs[k], *xs[k + 1], y);
    else
      product<false>(*xs[k], *xs[k + 1], y);
  }
}

// y = b, b broadcast over y's columns and batch as affine_transform adds it.
void set_bias(const Tensor& b, const Tensor& y) {
  const size_t per = y.d.batch_size();
  if (b.d.size() == y.d.size()) {
    std::memcpy(y.v, b.v, y.d.size() * sizeof(float));
  } else if (b.d.batch_size() == per) {  // a batch of 1 broadcast over the batch
    for (unsigned k = 0; k < y.d.bd; ++k) std::memcpy(y.v + k * per, b.v, per * sizeof(float));
  } else {  // a column added to every column
    const unsigned rows = y.d.rows();
    const size_t cols = per / rows;
    for (unsigned k = 0; k < y.d.bd; ++k) {
      const float* src = b.batch_ptr(k);
      float* dst = y.v + k * per;
      for (size_t c = 0; c < cols; ++c) std::memcpy(dst + c * rows, src, rows * sizeof(float));
    }
  }
}

void backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
              ExecContext& ctx) {
  if (i == 0) {
    if (dx.d.size() == dy.d.size()) {
      if (ctx.assign_dx())
        cpu::arr(dx) = cpu::arr(dy);
      else
        cpu::arr(dx) += cpu::arr(dy);
      return;
    }
    ctx.zero_if_assigned(dx.v, dx.d.size());
    if (dx.d.batch_size() == dy.d.batch_size()) {  // bias with a batch of 1
      for (unsigned k = 0; k < dy.d.bd; ++k) cpu::batch_arr(dx, 0) += cpu::batch_arr(dy, k);
    } else if (dx.d.bd == 1) {  // a column, batch of 1: sum every column of every element
      cpu::batch_vec(dx, 0) += mat(dy).rowwise().sum();
    } else {  // a column per batch element
      for (unsigned k = 0; k < dy.d.bd; ++k) cpu::batch_vec(dx, k) += batch_mat(dy, k).rowwise().sum();
    }
  } else if (i % 2 == 1) {
    product_backward_w(*xs[i + 1], dy, dx, ctx);
  } else {
    product_backward_x(*xs[i - 1], dy, dx, ctx);
  }
}

}  // namespace affine

void register_matrix_ops(OpTable& t) {
  OpInfo& mm = t.define(OpKind::MatMul, "matrix", "matmul", matmul_shape, matmul_forward, matmul_backward,
                        BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);
  mm.assigns_gradient = true;

  // Stacks x and the bias where they differ; the weights (parameters) are passed once.
  OpInfo& af = t.define(OpKind::AffineTransform, "matrix", "affine_transform", affine::shape, affine_forward,
                        affine::backward, BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);
  af.assigns_gradient = true;

  t.define(OpKind::Transpose, "matrix", "transpose", transpose_shape, transpose_forward, transpose_backward,
           BatchKind::Never, Purity::Pure, Devices::CpuAndCuda);
}

Expression operator*(const Expression& x, const Expression& y) { return detail::add(OpKind::MatMul, {x, y}); }

Expression affine_transform(const std::initializer_list<Expression>& xs) {
  return detail::add(OpKind::AffineTransform, xs.begin(), static_cast<unsigned>(xs.size()), nullptr, 0);
}
Expression affine_transform(const std::vector<Expression>& xs) { return detail::add(OpKind::AffineTransform, xs); }

namespace {
std::string dims_string(const std::vector<unsigned>& dims) {
  std::string s = "{";
  for (size_t j = 0; j < dims.size(); ++j) s += (j ? "," : "") + std::to_string(dims[j]);
  return s + "}";
}
}  // namespace

Expression transpose(const Expression& x, const std::vector<unsigned>& dims) {
  TransposeParams p{};
  DYNET_LITE_DIM_CHECK(!dims.empty() && dims.size() <= DYNET_MAX_TENSOR_DIM,
                       "transpose: dims must list between 1 and " << DYNET_MAX_TENSOR_DIM << " dimensions, got "
                                                                  << dims.size() << " (x is " << x.dim() << ")");
  p.n = static_cast<unsigned char>(dims.size());
  bool seen[DYNET_MAX_TENSOR_DIM] = {};
  for (size_t k = 0; k < dims.size(); ++k) {
    unsigned v = dims[k];
    DYNET_LITE_DIM_CHECK(v < dims.size() && !seen[v], "transpose: dims " << dims_string(dims)
                                                          << " is not a permutation of 0.." << dims.size() - 1
                                                          << " (x is " << x.dim() << ")");
    seen[v] = true;
    p.perm[k] = static_cast<unsigned char>(v);
  }
  return detail::add(OpKind::Transpose, {x}, p);
}

}  // namespace dynet_lite
