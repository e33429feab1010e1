#pragma once
// The ONNX form of each op: a row per exportable op (what it becomes, and the
// function that writes it in canonical form, see onnx_writer.h).  An op without
// a row has no ONNX form; docs/ops.md's ONNX column is generated from these rows.
#include <string>
#include <vector>

#include "dynet_lite/core/node.h"
#include "dynet_lite/export/onnx_forms.h"
#include "dynet_lite/export/onnx_writer.h"

namespace dynet_lite {
namespace onnx_export {

/// What an emitter gets: the node, its arguments' ONNX names (canonical form)
/// and sample shapes, and how many axes precede the batch.
struct EmitArgs {
  GraphWriter& w;
  const Node& node;
  const std::vector<std::string>& in;
  const std::vector<Dim>& dims;
  /// Axes before the batch of the node's value (1 for a sequence value).
  unsigned lead;
  /// Whether argument i has those axes (a value that reads no position has not).
  const std::vector<bool>& arg_lead;
  /// The node's own value on the sample (constant leaves export it).
  const Tensor* value;
};

/// Writes the node's ONNX nodes and returns the name of its value (canonical form).
using EmitFn = std::string (*)(EmitArgs& a);

struct OnnxForm {
  const char* form;  ///< what it becomes, for the docs (e.g. "MatMul + Add")
  EmitFn emit;
};

/// The ONNX form of `op`, or nullptr when it has none.
const OnnxForm* onnx_form(OpKind op);

}  // namespace onnx_export
}  // namespace dynet_lite
