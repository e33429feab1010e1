// GPU kernels of ops/shape.cc (reshape, pick, pick_range, pick_batch_elems,
// select_rows/cols, concatenate, concatenate_to_batch) and ops/random.cc
// (dropout in its four shapes, noise), and ops/device.cc's to_device onto a GPU.  Index lists live in host memory and
// are uploaded for the kernel; dropout masks and noise are drawn on the host
// from the graph's engine, in the CPU kernels' order, so that a graph with the
// same seed drops the same elements on either device.
#include <cuda_runtime.h>

#include <cstring>
#include <sstream>
#include <stdexcept>
#include <random>
#include <vector>

#include "dynet_lite/backends/cuda/kernels.h"
#include "dynet_lite/backends/cuda/map_kernels.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"

namespace dynet_lite {
namespace cuda {

namespace {

inline size_t dims_product(const Dim& d, unsigned from, unsigned to) {
  size_t p = 1;
  for (unsigned k = from; k < to && k < d.nd; ++k) p *= d.d[k];
  return p;
}

__global__ void add_kernel(float* dx, const float* dy, size_t n) {
  DYNET_LITE_GRID_LOOP(i, n) dx[i] += dy[i];
}
void launch_add(CudaDevice& dev, float* dx, const float* dy, size_t n) {
  if (!n) return;
  add_kernel<<<blocks_for(n), kThreads, 0, dev.stream()>>>(dx, dy, n);
  DYNET_LITE_CUDA_LAUNCH_CHECK("add_kernel");
}

// ---------------------------------------------------------------- reshape
// y = x seen with another shape (same memory);  dx += dy
void reshape_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext&) { n.value.v = xs[0]->v; }
void identity_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                       ExecContext& ctx) {
  launch_add(device_of(ctx), dx.v, dy.v, dx.d.size());
}

// ---------------------------------------------------------------- index lists
// The host indices of an IndexSource; those read at forward time are checked
// here with the CPU kernels' messages.
const unsigned* host_indices(const op_params::IndexSource& s, const char* op, unsigned limit, int axis, const Dim& x) {
  const unsigned* idx;
  if (s.pvec) {
    DYNET_LITE_DIM_CHECK(s.pvec->size() == s.count, op << ": the index vector behind the pointer now holds "
                                                       << s.pvec->size() << " indices, but the node was built for "
                                                       << s.count);
    idx = s.pvec->data();
  } else if (s.pone) {
    idx = s.pone;
  } else {
    return s.values ? s.values : &s.one;
  }
  for (unsigned k = 0; k < s.count; ++k) {
    if (idx[k] < limit) continue;
    std::ostringstream msg;
    msg << op << ": index " << idx[k] << " is out of range for ";
    if (axis < 0)
      msg << "the batch of size " << limit << " (input " << x << ")";
    else
      msg << "dimension " << axis << " of size " << limit << " (input " << x << ")";
    // As on the CPU (ops/shape.cc): DyNet's std::invalid_argument for select_rows / select_cols.
    if (std::strcmp(op, "select_rows") == 0 || std::strcmp(op, "select_cols") == 0)
      throw std::invalid_argument(msg.str());
    throw index_error(msg.str());
  }
  return idx;
}
const unsigned* device_indices(ExecContext& ctx, const op_params::IndexSource& s, const char* op, unsigned limit,
                               int axis, const Dim& x) {
  return upload_indices(ctx, host_indices(s, op, limit, axis, x), s.count, false);
}

// ---------------------------------------------------------------- pick
// y_b[t + inner o] = x_b[t + inner (k_b + len o)]; backward adds (atomics: a
// batch of 1 in x collects every batch element of y).
template <bool kBackward>
__global__ void pick_kernel(float* x, float* y, const unsigned* idx, bool per_batch, size_t inner, size_t len,
                            size_t outer, size_t xper, unsigned xbd, size_t n) {
  DYNET_LITE_GRID_LOOP(e, n) {
    size_t per = inner * outer, b = e / per, r = e % per, o = r / inner, t = r % inner;
    size_t k = idx[per_batch ? b : 0];
    size_t src = (xbd == 1 ? 0 : b) * xper + (o * len + k) * inner + t;
    if (kBackward)
      atomicAdd(x + src, y[e]);
    else
      y[e] = x[src];
  }
}
void pick_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Tensor& x = *xs[0];
  const op_params::IndexSource& s = n.p<op_params::IndexSource>();
  const unsigned* idx = device_indices(ctx, s, "pick", x.d.d[s.dim], static_cast<int>(s.dim), x.d);
  size_t inner = dims_product(x.d, 0, s.dim), len = x.d.d[s.dim], outer = dims_product(x.d, s.dim + 1, x.d.nd);
  size_t total = n.value.d.size();
  pick_kernel<false><<<blocks_for(total), kThreads, 0, dev.stream()>>>(x.v, n.value.v, idx, s.per_batch, inner, len,
                                                                      outer, x.d.batch_size(), x.d.bd, total);
  DYNET_LITE_CUDA_LAUNCH_CHECK("pick_kernel");
}
void pick_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                   ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const op_params::IndexSource& s = n.p<op_params::IndexSource>();
  const unsigned* idx = device_indices(ctx, s, "pick", dx.d.d[s.dim], static_cast<int>(s.dim), dx.d);
  size_t inner = dims_product(dx.d, 0, s.dim), len = dx.d.d[s.dim], outer = dims_product(dx.d, s.dim + 1, dx.d.nd);
  size_t total = dy.d.size();
  pick_kernel<true><<<blocks_for(total), kThreads, 0, dev.stream()>>>(dx.v, dy.v, idx, s.per_batch, inner, len, outer,
                                                                     dx.d.batch_size(), dx.d.bd, total);
  DYNET_LITE_CUDA_LAUNCH_CHECK("pick_kernel (backward)");
}

