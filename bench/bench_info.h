#pragma once
// What every benchmark prints with its figures: the machine, the compiler, the
// flags and the library versions (BENCHMARKS.md, "How a figure is quoted").
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace bench {

/// "model name" of the first CPU in /proc/cpuinfo.
inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

inline std::string compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("g++ ") + __VERSION__;
#else
  return "unknown";
#endif
}

inline void print_environment(std::ostream& os) {
  os << "machine:  " << cpu_model() << ", " << std::thread::hardware_concurrency() << " hardware threads\n"
     << "compiler: " << compiler() << "\n"
     << "build:    " << DYNET_LITE_BENCH_BUILD_TYPE << ", flags '" << DYNET_LITE_BENCH_FLAGS << "'\n"
     << "versions: dynet_lite " << DYNET_LITE_VERSION << ", Eigen " << EIGEN_WORLD_VERSION << '.'
     << EIGEN_MAJOR_VERSION << '.' << EIGEN_MINOR_VERSION << ", SIMD: " << Eigen::SimdInstructionSetsInUse()
     << "\n";
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Median seconds per call of `f` over `reps` timed batches of calls, each batch
/// about 2 ms long (after one warm-up call and one call that sizes the batch).
inline double seconds_per_call(const std::function<void()>& f, int reps) {
  f();
  auto t0 = std::chrono::steady_clock::now();
  f();
  const double one = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int inner = std::max(1, static_cast<int>(2e-3 / std::max(one, 1e-9)));
  std::vector<double> r;
  for (int i = 0; i < reps; ++i) {
    t0 = std::chrono::steady_clock::now();
    for (int j = 0; j < inner; ++j) f();
    r.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / inner);
  }
  return median(r);
}

/// The body of a benchmark's main(): returns what `run(argc, argv)` returns; an
/// exception ends the program with "<program>: error: <what>" on stderr and status 1.
inline int run_reporting_errors(const char* program, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace bench
