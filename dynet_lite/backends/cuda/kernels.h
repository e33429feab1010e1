#pragma once
// What the kernel files of the CUDA backend share: launch helpers, the per-family
// registration functions that fill the GPU column (index 1) of the op table,
// and hooks called from the host side of the backend.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "dynet_lite/backends/cuda/cuda_device.h"
#include "dynet_lite/backends/update_rules.h"
#include "dynet_lite/core/op_info.h"

namespace dynet_lite {
namespace cuda {

constexpr unsigned kThreads = 256;
#if defined(__CUDACC__)
/// A grid-stride loop: thread i takes elements i, i + the grid's size, ...
#define DYNET_LITE_GRID_LOOP(i, n) \
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < (n); i += size_t(blockDim.x) * gridDim.x)
#endif
/// Grid size for a grid-stride loop over n elements (capped: each thread loops).
inline unsigned blocks_for(size_t n) {
  size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 8192 ? 8192 : b));
}

/// dst[0..n) = value on `stream`.
void launch_fill(float* dst, float value, size_t n, cudaStream_t stream);
/// One of the adaptive trainers' rules over n floats (update_rules.h).
void launch_update_rule(DeviceRule rule, const DeviceRuleArgs& args, float* values, const float* grads,
                        float* const* state, size_t n, cudaStream_t stream);
/// Over rows rows[0, n) of `row` floats (device index list): out[k] = the sum of
/// squares of row k; values -= rate * grads with grads = 0; table = value.
void launch_rows_squared_norm(float* out, const float* table, const unsigned* rows, unsigned n, size_t row,
                              cudaStream_t stream);
/// out[j] = the sum of squares of xs[j][0, ns[j]) for j < k (device pointer and size lists).
void launch_squared_norms(float* out, const float* const* xs, const size_t* ns, unsigned k, cudaStream_t stream);
void launch_sgd_rows(float* values, float* grads, const unsigned* rows, unsigned n, size_t row, float rate,
                     cudaStream_t stream);
void launch_fill_rows(float* table, const unsigned* rows, unsigned n, size_t row, float value, cudaStream_t stream);
/// dst[j n + i] = srcs[j][i] and dsts[j][i] += src[j n + i] (null dsts[j]
/// skipped; atomics) for j < k, i < n: the pointer lists in device memory.
void launch_gather(float* dst, const float* const* srcs, size_t n, unsigned k, cudaStream_t stream);
void launch_scatter_add(float* const* dsts, const float* src, size_t n, unsigned k, cudaStream_t stream);
/// values -= rate * grads; grads = 0 (SimpleSGD's step, fused with clearing).
void launch_sgd_step_and_clear(float* values, float* grads, size_t n, float rate, cudaStream_t stream);

/// C (m x n) = op(A) op(B) + beta C through cuBLAS, column-major, over `count`
/// batch elements with the given strides (0 broadcasts); one plain GEMM when
/// count is 1 (matrix.cu).
void gemm(CudaDevice& dev, bool ta, bool tb, size_t m, size_t n, size_t k, const float* a, size_t lda,
          long long stride_a, const float* b, size_t ldb, long long stride_b, float beta, float* c, size_t ldc,
          long long stride_c, unsigned count);

/// Indices for a kernel: copied from host memory into device memory (scratch:
/// valid during this kernel call; persistent: until the graph is cleared).
const unsigned* upload_indices(ExecContext& ctx, const unsigned* host, unsigned n, bool persistent);

/// The GPU column (index 1) of op's row: its forward and backward kernels.
inline void set_gpu_kernels(OpTable& t, OpKind op, ForwardFn f, BackwardFn b) {
  t.row(op).forward[1] = f;
  t.row(op).backward[1] = b;
}

void register_input_kernels(OpTable& t);        // inputs.cu: inputs, parameters, lookups, random leaves
void register_unary_kernels(OpTable& t);        // unary.cu: element-wise functions
void register_arith_kernels(OpTable& t);        // arith.cu: binary with broadcasting, with a scalar, sum
void register_matrix_kernels(OpTable& t);       // matrix.cu: matmul, affine_transform, transpose (cuBLAS)
void register_reduce_kernels(OpTable& t);       // reduce.cu: sums, means, softmax family
void register_shape_kernels(OpTable& t);        // shape.cu: reshape, pick*, select*, concatenate*, dropout, noise
void register_lstm_kernels(OpTable& t);         // lstm.cu: fused LSTM and Tree-LSTM steps

}  // namespace cuda
}  // namespace dynet_lite
