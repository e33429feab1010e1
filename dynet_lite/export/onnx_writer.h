#pragma once
// Writing ONNX graphs (as onnx_model.h's data): one GraphWriter per graph
// (the model's main graph, each Scan body), constants shared as initializers of
// the main graph (visible from the bodies as outer-scope names).
//
// The layout every exported value follows ("canonical form"): an expression of
// shape {d0, ..., d_{r-1}} (r = max(nd, 2)) with batch B is an ONNX tensor
// [lead..., B, d_{r-1}, ..., d0], the memory order of dynet_lite's column-major
// tensors read row-major.  `lead` axes come before the batch: none in the main
// graph and in Scan bodies, [seq] for sequence values.  Every op addresses
// dimensions with negative axes (dimension k is axis -(k + 1), the batch axis
// -(r + 1)), so one emitter serves values with and without the sequence axis.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dynet_lite/dim.h"
#include "dynet_lite/export/onnx_model.h"

namespace dynet_lite {

struct ParameterStorage;
struct LookupParameterStorage;

namespace onnx_export {

/// Rank of an expression's dimensions in canonical form (vectors are matrices).
inline unsigned canon_rank(const Dim& d) { return d.nd < 2 ? 2u : d.nd; }
/// The canonical dims without the batch: d_{r-1}, ..., d0.
std::vector<int64_t> canon_dims(const Dim& d);
/// The ONNX axis of dimension k (negative, from the end).
inline int64_t dim_axis(unsigned k) { return -static_cast<int64_t>(k) - 1; }
/// The ONNX axis of the batch of a value of shape d.
inline int64_t batch_axis(const Dim& d) { return -static_cast<int64_t>(canon_rank(d)) - 1; }

/// Where the initializers of the model live (the main graph) and how names are
/// made unique.
struct ModelState {
  GraphIr* main = nullptr;
  std::map<std::string, int> used;            // name -> times handed out
  std::map<const void*, std::string> params;  // storage -> its initializer
  /// `base`, or `base_2`, `base_3`, ... when taken.
  std::string unique(const std::string& base);
  /// The initializer of a parameter, [1, canonical dims], under its name (made
  /// once per storage).
  std::string parameter(const ParameterStorage* p);
  /// The initializer of a lookup table, [rows, canonical dims of a row].
  std::string lookup_table(const LookupParameterStorage* lp);
};

class GraphWriter {
 public:
  GraphWriter(GraphIr* graph, ModelState* model) : g_(graph), m_(model) {}

  /// Adds a node of `op` (ONNX op type) and returns it; its output is a fresh name.
  NodeIr* add(const std::string& op, const std::vector<std::string>& inputs, const std::string& hint = "");
  /// add() and return the output name.
  std::string op(const std::string& op, const std::vector<std::string>& inputs, const std::string& hint = "");
  static const std::string& out(const NodeIr* n) { return n->output(0); }

  /// Constants, as initializers of the main graph.
  std::string ints(const std::vector<int64_t>& v, bool as_vector = true);
  std::string floats(const std::vector<float>& v, const std::vector<int64_t>& shape);
  std::string scalar(float v) { return floats({v}, {}); }
  /// A named float initializer (a parameter).
  std::string initializer(const std::string& name, const float* data, const std::vector<int64_t>& shape);

  // Small compositions used by many ops.
  std::string slice(const std::string& x, int64_t axis, int64_t start, int64_t end);
  std::string unsqueeze(const std::string& x, const std::vector<int64_t>& axes);
  std::string squeeze(const std::string& x, const std::vector<int64_t>& axes);
  /// Reshape to [lead zeros (copied), batch copied, dims...].
  std::string reshape_keep_lead(const std::string& x, unsigned lead_and_batch, const std::vector<int64_t>& dims);
  /// x of canonical rank `from` made rank `to` by unit axes after the batch.
  std::string align(const std::string& x, unsigned from, unsigned to);

  static void set_int(NodeIr* n, const char* name, int64_t v);
  static void set_float(NodeIr* n, const char* name, float v);
  static void set_ints(NodeIr* n, const char* name, const std::vector<int64_t>& v);
  static void set_string(NodeIr* n, const char* name, const std::string& v);
  /// A graph attribute (a Scan or Loop body), moved into the node.
  static void set_graph(NodeIr* n, const char* name, GraphIr&& g);

  GraphIr* graph() { return g_; }
  ModelState* model() { return m_; }

 private:
  GraphIr* g_;
  ModelState* m_;
};

/// Declares a tensor value (graph input or output) with symbolic and fixed dims.
void set_tensor_type(ValueInfoIr* v, ElemType elem_type, const std::vector<std::string>& symbolic,
                     const std::vector<int64_t>& dims);

}  // namespace onnx_export
}  // namespace dynet_lite
