// GPU kernels of the fused recurrent steps: ops/lstm.cc (vanilla_lstm_gates,
// vanilla_lstm_gates_dropout, vanilla_lstm_c, vanilla_lstm_h) and ops/treelstm.cc
// (treelstm_gates, treelstm_c, treelstm_h).  The formulas are the CPU kernels';
// products go through cuBLAS, the element-wise parts run one thread per element.
//
// Any argument may have a batch of 1, broadcast over the result's batch N.  The
// gradient of such an argument is summed over the batch inside the thread that
// owns the element: no atomics, and the same result on every run.
#include <cuda_runtime.h>

#include <random>

#include "dynet_lite/backends/cuda/kernels.h"
#include "dynet_lite/backends/lstm_gates.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"

namespace dynet_lite {
namespace cuda {

namespace {

// An argument as a kernel sees it: its data and batch size (1: broadcast).
struct Col {
  const float* v;
  unsigned bd;
};
Col col(const Tensor& t) { return {t.v, t.d.bd}; }
constexpr Col kNoCol{nullptr, 1};

// Batch element b of an argument with `per` floats per batch element.
__device__ inline const float* at(Col a, unsigned b, size_t per) { return a.v + (a.bd == 1 ? 0 : size_t(b) * per); }

// The batch elements of the result that add into batch element bb of a
// gradient with batch size dxbd: all N when it was broadcast, else bb alone.
__device__ inline unsigned first_b(unsigned dxbd, unsigned bb) { return dxbd == 1 ? 0u : bb; }
__device__ inline unsigned end_b(unsigned dxbd, unsigned bb, unsigned N) { return dxbd == 1 ? N : bb + 1; }

__device__ inline float sigmoid(float x) { return 1.f / (1.f + expf(-x)); }

template <typename Kernel, typename... Args>
void launch(CudaDevice& dev, const char* name, size_t n, Kernel k, Args... args) {
  k<<<blocks_for(n), kThreads, 0, dev.stream()>>>(args...);
  cudaError_t st = cudaGetLastError();
  if (st != cudaSuccess) throw_cuda_error(st, name, __FILE__, __LINE__);
}

// ================================================================ vanilla LSTM
// Gates: four blocks of hid rows, i f o (sigmoid) and g (tanh).
using namespace lstm_gates;

__global__ void add_into_kernel(float* y, const float* x, size_t n) { DYNET_LITE_GRID_LOOP(i, n) y[i] += x[i]; }

// out (r x N) = v ⊙ mask, both broadcast over the batch (mask optional).
__global__ void operand_kernel(float* out, Col v, Col mask, size_t r, unsigned N) {
  DYNET_LITE_GRID_LOOP(i, r * N) {
    const unsigned c = static_cast<unsigned>(i / r);
    const size_t j = i % r;
    float x = at(v, c, r)[j];
    if (mask.v) x *= at(mask, c, r)[j];
    out[i] = x;
  }
}

// y = act(y + b): sigmoid on the first 3 hid rows of each column (the forget
// gate's with DyNet's bias of 1), tanh on the last hid.
__global__ void gates_activation_kernel(float* y, const float* b, size_t rows, size_t hid, size_t n) {
  DYNET_LITE_GRID_LOOP(i, n) {
    const size_t r = i % rows;
    const float p = y[i] + b[r] + (r >= hid && r < 2 * hid ? kForgetGateBias : 0.f);
    y[i] = r < 3 * hid ? sigmoid(p) : tanhf(p);
  }
}

// dpre = dy ⊙ act'(pre), from the outputs.
__global__ void gates_dpre_kernel(float* dpre, const float* y, const float* dy, size_t rows, size_t hid, size_t n) {
  DYNET_LITE_GRID_LOOP(i, n) {
    const float v = y[i];
    dpre[i] = dy[i] * (i % rows < 3 * hid ? v * (1.f - v) : 1.f - v * v);
  }
}

// dx (r x dxbd) += t ⊙ factor summed over the batch elements that share a column
// of dx (factor optional).
__global__ void scaled_sum_kernel(float* dx, const float* t, Col factor, size_t r, unsigned dxbd, unsigned N) {
  DYNET_LITE_GRID_LOOP(i, r * dxbd) {
    const unsigned bb = static_cast<unsigned>(i / r);
    const size_t j = i % r;
    float s = 0.f;
    for (unsigned b = first_b(dxbd, bb); b < end_b(dxbd, bb, N); ++b)
      s += factor.v ? t[b * r + j] * at(factor, b, r)[j] : t[b * r + j];
    dx[i] += s;
  }
}

// db += the sum of the columns of dpre (rows x N).
__global__ void column_sum_kernel(float* db, const float* dpre, size_t rows, unsigned N) {
  DYNET_LITE_GRID_LOOP(r, rows) {
    float s = 0.f;
    for (unsigned c = 0; c < N; ++c) s += dpre[c * rows + r];
    db[r] += s;
  }
}

// c_t = f ⊙ c_tm1 + i ⊙ g
__global__ void lstm_c_forward_kernel(float* y, Col c, Col g, size_t hid, unsigned N) {
  DYNET_LITE_GRID_LOOP(i, hid * N) {
    const unsigned b = static_cast<unsigned>(i / hid);
    const size_t j = i % hid;
    const float* gb = at(g, b, 4 * hid);
    y[i] = gb[hid + j] * at(c, b, hid)[j] + gb[j] * gb[3 * hid + j];
  }
}

// dx (hid x dxbd) += dy ⊙ (block `off` of g), summed where dx was broadcast.
// vanilla_lstm_c: dc_tm1 += dc ⊙ f;  treelstm_c: dc_k += dc ⊙ f_k.
__global__ void times_block_kernel(float* dx, const float* dy, Col g, size_t grows, size_t off, size_t hid,
                                   unsigned dxbd, unsigned N) {
  DYNET_LITE_GRID_LOOP(i, hid * dxbd) {
    const unsigned bb = static_cast<unsigned>(i / hid);
    const size_t j = i % hid;
    float s = 0.f;
    for (unsigned b = first_b(dxbd, bb); b < end_b(dxbd, bb, N); ++b) s += dy[b * hid + j] * at(g, b, grows)[off + j];
    dx[i] += s;
  }
}

// d[i; f; o; g] += [dc ⊙ g; dc ⊙ c_tm1; 0; dc ⊙ i]
__global__ void lstm_c_backward_gates_kernel(float* dx, const float* dy, Col c, Col g, size_t hid, unsigned dxbd,
                                             unsigned N) {
  DYNET_LITE_GRID_LOOP(i, hid * dxbd) {
    const unsigned bb = static_cast<unsigned>(i / hid);
    const size_t j = i % hid;
    float si = 0.f, sf = 0.f, sg = 0.f;
    for (unsigned b = first_b(dxbd, bb); b < end_b(dxbd, bb, N); ++b) {
      const float d = dy[b * hid + j];
      const float* gb = at(g, b, 4 * hid);
      si += d * gb[3 * hid + j];
      sf += d * at(c, b, hid)[j];
      sg += d * gb[j];
    }
    float* out = dx + size_t(bb) * 4 * hid;
    out[j] += si;
    out[hid + j] += sf;
    out[3 * hid + j] += sg;
  }
}

// h = o ⊙ tanh(c), o the block at `off` of g (vanilla: 2 hid, Tree-LSTM: hid).
__global__ void out_forward_kernel(float* y, Col c, Col g, size_t grows, size_t off, size_t hid, unsigned N) {
  DYNET_LITE_GRID_LOOP(i, hid * N) {
    const unsigned b = static_cast<unsigned>(i / hid);
    const size_t j = i % hid;
    y[i] = at(g, b, grows)[off + j] * tanhf(at(c, b, hid)[j]);
  }
}

// dc += dh ⊙ o ⊙ (1 - tanh(c)^2)
__global__ void out_backward_c_kernel(float* dx, const float* dy, Col c, Col g, size_t grows, size_t off, size_t hid,
                                      unsigned dxbd, unsigned N) {
  DYNET_LITE_GRID_LOOP(i, hid * dxbd) {
    const unsigned bb = static_cast<unsigned>(i / hid);
    const size_t j = i % hid;
    float s = 0.f;
    for (unsigned b = first_b(dxbd, bb); b < end_b(dxbd, bb, N); ++b) {
      const float t = tanhf(at(c, b, hid)[j]);
      s += dy[b * hid + j] * at(g, b, grows)[off + j] * (1.f - t * t);
    }
    dx[i] += s;
  }
}

// do += dh ⊙ tanh(c)   (the o block of the gates' gradient)
__global__ void out_backward_o_kernel(float* dx, const float* dy, Col c, size_t grows, size_t off, size_t hid,
                                      unsigned dxbd, unsigned N) {
  DYNET_LITE_GRID_LOOP(i, hid * dxbd) {
    const unsigned bb = static_cast<unsigned>(i / hid);
    const size_t j = i % hid;
    float s = 0.f;
    for (unsigned b = first_b(dxbd, bb); b < end_b(dxbd, bb, N); ++b) s += dy[b * hid + j] * tanhf(at(c, b, hid)[j]);
    dx[size_t(bb) * grows + off + j] += s;
  }
}

// ---------------------------------------------------------------- host side

// v ⊙ mask as a contiguous r x N matrix (v itself when no copy is needed).
const float* effective_operand(CudaDevice& dev, const Tensor& v, const Tensor* mask, unsigned N, ExecContext& ctx) {
  if (!mask && v.d.bd == N) return v.v;
  const size_t r = v.d.rows();
  float* out = ctx.scratch_floats(r * N);
  launch(dev, "operand_kernel", r * N, operand_kernel, out, col(v), mask ? col(*mask) : kNoCol, r, N);
  return out;
}

void lstm_gates_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Tensor &x = *xs[kX], &h = *xs[kH];
  Tensor& y = node.value;
  const size_t rows = y.d.rows(), hid = rows / 4, in = x.d.rows();
  const unsigned N = y.d.bd;
  const bool dropout = n == 7;
  node.aux = nullptr;
  const float std = node.p<op_params::GatesParams>().weightnoise_std;
  if (std > 0.f) {
    // The noise comes from the graph's engine on the host, drawn in the CPU
    // kernel's order, so that a seed gives the same function on both devices.
    const size_t nwx = xs[kWx]->d.size(), nwh = xs[kWh]->d.size(), nb = xs[kB]->d.size(), total = nwx + nwh + nb;
    float* host = static_cast<float*>(ctx.host_bytes(total * sizeof(float)));
    std::normal_distribution<float> gauss(0.f, std);
    std::mt19937& rng = ctx.rng();
    for (size_t k = 0; k < total; ++k) host[k] = gauss(rng);
    float* noisy = ctx.persistent_floats(total);
    dev.upload(noisy, host, total * sizeof(float));
    launch(dev, "add_into_kernel", nwx, add_into_kernel, noisy, xs[kWx]->v, nwx);
    launch(dev, "add_into_kernel", nwh, add_into_kernel, noisy + nwx, xs[kWh]->v, nwh);
    launch(dev, "add_into_kernel", nb, add_into_kernel, noisy + nwx + nwh, xs[kB]->v, nb);
    node.aux = noisy;
  }
  const GateWeights w = gate_weights(xs, node);
  const float* xo = effective_operand(dev, x, dropout ? xs[kMaskX] : nullptr, N, ctx);
  const float* ho = effective_operand(dev, h, dropout ? xs[kMaskH] : nullptr, N, ctx);
  gemm(dev, false, false, rows, N, in, w.wx, rows, 0, xo, in, 0, 0.f, y.v, rows, 0, 1);
  gemm(dev, false, false, rows, N, hid, w.wh, rows, 0, ho, hid, 0, 1.f, y.v, rows, 0, 1);
  launch(dev, "gates_activation_kernel", rows * N, gates_activation_kernel, y.v, w.b, rows, hid, rows * N);
}

// With pre = W v' + ..., v' = v ⊙ mask:  dv += mask ⊙ (W^T dpre),  dmask += v ⊙ (W^T dpre).
void operand_backward(CudaDevice& dev, const float* w, const float* dpre, size_t rows, size_t r, unsigned N,
                      const Tensor* factor, Tensor& dx, ExecContext& ctx) {
  if (!factor && dx.d.bd == N) {
    gemm(dev, true, false, r, N, rows, w, rows, 0, dpre, rows, 0, 1.f, dx.v, r, 0, 1);
    return;
  }
  float* t = ctx.scratch_floats(r * N);
  gemm(dev, true, false, r, N, rows, w, rows, 0, dpre, rows, 0, 0.f, t, r, 0, 1);
  launch(dev, "scaled_sum_kernel", r * dx.d.bd, scaled_sum_kernel, dx.v, static_cast<const float*>(t),
         factor ? col(*factor) : kNoCol, r, dx.d.bd, N);
}

void lstm_gates_backward(const Tensor* const* xs, unsigned n, const Node& node, const Tensor& dy, unsigned i,
                         Tensor& dx, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Tensor& y = node.value;
  const auto [rows, hid, in, N, mask_x, mask_h, w] = backward_args(xs, n, node);
  // dpre is the same for every argument: computed at the node's first call.
  float*& dpre = ctx.node_memo();
  if (!dpre) {
    dpre = ctx.persistent_floats(y.d.size());
    launch(dev, "gates_dpre_kernel", y.d.size(), gates_dpre_kernel, dpre, static_cast<const float*>(y.v),
           static_cast<const float*>(dy.v), rows, hid, y.d.size());
  }
  switch (i) {
    case kX:
      operand_backward(dev, w.wx, dpre, rows, in, N, mask_x, dx, ctx);
      break;
    case kH:
      operand_backward(dev, w.wh, dpre, rows, hid, N, mask_h, dx, ctx);
      break;
    case kWx:
    case kWh: {  // dW += dpre v'^T
      const bool wx = i == kWx;
      const size_t r = wx ? in : hid;
      const float* operand = effective_operand(dev, *xs[wx ? kX : kH], wx ? mask_x : mask_h, N, ctx);
      gemm(dev, false, true, rows, r, N, dpre, rows, 0, operand, r, 0, 1.f, dx.v, rows, 0, 1);
      break;
    }
    case kB:
      launch(dev, "column_sum_kernel", rows, column_sum_kernel, dx.v, static_cast<const float*>(dpre), rows, N);
      break;
    case kMaskX:
      operand_backward(dev, w.wx, dpre, rows, in, N, xs[kX], dx, ctx);
      break;
    case kMaskH:
      operand_backward(dev, w.wh, dpre, rows, hid, N, xs[kH], dx, ctx);
      break;
    default:
      break;
  }
}

void lstm_c_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  Tensor& y = node.value;
  const size_t hid = y.d.rows();
  launch(dev, "lstm_c_forward_kernel", hid * y.d.bd, lstm_c_forward_kernel, y.v, col(*xs[0]), col(*xs[1]), hid, y.d.bd);
}

void lstm_c_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const size_t hid = node.value.d.rows();
  const unsigned N = node.value.d.bd;
  const float* d = dy.v;
  if (i == 0)
    launch(dev, "times_block_kernel", hid * dx.d.bd, times_block_kernel, dx.v, d, col(*xs[1]), 4 * hid, hid, hid,
           dx.d.bd, N);
  else
    launch(dev, "lstm_c_backward_gates_kernel", hid * dx.d.bd, lstm_c_backward_gates_kernel, dx.v, d, col(*xs[0]),
           col(*xs[1]), hid, dx.d.bd, N);
}

