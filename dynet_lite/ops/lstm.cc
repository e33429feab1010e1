// Fused LSTM operations (DyNet's vanilla_lstm_gates / _c / _h).
//
// The gates vector of one instance holds four blocks of h rows each, in DyNet's
// order: i (input), f (forget), o (output), g (candidate):
//   pre   = Wx (x ⊙ mask_x) + Wh (h_tm1 ⊙ mask_h) + b          (masks: dropout only)
//   gates = [sigmoid(pre_i); sigmoid(pre_f + 1); sigmoid(pre_o); tanh(pre_g)]   (DyNet's forget bias)
//   c_t   = f ⊙ c_tm1 + i ⊙ g
//   h_t   = o ⊙ tanh(c_t)
// Batched x / h (B columns side by side) with unbatched weights make each product
// one GEMM over the whole batch; the element-wise parts run in one pass each.
// Weight noise (weightnoise_std > 0) adds fresh N(0, std) noise to Wx, Wh and b at
// every forward; the noisy copies are kept in node.aux so that backward
// differentiates the function that was actually computed.
#include <cstring>
#include <random>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/backends/cpu/gemm.h"
#include "dynet_lite/backends/cpu/transposed_weights.h"
#include "dynet_lite/backends/cpu/weight_grads.h"
#include "dynet_lite/backends/lstm_gates.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/input_grads.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using op_params::GatesParams;

using namespace lstm_gates;

using ConstArr = Eigen::Map<const Eigen::ArrayXf>;
using Arr = Eigen::Map<Eigen::ArrayXf>;

// ---------------------------------------------------------------- shapes

bool is_column(const Dim& d) { return d.nd <= 2 && d.cols() == 1; }

// A batch of n is compatible with a result batch of N when n is 1 or N.
inline bool batch_fits(unsigned n, unsigned N) { return n == 1 || n == N; }

Dim gates_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  const char* op = op_name(node.op);
  const bool dropout = node.op == OpKind::VanillaLSTMGatesDropout;
  const unsigned want = dropout ? 7 : 5;
  DYNET_LITE_DIM_CHECK(n == want, op << ": takes " << want << " arguments, got " << n);
  const Dim &x = xs[kX]->d, &h = xs[kH]->d, &wx = xs[kWx]->d, &wh = xs[kWh]->d, &b = xs[kB]->d;
  DYNET_LITE_DIM_CHECK(is_column(x), op << ": x_t " << x << " must be a column vector");
  DYNET_LITE_DIM_CHECK(is_column(h), op << ": h_tm1 " << h << " must be a column vector");
  const unsigned hid = h.rows(), in = x.rows();
  DYNET_LITE_DIM_CHECK(wx.nd <= 2 && wx.rows() == 4 * hid && wx.cols() == in,
                       op << ": Wx " << wx << " must be {" << 4 * hid << "," << in << "} (4 * hidden x input) for x_t "
                          << x << " and h_tm1 " << h);
  DYNET_LITE_DIM_CHECK(
      wh.nd <= 2 && wh.rows() == 4 * hid && wh.cols() == hid,
      op << ": Wh " << wh << " must be {" << 4 * hid << "," << hid << "} (4 * hidden x hidden) for h_tm1 " << h);
  DYNET_LITE_DIM_CHECK(is_column(b) && b.rows() == 4 * hid,
                       op << ": b " << b << " must be {" << 4 * hid << "} (4 * hidden) for h_tm1 " << h);
  DYNET_LITE_DIM_CHECK(wx.bd == 1 && wh.bd == 1 && b.bd == 1,
                       op << ": the weights must not be batched, got Wx " << wx << ", Wh " << wh << ", b " << b);
  unsigned N = x.bd > h.bd ? x.bd : h.bd;
  if (dropout) {
    const Dim &mx = xs[kMaskX]->d, &mh = xs[kMaskH]->d;
    DYNET_LITE_DIM_CHECK(is_column(mx) && mx.rows() == in,
                         op << ": dropout_mask_x " << mx << " must be {" << in << "} like x_t " << x);
    DYNET_LITE_DIM_CHECK(is_column(mh) && mh.rows() == hid,
                         op << ": dropout_mask_h " << mh << " must be {" << hid << "} like h_tm1 " << h);
    if (mx.bd > N) N = mx.bd;
    if (mh.bd > N) N = mh.bd;
    DYNET_LITE_DIM_CHECK(batch_fits(x.bd, N) && batch_fits(h.bd, N) && batch_fits(mx.bd, N) && batch_fits(mh.bd, N),
                         op << ": x_t " << x << ", h_tm1 " << h << ", dropout_mask_x " << mx << " and dropout_mask_h "
                            << mh << " have incompatible batch sizes (each must be 1 or " << N << ")");
  }
  DYNET_LITE_DIM_CHECK(batch_fits(x.bd, N) && batch_fits(h.bd, N), op << ": x_t " << x << " and h_tm1 " << h
                                                                      << " have batch sizes " << x.bd << " and " << h.bd
                                                                      << " (they must be equal or one of them 1)");
  return Dim({4 * hid}, N);
}

