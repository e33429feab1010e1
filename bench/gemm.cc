// Single-thread GEMM speed of this machine: C = A * B with 512x512 float
// matrices through Eigen, the yardstick BENCHMARKS.md asks to print next to
// every throughput.
//   gemm [--n N] [--reps R]
#include <Eigen/Dense>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <vector>

#include "bench_info.h"

int main(int argc, char** argv) {
  int n = 512, reps = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
      n = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::cerr << "usage: gemm [--n N] [--reps R]\n";
      return 2;
    }
  }
  Eigen::setNbThreads(1);
  Eigen::MatrixXf A = Eigen::MatrixXf::Random(n, n), B = Eigen::MatrixXf::Random(n, n), C(n, n);
  C.noalias() = A * B;  // warm-up
  std::vector<double> gflops;
  double flops = 2.0 * n * n * n;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    C.noalias() = A * B;
    auto t1 = std::chrono::steady_clock::now();
    gflops.push_back(flops / std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  bench::print_environment(std::cout);
  double best = *std::max_element(gflops.begin(), gflops.end());
  std::cout << std::fixed << std::setprecision(2) << "gemm " << n << "x" << n << "x" << n
            << " float, 1 thread: median " << bench::median(gflops) << " GFLOP/s, best " << best << " GFLOP/s over "
            << reps << " products (checksum " << C.sum() << ")\n";
  return 0;
}
