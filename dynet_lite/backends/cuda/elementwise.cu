// GPU kernels of the element-wise families: unary functions (ops/unary.cc),
// scalar ops, binary ops with broadcasting and the n-ary sum (ops/arith.cc),
// the gradient controls (ops/shape.cc), plus fill and the SGD step.
#include <cuda_runtime.h>

#include "dynet_lite/backends/cuda/kernels.h"
#include "dynet_lite/backends/cuda/op_params.h"
#include "dynet_lite/backends/update_rules.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"

namespace dynet_lite {
namespace cuda {

#define DYNET_LITE_GRID_LOOP(i, n) \
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < (n); i += size_t(blockDim.x) * gridDim.x)

namespace {

__global__ void fill_kernel(float* y, float v, size_t n) {
  DYNET_LITE_GRID_LOOP(i, n) y[i] = v;
}

__global__ void sgd_kernel(float* x, float* g, size_t n, float rate) {
  DYNET_LITE_GRID_LOOP(i, n) {
    x[i] -= rate * g[i];
    g[i] = 0.f;
  }
}

// ---------------------------------------------------------------- unary
// Each functor: f(x, a) and the backward factor d(x, y, a) with dx += d * dy.
constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
constexpr float kSeluScale = 1.0507009873554804934193349852946f;

struct TanhF {  // y = tanh x;  dx += (1 - y^2) dy
  __device__ static float f(float x, float) { return tanhf(x); }
  __device__ static float d(float, float y, float) { return 1.f - y * y; }
};
struct LogisticF {  // y = 1 / (1 + e^-x);  dx += y (1 - y) dy
  __device__ static float f(float x, float) { return 1.f / (1.f + expf(-x)); }
  __device__ static float d(float, float y, float) { return y * (1.f - y); }
};
struct RectifyF {  // y = max(0, x);  dx += [x > 0] dy
  __device__ static float f(float x, float) { return x > 0.f ? x : 0.f; }
  __device__ static float d(float x, float, float) { return x > 0.f ? 1.f : 0.f; }
};
struct EluF {  // y = x > 0 ? x : a (e^x - 1);  dx += (x > 0 ? 1 : y + a) dy
  __device__ static float f(float x, float a) { return x > 0.f ? x : a * (expf(x) - 1.f); }
  __device__ static float d(float x, float y, float a) { return x > 0.f ? 1.f : y + a; }
};
struct SeluF {  // y = s elu(x, alpha);  dx += (x > 0 ? s : y + s alpha) dy
  __device__ static float f(float x, float) { return kSeluScale * (x > 0.f ? x : kSeluAlpha * (expf(x) - 1.f)); }
  __device__ static float d(float x, float y, float) { return x > 0.f ? kSeluScale : y + kSeluScale * kSeluAlpha; }
};
struct SiluF {  // y = x sigmoid(b x);  dx += (s + b x s (1 - s)) dy
  __device__ static float f(float x, float b) { return x / (1.f + expf(-b * x)); }
  __device__ static float d(float x, float, float b) {
    float s = 1.f / (1.f + expf(-b * x));
    return s + b * x * s * (1.f - s);
  }
};
struct SoftsignF {  // y = x / (1 + |x|);  dx += dy / (1 + |x|)^2
  __device__ static float f(float x, float) { return x / (1.f + fabsf(x)); }
  __device__ static float d(float x, float, float) {
    float t = 1.f + fabsf(x);
    return 1.f / (t * t);
  }
};
struct ExpF {  // y = e^x;  dx += y dy
  __device__ static float f(float x, float) { return expf(x); }
  __device__ static float d(float, float y, float) { return y; }
};
struct LogF {  // y = ln x;  dx += dy / x
  __device__ static float f(float x, float) { return logf(x); }
  __device__ static float d(float x, float, float) { return 1.f / x; }
};
struct SqrtF {  // y = sqrt x;  dx += dy / (2 y)
  __device__ static float f(float x, float) { return sqrtf(x); }
  __device__ static float d(float, float y, float) { return 0.5f / y; }
};
struct SquareF {  // y = x^2;  dx += 2 x dy
  __device__ static float f(float x, float) { return x * x; }
  __device__ static float d(float x, float, float) { return 2.f * x; }
};
struct CubeF {  // y = x^3;  dx += 3 x^2 dy
  __device__ static float f(float x, float) { return x * x * x; }
  __device__ static float d(float x, float, float) { return 3.f * x * x; }
};
struct AbsF {  // y = |x|;  dx += sign(x) dy  (0 at 0)
  __device__ static float f(float x, float) { return fabsf(x); }
  __device__ static float d(float x, float, float) { return x > 0.f ? 1.f : (x < 0.f ? -1.f : 0.f); }
};
struct ErfF {  // y = erf x;  dx += 2/sqrt(pi) e^{-x^2} dy
  __device__ static float f(float x, float) { return erff(x); }
  __device__ static float d(float x, float, float) { return 1.1283791670955126f * expf(-x * x); }
};
struct LogSigmoidF {  // y = min(x, 0) - log(1 + e^{-|x|});  dx += dy / (1 + e^x)
  __device__ static float f(float x, float) { return fminf(x, 0.f) - logf(1.f + expf(-fabsf(x))); }
  __device__ static float d(float x, float, float) { return 1.f / (1.f + expf(x)); }
};
struct NegateF {  // y = -x;  dx -= dy
  __device__ static float f(float x, float) { return -x; }
  __device__ static float d(float, float, float) { return -1.f; }
};
struct AddScalarF {  // y = x + c;  dx += dy
  __device__ static float f(float x, float c) { return x + c; }
  __device__ static float d(float, float, float) { return 1.f; }
};
struct MulScalarF {  // y = c x;  dx += c dy
  __device__ static float f(float x, float c) { return c * x; }
  __device__ static float d(float, float, float c) { return c; }
};
struct ScalarMinusF {  // y = c - x;  dx -= dy
  __device__ static float f(float x, float c) { return c - x; }
  __device__ static float d(float, float, float) { return -1.f; }
};
struct ScalarDivideF {  // y = c / x;  dx -= y / x dy
  __device__ static float f(float x, float c) { return c / x; }
  __device__ static float d(float x, float y, float) { return -y / x; }
};
struct CopyF {  // y = x (nobackprop: no backward)
  __device__ static float f(float x, float) { return x; }
};

template <class F>
__global__ void unary_forward_kernel(const float* x, float* y, size_t n, float a) {
  DYNET_LITE_GRID_LOOP(i, n) y[i] = F::f(x[i], a);
}
template <class F>
__global__ void unary_backward_kernel(const float* x, const float* y, const float* dy, float* dx, size_t n, float a) {
  DYNET_LITE_GRID_LOOP(i, n) dx[i] += F::d(x[i], y[i], a) * dy[i];
}

template <class F>
void unary_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t n = node.value.d.size();
  unary_forward_kernel<F><<<blocks_for(n), kThreads, 0, dev.stream()>>>(xs[0]->v, node.value.v, n,
                                                                         node.p<cuda_params::OneFloat>().a);
  DYNET_LITE_CUDA_LAUNCH_CHECK("unary_forward_kernel");
}
template <class F>
void unary_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                    ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t n = node.value.d.size();
  unary_backward_kernel<F><<<blocks_for(n), kThreads, 0, dev.stream()>>>(xs[0]->v, node.value.v, dy.v, dx.v, n,
                                                                          node.p<cuda_params::OneFloat>().a);
  DYNET_LITE_CUDA_LAUNCH_CHECK("unary_backward_kernel");
}

