// Moments and standard deviations over elements, dimensions or the batch;
// cumulative sums, log-sum-exp along a dimension, row folding, k-max pooling,
// n-gram sums and strided selection.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"
#include "dynet_lite/ops/reduce_dims.h"

namespace dynet_lite {

namespace {

constexpr unsigned kAxes = DYNET_MAX_TENSOR_DIM + 1;  // the dimensions plus the batch

Dim one_arg(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return xs[0]->d;
}

// ================================================================ moments and std

// Which elements are reduced together: dimensions in `mask` (bit k: dimension k)
// and the batch when `batch`; `r` the order of the moment; `n` overrides the
// divisor when non-zero.
struct StatParams {
  uint32_t mask = 0;
  bool batch = false;
  unsigned char unused[3] = {};  // no padding: parameters are compared byte by byte
  unsigned r = 1;
  unsigned n = 0;
};

bool is_std(OpKind op) { return op == OpKind::StdElems || op == OpKind::StdDim || op == OpKind::StdBatches; }

// The reduction a node performs on input shape x (the *_elems and *_batches ops
// fix it by their kind).
void reduction_of(const Node& node, const Dim& x, uint32_t* mask, bool* batch) {
  const StatParams& p = node.p<StatParams>();
  switch (node.op) {
    case OpKind::MomentElems:
    case OpKind::StdElems:
      *mask = (1u << x.nd) - 1u;
      *batch = false;
      break;
    case OpKind::MomentBatches:
    case OpKind::StdBatches:
      *mask = 0;
      *batch = true;
      break;
    default:
      *mask = p.mask;
      *batch = p.batch;
  }
}

// Maps every input element (in memory order) to its output element: axis k of
// the input (the batch last) has size[k] and moves the output offset by
// out_stride[k] (0 for a reduced axis).
struct ReduceMap {
  unsigned axes = 0;
  size_t size[kAxes];
  size_t out_stride[kAxes];
  size_t total = 1;  // input elements
  size_t count = 1;  // input elements per output element

  ReduceMap(const Dim& x, uint32_t mask, bool batch) {
    size_t out = 1;
    for (unsigned k = 0; k <= x.nd; ++k) {
      size_t s = k < x.nd ? x.d[k] : x.bd;
      bool reduced = k < x.nd ? ((mask >> k) & 1u) != 0 : batch;
      total *= s;
      if (reduced) count *= s;
      if (s == 1) continue;  // changes no offset
      size[axes] = s;
      out_stride[axes] = reduced ? 0 : out;
      if (!reduced) out *= s;
      ++axes;
    }
  }

  // f(input offset, output offset) for every input element.
  template <class F>
  void for_each(F f) const {
    size_t counter[kAxes] = {};
    size_t j = 0;
    for (size_t i = 0; i < total; ++i) {
      f(i, j);
      for (unsigned k = 0; k < axes; ++k) {
        j += out_stride[k];
        if (++counter[k] < size[k]) break;
        j -= out_stride[k] * size[k];
        counter[k] = 0;
      }
    }
  }
};

// The map of the reduction `node` performs on input shape x.
ReduceMap reduce_map_of(const Node& node, const Dim& x) {
  uint32_t mask;
  bool batch;
  reduction_of(node, x, &mask, &batch);
  return ReduceMap(x, mask, batch);
}

float int_pow(float v, unsigned r) {
  float p = 1.f;
  for (unsigned i = 0; i < r; ++i) p *= v;
  return p;
}

float divisor_of(const StatParams& p, const ReduceMap& m) { return static_cast<float>(p.n != 0 ? p.n : m.count); }

Dim moment_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim x = one_arg(xs, n, node);
  const StatParams& p = node.p<StatParams>();
  if (!is_std(node.op))
    DYNET_LITE_ARG_CHECK(p.r >= 1, op_name(node.op) << ": the order of the moment must be >= 1, got " << p.r);
  switch (node.op) {
    case OpKind::MomentElems:
    case OpKind::StdElems:
      return Dim({1}, x.bd);
    case OpKind::MomentBatches:
    case OpKind::StdBatches:
      return x.single_batch();
    default:
      break;
  }
  return reduced_dims_shape(node.op, x, p.mask, p.batch);
}

// y[j] = (1/n) sum_{i -> j} x_i^r;  dx_i += (r/n) x_i^(r-1) dy_j
void moment_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor& x = *xs[0];
  const StatParams& p = node.p<StatParams>();
  const ReduceMap m = reduce_map_of(node, x.d);
  float* y = node.value.v;
  std::memset(y, 0, node.value.d.size() * sizeof(float));
  unsigned r = p.r;
  m.for_each([&](size_t i, size_t j) { y[j] += int_pow(x.v[i], r); });
  float scale = 1.f / divisor_of(p, m);
  for (size_t j = 0; j < node.value.d.size(); ++j) y[j] *= scale;
}
void moment_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                     ExecContext&) {
  const Tensor& x = *xs[0];
  const StatParams& p = node.p<StatParams>();
  const ReduceMap m = reduce_map_of(node, x.d);
  float scale = static_cast<float>(p.r) / divisor_of(p, m);
  unsigned r1 = p.r - 1;
  m.for_each([&](size_t i, size_t j) { dx.v[i] += scale * int_pow(x.v[i], r1) * dy.v[j]; });
}

