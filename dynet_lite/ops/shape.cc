// Selecting, reshaping and joining: reshape, pick, pick_range, pick_batch_elems,
// select_rows/cols, concatenate, concatenate_to_batch, and the gradient controls
// (nobackprop, flip_gradient, scale_gradient).
//
// All of these move blocks of memory: each kernel works out the largest
// contiguous run it can copy (memcpy) and allocates nothing.
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using op_params::ConcatParams;
using op_params::IndexSource;
using op_params::OneFloat;
using op_params::RangeParams;

using ConstArrMap = Eigen::Map<const Eigen::ArrayXf>;

inline void copy_floats(float* dst, const float* src, size_t n) {
  if (n == 1)
    *dst = *src;
  else
    std::memcpy(dst, src, n * sizeof(float));
}

// dst[0..n) += src[0..n)
inline void add_floats(float* dst, const float* src, size_t n) {
  if (n == 1)
    *dst += *src;
  else
    cpu::ArrMap(dst, static_cast<Eigen::Index>(n)) += ConstArrMap(src, static_cast<Eigen::Index>(n));
}

Dim one_arg(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, op_name(node.op) << ": takes one argument, got " << n);
  return xs[0]->d;
}

ComputationGraph& graph_of(const Expression& x, const char* op) {
  return detail::live_graph(x, op);
}

// Product of the dimensions [from, to) of d (dimensions past nd count as 1).
inline size_t dims_product(const Dim& d, unsigned from, unsigned to) {
  size_t p = 1;
  for (unsigned k = from; k < to && k < d.nd; ++k) p *= d.d[k];
  return p;
}

// ---------------------------------------------------------------- index lists
// Where an op's indices come from: a copy in graph memory, a user's vector or a
// user's single index read at forward time, or one index given by value.
static_assert(sizeof(IndexSource) <= Node::kParamBytes, "index source must fit in the node");

bool read_at_forward(const IndexSource& s) { return s.pvec != nullptr || s.pone != nullptr; }

// axis < 0 names the batch dimension.  An index out of range is an index_error,
// or, for the ops where DyNet throws std::invalid_argument (select_rows and
// select_cols, `dynet_arg`), a std::invalid_argument with the same message.
void check_indices(const char* op, const unsigned* idx, unsigned n, unsigned limit, int axis, const Dim& x,
                   bool dynet_arg = false) {
  for (unsigned k = 0; k < n; ++k) {
    if (__builtin_expect(idx[k] < limit, 1)) continue;
    std::ostringstream msg;
    msg << op << ": index " << idx[k] << " is out of range for ";
    if (axis < 0)
      msg << "the batch of size " << limit << " (input " << x << ")";
    else
      msg << "dimension " << axis << " of size " << limit << " (input " << x << ")";
    if (dynet_arg) throw std::invalid_argument(msg.str());
    throw index_error(msg.str());
  }
}

// The indices at forward time; pointer variants are checked here.
const unsigned* resolve_indices(const IndexSource& s, const char* op, unsigned limit, int axis, const Dim& x,
                                bool dynet_arg = false) {
  const unsigned* idx;
  if (s.pvec) {
    DYNET_LITE_DIM_CHECK(s.pvec->size() == s.count, op << ": the index vector behind the pointer now holds "
                                                       << s.pvec->size() << " indices, but the node was built for "
                                                       << s.count);
    idx = s.pvec->data();
  } else if (s.pone) {
    idx = s.pone;
  } else if (s.values) {
    return s.values;
  } else {
    return &s.one;
  }
  check_indices(op, idx, s.count, limit, axis, x, dynet_arg);
  return idx;
}

// Forward's indices; those read through a user's pointer are kept with the node
// (n.aux, graph memory), so that backward uses exactly them even when the
// user's variable has changed since.
const unsigned* forward_indices(const IndexSource& s, Node& n, ExecContext& ctx, const char* op, unsigned limit,
                                int axis, const Dim& x, bool dynet_arg = false) {
  const unsigned* idx = resolve_indices(s, op, limit, axis, x, dynet_arg);
  if (!read_at_forward(s)) return idx;
  unsigned* kept = static_cast<unsigned*>(ctx.forward_host_bytes(s.count * sizeof(unsigned)));
  std::memcpy(kept, idx, s.count * sizeof(unsigned));
  n.aux = kept;
  return kept;
}

