// Fused N-ary Tree-LSTM operations (NaryTreeLSTMBuilder's step in three nodes).
//
// With hidden size h and arity N, the pre-activations of one tree node hold
// 3 + N blocks of h rows in the builder's parameter order: i (input), o (output),
// u (candidate), then one forget gate f_k per child position k:
//   gates = [sigmoid(pre_i); sigmoid(pre_o); tanh(pre_u); sigmoid(pre_f_1..N)]
//   c     = i ⊙ u + sum_k f_k ⊙ c_k     (k over the children actually given, 0..N)
//   h     = o ⊙ tanh(c)
// Built from basic ops the step takes about 17 nodes (pick_range / logistic /
// tanh / cmult / sum per gate and child); graph building, scheduling and the
// per-node bookkeeping of the executor cost more than the arithmetic, so the
// builder uses these three instead, and on the CPU treelstm_gates_affine in
// place of affine_transform + treelstm_gates: its products write the gates'
// memory and the activations add the bias on the way, so the pre-activations
// (the largest tensor of a node) are never a node of their own, neither kept in
// the graph's memory nor read back.  Every argument may carry a batch of 1 or
// the full batch (a batch of 1 is broadcast: the initial state shared by all
// leaves), so the ops batch by stacking like the other element-wise ops.
#include <vector>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/affine.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using op_params::TreeParams;

using ConstArr = Eigen::Map<const Eigen::ArrayXf>;
using Arr = Eigen::Map<Eigen::ArrayXf>;

// ---------------------------------------------------------------- shapes

bool is_column(const Dim& d) { return d.nd <= 2 && d.cols() == 1; }

// The pre-activations `pre` of treelstm_gates(_affine): a column of (3 + N) h.
void check_pre(const char* op, const char* what, const Dim& pre, unsigned N) {
  DYNET_LITE_DIM_CHECK(is_column(pre), op << ": " << what << " " << pre << " must be a column vector");
  DYNET_LITE_DIM_CHECK(pre.rows() > 0 && pre.rows() % (3 + N) == 0,
                       op << ": " << what << " " << pre << " must have (3 + N) * hidden rows, a positive multiple of "
                          << 3 + N << " for N = " << N << " (blocks i, o, u, f_1..f_N)");
}

// treelstm_gates(pre): pre {(3 + N) h} -> gates of the same shape.
Dim gates_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  const char* op = op_name(node.op);
  DYNET_LITE_DIM_CHECK(n == 1, op << ": takes one argument, got " << n);
  const Dim& pre = xs[0]->d;
  check_pre(op, "pre", pre, node.p<TreeParams>().n);
  return Dim({pre.rows()}, pre.bd);
}

// treelstm_gates_affine(b, W_1, x_1, ...): the gates of pre = affine_transform(b, W_1, x_1, ...).
Dim gates_affine_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  const Dim pre = affine::shape(xs, n, node);
  check_pre(op_name(node.op), "b + W_1 x_1 + ...", pre, node.p<TreeParams>().n);
  return Dim({pre.rows()}, pre.bd);
}

// treelstm_c(gates, c_1..c_k): gates {(3 + N) h}, each c_k {h}, k <= N.
Dim c_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  const char* op = op_name(node.op);
  const unsigned N = node.p<TreeParams>().n;
  DYNET_LITE_DIM_CHECK(n >= 1 && n - 1 <= N,
                       op << ": takes gates and at most N = " << N << " children's cells, got " << n << " arguments");
  const Dim& g = xs[0]->d;
  DYNET_LITE_DIM_CHECK(is_column(g) && g.rows() > 0 && g.rows() % (3 + N) == 0,
                       op << ": gates " << g << " must be a column of (3 + N) * hidden rows, a positive multiple of "
                          << 3 + N << " for N = " << N);
  const unsigned hid = g.rows() / (3 + N);
  unsigned B = g.bd;
  for (unsigned k = 1; k < n; ++k) {
    const Dim& c = xs[k]->d;
    DYNET_LITE_DIM_CHECK(is_column(c) && c.rows() == hid, op << ": c_" << k << " " << c << " must be {" << hid
                                                             << "} (hidden size of gates " << g << ", N = " << N
                                                             << ")");
    if (c.bd > B) B = c.bd;
  }
  DYNET_LITE_DIM_CHECK(g.bd == 1 || g.bd == B, op << ": gates " << g << " has batch size " << g.bd
                                                  << "; every argument must have a batch of 1 or " << B);
  for (unsigned k = 1; k < n; ++k) {
    const Dim& c = xs[k]->d;
    DYNET_LITE_DIM_CHECK(c.bd == 1 || c.bd == B, op << ": c_" << k << " " << c << " has batch size " << c.bd
                                                    << "; every argument must have a batch of 1 or " << B);
  }
  return Dim({hid}, B);
}