// mean[j] = (1/n) sum_{i -> j} x_i, in scratch memory of `ctx` (output-sized).
const float* means(const Tensor& x, const ReduceMap& m, float divisor, size_t ysize, ExecContext& ctx) {
  float* mean = ctx.scratch_floats(ysize);
  std::memset(mean, 0, ysize * sizeof(float));
  m.for_each([&](size_t i, size_t j) { mean[j] += x.v[i]; });
  for (size_t j = 0; j < ysize; ++j) mean[j] /= divisor;
  return mean;
}

// m_j = (1/n) sum x_i,  y_j = sqrt((1/n) sum (x_i - m_j)^2).
// dy_j/dx_i = ((x_i - m_j) - (n - c) m_j / n) / (n y_j), c the number of reduced
// elements (the second term vanishes unless n is overridden).  Where y_j = 0 (all
// elements equal) the gradient is taken as 0.
void std_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const StatParams& p = node.p<StatParams>();
  const ReduceMap m = reduce_map_of(node, x.d);
  size_t ysize = node.value.d.size();
  float n = divisor_of(p, m);
  const float* mean = means(x, m, n, ysize, ctx);
  float* y = node.value.v;
  std::memset(y, 0, ysize * sizeof(float));
  m.for_each([&](size_t i, size_t j) {
    float c = x.v[i] - mean[j];
    y[j] += c * c;
  });
  for (size_t j = 0; j < ysize; ++j) y[j] = std::sqrt(y[j] / n);
}
void std_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                  ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const StatParams& p = node.p<StatParams>();
  const ReduceMap m = reduce_map_of(node, x.d);
  size_t ysize = node.value.d.size();
  float n = divisor_of(p, m);
  float correction = (n - static_cast<float>(m.count)) / n;
  const float* mean = means(x, m, n, ysize, ctx);
  // per output element: dy_j / (n y_j), or 0 where y_j = 0
  float* g = ctx.scratch_floats(ysize);
  for (size_t j = 0; j < ysize; ++j) {
    float yj = node.value.v[j];
    g[j] = yj > 0.f ? dy.v[j] / (n * yj) : 0.f;
  }
  m.for_each([&](size_t i, size_t j) { dx.v[i] += g[j] * ((x.v[i] - mean[j]) - correction * mean[j]); });
}

Expression stat_expr(OpKind op, const char* name, const Expression& x, const std::vector<unsigned>* dims, bool b,
                     unsigned r, unsigned n) {
  StatParams p;
  p.batch = b;
  p.r = r;
  p.n = n;
  if (dims) p.mask = reduced_dims_mask(name, *dims);
  return detail::add(op, {x}, p);
}

// ================================================================ along one dimension

struct AxisParams {
  unsigned d = 0;
  unsigned k = 0;  // kmax_pooling's k, fold_rows' nrows, kmh_ngram's n
};

// Element (i, l, o) of a tensor seen along dimension d: inner elements before d,
// len along d, outer after it (batch included), at (o * len + l) * inner + i.
struct AxisLayout {
  size_t inner = 1, len = 1, outer = 1;
  AxisLayout(const Dim& x, unsigned d) {
    for (unsigned k = 0; k < d && k < x.nd; ++k) inner *= x.d[k];
    len = x[d];
    for (unsigned k = d + 1; k < x.nd; ++k) outer *= x.d[k];
    outer *= x.bd;
  }
};

