// Reductions over elements, dimensions and the batch.
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"
#include "dynet_lite/ops/reduce_dims.h"

namespace dynet_lite {

uint32_t reduced_dims_mask(const char* name, const std::vector<unsigned>& dims) {
  uint32_t mask = 0;
  for (unsigned k : dims) {
    DYNET_LITE_DIM_CHECK(k < DYNET_MAX_TENSOR_DIM, name << ": dimension " << k
                                                        << " is out of range (a tensor has at most "
                                                        << DYNET_MAX_TENSOR_DIM << " dimensions)");
    DYNET_LITE_DIM_CHECK(!((mask >> k) & 1u), name << ": dimension " << k << " is listed twice");
    mask |= 1u << k;
  }
  return mask;
}

Dim reduced_dims_shape(OpKind op, const Dim& x, uint32_t mask, bool batch) {
  DYNET_LITE_DIM_CHECK(mask != 0 || batch, op_name(op) << ": nothing to reduce for " << x
                                                       << " (no dimension listed and the batch not included)");
  // As in DyNet, dimension nd (an implicit length-1 dimension) may be named.
  for (unsigned k = x.nd + 1; k < DYNET_MAX_TENSOR_DIM; ++k)
    DYNET_LITE_DIM_CHECK(!((mask >> k) & 1u), op_name(op) << ": dimension " << k << " is out of range for " << x << " ("
                                                          << x.nd << " dimensions)");
  Dim r = x;
  // Highest dimension first so that lower indices stay valid.
  for (unsigned k = DYNET_MAX_TENSOR_DIM; k-- > 0;)
    if (((mask >> k) & 1u) && k < r.nd) r.delete_dim(k);
  if (batch) r.bd = 1;
  return r;
}

namespace {

using op_params::ArgReduceParams;
using op_params::DimReduceParams;

using cpu::batch_arr;

Dim one_arg(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return xs[0]->d;
}

// ---------------------------------------------------------------- sum_elems
Dim sum_elems_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  return Dim({1}, d.bd);
}
// y_b = sum_i x_bi;  dx_bi += dy_b
void sum_elems_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  for (unsigned b = 0; b < n.value.d.bd; ++b) n.value.v[b] = batch_arr(*xs[0], b).sum();
}
void sum_elems_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                        ExecContext&) {
  for (unsigned b = 0; b < dx.d.bd; ++b) batch_arr(dx, b) += dy.v[b];
}

// ---------------------------------------------------------------- sum_batches
Dim sum_batches_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  d.bd = 1;
  return d;
}
// y = sum_b x_b;  dx_b += dy
void sum_batches_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const Tensor& x = *xs[0];
  cpu::arr(n.value) = batch_arr(x, 0);
  for (unsigned b = 1; b < x.d.bd; ++b) cpu::arr(n.value) += batch_arr(x, b);
}
void sum_batches_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                          ExecContext&) {
  for (unsigned b = 0; b < dx.d.bd; ++b) batch_arr(dx, b) += cpu::arr(dy);
}

// ---------------------------------------------------------------- mean_elems
// y_b = mean_i x_bi;  dx_bi += dy_b / n
void mean_elems_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  for (unsigned b = 0; b < n.value.d.bd; ++b) n.value.v[b] = batch_arr(*xs[0], b).mean();
}
void mean_elems_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                         ExecContext&) {
  float scale = 1.f / static_cast<float>(dx.d.batch_size());
  for (unsigned b = 0; b < dx.d.bd; ++b) batch_arr(dx, b) += dy.v[b] * scale;
}

// ---------------------------------------------------------------- mean_batches
// y = (1/B) sum_b x_b;  dx_b += dy / B
void mean_batches_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext& ctx) {
  sum_batches_forward(xs, n, node, ctx);
  cpu::arr(node.value) *= 1.f / static_cast<float>(xs[0]->d.bd);
}
void mean_batches_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                           ExecContext&) {
  float scale = 1.f / static_cast<float>(dx.d.bd);
  for (unsigned b = 0; b < dx.d.bd; ++b) batch_arr(dx, b) += cpu::arr(dy) * scale;
}

// ---------------------------------------------------------------- sum_dim / mean_dim

// The input seen as up to 8 groups of adjacent dimensions (the batch is the last
// one) that are all reduced or all kept, with the output stride of each group.
struct ReduceLayout {
  unsigned ng = 0;
  size_t size[DYNET_MAX_TENSOR_DIM + 1];
  size_t out_stride[DYNET_MAX_TENSOR_DIM + 1];  // 0 for a reduced group
  bool reduced[DYNET_MAX_TENSOR_DIM + 1];
  size_t count = 1;  // how many input elements fall on one output element