// ---------------------------------------------------------------- pick_range
// y[t + block o] = x[start inner + t + len inner o]  (block = (end - start) inner)
template <bool kBackward>
__global__ void range_kernel(float* x, float* y, size_t block, size_t stride, size_t first, size_t n) {
  DYNET_LITE_GRID_LOOP(e, n) {
    size_t src = first + (e / block) * stride + e % block;
    if (kBackward)
      x[src] += y[e];
    else
      y[e] = x[src];
  }
}
void pick_range_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Tensor& x = *xs[0];
  const op_params::RangeParams& p = n.p<op_params::RangeParams>();
  size_t inner = dims_product(x.d, 0, p.dim), len = x.d.d[p.dim], total = n.value.d.size();
  range_kernel<false><<<blocks_for(total), kThreads, 0, dev.stream()>>>(x.v, n.value.v, (p.end - p.start) * inner,
                                                                       len * inner, p.start * inner, total);
  DYNET_LITE_CUDA_LAUNCH_CHECK("range_kernel");
}
void pick_range_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                         ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const op_params::RangeParams& p = n.p<op_params::RangeParams>();
  size_t inner = dims_product(dx.d, 0, p.dim), len = dx.d.d[p.dim], total = dy.d.size();
  range_kernel<true><<<blocks_for(total), kThreads, 0, dev.stream()>>>(dx.v, dy.v, (p.end - p.start) * inner,
                                                                      len * inner, p.start * inner, total);
  DYNET_LITE_CUDA_LAUNCH_CHECK("range_kernel (backward)");
}

