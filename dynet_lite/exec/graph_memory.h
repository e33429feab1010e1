#pragma once
// Everything a graph allocates, in one bundle that outlives the graph: when a
// ComputationGraph is destroyed its bundle goes back to a per-thread pool and the
// next graph of that thread takes it, chunks and all.
#include <algorithm>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "dynet_lite/backends/cpu/transposed_weights.h"
#include "dynet_lite/backends/cpu/weight_grads.h"
#include "dynet_lite/core/arena.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/input_grads.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/exec/batch_state.h"
#include "dynet_lite/exec/cse.h"

namespace dynet_lite {

class Executor;

/// The arenas of one device.
struct DeviceArenas {
  DeviceArenas(Device* d, size_t hint)
      : device(d),
        values(d, hint),
        gathers(d, std::min<size_t>(hint, 64 * 1024)),
        grads(d, hint),
        kept(d, std::min<size_t>(hint, 64 * 1024)),
        scratch(d, std::min<size_t>(hint, 64 * 1024)) {}
  Device* device;
  Arena values;   // forward values and memory kept for backward
  // Arguments that batched execution copied side by side (kept for backward).
  // Apart from `values`, so that the outputs of groups run one after another
  // lie one after another, and a later group that reads two of them (the
  // forward and the backward LSTM's cells of one step) reads them in place.
  Arena gathers;
  Arena grads;    // gradients, reset by each backward()
  // Backward on the CPU: what a node's calls share and what the weight-gradient
  // terms left for later read (ExecContext::kept_floats), taken back between
  // nodes (GraphMemory::end_backward_node).
  Arena kept;
  Arena scratch;  // per-kernel temporaries
};

/// What backward knows of a node's gradient.
enum class GradientMark : unsigned char {
  None,   ///< no gradient flows to it
  Flows,  ///< it gets a gradient
  /// It gets a gradient, part of which kernels left for later as weight-gradient
  /// terms (weight_grads.h): they are summed into it before anything reads it.
  PendingWeightGrads,
  /// A dense parameter's node whose gradient plain backward summed straight into
  /// the parameter's own (GraphMemory::parameter_gradients).
  InParameter,
  /// A large argument of a loss that remakes its gradient on demand
  /// (OpInfo::input_gradient): plain backward makes it a block of columns at a
  /// time for the node's own backward, and stores it only when asked
  /// (GraphMemory::on_demand_gradients).
  OnDemand,
  /// An internal node (Node::internal) whose gradient's memory plain backward
  /// gave to another internal node once this one's backward had run.
  Released,
};

/// A node's gradient in plain backward's block: whole groups of 8 floats, so
/// that every gradient starts 32-byte aligned.
constexpr size_t kGradAlignFloats = 8;
inline size_t padded_gradient_floats(size_t n) { return (n + kGradAlignFloats - 1) & ~(kGradAlignFloats - 1); }

/// The batch elements of a block of gradient remade on demand
/// (GradientMark::OnDemand) for a node of shape `d`: 8 MB of them, and never so
/// few that the weight-gradient products thin out.  A node is left unstored
/// only when it has two blocks or more.
inline unsigned on_demand_columns(const Dim& d) {
  constexpr size_t kBlockFloats = size_t(1) << 21;
  const size_t col = std::max<size_t>(d.batch_size(), 1);
  return static_cast<unsigned>(std::max<size_t>(WeightGradSink::kMaxColumns, kBlockFloats / col));
}

struct GraphMemory {
  static constexpr unsigned kChunkShift = 10;
  static constexpr unsigned kChunkNodes = 1u << kChunkShift;

  explicit GraphMemory(size_t hint);
  ~GraphMemory();
  GraphMemory(const GraphMemory&) = delete;
  GraphMemory& operator=(const GraphMemory&) = delete;