// ---------------------------------------------------------------- cumsum
Dim cumsum_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim x = one_arg(xs, n, node);
  unsigned d = node.p<AxisParams>().d;
  DYNET_LITE_DIM_CHECK(d <= x.nd,
                       "cumsum: dimension " << d << " is out of range for " << x << " (" << x.nd << " dimensions)");
  return x;
}
// y_l = sum_{m <= l} x_m along d;  dx_m += sum_{l >= m} dy_l
void cumsum_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor& x = *xs[0];
  AxisLayout a(x.d, node.p<AxisParams>().d);
  float* y = node.value.v;
  for (size_t o = 0; o < a.outer; ++o) {
    size_t base = o * a.len * a.inner;
    for (size_t i = 0; i < a.inner; ++i) y[base + i] = x.v[base + i];
    for (size_t l = 1; l < a.len; ++l)
      for (size_t i = 0; i < a.inner; ++i) {
        size_t at = base + l * a.inner + i;
        y[at] = y[at - a.inner] + x.v[at];
      }
  }
}
void cumsum_backward(const Tensor* const*, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                     ExecContext& ctx) {
  AxisLayout a(dx.d, node.p<AxisParams>().d);
  float* run = ctx.scratch_floats(a.inner);
  for (size_t o = 0; o < a.outer; ++o) {
    size_t base = o * a.len * a.inner;
    std::fill(run, run + a.inner, 0.f);
    for (size_t l = a.len; l-- > 0;)
      for (size_t i = 0; i < a.inner; ++i) {
        size_t at = base + l * a.inner + i;
        run[i] += dy.v[at];
        dx.v[at] += run[i];
      }
  }
}

// ---------------------------------------------------------------- logsumexp_dim
Dim logsumexp_dim_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim x = one_arg(xs, n, node);
  unsigned d = node.p<AxisParams>().d;
  DYNET_LITE_DIM_CHECK(
      d < x.nd, "logsumexp_dim: dimension " << d << " is out of range for " << x << " (" << x.nd << " dimensions)");
  x.delete_dim(d);
  return x;
}
// y = m + log sum_l exp(x_l - m), m = max_l x_l;  dx_l += exp(x_l - y) dy
void logsumexp_dim_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor& x = *xs[0];
  AxisLayout a(x.d, node.p<AxisParams>().d);
  float* y = node.value.v;
  for (size_t o = 0; o < a.outer; ++o)
    for (size_t i = 0; i < a.inner; ++i) {
      const float* xi = x.v + o * a.len * a.inner + i;
      float m = xi[0];
      for (size_t l = 1; l < a.len; ++l) m = std::max(m, xi[l * a.inner]);
      float out = m;
      if (std::isfinite(m)) {
        float s = 0.f;
        for (size_t l = 0; l < a.len; ++l) s += std::exp(xi[l * a.inner] - m);
        out = m + std::log(s);
      }
      y[o * a.inner + i] = out;
    }
}
void logsumexp_dim_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                            ExecContext&) {
  const Tensor& x = *xs[0];
  AxisLayout a(x.d, node.p<AxisParams>().d);
  for (size_t o = 0; o < a.outer; ++o)
    for (size_t i = 0; i < a.inner; ++i) {
      size_t j = o * a.inner + i;
      float yj = node.value.v[j];
      if (!std::isfinite(yj)) continue;  // every x_l = -inf: no gradient
      for (size_t l = 0; l < a.len; ++l) {
        size_t at = (o * a.len + l) * a.inner + i;
        dx.v[at] += std::exp(x.v[at] - yj) * dy.v[j];
      }
    }
}

