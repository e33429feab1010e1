#include "dynet_lite/core/random.h"

namespace dynet_lite {

namespace {
std::mt19937& engine() {
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
}

}  // namespace dynet_lite