// Backward's indices: those forward used.
const unsigned* backward_indices(const IndexSource& s, const Node& n, const char* op, unsigned limit, int axis,
                                 const Dim& x, bool dynet_arg = false) {
  if (!read_at_forward(s)) return resolve_indices(s, op, limit, axis, x, dynet_arg);
  DYNET_LITE_CHECK(n.aux != nullptr, std::logic_error, op << ": backward before forward");
  return static_cast<const unsigned*>(n.aux);
}

// Checked when the node is built for indices known then.
void check_build_time_indices(const IndexSource& s, const char* op, unsigned limit, int axis, const Dim& x,
                              bool dynet_arg = false) {
  DYNET_LITE_DIM_CHECK(s.count > 0, op << ": empty index list for input " << x);
  if (read_at_forward(s)) return;
  check_indices(op, s.values ? s.values : &s.one, s.count, limit, axis, x, dynet_arg);
}

IndexSource source_of(ComputationGraph& g, const std::vector<unsigned>& v) {
  IndexSource s;
  s.values = detail::copy_to_graph(g, v.data(), v.size());
  s.count = static_cast<unsigned>(v.size());
  s.per_batch = true;
  return s;
}
IndexSource source_of(const std::vector<unsigned>* pv, const char* op) {
  DYNET_LITE_ARG_CHECK(pv != nullptr, op << ": null pointer to the index vector");
  IndexSource s;
  s.pvec = pv;
  s.count = static_cast<unsigned>(pv->size());
  s.per_batch = true;
  return s;
}

// ---------------------------------------------------------------- reshape
struct ReshapeParams {
  Dim to;
};

// As DyNet: the target shape when the sizes agree (elements may move between the
// batch and the other dimensions); a target with a batch of 1 whose per-instance
// size matches keeps the input's batch.
Dim reshape_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  const Dim& to = node.p<ReshapeParams>().to;
  if (to.size() == d.size()) return to;
  DYNET_LITE_DIM_CHECK(to.bd == 1 && to.batch_size() == d.batch_size(), "reshape: cannot reshape "
                                                                            << d << " (" << d.size() << " values) to "
                                                                            << to << " (" << to.size() << " values)");
  Dim r = to;
  r.bd = d.bd;
  return r;
}
// y = x seen with another shape (same memory);  dx += dy
void reshape_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) { n.value.v = xs[0]->v; }
void identity_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                       ExecContext&) {
  cpu::arr(dx) += cpu::arr(dy);
}

// ---------------------------------------------------------------- pick
Dim pick_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  const IndexSource& s = node.p<IndexSource>();
  DYNET_LITE_DIM_CHECK(s.dim < d.nd,
                       "pick: dimension " << s.dim << " is out of range for " << d << " (" << d.nd << " dimensions)");
  check_build_time_indices(s, "pick", d.d[s.dim], static_cast<int>(s.dim), d);
  Dim r = d;
  if (s.per_batch) {
    DYNET_LITE_DIM_CHECK(d.bd == 1 || d.bd == s.count, "pick: " << s.count << " indices for input " << d
                                                                << " with batch size " << d.bd
                                                                << " (one index per batch element is needed)");
    r.bd = s.count;
  }
  r.delete_dim(s.dim);
  return r;
}