  ReduceLayout(const Dim& x, const DimReduceParams& p) {
    size_t out = 1;
    for (unsigned k = 0; k <= x.nd; ++k) {
      size_t s = k < x.nd ? x.d[k] : x.bd;
      bool r = k < x.nd ? ((p.mask >> k) & 1u) != 0 : p.batch;
      if (r) count *= s;
      if (s == 1) continue;  // a length-1 dimension changes no offset
      if (ng > 0 && reduced[ng - 1] == r) {
        size[ng - 1] *= s;
      } else {
        size[ng] = s;
        reduced[ng] = r;
        out_stride[ng] = r ? 0 : out;
        ++ng;
      }
      if (!r) out *= s;
    }
    if (ng == 0) {  // a single element
      size[0] = 1;
      reduced[0] = false;
      out_stride[0] = 1;
      ng = 1;
    }
  }

  // Calls f(x_offset, y_offset) for each run of size[0] consecutive input
  // elements; reduced[0] says whether the run maps onto one output element or
  // onto size[0] consecutive ones.
  template <class F>
  void for_each_run(F f) const {
    size_t counter[DYNET_MAX_TENSOR_DIM + 1] = {};
    size_t runs = 1;
    for (unsigned g = 1; g < ng; ++g) runs *= size[g];
    size_t xo = 0, yo = 0;
    for (size_t r = 0; r < runs; ++r) {
      f(xo, yo);
      xo += size[0];
      for (unsigned g = 1; g < ng; ++g) {
        yo += out_stride[g];
        if (++counter[g] < size[g]) break;
        yo -= out_stride[g] * size[g];
        counter[g] = 0;
      }
    }
  }
};

Dim dim_reduce_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  const DimReduceParams& p = node.p<DimReduceParams>();
  return reduced_dims_shape(node.op, one_arg(xs, n, node), p.mask, p.batch);
}

// y[j] = scale * sum over the reduced positions i of x[i]
void dim_reduce(const Tensor& x, const DimReduceParams& p, float* y, size_t ysize, bool mean) {
  ReduceLayout l(x.d, p);
  std::memset(y, 0, ysize * sizeof(float));
  const float* xv = x.v;
  size_t run = l.size[0];
  if (l.reduced[0]) {
    l.for_each_run([&](size_t xo, size_t yo) {
      y[yo] += cpu::ArrMap(const_cast<float*>(xv) + xo, static_cast<Eigen::Index>(run)).sum();
    });
  } else {
    l.for_each_run([&](size_t xo, size_t yo) {
      for (size_t j = 0; j < run; ++j) y[yo + j] += xv[xo + j];
    });
  }
  if (mean && l.count != 1) {
    float scale = 1.f / static_cast<float>(l.count);
    for (size_t j = 0; j < ysize; ++j) y[j] *= scale;
  }
}

// dx[i] += scale * dy[j(i)]
void dim_reduce_backward(const Tensor& dx, const DimReduceParams& p, const float* dy, bool mean) {
  ReduceLayout l(dx.d, p);
  float scale = mean ? 1.f / static_cast<float>(l.count) : 1.f;
  float* g = dx.v;
  size_t run = l.size[0];
  if (l.reduced[0]) {
    l.for_each_run([&](size_t xo, size_t yo) {
      float v = scale * dy[yo];
      for (size_t j = 0; j < run; ++j) g[xo + j] += v;
    });
  } else {
    l.for_each_run([&](size_t xo, size_t yo) {
      for (size_t j = 0; j < run; ++j) g[xo + j] += scale * dy[yo + j];
    });
  }
}

// y = sum over the listed dims (and the batch when b) of x;  dx += dy broadcast back
void sum_dim_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  dim_reduce(*xs[0], n.p<DimReduceParams>(), n.value.v, n.value.d.size(), false);
}
void sum_dim_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                      ExecContext&) {
  dim_reduce_backward(dx, n.p<DimReduceParams>(), dy.v, false);
}
// y = sum_dim(x) / (number of reduced elements);  dx += dy / count broadcast back
void mean_dim_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  dim_reduce(*xs[0], n.p<DimReduceParams>(), n.value.v, n.value.d.size(), true);
}
void mean_dim_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                       ExecContext&) {
  dim_reduce_backward(dx, n.p<DimReduceParams>(), dy.v, true);
}

Expression dim_reduce_expr(OpKind op, const char* name, const Expression& x, const std::vector<unsigned>& dims,
                           bool b) {
  DimReduceParams p;
  p.batch = b;
  p.mask = reduced_dims_mask(name, dims);
  return detail::add(op, {x}, p);
}

// ---------------------------------------------------------------- max_dim / min_dim

Dim arg_reduce_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  unsigned k = node.p<ArgReduceParams>().dim;
  DYNET_LITE_DIM_CHECK(k < d.nd, op_name(node.op) << ": dimension " << k << " is out of range for " << d << " (" << d.nd
                                                  << " dimensions)");
  d.delete_dim(k);
  return d;
}