// ---------------------------------------------------------------- fold_rows
Dim fold_rows_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim x = one_arg(xs, n, node);
  unsigned nrows = node.p<AxisParams>().k;
  DYNET_LITE_DIM_CHECK(x.nd <= 2, "fold_rows: expects a vector or a matrix, got " << x);
  DYNET_LITE_DIM_CHECK(nrows >= 1 && x.rows() % nrows == 0,
                       "fold_rows: " << x.rows() << " rows of " << x << " cannot be folded in groups of " << nrows);
  Dim r = x;
  r.d[0] = x.rows() / nrows;
  return r;
}
// y[r, c] = sum_{j < nrows} x[r * nrows + j, c];  dx[r * nrows + j, c] += dy[r, c]
void fold_rows_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor& x = *xs[0];
  unsigned nrows = node.p<AxisParams>().k;
  size_t cols = x.d.size() / x.d.rows();  // columns of all batch elements
  size_t orows = x.d.rows() / nrows;
  for (size_t c = 0; c < cols; ++c)
    for (size_t r = 0; r < orows; ++r) {
      const float* src = x.v + c * x.d.rows() + r * nrows;
      float s = 0.f;
      for (unsigned j = 0; j < nrows; ++j) s += src[j];
      node.value.v[c * orows + r] = s;
    }
}
void fold_rows_backward(const Tensor* const*, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                        ExecContext&) {
  unsigned nrows = node.p<AxisParams>().k;
  size_t cols = dx.d.size() / dx.d.rows();
  size_t orows = dx.d.rows() / nrows;
  for (size_t c = 0; c < cols; ++c)
    for (size_t r = 0; r < orows; ++r) {
      float* dst = dx.v + c * dx.d.rows() + r * nrows;
      float g = dy.v[c * orows + r];
      for (unsigned j = 0; j < nrows; ++j) dst[j] += g;
    }
}

// ---------------------------------------------------------------- kmax_pooling
Dim kmax_pooling_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim x = one_arg(xs, n, node);
  const AxisParams& p = node.p<AxisParams>();
  DYNET_LITE_DIM_CHECK(
      p.d < x.nd, "kmax_pooling: dimension " << p.d << " is out of range for " << x << " (" << x.nd << " dimensions)");
  DYNET_LITE_DIM_CHECK(p.k >= 1 && p.k <= x.d[p.d], "kmax_pooling: k = " << p.k << " must be between 1 and " << x.d[p.d]
                                                                         << ", the size of dimension " << p.d << " of "
                                                                         << x);
  x.d[p.d] = p.k;
  return x;
}
// y = the k largest x_l along d, in their original order (ties: the earliest);
// dx[chosen l] += dy.  The chosen positions are kept in node.aux for backward.
void kmax_pooling_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const AxisParams& p = node.p<AxisParams>();
  AxisLayout a(x.d, p.d);
  size_t k = p.k;
  uint32_t* pos = reinterpret_cast<uint32_t*>(ctx.persistent_floats(node.value.d.size()));
  node.aux = pos;
  float* line = ctx.scratch_floats(a.len);
  for (size_t o = 0; o < a.outer; ++o)
    for (size_t i = 0; i < a.inner; ++i) {
      const float* xi = x.v + o * a.len * a.inner + i;
      // NaN would break nth_element's ordering: it ranks below everything (and is never chosen)
      for (size_t l = 0; l < a.len; ++l) {
        float v = xi[l * a.inner];
        line[l] = std::isnan(v) ? -std::numeric_limits<float>::infinity() : v;
      }
      std::nth_element(line, line + (k - 1), line + a.len, [](float u, float v) { return u > v; });
      float kth = line[k - 1];  // the k-th largest value
      size_t above = 0;
      for (size_t l = 0; l < a.len; ++l) above += xi[l * a.inner] > kth;
      size_t ties = k - above;  // how many elements equal to kth to take
      size_t t = 0;
      for (size_t l = 0; l < a.len && t < k; ++l) {
        float v = xi[l * a.inner];
        bool take = v > kth || (v == kth && ties > 0);
        if (!take) continue;
        if (!(v > kth)) --ties;
        size_t out = (o * k + t) * a.inner + i;
        node.value.v[out] = v;
        pos[out] = static_cast<uint32_t>(l);
        ++t;
      }
      for (; t < k; ++t) {  // only with NaNs in the line: they are never chosen
        size_t out = (o * k + t) * a.inner + i;
        node.value.v[out] = std::numeric_limits<float>::quiet_NaN();
        pos[out] = UINT32_MAX;
      }
    }
}
void kmax_pooling_backward(const Tensor* const*, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                           ExecContext&) {
  const AxisParams& p = node.p<AxisParams>();
  AxisLayout a(dx.d, p.d);
  const uint32_t* pos = static_cast<const uint32_t*>(node.aux);
  size_t k = p.k;
  for (size_t o = 0; o < a.outer; ++o)
    for (size_t t = 0; t < k; ++t)
      for (size_t i = 0; i < a.inner; ++i) {
        size_t out = (o * k + t) * a.inner + i;
        if (pos[out] == UINT32_MAX) continue;
        dx.v[(o * a.len + pos[out]) * a.inner + i] += dy.v[out];
      }
}