// y_b[.., ..] = x_b[.., idx_b, ..] (idx_b: one index for all, or one per batch element)
void pick_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const IndexSource& s = n.p<IndexSource>();
  const unsigned* idx = forward_indices(s, n, ctx, "pick", x.d.d[s.dim], static_cast<int>(s.dim), x.d);
  size_t inner = dims_product(x.d, 0, s.dim), len = x.d.d[s.dim], outer = dims_product(x.d, s.dim + 1, x.d.nd);
  size_t out_per_batch = inner * outer;
  for (unsigned b = 0; b < n.value.d.bd; ++b) {
    size_t k = s.per_batch ? idx[b] : idx[0];
    const float* xb = x.batch_ptr(b) + k * inner;
    float* yb = n.value.v + b * out_per_batch;
    for (size_t o = 0; o < outer; ++o) copy_floats(yb + o * inner, xb + o * len * inner, inner);
  }
}
// dx_b[.., idx_b, ..] += dy_b  (summed over the batch when x has a batch of 1)
void pick_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                   ExecContext&) {
  const IndexSource& s = n.p<IndexSource>();
  const unsigned* idx = backward_indices(s, n, "pick", dx.d.d[s.dim], static_cast<int>(s.dim), dx.d);
  size_t inner = dims_product(dx.d, 0, s.dim), len = dx.d.d[s.dim], outer = dims_product(dx.d, s.dim + 1, dx.d.nd);
  size_t out_per_batch = inner * outer;
  for (unsigned b = 0; b < dy.d.bd; ++b) {
    size_t k = s.per_batch ? idx[b] : idx[0];
    float* gb = dx.batch_ptr(b) + k * inner;
    const float* yb = dy.v + b * out_per_batch;
    for (size_t o = 0; o < outer; ++o) add_floats(gb + o * len * inner, yb + o * inner, inner);
  }
}

// ---------------------------------------------------------------- pick_range

Dim pick_range_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  const RangeParams& p = node.p<RangeParams>();
  DYNET_LITE_DIM_CHECK(p.dim < d.nd, "pick_range: dimension " << p.dim << " is out of range for " << d << " (" << d.nd
                                                              << " dimensions)");
  DYNET_LITE_ARG_CHECK(p.start < p.end, "pick_range: empty range [" << p.start << ", " << p.end << ") for dimension "
                                                                    << p.dim << " of " << d);
  DYNET_LITE_INDEX_CHECK(p.end <= d.d[p.dim], "pick_range: range ["
                                                  << p.start << ", " << p.end << ") is out of range for dimension "
                                                  << p.dim << " of size " << d.d[p.dim] << " (input " << d << ")");
  Dim r = d;
  r.d[p.dim] = p.end - p.start;
  return r;
}
// y = x[.., start:end, ..] along dim;  dx[.., start:end, ..] += dy
void pick_range_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  const Tensor& x = *xs[0];
  const RangeParams& p = n.p<RangeParams>();
  size_t inner = dims_product(x.d, 0, p.dim), len = x.d.d[p.dim];
  size_t outer = dims_product(x.d, p.dim + 1, x.d.nd) * x.d.bd;
  size_t block = (p.end - p.start) * inner;
  const float* xs0 = x.v + p.start * inner;
  for (size_t o = 0; o < outer; ++o) copy_floats(n.value.v + o * block, xs0 + o * len * inner, block);
}
void pick_range_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                         ExecContext&) {
  const RangeParams& p = n.p<RangeParams>();
  size_t inner = dims_product(dx.d, 0, p.dim), len = dx.d.d[p.dim];
  size_t outer = dims_product(dx.d, p.dim + 1, dx.d.nd) * dx.d.bd;
  size_t block = (p.end - p.start) * inner;
  float* g0 = dx.v + p.start * inner;
  for (size_t o = 0; o < outer; ++o) add_floats(g0 + o * len * inner, dy.v + o * block, block);
}

// ---------------------------------------------------------------- pick_batch_elems
Dim pick_batch_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  const IndexSource& s = node.p<IndexSource>();
  check_build_time_indices(s, op_name(node.op), d.bd, -1, d);
  Dim r = d;
  r.bd = s.count;
  return r;
}
// y_k = x_{idx_k};  dx_{idx_k} += dy_k
void pick_batch_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const IndexSource& s = n.p<IndexSource>();
  const unsigned* idx = forward_indices(s, n, ctx, op_name(n.op), x.d.bd, -1, x.d);
  size_t per = x.d.batch_size();
  for (unsigned k = 0; k < s.count; ++k) copy_floats(n.value.v + k * per, x.v + idx[k] * per, per);
}
void pick_batch_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                         ExecContext&) {
  const IndexSource& s = n.p<IndexSource>();
  const unsigned* idx = backward_indices(s, n, op_name(n.op), dx.d.bd, -1, dx.d);
  size_t per = dx.d.batch_size();
  for (unsigned k = 0; k < s.count; ++k) add_floats(dx.v + idx[k] * per, dy.v + k * per, per);
}

