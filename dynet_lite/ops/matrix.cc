// Matrix products and transposition.
//
// Batch semantics (DyNet's): W * x is computed per batch element.  When W has a
// batch of 1 and x a batch of B, the B elements of x are laid side by side as
// columns (cpu::mat), so the whole batch is one GEMM; its gradient dW is one GEMM
// too (it sums over the batch by construction).
#include <cstring>
#include <string>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/exec/exec_context.h"
#include "dynet_lite/expr.h"

namespace dynet_lite {

namespace {

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

// y = b + W1 x1 + W2 x2 + ...;  b is {rows, cols} or a column {rows} added to
// every column, with a batch of 1 or B.
Dim affine_shape(const Tensor* const* xs, unsigned n, const Node& node) {
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
    DYNET_LITE_DIM_CHECK(t.bd == r.bd || t.bd == 1 || r.bd == 1,
                         op << ": W" << (k + 1) / 2 << " * x" << (k + 1) / 2 << " has batch size " << t.bd
                            << " but the terms before it have " << r.bd);
    if (t.bd > r.bd) r.bd = t.bd;
  }
  DYNET_LITE_DIM_CHECK(b.rows() == r.rows() && (b.cols() == r.cols() || b.cols() == 1),
                       op << ": bias " << b << " cannot be added to W1 * x1 " << r.single_batch() << " (W1 " << xs[1]->d
                          << ", x1 " << xs[2]->d << "): it must be " << r.single_batch() << " or a column {"
                          << r.rows() << "}");
  DYNET_LITE_DIM_CHECK(b.bd == r.bd || b.bd == 1 || r.bd == 1,
                       op << ": bias " << b << " has batch size " << b.bd << " but W1 * x1 has " << r.bd);
  if (b.bd > r.bd) r.bd = b.bd;
  return r;
}

// ---------------------------------------------------------------- product kernels

// Small products are written by hand: for a few hundred multiply-adds, Eigen's
// run-time dispatch on dynamic sizes costs more than the arithmetic (the chains
// of 8x8 products in benchmark T5).  Above the threshold Eigen's blocked GEMM wins.
constexpr size_t kSmallProduct = 4096;  // multiply-adds

inline bool small(size_t m, size_t k, size_t n) { return m * k * n <= kSmallProduct; }

template <int R>
using ConstBlock = Eigen::Map<const Eigen::Array<float, R, 1>>;
template <int R>
using Block = Eigen::Map<Eigen::Array<float, R, 1>>;

// Rows [i, i + R) of one output column, accumulated in registers:
// out[i..] (+)= sum_t a[t * m + i..] * s[t * s_step].
template <int R, bool kAccumulate>
inline void column_block(const float* a, size_t m, const float* s, size_t s_step, size_t T, float* out) {
  Block<R> dst(out);
  Eigen::Array<float, R, 1> acc;
  if (kAccumulate)
    acc = dst;
  else
    acc.setZero();
  for (size_t t = 0; t < T; ++t) acc += ConstBlock<R>(a + t * m) * s[t * s_step];
  dst = acc;
}

// For every output column c (m rows): out_c (+)= sum_t a_t * s[t * s_step + c * s_col],
// a_t the t-th column (m rows) of a.  Both the forward product and dW have this form.
template <bool kAccumulate>
void columns_times_scalars(const float* a, size_t m, size_t T, const float* s, size_t s_step, size_t s_col,
                           float* out, size_t C) {
  for (size_t c = 0; c < C; ++c, out += m) {
    const float* sc = s + c * s_col;
    size_t i = 0;
    for (; i + 8 <= m; i += 8) column_block<8, kAccumulate>(a + i, m, sc, s_step, T, out + i);
    if (i + 4 <= m) {
      column_block<4, kAccumulate>(a + i, m, sc, s_step, T, out + i);
      i += 4;
    }
    for (; i < m; ++i) {
      float acc = kAccumulate ? out[i] : 0.f;
      for (size_t t = 0; t < T; ++t) acc += a[t * m + i] * sc[t * s_step];
      out[i] = acc;
    }
  }
}

// y (+)= w x;  w m x k, x k x n, y m x n (column-major).
template <bool kAccumulate>
inline void small_product(const float* w, const float* x, float* y, size_t m, size_t k, size_t n) {
  columns_times_scalars<kAccumulate>(w, m, k, x, 1, k, y, n);
}

// dw += dy x^T;  dy m x n, x k x n, dw m x k.
void small_product_dw(const float* dy, const float* x, float* dw, size_t m, size_t k, size_t n) {
  if (n != 1) {
    columns_times_scalars<true>(dy, m, n, x, k, 1, dw, k);
    return;
  }
  // A rank-1 update: each block of dy stays in registers across the columns of dw.
  size_t i = 0;
  for (; i + 8 <= m; i += 8) {
    const Eigen::Array<float, 8, 1> d = ConstBlock<8>(dy + i);
    for (size_t p = 0; p < k; ++p) {
      Block<8> col(dw + p * m + i);
      col += d * x[p];
    }
  }
  for (; i < m; ++i)
    for (size_t p = 0; p < k; ++p) dw[p * m + i] += dy[i] * x[p];
}

// dx += w^T dy;  w m x k, dy m x n, dx k x n: dx[p, j] += <w_p, dy_j>.
// Four dot products at a time share the loads of dy and give the adds of one
// partial sum room to overlap with the others.
void small_product_dx(const float* w, const float* dy, float* dx, size_t m, size_t k, size_t n) {
  using Arr4 = Eigen::Array<float, 4, 1>;
  const size_t m4 = m & ~size_t(3);
  for (size_t j = 0; j < n; ++j, dy += m, dx += k) {
    size_t p = 0;
    for (; p + 4 <= k; p += 4) {
      const float* w0 = w + p * m;
      Arr4 a0 = Arr4::Zero(), a1 = Arr4::Zero(), a2 = Arr4::Zero(), a3 = Arr4::Zero();
      for (size_t i = 0; i < m4; i += 4) {
        const Arr4 d = ConstBlock<4>(dy + i);
        a0 += ConstBlock<4>(w0 + i) * d;
        a1 += ConstBlock<4>(w0 + m + i) * d;
        a2 += ConstBlock<4>(w0 + 2 * m + i) * d;
        a3 += ConstBlock<4>(w0 + 3 * m + i) * d;
      }
      float s0 = a0.sum(), s1 = a1.sum(), s2 = a2.sum(), s3 = a3.sum();
      for (size_t i = m4; i < m; ++i) {
        s0 += w0[i] * dy[i];
        s1 += w0[m + i] * dy[i];
        s2 += w0[2 * m + i] * dy[i];
        s3 += w0[3 * m + i] * dy[i];
      }
      dx[p] += s0;
      dx[p + 1] += s1;
      dx[p + 2] += s2;
      dx[p + 3] += s3;
    }
    for (; p < k; ++p) {
      const float* w0 = w + p * m;
      Arr4 a0 = Arr4::Zero();
      for (size_t i = 0; i < m4; i += 4) a0 += ConstBlock<4>(w0 + i) * ConstBlock<4>(dy + i);
      float s0 = a0.sum();
      for (size_t i = m4; i < m; ++i) s0 += w0[i] * dy[i];
      dx[p] += s0;
    }
  }
}

// Y (+)= W * X for every batch element of Y.  W and X broadcast a batch of 1.
template <bool kAccumulate>
void product(const Tensor& w, const Tensor& x, const Tensor& y) {
  const size_t m = w.d.rows(), k = w.d.cols();
  if (w.d.bd == 1 && x.d.bd == y.d.bd) {
    // One product: x's batch elements are extra columns.
    const size_t n = size_t(x.d.cols()) * x.d.bd;
    if (small(m, k, n))
      small_product<kAccumulate>(w.v, x.v, y.v, m, k, n);
    else if (kAccumulate)
      mat(y).noalias() += batch_mat(w, 0) * mat(x);
    else
      mat(y).noalias() = batch_mat(w, 0) * mat(x);
    return;
  }
  const size_t n = x.d.cols();
  for (unsigned b = 0; b < y.d.bd; ++b) {
    if (small(m, k, n))
      small_product<kAccumulate>(w.batch_ptr(b), x.batch_ptr(b), y.batch_ptr(b), m, k, n);
    else if (kAccumulate)
      batch_mat(y, b).noalias() += batch_mat(w, b) * batch_mat(x, b);
    else
      batch_mat(y, b).noalias() = batch_mat(w, b) * batch_mat(x, b);
  }
}

// dW += dY X^T (summed over the batch elements that share W).
void product_backward_w(const Tensor& x, const Tensor& dy, Tensor& dw) {
  const size_t m = dw.d.rows(), k = dw.d.cols();
  if (dw.d.bd == 1 && x.d.bd == dy.d.bd) {
    const size_t n = size_t(dy.d.cols()) * dy.d.bd;
    if (small(m, k, n))
      small_product_dw(dy.v, x.v, dw.v, m, k, n);
    else
      batch_mat(dw, 0).noalias() += mat(dy) * mat(x).transpose();
    return;
  }
  const size_t n = x.d.cols();
  for (unsigned b = 0; b < dy.d.bd; ++b) {
    if (small(m, k, n))
      small_product_dw(dy.batch_ptr(b), x.batch_ptr(b), dw.batch_ptr(b), m, k, n);
    else
      batch_mat(dw, b).noalias() += batch_mat(dy, b) * batch_mat(x, b).transpose();
  }
}

// dX += W^T dY (summed over the batch elements that share X).
void product_backward_x(const Tensor& w, const Tensor& dy, Tensor& dx) {
  const size_t m = w.d.rows(), k = w.d.cols();
  if (w.d.bd == 1 && dx.d.bd == dy.d.bd) {
    const size_t n = size_t(dy.d.cols()) * dy.d.bd;
    if (small(m, k, n))
      small_product_dx(w.v, dy.v, dx.v, m, k, n);
    else
      mat(dx).noalias() += batch_mat(w, 0).transpose() * mat(dy);
    return;
  }
  const size_t n = dx.d.cols();
  for (unsigned b = 0; b < dy.d.bd; ++b) {
    if (small(m, k, n))
      small_product_dx(w.batch_ptr(b), dy.batch_ptr(b), dx.batch_ptr(b), m, k, n);
    else
      batch_mat(dx, b).noalias() += batch_mat(w, b).transpose() * batch_mat(dy, b);
  }
}

// y = W x;  dW += dy x^T,  dx += W^T dy
void matmul_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  product<false>(*xs[0], *xs[1], node.value);
}
void matmul_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext&) {
  if (i == 0)
    product_backward_w(*xs[1], dy, dx);
  else
    product_backward_x(*xs[0], dy, dx);
}

