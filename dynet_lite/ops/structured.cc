// Structured outputs and losses: sparsemax and its loss (Martins & Astudillo
// 2016), constrained softmax (Martins & Kreutzer 2017), the Poisson regression
// loss, the pairwise rank loss, the hinge loss along a dimension of a matrix,
// argmax as a one-hot vector, and one-hot leaves.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

// A shape {n} or {n,1,...}: one column per batch element.
bool is_column_vector(const Dim& d) { return d.batch_size() == d.rows(); }

Dim one_column_arg(const Tensor* const* xs, unsigned n, const Node& node) {
  const char* name = op_name(node.op);
  DYNET_LITE_DIM_CHECK(n == 1, name << ": takes one argument, got " << n);
  const Dim& d = xs[0]->d;
  DYNET_LITE_DIM_CHECK(is_column_vector(d) && d.rows() > 0,
                       name << ": x must be a non-empty column vector (or a batch of them), got " << d);
  return d;
}

// The sparsemax threshold tau of z[0..n): sparsemax(z) = max(z - tau, 0).
// With z sorted in decreasing order, k = max{k : 1 + k z_(k) > sum_{j<=k} z_(j)}
// and tau = (sum_{j<=k} z_(j) - 1) / k.  `sorted` is n floats of scratch.
float sparsemax_threshold(const float* z, unsigned n, float* sorted) {
  // NaN would break the sort's ordering; it propagates to the output instead.
  for (unsigned i = 0; i < n; ++i)
    if (std::isnan(z[i])) return z[i];
  std::copy(z, z + n, sorted);
  std::sort(sorted, sorted + n, std::greater<float>());
  float sum = 0.f, kept_sum = 0.f;
  unsigned k = 0;
  for (unsigned j = 0; j < n; ++j) {
    sum += sorted[j];
    if (1.f + static_cast<float>(j + 1) * sorted[j] <= sum) break;
    k = j + 1;
    kept_sum = sum;
  }
  // k >= 1 always: the largest element passes (1 + z_(1) > z_(1)).
  return (kept_sum - 1.f) / static_cast<float>(k);
}

// ---------------------------------------------------------------- sparsemax
// y = max(x - tau(x), 0) per column
void sparsemax_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const unsigned rows = x.d.rows();
  float* sorted = ctx.scratch_floats(rows);
  for (unsigned b = 0; b < x.d.bd; ++b) {
    const float* xb = x.v + b * rows;
    float* yb = n.value.v + b * rows;
    const float tau = sparsemax_threshold(xb, rows, sorted);
    for (unsigned i = 0; i < rows; ++i) yb[i] = std::max(xb[i] - tau, 0.f);
  }
}
// over the support S = {i : y_i > 0}: dx_i += dy_i - mean_{j in S} dy_j
void sparsemax_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                        ExecContext&) {
  const unsigned rows = n.value.d.rows();
  for (unsigned b = 0; b < n.value.d.bd; ++b) {
    const float* yb = n.value.v + b * rows;
    const float* gb = dy.v + b * rows;
    float* db = dx.v + b * rows;
    float sum = 0.f;
    unsigned support = 0;
    for (unsigned i = 0; i < rows; ++i)
      if (yb[i] > 0.f) {
        sum += gb[i];
        ++support;
      }
    if (support == 0) continue;
    const float mean = sum / static_cast<float>(support);
    for (unsigned i = 0; i < rows; ++i)
      if (yb[i] > 0.f) db[i] += gb[i] - mean;
  }
}

// ---------------------------------------------------------------- sparsemax_loss
struct SparsemaxLossParams {
  const unsigned* support = nullptr;                // copied (graph memory)
  const std::vector<unsigned>* psupport = nullptr;  // read at forward time
  unsigned count = 0;
  unsigned unused = 0;  // no padding: parameters are compared byte by byte
};

const unsigned* target_support(const SparsemaxLossParams& p) { return p.psupport ? p.psupport->data() : p.support; }
unsigned target_count(const SparsemaxLossParams& p) {
  return p.psupport ? static_cast<unsigned>(p.psupport->size()) : p.count;
}

