// GPU kernels of ops/reduce.cc (sums and means over elements, the batch and
// dimensions; max_dim / min_dim) and ops/softmax.cc (softmax, log_softmax,
// logsumexp, pickneglogsoftmax).  Reductions over a group of elements run one
// block per group; the maximum is subtracted before exponentiating.
#include <cuda_runtime.h>

#include <cfloat>
#include <cstring>
#include <vector>

#include "dynet_lite/backends/cuda/kernels.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"

namespace dynet_lite {
namespace cuda {

namespace {

constexpr unsigned kGroupThreads = 256;

inline unsigned group_blocks(size_t groups) { return static_cast<unsigned>(groups < 65535 ? (groups ? groups : 1) : 65535); }

// Sum (kMax false) or maximum over the block; every thread gets the result.
template <bool kMax>
__device__ float block_reduce(float v) {
  __shared__ float shared[32];
  __shared__ float result;
  for (int off = 16; off > 0; off >>= 1) {
    float o = __shfl_down_sync(0xffffffffu, v, off);
    v = kMax ? fmaxf(v, o) : v + o;
  }
  unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    unsigned nwarps = (blockDim.x + 31) / 32;
    v = lane < nwarps ? shared[lane] : (kMax ? -FLT_MAX : 0.f);
    for (int off = 16; off > 0; off >>= 1) {
      float o = __shfl_down_sync(0xffffffffu, v, off);
      v = kMax ? fmaxf(v, o) : v + o;
    }
    if (lane == 0) result = v;
  }
  __syncthreads();
  float r = result;
  __syncthreads();  // `result` and `shared` may be reused by the next call
  return r;
}

// Where a group starts: softmax over columns (mode 0: contiguous, len = rows)
// or over rows (mode 1: stride rows, len = cols) of each batch element.
struct Groups {
  size_t count, len, stride;
  unsigned mode;
  size_t rows, per;
  __device__ size_t start(size_t g) const {
    if (mode == 0) return g * len;
    return (g / rows) * per + g % rows;
  }
};

Groups column_groups(const Dim& d) {
  size_t rows = d.rows();
  return Groups{d.size() / rows, rows, 1, 0, rows, d.batch_size()};
}
// Softmax along any dimension: lines `inner` = d[0] * ... * d[dim-1] elements
// apart, in blocks of inner * d[dim] (dim = 1 of a matrix: the rows).
Groups softmax_groups(const Dim& d, unsigned dim) {
  if (dim == 0) return column_groups(d);
  size_t inner = 1;
  for (unsigned k = 0; k < dim; ++k) inner *= d[k];
  size_t len = d[dim];
  return Groups{d.size() / len, len, inner, 1, inner, inner * len};
}

// y = exp(x - max) / sum exp(x - max)   (kLog: y = x - max - log sum exp(x - max))
template <bool kLog>
__global__ void softmax_forward_kernel(const float* x, float* y, Groups G) {
  for (size_t g = blockIdx.x; g < G.count; g += gridDim.x) {
    size_t s = G.start(g);
    float m = -FLT_MAX;
    for (size_t i = threadIdx.x; i < G.len; i += blockDim.x) m = fmaxf(m, x[s + i * G.stride]);
    m = block_reduce<true>(m);
    float z = 0.f;
    for (size_t i = threadIdx.x; i < G.len; i += blockDim.x) z += expf(x[s + i * G.stride] - m);
    z = block_reduce<false>(z);
    if (kLog) {
      float logz = m + logf(z);
      for (size_t i = threadIdx.x; i < G.len; i += blockDim.x) y[s + i * G.stride] = x[s + i * G.stride] - logz;
    } else {
      float inv = 1.f / z;
      for (size_t i = threadIdx.x; i < G.len; i += blockDim.x) y[s + i * G.stride] = expf(x[s + i * G.stride] - m) * inv;
    }
  }
}
// softmax: dx += y (dy - sum(dy y));  log_softmax: dx += dy - exp(y) sum(dy)
template <bool kLog>
__global__ void softmax_backward_kernel(const float* y, const float* dy, float* dx, Groups G) {
  for (size_t g = blockIdx.x; g < G.count; g += gridDim.x) {
    size_t s = G.start(g);
    float acc = 0.f;
    for (size_t i = threadIdx.x; i < G.len; i += blockDim.x) {
      size_t e = s + i * G.stride;
      acc += kLog ? dy[e] : dy[e] * y[e];
    }
    acc = block_reduce<false>(acc);
    for (size_t i = threadIdx.x; i < G.len; i += blockDim.x) {
      size_t e = s + i * G.stride;
      dx[e] += kLog ? dy[e] - expf(y[e]) * acc : y[e] * (dy[e] - acc);
    }
  }
}

void softmax_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  Groups G = softmax_groups(n.value.d, n.p<op_params::SoftmaxParams>().dim);
  softmax_forward_kernel<false><<<group_blocks(G.count), kGroupThreads, 0, dev.stream()>>>(xs[0]->v, n.value.v, G);
  DYNET_LITE_CUDA_LAUNCH_CHECK("softmax_forward_kernel");
}
void softmax_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                      ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  Groups G = softmax_groups(n.value.d, n.p<op_params::SoftmaxParams>().dim);
  softmax_backward_kernel<false><<<group_blocks(G.count), kGroupThreads, 0, dev.stream()>>>(n.value.v, dy.v, dx.v, G);
  DYNET_LITE_CUDA_LAUNCH_CHECK("softmax_backward_kernel");
}
void log_softmax_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  Groups G = column_groups(n.value.d);
  softmax_forward_kernel<true><<<group_blocks(G.count), kGroupThreads, 0, dev.stream()>>>(xs[0]->v, n.value.v, G);
  DYNET_LITE_CUDA_LAUNCH_CHECK("log_softmax_forward_kernel");
}
void log_softmax_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                          ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  Groups G = column_groups(n.value.d);
  softmax_backward_kernel<true><<<group_blocks(G.count), kGroupThreads, 0, dev.stream()>>>(n.value.v, dy.v, dx.v, G);
  DYNET_LITE_CUDA_LAUNCH_CHECK("log_softmax_backward_kernel");
}