// h = o ⊙ tanh(c) for both LSTMs: o is the block at `off` of gates with `grows` rows.
void out_forward(const Tensor* const* xs, Node& node, ExecContext& ctx, size_t off) {
  CudaDevice& dev = device_of(ctx);
  Tensor& y = node.value;
  const size_t hid = y.d.rows();
  launch(dev, "out_forward_kernel", hid * y.d.bd, out_forward_kernel, y.v, col(*xs[0]), col(*xs[1]),
         static_cast<size_t>(xs[1]->d.rows()), off, hid, y.d.bd);
}
void out_backward(const Tensor* const* xs, const Node& node, const Tensor& dy, unsigned i, Tensor& dx, ExecContext& ctx,
                  size_t off) {
  CudaDevice& dev = device_of(ctx);
  const size_t hid = node.value.d.rows(), grows = xs[1]->d.rows();
  const unsigned N = node.value.d.bd;
  const float* d = dy.v;
  if (i == 0)
    launch(dev, "out_backward_c_kernel", hid * dx.d.bd, out_backward_c_kernel, dx.v, d, col(*xs[0]), col(*xs[1]), grows,
           off, hid, dx.d.bd, N);
  else
    launch(dev, "out_backward_o_kernel", hid * dx.d.bd, out_backward_o_kernel, dx.v, d, col(*xs[0]), grows, off, hid,
           dx.d.bd, N);
}

