// GPU kernels of ops/matrix.cc: products through cuBLAS (column-major, like the
// CPU backend), the bias of affine_transform, and transpose.
//
// Batches follow DyNet: W (m x k) times x (k x n) per batch element, a batch of 1
// broadcast.  With W shared, x's batch elements are extra columns: one GEMM.
// With both batched, one strided-batched GEMM (stride 0 broadcasts a batch of 1).
#include <cuda_runtime.h>

#include "dynet_lite/backends/cuda/cublas_library.h"
#include "dynet_lite/backends/cuda/kernels.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"

namespace dynet_lite {
namespace cuda {

namespace {
inline int as_int(size_t v) { return static_cast<int>(v); }
}  // namespace

void gemm(CudaDevice& dev, bool ta, bool tb, size_t m, size_t n, size_t k, const float* a, size_t lda,
          long long stride_a, const float* b, size_t ldb, long long stride_b, float beta, float* c, size_t ldc,
          long long stride_c, unsigned count) {
  const float one = 1.f;
  const CublasLibrary& blas = cublas_library();
  cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (count == 1) {
    DYNET_LITE_CUBLAS_CHECK(blas.sgemm(dev.cublas(), oa, ob, as_int(m), as_int(n), as_int(k), &one, a, as_int(lda), b,
                                        as_int(ldb), &beta, c, as_int(ldc)));
  } else {
    DYNET_LITE_CUBLAS_CHECK(blas.sgemm_strided_batched(dev.cublas(), oa, ob, as_int(m), as_int(n), as_int(k), &one, a,
                                                      as_int(lda), stride_a, b, as_int(ldb), stride_b, &beta, c,
                                                      as_int(ldc), stride_c, static_cast<int>(count)));
  }
}

namespace {

// Y (beta=0: =, beta=1: +=) W X for every batch element of Y.
void product(CudaDevice& dev, const Tensor& w, const Tensor& x, const Tensor& y, float beta) {
  const size_t m = w.d.rows(), k = w.d.cols();
  if (w.d.bd == 1 && x.d.bd == y.d.bd) {
    const size_t n = size_t(x.d.cols()) * x.d.bd;
    gemm(dev, false, false, m, n, k, w.v, m, 0, x.v, k, 0, beta, y.v, m, 0, 1);
    return;
  }
  const size_t n = x.d.cols();
  gemm(dev, false, false, m, n, k, w.v, m, w.d.bd == 1 ? 0 : (long long)(m * k), x.v, k,
       x.d.bd == 1 ? 0 : (long long)(k * n), beta, y.v, m, (long long)(m * n), y.d.bd);
}

// dW += dY X^T (summed over the batch elements that share W).
void product_backward_w(CudaDevice& dev, const Tensor& x, const Tensor& dy, Tensor& dw) {
  const size_t m = dw.d.rows(), k = dw.d.cols();
  if (dw.d.bd == 1 && x.d.bd == dy.d.bd) {
    const size_t n = size_t(dy.d.cols()) * dy.d.bd;
    gemm(dev, false, true, m, k, n, dy.v, m, 0, x.v, k, 0, 1.f, dw.v, m, 0, 1);
    return;
  }
  const size_t n = x.d.cols();
  if (dw.d.bd != dy.d.bd) {
    // W and x both shared while y is batched (affine_transform with a batched
    // bias): every batch element adds into the same dW, one after the other.
    for (unsigned b = 0; b < dy.d.bd; ++b)
      gemm(dev, false, true, m, k, n, dy.v + b * m * n, m, 0, x.batch_ptr(b), k, 0, 1.f, dw.v, m, 0, 1);
    return;
  }
  // W batched: one product per batch element.
  gemm(dev, false, true, m, k, n, dy.v, m, (long long)(m * n), x.v, k, x.d.bd == 1 ? 0 : (long long)(k * n), 1.f,
       dw.v, m, (long long)(m * k), dy.d.bd);
}

// dX += W^T dY (summed over the batch elements that share X).
void product_backward_x(CudaDevice& dev, const Tensor& w, const Tensor& dy, Tensor& dx) {
  const size_t m = w.d.rows(), k = w.d.cols();
  if (w.d.bd == 1 && dx.d.bd == dy.d.bd) {
    const size_t n = size_t(dy.d.cols()) * dy.d.bd;
    gemm(dev, true, false, k, n, m, w.v, m, 0, dy.v, m, 0, 1.f, dx.v, k, 0, 1);
    return;
  }
  const size_t n = dx.d.cols();
  if (dx.d.bd == dy.d.bd) {
    gemm(dev, true, false, k, n, m, w.v, m, w.d.bd == 1 ? 0 : (long long)(m * k), dy.v, m, (long long)(m * n), 1.f,
         dx.v, k, (long long)(k * n), dy.d.bd);
    return;
  }
  // x shared by a batched W: every batch element adds into the same dX, so the
  // products run one after the other (a batched GEMM would race on dX).
  for (unsigned b = 0; b < dy.d.bd; ++b)
    gemm(dev, true, false, k, n, m, w.batch_ptr(b), m, 0, dy.v + b * m * n, m, 0, 1.f, dx.v, k, 0, 1);
}

// y = W x;  dW += dy x^T,  dx += W^T dy
void matmul_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  product(device_of(ctx), *xs[0], *xs[1], node.value, 0.f);
}
void matmul_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  if (i == 0)
    product_backward_w(dev, *xs[1], dy, dx);
  else
    product_backward_x(dev, *xs[0], dy, dx);
}

// y[i] = bias element for output element i: the bias is y's shape, or a column
// {rows}; with a batch of bbd (1 broadcasts).
__global__ void bias_broadcast_kernel(float* y, const float* b, size_t n, size_t per, size_t rows, size_t bper,
                                      unsigned bbd) {
  DYNET_LITE_GRID_LOOP(i, n) {
    size_t batch = i / per, j = i % per;
    size_t src = (bbd == 1 ? 0 : batch * bper) + (bper == per ? j : j % rows);
    y[i] = b[src];
  }
}
// db[e] += the elements of dy that bias element e was added to.
__global__ void bias_backward_kernel(float* db, const float* dy, size_t nb, size_t per, size_t rows, size_t bper,
                                     unsigned bbd, unsigned ybd) {
  DYNET_LITE_GRID_LOOP(e, nb) {
    size_t bb = e / bper, j = e % bper;
    unsigned b0 = bbd == 1 ? 0 : static_cast<unsigned>(bb), b1 = bbd == 1 ? ybd : b0 + 1;
    size_t cols = bper == per ? 1 : per / rows;
    float s = 0.f;
    for (unsigned b = b0; b < b1; ++b)
      for (size_t c = 0; c < cols; ++c) s += dy[b * per + c * rows + j];
    db[e] += s;
  }
}

// y = b + sum_k W_k x_k
void affine_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Tensor& b = *xs[0];
  Tensor& y = node.value;
  const size_t sz = y.d.size();
  if (b.d.size() == sz) {
    dev.copy(y.v, b.v, sz);
  } else {
    bias_broadcast_kernel<<<blocks_for(sz), kThreads, 0, dev.stream()>>>(y.v, b.v, sz, y.d.batch_size(), y.d.rows(),
                                                                          b.d.batch_size(), b.d.bd);
    DYNET_LITE_CUDA_LAUNCH_CHECK("bias_broadcast_kernel");
  }
  for (unsigned k = 1; k < n; k += 2) product(dev, *xs[k], *xs[k + 1], y, 1.f);
}
// db += dy (summed where broadcast), dW_k += dy x_k^T, dx_k += W_k^T dy
void affine_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  if (i == 0) {
    size_t nb = dx.d.size();
    bias_backward_kernel<<<blocks_for(nb), kThreads, 0, dev.stream()>>>(
        dx.v, dy.v, nb, dy.d.batch_size(), dy.d.rows(), dx.d.batch_size(), dx.d.bd, dy.d.bd);
    DYNET_LITE_CUDA_LAUNCH_CHECK("bias_backward_kernel");
  } else if (i % 2 == 1) {
    product_backward_w(dev, *xs[i + 1], dy, dx);
  } else {
    product_backward_x(dev, *xs[i - 1], dy, dx);
  }
}