// flip_gradient: dx -= dy;  scale_gradient: dx += lambda dy (lambda is the op's float)
struct FlipF {
  __device__ static float f(float x, float) { return x; }
  __device__ static float d(float, float, float) { return -1.f; }
};
struct ScaleGradF {
  __device__ static float f(float x, float) { return x; }
  __device__ static float d(float, float, float lambda) { return lambda; }
};

template <class F>
void set_unary(OpTable& t, OpKind op) {
  OpInfo& o = t.row(op);
  o.forward[1] = unary_forward<F>;
  o.backward[1] = unary_backward<F>;
}

// ---------------------------------------------------------------- binary with broadcasting
// The output walked as up to 8 dimensions (7 + batch) with length-1 ones dropped
// and neighbours merged; each argument has a stride per dimension, 0 where broadcast.
struct BinaryLayout {
  unsigned nd;
  unsigned size[8];
  unsigned astride[8];
  unsigned bstride[8];
};

BinaryLayout binary_layout(const Dim& od, const Dim& ad, const Dim& bd) {
  BinaryLayout L{};
  size_t as = 1, bs = 1;
  bool prev_ab = false, prev_bb = false;
  for (unsigned k = 0; k < 8; ++k) {
    unsigned osz = k < 7 ? od[k] : od.bd;
    unsigned asz = k < 7 ? ad[k] : ad.bd;
    unsigned bsz = k < 7 ? bd[k] : bd.bd;
    bool ab = asz != osz, bb = bsz != osz;  // broadcast along k
    if (osz != 1) {
      if (L.nd > 0 && ab == prev_ab && bb == prev_bb) {
        L.size[L.nd - 1] *= osz;
      } else {
        L.size[L.nd] = osz;
        L.astride[L.nd] = ab ? 0u : static_cast<unsigned>(as);
        L.bstride[L.nd] = bb ? 0u : static_cast<unsigned>(bs);
        prev_ab = ab;
        prev_bb = bb;
        ++L.nd;
      }
    }
    as *= asz;
    bs *= bsz;
  }
  return L;
}

