#pragma once
// The process-wide random engines behind DyNet's --dynet-seed: one for parameter
// initialisation (and TensorTools), one that seeds each new graph's own engine;
// graphs never share an engine, so threads that each run a graph do not contend
// for it.
#include <cstdint>
#include <mutex>
#include <random>

namespace dynet_lite {

/// Seeds the global engine and the engine that seeds graphs.
void reseed_global_rng(uint32_t seed);
/// The seed of a new graph's engine, from an engine of its own (seeded with the
/// global seed), so that creating graphs never moves the global engine: the
/// values parameters are initialised with depend only on the seed and the
/// parameters created before, as in DyNet.
uint32_t next_graph_seed();
/// Runs `f(std::mt19937&)` with the global engine locked.
template <class F>
auto with_global_rng(F&& f) -> decltype(f(std::declval<std::mt19937&>()));
std::mutex& global_rng_mutex();
std::mt19937& global_rng_unlocked();

template <class F>
auto with_global_rng(F&& f) -> decltype(f(std::declval<std::mt19937&>())) {
  std::lock_guard<std::mutex> lock(global_rng_mutex());
  return f(global_rng_unlocked());
}

}  // namespace dynet_lite