// ---------------------------------------------------------------- select_rows
Dim select_rows_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  const IndexSource& s = node.p<IndexSource>();
  check_build_time_indices(s, "select_rows", d.rows(), 0, d, true);
  Dim r = d;
  if (r.nd == 0) r.resize(1);
  r.d[0] = s.count;
  return r;
}
// y[k, c] = x[rows[k], c] for every column c (batch included);  dx[rows[k], c] += dy[k, c]
void select_rows_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const IndexSource& s = n.p<IndexSource>();
  const unsigned* rows = forward_indices(s, n, ctx, "select_rows", x.d.rows(), 0, x.d, true);
  size_t r = x.d.rows(), cols = r ? x.d.size() / r : 0, m = s.count;
  float* y = n.value.v;
  for (size_t c = 0; c < cols; ++c) {
    const float* xc = x.v + c * r;
    float* yc = y + c * m;
    for (size_t k = 0; k < m; ++k) yc[k] = xc[rows[k]];
  }
}
void select_rows_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                          ExecContext&) {
  const IndexSource& s = n.p<IndexSource>();
  const unsigned* rows = backward_indices(s, n, "select_rows", dx.d.rows(), 0, dx.d, true);
  size_t r = dx.d.rows(), cols = r ? dx.d.size() / r : 0, m = s.count;
  for (size_t c = 0; c < cols; ++c) {
    float* gc = dx.v + c * r;
    const float* yc = dy.v + c * m;
    for (size_t k = 0; k < m; ++k) gc[rows[k]] += yc[k];
  }
}

// ---------------------------------------------------------------- select_cols
Dim select_cols_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  Dim d = one_arg(xs, n, node);
  const IndexSource& s = node.p<IndexSource>();
  DYNET_LITE_DIM_CHECK(d.nd <= 2, "select_cols: needs a vector or a matrix, got " << d);
  check_build_time_indices(s, "select_cols", d.cols(), 1, d, true);
  Dim r = d;
  r.resize(2);
  r.d[1] = s.count;
  return r;
}
// y_b[:, k] = x_b[:, cols[k]];  dx_b[:, cols[k]] += dy_b[:, k]
void select_cols_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const IndexSource& s = n.p<IndexSource>();
  const unsigned* cols = forward_indices(s, n, ctx, "select_cols", x.d.cols(), 1, x.d, true);
  size_t r = x.d.rows(), per_x = x.d.batch_size(), per_y = n.value.d.batch_size();
  for (unsigned b = 0; b < x.d.bd; ++b) {
    const float* xb = x.v + b * per_x;
    float* yb = n.value.v + b * per_y;
    for (unsigned k = 0; k < s.count; ++k) copy_floats(yb + k * r, xb + cols[k] * r, r);
  }
}
void select_cols_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                          ExecContext&) {
  const IndexSource& s = n.p<IndexSource>();
  const unsigned* cols = backward_indices(s, n, "select_cols", dx.d.cols(), 1, dx.d, true);
  size_t r = dx.d.rows(), per_x = dx.d.batch_size(), per_y = dy.d.batch_size();
  for (unsigned b = 0; b < dx.d.bd; ++b) {
    float* gb = dx.v + b * per_x;
    const float* yb = dy.v + b * per_y;
    for (unsigned k = 0; k < s.count; ++k) add_floats(gb + cols[k] * r, yb + k * r, r);
  }
}

// ---------------------------------------------------------------- concatenate