// inner: elements before dimension d; len: its length; outer: everything after
// (batch included).  Element (i, k, o) sits at (o * len + k) * inner + i.
struct AxisLayout {
  size_t inner = 1, len = 1, outer = 1;
  AxisLayout(const Dim& x, unsigned d) {
    for (unsigned k = 0; k < d; ++k) inner *= x[k];
    len = x[d];
    for (unsigned k = d + 1; k < x.nd; ++k) outer *= x.d[k];
    outer *= x.bd;
  }
};

// y = max (or min) of x along d;  dx[first position of the extreme] += dy.
// Backward finds that position again from x and y (the first element equal to
// y), so nothing is kept between the passes and a tie goes to the first.
template <bool kMax>
void arg_reduce_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const Tensor& x = *xs[0];
  AxisLayout l(x.d, n.p<ArgReduceParams>().dim);
  float* y = n.value.v;
  for (size_t o = 0; o < l.outer; ++o) {
    const float* xo = x.v + o * l.len * l.inner;
    float* yo = y + o * l.inner;
    std::memcpy(yo, xo, l.inner * sizeof(float));
    for (size_t k = 1; k < l.len; ++k) {
      const float* xk = xo + k * l.inner;
      for (size_t i = 0; i < l.inner; ++i)
        yo[i] = kMax ? (xk[i] > yo[i] ? xk[i] : yo[i]) : (xk[i] < yo[i] ? xk[i] : yo[i]);
    }
  }
}
void arg_reduce_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                         ExecContext&) {
  const Tensor& x = *xs[0];
  AxisLayout l(dx.d, n.p<ArgReduceParams>().dim);
  const float* y = n.value.v;
  for (size_t o = 0; o < l.outer; ++o) {
    const float* xo = x.v + o * l.len * l.inner;
    for (size_t i = 0; i < l.inner; ++i) {
      size_t j = o * l.inner + i;
      // A NaN extreme matches no element: no gradient flows.
      for (size_t k = 0; k < l.len; ++k)
        if (xo[k * l.inner + i] == y[j]) {
          dx.v[(o * l.len + k) * l.inner + i] += dy.v[j];
          break;
        }
    }
  }
}

}  // namespace

void register_reduce_ops(OpTable& t) {
  t.define(OpKind::SumElems, "reduce", "sum_elems", sum_elems_shape, sum_elems_forward, sum_elems_backward,
           BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);

  t.define(OpKind::SumBatches, "reduce", "sum_batches", sum_batches_shape, sum_batches_forward, sum_batches_backward,
           BatchKind::Never, Purity::Pure, Devices::CpuAndCuda);

  t.define(OpKind::MeanElems, "reduce", "mean_elems", sum_elems_shape, mean_elems_forward, mean_elems_backward,
           BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);

  t.define(OpKind::MeanBatches, "reduce", "mean_batches", sum_batches_shape, mean_batches_forward,
           mean_batches_backward, BatchKind::Never, Purity::Pure, Devices::CpuAndCuda);

  // sum_dim / mean_dim may reduce the batch too: they never run stacked.
  t.define(OpKind::SumDim, "reduce", "sum_dim", dim_reduce_shape, sum_dim_forward, sum_dim_backward, BatchKind::Never,
           Purity::Pure, Devices::CpuAndCuda);

  t.define(OpKind::MeanDim, "reduce", "mean_dim", dim_reduce_shape, mean_dim_forward, mean_dim_backward,
           BatchKind::Never, Purity::Pure, Devices::CpuAndCuda);

  t.define(OpKind::MaxDim, "reduce", "max_dim", arg_reduce_shape, arg_reduce_forward<true>, arg_reduce_backward,
           BatchKind::Elementwise, Purity::Impure, Devices::CpuAndCuda);

  t.define(OpKind::MinDim, "reduce", "min_dim", arg_reduce_shape, arg_reduce_forward<false>, arg_reduce_backward,
           BatchKind::Elementwise, Purity::Impure, Devices::CpuAndCuda);
}

Expression sum_elems(const Expression& x) { return detail::add(OpKind::SumElems, {x}); }
Expression sum_batches(const Expression& x) { return detail::add(OpKind::SumBatches, {x}); }

Expression mean_elems(const Expression& x) { return detail::add(OpKind::MeanElems, {x}); }
Expression mean_batches(const Expression& x) { return detail::add(OpKind::MeanBatches, {x}); }
Expression sum_dim(const Expression& x, const std::vector<unsigned>& dims, bool b) {
  return dim_reduce_expr(OpKind::SumDim, "sum_dim", x, dims, b);
}
Expression mean_dim(const Expression& x, const std::vector<unsigned>& dims, bool b) {
  return dim_reduce_expr(OpKind::MeanDim, "mean_dim", x, dims, b);
}
Expression max_dim(const Expression& x, unsigned d) {
  ArgReduceParams p;
  p.dim = d;
  return detail::add(OpKind::MaxDim, {x}, p);
}
Expression min_dim(const Expression& x, unsigned d) {
  ArgReduceParams p;
  p.dim = d;
  return detail::add(OpKind::MinDim, {x}, p);
}

}  // namespace dynet_lite