// ---------------------------------------------------------------- pickneglogsoftmax
// y_b = logz_b - x_b[v_b];  logz_b kept (aux) for backward
__global__ void pnls_forward_kernel(const float* x, float* y, float* logz, const unsigned* idx, unsigned count,
                                    size_t rows, unsigned bd) {
  for (unsigned b = blockIdx.x; b < bd; b += gridDim.x) {
    const float* xb = x + b * rows;
    float m = -FLT_MAX;
    for (size_t i = threadIdx.x; i < rows; i += blockDim.x) m = fmaxf(m, xb[i]);
    m = block_reduce<true>(m);
    float z = 0.f;
    for (size_t i = threadIdx.x; i < rows; i += blockDim.x) z += expf(xb[i] - m);
    z = block_reduce<false>(z);
    if (threadIdx.x == 0) {
      float lz = m + logf(z);
      logz[b] = lz;
      y[b] = lz - xb[idx[count == 1 ? 0 : b]];
    }
  }
}
// dx_b += (softmax(x_b) - e_{v_b}) dy_b
__global__ void pnls_backward_kernel(const float* x, const float* logz, const float* dy, float* dx,
                                     const unsigned* idx, unsigned count, size_t rows, unsigned bd) {
  size_t n = rows * bd;
  DYNET_LITE_GRID_LOOP(e, n) {
    size_t b = e / rows, i = e % rows;
    float g = dy[b];
    float v = expf(x[e] - logz[b]) * g;
    if (i == idx[count == 1 ? 0 : b]) v -= g;
    dx[e] += v;
  }
}

void check_pnls(const unsigned* idx, unsigned count, const Dim& x) {
  for (unsigned k = 0; k < count; ++k) {
    if (idx[k] < x.rows()) continue;
    if (count == 1)
      DYNET_LITE_INDEX_CHECK(false, "pickneglogsoftmax: index " << idx[k] << " out of range for x " << x << " of size "
                                                                << x.rows());
    DYNET_LITE_INDEX_CHECK(false, "pickneglogsoftmax: index " << idx[k] << " (batch element " << k
                                                              << ") out of range for x " << x << " of size " << x.rows());
  }
}