// The support must be non-empty, in range and without repeats (a repeat would
// change q's weights).  `seen` is rows floats of scratch, or null to skip repeats.
void check_target_support(const unsigned* s, unsigned count, const Dim& x, float* seen) {
  DYNET_LITE_ARG_CHECK(count > 0, "sparsemax_loss: empty target support for x " << x);
  for (unsigned k = 0; k < count; ++k)
    DYNET_LITE_INDEX_CHECK(s[k] < x.rows(), "sparsemax_loss: target index " << s[k] << " out of range for x " << x
                                                                            << " with " << x.rows() << " rows");
  if (!seen) return;
  std::fill(seen, seen + x.rows(), 0.f);
  for (unsigned k = 0; k < count; ++k) {
    DYNET_LITE_ARG_CHECK(seen[s[k]] == 0.f, "sparsemax_loss: target index " << s[k] << " listed twice for x " << x);
    seen[s[k]] = 1.f;
  }
}

Dim sparsemax_loss_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_column_arg(xs, n, node);
  const SparsemaxLossParams& p = node.p<SparsemaxLossParams>();
  if (!p.psupport) check_target_support(p.support, p.count, d, nullptr);  // repeats: checked when built
  return Dim({1}, d.bd);
}

// q = uniform over the target support Y (q_i = 1/|Y|), tau = sparsemax threshold:
// y = 1/2 sum_{j : x_j > tau} (x_j^2 - tau^2) - q.x + 1/2 |q|^2  (same Y for every
// batch element); aux keeps sparsemax(x) for backward.
void sparsemax_loss_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const SparsemaxLossParams& p = n.p<SparsemaxLossParams>();
  const unsigned rows = x.d.rows();
  const unsigned* s = target_support(p);
  const unsigned count = target_count(p);
  float* sorted = ctx.scratch_floats(rows);
  check_target_support(s, count, x.d, sorted);
  const float q = 1.f / static_cast<float>(count);
  float* sm = ctx.persistent_floats(x.d.size());
  n.aux = sm;
  for (unsigned b = 0; b < x.d.bd; ++b) {
    const float* xb = x.v + b * rows;
    float* smb = sm + b * rows;
    const float tau = sparsemax_threshold(xb, rows, sorted);
    float loss = 0.f;
    for (unsigned i = 0; i < rows; ++i) {
      smb[i] = std::max(xb[i] - tau, 0.f);
      if (xb[i] > tau) loss += 0.5f * (xb[i] * xb[i] - tau * tau);
    }
    for (unsigned k = 0; k < count; ++k) loss -= q * xb[s[k]];
    loss += 0.5f * q;  // |q|^2 = |Y| / |Y|^2
    n.value.v[b] = loss;
  }
}
// dx += (sparsemax(x) - q) dy
void sparsemax_loss_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                             ExecContext&) {
  const SparsemaxLossParams& p = n.p<SparsemaxLossParams>();
  const unsigned rows = xs[0]->d.rows();
  const unsigned* s = target_support(p);
  const unsigned count = target_count(p);
  const float q = 1.f / static_cast<float>(count);
  const float* sm = static_cast<const float*>(n.aux);
  for (unsigned b = 0; b < n.value.d.bd; ++b) {
    const float g = dy.v[b];
    float* db = dx.v + b * rows;
    const float* smb = sm + b * rows;
    for (unsigned i = 0; i < rows; ++i) db[i] += smb[i] * g;
    for (unsigned k = 0; k < count; ++k) db[s[k]] -= q * g;
  }
}

// ---------------------------------------------------------------- constrained_softmax
Dim constrained_softmax_shape(const Tensor* const* xs, unsigned n, const Node&) {
  DYNET_LITE_DIM_CHECK(n == 2, "constrained_softmax: takes two arguments (x, upper bounds u), got " << n);
  const Dim &x = xs[0]->d, &u = xs[1]->d;
  DYNET_LITE_DIM_CHECK(is_column_vector(x) && x.rows() > 0,
                       "constrained_softmax: x must be a non-empty column vector (or a batch of them), got " << x);
  DYNET_LITE_DIM_CHECK(
      is_column_vector(u) && u.rows() == x.rows(),
      "constrained_softmax: the upper bounds u " << u << " must be a column vector of x's size, x is " << x);
  DYNET_LITE_DIM_CHECK(x.bd == u.bd || x.bd == 1 || u.bd == 1,
                       "constrained_softmax: x " << x << " and u " << u << " have batch sizes " << x.bd << " and "
                                                 << u.bd << " (must be equal or 1)");
  Dim r = x;
  r.bd = std::max(x.bd, u.bd);
  return r;
}

