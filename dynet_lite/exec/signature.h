#pragma once
// Batch signatures and the plan cache.  Two nodes of a segment can run as one
// kernel call when their signatures are equal: op, output shape, per argument
// either "the same parameter node" (shared, passed once and broadcast) or its
// shape (stacked), and the op's parameters (or its batch key for Custom ops).
// A segment's schedule is cached by its structure: each node's signature and
// where its arguments come from.
#include <cstdint>

#include "dynet_lite/exec/autobatch.h"
#include "dynet_lite/exec/batch_state.h"

namespace dynet_lite {

struct GraphMemory;

/// A parameter node is passed once to a batched kernel rather than stacked.
inline bool is_shared_leaf(const Node& a) { return a.op == OpKind::Parameter; }

/// Hashes the nodes [first, first + n) into st.segment and returns the segment's
/// plan-cache key.
uint64_t describe_segment(const GraphMemory& m, BatchState& st, VariableIndex first, uint32_t n,
                          AutobatchStrategy strategy);

/// The schedule of the segment described by describe_segment(): a cached plan
/// when its structure was seen before, else computed (exec/scheduler.h).  Counts
/// plan hits and misses in st.stats.
const Schedule& plan_segment(const GraphMemory& m, BatchState& st, VariableIndex first, uint32_t n, uint64_t key,
                             AutobatchStrategy strategy);

}  // namespace dynet_lite