void pnls_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Tensor& x = *xs[0];
  const op_params::PnlsParams& p = n.p<op_params::PnlsParams>();
  const unsigned* idx;
  if (p.pindex) {
    idx = p.pindex;
  } else if (p.pindices) {
    DYNET_LITE_DIM_CHECK(p.pindices->size() == p.count, "pickneglogsoftmax: the index vector behind the pointer now holds "
                                                            << p.pindices->size() << " indices, but the node was built for "
                                                            << p.count);
    idx = p.pindices->data();
  } else {
    idx = p.indices ? p.indices : &p.index;
  }
  check_pnls(idx, p.count, x.d);
  const unsigned bd = n.value.d.bd;
  // aux: logz (bd floats), then the indices on the device (count)
  float* keep = ctx.persistent_floats(bd + p.count);
  dev.upload(keep + bd, idx, p.count * sizeof(unsigned));
  n.aux = keep;
  pnls_forward_kernel<<<group_blocks(bd), kGroupThreads, 0, dev.stream()>>>(
      x.v, n.value.v, keep, reinterpret_cast<const unsigned*>(keep + bd), p.count, x.d.rows(), bd);
  DYNET_LITE_CUDA_LAUNCH_CHECK("pnls_forward_kernel");
}
void pnls_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                   ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const float* keep = static_cast<const float*>(n.aux);
  DYNET_LITE_ASSERT(keep != nullptr, "pickneglogsoftmax: backward before forward");
  const unsigned bd = n.value.d.bd, count = n.p<op_params::PnlsParams>().count;
  size_t rows = xs[0]->d.rows();
  pnls_backward_kernel<<<blocks_for(rows * bd), kThreads, 0, dev.stream()>>>(
      xs[0]->v, keep, dy.v, dx.v, reinterpret_cast<const unsigned*>(keep + bd), count, rows, bd);
  DYNET_LITE_CUDA_LAUNCH_CHECK("pnls_backward_kernel");
}

// ---------------------------------------------------------------- logsumexp (n-ary, element-wise)
// Argument k's element j of batch b: xs[k][(bd_k == 1 ? 0 : b) * per + j]
__global__ void logsumexp_forward_kernel(const float* const* xs, const unsigned* bds, unsigned nargs, float* y,
                                         size_t per, size_t n) {
  DYNET_LITE_GRID_LOOP(e, n) {
    size_t b = e / per, j = e % per;
    float m = -INFINITY;
    for (unsigned k = 0; k < nargs; ++k) m = fmaxf(m, xs[k][(bds[k] == 1 ? 0 : b) * per + j]);
    if (m == -INFINITY) {
      y[e] = -INFINITY;
      continue;
    }
    float s = 0.f;
    for (unsigned k = 0; k < nargs; ++k) s += expf(xs[k][(bds[k] == 1 ? 0 : b) * per + j] - m);
    y[e] = m + logf(s);
  }
}
// dx_k += exp(x_k - y) dy (summed over the batch when x_k has a batch of 1)
__global__ void logsumexp_backward_kernel(const float* x, const float* y, const float* dy, float* dx, size_t per,
                                          unsigned xbd, unsigned ybd) {
  size_t n = per * xbd;
  DYNET_LITE_GRID_LOOP(e, n) {
    size_t j = e % per;
    unsigned b0 = xbd == 1 ? 0 : static_cast<unsigned>(e / per), b1 = xbd == 1 ? ybd : b0 + 1;
    float s = 0.f;
    for (unsigned b = b0; b < b1; ++b) {
      float yv = y[b * per + j];
      if (yv != -INFINITY) s += expf(x[e] - yv) * dy[b * per + j];
    }
    dx[e] += s;
  }
}