// treelstm_h(c, gates): c {h}, gates {(3 + N) h} for some N >= 0.
Dim h_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  const char* op = op_name(node.op);
  DYNET_LITE_DIM_CHECK(n == 2, op << ": takes two arguments (c, gates), got " << n);
  const Dim &c = xs[0]->d, &g = xs[1]->d;
  DYNET_LITE_DIM_CHECK(is_column(c), op << ": c " << c << " must be a column vector");
  const unsigned hid = c.rows();
  DYNET_LITE_DIM_CHECK(
      is_column(g) && hid > 0 && g.rows() % hid == 0 && g.rows() >= 3 * hid,
      op << ": gates " << g << " must be a column of (3 + N) * " << hid << " rows (hidden size of c " << c << ")");
  DYNET_LITE_DIM_CHECK(c.bd == g.bd || c.bd == 1 || g.bd == 1, op << ": c " << c << " and gates " << g
                                                                  << " have batch sizes " << c.bd << " and " << g.bd
                                                                  << " (they must be equal or one of them 1)");
  return Dim({hid}, c.bd > g.bd ? c.bd : g.bd);
}

// ---------------------------------------------------------------- gates

// The gates' activations over the whole batch at once (cpu::gate_activations);
// they match the logistic and tanh ops, and so the unfused builder, to rounding.
void gates_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor& pre = *xs[0];
  Tensor& y = node.value;
  const size_t rows = y.d.rows(), hid = rows / (3 + node.p<TreeParams>().n);
  cpu::gate_activations(y.v, rows, y.d.bd, 2 * hid, 3 * hid, nullptr, pre.v);
}

// dpre (+)= dy ⊙ act'(pre) over all columns, from the outputs y: y (1 - y) for the
// sigmoid blocks, 1 - y^2 for u.
void gates_dpre(const Tensor& y, const float* dy, float* dpre, unsigned N, bool assign) {
  const size_t rows = y.d.rows(), hid = rows / (3 + N);
  const size_t nf = rows - 3 * hid;
  for (unsigned b = 0; b < y.d.bd; ++b) {
    const size_t o = b * rows;
    ConstArr yio(y.v + o, 2 * hid), dio(dy + o, 2 * hid);
    cpu::put(assign, dpre + o, 2 * hid, dio * yio * (1.f - yio));
    ConstArr yu(y.v + o + 2 * hid, hid), du(dy + o + 2 * hid, hid);
    cpu::put(assign, dpre + o + 2 * hid, hid, du * (1.f - yu.square()));
    ConstArr yf(y.v + o + 3 * hid, nf), df(dy + o + 3 * hid, nf);
    cpu::put(assign, dpre + o + 3 * hid, nf, df * yf * (1.f - yf));
  }
}

// dpre += dy ⊙ act'(pre) (= when asked to assign dpre: ExecContext::assign_dx).
void gates_backward(const Tensor* const*, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                    ExecContext& ctx) {
  gates_dpre(node.value, dy.v, dx.v, node.p<TreeParams>().n, ctx.assign_dx());
}

// The products go straight into y, the first one assigned; the activations'
// first pass adds a bias that is one column for the whole batch (the builder's),
// any other bias is broadcast into y before the products as affine_transform does.
void gates_affine_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext&) {
  const Tensor& b = *xs[0];
  Tensor& y = node.value;
  const size_t rows = y.d.rows(), hid = rows / (3 + node.p<TreeParams>().n);
  const float* bias = nullptr;
  if (n > 1 && b.d.size() == rows) {
    affine::products(xs, n, y, false);
    bias = b.v;
  } else {
    affine::set_bias(b, y);
    affine::products(xs, n, y, true);
  }
  cpu::gate_activations(y.v, rows, y.d.bd, 2 * hid, 3 * hid, bias);
}

