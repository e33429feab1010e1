#pragma once
// Automatic batching: groups identical operations of the instances in one graph
// and runs each group as one kernel call on a "virtual" node whose batch is the
// members' batches stacked.  Backward replays the same groups in reverse.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dynet_lite/core/node.h"

namespace dynet_lite {

/// Counters of one graph's batched execution (and of the process, see
/// autobatch_totals()).  Reported by the profile mode and the benchmarks.
struct AutobatchStats {
  uint64_t nodes = 0;            ///< nodes computed
  uint64_t kernels = 0;          ///< forward kernel calls (unbatched: one per node)
  uint64_t batched_groups = 0;   ///< kernel calls that ran more than one node
  uint64_t split_groups = 0;     ///< groups run as a few in-place pieces instead of gathering
  uint64_t bytes_gathered = 0;   ///< forward: bytes copied to make arguments contiguous
  uint64_t bytes_scattered = 0;  ///< backward: bytes of gradient added back to scattered arguments
  uint64_t plan_hits = 0;        ///< schedules reused from the plan cache
  uint64_t plan_misses = 0;      ///< schedules computed
  uint64_t graphs = 0;           ///< graphs these counters cover (for totals)
  uint64_t cse_merged = 0;       ///< expressions that equalled an earlier node (core/cse.h)
  double build_seconds = 0;      ///< from the graph's creation (or clear) to its first forward
  double schedule_seconds = 0;   ///< signatures, grouping, plan look-up
  double copy_seconds = 0;       ///< gathers and scatters (measured with --dynet-profiling only)
  double forward_seconds = 0;    ///< kernels and copies of forward
  double backward_seconds = 0;   ///< kernels and copies of backward

  void add(const AutobatchStats& o);
  /// One line: build, schedule, copy and compute times, kernels with and without batching.
  std::string summary() const;
};

/// One kernel call of a batched execution, in execution order.
struct BatchGroup {
  Node* exec;                    // the member itself (k == 1) or the virtual node
  const VariableIndex* members;  // k node indices (graph memory)
  unsigned k;
  const Tensor* const* xs;  // k > 1: arguments as the kernel saw them
  const unsigned char* stacked;  // k > 1: per argument, 1 when stacked, 0 when shared
  /// k > 1: the members' arguments, argument after argument (p * k + j), each
  /// with kVariableBit set when it needs a gradient: backward reads these
  /// instead of every member's and argument's node.
  const uint32_t* arg_ids;
  static constexpr uint32_t kVariableBit = 0x80000000u;
};

/// A schedule for a graph segment, keyed by its structure: the groups as lists of
/// node offsets from the segment's first node.
struct BatchPlan {
  std::vector<uint64_t> structure;    // exact description of the segment (compared on hit)
  std::vector<uint32_t> group_sizes;  // size of each group, in execution order
  std::vector<uint32_t> members;      // offsets, group after group
};

/// Per-graph state of the batching pass (reused capacity across graphs).
struct BatchState {
  std::vector<BatchGroup> groups;
  AutobatchStats stats;
  // scratch of one scheduling pass, indexed by node offset in the segment
  std::vector<uint32_t> sig, depth, height, pending, dep_start, dep_list, next_ready;
  std::vector<uint64_t> structure;
  std::vector<uint32_t> runs;            // lengths of a group's contiguous runs
  std::vector<std::pair<VariableIndex*, unsigned>> pieces;  // how a group runs: members, count
  std::vector<uint64_t> node_hash;       // signature hash of each node of the segment
  std::vector<uint64_t> node_check;      // a second, independent hash of its op, arity and shape
  std::vector<uint32_t> arg_start, arg_list;  // each node's arguments inside the segment (offsets), CSR
  std::vector<unsigned char> batchable;  // whether it can batch at all
  std::vector<uint32_t> seg_arg_start, seg_args;  // each node's arguments (ids | kVariableBit), CSR
  std::vector<float*> value_of;     // forward: each node's value, valid below value_of_valid
  VariableIndex value_of_valid = 0;
  struct Bucket {
    uint32_t head, tail, count;
    uint64_t height_sum;  // of the ready nodes
    uint32_t rep;  // offset of a node with this signature
    uint64_t hash;
    uint64_t check;  // the rep's node_check
  };
  std::vector<Bucket> buckets;
  std::vector<uint32_t> table;  // open addressing: bucket id + 1, 0 = empty
  std::vector<uint32_t> active;
  std::vector<uint32_t> solo;
  std::vector<uint32_t> order;
  std::vector<float*> grad_of;      // backward: each node's gradient (null when it gets none)
  std::vector<uint32_t> group_of;   // backward: the group whose gradient block holds a node's
  std::vector<float*> grad_block;   // backward: each group's gradient block (null: none) ...
  std::vector<size_t> grad_floats;  // ... its size, zeroed when first written (unzeroed)
  std::vector<uint64_t> place;      // (group << 32 | position) of each node in the schedule
  std::vector<uint64_t> keys;                               // sort keys of a group's members
  std::vector<std::pair<uint64_t, uint32_t>> keyed;         // (key, member) of a group being ordered
  std::vector<const Node*> member_nodes;
  // Pointer lists of the gathers and scatters on a GPU (one kernel per group).
  std::vector<const float*> copy_src;
  std::vector<float*> copy_dst;
  std::vector<uint32_t> group_buf;
  std::vector<uint32_t> group_sizes_buf;
  bool profiling = false;  // time copies separately (--dynet-profiling)

  void clear_groups() {
    groups.clear();
    value_of_valid = 0;
  }
};

/// Process-wide totals (all graphs, all threads), for the profile report.
AutobatchStats autobatch_totals();
void add_to_autobatch_totals(const AutobatchStats& s);
void reset_autobatch_totals();
/// Ops whose nodes never batch (the README lists them), by name.
std::vector<const char*> unbatchable_ops();

}  // namespace dynet_lite
