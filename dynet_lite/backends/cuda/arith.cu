// GPU kernels of ops/arith.cc: binary ops with broadcasting and ops with a
// scalar (the functors of backends/elementwise_math.h), and the n-ary sum.
#include "dynet_lite/backends/cuda/map_kernels.h"
#include "dynet_lite/backends/elementwise_math.h"

namespace dynet_lite {
namespace cuda {

namespace {

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

void register_arith_kernels(OpTable& t) {
  math::for_each_binary([&t](OpKind op, const char*, auto functor) { set_binary<decltype(functor)>(t, op); });
  math::for_each_scalar_op([&t](OpKind op, const char*, auto functor) { set_map_kernels<decltype(functor)>(t, op); });
  set_gpu_kernels(t, OpKind::Sum, sum_forward, sum_backward);
}

}  // namespace cuda
}  // namespace dynet_lite
