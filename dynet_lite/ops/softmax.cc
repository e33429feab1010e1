// Softmax family: softmax, log_softmax (full and restricted to some rows),
// logsumexp over a list, and the fused -log softmax(x)[v] of every tagger.
// Every kernel subtracts the maximum before exponentiating.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using op_params::PnlsParams;
using op_params::SoftmaxParams;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

using StridedArr = Eigen::Map<Eigen::ArrayXf, 0, Eigen::InnerStride<>>;

Dim one_arg(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return xs[0]->d;
}

// A shape {n} or {n,1,...}: one column per batch element.
bool is_column_vector(const Dim& d) { return d.batch_size() == d.rows(); }

// ---------------------------------------------------------------- softmax

Dim softmax_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  unsigned sd = node.p<SoftmaxParams>().dim;
  DYNET_LITE_DIM_CHECK(sd < d.nd, "softmax: dimension " << sd << " is out of range for x " << d << " with " << d.nd
                                                        << " dimension" << (d.nd == 1 ? "" : "s"));
  DYNET_LITE_DIM_CHECK(d.size() > 0, "softmax: x " << d << " has no elements");
  return d;
}

// The groups softmax normalises over: the lines of x along dimension `dim`.  With
// inner = d[0] * ... * d[dim-1] elements before it, line (o, i) starts at
// o * inner * len + i and steps by inner (d = 0: the contiguous columns).
// f(group array view).
template <class F>
void for_each_group(const Tensor& t, unsigned dim, F&& f) {
  Eigen::Index inner = 1;
  for (unsigned k = 0; k < dim; ++k) inner *= t.d[k];
  const Eigen::Index len = t.d[dim];
  const Eigen::Index outer = static_cast<Eigen::Index>(t.d.size()) / (inner * len);
  for (Eigen::Index o = 0; o < outer; ++o)
    for (Eigen::Index i = 0; i < inner; ++i)
      f(StridedArr(t.v + o * inner * len + i, len, Eigen::InnerStride<>(inner)));
}

// y = exp(x - max x) / sum exp(x - max x) over each group
void softmax_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const Tensor& x = *xs[0];
  unsigned dim = n.p<SoftmaxParams>().dim;
  // Walk x's and y's groups together: same layout, so the offset carries over.
  const float* x0 = x.v;
  float* y0 = n.value.v;
  for_each_group(n.value, dim, [&](StridedArr y) {
    StridedArr xg(const_cast<float*>(x0) + (y.data() - y0), y.size(), Eigen::InnerStride<>(y.innerStride()));
    float m = xg.maxCoeff();
    y = (xg - m).exp();
    y /= y.sum();
  });
}
// dx += y * (dy - sum(dy * y)) over each group
void softmax_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                      ExecContext&) {
  unsigned dim = n.p<SoftmaxParams>().dim;
  const float* y0 = n.value.v;
  for_each_group(dy, dim, [&](StridedArr g) {
    std::ptrdiff_t off = g.data() - dy.v;
    Eigen::InnerStride<> s(g.innerStride());
    StridedArr y(const_cast<float*>(y0) + off, g.size(), s);
    StridedArr d(dx.v + off, g.size(), s);
    float dot = (g * y).sum();
    d += y * (g - dot);
  });
}

// ---------------------------------------------------------------- log_softmax
Dim log_softmax_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  DYNET_LITE_DIM_CHECK(d.nd <= 2, "log_softmax: x must be a vector or a matrix, got " << d);
  DYNET_LITE_DIM_CHECK(d.size() > 0, "log_softmax: x " << d << " has no elements");
  return d;
}
// y = x - max x - log sum exp(x - max x) over each column
void log_softmax_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  cpu::MatMap x = cpu::mat(*xs[0]), y = cpu::mat(n.value);
  for (Eigen::Index c = 0; c < x.cols(); ++c) {
    float m = x.col(c).maxCoeff();
    float logz = m + std::log((x.col(c).array() - m).exp().sum());
    y.col(c).array() = x.col(c).array() - logz;
  }
}
// dx += dy - exp(y) * sum(dy) over each column
void log_softmax_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                          ExecContext&) {
  cpu::MatMap y = cpu::mat(n.value), g = cpu::mat(dy), d = cpu::mat(dx);
  for (Eigen::Index c = 0; c < y.cols(); ++c) {
    float s = g.col(c).sum();
    d.col(c).array() += g.col(c).array() - y.col(c).array().exp() * s;
  }
}