void lstm_h_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  out_forward(xs, node, ctx, 2 * static_cast<size_t>(node.value.d.rows()));
}
void lstm_h_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext& ctx) {
  out_backward(xs, node, dy, i, dx, ctx, 2 * static_cast<size_t>(node.value.d.rows()));
}

// ================================================================ Tree-LSTM
// Gates: 3 + N blocks of hid rows: i, o (sigmoid), u (tanh), f_1..f_N (sigmoid).

__global__ void tree_gates_forward_kernel(float* y, const float* pre, size_t rows, size_t hid, size_t n) {
  DYNET_LITE_GRID_LOOP(i, n) {
    const size_t blk = (i % rows) / hid;
    y[i] = blk == 2 ? tanhf(pre[i]) : sigmoid(pre[i]);
  }
}
__global__ void tree_gates_backward_kernel(float* dx, const float* y, const float* dy, size_t rows, size_t hid,
                                           size_t n) {
  DYNET_LITE_GRID_LOOP(i, n) {
    const float v = y[i];
    dx[i] += dy[i] * ((i % rows) / hid == 2 ? 1.f - v * v : v * (1.f - v));
  }
}

// Up to kChunk children's cells, passed by value to a kernel; more run in
// further launches that continue the same sum in the same order.
constexpr unsigned kChunk = 8;
struct Children {
  Col c[kChunk];
  unsigned first;  // child number (1-based) of c[0]
  unsigned count;
};

