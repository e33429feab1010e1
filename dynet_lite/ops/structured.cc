#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

void register_structured_ops(OpTable&) {}

}  // namespace dynet_lite
