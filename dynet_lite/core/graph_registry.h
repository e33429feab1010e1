#pragma once
// The registry of live ComputationGraphs.  Each graph holds a slot for its
// lifetime and a fresh id from every construction and clear(); an Expression
// keeps both, so whether its graph still exists is answered from the registry,
// without reading the graph (which may have been destroyed).  Lookups are
// lock-free (two atomic loads): every node added checks its graph this way.
// The registry is never destroyed, so graphs that are themselves destroyed
// during static destruction still find it.

namespace dynet_lite {

/// A graph's place in the registry.
struct GraphRegistration {
  unsigned slot;
  unsigned id;
};

/// Takes a free slot and a fresh id for a new graph.
GraphRegistration register_graph();
/// Gives the graph in `slot` a fresh id (on clear()): expressions holding the old
/// one become stale.  Returns the new id.
unsigned renew_graph_id(unsigned slot);
/// Frees `slot` (the graph is being destroyed).
void unregister_graph(unsigned slot);
/// Whether the graph that was given `id` in `slot` is alive and not cleared since.
bool graph_is_live(unsigned slot, unsigned id);

}  // namespace dynet_lite