// All arguments agree in every dimension but `dim` (missing trailing ones read
// as 1); batch sizes are equal or 1 (a batch of 1 is repeated).
Dim concat_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  unsigned dim = node.p<ConcatParams>().dim;
  const Dim& first = xs[0]->d;
  DYNET_LITE_DIM_CHECK(dim < DYNET_MAX_TENSOR_DIM, "concatenate: dimension "
                                                       << dim << " is out of range (a tensor has at most "
                                                       << DYNET_MAX_TENSOR_DIM << " dimensions)");
  Dim r = first;
  r.resize(first.nd > dim + 1 ? first.nd : dim + 1);
  unsigned total = 0;
  for (unsigned k = 0; k < n; ++k) {
    const Dim& c = xs[k]->d;
    unsigned check_nd = c.nd > r.nd ? c.nd : r.nd;
    for (unsigned i = 0; i < check_nd; ++i)
      DYNET_LITE_DIM_CHECK(i == dim || c[i] == r[i], "concatenate: argument "
                                                         << k << " has shape " << c << " but argument 0 has " << first
                                                         << "; they must agree in every dimension but " << dim);
    if (c.bd != 1) {
      DYNET_LITE_DIM_CHECK(r.bd == 1 || r.bd == c.bd, "concatenate: argument "
                                                          << k << " " << c << " has batch size " << c.bd
                                                          << " but an earlier argument has " << r.bd
                                                          << " (batch sizes must be equal or 1)");
      r.bd = c.bd;
    }
    total += c[dim];
  }
  r.d[dim] = total;
  return r;
}

// y_b = [x_1b, x_2b, ...] along dim
void concat_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext&) {
  const Dim& yd = node.value.d;
  unsigned dim = node.p<ConcatParams>().dim;
  size_t inner = dims_product(yd, 0, dim), outer = dims_product(yd, dim + 1, yd.nd), ylen = yd.d[dim];
  size_t per_y = yd.batch_size();
  for (unsigned b = 0; b < yd.bd; ++b) {
    float* yb = node.value.v + b * per_y;
    size_t offset = 0;
    for (unsigned k = 0; k < n; ++k) {
      const Tensor& x = *xs[k];
      size_t len = x.d[dim], block = len * inner;
      const float* xb = x.batch_ptr(b);
      if (outer == 1)
        copy_floats(yb + offset * inner, xb, block);
      else
        for (size_t o = 0; o < outer; ++o) copy_floats(yb + (o * ylen + offset) * inner, xb + o * block, block);
      offset += len;
    }
  }
}
// dx_ib += dy_b[its slice]  (summed over the batch when x_i has a batch of 1)
void concat_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext& ctx) {
  const Dim& yd = dy.d;
  unsigned dim = node.p<ConcatParams>().dim;
  size_t inner = dims_product(yd, 0, dim), outer = dims_product(yd, dim + 1, yd.nd), ylen = yd.d[dim];
  size_t offset = 0;
  for (unsigned k = 0; k < i; ++k) offset += xs[k]->d[dim];
  size_t block = dx.d[dim] * inner, per_y = yd.batch_size();
  // Assigned (ExecContext::assign_by_batch): copied.
  const bool copy = ctx.assign_by_batch(dx.v, dx.d.size(), dx.d.bd == yd.bd);
  for (unsigned b = 0; b < yd.bd; ++b) {
    float* gb = dx.batch_ptr(b);
    const float* yb = dy.v + b * per_y;
    for (size_t o = 0; o < outer; ++o) {
      if (copy)
        copy_floats(gb + o * block, yb + (o * ylen + offset) * inner, block);
      else
        add_floats(gb + o * block, yb + (o * ylen + offset) * inner, block);
    }
  }
}

// ---------------------------------------------------------------- concatenate_to_batch
Dim concat_batch_shape(const Tensor* const* xs, unsigned n, const Node&) {
  Dim r = xs[0]->d;
  for (unsigned k = 1; k < n; ++k) {
    const Dim& c = xs[k]->d;
    DYNET_LITE_DIM_CHECK(same_shape_ignoring_batch(c, xs[0]->d),
                         "concatenate_to_batch: argument " << k << " has shape " << c << " but argument 0 has "
                                                           << xs[0]->d << "; they must agree in all but the batch");
    r.bd += c.bd;
  }
  return r;
}
// y = [x_1 batch elements, x_2 batch elements, ...];  dx_i += dy[its batch elements]
void concat_batch_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext&) {
  float* y = node.value.v;
  for (unsigned k = 0; k < n; ++k) {
    size_t sz = xs[k]->d.size();
    copy_floats(y, xs[k]->v, sz);
    y += sz;
  }
}
void concat_batch_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                           ExecContext&) {
  size_t offset = 0;
  for (unsigned k = 0; k < i; ++k) offset += xs[k]->d.size();
  add_floats(dx.v, dy.v + offset, dx.d.size());
}