// ---------------------------------------------------------------- restricted log_softmax
struct RestrictedParams {
  const unsigned* rows = nullptr;  // graph memory
  unsigned count = 0;
  unsigned unused = 0;  // no padding: parameters are compared byte by byte
};

Dim restricted_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  DYNET_LITE_DIM_CHECK(is_column_vector(d), "log_softmax (restricted): x must be a column vector, got " << d);
  const RestrictedParams& p = node.p<RestrictedParams>();
  for (unsigned k = 0; k < p.count; ++k)
    DYNET_LITE_INDEX_CHECK(p.rows[k] < d.rows(), "log_softmax (restricted): index " << p.rows[k]
                                                     << " out of range for x " << d << " with " << d.rows()
                                                     << " rows");
  return d;
}
// over the listed rows R: y_r = x_r - log sum_{k in R} exp(x_k);  y = -inf elsewhere
void restricted_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const Tensor& x = *xs[0];
  const RestrictedParams& p = n.p<RestrictedParams>();
  const unsigned rows = x.d.rows();
  for (unsigned b = 0; b < x.d.bd; ++b) {
    const float* xb = x.v + b * rows;
    float* yb = n.value.v + b * rows;
    float m = kNegInf;
    for (unsigned k = 0; k < p.count; ++k) m = std::max(m, xb[p.rows[k]]);
    float s = 0.f;
    for (unsigned k = 0; k < p.count; ++k) s += std::exp(xb[p.rows[k]] - m);
    float logz = m + std::log(s);
    for (unsigned r = 0; r < rows; ++r) yb[r] = kNegInf;
    for (unsigned k = 0; k < p.count; ++k) yb[p.rows[k]] = xb[p.rows[k]] - logz;
  }
}
// over R: dx_r += dy_r - exp(y_r) * sum_{k in R} dy_k;  other rows get nothing
void restricted_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                         ExecContext&) {
  const RestrictedParams& p = n.p<RestrictedParams>();
  const unsigned rows = n.value.d.rows();
  for (unsigned b = 0; b < n.value.d.bd; ++b) {
    const float* yb = n.value.v + b * rows;
    const float* gb = dy.v + b * rows;
    float* db = dx.v + b * rows;
    float s = 0.f;
    for (unsigned k = 0; k < p.count; ++k) s += gb[p.rows[k]];
    for (unsigned k = 0; k < p.count; ++k) {
      unsigned r = p.rows[k];
      db[r] += gb[r] - std::exp(yb[r]) * s;
    }
  }
}

// ---------------------------------------------------------------- logsumexp
Dim logsumexp_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n >= 1, "logsumexp: needs at least one argument");
  Dim r = xs[0]->d;
  for (unsigned k = 1; k < n; ++k) {
    const Dim& d = xs[k]->d;
    DYNET_LITE_DIM_CHECK(same_shape_ignoring_batch(d, xs[0]->d), "logsumexp: argument " << k << " has shape " << d
                                                                     << ", argument 0 has " << xs[0]->d);
    DYNET_LITE_DIM_CHECK(d.bd == r.bd || d.bd == 1 || r.bd == 1, "logsumexp: argument "
                                                                     << k << " " << d << " has batch size " << d.bd
                                                                     << ", the others " << r.bd);
    if (d.bd > r.bd) r.bd = d.bd;
  }
  (void)node;
  return r;
}
// y = m + log sum_k exp(x_k - m), m = max_k x_k, element by element
void logsumexp_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext&) {
  const Dim& d = node.value.d;
  const size_t per = d.batch_size();
  for (unsigned b = 0; b < d.bd; ++b) {
    float* y = node.value.v + b * per;
    for (size_t i = 0; i < per; ++i) {
      float m = kNegInf;
      for (unsigned k = 0; k < n; ++k) m = std::max(m, xs[k]->batch_ptr(b)[i]);
      if (m == kNegInf) {  // every term is exp(-inf) = 0
        y[i] = kNegInf;
        continue;
      }
      float s = 0.f;
      for (unsigned k = 0; k < n; ++k) s += std::exp(xs[k]->batch_ptr(b)[i] - m);
      y[i] = m + std::log(s);
    }
  }
}
// dx_k += exp(x_k - y) dy  (summed over the batch when x_k has a batch of 1)
void logsumexp_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                        ExecContext&) {
  const Dim& d = node.value.d;
  const size_t per = d.batch_size();
  const Tensor& x = *xs[i];
  for (unsigned b = 0; b < d.bd; ++b) {
    const float* y = node.value.v + b * per;
    const float* g = dy.v + b * per;
    const float* xb = x.batch_ptr(b);
    float* db = dx.batch_ptr(b);
    for (size_t j = 0; j < per; ++j)
      if (y[j] != kNegInf) db[j] += std::exp(xb[j] - y[j]) * g[j];
  }
}

