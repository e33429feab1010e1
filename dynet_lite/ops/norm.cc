// Layer normalisation (Ba et al. 2016), over all elements of each batch element
// as DyNet's layer_norm (built there from mean_elems), as one node.
#include <algorithm>
#include <cmath>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using cpu::batch_arr;

constexpr float kLayerNormEps = 1e-8f;

// x, g and b have the same shape per batch element; each batch size is 1 or the
// output's.
Dim layer_norm_shape(const Tensor* const* xs, unsigned n, const Node&) {
  DYNET_LITE_DIM_CHECK(n == 3, "layer_norm: takes three arguments (x, g, b), got " << n);
  const Dim &x = xs[0]->d, &g = xs[1]->d, &b = xs[2]->d;
  DYNET_LITE_DIM_CHECK(same_shape_ignoring_batch(x, g) && same_shape_ignoring_batch(x, b),
                       "layer_norm: gain g " << g << " and bias b " << b << " must have the shape of x " << x);
  unsigned bd = std::max(x.bd, std::max(g.bd, b.bd));
  DYNET_LITE_DIM_CHECK((x.bd == 1 || x.bd == bd) && (g.bd == 1 || g.bd == bd) && (b.bd == 1 || b.bd == bd),
                       "layer_norm: batch sizes of x " << x << ", g " << g << " and b " << b
                                                       << " must be equal or 1");
  Dim y = x;
  y.bd = bd;
  return y;
}

// Per output batch element: mu = mean(x), r = 1 / sqrt(mean((x - mu)^2) + eps),
// xhat = (x - mu) r, y = g xhat + b.  aux keeps (mu, r) per batch element.
void layer_norm_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  const Tensor &x = *xs[0], &g = *xs[1], &b = *xs[2];
  unsigned bd = n.value.d.bd;
  float* stats = ctx.persistent_floats(2 * bd);
  n.aux = stats;
  for (unsigned k = 0; k < bd; ++k) {
    auto xk = batch_arr(x, k);
    float mu = xk.mean();
    float var = (xk - mu).square().mean();
    float r = 1.f / std::sqrt(var + kLayerNormEps);
    stats[2 * k] = mu;
    stats[2 * k + 1] = r;
    batch_arr(n.value, k) = batch_arr(g, k) * ((xk - mu) * r) + batch_arr(b, k);
  }
}

// db += dy;  dg += xhat dy;
// dx += r (gdy - mean(gdy) - xhat mean(gdy xhat)),  gdy = g dy
void layer_norm_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned i, Tensor& dx,
                         ExecContext& ctx) {
  const Tensor &x = *xs[0], &g = *xs[1];
  const float* stats = static_cast<const float*>(n.aux);
  DYNET_LITE_ASSERT(stats != nullptr, "layer_norm: backward before forward");
  unsigned bd = n.value.d.bd;
  Eigen::Index sz = static_cast<Eigen::Index>(n.value.d.batch_size());
  // dx's batch pointer broadcasts, so a batch of 1 sums over the output's batch.
  if (i == 2) {
    for (unsigned k = 0; k < bd; ++k) batch_arr(dx, k) += batch_arr(dy, k);
    return;
  }
  cpu::ArrMap xhat(ctx.scratch_floats(sz), sz);
  for (unsigned k = 0; k < bd; ++k) {
    xhat = (batch_arr(x, k) - stats[2 * k]) * stats[2 * k + 1];
    if (i == 1) {
      batch_arr(dx, k) += xhat * batch_arr(dy, k);
    } else {
      auto gdy = batch_arr(g, k) * batch_arr(dy, k);
      float mean_gdy = gdy.mean();
      float mean_gdy_xhat = (gdy * xhat).mean();
      batch_arr(dx, k) += stats[2 * k + 1] * (gdy - mean_gdy - xhat * mean_gdy_xhat);
    }
  }
}

}  // namespace

void register_norm_ops(OpTable& t) {
  // g and b (args 1, 2) are shared weights, which no BatchKind describes.
  t.define(OpKind::LayerNorm, "norm", "layer_norm", layer_norm_shape, layer_norm_forward, layer_norm_backward,
           BatchKind::Never, Purity::Pure);
}

Expression layer_norm(const Expression& x, const Expression& g, const Expression& b) {
  return detail::add(OpKind::LayerNorm, {x, g, b});
}

}  // namespace dynet_lite
