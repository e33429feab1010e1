// GPU kernels over plain buffers: fill, the trainers' updates (SGD, the
// adaptive rules of backends/update_rules.h, rows of lookup tables), and the
// gather / scatter-add that automatic batching uses for its arguments.
#include <cuda_runtime.h>

#include "dynet_lite/backends/cuda/kernels.h"
#include "dynet_lite/backends/update_rules.h"

namespace dynet_lite {
namespace cuda {

namespace {

__global__ void fill_kernel(float* y, float v, size_t n) { DYNET_LITE_GRID_LOOP(i, n) y[i] = v; }

__global__ void sgd_kernel(float* x, float* g, size_t n, float rate) {
  DYNET_LITE_GRID_LOOP(i, n) {
    x[i] -= rate * g[i];
    g[i] = 0.f;
  }
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
// One block per vector: strided partial sums, then a tree in shared memory.
constexpr unsigned kNormThreads = 256;
__global__ void squared_norms_kernel(float* out, const float* const* xs, const size_t* ns) {
  __shared__ float part[kNormThreads];
  const float* x = xs[blockIdx.x];
  const size_t n = ns[blockIdx.x];
  float s = 0.f;
  for (size_t i = threadIdx.x; i < n; i += kNormThreads) s += x[i] * x[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (unsigned w = kNormThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
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

void launch_squared_norms(float* out, const float* const* xs, const size_t* ns, unsigned k, cudaStream_t stream) {
  if (!k) return;
  squared_norms_kernel<<<k, kNormThreads, 0, stream>>>(out, xs, ns);
  DYNET_LITE_CUDA_LAUNCH_CHECK("squared_norms_kernel");
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

}  // namespace cuda
}  // namespace dynet_lite
