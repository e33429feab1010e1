#pragma once
/// \file onnx.h
/// Export to ONNX (opset 17): a network built once on a sample input leaves as a
/// standard ONNX model that ONNX Runtime (or any ONNX consumer) runs without
/// dynet_lite.
///
/// The exporter reads the nodes of a graph built on a sample.  The user names the
/// leaves that become graph inputs (their batch axis is dynamic), the
/// expressions that become outputs, and the builders whose recurrence should
/// become one ONNX `Scan` over a dynamic sequence axis (a fused vanilla LSTM:
/// ONNX `LSTM` nodes, see set_native_lstm):
///
/// \code
///   ComputationGraph cg;                       // built on a sample sentence
///   fwd.new_graph(cg); fwd.start_new_sequence();
///   std::vector<Expression> xs, hs, ys;
///   for (unsigned w : sample) xs.push_back(lookup(cg, E, w));
///   for (auto& x : xs) hs.push_back(fwd.add_input(x));
///   for (auto& h : hs) ys.push_back(log_softmax(W * h + b));
///   OnnxExporter ex(cg);
///   ex.add_sequence_input(xs, "words");        // int64 [seq, batch]
///   ex.add_recurrence(fwd);                    // the steps become one Scan
///   ex.add_sequence_output(ys, "log_probs");   // float [seq, batch, tags]
///   ex.save("tagger.onnx");
/// \endcode
///
/// Layout: an expression of shape {d0, d1, ...} with batch B is an ONNX tensor of
/// shape [B, ..., d1, d0] (the same memory order, row-major); a sequence
/// expression gets a leading [seq] axis.  A vector {n} is [B, n] at the graph's
/// inputs and outputs.  Parameters and lookup tables become initializers under
/// their names.  Every exported model passes ONNX's checker before it is written,
/// and the file is written atomically.
///
/// What does not export is an error (dynet_lite::onnx_error) naming the op and the
/// node: an op without an ONNX form (docs/ops.md lists which export), random
/// ops (dropout must be disabled), an expression of another graph, a node that
/// reads a sequence position it was not declared with.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dynet_lite/dynet.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/rnn.h"
#include "dynet_lite/treelstm.h"

namespace dynet_lite {

/// What the exporter throws for a graph it cannot express in ONNX.
struct onnx_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

class OnnxExporter {
 public:
  /// Exports from `cg`, a graph built once on a sample input.
  explicit OnnxExporter(ComputationGraph& cg);
  ~OnnxExporter();
  OnnxExporter(const OnnxExporter&) = delete;
  OnnxExporter& operator=(const OnnxExporter&) = delete;

  /// A graph input named `name`: an input() leaf (float, its shape with a
  /// dynamic batch axis) or a lookup() leaf (int64 row ids, shape [batch]).
  void add_input(const Expression& leaf, const std::string& name);
  /// A sequence input: steps[t] is position t's leaf (all lookups of one table,
  /// or all input() leaves of one shape).  Becomes int64 [seq, batch] (lookups)
  /// or float [seq, batch, ...].
  void add_sequence_input(const std::vector<Expression>& steps, const std::string& name);
  /// Declares the current sequence of `builder` (its steps in this graph) a
  /// recurrence: it exports as one Scan over the sequence axis, its body traced
  /// from one step of the sample (which needs at least two steps).  Its inputs
  /// must be positions of a sequence input, in order or in reverse.
  void add_recurrence(const RNNBuilder& builder);
  /// Declares the tree of `builder` (a NaryTreeLSTMBuilder whose nodes were
  /// added in post-order with ids 0, 1, ..., root last; leaves with the lookup
  /// of one row of a table as input, inner nodes with N children and no input):
  /// it exports as one Loop over the nodes of a tree given at run time as
  ///   `<name>_words`    int64 [nodes]: the table row of each leaf, -1 for inner nodes
  ///   `<name>_children` int64 [nodes, N]: the children of each inner node (any
  ///                     value for a leaf), nodes in post-order, root last.
  /// The root's state (the builder's final_s / back()) may then feed outputs.
  void add_tree(const TreeLSTMBuilder& builder, const std::string& name);
  /// Whether a recurrence whose every layer is the fused vanilla LSTM
  /// (VanillaLSTMBuilder without layer norm, CompactVanillaLSTMBuilder, no
  /// dropout) exports as ONNX `LSTM` nodes, one per layer, which runtimes run
  /// as one kernel (the default), or as a `Scan` like the other builders.
  void set_native_lstm(bool on);
  /// A graph output named `name` (float, dynamic batch axis).
  void add_output(const Expression& e, const std::string& name);
  /// A sequence output: steps[t] is computed the same way from position t's
  /// inputs for every t (checked), and exports once with a [seq] axis.
  void add_sequence_output(const std::vector<Expression>& steps, const std::string& name);

  /// The model, serialised (ONNX protobuf); checked by ONNX's checker.
  std::string serialize() const;
  /// Writes the model to `path` atomically (a temporary file renamed over it); a
  /// failure leaves no partial file and throws a std::runtime_error naming it.
  void save(const std::string& path) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dynet_lite
