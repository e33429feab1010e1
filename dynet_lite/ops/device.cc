// to_device: a node that copies its argument's value to another device.  The
// node lives on the target device (ComputationGraph::add_node lets this one op
// take an argument from another device); its gradient flows back to the
// argument's device.
//
// The kernels here run when the node is on the CPU and move data only through
// the Device interface, so they serve CPU -> CPU and GPU -> CPU alike; the CUDA
// backend fills the GPU row (CPU -> GPU, GPU -> GPU).
#include <cstring>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

Dim to_device_shape(const Tensor* const* xs, unsigned n, const Node&) {
  DYNET_LITE_DIM_CHECK(n == 1, "to_device: takes one argument, got " << n);
  return xs[0]->d;
}

// y = x (copied from x's device to the node's, a host device);  dx += dy
void to_device_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor& x = *xs[0];
  Tensor& y = node.value;
  const size_t n = x.d.size();
  if (x.device->type == DeviceType::CPU)
    std::memcpy(y.v, x.v, n * sizeof(float));
  else
    x.device->copy_to_host(y.v, x.v, n);
}

void to_device_backward(const Tensor* const*, unsigned, const Node&, const Tensor& dy, unsigned, Tensor& dx,
                        ExecContext& ctx) {
  const size_t n = dy.d.size();
  if (dx.device->type == DeviceType::CPU) {
    cpu::arr(dx) += cpu::arr(dy);
    return;
  }
  // dx lives on an accelerator: add on the host and write the sum back.
  float* host = ctx.scratch_floats(n);
  dx.device->copy_to_host(host, dx.v, n);
  cpu::ArrMap(host, static_cast<Eigen::Index>(n)) += cpu::arr(dy);
  dx.device->copy_from_host(dx.v, host, n);
}

}  // namespace

void register_device_ops(OpTable& t) {
  t.define(OpKind::ToDevice, "device", "to_device", to_device_shape, to_device_forward, to_device_backward,
           BatchKind::Never, Purity::Impure, Devices::CpuAndCuda);
}

Expression to_device(const Expression& x, Device* device) {
  ComputationGraph& g = detail::live_graph(x, "to_device");
  DYNET_LITE_ARG_CHECK(device != nullptr, "to_device: the target device is null (x is "
                                              << (x.is_stale() ? std::string("stale") : to_string(x.dim())) << ")");
  return Expression(&g, g.add_node(OpKind::ToDevice, &x, 1, nullptr, 0, false, device));
}

}  // namespace dynet_lite
