#pragma once
// Automatic batching: groups identical operations of the instances in one graph
// and runs each group as one kernel call on a "virtual" node whose batch is the
// members' batches stacked.  Backward replays the same groups in reverse.
// This header holds what the rest of the library and the programs see: the
// strategies and the counters.  The executor's files: exec/executor.h.
#include <cstdint>
#include <string>
#include <vector>

namespace dynet_lite {

/// How a graph runs its nodes (ComputationGraph::set_autobatch, --dynet-autobatch,
/// whose integers these are).
enum class AutobatchStrategy : int {
  None = 0,    ///< plain execution, node by node in the order they were added
  Agenda = 1,  ///< repeatedly the signature whose ready nodes lie farthest from the end
  Depth = 2,   ///< all nodes of one signature at one depth together
};
/// The strategy of a set_autobatch() integer: 0 none, 2 depth, any other agenda.
inline AutobatchStrategy autobatch_strategy(int value) {
  return value == 0 ? AutobatchStrategy::None : value == 2 ? AutobatchStrategy::Depth : AutobatchStrategy::Agenda;
}

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
  uint64_t cse_merged = 0;       ///< expressions that equalled an earlier node (exec/cse.h)
  uint64_t fused_regions = 0;    ///< fused regions run (exec/fusion.h), one kernel call each
  uint64_t fused_groups = 0;     ///< groups run inside them
  double build_seconds = 0;      ///< from the graph's creation (or clear) to its first forward
  double schedule_seconds = 0;   ///< signatures, grouping, plan look-up
  double copy_seconds = 0;       ///< gathers and scatters (measured with --dynet-profiling only)
  double forward_seconds = 0;    ///< kernels and copies of forward
  double backward_seconds = 0;   ///< kernels and copies of backward

  void add(const AutobatchStats& o);
  /// One line: build, schedule, copy and compute times, kernels with and without batching.
  std::string summary() const;
};

/// Process-wide totals (all graphs, all threads), for the profile report.
AutobatchStats autobatch_totals();
void add_to_autobatch_totals(const AutobatchStats& s);
void reset_autobatch_totals();
/// Ops whose nodes never batch (docs/ops.md lists them), by name.
std::vector<const char*> unbatchable_ops();

}  // namespace dynet_lite