// vanilla_lstm_c(c_tm1, gates) and vanilla_lstm_h(c_t, gates): c {h}, gates {4h}.
Dim cell_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  const char* op = op_name(node.op);
  const char* cname = node.op == OpKind::VanillaLSTMC ? "c_tm1" : "c_t";
  DYNET_LITE_DIM_CHECK(n == 2, op << ": takes two arguments, got " << n);
  const Dim &c = xs[0]->d, &g = xs[1]->d;
  DYNET_LITE_DIM_CHECK(is_column(c), op << ": " << cname << " " << c << " must be a column vector");
  DYNET_LITE_DIM_CHECK(is_column(g) && g.rows() == 4 * c.rows(), op << ": gates_t " << g << " must be a column of "
                                                                    << 4 * c.rows() << " (4 x " << cname << " " << c
                                                                    << ")");
  DYNET_LITE_DIM_CHECK(c.bd == g.bd || c.bd == 1 || g.bd == 1, op << ": " << cname << " " << c << " and gates_t " << g
                                                                  << " have batch sizes " << c.bd << " and " << g.bd
                                                                  << " (they must be equal or one of them 1)");
  return Dim({c.rows()}, c.bd > g.bd ? c.bd : g.bd);
}

// ---------------------------------------------------------------- gates

// The operand of a product as a contiguous rows x N matrix: v ⊙ mask with both
// broadcast over the batch.  Points at v itself when no copy is needed.
const float* effective_operand(const Tensor& v, const Tensor* mask, unsigned N, ExecContext& ctx,
                               bool keep = false) {
  if (!mask && v.d.bd == N) return v.v;
  const size_t r = v.d.rows();
  float* out = keep ? ctx.kept_floats(r * N) : ctx.scratch_floats(r * N);
  for (unsigned c = 0; c < N; ++c) {
    Arr dst(out + c * r, r);
    if (mask)
      dst = ConstArr(v.batch_ptr(c), r) * ConstArr(mask->batch_ptr(c), r);
    else
      dst = ConstArr(v.batch_ptr(c), r);
  }
  return out;
}

// An h_tm1 of zeros passed once for the whole batch (the builders' shared zero
// state at the first step of a sequence): W_h h' adds nothing to the gates and
// nothing to dW_h, so both products are skipped, as DyNet's unfused builder skips
// W_h at the first step.  One early-exit scan of a column.
bool zero_column(const Tensor& h) {
  if (h.d.bd != 1) return false;
  const size_t r = h.d.rows();
  for (size_t k = 0; k < r; ++k)
    if (h.v[k] != 0.f) return false;
  return true;
}

// One instance without dropout: W_x x runs column-exact (gemm.h
// detail::columns_product), so that a compiled program may compute it for many
// steps at once (core/op_info.h ColumnProduct).  The column-exact
// matrix-vector products run about as fast as Eigen's or faster (AVX-512, W x
// and W^T d in us: 200 x 128 0.62 and 0.89 against 0.81 and 0.93; 640 x 256
// 4.9 and 5.1 against 4.9 and 5.0; 1024 x 128 3.8 and 4.1 against 4.6 and 4.1).
bool by_columns(unsigned n, unsigned N, const Tensor& x) {
  return n == 5 && N == 1 && x.d.bd == 1;
}
bool gates_by_columns(const Tensor* const* xs, unsigned n, const Node& node) {
  return by_columns(n, node.value.d.bd, *xs[kX]) && node.p<GatesParams>().weightnoise_std == 0.f;
}