// y = argmin_{p in simplex, p <= u} KL(p || softmax(x)), i.e. y_i = min(u_i, exp(x_i) / t)
// with t such that sum y = 1.  Found by growing the saturated set A (y_i = u_i):
// the others get s softmax(x restricted to them), s = 1 - sum_A u; any that exceed
// their bound join A.  Each step lowers t, so A only grows and ends at the solution.
// aux keeps A as a 0/1 mask for backward.
void constrained_softmax_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  const Tensor &x = *xs[0], &u = *xs[1];
  const unsigned rows = x.d.rows();
  const unsigned bd = n.value.d.bd;
  float* saturated = ctx.persistent_floats(static_cast<size_t>(rows) * bd);
  n.aux = saturated;
  for (unsigned b = 0; b < bd; ++b) {
    const float* xb = x.batch_ptr(b);
    const float* ub = u.batch_ptr(b);
    float* yb = n.value.v + b * rows;
    float* ab = saturated + b * rows;
    double bound_sum = 0.0;
    for (unsigned i = 0; i < rows; ++i) {
      DYNET_LITE_ARG_CHECK(ub[i] >= 0.f, "constrained_softmax: upper bound u["
                                             << i << "] = " << ub[i] << " is negative (batch element " << b << ", u "
                                             << u.d << ")");
      bound_sum += ub[i];
    }
    DYNET_LITE_ARG_CHECK(bound_sum >= 1.0 - 1e-5, "constrained_softmax: the upper bounds sum to "
                                                      << bound_sum << " < 1 (batch element " << b << ", u " << u.d
                                                      << "): no distribution fits under them");
    std::fill(ab, ab + rows, 0.f);
    for (;;) {
      float s = 1.f, m = -INFINITY;
      for (unsigned i = 0; i < rows; ++i) {
        if (ab[i] != 0.f)
          s -= ub[i];
        else
          m = std::max(m, xb[i]);
      }
      if (m == -INFINITY) break;  // every element saturated
      s = std::max(s, 0.f);
      float z = 0.f;
      for (unsigned i = 0; i < rows; ++i)
        if (ab[i] == 0.f) z += std::exp(xb[i] - m);
      bool grew = false;
      for (unsigned i = 0; i < rows; ++i) {
        if (ab[i] != 0.f) continue;
        yb[i] = s * std::exp(xb[i] - m) / z;
        if (yb[i] > ub[i]) {
          ab[i] = 1.f;
          grew = true;
        }
      }
      if (!grew) break;
    }
    for (unsigned i = 0; i < rows; ++i)
      if (ab[i] != 0.f) yb[i] = ub[i];
  }
}
// F = free set, s = sum_F y, c = sum_F dy_j y_j / s:
// dx_i += y_i (dy_i - c) for i in F;  du_i += dy_i - c for i saturated
void constrained_softmax_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned i,
                                  Tensor& dx, ExecContext&) {
  const unsigned rows = xs[0]->d.rows();
  const float* saturated = static_cast<const float*>(n.aux);
  for (unsigned b = 0; b < n.value.d.bd; ++b) {
    const float* yb = n.value.v + b * rows;
    const float* gb = dy.v + b * rows;
    const float* ab = saturated + b * rows;
    float* db = dx.batch_ptr(b);
    float s = 0.f, gy = 0.f;
    for (unsigned k = 0; k < rows; ++k)
      if (ab[k] == 0.f) {
        s += yb[k];
        gy += gb[k] * yb[k];
      }
    const float c = s > 0.f ? gy / s : 0.f;
    for (unsigned k = 0; k < rows; ++k) {
      const bool free = ab[k] == 0.f;
      if (i == 0 && free) db[k] += yb[k] * (gb[k] - c);
      if (i == 1 && !free) db[k] += gb[k] - c;
    }
  }
}

// ---------------------------------------------------------------- poisson_loss
struct PoissonParams {
  const unsigned* py = nullptr;  // read at forward time
  unsigned y = 0;
  unsigned unused = 0;  // no padding: parameters are compared byte by byte
};