void logsumexp_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  // The argument pointers and batch sizes, packed for the kernel.
  struct Pack {
    const float* p;
  };
  size_t words = n * 2 + n;  // pointers (2 floats each), then batch sizes
  float* dmem = ctx.scratch_floats(words);
  thread_local std::vector<unsigned char> host;
  host.resize(words * sizeof(float));
  for (unsigned k = 0; k < n; ++k) {
    const float* p = xs[k]->v;
    std::memcpy(host.data() + k * sizeof(Pack), &p, sizeof(p));
    unsigned bd = xs[k]->d.bd;
    std::memcpy(host.data() + n * sizeof(Pack) + k * sizeof(unsigned), &bd, sizeof(bd));
  }
  dev.upload(dmem, host.data(), host.size());
  const float* const* dptrs = reinterpret_cast<const float* const*>(dmem);
  const unsigned* dbds = reinterpret_cast<const unsigned*>(reinterpret_cast<const char*>(dmem) + n * sizeof(Pack));
  size_t total = node.value.d.size();
  logsumexp_forward_kernel<<<blocks_for(total), kThreads, 0, dev.stream()>>>(dptrs, dbds, n, node.value.v,
                                                                            node.value.d.batch_size(), total);
  DYNET_LITE_CUDA_LAUNCH_CHECK("logsumexp_forward_kernel");
}
void logsumexp_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                        ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t per = node.value.d.batch_size();
  logsumexp_backward_kernel<<<blocks_for(dx.d.size()), kThreads, 0, dev.stream()>>>(
      xs[i]->v, node.value.v, dy.v, dx.v, per, dx.d.bd, node.value.d.bd);
  DYNET_LITE_CUDA_LAUNCH_CHECK("logsumexp_backward_kernel");
}

// ---------------------------------------------------------------- sum/mean of elements and batches
// y_b = scale * sum_i x_bi
__global__ void sum_elems_kernel(const float* x, float* y, size_t per, unsigned bd, float scale) {
  for (unsigned b = blockIdx.x; b < bd; b += gridDim.x) {
    float s = 0.f;
    for (size_t i = threadIdx.x; i < per; i += blockDim.x) s += x[b * per + i];
    s = block_reduce<false>(s);
    if (threadIdx.x == 0) y[b] = s * scale;
  }
}
// dx_bi += scale * dy_b
__global__ void sum_elems_backward_kernel(const float* dy, float* dx, size_t per, size_t n, float scale) {
  DYNET_LITE_GRID_LOOP(e, n) dx[e] += scale * dy[e / per];
}
// y_j = scale * sum_b x_bj
__global__ void sum_batches_kernel(const float* x, float* y, size_t per, unsigned bd, float scale) {
  DYNET_LITE_GRID_LOOP(j, per) {
    float s = 0.f;
    for (unsigned b = 0; b < bd; ++b) s += x[b * per + j];
    y[j] = s * scale;
  }
}
// dx_bj += scale * dy_j
__global__ void sum_batches_backward_kernel(const float* dy, float* dx, size_t per, size_t n, float scale) {
  DYNET_LITE_GRID_LOOP(e, n) dx[e] += scale * dy[e % per];
}

template <bool kMean>
void sum_elems_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t per = xs[0]->d.batch_size();
  unsigned bd = n.value.d.bd;
  sum_elems_kernel<<<group_blocks(bd), kGroupThreads, 0, dev.stream()>>>(xs[0]->v, n.value.v, per, bd,
                                                                       kMean ? 1.f / float(per) : 1.f);
  DYNET_LITE_CUDA_LAUNCH_CHECK("sum_elems_kernel");
}
template <bool kMean>
void sum_elems_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                        ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t per = dx.d.batch_size(), n = dx.d.size();
  sum_elems_backward_kernel<<<blocks_for(n), kThreads, 0, dev.stream()>>>(dy.v, dx.v, per, n,
                                                                         kMean ? 1.f / float(per) : 1.f);
  DYNET_LITE_CUDA_LAUNCH_CHECK("sum_elems_backward_kernel");
}
template <bool kMean>
void sum_batches_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t per = xs[0]->d.batch_size();
  unsigned bd = xs[0]->d.bd;
  sum_batches_kernel<<<blocks_for(per), kThreads, 0, dev.stream()>>>(xs[0]->v, n.value.v, per, bd,
                                                                    kMean ? 1.f / float(bd) : 1.f);
  DYNET_LITE_CUDA_LAUNCH_CHECK("sum_batches_kernel");
}
template <bool kMean>
void sum_batches_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                          ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t per = dx.d.batch_size(), n = dx.d.size();
  sum_batches_backward_kernel<<<blocks_for(n), kThreads, 0, dev.stream()>>>(dy.v, dx.v, per, n,
                                                                           kMean ? 1.f / float(dx.d.bd) : 1.f);
  DYNET_LITE_CUDA_LAUNCH_CHECK("sum_batches_backward_kernel");
}

