// Speed of the CPU backend's three products (backends/cpu/gemm.h) on the shapes
// the benchmark models run, next to Eigen's 512^3 GEMM: how much of the
// machine's rate each product reaches, and so where the kernels leave time.
//   gemm_shapes [--reps R] [M K N ...]
// With no shapes, the tagger's LSTM (200 x 128, 200 x 50 at N = 64, 16, 4)
// and the Tree-LSTM's (640 x 128 at N = 300, 100, 20; 384 x 128 at N = 1300).
#include <Eigen/Dense>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iomanip>
#include <iostream>
#include <vector>

#include "bench_info.h"
#include "dynet_lite/backends/cpu/gemm.h"

namespace {

// Median GFLOP/s of `reps` timed batches of calls of `f` (each batch ~ 2 ms).
double rate(const std::function<void()>& f, double flops, int reps) {
  return flops / bench::seconds_per_call(f, reps) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  std::vector<size_t> shapes;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (argv[i][0] >= '0' && argv[i][0] <= '9') {
      shapes.push_back(std::strtoul(argv[i], nullptr, 10));
    } else {
      std::cerr << "usage: gemm_shapes [--reps R] [M K N ...]\n";
      return 2;
    }
  }
  if (shapes.empty())
    shapes = {200, 128, 64, 200, 128, 16, 200, 128, 4, 200, 50, 64, 200, 50, 16,
              640, 128, 300, 640, 128, 100, 640, 128, 20, 384, 128, 1300};
  if (shapes.size() % 3) {
    std::cerr << "gemm_shapes: shapes come in threes (M K N), got " << shapes.size() << " numbers\n";
    return 2;
  }
  Eigen::setNbThreads(1);
  bench::print_environment(std::cout);
  {
    const int n = 512;
    Eigen::MatrixXf A = Eigen::MatrixXf::Random(n, n), B = Eigen::MatrixXf::Random(n, n), C(n, n);
    double g = rate([&] { C.noalias() = A * B; }, 2.0 * n * n * n, reps);
    std::cout << std::fixed << std::setprecision(1) << "gemm 512x512x512 (Eigen): " << g << " GFLOP/s\n";
  }
  std::cout << "    M     K     N   y=Wx GFLOP/s   dx+=W'dy   dW+=dy x'\n";
  for (size_t s = 0; s < shapes.size(); s += 3) {
    const size_t m = shapes[s], k = shapes[s + 1], n = shapes[s + 2];
    Eigen::MatrixXf w = Eigen::MatrixXf::Random(m, k), x = Eigen::MatrixXf::Random(k, n),
                    y = Eigen::MatrixXf::Zero(m, n), dw = Eigen::MatrixXf::Zero(m, k), dx = Eigen::MatrixXf::Zero(k, n);
    const double flops = 2.0 * m * k * n;
    double g1 = rate([&] { dynet_lite::cpu::gemm(w.data(), x.data(), y.data(), m, k, n, false); }, flops, reps);
    double g2 = rate([&] { dynet_lite::cpu::gemm_tn(w.data(), y.data(), dx.data(), m, k, n); }, flops, reps);
    double g3 = rate([&] { dynet_lite::cpu::gemm_nt(y.data(), x.data(), dw.data(), m, k, n); }, flops, reps);
    std::cout << std::setw(5) << m << " " << std::setw(5) << k << " " << std::setw(5) << n << "   " << std::setw(12)
              << g1 << " " << std::setw(10) << g2 << " " << std::setw(11) << g3 << "\n";
  }
  return 0;
}
