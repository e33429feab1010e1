#pragma once
/// \file dynet.h
/// ComputationGraph: one per training instance or minibatch, built with plain C++
/// control flow, run forward and backward, then cleared or destroyed.  Graph
/// memory (nodes, values, gradients, scratch) comes from arenas that are reset in
/// O(1) and handed to the next graph of the same thread.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <random>
#include <vector>

#include "dynet_lite/dim.h"
#include "dynet_lite/init.h"
#include "dynet_lite/mem.h"
#include "dynet_lite/tensor.h"

namespace dynet_lite {

using VariableIndex = unsigned;
struct Node;
struct Expression;
struct GraphMemory;
struct AutobatchStats;
class Executor;
/// The operations (core/op_kind.h) and their rows (core/op_info.h): internal.
enum class OpKind : uint16_t;
struct OpInfo;

class ComputationGraph {
 public:
  ComputationGraph();
  ~ComputationGraph();
  ComputationGraph(const ComputationGraph&) = delete;
  ComputationGraph& operator=(const ComputationGraph&) = delete;

  /// Drops every node; expressions of the old graph become stale.  O(1).
  void clear();
  /// Remembers the current size; revert() drops the nodes added since.
  void checkpoint();
  void revert();

  /// Computes every node up to `last` from scratch.
  const Tensor& forward(const Expression& last);
  /// Computes the nodes up to `last` not computed yet.
  const Tensor& incremental_forward(const Expression& last);
  const Tensor& forward(VariableIndex last);
  const Tensor& incremental_forward(VariableIndex last);
  /// The value of a node (computed on demand).
  const Tensor& get_value(VariableIndex i);
  const Tensor& get_value(const Expression& e);
  /// dE/d(node) after backward(); zeros for a node the loss does not depend on.
  /// A parameter's node may have passed its gradient straight into the
  /// parameter's (backward without `full`, on the CPU): then it reads that, and
  /// throws once something else has written to it (another use, an update).
  /// A builder's internal steps, which no caller holds (an LSTM builder's
  /// gates), keep no gradient after a backward without `full` on the CPU: it
  /// throws for them.
  const Tensor& get_gradient(VariableIndex i);
  const Tensor& get_gradient(const Expression& e);
  /// Forgets every computed value (e.g. after changing parameters).
  void invalidate();
  /// Back-propagates from a node with one element per batch element, adding the
  /// parameter gradients into the model.  `full` also computes gradients of nodes
  /// that do not depend on parameters (inputs), and keeps every node's own, for
  /// get_gradient().
  void backward(const Expression& last, bool full = false);
  void backward(VariableIndex last, bool full = false);

  /// Computes each node as soon as it is added (shows errors at their line).
  void set_immediate_compute(bool on) { immediate_compute_ = on; }
  /// Throws when a forward or backward value is NaN or infinite.
  void set_check_validity(bool on) { check_validity_ = on; }
  bool check_validity() const { return check_validity_; }
  /// 0 plain execution, 1 agenda batching, 2 depth batching (this graph only).
  void set_autobatch(int strategy) { autobatch_ = strategy; }
  int autobatch() const { return autobatch_; }
  /// Common subexpression elimination (exec/cse.h): an expression equal to one
  /// already in the graph (same pure op, arguments and parameters) returns that
  /// node.  Off, on, or (the default, -1, or --dynet-cse) on while autobatching.
  void set_cse(int mode) { cse_ = mode; }
  bool cse() const { return cse_ >= 0 ? cse_ != 0 : autobatch_ != 0; }
  /// While autobatching, runs of element-wise groups run as fused regions
  /// (exec/fusion.h).  On unless --dynet-fusion 0.
  void set_fusion(bool on) { fusion_ = on; }
  bool fusion() const { return fusion_; }
  /// Counters of automatic batching since the graph was created or cleared
  /// (include dynet_lite/exec/autobatch.h for the struct).
  AutobatchStats autobatch_stats() const;