// c = i ⊙ u + f_1 ⊙ c_1 + ... (the first chunk starts the sum, later ones continue it)
__global__ void tree_c_forward_kernel(float* y, Col g, Children ch, bool start, size_t grows, size_t hid, unsigned N) {
  DYNET_LITE_GRID_LOOP(i, hid * N) {
    const unsigned b = static_cast<unsigned>(i / hid);
    const size_t j = i % hid;
    const float* gb = at(g, b, grows);
    float acc = start ? gb[j] * gb[2 * hid + j] : y[i];
    for (unsigned q = 0; q < ch.count; ++q) acc += gb[(2 + ch.first + q) * hid + j] * at(ch.c[q], b, hid)[j];
    y[i] = acc;
  }
}

// d[i; o; u; f_k] += [dc ⊙ u; 0; dc ⊙ i; dc ⊙ c_k]  (i and u with the first chunk)
__global__ void tree_c_backward_gates_kernel(float* dx, const float* dy, Col g, Children ch, bool start, size_t grows,
                                             size_t hid, unsigned dxbd, unsigned N) {
  DYNET_LITE_GRID_LOOP(i, hid * dxbd) {
    const unsigned bb = static_cast<unsigned>(i / hid);
    const size_t j = i % hid;
    float* out = dx + size_t(bb) * grows;
    if (start) {
      float si = 0.f, su = 0.f;
      for (unsigned b = first_b(dxbd, bb); b < end_b(dxbd, bb, N); ++b) {
        const float d = dy[b * hid + j];
        const float* gb = at(g, b, grows);
        si += d * gb[2 * hid + j];
        su += d * gb[j];
      }
      out[j] += si;
      out[2 * hid + j] += su;
    }
    for (unsigned q = 0; q < ch.count; ++q) {
      float s = 0.f;
      for (unsigned b = first_b(dxbd, bb); b < end_b(dxbd, bb, N); ++b) s += dy[b * hid + j] * at(ch.c[q], b, hid)[j];
      out[(2 + ch.first + q) * hid + j] += s;
    }
  }
}