// ---------------------------------------------------------------- pick_batch_elems
// y_k = x_{idx_k};  dx_{idx_k} += dy_k (atomics: an index may repeat)
template <bool kBackward>
__global__ void batch_pick_kernel(float* x, float* y, const unsigned* idx, size_t per, size_t n) {
  DYNET_LITE_GRID_LOOP(e, n) {
    size_t src = size_t(idx[e / per]) * per + e % per;
    if (kBackward)
      atomicAdd(x + src, y[e]);
    else
      y[e] = x[src];
  }
}
void pick_batch_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Tensor& x = *xs[0];
  const op_params::IndexSource& s = n.p<op_params::IndexSource>();
  const unsigned* idx = device_indices(ctx, s, op_name(n.op), x.d.bd, -1, x.d);
  size_t total = n.value.d.size();
  batch_pick_kernel<false><<<blocks_for(total), kThreads, 0, dev.stream()>>>(x.v, n.value.v, idx, x.d.batch_size(),
                                                                            total);
  DYNET_LITE_CUDA_LAUNCH_CHECK("batch_pick_kernel");
}
void pick_batch_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                         ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const op_params::IndexSource& s = n.p<op_params::IndexSource>();
  const unsigned* idx = device_indices(ctx, s, op_name(n.op), dx.d.bd, -1, dx.d);
  size_t total = dy.d.size();
  batch_pick_kernel<true><<<blocks_for(total), kThreads, 0, dev.stream()>>>(dx.v, dy.v, idx, dx.d.batch_size(), total);
  DYNET_LITE_CUDA_LAUNCH_CHECK("batch_pick_kernel (backward)");
}

// ---------------------------------------------------------------- select_rows / select_cols
// rows: y[k + m c] = x[rows[k] + r c];  cols: y_b[t + r k] = x_b[t + r cols[k]]
template <bool kBackward>
__global__ void select_rows_kernel(float* x, float* y, const unsigned* rows, size_t r, size_t m, size_t n) {
  DYNET_LITE_GRID_LOOP(e, n) {
    size_t src = (e / m) * r + rows[e % m];
    if (kBackward)
      atomicAdd(x + src, y[e]);
    else
      y[e] = x[src];
  }
}
template <bool kBackward>
__global__ void select_cols_kernel(float* x, float* y, const unsigned* cols, size_t r, size_t m, size_t xper,
                                   size_t n) {
  DYNET_LITE_GRID_LOOP(e, n) {
    size_t yper = r * m, b = e / yper, q = e % yper;
    size_t src = b * xper + size_t(cols[q / r]) * r + q % r;
    if (kBackward)
      atomicAdd(x + src, y[e]);
    else
      y[e] = x[src];
  }
}
void select_rows_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Tensor& x = *xs[0];
  const op_params::IndexSource& s = n.p<op_params::IndexSource>();
  const unsigned* rows = device_indices(ctx, s, "select_rows", x.d.rows(), 0, x.d);
  size_t total = n.value.d.size();
  select_rows_kernel<false><<<blocks_for(total), kThreads, 0, dev.stream()>>>(x.v, n.value.v, rows, x.d.rows(), s.count,
                                                                             total);
  DYNET_LITE_CUDA_LAUNCH_CHECK("select_rows_kernel");
}
void select_rows_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                          ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const op_params::IndexSource& s = n.p<op_params::IndexSource>();
  const unsigned* rows = device_indices(ctx, s, "select_rows", dx.d.rows(), 0, dx.d);
  size_t total = dy.d.size();
  select_rows_kernel<true><<<blocks_for(total), kThreads, 0, dev.stream()>>>(dx.v, dy.v, rows, dx.d.rows(), s.count,
                                                                            total);
  DYNET_LITE_CUDA_LAUNCH_CHECK("select_rows_kernel (backward)");
}
void select_cols_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Tensor& x = *xs[0];
  const op_params::IndexSource& s = n.p<op_params::IndexSource>();
  const unsigned* cols = device_indices(ctx, s, "select_cols", x.d.cols(), 1, x.d);
  size_t total = n.value.d.size();
  select_cols_kernel<false><<<blocks_for(total), kThreads, 0, dev.stream()>>>(x.v, n.value.v, cols, x.d.rows(),
                                                                             s.count, x.d.batch_size(), total);
  DYNET_LITE_CUDA_LAUNCH_CHECK("select_cols_kernel");
}
void select_cols_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                          ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const op_params::IndexSource& s = n.p<op_params::IndexSource>();
  const unsigned* cols = device_indices(ctx, s, "select_cols", dx.d.cols(), 1, dx.d);
  size_t total = dy.d.size();
  select_cols_kernel<true><<<blocks_for(total), kThreads, 0, dev.stream()>>>(dx.v, dy.v, cols, dx.d.rows(), s.count,
                                                                            dx.d.batch_size(), total);
  DYNET_LITE_CUDA_LAUNCH_CHECK("select_cols_kernel (backward)");
}

