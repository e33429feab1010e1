// The CPU backend's three products (backends/cpu/gemm.h) against the GEMM
// libraries made for them, on the models' shapes, one thread, in one run:
// libxsmm (JIT kernels for small products), oneDNN (dnnl_sgemm), BLIS and
// OpenBLAS (their CBLAS interfaces).  For each shape and product the
// candidates run in interleaved rounds and the table gives each one's median
// GFLOP/s; the last column names the fastest, and whether dynet_lite's own
// product is within `--noise` of it.
//   gemm_libraries [--reps R] [--rounds N] [--noise F] [M K N ...]
// With no shapes, those of bench/gemm_shapes (the tagger's LSTM and the
// Tree-LSTM's).
//
// BLIS and OpenBLAS both export cblas_sgemm, so each is opened with dlopen
// into its own namespace and called through its own symbol; a library that is
// not installed is reported and left out.  libxsmm and oneDNN are linked.
#include <dlfcn.h>
#include <libxsmm.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "bench_info.h"
#include "dynet_lite/backends/cpu/gemm.h"
#include "dynet_lite/init.h"

namespace {

// CBLAS's enumerations (the values every CBLAS uses).
constexpr int kColMajor = 102, kNoTrans = 111, kTrans = 112;
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                            int);

/// A CBLAS in a shared library, opened into its own namespace.
struct Cblas {
  std::string name;
  CblasSgemm sgemm = nullptr;

  Cblas(std::string n, const char* soname, const char* set_threads) : name(std::move(n)) {
    void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      std::cout << name << ": not found (" << soname << "), left out\n";
      return;
    }
    sgemm = reinterpret_cast<CblasSgemm>(dlsym(h, "cblas_sgemm"));
    if (auto threads = reinterpret_cast<void (*)(int)>(dlsym(h, set_threads))) threads(1);
  }
};

/// One product of the table: C (+)= op(A) op(B), column-major, in the three
/// forms the backend runs (gemm, gemm_tn, gemm_nt).
enum class Product { Forward, GradInput, GradWeight };

struct Operands {
  size_t m, k, n;
  Eigen::MatrixXf w, x, y, dw, dx;
  Operands(size_t m_, size_t k_, size_t n_)
      : m(m_), k(k_), n(n_), w(Eigen::MatrixXf::Random(m, k)), x(Eigen::MatrixXf::Random(k, n)),
        y(Eigen::MatrixXf::Random(m, n)), dw(Eigen::MatrixXf::Zero(m, k)), dx(Eigen::MatrixXf::Zero(k, n)) {}
};

/// The column-major call (rows, cols, depth, A, lda, transA, B, ldb, transB, C, ldc, beta) of a product.
struct Call {
  int rows, cols, depth;
  const float* a;
  int lda;
  bool ta;
  const float* b;
  int ldb;
  bool tb;
  float* c;
  int ldc;
  float beta;
};

Call call_of(Operands& o, Product p) {
  const int m = int(o.m), k = int(o.k), n = int(o.n);
  switch (p) {
    case Product::Forward:  // y = W x
      return {m, n, k, o.w.data(), m, false, o.x.data(), k, false, o.y.data(), m, 0.f};
    case Product::GradInput:  // dx += W' dy
      return {k, n, m, o.w.data(), m, true, o.y.data(), m, false, o.dx.data(), k, 1.f};
    case Product::GradWeight:  // dW += dy x'
      return {m, k, n, o.y.data(), m, false, o.x.data(), k, true, o.dw.data(), m, 1.f};
  }
  return {};
}

std::function<void()> ours(Operands& o, Product p) {
  switch (p) {
    case Product::Forward:
      return [&o] { dynet_lite::cpu::gemm(o.w.data(), o.x.data(), o.y.data(), o.m, o.k, o.n, false); };
    case Product::GradInput:
      return [&o] { dynet_lite::cpu::gemm_tn(o.w.data(), o.y.data(), o.dx.data(), o.m, o.k, o.n); };
    case Product::GradWeight:
      return [&o] { dynet_lite::cpu::gemm_nt(o.y.data(), o.x.data(), o.dw.data(), o.m, o.k, o.n); };
  }
  return {};
}

std::function<void()> cblas(const Cblas& lib, const Call& c) {
  return [&lib, c] {
    lib.sgemm(kColMajor, c.ta ? kTrans : kNoTrans, c.tb ? kTrans : kNoTrans, c.rows, c.cols, c.depth, 1.f, c.a,
              c.lda, c.b, c.ldb, c.beta, c.c, c.ldc);
  };
}

// dnnl_sgemm is row-major: the column-major C = A B is the row-major C' = B' A'.
std::function<void()> onednn(const Call& c) {
  return [c] {
    dnnl_sgemm(c.tb ? 'T' : 'N', c.ta ? 'T' : 'N', c.cols, c.rows, c.depth, 1.f, c.b, c.ldb, c.a, c.lda, c.beta, c.c,
               c.ldc);
  };
}