// y = b + sum_k W_k x_k;  db += dy (summed over broadcast columns / batch),
// dW_k += dy x_k^T,  dx_k += W_k^T dy
void affine_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext&) {
  const Tensor& b = *xs[0];
  Tensor& y = node.value;
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
  for (unsigned k = 1; k < n; k += 2) product<true>(*xs[k], *xs[k + 1], y);
}

void affine_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext&) {
  if (i == 0) {
    if (dx.d.size() == dy.d.size()) {
      cpu::arr(dx) += cpu::arr(dy);
    } else if (dx.d.batch_size() == dy.d.batch_size()) {  // bias with a batch of 1
      for (unsigned k = 0; k < dy.d.bd; ++k) cpu::batch_arr(dx, 0) += cpu::batch_arr(dy, k);
    } else if (dx.d.bd == 1) {  // a column, batch of 1: sum every column of every element
      cpu::batch_vec(dx, 0) += mat(dy).rowwise().sum();
    } else {  // a column per batch element
      for (unsigned k = 0; k < dy.d.bd; ++k) cpu::batch_vec(dx, k) += batch_mat(dy, k).rowwise().sum();
    }
  } else if (i % 2 == 1) {
    product_backward_w(*xs[i + 1], dy, dx);
  } else {
    product_backward_x(*xs[i - 1], dy, dx);
  }
}