// ---------------------------------------------------------------- sum_dim / mean_dim
// x as 8 dimensions (7 + batch): kept ones give the output index (column-major,
// in order), reduced ones are summed over.
struct DimReduceLayout {
  unsigned nkept, nred;
  unsigned kept_size[8], red_size[8];
  size_t kept_in_stride[8], red_in_stride[8], kept_out_stride[8];
  size_t count;  // input elements per output element
};

DimReduceLayout dim_reduce_layout(const Dim& x, const op_params::DimReduceParams& p) {
  DimReduceLayout L{};
  L.count = 1;
  size_t in = 1, out = 1;
  for (unsigned k = 0; k < 8; ++k) {
    unsigned s = k < 7 ? x[k] : x.bd;
    bool r = k < 7 ? ((p.mask >> k) & 1u) != 0 : p.batch;
    if (s != 1) {
      if (r) {
        L.red_size[L.nred] = s;
        L.red_in_stride[L.nred++] = in;
        L.count *= s;
      } else {
        L.kept_size[L.nkept] = s;
        L.kept_in_stride[L.nkept] = in;
        L.kept_out_stride[L.nkept++] = out;
        out *= s;
      }
    }
    in *= s;
  }
  return L;
}

__global__ void dim_reduce_kernel(const float* x, float* y, size_t ny, DimReduceLayout L, float scale) {
  DYNET_LITE_GRID_LOOP(o, ny) {
    size_t r = o, base = 0;
    for (unsigned k = 0; k < L.nkept; ++k) {
      base += (r % L.kept_size[k]) * L.kept_in_stride[k];
      r /= L.kept_size[k];
    }
    float s = 0.f;
    for (size_t c = 0; c < L.count; ++c) {
      size_t q = c, off = base;
      for (unsigned k = 0; k < L.nred; ++k) {
        off += (q % L.red_size[k]) * L.red_in_stride[k];
        q /= L.red_size[k];
      }
      s += x[off];
    }
    y[o] = s * scale;
  }
}
// dx[i] += scale * dy[out(i)], i walked over all 8 dimensions of x
__global__ void dim_reduce_backward_kernel(const float* dy, float* dx, size_t nx, DimReduceLayout L, float scale) {
  DYNET_LITE_GRID_LOOP(i, nx) {
    // Decompose i over x's non-unit dimensions in order: kept and reduced interleave,
    // so walk them by increasing input stride.
    size_t o = 0;
    unsigned a = 0, b = 0;
    size_t rem = i;
    while (a < L.nkept || b < L.nred) {
      bool take_kept = b >= L.nred || (a < L.nkept && L.kept_in_stride[a] < L.red_in_stride[b]);
      if (take_kept) {
        o += (rem % L.kept_size[a]) * L.kept_out_stride[a];
        rem /= L.kept_size[a];
        ++a;
      } else {
        rem /= L.red_size[b];
        ++b;
      }
    }
    dx[i] += scale * dy[o];
  }
}

template <bool kMean>
void dim_reduce_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  DimReduceLayout L = dim_reduce_layout(xs[0]->d, n.p<op_params::DimReduceParams>());
  size_t ny = n.value.d.size();
  dim_reduce_kernel<<<blocks_for(ny), kThreads, 0, dev.stream()>>>(xs[0]->v, n.value.v, ny, L,
                                                                  kMean ? 1.f / float(L.count) : 1.f);
  DYNET_LITE_CUDA_LAUNCH_CHECK("dim_reduce_kernel");
}
template <bool kMean>
void dim_reduce_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                         ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  DimReduceLayout L = dim_reduce_layout(dx.d, n.p<op_params::DimReduceParams>());
  size_t nx = dx.d.size();
  dim_reduce_backward_kernel<<<blocks_for(nx), kThreads, 0, dev.stream()>>>(dy.v, dx.v, nx, L,
                                                                           kMean ? 1.f / float(L.count) : 1.f);
  DYNET_LITE_CUDA_LAUNCH_CHECK("dim_reduce_backward_kernel");
}