// ---------------------------------------------------------------- gradient controls

Dim same_shape(const Tensor* const* xs, unsigned n, const Node& node) { return one_arg(xs, n, node); }
// y = x (a copy: these ops batch element-wise like any other)
void copy_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) {
  copy_floats(n.value.v, xs[0]->v, n.value.d.size());
}
// flip_gradient: y = x;  dx -= dy
void flip_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx, ExecContext&) {
  cpu::arr(dx) -= cpu::arr(dy);
}
// scale_gradient: y = x;  dx += lambda dy
void scale_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                    ExecContext&) {
  cpu::arr(dx) += n.p<OneFloat>().a * cpu::arr(dy);
}

Expression concat_expr(const Expression* xs, size_t n, unsigned d) {
  ConcatParams p;
  p.dim = d;
  return detail::add(OpKind::Concatenate, xs, static_cast<unsigned>(n), &p, sizeof(p));
}

}  // namespace

void register_shape_ops(OpTable& t) {
  // Element-wise batching (stacking instances along the batch) only for ops that
  // treat every batch element alone with the same parameters; pick and
  // concatenate_to_batch take per-element indices or join batches: they run alone.
  const char* f = "shape";
  const BatchKind never = BatchKind::Never, stacked = BatchKind::Elementwise;
  t.define(OpKind::Reshape, f, "reshape", reshape_shape, reshape_forward, identity_backward, never, Purity::Pure,
           Devices::CpuAndCuda);
  t.define(OpKind::Pick, f, "pick", pick_shape, pick_forward, pick_backward, never, Purity::Impure,
           Devices::CpuAndCuda);
  t.define(OpKind::PickRange, f, "pick_range", pick_range_shape, pick_range_forward, pick_range_backward, stacked,
           Purity::Pure, Devices::CpuAndCuda);
  t.define(OpKind::PickBatchElems, f, "pick_batch_elems", pick_batch_shape, pick_batch_forward, pick_batch_backward,
           never, Purity::Impure, Devices::CpuAndCuda);
  t.define(OpKind::SelectRows, f, "select_rows", select_rows_shape, select_rows_forward, select_rows_backward, stacked,
           Purity::Impure, Devices::CpuAndCuda);
  t.define(OpKind::SelectCols, f, "select_cols", select_cols_shape, select_cols_forward, select_cols_backward, stacked,
           Purity::Impure, Devices::CpuAndCuda);
  t.define(OpKind::Concatenate, f, "concatenate", concat_shape, concat_forward, concat_backward, stacked, Purity::Pure,
           Devices::CpuAndCuda);
  t.define(OpKind::ConcatenateToBatch, f, "concatenate_to_batch", concat_batch_shape, concat_batch_forward,
           concat_batch_backward, never, Purity::Pure, Devices::CpuAndCuda);
  t.define(OpKind::NoBackprop, f, "nobackprop", same_shape, copy_forward, nullptr, stacked, Purity::Pure,
           Devices::CpuAndCuda);
  t.define(OpKind::FlipGradient, f, "flip_gradient", same_shape, copy_forward, flip_backward, stacked, Purity::Pure,
           Devices::CpuAndCuda);
  t.define(OpKind::ScaleGradient, f, "scale_gradient", same_shape, copy_forward, scale_backward, stacked, Purity::Pure,
           Devices::CpuAndCuda);
  t.row(OpKind::Reshape).sets_own_value = true;  // aliases its argument's memory
  t.row(OpKind::NoBackprop).blocks_gradient = true;
  t.row(OpKind::Concatenate).assigns_gradient = true;
}