// ---------------------------------------------------------------- kmh_ngram
Dim kmh_ngram_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim x = one_arg(xs, n, node);
  unsigned ngram = node.p<AxisParams>().k;
  DYNET_LITE_DIM_CHECK(x.nd <= 2, "kmh_ngram: expects a matrix, got " << x);
  DYNET_LITE_DIM_CHECK(ngram >= 1 && ngram <= x.cols(),
                       "kmh_ngram: n = " << ngram << " must be between 1 and the " << x.cols() << " columns of " << x);
  return Dim({x.rows(), x.cols() - ngram + 1}, x.bd);
}
// y[:, c] = sum_{j < n} x[:, c + j];  dx[:, c + j] += dy[:, c]
void kmh_ngram_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor& x = *xs[0];
  unsigned ngram = node.p<AxisParams>().k;
  unsigned ocols = node.value.d.cols();
  for (unsigned b = 0; b < x.d.bd; ++b) {
    cpu::MatMap xm = cpu::batch_mat(x, b);
    cpu::MatMap ym = cpu::batch_mat(node.value, b);
    for (unsigned c = 0; c < ocols; ++c) {
      ym.col(c) = xm.col(c);
      for (unsigned j = 1; j < ngram; ++j) ym.col(c) += xm.col(c + j);
    }
  }
}
void kmh_ngram_backward(const Tensor* const*, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                        ExecContext&) {
  unsigned ngram = node.p<AxisParams>().k;
  unsigned ocols = dy.d.cols();
  for (unsigned b = 0; b < dx.d.bd; ++b) {
    cpu::MatMap gm = cpu::batch_mat(dx, b);
    cpu::MatMap dym = cpu::batch_mat(dy, b);
    for (unsigned c = 0; c < ocols; ++c)
      for (unsigned j = 0; j < ngram; ++j) gm.col(c + j) += dym.col(c);
  }
}

Expression axis_expr(OpKind op, const Expression& x, unsigned d, unsigned k) {
  AxisParams p;
  p.d = d;
  p.k = k;
  return detail::add(op, {x}, p);
}

// ================================================================ strided_select

// The user's lists, copied into graph memory: strides, then from, then to.
struct StridedParams {
  const int* lists = nullptr;
  uint8_t num_strides = 0, num_from = 0, num_to = 0;
  unsigned char unused[5] = {};  // no padding: parameters are compared byte by byte
};

// Per axis (the dimensions, then the batch): first index, step and output length.
struct StridedLayout {
  unsigned axes = 0;
  size_t from[kAxes], step[kAxes], len[kAxes], in_stride[kAxes];

  StridedLayout(const Dim& x, const StridedParams& p) {
    axes = x.nd + 1;
    size_t stride = 1;
    for (unsigned k = 0; k < axes; ++k) {
      size_t size = k < x.nd ? x.d[k] : x.bd;
      const int* strides = p.lists;
      const int* f = p.lists + p.num_strides;
      const int* t = f + p.num_from;
      from[k] = k < p.num_from ? static_cast<size_t>(f[k]) : 0;
      size_t to = k < p.num_to ? static_cast<size_t>(t[k]) : size;
      step[k] = k < p.num_strides ? static_cast<size_t>(strides[k]) : 1;
      len[k] = (to - from[k] + step[k] - 1) / step[k];
      in_stride[k] = stride;
      stride *= size;
    }
  }

  // f(input offset, output offset) for every output element.
  template <class F>
  void for_each(F f) const {
    size_t total = 1;
    for (unsigned k = 0; k < axes; ++k) total *= len[k];
    if (total == 0) return;
    size_t counter[kAxes] = {};
    size_t i = 0;
    for (unsigned k = 0; k < axes; ++k) i += from[k] * in_stride[k];
    for (size_t j = 0; j < total; ++j) {
      f(i, j);
      for (unsigned k = 0; k < axes; ++k) {
        i += step[k] * in_stride[k];
        if (++counter[k] < len[k]) break;
        i -= step[k] * in_stride[k] * len[k];
        counter[k] = 0;
      }
    }
  }
};