// gates = act(Wx x' + Wh h' + b)   (x' = x ⊙ mask_x, h' = h ⊙ mask_h with dropout)
void gates_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext& ctx) {
  const Tensor &x = *xs[kX], &h = *xs[kH];
  Tensor& y = node.value;
  const size_t rows = y.d.rows(), hid = rows / 4, in = x.d.rows();
  const unsigned N = y.d.bd;
  const bool dropout = n == 7;
  node.aux = nullptr;
  const float std = node.p<GatesParams>().weightnoise_std;
  if (std > 0.f) {
    const size_t nwx = xs[kWx]->d.size(), nwh = xs[kWh]->d.size(), nb = xs[kB]->d.size();
    float* noisy = ctx.persistent_floats(nwx + nwh + nb);
    std::normal_distribution<float> gauss(0.f, std);
    std::mt19937& rng = ctx.rng();
    for (size_t k = 0; k < nwx; ++k) noisy[k] = xs[kWx]->v[k] + gauss(rng);
    for (size_t k = 0; k < nwh; ++k) noisy[nwx + k] = xs[kWh]->v[k] + gauss(rng);
    for (size_t k = 0; k < nb; ++k) noisy[nwx + nwh + k] = xs[kB]->v[k] + gauss(rng);
    node.aux = noisy;
  }
  const GateWeights w = gate_weights(xs, node);
  // The bias is added by the activations' first pass, not copied in beforehand.
  if (by_columns(n, N, x)) {
    if (const float* pre = ctx.precomputed_product())
      std::memcpy(y.v, pre, rows * sizeof(float));
    else
      cpu::detail::columns_product(w.wx, rows, in, x.v, 1, y.v);
  } else {
    cpu::gemm(w.wx, effective_operand(x, dropout ? xs[kMaskX] : nullptr, N, ctx), y.v, rows, in, N, false);
  }
  if (!zero_column(h))
    cpu::gemm(w.wh, effective_operand(h, dropout ? xs[kMaskH] : nullptr, N, ctx), y.v, rows, hid, N, true);
  for (unsigned c = 0; c < N; ++c) Arr(y.v + c * rows + hid, hid) += kForgetGateBias;
  cpu::gate_activations(y.v, rows, N, 3 * hid, rows, w.b);
}

// dpre = dy ⊙ act'(pre), from the outputs: y (1 - y) for i, f, o; 1 - y^2 for g.
float* gates_dpre(const Tensor& y, const Tensor& dy, ExecContext& ctx) {
  const size_t rows = y.d.rows(), hid = rows / 4;
  float* dpre = ctx.kept_floats(y.d.size());
  for (unsigned c = 0; c < y.d.bd; ++c) {
    const size_t o = c * rows;
    ConstArr yi(y.v + o, 3 * hid), dyi(dy.v + o, 3 * hid);
    Arr(dpre + o, 3 * hid) = dyi * yi * (1.f - yi);
    ConstArr yg(y.v + o + 3 * hid, hid), dyg(dy.v + o + 3 * hid, hid);
    Arr(dpre + o + 3 * hid, hid) = dyg * (1.f - yg.square());
  }
  return dpre;
}