// dpre, the same for every argument, is computed at the node's first call and
// kept (ExecContext::kept_floats: a weight's gradient term left for later reads
// it at the flush); each argument's gradient is then affine_transform's from dpre.
void gates_affine_backward(const Tensor* const* xs, unsigned n, const Node& node, const Tensor& dy, unsigned i,
                           Tensor& dx, ExecContext& ctx) {
  float*& dpre = ctx.node_memo();
  if (!dpre) {
    dpre = ctx.kept_floats(node.value.d.size());
    gates_dpre(node.value, dy.v, dpre, node.p<TreeParams>().n, true);
  }
  Tensor d = dy;
  d.v = dpre;
  affine::backward(xs, n, node, d, i, dx, ctx);
}

// ---------------------------------------------------------------- cell

// c = i ⊙ u + f_1 ⊙ c_1 + ... + f_k ⊙ c_k, summed in that order (as sum() of the terms).
void c_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext&) {
  const Tensor& g = *xs[0];
  Tensor& y = node.value;
  const size_t hid = y.d.rows();
  for (unsigned b = 0; b < y.d.bd; ++b) {
    const float* gb = g.batch_ptr(b);
    Arr yb(y.v + b * hid, hid);
    yb = ConstArr(gb, hid) * ConstArr(gb + 2 * hid, hid);
    for (unsigned k = 1; k < n; ++k) yb += ConstArr(gb + (2 + k) * hid, hid) * ConstArr(xs[k]->batch_ptr(b), hid);
  }
}

// d[i; o; u; f_k] += [dc ⊙ u; 0; dc ⊙ i; dc ⊙ c_k];  dc_k += dc ⊙ f_k
// (kAssign: = instead of +=, the o rows and the forget rows of absent children zero).
template <bool kAssign>
void c_backward_columns(const Tensor* const* xs, unsigned n, const Tensor& dy, unsigned i, Tensor& dx, size_t hid,
                        unsigned bd, size_t rows) {
  const Tensor& g = *xs[0];
  for (unsigned b = 0; b < bd; ++b) {
    ConstArr d(dy.v + b * hid, hid);
    const float* gb = g.batch_ptr(b);
    float* db = dx.batch_ptr(b);
    if (i == 0) {
      cpu::put<kAssign>(db, hid, d * ConstArr(gb + 2 * hid, hid));
      if (kAssign) Arr(db + hid, hid).setZero();
      cpu::put<kAssign>(db + 2 * hid, hid, d * ConstArr(gb, hid));
      for (unsigned k = 1; k < n; ++k)
        cpu::put<kAssign>(db + (2 + k) * hid, hid, d * ConstArr(xs[k]->batch_ptr(b), hid));
      if (kAssign && (2 + n) * hid < rows) Arr(db + (2 + n) * hid, rows - (2 + n) * hid).setZero();
    } else {
      cpu::put<kAssign>(db, hid, d * ConstArr(gb + (2 + i) * hid, hid));
    }
  }
}

void c_backward(const Tensor* const* xs, unsigned n, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                ExecContext& ctx) {
  const size_t hid = node.value.d.rows(), rows = xs[0]->d.rows();
  const unsigned bd = node.value.d.bd;
  if (ctx.assign_by_batch(dx.v, dx.d.size(), dx.d.bd == bd))
    c_backward_columns<true>(xs, n, dy, i, dx, hid, bd, rows);
  else
    c_backward_columns<false>(xs, n, dy, i, dx, hid, bd, rows);
}

// ---------------------------------------------------------------- output

// h = o ⊙ tanh(c)
void h_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor &c = *xs[0], &g = *xs[1];
  Tensor& y = node.value;
  const size_t hid = y.d.rows();
  cpu::tanh_columns(y.v, c, hid, y.d.bd);
  for (unsigned b = 0; b < y.d.bd; ++b) Arr(y.v + b * hid, hid) *= ConstArr(g.batch_ptr(b) + hid, hid);
}