// ---------------------------------------------------------------- transpose
// Output dims k = input dims perm[k]; strides of the input seen in output order.
struct TransposeLayout {
  unsigned nd;
  unsigned osize[DYNET_MAX_TENSOR_DIM];
  unsigned istride[DYNET_MAX_TENSOR_DIM];
  size_t per;
};

TransposeLayout transpose_layout(const Dim& x, const op_params::TransposeParams& p) {
  TransposeLayout L{};
  size_t xstride[DYNET_MAX_TENSOR_DIM];
  size_t s = 1;
  for (unsigned k = 0; k < DYNET_MAX_TENSOR_DIM; ++k) {
    xstride[k] = s;
    s *= x[k];
  }
  L.nd = p.n;
  for (unsigned k = 0; k < p.n; ++k) {
    L.osize[k] = x[p.perm[k]];
    L.istride[k] = static_cast<unsigned>(xstride[p.perm[k]]);
  }
  L.per = x.batch_size();
  return L;
}

__device__ inline size_t transpose_source(const TransposeLayout& L, size_t o) {
  size_t b = o / L.per, r = o % L.per, in = b * L.per;
  for (unsigned k = 0; k < L.nd; ++k) {
    in += (r % L.osize[k]) * L.istride[k];
    r /= L.osize[k];
  }
  return in;
}
__global__ void transpose_forward_kernel(const float* x, float* y, size_t n, TransposeLayout L) {
  DYNET_LITE_GRID_LOOP(o, n) y[o] = x[transpose_source(L, o)];
}
__global__ void transpose_backward_kernel(const float* dy, float* dx, size_t n, TransposeLayout L) {
  DYNET_LITE_GRID_LOOP(o, n) dx[transpose_source(L, o)] += dy[o];  // a permutation: no two o meet
}

// y = x with its dimensions permuted;  dx += dy permuted back
void transpose_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t n = node.value.d.size();
  TransposeLayout L = transpose_layout(xs[0]->d, node.p<op_params::TransposeParams>());
  transpose_forward_kernel<<<blocks_for(n), kThreads, 0, dev.stream()>>>(xs[0]->v, node.value.v, n, L);
  DYNET_LITE_CUDA_LAUNCH_CHECK("transpose_forward_kernel");
}
void transpose_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                        ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t n = dy.d.size();
  TransposeLayout L = transpose_layout(xs[0]->d, node.p<op_params::TransposeParams>());
  transpose_backward_kernel<<<blocks_for(n), kThreads, 0, dev.stream()>>>(dy.v, dx.v, n, L);
  DYNET_LITE_CUDA_LAUNCH_CHECK("transpose_backward_kernel");
}

}  // namespace

void register_matrix_kernels(OpTable& t) {
  t.row(OpKind::MatMul).forward[1] = matmul_forward;
  t.row(OpKind::MatMul).backward[1] = matmul_backward;
  t.row(OpKind::AffineTransform).forward[1] = affine_forward;
  t.row(OpKind::AffineTransform).backward[1] = affine_backward;
  t.row(OpKind::Transpose).forward[1] = transpose_forward;
  t.row(OpKind::Transpose).backward[1] = transpose_backward;
}

}  // namespace cuda
}  // namespace dynet_lite