__device__ inline void arg_offsets(const BinaryLayout& L, size_t o, size_t& ia, size_t& ib) {
  ia = 0;
  ib = 0;
  for (unsigned k = 0; k < L.nd; ++k) {
    size_t digit = o % L.size[k];
    o /= L.size[k];
    ia += digit * L.astride[k];
    ib += digit * L.bstride[k];
  }
}

// Each functor: f(a, b) and the partials da(a, b, y), db(a, b, y).
struct AddB {  // y = a + b
  __device__ static float f(float a, float b) { return a + b; }
  __device__ static float da(float, float, float) { return 1.f; }
  __device__ static float db(float, float, float) { return 1.f; }
};
struct SubB {  // y = a - b
  __device__ static float f(float a, float b) { return a - b; }
  __device__ static float da(float, float, float) { return 1.f; }
  __device__ static float db(float, float, float) { return -1.f; }
};
struct MulB {  // y = a b
  __device__ static float f(float a, float b) { return a * b; }
  __device__ static float da(float, float b, float) { return b; }
  __device__ static float db(float a, float, float) { return a; }
};
struct DivB {  // y = a / b;  db = -y / b
  __device__ static float f(float a, float b) { return a / b; }
  __device__ static float da(float, float b, float) { return 1.f / b; }
  __device__ static float db(float, float b, float y) { return -y / b; }
};
struct PowB {  // y = a^b;  da = b a^(b-1), db = ln(a) y
  __device__ static float f(float a, float b) { return powf(a, b); }
  __device__ static float da(float a, float b, float) { return b * powf(a, b - 1.f); }
  __device__ static float db(float a, float, float y) { return logf(a) * y; }
};
struct MaxB {  // y = max(a, b), a on ties
  __device__ static float f(float a, float b) { return a >= b ? a : b; }
  __device__ static float da(float a, float b, float) { return a >= b ? 1.f : 0.f; }
  __device__ static float db(float a, float b, float) { return a >= b ? 0.f : 1.f; }
};
struct MinB {  // y = min(a, b), a on ties
  __device__ static float f(float a, float b) { return a <= b ? a : b; }
  __device__ static float da(float a, float b, float) { return a <= b ? 1.f : 0.f; }
  __device__ static float db(float a, float b, float) { return a <= b ? 0.f : 1.f; }
};