// ---------------------------------------------------------------- pickneglogsoftmax
// The indices come from one of four places; `count` is the number of indices
// (1 = the same index for every batch element).

const unsigned* pnls_indices(const PnlsParams& p) {
  if (p.pindex) return p.pindex;
  if (p.pindices) return p.pindices->data();
  if (p.indices) return p.indices;
  return &p.index;
}

void check_pnls_indices(const unsigned* idx, unsigned count, const Dim& x) {
  for (unsigned k = 0; k < count; ++k) {
    if (idx[k] < x.rows()) continue;
    if (count == 1)
      DYNET_LITE_INDEX_CHECK(false, "pickneglogsoftmax: index " << idx[k] << " out of range for x " << x
                                                                << " of size " << x.rows());
    DYNET_LITE_INDEX_CHECK(false, "pickneglogsoftmax: index " << idx[k] << " (batch element " << k
                                                              << ") out of range for x " << x << " of size "
                                                              << x.rows());
  }
}

Dim pnls_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  const PnlsParams& p = node.p<PnlsParams>();
  DYNET_LITE_DIM_CHECK(is_column_vector(d) && d.rows() > 0,
                       "pickneglogsoftmax: x must be a non-empty column vector (or a batch of them), got " << d);
  DYNET_LITE_DIM_CHECK(p.count == d.bd || p.count == 1, "pickneglogsoftmax: " << p.count << " indices for x " << d
                                                                               << " with batch size " << d.bd
                                                                               << " (one per batch element, or one for all)");
  // Indices known now are checked now; those behind a pointer at forward time.
  if (!p.pindex && !p.pindices) check_pnls_indices(pnls_indices(p), p.count, d);
  return Dim({1}, d.bd);
}

void check_pnls_pointer_size(const PnlsParams& p) {
  if (p.pindices)
    DYNET_LITE_DIM_CHECK(p.pindices->size() == p.count, "pickneglogsoftmax: the index vector behind the pointer now holds "
                                                            << p.pindices->size() << " indices, but the node was built for "
                                                            << p.count);
}

// The members' indices, one per stacked batch element, into idx.
void write_member_indices(const Node* const* members, unsigned k, unsigned* idx) {
  unsigned o = 0;
  for (unsigned j = 0; j < k; ++j) {
    const PnlsParams& p = members[j]->p<PnlsParams>();
    check_pnls_pointer_size(p);
    const unsigned* src = pnls_indices(p);
    for (unsigned b = 0; b < members[j]->value.d.bd; ++b) idx[o++] = src[p.count == 1 ? 0 : b];
  }
}

// Automatic batching: the members' x are stacked along the batch, so the virtual
// node gets one index per stacked batch element, copied into graph memory.
bool pnls_batch_combine(const Node* const* members, unsigned k, Node& batched, ExecContext& ctx) {
  unsigned total = 0;
  for (unsigned j = 0; j < k; ++j) total += members[j]->value.d.bd;
  static_assert(sizeof(float) == sizeof(unsigned), "indices are kept in float arena memory");
  unsigned* idx = static_cast<unsigned*>(ctx.host_bytes(total * sizeof(unsigned)));
  write_member_indices(members, k, idx);
  PnlsParams merged;
  merged.indices = idx;
  merged.count = total;
  batched.p<PnlsParams>() = merged;
  return true;
}