// libxsmm's JIT kernel for the exact shape (null when libxsmm makes none).
std::function<void()> xsmm(const Call& c) {
  const int flags = (c.ta ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) | (c.tb ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
  const float alpha = 1.f, beta = c.beta;
  const libxsmm_blasint lda = c.lda, ldb = c.ldb, ldc = c.ldc;
  libxsmm_smmfunction f =
      libxsmm_smmdispatch(c.rows, c.cols, c.depth, &lda, &ldb, &ldc, &alpha, &beta, &flags, nullptr);
  if (!f) return {};
  return [f, c] { f(c.a, c.b, c.c); };
}

const char* product_name(Product p) {
  return p == Product::Forward ? "y=Wx" : p == Product::GradInput ? "dx+=W'dy" : "dW+=dy x'";
}

int run(int argc, char** argv) {
  int reps = 9, rounds = 3;
  double noise = 0.05;
  std::vector<size_t> shapes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (a == "--noise" && i + 1 < argc) {
      noise = std::atof(argv[++i]);
    } else if (a[0] >= '0' && a[0] <= '9') {
      shapes.push_back(std::strtoul(argv[i], nullptr, 10));
    } else {
      std::cerr << "usage: gemm_libraries [--reps R] [--rounds N] [--noise F] [M K N ...]\n";
      return 2;
    }
  }
  if (shapes.empty())
    shapes = {200, 128, 64, 200, 128, 16, 200, 128, 4, 200, 50, 64, 200, 50, 16,
              640, 128, 300, 640, 128, 100, 640, 128, 20, 384, 128, 1300};
  if (shapes.size() % 3 || reps < 1 || rounds < 1) {
    std::cerr << "gemm_libraries: shapes come in threes (M K N), reps and rounds at least 1\n";
    return 2;
  }
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  setenv("BLIS_NUM_THREADS", "1", 1);
  omp_set_num_threads(1);  // oneDNN's threads (its OpenMP runtime has read the environment already)
  Eigen::setNbThreads(1);
  bench::print_environment(std::cout);
  std::cout << "dynet_lite CPU kernels: " << dynet_lite::cpu_kernels() << "\n";
  libxsmm_init();
  const Cblas openblas("OpenBLAS", "libopenblas.so.0", "openblas_set_num_threads");
  const Cblas blis("BLIS", "libblis.so.4", "bli_thread_set_num_threads");
  std::vector<std::string> names = {"dynet_lite", "libxsmm", "oneDNN", "BLIS", "OpenBLAS"};
  std::cout << "median GFLOP/s of " << rounds << " interleaved rounds of " << reps << " timed batches each\n\n";
  std::cout << "| M | K | N | product |";
  for (const auto& n : names) std::cout << " " << n << " |";
  std::cout << " fastest | dynet_lite / fastest |\n|---|---|---|---|";
  for (size_t i = 0; i < names.size(); ++i) std::cout << "---|";
  std::cout << "---|---|\n";
  for (size_t s = 0; s < shapes.size(); s += 3) {
    Operands o(shapes[s], shapes[s + 1], shapes[s + 2]);
    const double flops = 2.0 * o.m * o.k * o.n;
    for (Product p : {Product::Forward, Product::GradInput, Product::GradWeight}) {
      const Call c = call_of(o, p);
      std::vector<std::function<void()>> fs = {ours(o, p), xsmm(c), onednn(c),
                                               blis.sgemm ? cblas(blis, c) : std::function<void()>(),
                                               openblas.sgemm ? cblas(openblas, c) : std::function<void()>()};
      std::vector<std::vector<double>> rates(fs.size());
      for (int r = 0; r < rounds; ++r)
        for (size_t i = 0; i < fs.size(); ++i)
          if (fs[i]) rates[i].push_back(flops / bench::seconds_per_call(fs[i], reps) * 1e-9);
      std::cout << "| " << o.m << " | " << o.k << " | " << o.n << " | " << product_name(p) << " |";
      size_t best = 0;
      std::vector<double> med(fs.size(), 0);
      for (size_t i = 0; i < fs.size(); ++i) {
        if (rates[i].empty()) {
          std::cout << " - |";
          continue;
        }
        med[i] = bench::median(rates[i]);
        if (med[i] > med[best]) best = i;
        std::cout << " " << std::fixed << std::setprecision(1) << med[i] << " |";
      }
      std::cout << " " << names[best] << " | " << std::setprecision(2) << med[0] / med[best]
                << (med[0] >= (1 - noise) * med[best] ? "" : " (library faster)") << " |\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return bench::run_reporting_errors("gemm_libraries", run, argc, argv); }
