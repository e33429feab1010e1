#include "dynet_lite/core/graph_registry.h"

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace dynet_lite {

namespace registry_detail {
std::atomic<std::atomic<unsigned>*> chunks[kMaxChunks] = {};
}  // namespace registry_detail

namespace {

using namespace registry_detail;

struct Registry {
  std::atomic<unsigned> next_id{1};
  std::mutex mutex;  // guards the slot allocation below
  std::vector<unsigned> free_slots;
  unsigned num_slots = 0;

  unsigned fresh_id() {
    unsigned id = next_id.fetch_add(1, std::memory_order_relaxed);
    if (id == 0) id = next_id.fetch_add(1, std::memory_order_relaxed);  // 0 is never an id: free slots hold it
    return id;
  }
  std::atomic<unsigned>& at(unsigned slot) {
    return registry_detail::chunks[slot >> kChunkBits].load(std::memory_order_acquire)[slot & (kChunkSize - 1)];
  }
};

// Never destroyed: a static graph may be destroyed after any other static.
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

GraphRegistration register_graph() {
  Registry& r = registry();
  unsigned slot;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.free_slots.empty()) {
      slot = r.free_slots.back();
      r.free_slots.pop_back();
    } else {
      if (r.num_slots == kChunkSize * kMaxChunks)
        throw std::runtime_error("ComputationGraph: more than " + std::to_string(kChunkSize * kMaxChunks) +
                                 " graphs alive at once");
      slot = r.num_slots++;
      if ((slot & (kChunkSize - 1)) == 0) {
        auto* chunk = new std::atomic<unsigned>[kChunkSize];
        for (unsigned k = 0; k < kChunkSize; ++k) chunk[k].store(0, std::memory_order_relaxed);
        registry_detail::chunks[slot >> kChunkBits].store(chunk, std::memory_order_release);
      }
    }
  }
  const unsigned id = r.fresh_id();
  r.at(slot).store(id, std::memory_order_release);
  return {slot, id};
}

unsigned renew_graph_id(unsigned slot) {
  Registry& r = registry();
  const unsigned id = r.fresh_id();
  r.at(slot).store(id, std::memory_order_release);
  return id;
}

void unregister_graph(unsigned slot) {
  Registry& r = registry();
  r.at(slot).store(0, std::memory_order_release);
  std::lock_guard<std::mutex> lock(r.mutex);
  r.free_slots.push_back(slot);
}

}  // namespace dynet_lite
