#pragma once
// The registry of live ComputationGraphs.  Each graph holds a slot for its
// lifetime and a fresh id from every construction and clear(); an Expression
// keeps both, so whether its graph still exists is answered from the registry,
// without reading the graph (which may have been destroyed).  Lookups are
// lock-free (two atomic loads): every node added checks its graph this way.
// The registry is never destroyed, so graphs that are themselves destroyed
// during static destruction still find it.

#include <atomic>

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
namespace registry_detail {
// Slots live in chunks allocated on demand and never moved or freed, so a
// lookup needs no lock.  4096 chunks of 1024 slots: four million graphs alive
// at once.  The table of chunks is constant-initialised and has a trivial
// destructor: a graph destroyed after every other static still reads it.
constexpr unsigned kChunkBits = 10;
constexpr unsigned kChunkSize = 1u << kChunkBits;
constexpr unsigned kMaxChunks = 4096;
extern std::atomic<std::atomic<unsigned>*> chunks[kMaxChunks];
}  // namespace registry_detail

/// Whether the graph that was given `id` in `slot` is alive and not cleared
/// since.  Inline: every node added asks it of its first argument.
inline bool graph_is_live(unsigned slot, unsigned id) {
  using namespace registry_detail;
  if (id == 0 || (slot >> kChunkBits) >= kMaxChunks) return false;
  const std::atomic<unsigned>* chunk = chunks[slot >> kChunkBits].load(std::memory_order_acquire);
  return chunk != nullptr && chunk[slot & (kChunkSize - 1)].load(std::memory_order_acquire) == id;
}

}  // namespace dynet_lite