// A recorded group's indices again, where pnls_batch_combine put them.
void pnls_batch_refill(const Node* const* members, unsigned k, Node& batched) {
  write_member_indices(members, k, const_cast<unsigned*>(batched.p<PnlsParams>().indices));
}

// What forward keeps for backward (n.aux, graph memory): logz_b, and the
// indices it used (a copy when they were read through a user's pointer, which
// may have changed by backward).
struct PnlsKept {
  const float* logz;
  const unsigned* idx;
};

// y_b = logz_b - x_b[v_b], logz_b = log sum_i exp(x_bi);  aux keeps logz_b and v_b
void pnls_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const PnlsParams& p = n.p<PnlsParams>();
  check_pnls_pointer_size(p);
  const unsigned* idx = pnls_indices(p);
  // Pointer indices are first seen here; a batched node's merged ones too.  B compares.
  check_pnls_indices(idx, p.count, x.d);
  if (p.pindex || p.pindices) {
    unsigned* copy = static_cast<unsigned*>(ctx.forward_host_bytes(p.count * sizeof(unsigned)));
    std::memcpy(copy, idx, p.count * sizeof(unsigned));
    idx = copy;
  }
  const unsigned bd = n.value.d.bd;
  const unsigned rows = x.d.rows();
  float* logz = ctx.persistent_floats(bd);
  PnlsKept* kept = static_cast<PnlsKept*>(ctx.forward_host_bytes(sizeof(PnlsKept)));
  *kept = PnlsKept{logz, idx};
  n.aux = kept;
  using ConstCol = Eigen::Map<const Eigen::ArrayXf>;
  for (unsigned b = 0; b < bd; ++b) {
    // Two vectorised passes (max, then sum of exp) beat one scalar pass with a running max.
    ConstCol xb(x.batch_ptr(b), rows);
    const float m = xb.maxCoeff();
    logz[b] = m + std::log((xb - m).exp().sum());
    n.value.v[b] = logz[b] - xb[idx[p.count == 1 ? 0 : b]];
  }
}
// dx_b = (softmax(x_b) - e_{v_b}) dy_b, softmax(x_b)_i = exp(x_bi - logz_b), for
// batch elements [b0, b1) into a buffer of their own (also the scores' gradient
// remade on demand: InputGradientFn).
void pnls_input_gradient(const Tensor& x, const Node& n, const float* dy, unsigned b0, unsigned b1, float* dx) {
  const PnlsParams& p = n.p<PnlsParams>();
  const PnlsKept& kept = *static_cast<const PnlsKept*>(n.aux);
  const unsigned rows = x.d.rows();
  for (unsigned b = b0; b < b1; ++b) {
    Eigen::Map<const Eigen::ArrayXf> xb(x.batch_ptr(b), rows);
    Eigen::Map<Eigen::ArrayXf> db(dx + size_t(b - b0) * rows, rows);
    const float g = dy[b];
    db = (xb - kept.logz[b]).exp() * g;
    db[kept.idx[p.count == 1 ? 0 : b]] -= g;
  }
}

// The same, added to dx (or assigned, when asked to and x has the loss's batch).
void pnls_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                   ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const PnlsParams& p = n.p<PnlsParams>();
  const PnlsKept& kept = *static_cast<const PnlsKept*>(n.aux);
  const unsigned* idx = kept.idx;
  const float* logz = kept.logz;
  const unsigned bd = n.value.d.bd;
  const unsigned rows = x.d.rows();
  if (ctx.assign_by_batch(dx.v, dx.d.size(), dx.d.bd == bd)) {
    pnls_input_gradient(x, n, dy.v, 0, bd, dx.v);
    return;
  }
  for (unsigned b = 0; b < bd; ++b) {
    Eigen::Map<const Eigen::ArrayXf> xb(x.batch_ptr(b), rows);
    Eigen::Map<Eigen::ArrayXf> db(dx.batch_ptr(b), rows);
    const float g = dy.v[b];
    db += (xb - logz[b]).exp() * g;
    db[idx[p.count == 1 ? 0 : b]] -= g;
  }
}

Expression pnls(const Expression& x, const PnlsParams& p) { return detail::add(OpKind::PickNegLogSoftmax, {x}, p); }

}  // namespace