Dim poisson_shape(const Tensor* const* xs, unsigned n, const Node&) {
  DYNET_LITE_DIM_CHECK(n == 1, "poisson_loss: takes one argument, got " << n);
  const Dim& d = xs[0]->d;
  DYNET_LITE_DIM_CHECK(d.batch_size() == 1,
                       "poisson_loss: x (the log of the Poisson mean) must be a scalar (or a "
                       "batch of them), got "
                           << d);
  return Dim({1}, d.bd);
}
// -log Poisson(y; lambda = exp(x)) = exp(x) - y x + log(y!)
void poisson_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const PoissonParams& p = n.p<PoissonParams>();
  const float y = static_cast<float>(p.py ? *p.py : p.y);
  const float log_y_factorial = std::lgamma(y + 1.f);
  for (unsigned b = 0; b < n.value.d.bd; ++b) {
    const float x = xs[0]->v[b];
    n.value.v[b] = std::exp(x) - y * x + log_y_factorial;
  }
}
// dx += (exp(x) - y) dy
void poisson_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                      ExecContext&) {
  const PoissonParams& p = n.p<PoissonParams>();
  const float y = static_cast<float>(p.py ? *p.py : p.y);
  for (unsigned b = 0; b < n.value.d.bd; ++b) dx.v[b] += (std::exp(xs[0]->v[b]) - y) * dy.v[b];
}

// ---------------------------------------------------------------- pairwise_rank_loss
struct RankParams {
  float margin = 1.f;
};

Dim rank_shape(const Tensor* const* xs, unsigned n, const Node&) {
  DYNET_LITE_DIM_CHECK(n == 2, "pairwise_rank_loss: takes two arguments, got " << n);
  const Dim &a = xs[0]->d, &b = xs[1]->d;
  DYNET_LITE_DIM_CHECK(a.rows() == 1 && a.nd <= 2 && a.size() > 0,
                       "pairwise_rank_loss: x must be a scalar or a row vector {1,n} (or a batch of them), got " << a);
  DYNET_LITE_DIM_CHECK(same_shape_ignoring_batch(a, b),
                       "pairwise_rank_loss: x " << a << " and y " << b << " must have the same shape");
  DYNET_LITE_DIM_CHECK(a.bd == b.bd || a.bd == 1 || b.bd == 1,
                       "pairwise_rank_loss: x " << a << " and y " << b << " have batch sizes " << a.bd << " and "
                                                << b.bd << " (must be equal or 1)");
  Dim r = a;
  r.bd = std::max(a.bd, b.bd);
  return r;
}
// y = max(0, m - x + y') element by element
void rank_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const float m = n.p<RankParams>().margin;
  const size_t per = n.value.d.batch_size();
  for (unsigned b = 0; b < n.value.d.bd; ++b) {
    const float *xb = xs[0]->batch_ptr(b), *yb = xs[1]->batch_ptr(b);
    float* out = n.value.v + b * per;
    for (size_t i = 0; i < per; ++i) out[i] = std::max(0.f, m - xb[i] + yb[i]);
  }
}
// where the loss is positive: dx -= dy, dy' += dy  (0 at the kink)
void rank_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned i, Tensor& dx,
                   ExecContext&) {
  const size_t per = n.value.d.batch_size();
  const float sign = i == 0 ? -1.f : 1.f;
  for (unsigned b = 0; b < n.value.d.bd; ++b) {
    const float* out = n.value.v + b * per;
    const float* g = dy.v + b * per;
    float* db = dx.batch_ptr(b);
    for (size_t k = 0; k < per; ++k)
      if (out[k] > 0.f) db[k] += sign * g[k];
  }
}

// ---------------------------------------------------------------- hinge_dim
// x is a matrix {R,C}; along dimension d each line of x (a column when d = 0, a
// row when d = 1) has a correct index.  The indices come from one of three places:
// copied (`per` for every batch element, or `per` x bd), or behind a pointer.
struct HingeDimParams {
  const unsigned* indices = nullptr;                             // graph memory
  const std::vector<unsigned>* pindex = nullptr;                 // read at forward time
  const std::vector<std::vector<unsigned>>* pindices = nullptr;  // read at forward time
  unsigned per = 0;                                              // indices per batch element (copied case)
  unsigned sets = 1;  // 1: the same indices for every batch element (copied case)
  unsigned dim = 0;
  float margin = 1.f;
};