  Node& node(VariableIndex i) { return node_chunks[i >> kChunkShift][i & (kChunkNodes - 1)]; }
  const Node& node(VariableIndex i) const { return node_chunks[i >> kChunkShift][i & (kChunkNodes - 1)]; }
  /// The slot for node i, adding a chunk of nodes when needed.  A chunk's
  /// slots are constructed as they are first used (the nodes are added in
  /// order), so that a small graph touches only the memory of its nodes: a
  /// compiled program keeps its graph, and a cache may keep thousands.
  Node& node_slot(VariableIndex i) {
    if ((i >> kChunkShift) >= node_chunks.size()) add_node_chunk();
    Node& n = node(i);
    if (i >= constructed_nodes) {
      new (&n) Node;
      constructed_nodes = i + 1;
    }
    return n;
  }
  void add_node_chunk();
  /// Arenas of a device (the CPU's are always first).
  DeviceArenas& arenas(Device* d) {
    if (d == device_arenas.front()->device) return *device_arenas.front();
    return arenas_slow(d);
  }
  DeviceArenas& arenas_slow(Device* d);
  /// The start of a backward pass: no gradient, kept memory, pending weight
  /// term or transposed weight of an earlier pass is left.
  void begin_backward() {
    for (auto& a : device_arenas) {
      a->grads.reset();
      a->kept.reset();
    }
    weight_grads.reset();
    input_grads.clear();
    transposes.reset(&device_arenas.front()->grads);
    parameter_gradients.clear();
    on_demand_gradients.clear();
  }
  /// What backward offers the kernels of a device: on the CPU, the pass's
  /// transposed weights and the kept memory; elsewhere nothing.
  void offer_backward_memory(ExecContext& ctx, DeviceArenas& da) {
    if (da.device->type != DeviceType::CPU) return;
    ctx.set_transposes(&transposes);
    ctx.set_kept(&da.kept);
  }
  /// Backward on the CPU, before a node's first kernel call: takes back the kept
  /// memory (DeviceArenas::kept) when no weight-gradient term reads it, summing
  /// the pending terms first once it holds kKeptBytes or more.  Every pass over
  /// the same graph (a compiled program's tape included) decides alike.
  void end_backward_node(DeviceArenas& da) {
    if (da.kept.used_bytes() == 0) return;
    if (!weight_grads.empty()) {
      if (!end_backward_node_flushes(da)) return;
      weight_grads.flush_all(da.scratch);
    }
    da.kept.rewind(Arena::Mark{});
  }
  static constexpr size_t kKeptBytes = size_t(1) << 20;
  /// Whether end_backward_node(da) would take the kept memory back now.
  bool end_backward_node_rewinds(const DeviceArenas& da) const {
    return da.kept.used_bytes() != 0 && (weight_grads.empty() || end_backward_node_flushes(da));
  }
  /// Whether end_backward_node(da) would sum every pending term now.
  bool end_backward_node_flushes(const DeviceArenas& da) const {
    return !weight_grads.empty() && da.kept.used_bytes() >= kKeptBytes;
  }
  /// Forgets every node and value.  O(1) per chunk kept.
  void reset();
  size_t capacity_bytes() const;
  size_t peak_bytes() const;