// ---------------------------------------------------------------- concatenate
// Argument x (len along dim) fills y's slice [offset, offset + len) along dim in
// every batch element: y_b[t + inner (offset + ylen o)] <- x_b[t + inner (l + len o)].
__global__ void concat_kernel(float* y, const float* x, size_t inner, size_t len, size_t ylen, size_t offset,
                              size_t outer, size_t yper, size_t xper, unsigned xbd, size_t n) {
  DYNET_LITE_GRID_LOOP(e, n) {
    size_t block = len * inner, per = block * outer;
    size_t b = e / per, r = e % per, o = r / block, q = r % block;
    y[b * yper + (o * ylen + offset) * inner + q] = x[(xbd == 1 ? 0 : b) * xper + r];
  }
}
// dx_b += dy_b's slice (over every batch element of y when x has a batch of 1)
__global__ void concat_backward_kernel(float* dx, const float* dy, size_t inner, size_t len, size_t ylen,
                                       size_t offset, size_t yper, unsigned xbd, unsigned ybd, size_t n) {
  DYNET_LITE_GRID_LOOP(e, n) {
    size_t block = len * inner, xper = n / xbd;
    size_t bx = e / xper, r = e % xper, o = r / block, q = r % block;
    unsigned b0 = xbd == 1 ? 0 : static_cast<unsigned>(bx), b1 = xbd == 1 ? ybd : b0 + 1;
    float s = 0.f;
    for (unsigned b = b0; b < b1; ++b) s += dy[b * yper + (o * ylen + offset) * inner + q];
    dx[e] += s;
  }
}
void concat_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Dim& yd = node.value.d;
  unsigned dim = node.p<op_params::ConcatParams>().dim;
  size_t inner = dims_product(yd, 0, dim), outer = dims_product(yd, dim + 1, yd.nd), ylen = yd.d[dim];
  size_t offset = 0;
  for (unsigned k = 0; k < n; ++k) {
    const Tensor& x = *xs[k];
    size_t len = x.d[dim], total = len * inner * outer * yd.bd;
    concat_kernel<<<blocks_for(total), kThreads, 0, dev.stream()>>>(node.value.v, x.v, inner, len, ylen, offset, outer,
                                                                    yd.batch_size(), x.d.batch_size(), x.d.bd, total);
    DYNET_LITE_CUDA_LAUNCH_CHECK("concat_kernel");
    offset += len;
  }
}
void concat_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const Dim& yd = dy.d;
  unsigned dim = node.p<op_params::ConcatParams>().dim;
  size_t inner = dims_product(yd, 0, dim), ylen = yd.d[dim];
  size_t offset = 0;
  for (unsigned k = 0; k < i; ++k) offset += xs[k]->d[dim];
  size_t total = dx.d.size();
  concat_backward_kernel<<<blocks_for(total), kThreads, 0, dev.stream()>>>(
      dx.v, dy.v, inner, dx.d[dim], ylen, offset, yd.batch_size(), dx.d.bd, yd.bd, total);
  DYNET_LITE_CUDA_LAUNCH_CHECK("concat_backward_kernel");
}

// y = [x_1's batch elements, x_2's, ...];  dx_i += dy[its batch elements]
void concat_batch_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  float* y = node.value.v;
  for (unsigned k = 0; k < n; ++k) {
    size_t sz = xs[k]->d.size();
    dev.copy(y, xs[k]->v, sz);
    y += sz;
  }
}
void concat_batch_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                           ExecContext& ctx) {
  size_t offset = 0;
  for (unsigned k = 0; k < i; ++k) offset += xs[k]->d.size();
  launch_add(device_of(ctx), dx.v, dy.v + offset, dx.d.size());
}

