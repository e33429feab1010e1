// Losses and norms: one scalar per batch element ({1}XB).  Two-argument ops take
// arguments of the same shape whose batch sizes are equal or 1 (broadcast).
#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

// ---------------------------------------------------------------- hinge
using op_params::HingeParams;

const unsigned* hinge_indices(const HingeParams& p) {
  if (p.pindex) return p.pindex;
  if (p.pindices) return p.pindices->data();
  if (p.indices) return p.indices;
  return &p.index;
}

void check_hinge_indices(const unsigned* idx, unsigned count, const Dim& x) {
  for (unsigned k = 0; k < count; ++k) {
    if (idx[k] < x.rows()) continue;
    if (count == 1)
      DYNET_LITE_INDEX_CHECK(false, "hinge: index " << idx[k] << " out of range for x " << x << " of size "
                                                    << x.rows());
    DYNET_LITE_INDEX_CHECK(false, "hinge: index " << idx[k] << " (batch element " << k << ") out of range for x " << x
                                                  << " of size " << x.rows());
  }
}

Dim hinge_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, "hinge: takes one argument, got " << n);
  const Dim& d = xs[0]->d;
  const HingeParams& p = node.p<HingeParams>();
  DYNET_LITE_DIM_CHECK(d.batch_size() == d.rows() && d.rows() > 0,
                       "hinge: x must be a non-empty column vector (or a batch of them), got " << d);
  DYNET_LITE_DIM_CHECK(p.count == d.bd || p.count == 1, "hinge: " << p.count << " indices for x " << d
                                                                  << " with batch size " << d.bd
                                                                  << " (one per batch element, or one for all)");
  if (!p.pindex && !p.pindices) check_hinge_indices(hinge_indices(p), p.count, d);
  return Dim({1}, d.bd);
}

// y_b = sum_{i != v_b} max(0, m - x_b[v_b] + x_bi)
void hinge_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const HingeParams& p = n.p<HingeParams>();
  if (p.pindices)
    DYNET_LITE_DIM_CHECK(p.pindices->size() == p.count, "hinge: the index vector behind the pointer now holds "
                                                            << p.pindices->size()
                                                            << " indices, but the node was built for " << p.count);
  const unsigned* idx = hinge_indices(p);
  if (p.pindex || p.pindices) {
    check_hinge_indices(idx, p.count, x.d);
    // Kept for backward (n.aux): the user's variable may change before it.
    unsigned* kept = static_cast<unsigned*>(ctx.forward_host_bytes(p.count * sizeof(unsigned)));
    std::memcpy(kept, idx, p.count * sizeof(unsigned));
    n.aux = kept;
    idx = kept;
  }
  const unsigned rows = x.d.rows();
  for (unsigned b = 0; b < n.value.d.bd; ++b) {
    const float* xb = x.batch_ptr(b);
    const unsigned v = idx[p.count == 1 ? 0 : b];
    const float base = p.margin - xb[v];
    float loss = 0.f;
    for (unsigned i = 0; i < rows; ++i)
      if (i != v && base + xb[i] > 0.f) loss += base + xb[i];
    n.value.v[b] = loss;
  }
}
// for each i != v with a positive term: dx_i += dy, dx_v -= dy  (0 at the margin)
void hinge_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                    ExecContext&) {
  const Tensor& x = *xs[0];
  const HingeParams& p = n.p<HingeParams>();
  const unsigned* idx = p.pindex || p.pindices ? static_cast<const unsigned*>(n.aux) : hinge_indices(p);
  const unsigned rows = x.d.rows();
  for (unsigned b = 0; b < n.value.d.bd; ++b) {
    const float* xb = x.batch_ptr(b);
    float* db = dx.batch_ptr(b);
    const unsigned v = idx[p.count == 1 ? 0 : b];
    const float base = p.margin - xb[v], g = dy.v[b];
    float active = 0.f;
    for (unsigned i = 0; i < rows; ++i)
      if (i != v && base + xb[i] > 0.f) {
        db[i] += g;
        active += 1.f;
      }
    db[v] -= active * g;
  }
}

