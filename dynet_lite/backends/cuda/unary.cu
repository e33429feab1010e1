// GPU kernels of ops/unary.cc: each unary function of backends/elementwise_math.h
// mapped over its argument.
#include "dynet_lite/backends/cuda/map_kernels.h"
#include "dynet_lite/backends/elementwise_math.h"

namespace dynet_lite {
namespace cuda {

void register_unary_kernels(OpTable& t) {
  math::for_each_unary([&t](OpKind op, const char*, auto functor) { set_map_kernels<decltype(functor)>(t, op); });
}

}  // namespace cuda
}  // namespace dynet_lite
