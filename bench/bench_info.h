#pragma once
// What every benchmark prints with its figures: the machine, the compiler, the
// flags and the library versions (BENCHMARKS.md, "How a figure is quoted").
#include <Eigen/Core>
#include <algorithm>
#include <fstream>
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

}  // namespace bench