// ---------------------------------------------------------------- dropout and noise
// Element a + inner (k + len c) uses mask value a + inner c (ops/random.cc's layout).
struct MaskLayout {
  size_t inner, len, outer;
};
MaskLayout mask_layout(const Node& n) {
  const Dim& d = n.value.d;
  switch (n.op) {
    case OpKind::DropoutDim: {
      unsigned dim = n.p<op_params::RandomParams>().dim;
      size_t inner = 1;
      for (unsigned k = 0; k < dim; ++k) inner *= d.d[k];
      size_t len = d.d[dim];
      return {inner, len, d.size() / (inner * len)};
    }
    case OpKind::DropoutBatch:
      return {1, d.batch_size(), d.bd};
    case OpKind::BlockDropout:
      return {1, d.size(), 1};
    default:
      return {d.size(), 1, 1};
  }
}
__global__ void mask_kernel(float* y, const float* x, const float* mask, size_t inner, size_t len, size_t n,
                            bool accumulate) {
  DYNET_LITE_GRID_LOOP(e, n) {
    size_t a = e % inner, c = e / (inner * len);
    float v = x[e] * mask[a + inner * c];
    if (accumulate)
      y[e] += v;
    else
      y[e] = v;
  }
}
// y = x * m, m_j = [u_j >= p] / (1 - p);  dx += m * dy
void dropout_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  MaskLayout L = mask_layout(n);
  size_t msize = L.inner * L.outer;
  float p = n.p<op_params::RandomParams>().p;
  float scale = p < 1.f ? 1.f / (1.f - p) : 0.f;
  thread_local std::vector<float> host;
  host.resize(msize);
  std::bernoulli_distribution keep(1.0 - static_cast<double>(p));
  std::mt19937& rng = ctx.rng();
  for (size_t j = 0; j < msize; ++j) host[j] = keep(rng) ? scale : 0.f;
  float* mask = ctx.persistent_floats(msize);
  dev.upload(mask, host.data(), msize * sizeof(float));
  n.aux = mask;
  size_t total = n.value.d.size();
  mask_kernel<<<blocks_for(total), kThreads, 0, dev.stream()>>>(n.value.v, xs[0]->v, mask, L.inner, L.len, total, false);
  DYNET_LITE_CUDA_LAUNCH_CHECK("mask_kernel");
}
void dropout_backward(const Tensor* const*, unsigned, const Node& n, const Tensor& dy, unsigned, Tensor& dx,
                      ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  MaskLayout L = mask_layout(n);
  const float* mask = static_cast<const float*>(n.aux);
  DYNET_LITE_ASSERT(mask != nullptr, op_name(n.op) << ": backward before forward (no mask)");
  size_t total = dx.d.size();
  mask_kernel<<<blocks_for(total), kThreads, 0, dev.stream()>>>(dx.v, dy.v, mask, L.inner, L.len, total, true);
  DYNET_LITE_CUDA_LAUNCH_CHECK("mask_kernel (backward)");
}

__global__ void add2_kernel(float* y, const float* x, const float* e, size_t n) {
  DYNET_LITE_GRID_LOOP(i, n) y[i] = x[i] + e[i];
}
// y = x + e, e ~ N(0, s^2) drawn on the host;  dx += dy
void noise_forward(const Tensor* const* xs, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t sz = n.value.d.size();
  thread_local std::vector<float> host;
  host.resize(sz);
  std::normal_distribution<float> e(0.f, n.p<op_params::RandomParams>().p);
  std::mt19937& rng = ctx.rng();
  for (size_t i = 0; i < sz; ++i) host[i] = e(rng);
  float* noise = ctx.scratch_floats(sz);
  dev.upload(noise, host.data(), sz * sizeof(float));
  add2_kernel<<<blocks_for(sz), kThreads, 0, dev.stream()>>>(n.value.v, xs[0]->v, noise, sz);
  DYNET_LITE_CUDA_LAUNCH_CHECK("add2_kernel");
}