// With pre = W v' + ...,  v' = v ⊙ mask:
//   dv += mask ⊙ (W^T dpre),  dmask += v ⊙ (W^T dpre)   (summed over a broadcast batch)
// `factor` is the mask (for dv), v (for dmask), or null (no dropout, dv only).
void operand_backward(const float* w, const float* dpre, size_t rows, size_t r, unsigned N, const Tensor* factor,
                      Tensor& dx, ExecContext& ctx) {
  if (!factor && dx.d.bd == N) {  // the usual case: straight into dx
    gemm_tn(ctx, w, dpre, dx.v, rows, r, N, !ctx.assign_dx());
    return;
  }
  ctx.zero_if_assigned(dx.v, dx.d.size());
  float* t = ctx.scratch_floats(r * N);
  std::memset(t, 0, r * N * sizeof(float));
  gemm_tn(ctx, w, dpre, t, rows, r, N);
  for (unsigned c = 0; c < N; ++c) {
    Arr dst(dx.batch_ptr(c), r);
    if (factor)
      dst += ConstArr(t + c * r, r) * ConstArr(factor->batch_ptr(c), r);
    else
      dst += ConstArr(t + c * r, r);
  }
}

void gates_backward(const Tensor* const* xs, unsigned n, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                    ExecContext& ctx) {
  const Tensor& y = node.value;
  const auto [rows, hid, in, N, mask_x, mask_h, w] = backward_args(xs, n, node);
  // A weight's term left for later needs its operands until the flush.
  WeightGradSink* later = (i == kWx || i == kWh) ? WeightGradSink::for_columns(ctx.weight_grads(), N) : nullptr;
  // dpre is the same for every argument: computed at the node's first call and
  // kept (a weight's term left for later reads it at the flush).
  float*& dpre = ctx.node_memo();
  if (!dpre) dpre = gates_dpre(y, dy, ctx);
  switch (i) {
    case kX:  // dx += mask_x ⊙ Wx^T dpre
      if (by_columns(n, N, *xs[kX])) {  // column-exact, as forward
        if (InputGradSink* sink = ctx.input_grads())
          sink->add(&cpu::detail::columns_product_t, w.wx, rows, in, dpre, dx.v, !ctx.assign_dx());
        else
          cpu::detail::columns_product_t(w.wx, rows, in, &dpre, &dx.v, 1, !ctx.assign_dx());
        break;
      }
      operand_backward(w.wx, dpre, rows, in, N, mask_x, dx, ctx);
      break;
    case kH:  // dh += mask_h ⊙ Wh^T dpre
      operand_backward(w.wh, dpre, rows, hid, N, mask_h, dx, ctx);
      break;
    case kWx:  // dWx += dpre x'^T
    case kWh: {  // dWh += dpre h'^T
      // Asked to assign dW: written, unless its term is left for later (dW untouched).
      const bool wx = i == kWx;
      if (!wx && zero_column(*xs[kH])) {
        ctx.zero_if_assigned(dx.v, dx.d.size());
        break;
      }
      const float* operand = effective_operand(*xs[wx ? kX : kH], wx ? mask_x : mask_h, N, ctx, later != nullptr);
      if (later) {
        later->add(dx.v, dpre, operand, rows, wx ? in : hid, N);
      } else {
        ctx.zero_if_assigned(dx.v, dx.d.size());
        cpu::gemm_nt(dpre, operand, dx.v, rows, wx ? in : hid, N);
      }
      break;
    }
    case kB: {  // db += sum over the batch of dpre
      ctx.zero_if_assigned(dx.v, dx.d.size());
      Arr db(dx.v, rows);
      for (unsigned c = 0; c < N; ++c) db += ConstArr(dpre + c * rows, rows);
      break;
    }
    case kMaskX:  // dmask_x += x ⊙ Wx^T dpre
      operand_backward(w.wx, dpre, rows, in, N, xs[kX], dx, ctx);
      break;
    case kMaskH:  // dmask_h += h ⊙ Wh^T dpre
      if (zero_column(*xs[kH])) {
        ctx.zero_if_assigned(dx.v, dx.d.size());
        break;
      }
      operand_backward(w.wh, dpre, rows, hid, N, xs[kH], dx, ctx);
      break;
    default:
      ctx.zero_if_assigned(dx.v, dx.d.size());
      break;
  }
}

// ---------------------------------------------------------------- cell and output

// c_t = f ⊙ c_tm1 + i ⊙ g
void c_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor &c = *xs[0], &g = *xs[1];
  Tensor& y = node.value;
  const size_t hid = y.d.rows();
  for (unsigned b = 0; b < y.d.bd; ++b) {
    const float* gb = g.batch_ptr(b);
    Arr(y.v + b * hid, hid) =
        ConstArr(gb + hid, hid) * ConstArr(c.batch_ptr(b), hid) + ConstArr(gb, hid) * ConstArr(gb + 3 * hid, hid);
  }
}

