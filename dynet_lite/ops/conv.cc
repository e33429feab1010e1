#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

void register_conv_ops(OpTable&) {}

}  // namespace dynet_lite