// ---------------------------------------------------------------- max_dim / min_dim
// Element (i, k, o) of x along dimension d sits at (o len + k) inner + i.
struct Axis {
  size_t inner, len, outer;
};
Axis axis_of(const Dim& x, unsigned d) {
  Axis a{1, x[d], 1};
  for (unsigned k = 0; k < d; ++k) a.inner *= x[k];
  for (unsigned k = d + 1; k < x.nd; ++k) a.outer *= x.d[k];
  a.outer *= x.bd;
  return a;
}
// y = max (or min) along the axis
template <bool kMax>
__global__ void arg_reduce_kernel(const float* x, float* y, Axis A) {
  size_t n = A.inner * A.outer;
  DYNET_LITE_GRID_LOOP(j, n) {
    size_t o = j / A.inner, i = j % A.inner;
    const float* xo = x + o * A.len * A.inner + i;
    float m = xo[0];
    for (size_t k = 1; k < A.len; ++k) {
      float v = xo[k * A.inner];
      m = kMax ? (v > m ? v : m) : (v < m ? v : m);
    }
    y[j] = m;
  }
}
// dx[first position equal to y] += dy (a NaN extreme matches nothing)
__global__ void arg_reduce_backward_kernel(const float* x, const float* y, const float* dy, float* dx, Axis A) {
  size_t n = A.inner * A.outer;
  DYNET_LITE_GRID_LOOP(j, n) {
    size_t o = j / A.inner, i = j % A.inner;
    for (size_t k = 0; k < A.len; ++k) {
      size_t e = (o * A.len + k) * A.inner + i;
      if (x[e] == y[j]) {
        dx[e] += dy[j];
        break;
      }
    }
  }
}
template <bool kMax>
void arg_reduce_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  Axis A = axis_of(xs[0]->d, n.p<op_params::ConcatParams>().dim);  // ArgReduceParams: one unsigned
  arg_reduce_kernel<kMax><<<blocks_for(A.inner * A.outer), kThreads, 0, dev.stream()>>>(xs[0]->v, n.value.v, A);
  DYNET_LITE_CUDA_LAUNCH_CHECK("arg_reduce_kernel");
}
void arg_reduce_backward(const Tensor* const* xs, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                         ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  Axis A = axis_of(dx.d, n.p<op_params::ConcatParams>().dim);
  arg_reduce_backward_kernel<<<blocks_for(A.inner * A.outer), kThreads, 0, dev.stream()>>>(xs[0]->v, n.value.v, dy.v,
                                                                                           dx.v, A);
  DYNET_LITE_CUDA_LAUNCH_CHECK("arg_reduce_backward_kernel");
}

}  // namespace

void register_reduce_kernels(OpTable& t) {
  set_gpu_kernels(t, OpKind::SumElems, sum_elems_forward<false>, sum_elems_backward<false>);
  set_gpu_kernels(t, OpKind::MeanElems, sum_elems_forward<true>, sum_elems_backward<true>);
  set_gpu_kernels(t, OpKind::SumBatches, sum_batches_forward<false>, sum_batches_backward<false>);
  set_gpu_kernels(t, OpKind::MeanBatches, sum_batches_forward<true>, sum_batches_backward<true>);
  set_gpu_kernels(t, OpKind::SumDim, dim_reduce_forward<false>, dim_reduce_backward<false>);
  set_gpu_kernels(t, OpKind::MeanDim, dim_reduce_forward<true>, dim_reduce_backward<true>);
  set_gpu_kernels(t, OpKind::MaxDim, arg_reduce_forward<true>, arg_reduce_backward);
  set_gpu_kernels(t, OpKind::MinDim, arg_reduce_forward<false>, arg_reduce_backward);
  set_gpu_kernels(t, OpKind::Softmax, softmax_forward, softmax_backward);
  set_gpu_kernels(t, OpKind::LogSoftmax, log_softmax_forward, log_softmax_backward);
  set_gpu_kernels(t, OpKind::PickNegLogSoftmax, pnls_forward, pnls_backward);
  set_gpu_kernels(t, OpKind::LogSumExp, logsumexp_forward, logsumexp_backward);
}

}  // namespace cuda
}  // namespace dynet_lite
