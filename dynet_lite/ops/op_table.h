#pragma once
// The table of operations: the single place that says, for every op, its name,
// how it infers its shape, its kernels per device, and how it batches (the row
// type is core/op_info.h).  Each family file under ops/ declares the rows of its
// ops (register_*_ops, one OpTable::define each); the CUDA backend fills their
// GPU column.  A test checks that no row is left empty, and docs/ops.md is
// generated from the rows (tests/op_table_doc.cc).
#include "dynet_lite/core/op_info.h"

namespace dynet_lite {

void register_input_ops(OpTable& t);
void register_arith_ops(OpTable& t);
void register_unary_ops(OpTable& t);
void register_matrix_ops(OpTable& t);
void register_softmax_ops(OpTable& t);
void register_loss_ops(OpTable& t);
void register_reduce_ops(OpTable& t);
void register_shape_ops(OpTable& t);
void register_random_ops(OpTable& t);
void register_norm_ops(OpTable& t);
void register_trig_ops(OpTable& t);
void register_stats_ops(OpTable& t);
void register_structured_ops(OpTable& t);
void register_conv_ops(OpTable& t);
void register_linalg_ops(OpTable& t);
void register_lstm_ops(OpTable& t);
void register_treelstm_ops(OpTable& t);
void register_device_ops(OpTable& t);
/// All of the above: the rows with this compile's CPU kernels (ops/cpu_kernels.cc).
void register_cpu_ops(OpTable& t);

/// Throws "<op> is not implemented on <device> (<pass>)" for an op without a
/// kernel on that device (shared by the plain and the batched executors).
[[noreturn]] void throw_missing_kernel(const OpInfo& info, const Device* device, const char* pass);

}  // namespace dynet_lite
