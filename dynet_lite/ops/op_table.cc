#include "dynet_lite/ops/op_table.h"

#include <string>
#include <vector>

#include "dynet_lite/except.h"

namespace dynet_lite {

OpInfo& OpTable::define(OpKind op, const char* family, const char* name, ShapeFn shape, ForwardFn forward,
                        BackwardFn backward, BatchKind batch, Purity purity, Devices devices) {
  OpInfo& r = row(op);
  DYNET_LITE_ASSERT(!r.name, "op table: " << name << " is declared twice (first as " << r.name << ")");
  r.family = family;
  r.name = name;
  r.shape = shape;
  r.forward[static_cast<unsigned>(DeviceType::CPU)] = forward;
  r.backward[static_cast<unsigned>(DeviceType::CPU)] = backward;
  r.batch = batch;
  r.pure = purity == Purity::Pure;
  r.devices = devices;
  return r;
}

namespace {

struct FilledTable {
  OpTable table;
  std::vector<std::string> incomplete_names;
  std::vector<const char*> incomplete;
  FilledTable() {
    register_input_ops(table);
    register_arith_ops(table);
    register_unary_ops(table);
    register_matrix_ops(table);
    register_softmax_ops(table);
    register_loss_ops(table);
    register_reduce_ops(table);
    register_shape_ops(table);
    register_random_ops(table);
    register_norm_ops(table);
    register_trig_ops(table);
    register_stats_ops(table);
    register_structured_ops(table);
    register_conv_ops(table);
    register_linalg_ops(table);
    register_lstm_ops(table);
    register_treelstm_ops(table);
    register_device_ops(table);
    register_cuda_kernels(table);
    // A build with the CUDA backend fills a GPU column; it must match each row's Devices.
    bool cuda_built = false;
    for (unsigned i = 0; i < kNumOps; ++i) cuda_built |= table.row(static_cast<OpKind>(i)).forward[1] != nullptr;
    for (unsigned i = 0; i < kNumOps; ++i) {
      const OpInfo& r = table.row(static_cast<OpKind>(i));
      bool has_backward = r.backward[0] || r.accumulate || r.blocks_gradient;
      if (!r.name || !r.shape || !r.forward[0] || !has_backward)
        incomplete_names.push_back(r.name ? std::string(r.name) : "op #" + std::to_string(i));
      else if (cuda_built && (r.forward[1] != nullptr) != (r.devices == Devices::CpuAndCuda))
        incomplete_names.push_back(std::string(r.name) + " (CUDA kernels and the row's Devices differ)");
    }
    for (const std::string& s : incomplete_names) incomplete.push_back(s.c_str());
  }
};
const FilledTable& filled() {
  static const FilledTable t;
  return t;
}
}  // namespace

const OpInfo& op_info(OpKind op) { return filled().table.row(op); }
const OpInfo* op_rows() { return &filled().table.row(static_cast<OpKind>(0)); }

const char* const* incomplete_ops(unsigned* count) {
  *count = static_cast<unsigned>(filled().incomplete.size());
  return filled().incomplete.data();
}

}  // namespace dynet_lite
