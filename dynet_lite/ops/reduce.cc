// Reductions over elements, dimensions and the batch.
#include <cstring>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/exec/exec_context.h"
#include "dynet_lite/expr.h"

namespace dynet_lite {

namespace {

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

}  // namespace

void register_reduce_ops(OpTable& t) {
  OpInfo& se = t.row(OpKind::SumElems);
  se.name = "sum_elems";
  se.shape = sum_elems_shape;
  se.forward[0] = sum_elems_forward;
  se.backward[0] = sum_elems_backward;
  se.batch = BatchKind::Elementwise;

  OpInfo& sb = t.row(OpKind::SumBatches);
  sb.name = "sum_batches";
  sb.shape = sum_batches_shape;
  sb.forward[0] = sum_batches_forward;
  sb.backward[0] = sum_batches_backward;
}

Expression sum_elems(const Expression& x) { return detail::add(OpKind::SumElems, {x}); }
Expression sum_batches(const Expression& x) { return detail::add(OpKind::SumBatches, {x}); }

}  // namespace dynet_lite
