#pragma once
// What each op becomes in ONNX, for the docs (docs/ops.md is generated from it);
// the forms themselves are in onnx_ops.cc.
#include "dynet_lite/core/op_kind.h"

namespace dynet_lite {
namespace onnx_export {

/// The ONNX form of `op` (e.g. "MatMul + Add"), or nullptr when it has none.
const char* onnx_form_name(OpKind op);

}  // namespace onnx_export
}  // namespace dynet_lite