// The correct index of line o of batch element b.
unsigned hinge_dim_index(const HingeDimParams& p, unsigned b, unsigned o) {
  if (p.pindex) return (*p.pindex)[o];
  if (p.pindices) return (*p.pindices)[b][o];
  return p.indices[(p.sets == 1 ? 0 : b) * p.per + o];
}

// Checks the number of indices and their range against x.
void check_hinge_dim_indices(const HingeDimParams& p, const Dim& x) {
  const unsigned lines = x[1 - p.dim], len = x[p.dim];
  if (p.pindex)
    DYNET_LITE_DIM_CHECK(p.pindex->size() == lines, "hinge_dim: " << p.pindex->size() << " indices for x " << x
                                                                  << " along dimension " << p.dim << ": needs " << lines
                                                                  << ", one per " << (p.dim == 0 ? "column" : "row"));
  if (p.pindices) {
    DYNET_LITE_DIM_CHECK(p.pindices->size() == x.bd, "hinge_dim: " << p.pindices->size() << " index lists for x " << x
                                                                   << " with batch size " << x.bd
                                                                   << " (one per batch element)");
    for (unsigned b = 0; b < x.bd; ++b)
      DYNET_LITE_DIM_CHECK((*p.pindices)[b].size() == lines,
                           "hinge_dim: " << (*p.pindices)[b].size() << " indices for batch element " << b << " of x "
                                         << x << " along dimension " << p.dim << ": needs " << lines);
  }
  if (!p.pindex && !p.pindices) {
    DYNET_LITE_DIM_CHECK(p.per == lines, "hinge_dim: " << p.per << " indices for x " << x << " along dimension "
                                                       << p.dim << ": needs " << lines << ", one per "
                                                       << (p.dim == 0 ? "column" : "row"));
    DYNET_LITE_DIM_CHECK(p.sets == 1 || p.sets == x.bd, "hinge_dim: " << p.sets << " index lists for x " << x
                                                                      << " with batch size " << x.bd
                                                                      << " (one per batch element)");
  }
  const unsigned sets = p.pindex ? 1 : (p.pindices ? x.bd : p.sets);
  for (unsigned b = 0; b < sets; ++b)
    for (unsigned o = 0; o < lines; ++o) {
      const unsigned v = hinge_dim_index(p, b, o);
      DYNET_LITE_INDEX_CHECK(v < len, "hinge_dim: index " << v << " (line " << o << ", batch element " << b
                                                          << ") out of range for x " << x << " along dimension "
                                                          << p.dim << " of size " << len);
    }
}

Dim hinge_dim_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, "hinge_dim: takes one argument, got " << n);
  const Dim& x = xs[0]->d;
  const HingeDimParams& p = node.p<HingeDimParams>();
  DYNET_LITE_DIM_CHECK(x.nd <= 2 && x.size() > 0, "hinge_dim: x must be a non-empty matrix, got " << x);
  DYNET_LITE_DIM_CHECK(
      p.dim <= 1, "hinge_dim: dimension " << p.dim << " for x " << x << " (d = 0 scores each column, d = 1 each row)");
  if (!p.pindex && !p.pindices) check_hinge_dim_indices(p, x);
  return Dim({x[1 - p.dim]}, x.bd);
}

// Line o of batch element b starts at `b*R*C + (d == 0 ? o*R : o)` and steps by
// (d == 0 ? 1 : R).  y_bo = sum_{k != v} max(0, m - x_v + x_k) over the line.
template <class F>
void for_each_line(const Dim& x, unsigned dim, F&& f) {
  const unsigned rows = x.rows(), per = static_cast<unsigned>(x.batch_size());
  const unsigned lines = x[1 - dim], len = x[dim];
  const unsigned step = dim == 0 ? 1 : rows, line_step = dim == 0 ? rows : 1;
  for (unsigned b = 0; b < x.bd; ++b)
    for (unsigned o = 0; o < lines; ++o) f(b, o, b * per + o * line_step, step, len);
}