// The children of a treelstm_c node (arguments 1..n-1), kChunk at a time.
template <typename F>
void for_each_chunk(const Tensor* const* xs, unsigned n, F f) {
  unsigned k = 1;
  do {
    Children ch{};
    ch.first = k;
    ch.count = 0;
    while (k < n && ch.count < kChunk) ch.c[ch.count++] = col(*xs[k++]);
    f(ch, ch.first == 1);
  } while (k < n);
}

void tree_gates_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  Tensor& y = node.value;
  const size_t rows = y.d.rows(), hid = rows / (3 + node.p<op_params::TreeParams>().n);
  launch(dev, "tree_gates_forward_kernel", y.d.size(), tree_gates_forward_kernel, y.v,
         static_cast<const float*>(xs[0]->v), rows, hid, y.d.size());
}
void tree_gates_backward(const Tensor* const*, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                         ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Tensor& y = node.value;
  const size_t rows = y.d.rows(), hid = rows / (3 + node.p<op_params::TreeParams>().n);
  launch(dev, "tree_gates_backward_kernel", y.d.size(), tree_gates_backward_kernel, dx.v,
         static_cast<const float*>(y.v), static_cast<const float*>(dy.v), rows, hid, y.d.size());
}

void tree_c_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  Tensor& y = node.value;
  const size_t hid = y.d.rows(), grows = xs[0]->d.rows();
  const unsigned N = y.d.bd;
  for_each_chunk(xs, n, [&](const Children& ch, bool start) {
    launch(dev, "tree_c_forward_kernel", hid * N, tree_c_forward_kernel, y.v, col(*xs[0]), ch, start, grows, hid, N);
  });
}
void tree_c_backward(const Tensor* const* xs, unsigned n, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const size_t hid = node.value.d.rows(), grows = xs[0]->d.rows();
  const unsigned N = node.value.d.bd;
  const float* d = dy.v;
  if (i == 0) {
    for_each_chunk(xs, n, [&](const Children& ch, bool start) {
      launch(dev, "tree_c_backward_gates_kernel", hid * dx.d.bd, tree_c_backward_gates_kernel, dx.v, d, col(*xs[0]), ch,
             start, grows, hid, dx.d.bd, N);
    });
  } else {  // dc_i += dc ⊙ f_i
    launch(dev, "times_block_kernel", hid * dx.d.bd, times_block_kernel, dx.v, d, col(*xs[0]), grows,
           (2 + static_cast<size_t>(i)) * hid, hid, dx.d.bd, N);
  }
}

void tree_h_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  out_forward(xs, node, ctx, node.value.d.rows());
}
void tree_h_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext& ctx) {
  out_backward(xs, node, dy, i, dx, ctx, node.value.d.rows());
}

}  // namespace

void register_lstm_kernels(OpTable& t) {
  set_gpu_kernels(t, OpKind::VanillaLSTMGates, lstm_gates_forward, lstm_gates_backward);
  set_gpu_kernels(t, OpKind::VanillaLSTMGatesDropout, lstm_gates_forward, lstm_gates_backward);
  set_gpu_kernels(t, OpKind::VanillaLSTMC, lstm_c_forward, lstm_c_backward);
  set_gpu_kernels(t, OpKind::VanillaLSTMH, lstm_h_forward, lstm_h_backward);
  set_gpu_kernels(t, OpKind::TreeLSTMGates, tree_gates_forward, tree_gates_backward);
  set_gpu_kernels(t, OpKind::TreeLSTMC, tree_c_forward, tree_c_backward);
  set_gpu_kernels(t, OpKind::TreeLSTMH, tree_h_forward, tree_h_backward);
}

}  // namespace cuda
}  // namespace dynet_lite