// ---------------------------------------------------------------- two-argument losses
struct LossParams {
  float c = 0.f;  // huber's threshold
};

Dim pair_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  const char* name = op_name(node.op);
  DYNET_LITE_DIM_CHECK(n == 2, name << ": takes two arguments, got " << n);
  const Dim &a = xs[0]->d, &b = xs[1]->d;
  DYNET_LITE_DIM_CHECK(same_shape_ignoring_batch(a, b), name << ": x " << a << " and y " << b
                                                             << " must have the same shape");
  DYNET_LITE_DIM_CHECK(a.bd == b.bd || a.bd == 1 || b.bd == 1,
                       name << ": x " << a << " and y " << b << " have batch sizes " << a.bd << " and " << b.bd
                            << " (must be equal or 1)");
  return Dim({1}, std::max(a.bd, b.bd));
}

// Each functor: f(a, b, c) summed over the elements, and its partials da, db.
// y = sum (a - b)^2;  da += 2 (a - b) dy, db -= 2 (a - b) dy
struct SquaredDistanceF {
  static float f(float a, float b, float) { return (a - b) * (a - b); }
  static float da(float a, float b, float) { return 2.f * (a - b); }
  static float db(float a, float b, float) { return -2.f * (a - b); }
};
// y = sum |a - b|;  da += sgn(a - b) dy, db -= sgn(a - b) dy  (0 at a = b)
struct L1DistanceF {
  static float sgn(float t) { return static_cast<float>((t > 0.f) - (t < 0.f)); }
  static float f(float a, float b, float) { return std::fabs(a - b); }
  static float da(float a, float b, float) { return sgn(a - b); }
  static float db(float a, float b, float) { return -sgn(a - b); }
};
// t = a - b;  y = sum (|t| < c ? t^2 : c (2|t| - c))   (DyNet's scale, C1 at |t| = c)
// da += 2 (|t| < c ? t : c sgn(t)) dy, db -= the same
struct HuberDistanceF {
  static float grad(float t, float c) { return 2.f * (std::fabs(t) < c ? t : (t > 0.f ? c : -c)); }
  static float f(float a, float b, float c) {
    float t = std::fabs(a - b);
    return t < c ? t * t : c * (2.f * t - c);
  }
  static float da(float a, float b, float c) { return grad(a - b, c); }
  static float db(float a, float b, float c) { return -grad(a - b, c); }
};
// y = -sum (t log x + (1 - t) log(1 - x)), with DyNet's clamp: an element whose x
// is 0 or 1 where that is wrong (t = 1 and x = 0, t = 0 and x = 1, any x of 0 or
// 1 for another t) costs -log(FLT_MIN) = 87.34 whole
// dx += (-t / x + (1 - t) / (1 - x)) dy  (0 where x = t; x clamped away from 0 and 1)
// dt += (log(1 - x) - log x) dy
struct BinaryLogLossF {
  static float log_x(float x) { return x > 0.f ? std::log(x) : std::log(FLT_MIN); }
  static float log_1mx(float x) { return x < 1.f ? std::log1p(-x) : std::log(FLT_MIN); }
  static float f(float x, float t, float) {
    const float clamped = -std::log(FLT_MIN);
    if (t == 1.f) return x == 0.f ? clamped : -std::log(x);
    if (t == 0.f) return x == 1.f ? clamped : -std::log1p(-x);
    if (x == 0.f || x == 1.f) return clamped;
    return -(t * std::log(x) + (1.f - t) * std::log1p(-x));
  }
  static float da(float x, float t, float) {
    if (x == t) return 0.f;
    if (x <= 0.f) x = FLT_MIN;
    if (x >= 1.f) x = 0.9999999f;
    return -t / x + (1.f - t) / (1.f - x);
  }
  static float db(float x, float, float) { return log_1mx(x) - log_x(x); }
};
// y = sum a b;  da += b dy, db += a dy
struct DotProductF {
  static float f(float a, float b, float) { return a * b; }
  static float da(float, float b, float) { return b; }
  static float db(float a, float, float) { return a; }
};

