// Training-time noise: inverted dropout in its four shapes, and additive
// Gaussian noise.  Each forward draws fresh random numbers from the graph's own
// engine (ctx.rng()); the dropout mask is kept in node.aux for backward.
#include <cmath>
#include <random>

#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using op_params::RandomParams;

Dim one_arg_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return xs[0]->d;
}

Dim dropout_dim_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg_shape(xs, n, node);
  unsigned dim = node.p<RandomParams>().dim;
  DYNET_LITE_DIM_CHECK(dim < d.nd, "dropout_dim: dimension " << dim << " out of range for x " << d << " ("
                                                             << d.nd << " dimensions)");
  return d;
}

// Which elements share a mask value.  The elements of x are laid out as
// [inner][len][outer] (column-major, inner fastest); element a + inner*(k + len*c)
// uses mask value a + inner*c, so the mask holds inner*outer values, each shared
// by `len` elements.
struct MaskLayout {
  size_t inner, len, outer;
  size_t size() const { return inner * outer; }
};

MaskLayout mask_layout(const Node& n) {
  const Dim& d = n.value.d;
  switch (n.op) {
    case OpKind::DropoutDim: {
      // dimension `dim` is shared, every other index (batch included) has its own
      unsigned dim = n.p<RandomParams>().dim;
      size_t inner = 1;
      for (unsigned k = 0; k < dim; ++k) inner *= d.d[k];
      size_t len = d.d[dim];
      return {inner, len, d.size() / (inner * len)};
    }
    case OpKind::DropoutBatch:
      return {1, d.batch_size(), d.bd};  // one value per batch element
    case OpKind::BlockDropout:
      return {1, d.size(), 1};  // one value for the whole tensor
    default:
      return {d.size(), 1, 1};  // one value per element
  }
}

// y = x * m, m_j = [u_j >= p] / (1 - p) shared as the layout says;  dx += m * dy
void dropout_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  MaskLayout L = mask_layout(n);
  float p = n.p<RandomParams>().p;
  float* mask = ctx.persistent_floats(L.size());
  n.aux = mask;
  // p == 1 only reaches here for block_dropout: everything is dropped.
  float scale = p < 1.f ? 1.f / (1.f - p) : 0.f;
  std::bernoulli_distribution keep(1.0 - static_cast<double>(p));
  std::mt19937& rng = ctx.rng();
  for (size_t j = 0; j < L.size(); ++j) mask[j] = keep(rng) ? scale : 0.f;

  const float* x = xs[0]->v;
  float* y = n.value.v;
  for (size_t c = 0; c < L.outer; ++c)
    for (size_t k = 0; k < L.len; ++k) {
      size_t off = L.inner * (k + L.len * c);
      const float* m = mask + L.inner * c;
      for (size_t a = 0; a < L.inner; ++a) y[off + a] = x[off + a] * m[a];
    }
}

void dropout_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                      ExecContext&) {
  MaskLayout L = mask_layout(n);
  const float* mask = static_cast<const float*>(n.aux);
  DYNET_LITE_ASSERT(mask != nullptr, op_name(n.op) << ": backward before forward (no mask)");
  for (size_t c = 0; c < L.outer; ++c)
    for (size_t k = 0; k < L.len; ++k) {
      size_t off = L.inner * (k + L.len * c);
      const float* m = mask + L.inner * c;
      for (size_t a = 0; a < L.inner; ++a) dx.v[off + a] += dy.v[off + a] * m[a];
    }
}

// y = x + e, e ~ N(0, s^2);  dx += dy
void noise_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  std::normal_distribution<float> e(0.f, n.p<RandomParams>().p);
  std::mt19937& rng = ctx.rng();
  const float* x = xs[0]->v;
  float* y = n.value.v;
  size_t sz = n.value.d.size();
  for (size_t i = 0; i < sz; ++i) y[i] = x[i] + e(rng);
}

void noise_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                    ExecContext&) {
  size_t sz = n.value.d.size();
  for (size_t i = 0; i < sz; ++i) dx.v[i] += dy.v[i];
}

void check_drop_probability(const char* op, float p) {
  // written so that NaN fails too
  DYNET_LITE_ARG_CHECK(p >= 0.f && p < 1.f, op << ": drop probability p must be in [0, 1), got " << p);
}

Expression add_random(OpKind op, const Expression& x, float p, unsigned dim = 0) {
  RandomParams params;
  params.p = p;
  params.dim = dim;
  return detail::add(op, {x}, params);
}

}  // namespace

void register_random_ops(OpTable& t) {
  // The mask lives in node.aux, which a stacked run would not give each node.
  const BatchKind never = BatchKind::Never;
  t.define(OpKind::Dropout, "random", "dropout", one_arg_shape, dropout_forward, dropout_backward, never,
           Purity::Impure, Devices::CpuAndCuda);
  t.define(OpKind::DropoutDim, "random", "dropout_dim", dropout_dim_shape, dropout_forward, dropout_backward, never,
           Purity::Impure, Devices::CpuAndCuda);
  t.define(OpKind::DropoutBatch, "random", "dropout_batch", one_arg_shape, dropout_forward, dropout_backward, never,
           Purity::Impure, Devices::CpuAndCuda);
  t.define(OpKind::BlockDropout, "random", "block_dropout", one_arg_shape, dropout_forward, dropout_backward, never,
           Purity::Impure, Devices::CpuAndCuda);
  t.define(OpKind::Noise, "random", "noise", one_arg_shape, noise_forward, noise_backward, BatchKind::Elementwise,
           Purity::Impure, Devices::CpuAndCuda);
}

Expression noise(const Expression& x, real stddev) {
  DYNET_LITE_ARG_CHECK(stddev >= 0.f && std::isfinite(stddev),
                       "noise: stddev must be finite and >= 0, got " << stddev);
  return add_random(OpKind::Noise, x, stddev);
}

Expression dropout(const Expression& x, real p) {
  check_drop_probability("dropout", p);
  return add_random(OpKind::Dropout, x, p);
}

Expression dropout_dim(const Expression& x, unsigned d, real p) {
  check_drop_probability("dropout_dim", p);
  return add_random(OpKind::DropoutDim, x, p, d);
}

Expression dropout_batch(const Expression& x, real p) {
  check_drop_probability("dropout_batch", p);
  return add_random(OpKind::DropoutBatch, x, p);
}

// As DyNet: one draw for the whole tensor, and p = 1 is allowed (all zeros).
Expression block_dropout(const Expression& x, real p) {
  DYNET_LITE_ARG_CHECK(p >= 0.f && p <= 1.f, "block_dropout: drop probability p must be in [0, 1], got " << p);
  return add_random(OpKind::BlockDropout, x, p);
}

}  // namespace dynet_lite