// dc_tm1 += dc ⊙ f;  d[i; f; o; g] += [dc ⊙ g; dc ⊙ c_tm1; 0; dc ⊙ i]
// (kAssign: = instead of +=, the o rows set to zero).
template <bool kAssign>
void c_backward_columns(const Tensor& c, const Tensor& g, const Tensor& dy, unsigned i, Tensor& dx, size_t hid,
                        unsigned bd) {
  for (unsigned b = 0; b < bd; ++b) {
    ConstArr d(dy.v + b * hid, hid);
    const float* gb = g.batch_ptr(b);
    float* db = dx.batch_ptr(b);
    if (i == 0) {
      cpu::put<kAssign>(db, hid, d * ConstArr(gb + hid, hid));
    } else {
      cpu::put<kAssign>(db, hid, d * ConstArr(gb + 3 * hid, hid));
      cpu::put<kAssign>(db + hid, hid, d * ConstArr(c.batch_ptr(b), hid));
      if (kAssign) Arr(db + 2 * hid, hid).setZero();
      cpu::put<kAssign>(db + 3 * hid, hid, d * ConstArr(gb, hid));
    }
  }
}

void c_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                ExecContext& ctx) {
  const size_t hid = node.value.d.rows();
  const unsigned bd = node.value.d.bd;
  if (ctx.assign_by_batch(dx.v, dx.d.size(), dx.d.bd == bd))
    c_backward_columns<true>(*xs[0], *xs[1], dy, i, dx, hid, bd);
  else
    c_backward_columns<false>(*xs[0], *xs[1], dy, i, dx, hid, bd);
}

// h_t = o ⊙ tanh(c_t)
void h_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor &c = *xs[0], &g = *xs[1];
  Tensor& y = node.value;
  const size_t hid = y.d.rows();
  cpu::tanh_columns(y.v, c, hid, y.d.bd);
  for (unsigned b = 0; b < y.d.bd; ++b) Arr(y.v + b * hid, hid) *= ConstArr(g.batch_ptr(b) + 2 * hid, hid);
}

// dc += dh ⊙ o ⊙ (1 - tanh(c)^2);  do += dh ⊙ tanh(c)   (kAssign: =, the other gate rows zero)
template <bool kAssign>
void h_backward_columns(const Tensor& g, const float* tc, const Tensor& dy, unsigned i, Tensor& dx, size_t hid,
                        unsigned bd) {
  for (unsigned b = 0; b < bd; ++b) {
    ConstArr d(dy.v + b * hid, hid);
    ConstArr t(tc + b * hid, hid);
    const float* o = g.batch_ptr(b) + 2 * hid;
    float* db = dx.batch_ptr(b);
    if (i == 0) {
      cpu::put<kAssign>(db, hid, d * ConstArr(o, hid) * (1.f - t.square()));
    } else if (kAssign) {
      Arr(db, 2 * hid).setZero();
      Arr(db + 2 * hid, hid) = d * t;
      Arr(db + 3 * hid, hid).setZero();
    } else {
      Arr(db + 2 * hid, hid) += d * t;
    }
  }
}

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
  if (ctx.assign_by_batch(dx.v, dx.d.size(), dx.d.bd == bd))
    h_backward_columns<true>(g, tc, dy, i, dx, hid, bd);
  else
    h_backward_columns<false>(g, tc, dy, i, dx, hid, bd);
}

void check_noise(real std, const char* fn) {
  DYNET_LITE_ARG_CHECK(std >= 0.f, fn << ": weightnoise_std " << std << " must not be negative");
}

Expression concat_inputs(const std::vector<Expression>& x_t, const char* fn) {
  DYNET_LITE_ARG_CHECK(!x_t.empty(), fn << ": x_t is an empty list of inputs");
  return x_t.size() == 1 ? x_t[0] : concatenate(x_t);
}

}  // namespace

