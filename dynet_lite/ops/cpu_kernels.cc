// Every family's rows, filled by this compile's kernels: compiled once per
// instruction set (backends/cpu/isa.h); ops/op_table.cc calls the chosen one.
#include "dynet_lite/backends/cpu/isa.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

void register_cpu_ops(OpTable& t) {
  register_input_ops(t);
  register_arith_ops(t);
  register_unary_ops(t);
  register_matrix_ops(t);
  register_softmax_ops(t);
  register_loss_ops(t);
  register_reduce_ops(t);
  register_shape_ops(t);
  register_random_ops(t);
  register_norm_ops(t);
  register_trig_ops(t);
  register_stats_ops(t);
  register_structured_ops(t);
  register_conv_ops(t);
  register_linalg_ops(t);
  register_lstm_ops(t);
  register_treelstm_ops(t);
  register_device_ops(t);
}

}  // namespace dynet_lite

#ifdef DYNET_LITE_ISA
extern "C" void DYNET_LITE_ISA_ENTRY(dynet_lite_register_cpu_ops)(dynet_lite::OpTable& t) {
  dynet_lite::register_cpu_ops(t);
}
#endif