// Automatic batching stacks the members' b and x (and W when it is not a shared
// parameter) along the batch; the kernels above already treat batch elements
// independently and broadcast a batch of 1.  Affine has no parameters to merge.
bool affine_batch_combine(const Node* const*, unsigned, Node&, ExecContext&) { return true; }

// ---------------------------------------------------------------- transpose

struct TransposeParams {
  unsigned char perm[DYNET_MAX_TENSOR_DIM];  // output dim k is input dim perm[k]
  unsigned char n;
};

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

void register_matrix_ops(OpTable& t) {
  OpInfo& mm = t.row(OpKind::MatMul);
  mm.name = "matmul";
  mm.shape = matmul_shape;
  mm.forward[0] = matmul_forward;
  mm.backward[0] = matmul_backward;
  mm.batch = BatchKind::SharedFirst;

  OpInfo& af = t.row(OpKind::AffineTransform);
  af.name = "affine_transform";
  af.shape = affine_shape;
  af.forward[0] = affine_forward;
  af.backward[0] = affine_backward;
  af.batch = BatchKind::Custom;  // the shared weight is argument 1, not 0
  af.batch_combine = affine_batch_combine;

  OpInfo& tr = t.row(OpKind::Transpose);
  tr.name = "transpose";
  tr.shape = transpose_shape;
  tr.forward[0] = transpose_forward;
  tr.backward[0] = transpose_backward;
  tr.batch = BatchKind::Never;
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
