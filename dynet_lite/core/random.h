#pragma once
// The process-wide random engine behind DyNet's --dynet-seed.  It seeds parameter
// initialisation and each new graph's own engine; graphs never share an engine,
// so threads that each run a graph do not contend for it.
#include <cstdint>
#include <mutex>
#include <random>

namespace dynet_lite {

void reseed_global_rng(uint32_t seed);
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