void hinge_dim_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const Tensor& x = *xs[0];
  const HingeDimParams& p = n.p<HingeDimParams>();
  if (p.pindex || p.pindices) check_hinge_dim_indices(p, x.d);
  const unsigned lines = x.d[1 - p.dim];
  for_each_line(x.d, p.dim, [&](unsigned b, unsigned o, unsigned start, unsigned step, unsigned len) {
    const float* line = x.v + start;
    const unsigned v = hinge_dim_index(p, b, o);
    const float base = p.margin - line[v * step];
    float loss = 0.f;
    for (unsigned k = 0; k < len; ++k)
      if (k != v && base + line[k * step] > 0.f) loss += base + line[k * step];
    n.value.v[b * lines + o] = loss;
  });
}
// for each k != v with a positive term: dx_k += dy, dx_v -= dy  (0 at the margin)
void hinge_dim_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                        ExecContext&) {
  const Tensor& x = *xs[0];
  const HingeDimParams& p = n.p<HingeDimParams>();
  const unsigned lines = x.d[1 - p.dim];
  for_each_line(x.d, p.dim, [&](unsigned b, unsigned o, unsigned start, unsigned step, unsigned len) {
    const float* line = x.v + start;
    float* dline = dx.v + start;
    const unsigned v = hinge_dim_index(p, b, o);
    const float base = p.margin - line[v * step], g = dy.v[b * lines + o];
    float active = 0.f;
    for (unsigned k = 0; k < len; ++k)
      if (k != v && base + line[k * step] > 0.f) {
        dline[k * step] += g;
        active += 1.f;
      }
    dline[v * step] -= active * g;
  });
}

// ---------------------------------------------------------------- argmax
struct ArgmaxParams {
  GradientMode mode = zero_gradient;
};

Dim argmax_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, "argmax: takes one argument, got " << n);
  const Dim& d = xs[0]->d;
  DYNET_LITE_DIM_CHECK(is_column_vector(d) && d.rows() > 0,
                       "argmax: x must be a non-empty column vector (or a batch of them), got " << d);
  const GradientMode mode = node.p<ArgmaxParams>().mode;
  DYNET_LITE_ARG_CHECK(mode == zero_gradient || mode == straight_through_gradient,
                       "argmax: unknown gradient mode " << static_cast<int>(mode) << " for x " << d);
  return d;
}
// y = one-hot of the first position of max x, per column
void argmax_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const Tensor& x = *xs[0];
  const unsigned rows = x.d.rows();
  for (unsigned b = 0; b < x.d.bd; ++b) {
    const float* xb = x.v + b * rows;
    float* yb = n.value.v + b * rows;
    unsigned best = 0;
    for (unsigned i = 1; i < rows; ++i)
      if (xb[i] > xb[best]) best = i;
    std::fill(yb, yb + rows, 0.f);
    yb[best] = 1.f;
  }
}
// zero_gradient: nothing;  straight_through_gradient: dx += dy
void argmax_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                     ExecContext&) {
  if (n.p<ArgmaxParams>().mode != straight_through_gradient) return;
  const size_t sz = n.value.d.size();
  for (size_t i = 0; i < sz; ++i) dx.v[i] += dy.v[i];
}

// ---------------------------------------------------------------- one_hot
struct OneHotParams {
  const unsigned* ids = nullptr;  // graph memory, one per batch element (null: `id` alone)
  unsigned id = 0;
  float scale = 1.f;
};

Dim one_hot_shape(const Tensor* const*, unsigned, const Node& n) {
  const Dim& d = n.value.d;
  DYNET_LITE_DIM_CHECK(d.rows() > 0, "one_hot: dimension " << d.rows() << " has no elements");
  const OneHotParams& p = n.p<OneHotParams>();
  for (unsigned b = 0; b < d.bd; ++b) {
    const unsigned id = p.ids ? p.ids[b] : p.id;
    DYNET_LITE_INDEX_CHECK(id < d.rows(), "one_hot: index " << id << " (batch element " << b
                                                            << ") out of range for dimension " << d.rows() << " (shape "
                                                            << d << ")");
  }
  return d;
}
// y_b = scale * e_{id_b}
void one_hot_forward(const Tensor* const*, unsigned, Node& n, ExecContext& ctx) {
  const OneHotParams& p = n.p<OneHotParams>();
  const unsigned rows = n.value.d.rows();
  Device* dev = ctx.device();
  dev->fill(n.value.v, 0.f, n.value.d.size());
  for (unsigned b = 0; b < n.value.d.bd; ++b)
    dev->copy_from_host(n.value.v + b * rows + (p.ids ? p.ids[b] : p.id), &p.scale, 1);
}