template <class F>
__global__ void binary_same_kernel(const float* a, const float* b, float* y, size_t n) {
  DYNET_LITE_GRID_LOOP(i, n) y[i] = F::f(a[i], b[i]);
}
template <class F>
__global__ void binary_bcast_kernel(const float* a, const float* b, float* y, size_t n, BinaryLayout L) {
  DYNET_LITE_GRID_LOOP(o, n) {
    size_t ia, ib;
    arg_offsets(L, o, ia, ib);
    y[o] = F::f(a[ia], b[ib]);
  }
}
// dx_which += partial * dy; atomics where several outputs meet one argument element.
template <class F, int kWhich, bool kAtomic>
__global__ void binary_backward_kernel(const float* a, const float* b, const float* y, const float* dy, float* dx,
                                       size_t n, BinaryLayout L) {
  DYNET_LITE_GRID_LOOP(o, n) {
    size_t ia, ib;
    arg_offsets(L, o, ia, ib);
    float va = a[ia], vb = b[ib];
    float g = (kWhich == 0 ? F::da(va, vb, y[o]) : F::db(va, vb, y[o])) * dy[o];
    size_t k = kWhich == 0 ? ia : ib;
    if (kAtomic)
      atomicAdd(dx + k, g);
    else
      dx[k] += g;
  }
}

template <class F>
void binary_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Tensor &a = *xs[0], &b = *xs[1];
  size_t n = node.value.d.size();
  if (a.d.size() == n && b.d.size() == n) {
    binary_same_kernel<F><<<blocks_for(n), kThreads, 0, dev.stream()>>>(a.v, b.v, node.value.v, n);
  } else {
    BinaryLayout L = binary_layout(node.value.d, a.d, b.d);
    binary_bcast_kernel<F><<<blocks_for(n), kThreads, 0, dev.stream()>>>(a.v, b.v, node.value.v, n, L);
  }
  DYNET_LITE_CUDA_LAUNCH_CHECK("binary_forward");
}
template <class F>
void binary_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Tensor &a = *xs[0], &b = *xs[1];
  size_t n = node.value.d.size();
  BinaryLayout L = binary_layout(node.value.d, a.d, b.d);
  bool atomic = xs[i]->d.size() != n;
  unsigned g = blocks_for(n);
  cudaStream_t s = dev.stream();
  if (i == 0) {
    if (atomic)
      binary_backward_kernel<F, 0, true><<<g, kThreads, 0, s>>>(a.v, b.v, node.value.v, dy.v, dx.v, n, L);
    else
      binary_backward_kernel<F, 0, false><<<g, kThreads, 0, s>>>(a.v, b.v, node.value.v, dy.v, dx.v, n, L);
  } else {
    if (atomic)
      binary_backward_kernel<F, 1, true><<<g, kThreads, 0, s>>>(a.v, b.v, node.value.v, dy.v, dx.v, n, L);
    else
      binary_backward_kernel<F, 1, false><<<g, kThreads, 0, s>>>(a.v, b.v, node.value.v, dy.v, dx.v, n, L);
  }
  DYNET_LITE_CUDA_LAUNCH_CHECK("binary_backward");
}

template <class F>
void set_binary(OpTable& t, OpKind op) {
  OpInfo& o = t.row(op);
  o.forward[1] = binary_forward<F>;
  o.backward[1] = binary_backward<F>;
}

// ---------------------------------------------------------------- n-ary sum
// y += x, x repeated over the batch when it has a batch of 1 (per = its size)
__global__ void add_repeat_kernel(float* y, const float* x, size_t n, size_t per) {
  DYNET_LITE_GRID_LOOP(i, n) y[i] += x[i % per];
}
// dx[j] += sum_b dy[b per + j]
__global__ void add_batch_sum_kernel(float* dx, const float* dy, size_t per, unsigned bd) {
  DYNET_LITE_GRID_LOOP(j, per) {
    float s = 0.f;
    for (unsigned b = 0; b < bd; ++b) s += dy[b * per + j];
    dx[j] += s;
  }
}