// dc += dh ⊙ o ⊙ (1 - tanh(c)^2);  do += dh ⊙ tanh(c)
void h_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                ExecContext& ctx) {
  const Tensor &c = *xs[0], &g = *xs[1];
  const size_t hid = node.value.d.rows();
  const unsigned bd = node.value.d.bd;
  // tanh(c), for both arguments: computed at the node's first call.
  float*& tc = ctx.node_memo();
  if (!tc) {
    tc = ctx.kept_floats(hid * bd);
    cpu::tanh_columns(tc, c, hid, bd);
  }
  // Assigned (ExecContext::assign_by_batch): written, the other gate rows zero.
  const bool assign = ctx.assign_by_batch(dx.v, dx.d.size(), dx.d.bd == bd);
  const size_t rows = g.d.rows();
  for (unsigned b = 0; b < bd; ++b) {
    ConstArr d(dy.v + b * hid, hid);
    ConstArr t(tc + b * hid, hid);
    float* db = dx.batch_ptr(b);
    if (i == 0) {
      cpu::put(assign, db, hid, d * ConstArr(g.batch_ptr(b) + hid, hid) * (1.f - t.square()));
    } else if (assign) {
      Arr(db, hid).setZero();
      Arr(db + hid, hid) = d * t;
      Arr(db + 2 * hid, rows - 2 * hid).setZero();
    } else {
      Arr(db + hid, hid) += d * t;
    }
  }
}

}  // namespace

void register_treelstm_ops(OpTable& t) {
  // All three treat batch elements independently and broadcast a batch of 1, so
  // identical nodes of different tree nodes / trees run as one stacked call.
  OpInfo& g = t.define(OpKind::TreeLSTMGates, "treelstm", "treelstm_gates", gates_shape, gates_forward, gates_backward,
                       BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);
  g.assigns_gradient = true;

  // shared weights are passed once, the rest stacked
  OpInfo& ga = t.define(OpKind::TreeLSTMGatesAffine, "treelstm", "treelstm_gates_affine", gates_affine_shape,
                        gates_affine_forward, gates_affine_backward, BatchKind::Elementwise, Purity::Pure);
  ga.assigns_gradient = true;

  OpInfo& c = t.define(OpKind::TreeLSTMC, "treelstm", "treelstm_c", c_shape, c_forward, c_backward,
                       BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);
  c.assigns_gradient = true;

  OpInfo& h = t.define(OpKind::TreeLSTMH, "treelstm", "treelstm_h", h_shape, h_forward, h_backward,
                       BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);
  h.assigns_gradient = true;
}

Expression treelstm_gates(const Expression& pre, unsigned N) {
  TreeParams p;
  p.n = N;
  return detail::add(OpKind::TreeLSTMGates, {pre}, p);
}

Expression treelstm_gates_affine(const std::vector<Expression>& affine_args, unsigned N) {
  TreeParams p;
  p.n = N;
  return detail::add(OpKind::TreeLSTMGatesAffine, affine_args.data(), static_cast<unsigned>(affine_args.size()), &p,
                     sizeof(p));
}

Expression treelstm_c(const Expression& gates, const std::vector<Expression>& c_children, unsigned N) {
  TreeParams p;
  p.n = N;
  // The argument list [gates, c_1..c_k] on the stack for the usual small k (no
  // heap allocation per tree node).
  constexpr size_t kSmall = 16;
  const size_t n = 1 + c_children.size();
  Expression small[kSmall];
  std::vector<Expression> big;
  Expression* args = small;
  if (n > kSmall) {
    big.resize(n);
    args = big.data();
  }
  args[0] = gates;
  for (size_t k = 0; k < c_children.size(); ++k) args[1 + k] = c_children[k];
  return detail::add(OpKind::TreeLSTMC, args, static_cast<unsigned>(n), &p, sizeof(p));
}

Expression treelstm_h(const Expression& c, const Expression& gates) {
  return detail::add(OpKind::TreeLSTMH, {c, gates});
}

}  // namespace dynet_lite