  std::vector<Node*> node_chunks;     // storage for kChunkNodes nodes each
  VariableIndex constructed_nodes = 0;  // the slots below this one hold a Node
  Arena meta;  // argument lists, copies of user data
  std::vector<std::unique_ptr<DeviceArenas>> device_arenas;
  std::vector<const Tensor*> xs;     // argument tensors of the node being run
  std::vector<GradientMark> marks;   // backward: which nodes get a gradient
  /// Plain backward on the CPU: the nodes whose gradient no kernel has written
  /// yet (not even zeroed), 1 each.
  std::vector<unsigned char> unwritten;
  /// The nodes marked InParameter, each with its parameter's gradient_writes
  /// just after: while the count is unchanged, the parameter's gradient is the
  /// node's.
  struct ParameterGradient {
    VariableIndex node;
    uint64_t writes;
  };
  std::vector<ParameterGradient> parameter_gradients;
  /// Nodes of ops with an OpInfo::input_gradient, as added (some may have been
  /// reverted since): the losses whose argument's gradient may be left unstored.
  std::vector<VariableIndex> loss_nodes;
  /// The nodes the last backward marked OnDemand, and how their loss remakes
  /// their gradient (OpInfo::input_gradient): the loss's node (a batched
  /// group's own), its argument as its kernel saw it, its gradient, and the
  /// node's batch elements among the argument's.  `made`: where get_gradient
  /// remade it, once.
  struct OnDemandGradient {
    VariableIndex node;
    const Node* loss;
    Tensor x;
    const float* dy;
    unsigned b0, b1;
    float* made;
  };
  std::vector<OnDemandGradient> on_demand_gradients;
  /// What plain backward's passes over nodes left unstored work with, kept from
  /// node to node and graph to graph: such a pass allocates nothing from the C
  /// heap.  (The library products it runs allocate and free large buffers,
  /// after which glibc serves blocks of up to their size from its heap, and one
  /// block left there would keep the freed memory under it resident.)
  struct OnDemandBuffers {
    std::vector<unsigned> active;      // the arguments that get a gradient
    std::vector<float*> targets;       // where each of them is added
    std::vector<std::mutex*> mutexes;  // held during the pass
    std::vector<Tensor> part_args;     // a block's argument tensors
    std::vector<const Tensor*> part_xs;
  };
  OnDemandBuffers on_demand_buffers;
  /// Plain backward's gradient slots of internal nodes (Node::internal): those
  /// in use (by node) and those free again, each with its floats.  Kept from
  /// graph to graph so that a pass allocates nothing.
  struct GradientSlot {
    VariableIndex node;
    uint32_t floats;
    float* at;
  };
  std::vector<GradientSlot> internal_slots, free_slots;
  WeightGradSink weight_grads;       // backward: weight gradients left for later
  InputGradSink input_grads;         // backward of a compiled program: operands' terms left for later
  TransposedWeights transposes;      // backward: W^T of the CPU's products, for the pass
  SubexpressionTable cse;            // the nodes a new node may equal
  /// get_gradient's tensors, which stay put for the caller's reference.
  std::unordered_map<VariableIndex, Tensor> gradient_views;
  /// The values' floats of every node so far, each padded as plain backward's
  /// gradient block lays them out (padded_gradient_floats): that block's size
  /// for a pass from the last node, known without reading every node again.
  size_t padded_value_floats = 0;
  VariableIndex padded_value_nodes = 0;  // the nodes it covers
  /// The part of padded_value_floats that dense parameters' nodes take (ops
  /// with an OpInfo::dense_parameter): the block's bottom, from which plain
  /// backward gives them their gradient.
  size_t padded_parameter_floats = 0;

  struct Checkpoint {
    VariableIndex num_nodes;
    VariableIndex evaluated;
    size_t padded_value_floats;
    size_t padded_parameter_floats;
    Arena::Mark meta;
    std::vector<Arena::Mark> values;
    std::vector<Arena::Mark> gathers;
  };
  std::vector<Checkpoint> checkpoints;
  /// Where a compiled program's capture left the arenas (exec/replay.cc), one
  /// mark per device arena: before its first forward (plain replay allocates
  /// the values again, in the same order) and after it (batched replay keeps
  /// the values and groups and takes back what came after).
  struct CaptureMarks {
    Arena::Mark meta;
    std::vector<Arena::Mark> values_before, values_after, gathers_after;
    /// The chunks (memory and size) up to values_after and gathers_after of
    /// each device, one list after the other: a batched capture's values lie
    /// there (Executor::take_back_layout).
    std::vector<std::pair<const char*, size_t>> chunks;
  };
  CaptureMarks capture;
  size_t hint;

  /// The executor of the bundle's last graph, kept so that the next graph
  /// makes its own in the same storage (ComputationGraph's constructor): a
  /// warm loop of graphs allocates nothing.
  std::unique_ptr<Executor> spare_executor;

  /// State of automatic batching, created on first use.
  BatchState& batch_state() {
    if (!batch_state_) batch_state_ = std::make_unique<BatchState>();
    return *batch_state_;
  }
  bool has_batch_groups() const { return batch_state_ && !batch_state_->groups.empty(); }
  /// Drops the batch groups and adds this graph's counters to the process totals.
  void retire_batch_state();
  std::unique_ptr<BatchState> batch_state_;
};

/// A bundle from the calling thread's pool (or a new one).
std::unique_ptr<GraphMemory> acquire_graph_memory();
void release_graph_memory(std::unique_ptr<GraphMemory> m);
/// Frees the calling thread's pooled bundles (cleanup()).
void drain_graph_memory_pool();

}  // namespace dynet_lite