void register_lstm_ops(OpTable& t) {
  // Both gates ops batch across instances: x, h and the masks are stacked, the
  // weights (parameters) passed once; the kernels run one GEMM over the stack.
  OpInfo& g = t.define(OpKind::VanillaLSTMGates, "lstm", "vanilla_lstm_gates", gates_shape, gates_forward,
                       gates_backward, BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);
  g.assigns_gradient = true;
  // Pure unless it draws weight noise.
  g.pure_node = [](const Node& n) { return n.p<GatesParams>().weightnoise_std == 0.f; };
  g.column_product.applies = gates_by_columns;
  g.column_product.product = &cpu::detail::columns_product;
  g.column_product.weight = kWx;
  g.column_product.operand = kX;

  OpInfo& gd = t.define(OpKind::VanillaLSTMGatesDropout, "lstm", "vanilla_lstm_gates_dropout", gates_shape,
                        gates_forward, gates_backward, BatchKind::Elementwise, Purity::Impure, Devices::CpuAndCuda);
  gd.assigns_gradient = true;

  OpInfo& c = t.define(OpKind::VanillaLSTMC, "lstm", "vanilla_lstm_c", cell_shape, c_forward, c_backward,
                       BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);
  c.assigns_gradient = true;

  OpInfo& h = t.define(OpKind::VanillaLSTMH, "lstm", "vanilla_lstm_h", cell_shape, h_forward, h_backward,
                       BatchKind::Elementwise, Purity::Pure, Devices::CpuAndCuda);
  h.assigns_gradient = true;
}

Expression vanilla_lstm_gates(const Expression& x_t, const Expression& h_tm1, const Expression& Wx,
                              const Expression& Wh, const Expression& b, real weightnoise_std) {
  check_noise(weightnoise_std, "vanilla_lstm_gates");
  GatesParams p;
  p.weightnoise_std = weightnoise_std;
  return detail::add(OpKind::VanillaLSTMGates, {x_t, h_tm1, Wx, Wh, b}, p);
}

Expression vanilla_lstm_gates_concat(const std::vector<Expression>& x_t, const Expression& h_tm1, const Expression& Wx,
                                     const Expression& Wh, const Expression& b, real weightnoise_std) {
  check_noise(weightnoise_std, "vanilla_lstm_gates_concat");
  return vanilla_lstm_gates(concat_inputs(x_t, "vanilla_lstm_gates_concat"), h_tm1, Wx, Wh, b, weightnoise_std);
}

Expression vanilla_lstm_gates_dropout(const Expression& x_t, const Expression& h_tm1, const Expression& Wx,
                                      const Expression& Wh, const Expression& b, const Expression& dropout_mask_x,
                                      const Expression& dropout_mask_h, real weightnoise_std) {
  check_noise(weightnoise_std, "vanilla_lstm_gates_dropout");
  GatesParams p;
  p.weightnoise_std = weightnoise_std;
  return detail::add(OpKind::VanillaLSTMGatesDropout, {x_t, h_tm1, Wx, Wh, b, dropout_mask_x, dropout_mask_h}, p);
}

Expression vanilla_lstm_gates_dropout_concat(const std::vector<Expression>& x_t, const Expression& h_tm1,
                                             const Expression& Wx, const Expression& Wh, const Expression& b,
                                             const Expression& dropout_mask_x, const Expression& dropout_mask_h,
                                             real weightnoise_std) {
  check_noise(weightnoise_std, "vanilla_lstm_gates_dropout_concat");
  return vanilla_lstm_gates_dropout(concat_inputs(x_t, "vanilla_lstm_gates_dropout_concat"), h_tm1, Wx, Wh, b,
                                    dropout_mask_x, dropout_mask_h, weightnoise_std);
}

Expression vanilla_lstm_c(const Expression& c_tm1, const Expression& gates_t) {
  return detail::add(OpKind::VanillaLSTMC, {c_tm1, gates_t});
}

Expression vanilla_lstm_h(const Expression& c_t, const Expression& gates_t) {
  return detail::add(OpKind::VanillaLSTMH, {c_t, gates_t});
}

}  // namespace dynet_lite