// ---------------------------------------------------------------- to_device (node on this GPU)
// y = x copied from the CPU or another GPU;  dx += dy on x's device
void to_device_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  size_t n = x.d.size();
  if (x.device->type == DeviceType::CPU) {
    device_of(ctx).upload(node.value.v, x.v, n * sizeof(float));
  } else if (x.device == ctx.device()) {
    device_of(ctx).copy(node.value.v, x.v, n);
  } else {
    CudaDevice& src = device_of(x.device);
    src.synchronize();  // x's value is ready
    CudaDevice& dev = device_of(ctx);
    DYNET_LITE_CUDA_CHECK(cudaMemcpyPeerAsync(node.value.v, dev.ordinal(), x.v, src.ordinal(), n * sizeof(float),
                                              dev.stream()));
  }
}
void to_device_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                        ExecContext& ctx) {
  size_t n = dy.d.size();
  if (dx.device == ctx.device()) {
    launch_add(device_of(ctx), dx.v, dy.v, n);
    return;
  }
  // dx on the CPU or another GPU: dy goes through the host.
  thread_local std::vector<float> host_dy, host_dx;
  host_dy.resize(n);
  device_of(ctx).copy_to_host(host_dy.data(), dy.v, n);
  if (dx.device->type == DeviceType::CPU) {
    for (size_t i = 0; i < n; ++i) dx.v[i] += host_dy[i];
    return;
  }
  host_dx.resize(n);
  dx.device->copy_to_host(host_dx.data(), dx.v, n);
  for (size_t i = 0; i < n; ++i) host_dx[i] += host_dy[i];
  dx.device->copy_from_host(dx.v, host_dx.data(), n);
}

}  // namespace

namespace {
// The gradient controls: y = x;  nobackprop: no backward;  flip_gradient:
// dx -= dy;  scale_gradient: dx += lambda dy (lambda is the op's float).
struct CopyF {
  __device__ static float f(float x, float) { return x; }
};
struct FlipF {
  __device__ static float f(float x, float) { return x; }
  __device__ static float d(float, float, float) { return -1.f; }
};
struct ScaleGradF {
  __device__ static float f(float x, float) { return x; }
  __device__ static float d(float, float, float lambda) { return lambda; }
};
}  // namespace

void register_shape_kernels(OpTable& t) {
  t.row(OpKind::NoBackprop).forward[1] = map_forward<CopyF>;  // blocks the gradient: no backward
  set_map_kernels<FlipF>(t, OpKind::FlipGradient);
  set_map_kernels<ScaleGradF>(t, OpKind::ScaleGradient);
  set_gpu_kernels(t, OpKind::Reshape, reshape_forward, identity_backward);
  set_gpu_kernels(t, OpKind::Pick, pick_forward, pick_backward);
  set_gpu_kernels(t, OpKind::PickRange, pick_range_forward, pick_range_backward);
  set_gpu_kernels(t, OpKind::PickBatchElems, pick_batch_forward, pick_batch_backward);
  set_gpu_kernels(t, OpKind::SelectRows, select_rows_forward, select_rows_backward);
  set_gpu_kernels(t, OpKind::SelectCols, select_cols_forward, select_cols_backward);
  set_gpu_kernels(t, OpKind::Concatenate, concat_forward, concat_backward);
  set_gpu_kernels(t, OpKind::ConcatenateToBatch, concat_batch_forward, concat_batch_backward);
  for (OpKind op : {OpKind::Dropout, OpKind::DropoutDim, OpKind::DropoutBatch, OpKind::BlockDropout})
    set_gpu_kernels(t, op, dropout_forward, dropout_backward);
  set_gpu_kernels(t, OpKind::Noise, noise_forward, identity_backward);
  set_gpu_kernels(t, OpKind::ToDevice, to_device_forward, to_device_backward);
}

}  // namespace cuda
}  // namespace dynet_lite