Dim strided_select_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim x = one_arg(xs, n, node);
  const StridedParams& p = node.p<StridedParams>();
  unsigned axes = x.nd + 1;
  DYNET_LITE_DIM_CHECK(p.num_strides <= axes && p.num_from <= axes && p.num_to <= axes,
                       "strided_select: " << unsigned(p.num_strides) << " strides, " << unsigned(p.num_from)
                                          << " starts and " << unsigned(p.num_to) << " ends for " << x << ", which has "
                                          << x.nd << " dimensions plus the batch (at most " << axes << " each)");
  const int* strides = p.lists;
  const int* f = p.lists + p.num_strides;
  const int* t = f + p.num_from;
  Dim r = x;
  for (unsigned k = 0; k < axes; ++k) {
    int size = static_cast<int>(k < x.nd ? x.d[k] : x.bd);
    const char* what = k < x.nd ? "dimension " : "the batch (axis ";
    const char* end = k < x.nd ? "" : ")";
    int step = k < p.num_strides ? strides[k] : 1;
    int from = k < p.num_from ? f[k] : 0;
    int to = k < p.num_to ? t[k] : size;
    DYNET_LITE_DIM_CHECK(step > 0, "strided_select: stride " << step << " for " << what << k << end << " of " << x
                                                             << " must be positive");
    DYNET_LITE_INDEX_CHECK(from >= 0 && from < size, "strided_select: start " << from << " for " << what << k << end
                                                                              << " of " << x << " must be in [0, "
                                                                              << size << ")");
    DYNET_LITE_INDEX_CHECK(to > from && to <= size, "strided_select: end " << to << " for " << what << k << end
                                                                           << " of " << x << " must be in (" << from
                                                                           << ", " << size << "]");
    unsigned len = static_cast<unsigned>((to - from + step - 1) / step);
    if (k < x.nd)
      r.d[k] = len;
    else
      r.bd = len;
  }
  return r;
}
// y[j] = x[from + j * stride] per axis;  dx[from + j * stride] += dy[j]
void strided_select_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor& x = *xs[0];
  StridedLayout l(x.d, node.p<StridedParams>());
  float* y = node.value.v;
  l.for_each([&](size_t i, size_t j) { y[j] = x.v[i]; });
}
void strided_select_backward(const Tensor* const*, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                             ExecContext&) {
  StridedLayout l(dx.d, node.p<StridedParams>());
  l.for_each([&](size_t i, size_t j) { dx.v[i] += dy.v[j]; });
}

}  // namespace

void register_stats_ops(OpTable& t) {
  // The *_elems ops treat batch elements independently; the others may reduce the batch.
  t.define(OpKind::MomentElems, "stats", "moment_elems", moment_shape, moment_forward, moment_backward,
           BatchKind::Elementwise, Purity::Impure);
  t.define(OpKind::MomentDim, "stats", "moment_dim", moment_shape, moment_forward, moment_backward, BatchKind::Never,
           Purity::Impure);
  t.define(OpKind::MomentBatches, "stats", "moment_batches", moment_shape, moment_forward, moment_backward,
           BatchKind::Never, Purity::Impure);
  t.define(OpKind::StdElems, "stats", "std_elems", moment_shape, std_forward, std_backward, BatchKind::Elementwise,
           Purity::Impure);
  t.define(OpKind::StdDim, "stats", "std_dim", moment_shape, std_forward, std_backward, BatchKind::Never,
           Purity::Impure);
  t.define(OpKind::StdBatches, "stats", "std_batches", moment_shape, std_forward, std_backward, BatchKind::Never,
           Purity::Impure);
  t.define(OpKind::Cumsum, "stats", "cumsum", cumsum_shape, cumsum_forward, cumsum_backward, BatchKind::Elementwise,
           Purity::Impure);
  t.define(OpKind::LogSumExpDim, "stats", "logsumexp_dim", logsumexp_dim_shape, logsumexp_dim_forward,
           logsumexp_dim_backward, BatchKind::Elementwise, Purity::Impure);
  t.define(OpKind::FoldRows, "stats", "fold_rows", fold_rows_shape, fold_rows_forward, fold_rows_backward,
           BatchKind::Elementwise, Purity::Impure);
  t.define(OpKind::KMaxPooling, "stats", "kmax_pooling", kmax_pooling_shape, kmax_pooling_forward,
           kmax_pooling_backward, BatchKind::Elementwise, Purity::Impure);
  t.define(OpKind::KMHNGram, "stats", "kmh_ngram", kmh_ngram_shape, kmh_ngram_forward, kmh_ngram_backward,
           BatchKind::Elementwise, Purity::Impure);
  // strided_select may select along the batch: it never runs stacked.
  t.define(OpKind::StridedSelect, "stats", "strided_select", strided_select_shape, strided_select_forward,
           strided_select_backward, BatchKind::Never, Purity::Impure);
}

