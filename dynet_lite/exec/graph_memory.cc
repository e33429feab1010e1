// The graph's memory bundle and the per-thread pool of bundles.
#include "dynet_lite/exec/graph_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <iostream>
#include <new>
#include <type_traits>

#include "dynet_lite/dynet.h"
#include "dynet_lite/exec/executor.h"

namespace dynet_lite {

namespace {
// Set when this thread's pool is destroyed: at thread exit, or for the main
// thread at program exit, before static objects.  A graph destroyed after that
// (a static or global one) frees its memory instead of pooling it.  A plain
// bool, trivially destructible, stays readable until the thread is gone.
thread_local bool pool_destroyed = false;

struct Pool {
  std::vector<std::unique_ptr<GraphMemory>> free;
  ~Pool() { pool_destroyed = true; }
};
// This thread's pool, or null once it is destroyed.
Pool* thread_pool() {
  if (pool_destroyed) return nullptr;
  thread_local Pool pool;
  return &pool;
}
}  // namespace

GraphMemory::GraphMemory(size_t hint_bytes) : meta(cpu_device(), std::min<size_t>(hint_bytes, 64 * 1024)), hint(hint_bytes) {
  device_arenas.push_back(std::make_unique<DeviceArenas>(cpu_device(), hint_bytes));
  xs.reserve(16);
}

static_assert(std::is_trivially_destructible<Node>::value, "a chunk's nodes are not destroyed one by one");

namespace {
constexpr size_t kChunkBytes = GraphMemory::kChunkNodes * sizeof(Node);
}  // namespace

GraphMemory::~GraphMemory() {
  for (Node* c : node_chunks) munmap(c, kChunkBytes);
}

// Mapped, not taken from the C heap: the pages past a small graph's nodes stay
// untouched, where freed heap memory would be resident already.
void GraphMemory::add_node_chunk() {
  void* p = mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  node_chunks.push_back(static_cast<Node*>(p));
}

DeviceArenas& GraphMemory::arenas_slow(Device* d) {
  for (auto& a : device_arenas)
    if (a->device == d) return *a;
  device_arenas.push_back(std::make_unique<DeviceArenas>(d, hint));
  return *device_arenas.back();
}

void GraphMemory::retire_batch_state() {
  if (!batch_state_) return;
  batch_state_->clear_groups();
  if (batch_state_->stats.nodes > 0) {
    batch_state_->stats.graphs = 1;
    if (profiling_flag > 0)
      std::cerr << "[dynet_lite profile] " << batch_state_->stats.summary() << std::endl;
  }
  add_to_autobatch_totals(batch_state_->stats);
  batch_state_->stats = AutobatchStats();
}

void GraphMemory::reset() {
  retire_batch_state();
  meta.reset();
  for (auto& a : device_arenas) {
    a->values.reset();
    a->gathers.reset();
    a->grads.reset();
    a->kept.reset();
    a->scratch.reset();
  }
  checkpoints.clear();
  gradient_views.clear();
  loss_nodes.clear();
  on_demand_gradients.clear();
  cse.reset();
  padded_value_floats = 0;
  padded_value_nodes = 0;
  padded_parameter_floats = 0;
}

size_t GraphMemory::capacity_bytes() const {
  size_t s = meta.capacity_bytes() + node_chunks.size() * kChunkNodes * sizeof(Node);
  for (auto& a : device_arenas)
    s += a->values.capacity_bytes() + a->gathers.capacity_bytes() + a->grads.capacity_bytes() +
         a->kept.capacity_bytes() + a->scratch.capacity_bytes();
  return s;
}

size_t GraphMemory::peak_bytes() const {
  size_t s = meta.peak_bytes();
  for (auto& a : device_arenas)
    s += a->values.peak_bytes() + a->gathers.peak_bytes() + a->grads.peak_bytes() + a->kept.peak_bytes() +
         a->scratch.peak_bytes();
  return s;
}

std::unique_ptr<GraphMemory> acquire_graph_memory() {
  Pool* p = thread_pool();
  if (p && !p->free.empty()) {
    std::unique_ptr<GraphMemory> m = std::move(p->free.back());
    p->free.pop_back();
    return m;
  }
  return std::make_unique<GraphMemory>(default_arena_bytes());
}

void release_graph_memory(std::unique_ptr<GraphMemory> m) {
  m->reset();
  Pool* p = thread_pool();
  // A thread rarely has more than a few graphs alive; keep a handful for reuse.
  if (p && p->free.size() < 8) p->free.push_back(std::move(m));
}

void drain_graph_memory_pool() {
  if (Pool* p = thread_pool()) p->free.clear();
}

void cleanup() { drain_graph_memory_pool(); }

}  // namespace dynet_lite
