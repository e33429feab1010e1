#pragma once
// Kernels that map one argument element by element, y = F::f(x, a) and
// dx += F::d(x, y, a) * dy, with F one of backends/elementwise_math.h's unary
// functors and a the op's float (op_params::OneFloat).  For .cu files only.
#include <cuda_runtime.h>

#include "dynet_lite/backends/cuda/kernels.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/core/exec_context.h"

namespace dynet_lite {
namespace cuda {

template <class F>
__global__ void map_forward_kernel(const float* x, float* y, size_t n, float a) {
  DYNET_LITE_GRID_LOOP(i, n) y[i] = F::f(x[i], a);
}
template <class F>
__global__ void map_backward_kernel(const float* x, const float* y, const float* dy, float* dx, size_t n, float a) {
  DYNET_LITE_GRID_LOOP(i, n) dx[i] += F::d(x[i], y[i], a) * dy[i];
}

template <class F>
void map_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t n = node.value.d.size();
  map_forward_kernel<F>
      <<<blocks_for(n), kThreads, 0, dev.stream()>>>(xs[0]->v, node.value.v, n, node.p<op_params::OneFloat>().a);
  DYNET_LITE_CUDA_LAUNCH_CHECK("map_forward_kernel");
}
template <class F>
void map_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                  ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  size_t n = node.value.d.size();
  map_backward_kernel<F><<<blocks_for(n), kThreads, 0, dev.stream()>>>(xs[0]->v, node.value.v, dy.v, dx.v, n,
                                                                       node.p<op_params::OneFloat>().a);
  DYNET_LITE_CUDA_LAUNCH_CHECK("map_backward_kernel");
}

/// The GPU column of op's row: F mapped over the argument.
template <class F>
void set_map_kernels(OpTable& t, OpKind op) {
  set_gpu_kernels(t, op, map_forward<F>, map_backward<F>);
}

}  // namespace cuda
}  // namespace dynet_lite