void register_softmax_ops(OpTable& t) {
  t.define(OpKind::Softmax, "softmax", "softmax", softmax_shape, softmax_forward, softmax_backward,
           BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);

  t.define(OpKind::LogSoftmax, "softmax", "log_softmax", log_softmax_shape, log_softmax_forward, log_softmax_backward,
           BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);

  t.define(OpKind::RestrictedLogSoftmax, "softmax", "restricted_log_softmax", restricted_shape, restricted_forward,
           restricted_backward, BatchKind::Never, Purity::Impure);

  t.define(OpKind::LogSumExp, "softmax", "logsumexp", logsumexp_shape, logsumexp_forward, logsumexp_backward,
           BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);

  OpInfo& p = t.define(OpKind::PickNegLogSoftmax, "softmax", "pickneglogsoftmax", pnls_shape, pnls_forward,
                       pnls_backward, BatchKind::Custom, Purity::Impure, Devices::CpuAndCuda);
  p.assigns_gradient = true;
  p.batch_combine = pnls_batch_combine;
  p.batch_refill = pnls_batch_refill;
  p.input_gradient = pnls_input_gradient;
}

Expression softmax(const Expression& x, unsigned d) {
  SoftmaxParams p;
  p.dim = d;
  return detail::add(OpKind::Softmax, {x}, p);
}
Expression log_softmax(const Expression& x) { return detail::add(OpKind::LogSoftmax, {x}); }
Expression log_softmax(const Expression& x, const std::vector<unsigned>& restriction) {
  DYNET_LITE_ARG_CHECK(x.pg != nullptr, "log_softmax (restricted): x is an empty Expression");
  DYNET_LITE_ARG_CHECK(!restriction.empty(), "log_softmax (restricted): empty restriction for x " << x.dim());
  // A repeated row would count twice in the normaliser.
  std::vector<bool> seen(x.dim().rows(), false);
  for (unsigned r : restriction) {
    if (r >= seen.size()) continue;  // the shape function reports it with the dims
    DYNET_LITE_ARG_CHECK(!seen[r], "log_softmax (restricted): row " << r << " listed twice for x " << x.dim());
    seen[r] = true;
  }
  RestrictedParams p;
  p.rows = detail::copy_to_graph(detail::live_graph(x, "log_softmax"), restriction.data(), restriction.size());
  p.count = static_cast<unsigned>(restriction.size());
  return detail::add(OpKind::RestrictedLogSoftmax, {x}, p);
}
Expression logsumexp(const std::initializer_list<Expression>& xs) {
  return detail::add(OpKind::LogSumExp, xs.begin(), static_cast<unsigned>(xs.size()), nullptr, 0);
}
Expression logsumexp(const std::vector<Expression>& xs) { return detail::add(OpKind::LogSumExp, xs); }

Expression pickneglogsoftmax(const Expression& x, unsigned v) {
  PnlsParams p;
  p.index = v;
  return pnls(x, p);
}
Expression pickneglogsoftmax(const Expression& x, const unsigned* pv) {
  DYNET_LITE_ARG_CHECK(pv != nullptr, "pickneglogsoftmax: null index pointer (x " << x.dim() << ")");
  PnlsParams p;
  p.pindex = pv;
  return pnls(x, p);
}
Expression pickneglogsoftmax(const Expression& x, const std::vector<unsigned>& v) {
  DYNET_LITE_ARG_CHECK(!v.empty(), "pickneglogsoftmax: empty index list (x " << x.dim() << ")");
  PnlsParams p;
  if (v.size() == 1) {
    p.index = v[0];
  } else {
    p.indices = detail::copy_to_graph(detail::live_graph(x, "pickneglogsoftmax"), v.data(), v.size());
  }
  p.count = static_cast<unsigned>(v.size());
  return pnls(x, p);
}
Expression pickneglogsoftmax(const Expression& x, const std::vector<unsigned>* pv) {
  DYNET_LITE_ARG_CHECK(pv != nullptr, "pickneglogsoftmax: null pointer to the index vector (x " << x.dim() << ")");
  DYNET_LITE_ARG_CHECK(!pv->empty(), "pickneglogsoftmax: empty index list (x " << x.dim() << ")");
  PnlsParams p;
  p.pindices = pv;
  p.count = static_cast<unsigned>(pv->size());
  return pnls(x, p);
}

}  // namespace dynet_lite