HingeDimParams hinge_dim_params(const Expression& x, unsigned d, float m) {
  DYNET_LITE_ARG_CHECK(x.pg != nullptr, "hinge_dim: x is an empty Expression");
  DYNET_LITE_ARG_CHECK(m >= 0.f, "hinge_dim: negative margin " << m << " (x " << x.dim() << ")");
  HingeDimParams p;
  p.dim = d;
  p.margin = m;
  return p;
}

}  // namespace

void register_structured_ops(OpTable& t) {
  t.define(OpKind::Sparsemax, "structured", "sparsemax", one_column_arg, sparsemax_forward, sparsemax_backward,
           BatchKind::Elementwise, Purity::Impure);

  t.define(OpKind::SparsemaxLoss, "structured", "sparsemax_loss", sparsemax_loss_shape, sparsemax_loss_forward,
           sparsemax_loss_backward, BatchKind::Never, Purity::Impure);

  t.define(OpKind::ConstrainedSoftmax, "structured", "constrained_softmax", constrained_softmax_shape,
           constrained_softmax_forward, constrained_softmax_backward, BatchKind::Elementwise, Purity::Impure);

  t.define(OpKind::PoissonLoss, "structured", "poisson_loss", poisson_shape, poisson_forward, poisson_backward,
           BatchKind::Never, Purity::Impure);

  t.define(OpKind::PairwiseRankLoss, "structured", "pairwise_rank_loss", rank_shape, rank_forward, rank_backward,
           BatchKind::Elementwise, Purity::Impure);

  t.define(OpKind::HingeDim, "structured", "hinge_dim", hinge_dim_shape, hinge_dim_forward, hinge_dim_backward,
           BatchKind::Never, Purity::Impure);

  t.define(OpKind::Argmax, "structured", "argmax", argmax_shape, argmax_forward, argmax_backward,
           BatchKind::Elementwise, Purity::Impure);

  OpInfo& oh = t.define(OpKind::OneHot, "structured", "one_hot", one_hot_shape, one_hot_forward, nullptr,
                        BatchKind::Never, Purity::Impure);
  oh.blocks_gradient = true;
  oh.leaf = true;
}

Expression sparsemax(const Expression& x) { return detail::add(OpKind::Sparsemax, {x}); }

Expression sparsemax_loss(const Expression& x, const std::vector<unsigned>& target_support) {
  DYNET_LITE_ARG_CHECK(x.pg != nullptr, "sparsemax_loss: x is an empty Expression");
  const Dim d = x.dim();
  // Repeats: checked here for a short support (no allocation); the forward pass
  // checks every support (scratch memory), the range is checked by the shape.
  const size_t k = target_support.size();
  if (k <= 64)
    for (size_t a = 0; a < k; ++a)
      for (size_t b = a + 1; b < k; ++b)
        DYNET_LITE_ARG_CHECK(target_support[a] != target_support[b] || target_support[a] >= d.rows(),
                             "sparsemax_loss: target index " << target_support[a] << " listed twice for x " << d);
  SparsemaxLossParams p;
  p.support =
      target_support.empty() ? nullptr : detail::copy_to_graph(detail::live_graph(x, "sparsemax_loss"), target_support.data(), target_support.size());
  p.count = static_cast<unsigned>(target_support.size());
  return detail::add(OpKind::SparsemaxLoss, {x}, p);
}
Expression sparsemax_loss(const Expression& x, const std::vector<unsigned>* ptarget_support) {
  DYNET_LITE_ARG_CHECK(ptarget_support != nullptr,
                       "sparsemax_loss: null pointer to the target support (x " << x.dim() << ")");
  SparsemaxLossParams p;
  p.psupport = ptarget_support;
  return detail::add(OpKind::SparsemaxLoss, {x}, p);
}

Expression constrained_softmax(const Expression& x, const Expression& y) {
  return detail::add(OpKind::ConstrainedSoftmax, {x, y});
}