// y = sum_k x_k (a batch of 1 added to every batch element)
void sum_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t sz = node.value.d.size();
  DYNET_LITE_CUDA_CHECK(cudaMemsetAsync(node.value.v, 0, sz * sizeof(float), dev.stream()));
  for (unsigned k = 0; k < n; ++k) {
    add_repeat_kernel<<<blocks_for(sz), kThreads, 0, dev.stream()>>>(node.value.v, xs[k]->v, sz, xs[k]->d.size());
    DYNET_LITE_CUDA_LAUNCH_CHECK("add_repeat_kernel");
  }
}
// dx_k += dy (summed over the batch when x_k has a batch of 1)
void sum_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                  ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t per = dx.d.size();
  unsigned bd = dx.d.bd == dy.d.bd ? 1u : dy.d.bd;
  add_batch_sum_kernel<<<blocks_for(per), kThreads, 0, dev.stream()>>>(dx.v, dy.v, per, bd);
  DYNET_LITE_CUDA_LAUNCH_CHECK("add_batch_sum_kernel");
}

}  // namespace

void launch_fill(float* dst, float value, size_t n, cudaStream_t stream) {
  fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dst, value, n);
  DYNET_LITE_CUDA_LAUNCH_CHECK("fill_kernel");
}

void launch_sgd_step_and_clear(float* values, float* grads, size_t n, float rate, cudaStream_t stream) {
  if (!n) return;
  sgd_kernel<<<blocks_for(n), kThreads, 0, stream>>>(values, grads, n, rate);
  DYNET_LITE_CUDA_LAUNCH_CHECK("sgd_kernel");
}

namespace {
__global__ void gather_rows_kernel(float* dst, const float* const* srcs, size_t n, size_t total) {
  DYNET_LITE_GRID_LOOP(e, total) dst[e] = srcs[e / n][e % n];
}
__global__ void scatter_add_rows_kernel(float* const* dsts, const float* src, size_t n, size_t total) {
  DYNET_LITE_GRID_LOOP(e, total) {
    float* d = dsts[e / n];
    if (d) atomicAdd(d + e % n, src[e]);
  }
}
// out[k] = sum of squares of row rows[k] (one thread a row: rows are short)
__global__ void rows_squared_norm_kernel(float* out, const float* table, const unsigned* rows, unsigned n, size_t row) {
  DYNET_LITE_GRID_LOOP(k, n) {
    const float* x = table + size_t(rows[k]) * row;
    float s = 0.f;
    for (size_t i = 0; i < row; ++i) s += x[i] * x[i];
    out[k] = s;
  }
}
__global__ void sgd_rows_kernel(float* values, float* grads, const unsigned* rows, size_t row, size_t total,
                                float rate) {
  DYNET_LITE_GRID_LOOP(e, total) {
    const size_t at = size_t(rows[e / row]) * row + e % row;
    values[at] -= rate * grads[at];
    grads[at] = 0.f;
  }
}
__global__ void fill_rows_kernel(float* table, const unsigned* rows, size_t row, size_t total, float value) {
  DYNET_LITE_GRID_LOOP(e, total) table[size_t(rows[e / row]) * row + e % row] = value;
}
// The adaptive trainers' rules (backends/update_rules.h), element by element.
__global__ void update_rule_kernel(DeviceRule rule, DeviceRuleArgs p, float* x, const float* grads, float* s0,
                                   float* s1, float* s2, size_t n) {
  DYNET_LITE_GRID_LOOP(i, n) apply_update_rule(rule, p, i, x, grads, s0, s1, s2);
}
}  // namespace

void launch_update_rule(DeviceRule rule, const DeviceRuleArgs& args, float* values, const float* grads,
                        float* const* state, size_t n, cudaStream_t stream) {
  if (!n) return;
  update_rule_kernel<<<blocks_for(n), kThreads, 0, stream>>>(rule, args, values, grads, state[0], state[1], state[2],
                                                             n);
  DYNET_LITE_CUDA_LAUNCH_CHECK("update_rule_kernel");
}

