#pragma once
// The scheduler of automatic batching: which nodes of a segment run together,
// and in what order.
//  - agenda: repeatedly the signature whose ready nodes have the greatest
//    average height (the longest path to the end of the segment), unless
//    more nodes of that signature, no deeper than its ready ones, are still
//    to come;
//  - depth: all nodes of one signature at one depth together.
// Nodes that never batch run alone as soon as they are ready.
#include <cstdint>

#include "dynet_lite/exec/autobatch.h"
#include "dynet_lite/exec/batch_state.h"

namespace dynet_lite {

struct GraphMemory;

/// Fills st.scheduling.schedule with the schedule of the segment's n nodes from
/// `first`, described in st.segment (exec/signature.h).  `strategy`: Agenda or Depth.
void schedule_segment(const GraphMemory& m, BatchState& st, VariableIndex first, uint32_t n,
                      AutobatchStrategy strategy);

}  // namespace dynet_lite
