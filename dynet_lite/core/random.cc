#include "dynet_lite/core/random.h"

namespace dynet_lite {

namespace {
std::mt19937& engine() {
  static std::mt19937 e(std::random_device{}());
  return e;
}
std::mt19937& graph_seeder() {
  static std::mt19937 e(std::random_device{}());
  return e;
}
}  // namespace

std::mutex& global_rng_mutex() {
  static std::mutex m;
  return m;
}
std::mt19937& global_rng_unlocked() { return engine(); }

void reseed_global_rng(uint32_t seed) {
  std::lock_guard<std::mutex> lock(global_rng_mutex());
  engine().seed(seed);
  // A stream of its own, apart from the one parameters draw from.
  std::seed_seq graphs{seed, 0x9e3779b9u};
  graph_seeder().seed(graphs);
}

uint32_t next_graph_seed() {
  std::lock_guard<std::mutex> lock(global_rng_mutex());
  return graph_seeder()();
}

}  // namespace dynet_lite