template <class F>
void pair_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const Tensor &a = *xs[0], &b = *xs[1];
  const float c = n.p<LossParams>().c;
  const size_t per = a.d.batch_size();
  for (unsigned k = 0; k < n.value.d.bd; ++k) {
    const float *ak = a.batch_ptr(k), *bk = b.batch_ptr(k);
    float s = 0.f;
    for (size_t i = 0; i < per; ++i) s += F::f(ak[i], bk[i], c);
    n.value.v[k] = s;
  }
}
// Argument i gets its partial; a batch of 1 collects every batch element's.
template <class F>
void pair_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned i, Tensor& dx,
                   ExecContext&) {
  const Tensor &a = *xs[0], &b = *xs[1];
  const float c = n.p<LossParams>().c;
  const size_t per = a.d.batch_size();
  for (unsigned k = 0; k < n.value.d.bd; ++k) {
    const float *ak = a.batch_ptr(k), *bk = b.batch_ptr(k);
    float* dk = dx.batch_ptr(k);
    const float g = dy.v[k];
    if (i == 0)
      for (size_t j = 0; j < per; ++j) dk[j] += F::da(ak[j], bk[j], c) * g;
    else
      for (size_t j = 0; j < per; ++j) dk[j] += F::db(ak[j], bk[j], c) * g;
  }
}

template <class F>
void set_pair(OpTable& t, OpKind op, const char* name, Purity purity) {
  t.define(op, "losses", name, pair_shape, pair_forward<F>, pair_backward<F>, BatchKind::Never, purity);
}

// ---------------------------------------------------------------- norms
Dim norm_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return Dim({1}, xs[0]->d.bd);
}
float squared_sum(const float* x, size_t n) {
  float s = 0.f;
  for (size_t i = 0; i < n; ++i) s += x[i] * x[i];
  return s;
}
// y_b = sum_i x_bi^2;  dx += 2 x dy
void squared_norm_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const Tensor& x = *xs[0];
  for (unsigned b = 0; b < x.d.bd; ++b) n.value.v[b] = squared_sum(x.batch_ptr(b), x.d.batch_size());
}
void squared_norm_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                           ExecContext&) {
  const Tensor& x = *xs[0];
  const size_t per = x.d.batch_size();
  for (unsigned b = 0; b < x.d.bd; ++b) {
    const float* xb = x.batch_ptr(b);
    float* db = dx.batch_ptr(b);
    for (size_t i = 0; i < per; ++i) db[i] += 2.f * xb[i] * dy.v[b];
  }
}
// y_b = sqrt(sum_i x_bi^2);  dx += x / y dy  (0 when y = 0, the subgradient at the kink)
void l2_norm_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const Tensor& x = *xs[0];
  for (unsigned b = 0; b < x.d.bd; ++b) n.value.v[b] = std::sqrt(squared_sum(x.batch_ptr(b), x.d.batch_size()));
}
void l2_norm_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                      ExecContext&) {
  const Tensor& x = *xs[0];
  const size_t per = x.d.batch_size();
  for (unsigned b = 0; b < x.d.bd; ++b) {
    const float y = n.value.v[b];
    if (y == 0.f) continue;
    const float* xb = x.batch_ptr(b);
    float* db = dx.batch_ptr(b);
    const float s = dy.v[b] / y;
    for (size_t i = 0; i < per; ++i) db[i] += xb[i] * s;
  }
}

Expression hinge_node(const Expression& x, HingeParams p, float m) {
  p.margin = m;
  return detail::add(OpKind::Hinge, {x}, p);
}

