#pragma once
// The state of automatic batching in one graph: the groups run so far (replayed
// by backward) and the scratch of each step, kept from graph to graph (with the
// graph's memory, exec/graph_memory.h) so that its capacity is reused.
#include <cstdint>
#include <utility>
#include <vector>

#include "dynet_lite/core/arena.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/exec/autobatch.h"

namespace dynet_lite {

/// One kernel call of a batched execution, in execution order.
struct BatchGroup {
  Node* exec;                    // the member itself (k == 1) or the virtual node
  const VariableIndex* members;  // k node indices (graph memory)
  unsigned k;
  const Tensor* const* xs;       // k > 1: arguments as the kernel saw them
  const unsigned char* stacked;  // k > 1: per argument, 1 when stacked, 0 when shared
  /// k > 1: the members' arguments, argument after argument (p * k + j), each
  /// with kVariableBit set when it needs a gradient: backward reads these
  /// instead of every member's and argument's node.
  const uint32_t* arg_ids;
  static constexpr uint32_t kVariableBit = 0x80000000u;
  /// In a fused region (exec/fusion.h): the number of groups of the region, on
  /// each of them; 0 for a group run alone.
  uint32_t fused = 0;
  /// The region's first group: its members in lane order, as (group offset in
  /// the region, member index) pairs.
  const uint32_t* fused_tasks = nullptr;
};

/// Consecutive groups of a schedule that run as one fused region (exec/fusion.h).
struct FusedRegion {
  uint32_t first_group, groups;  // the groups [first_group, first_group + groups)
  uint32_t first_task, tasks;    // their members in Schedule::fused_tasks
};

/// The groups of a segment in execution order, as node offsets from the
/// segment's first node.
struct Schedule {
  std::vector<uint32_t> group_sizes;       // size of each group, in execution order
  std::vector<uint32_t> members;           // offsets, group after group
  std::vector<FusedRegion> fused_regions;  // in execution order (exec/fusion.h)
  /// Members of the fused regions in the order they run, as (group offset in the
  /// region, member index) pairs.
  std::vector<uint32_t> fused_tasks;
};

/// A schedule for a graph segment, keyed by its structure.
struct BatchPlan {
  std::vector<uint64_t> structure;  // exact description of the segment (compared on hit)
  Schedule schedule;
};

/// Offset of a node that is in no signature bucket (it never batches), or the
/// end of a list of offsets.
constexpr uint32_t kNoNode = 0xffffffffu;

/// What hashing a segment learns of each node, indexed by its offset in the
/// segment (exec/signature.cc); read by the scheduler and by forward.
struct SegmentNodes {
  std::vector<uint64_t> signature;       // signature hash (op and shape for a node that never batches)
  std::vector<uint64_t> check;           // a second, independent hash of its op, arity and shape
  std::vector<unsigned char> batchable;  // whether it can batch at all
  /// The arguments that lie inside the segment (as offsets), CSR.
  std::vector<uint32_t> inner_arg_start, inner_args;
  /// Every argument (node ids | BatchGroup::kVariableBit), CSR.
  std::vector<uint32_t> arg_start, arg_ids;
  /// The full description compared against a cached plan (exec/signature.cc).
  std::vector<uint64_t> structure;
};

/// Nodes of one signature, and the list of those of them ready to run.
struct SignatureBucket {
  uint32_t ready_head, ready_tail, ready_count;
  uint64_t ready_height_sum;
  uint32_t ready_min_depth;  // the shallowest ready node's depth
  /// The bucket's nodes in ScheduleScratch::bucket_nodes, by depth: [nodes_start,
  /// nodes_end); those before unready_cursor have all been ready.
  uint32_t nodes_start, nodes_end, unready_cursor;
  uint32_t representative;  // offset of a node with this signature
  uint64_t hash;
  uint64_t check;  // the representative's SegmentNodes::check
};

/// Scratch of one scheduling pass (exec/scheduler.cc), indexed by node offset.
struct ScheduleScratch {
  std::vector<uint32_t> bucket_of;                     // signature bucket, kNoNode for a node that never batches
  std::vector<uint32_t> depth;                         // longest path from the segment's start
  std::vector<uint32_t> height;                        // longest path to the segment's end
  std::vector<uint32_t> pending_args;                  // arguments in the segment not yet scheduled
  std::vector<uint32_t> dependents_start, dependents;  // readers inside the segment, CSR
  std::vector<uint32_t> dependents_fill;               // cursor while filling them
  std::vector<SignatureBucket> buckets;
  std::vector<uint32_t> bucket_table;                       // open addressing by hash: bucket id + 1, 0 = empty
  std::vector<uint32_t> next_ready;                         // agenda: next ready node of the same bucket
  std::vector<uint32_t> active_buckets;                     // agenda: buckets with ready nodes
  std::vector<uint32_t> ready_solo;                         // agenda: ready nodes that never batch
  std::vector<uint32_t> bucket_nodes;                       // agenda: each bucket's nodes by depth
  std::vector<uint32_t> depth_start;                        // agenda: counting sort by depth
  std::vector<unsigned char> was_ready;                     // agenda: whether a node has been ready
  std::vector<uint32_t> order;                              // depth: nodes sorted; agenda: the group taken
  std::vector<uint64_t> member_keys;                        // agenda: sort keys of a group's members
  std::vector<uint64_t> place;                              // (group << 32 | position) of each node in the schedule
  std::vector<std::pair<uint64_t, uint32_t>> reader_keyed;  // (reader's place, member) of a free group
  std::vector<uint32_t> fusion_position;                    // fusion: a member's position in its region
  std::vector<uint32_t> fusion_lane;                        // fusion: union-find over the region's positions
  std::vector<uint32_t> fusion_count;                       // fusion: members per lane, then each lane's start
  std::vector<uint32_t> fusion_open;                        // fusion: the groups of the region not yet closed
  std::vector<uint32_t> fusion_sizes, fusion_members;       // fusion: the schedule with each region's groups together
  std::vector<uint32_t> fusion_starts;                      // fusion: each group's first member in the schedule
  Schedule schedule;                                        // the result
};

/// Scratch of batched forward (exec/batched_forward.cc, exec/batch_memory.cc).
struct ForwardScratch {
  std::vector<uint32_t> run_lengths;                                  // lengths of a group's contiguous runs
  std::vector<unsigned char> stacked;                                 // per argument: not one value for every member
  std::vector<std::pair<VariableIndex*, unsigned>> pieces;            // how a group runs: members, count
  std::vector<std::pair<const float*, VariableIndex>> keyed_members;  // (argument address, member)
  std::vector<VariableIndex> sorted_members;
  std::vector<const float*> gather_sources;  // a GPU gather's pointer list (one kernel per group)
};

/// Scratch of batched backward (exec/batched_backward.cc).
struct BackwardScratch {
  std::vector<unsigned char> group_needs_gradient;
  std::vector<uint32_t> group_of;       // the group whose gradient block holds a node's gradient
  std::vector<float*> unzeroed_block;   // each group's gradient block until it is zeroed (null: none, or zeroed)
  std::vector<size_t> block_floats;     // ... its size
  std::vector<float*> scatter_targets;  // a GPU scatter's pointer list (one kernel per group)
  /// Fusion (exec/fusion.cc): per node, the stamp of the region being run and
  /// whether the node's gradient is claimed by it and written yet.
  std::vector<uint32_t> fused_slot;
  uint32_t fused_stamp = 0;
  /// Groups whose gradient is remade from their losses' (exec/batched_backward.cc).
  struct OnDemandRead {
    size_t group;
    uint32_t member;
    size_t record;  // in GraphMemory::on_demand_gradients
  };
  std::vector<size_t> on_demand;              // the groups left unstored
  std::vector<unsigned char> on_demand_role;  // per group: 0, a loss group or a group left unstored
  std::vector<uint32_t> member_pos;           // per node: 1 + its place in such a group, or 0
  std::vector<OnDemandRead> on_demand_reads;  // the losses reading them, by group and member
  /// While a pass is recorded as a device graph: each leaf group's accumulate
  /// call, with where the graph's host memory stood before it.  A launch of the
  /// graph runs the calls' host side again from there (which rows received
  /// gradient; the lists of rows its recorded copies read).
  bool log_accumulates = false;
  struct AccumulateCall {
    size_t group;
    Arena::Mark meta;
  };
  std::vector<AccumulateCall> accumulate_calls;
};

/// Per-graph state of the batching pass (reused capacity across graphs).
struct BatchState {
  std::vector<BatchGroup> groups;
  AutobatchStats stats;
  bool profiling = false;  // time copies separately (--dynet-profiling)

  /// Each node's value, valid below node_values_valid: groups read their
  /// members' arguments here rather than from the scattered Nodes.
  std::vector<float*> node_values;
  VariableIndex node_values_valid = 0;
  /// Each node's gradient after batched backward (null when it gets none).
  std::vector<float*> node_gradients;

  SegmentNodes segment;
  ScheduleScratch scheduling;
  ForwardScratch forward;
  BackwardScratch backward;
  std::vector<const Node*> member_nodes;  // a group's member Nodes, for the ops that take them

  void clear_groups() {
    groups.clear();
    node_values_valid = 0;
  }
};

}  // namespace dynet_lite