Expression moment_elems(const Expression& x, unsigned r) {
  return stat_expr(OpKind::MomentElems, "moment_elems", x, nullptr, false, r, 0);
}
Expression moment_dim(const Expression& x, const std::vector<unsigned>& dims, unsigned r, bool b, unsigned n) {
  return stat_expr(OpKind::MomentDim, "moment_dim", x, &dims, b, r, n);
}
Expression moment_batches(const Expression& x, unsigned r) {
  return stat_expr(OpKind::MomentBatches, "moment_batches", x, nullptr, false, r, 0);
}
Expression std_elems(const Expression& x) { return stat_expr(OpKind::StdElems, "std_elems", x, nullptr, false, 1, 0); }
Expression std_dim(const Expression& x, const std::vector<unsigned>& dims, bool b, unsigned n) {
  return stat_expr(OpKind::StdDim, "std_dim", x, &dims, b, 1, n);
}
Expression std_batches(const Expression& x) {
  return stat_expr(OpKind::StdBatches, "std_batches", x, nullptr, false, 1, 0);
}
Expression cumsum(const Expression& x, unsigned d) { return axis_expr(OpKind::Cumsum, x, d, 0); }
Expression logsumexp_dim(const Expression& x, unsigned d) { return axis_expr(OpKind::LogSumExpDim, x, d, 0); }
Expression fold_rows(const Expression& x, unsigned nrows) { return axis_expr(OpKind::FoldRows, x, 0, nrows); }
Expression kmax_pooling(const Expression& x, unsigned k, unsigned d) { return axis_expr(OpKind::KMaxPooling, x, d, k); }
Expression kmh_ngram(const Expression& x, unsigned n) { return axis_expr(OpKind::KMHNGram, x, 1, n); }

Expression strided_select(const Expression& x, const std::vector<int>& strides, const std::vector<int>& from,
                          const std::vector<int>& to) {
  // Longer lists than any tensor has axes are refused here (the counts are bytes).
  DYNET_LITE_DIM_CHECK(strides.size() <= kAxes && from.size() <= kAxes && to.size() <= kAxes,
                       "strided_select: " << strides.size() << " strides, " << from.size() << " starts and "
                                          << to.size() << " ends for " << x.dim() << " (at most " << kAxes << " each)");
  StridedParams p;
  p.num_strides = static_cast<uint8_t>(strides.size());
  p.num_from = static_cast<uint8_t>(from.size());
  p.num_to = static_cast<uint8_t>(to.size());
  int lists[3 * kAxes];
  size_t total = 0;
  for (int v : strides) lists[total++] = v;
  for (int v : from) lists[total++] = v;
  for (int v : to) lists[total++] = v;
  p.lists = total ? detail::copy_to_graph(detail::live_graph(x, "strided_select"), lists, total) : nullptr;
  return detail::add(OpKind::StridedSelect, {x}, p);
}

// DyNet's older column/row helpers, as reductions (the dimension lists are built
// once, not per node).
namespace {
const std::vector<unsigned>& rows_dim() {
  static const std::vector<unsigned> d = {0};
  return d;
}
const std::vector<unsigned>& cols_dim() {
  static const std::vector<unsigned> d = {1};
  return d;
}
}  // namespace
Expression average_cols(const Expression& x) { return mean_dim(x, cols_dim()); }
Expression sum_cols(const Expression& x) { return sum_dim(x, cols_dim()); }
Expression sum_rows(const Expression& x) { return sum_dim(x, rows_dim()); }
Expression operator/(const Expression& x, const Expression& y) { return cdiv(x, y); }

}  // namespace dynet_lite