// ---------------------------------------------------------------- expressions
Expression reshape(const Expression& x, const Dim& d) {
  ReshapeParams p;
  p.to = d;
  return detail::add(OpKind::Reshape, {x}, p);
}

Expression pick(const Expression& x, unsigned v, unsigned d) {
  IndexSource s;
  s.one = v;
  s.dim = d;
  return detail::add(OpKind::Pick, {x}, s);
}
Expression pick(const Expression& x, const std::vector<unsigned>& v, unsigned d) {
  IndexSource s = source_of(graph_of(x, "pick"), v);
  s.dim = d;
  return detail::add(OpKind::Pick, {x}, s);
}
Expression pick(const Expression& x, const unsigned* v, unsigned d) {
  DYNET_LITE_ARG_CHECK(v != nullptr, "pick: null pointer to the index");
  IndexSource s;
  s.pone = v;
  s.dim = d;
  return detail::add(OpKind::Pick, {x}, s);
}
Expression pick(const Expression& x, const std::vector<unsigned>* v, unsigned d) {
  IndexSource s = source_of(v, "pick");
  s.dim = d;
  return detail::add(OpKind::Pick, {x}, s);
}

Expression pick_range(const Expression& x, unsigned s, unsigned e, unsigned d) {
  RangeParams p;
  p.start = s;
  p.end = e;
  p.dim = d;
  return detail::add(OpKind::PickRange, {x}, p);
}
Expression pickrange(const Expression& x, unsigned s, unsigned e) { return pick_range(x, s, e, 0); }

Expression pick_batch_elem(const Expression& x, unsigned v) {
  IndexSource s;
  s.one = v;
  return detail::add(OpKind::PickBatchElems, {x}, s);
}
Expression pick_batch_elems(const Expression& x, const std::vector<unsigned>& v) {
  return detail::add(OpKind::PickBatchElems, {x}, source_of(graph_of(x, "pick_batch_elems"), v));
}
Expression pick_batch_elems(const Expression& x, const std::vector<unsigned>* pv) {
  return detail::add(OpKind::PickBatchElems, {x}, source_of(pv, "pick_batch_elems"));
}

Expression select_rows(const Expression& x, const std::vector<unsigned>& rows) {
  return detail::add(OpKind::SelectRows, {x}, source_of(graph_of(x, "select_rows"), rows));
}
Expression select_rows(const Expression& x, const std::vector<unsigned>* prows) {
  return detail::add(OpKind::SelectRows, {x}, source_of(prows, "select_rows"));
}
Expression select_cols(const Expression& x, const std::vector<unsigned>& cols) {
  return detail::add(OpKind::SelectCols, {x}, source_of(graph_of(x, "select_cols"), cols));
}
Expression select_cols(const Expression& x, const std::vector<unsigned>* pcols) {
  return detail::add(OpKind::SelectCols, {x}, source_of(pcols, "select_cols"));
}

Expression concatenate(const std::initializer_list<Expression>& xs, unsigned d) {
  return concat_expr(xs.begin(), xs.size(), d);
}
Expression concatenate(const std::vector<Expression>& xs, unsigned d) { return concat_expr(xs.data(), xs.size(), d); }
Expression concatenate_cols(const std::initializer_list<Expression>& xs) {
  return concat_expr(xs.begin(), xs.size(), 1);
}
Expression concatenate_cols(const std::vector<Expression>& xs) { return concat_expr(xs.data(), xs.size(), 1); }
Expression concatenate_to_batch(const std::initializer_list<Expression>& xs) {
  return detail::add(OpKind::ConcatenateToBatch, xs);
}
Expression concatenate_to_batch(const std::vector<Expression>& xs) {
  return detail::add(OpKind::ConcatenateToBatch, xs);
}

Expression nobackprop(const Expression& x) { return detail::add(OpKind::NoBackprop, {x}); }
Expression flip_gradient(const Expression& x) { return detail::add(OpKind::FlipGradient, {x}); }
Expression scale_gradient(const Expression& x, float lambd) {
  OneFloat p;
  p.a = lambd;
  return detail::add(OpKind::ScaleGradient, {x}, p);
}

}  // namespace dynet_lite