  void print_graphviz() const;
  void print_graphviz(std::ostream& os) const;

  /// Changes when the graph is cleared; expressions remember it.  Unique among
  /// the ids of all graphs alive and of the past (until it wraps at 2^32).
  unsigned get_id() const { return id_; }
  /// The graph's place in the registry of live graphs (core/graph_registry.h),
  /// fixed for its lifetime; with get_id() it tells whether an expression's
  /// graph still exists without reading the graph.
  unsigned registry_slot() const { return slot_; }
  /// Number of nodes.
  VariableIndex size() const { return num_nodes_; }
  const Dim& get_dimension(VariableIndex i) const;
  /// Whether node i, as an expression made with graph id `graph_id` and `stamp`
  /// saw it, still exists (not cleared, not reverted away).  Until a first
  /// revert every stamp is 0, so the node itself need not be read.
  bool is_live(VariableIndex i, unsigned graph_id, unsigned stamp) const {
    return graph_id == id_ && i < num_nodes_ && (revert_count_ == 0 || node_stamp(i) == stamp);
  }
  unsigned node_stamp(VariableIndex i) const;
  /// The stamp nodes added now receive.
  unsigned current_stamp() const { return revert_count_; }
  /// Bytes reserved by this graph's arenas (values, gradients, nodes, scratch).
  size_t arena_capacity_bytes() const;
  /// The most bytes each of those arenas (the nodes' slots aside) has held at
  /// once, summed.  A thread's graphs reuse one set of arenas, so this covers
  /// the earlier graphs of the thread too.
  size_t arena_peak_bytes() const;

  // ---- used by the expression functions; not part of DyNet's API ----
  /// Adds a node of `op` over `args`, copying `params` inline, inferring its shape.
  /// `trainable` marks a parameter/lookup leaf whose gradient the model wants;
  /// `leaf_dim` gives a leaf its shape (its shape function may check it).
  VariableIndex add_node(OpKind op, const Expression* args, unsigned num_args, const void* params,
                         size_t params_size, bool trainable = false, Device* device = nullptr,
                         const Dim* leaf_dim = nullptr);
  Node& node(VariableIndex i);
  const Node& node(VariableIndex i) const;
  /// Memory valid until the graph is cleared (copies of user input data).
  void* allocate_graph_bytes(size_t bytes);
  std::mt19937& rng() { return rng_; }

 private:
  friend class Program;  // dynet_lite/compile.h: captures and replays the graph
  friend class ProgramCache;
  /// A graph on memory of its own (a compiled program's, sized to what it holds).
  /// `seeded`: its random engine takes the next graph seed (--dynet-seed's
  /// sequence); else it starts from a fixed state and the sequence is left as
  /// it is (a program that always runs with another graph's engine).
  explicit ComputationGraph(std::unique_ptr<GraphMemory> memory, bool seeded = true);
  void check_index(VariableIndex i, const char* what) const;
  /// Throws (naming `what`) unless e is a live expression of this graph.
  void check_own(const Expression& e, const char* what) const;
  void run_forward(VariableIndex last);
  void note_first_forward();
  const Tensor& parameter_node_gradient(VariableIndex i, const Node& n);
  void remake_gradient(VariableIndex i, Node& n);

  const OpInfo* ops_;  // the op table's rows
  std::unique_ptr<GraphMemory> mem_;
  VariableIndex num_nodes_ = 0;
  unsigned slot_ = 0;  // in the registry of live graphs
  unsigned id_ = 0;
  unsigned revert_count_ = 0;
  int64_t build_start_ns_ = 0;  // creation or clear(), for the profile's build time
  bool build_timed_ = false;
  bool immediate_compute_ = false;
  bool check_validity_ = false;
  int autobatch_ = 0;
  int cse_ = -1;
  bool fusion_ = true;
  std::mt19937 rng_;
  std::unique_ptr<Executor> executor_;  // runs the nodes (exec/executor.h)
};

}  // namespace dynet_lite