Expression pair_node(OpKind op, const Expression& x, const Expression& y, float c = 0.f) {
  LossParams p;
  p.c = c;
  return detail::add(op, {x, y}, p);
}

}  // namespace

void register_loss_ops(OpTable& t) {
  t.define(OpKind::Hinge, "losses", "hinge", hinge_shape, hinge_forward, hinge_backward, BatchKind::Never,
           Purity::Impure);

  set_pair<BinaryLogLossF>(t, OpKind::BinaryLogLoss, "binary_log_loss", Purity::Impure);
  set_pair<SquaredDistanceF>(t, OpKind::SquaredDistance, "squared_distance", Purity::Pure);
  set_pair<L1DistanceF>(t, OpKind::L1Distance, "l1_distance", Purity::Pure);
  set_pair<HuberDistanceF>(t, OpKind::HuberDistance, "huber_distance", Purity::Impure);
  set_pair<DotProductF>(t, OpKind::DotProduct, "dot_product", Purity::Pure);

  t.define(OpKind::SquaredNorm, "losses", "squared_norm", norm_shape, squared_norm_forward, squared_norm_backward,
           BatchKind::Never, Purity::Pure);

  t.define(OpKind::L2Norm, "losses", "l2_norm", norm_shape, l2_norm_forward, l2_norm_backward, BatchKind::Never,
           Purity::Pure);
}

Expression hinge(const Expression& x, unsigned index, float m) {
  HingeParams p;
  p.index = index;
  return hinge_node(x, p, m);
}
Expression hinge(const Expression& x, const unsigned* pindex, float m) {
  DYNET_LITE_ARG_CHECK(pindex != nullptr, "hinge: null index pointer (x " << x.dim() << ")");
  HingeParams p;
  p.pindex = pindex;
  return hinge_node(x, p, m);
}
Expression hinge(const Expression& x, const std::vector<unsigned>& indices, float m) {
  DYNET_LITE_ARG_CHECK(!indices.empty(), "hinge: empty index list (x " << x.dim() << ")");
  HingeParams p;
  if (indices.size() == 1) {
    p.index = indices[0];
  } else {
    p.indices = detail::copy_to_graph(detail::live_graph(x, "hinge"), indices.data(), indices.size());
  }
  p.count = static_cast<unsigned>(indices.size());
  return hinge_node(x, p, m);
}
Expression hinge(const Expression& x, const std::vector<unsigned>* pindices, float m) {
  DYNET_LITE_ARG_CHECK(pindices != nullptr, "hinge: null pointer to the index vector (x " << x.dim() << ")");
  DYNET_LITE_ARG_CHECK(!pindices->empty(), "hinge: empty index list (x " << x.dim() << ")");
  HingeParams p;
  p.pindices = pindices;
  p.count = static_cast<unsigned>(pindices->size());
  return hinge_node(x, p, m);
}
Expression squared_distance(const Expression& x, const Expression& y) {
  return pair_node(OpKind::SquaredDistance, x, y);
}
Expression l1_distance(const Expression& x, const Expression& y) { return pair_node(OpKind::L1Distance, x, y); }
Expression huber_distance(const Expression& x, const Expression& y, real c) {
  DYNET_LITE_ARG_CHECK(c > 0.f, "huber_distance: c must be > 0, got " << c << " (x " << x.dim() << ", y " << y.dim()
                                                                      << ")");
  return pair_node(OpKind::HuberDistance, x, y, c);
}
Expression binary_log_loss(const Expression& x, const Expression& y) {
  return pair_node(OpKind::BinaryLogLoss, x, y);
}
Expression dot_product(const Expression& x, const Expression& y) { return pair_node(OpKind::DotProduct, x, y); }
Expression squared_norm(const Expression& x) { return detail::add(OpKind::SquaredNorm, {x}); }
Expression l2_norm(const Expression& x) { return detail::add(OpKind::L2Norm, {x}); }

}  // namespace dynet_lite