Expression poisson_loss(const Expression& x, unsigned y) {
  PoissonParams p;
  p.y = y;
  return detail::add(OpKind::PoissonLoss, {x}, p);
}
Expression poisson_loss(const Expression& x, const unsigned* py) {
  DYNET_LITE_ARG_CHECK(py != nullptr, "poisson_loss: null pointer to the target (x " << x.dim() << ")");
  PoissonParams p;
  p.py = py;
  return detail::add(OpKind::PoissonLoss, {x}, p);
}

Expression pairwise_rank_loss(const Expression& x, const Expression& y, real m) {
  RankParams p;
  p.margin = m;
  return detail::add(OpKind::PairwiseRankLoss, {x, y}, p);
}

Expression hinge_dim(const Expression& x, const std::vector<unsigned>& indices, unsigned d, float m) {
  HingeDimParams p = hinge_dim_params(x, d, m);
  p.indices = indices.empty() ? nullptr : detail::copy_to_graph(detail::live_graph(x, "hinge_dim"), indices.data(), indices.size());
  p.per = static_cast<unsigned>(indices.size());
  return detail::add(OpKind::HingeDim, {x}, p);
}
Expression hinge_dim(const Expression& x, const std::vector<unsigned>* pindex, unsigned d, float m) {
  HingeDimParams p = hinge_dim_params(x, d, m);
  DYNET_LITE_ARG_CHECK(pindex != nullptr, "hinge_dim: null pointer to the indices (x " << x.dim() << ")");
  p.pindex = pindex;
  return detail::add(OpKind::HingeDim, {x}, p);
}
Expression hinge_dim(const Expression& x, const std::vector<std::vector<unsigned>>& indices, unsigned d, float m) {
  HingeDimParams p = hinge_dim_params(x, d, m);
  const Dim xd = x.dim();
  DYNET_LITE_DIM_CHECK(!indices.empty() && indices.size() == xd.bd,
                       "hinge_dim: " << indices.size() << " index lists for x " << xd << " with batch size " << xd.bd
                                     << " (one per batch element)");
  const size_t per = indices[0].size();
  for (size_t b = 0; b < indices.size(); ++b)
    DYNET_LITE_DIM_CHECK(indices[b].size() == per, "hinge_dim: index list " << b << " holds " << indices[b].size()
                                                                            << " indices, list 0 holds " << per
                                                                            << " (x " << xd << ")");
  unsigned* flat = static_cast<unsigned*>(detail::live_graph(x, "hinge_dim").allocate_graph_bytes(per * indices.size() * sizeof(unsigned)));
  for (size_t b = 0; b < indices.size(); ++b) std::copy(indices[b].begin(), indices[b].end(), flat + b * per);
  p.indices = flat;
  p.per = static_cast<unsigned>(per);
  p.sets = static_cast<unsigned>(indices.size());
  return detail::add(OpKind::HingeDim, {x}, p);
}
Expression hinge_dim(const Expression& x, const std::vector<std::vector<unsigned>>* pindices, unsigned d, float m) {
  HingeDimParams p = hinge_dim_params(x, d, m);
  DYNET_LITE_ARG_CHECK(pindices != nullptr, "hinge_dim: null pointer to the index lists (x " << x.dim() << ")");
  p.pindices = pindices;
  return detail::add(OpKind::HingeDim, {x}, p);
}

Expression argmax(const Expression& x, GradientMode gradient_mode) {
  ArgmaxParams p;
  p.mode = gradient_mode;
  return detail::add(OpKind::Argmax, {x}, p);
}

Expression one_hot(ComputationGraph& g, unsigned d, unsigned idx, float scale) {
  OneHotParams p;
  p.id = idx;
  p.scale = scale;
  return detail::add_leaf(g, OpKind::OneHot, Dim({d}), p);
}
Expression one_hot(ComputationGraph& g, unsigned d, const std::vector<unsigned>& ids, float scale) {
  DYNET_LITE_ARG_CHECK(!ids.empty(), "one_hot: empty index list for dimension " << d);
  OneHotParams p;
  p.ids = detail::copy_to_graph(g, ids.data(), ids.size());
  p.scale = scale;
  return detail::add_leaf(g, OpKind::OneHot, Dim({d}, static_cast<unsigned>(ids.size())), p);
}

}  // namespace dynet_lite