void launch_rows_squared_norm(float* out, const float* table, const unsigned* rows, unsigned n, size_t row,
                              cudaStream_t stream) {
  if (!n) return;
  rows_squared_norm_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, table, rows, n, row);
  DYNET_LITE_CUDA_LAUNCH_CHECK("rows_squared_norm_kernel");
}

void launch_sgd_rows(float* values, float* grads, const unsigned* rows, unsigned n, size_t row, float rate,
                     cudaStream_t stream) {
  if (!n || !row) return;
  sgd_rows_kernel<<<blocks_for(n * row), kThreads, 0, stream>>>(values, grads, rows, row, n * row, rate);
  DYNET_LITE_CUDA_LAUNCH_CHECK("sgd_rows_kernel");
}

void launch_fill_rows(float* table, const unsigned* rows, unsigned n, size_t row, float value, cudaStream_t stream) {
  if (!n || !row) return;
  fill_rows_kernel<<<blocks_for(n * row), kThreads, 0, stream>>>(table, rows, row, n * row, value);
  DYNET_LITE_CUDA_LAUNCH_CHECK("fill_rows_kernel");
}

void launch_gather(float* dst, const float* const* srcs, size_t n, unsigned k, cudaStream_t stream) {
  if (!n || !k) return;
  gather_rows_kernel<<<blocks_for(n * k), kThreads, 0, stream>>>(dst, srcs, n, n * k);
  DYNET_LITE_CUDA_LAUNCH_CHECK("gather_rows_kernel");
}

void launch_scatter_add(float* const* dsts, const float* src, size_t n, unsigned k, cudaStream_t stream) {
  if (!n || !k) return;
  scatter_add_rows_kernel<<<blocks_for(n * k), kThreads, 0, stream>>>(dsts, src, n, n * k);
  DYNET_LITE_CUDA_LAUNCH_CHECK("scatter_add_rows_kernel");
}

void register_elementwise_kernels(OpTable& t) {
  set_unary<TanhF>(t, OpKind::Tanh);
  set_unary<LogisticF>(t, OpKind::Logistic);
  set_unary<RectifyF>(t, OpKind::Rectify);
  set_unary<EluF>(t, OpKind::Elu);
  set_unary<SeluF>(t, OpKind::Selu);
  set_unary<SiluF>(t, OpKind::Silu);
  set_unary<SoftsignF>(t, OpKind::Softsign);
  set_unary<ExpF>(t, OpKind::Exp);
  set_unary<LogF>(t, OpKind::Log);
  set_unary<SqrtF>(t, OpKind::Sqrt);
  set_unary<SquareF>(t, OpKind::Square);
  set_unary<CubeF>(t, OpKind::Cube);
  set_unary<AbsF>(t, OpKind::Abs);
  set_unary<ErfF>(t, OpKind::Erf);
  set_unary<LogSigmoidF>(t, OpKind::LogSigmoid);
  set_unary<NegateF>(t, OpKind::Negate);
  set_unary<AddScalarF>(t, OpKind::AddScalar);
  set_unary<MulScalarF>(t, OpKind::MultiplyScalar);
  set_unary<ScalarMinusF>(t, OpKind::ScalarMinus);
  set_unary<ScalarDivideF>(t, OpKind::ScalarDivide);
  set_unary<FlipF>(t, OpKind::FlipGradient);
  set_unary<ScaleGradF>(t, OpKind::ScaleGradient);
  t.row(OpKind::NoBackprop).forward[1] = unary_forward<CopyF>;  // blocks the gradient: no backward

  set_binary<AddB>(t, OpKind::Add);
  set_binary<SubB>(t, OpKind::Subtract);
  set_binary<MulB>(t, OpKind::CMult);
  set_binary<DivB>(t, OpKind::CDiv);
  set_binary<PowB>(t, OpKind::Pow);
  set_binary<MaxB>(t, OpKind::Max);
  set_binary<MinB>(t, OpKind::Min);

  t.row(OpKind::Sum).forward[1] = sum_forward;
  t.row(OpKind::Sum).backward[1] = sum_backward;
}

}  // namespace cuda
}  // namespace dynet_lite
