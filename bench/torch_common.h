#pragma once
// What the libtorch reference programs (bench/torch_*.cc) share: DyNet's
// initialisation and clipping rules written for libtorch tensors, one thread, the
// BLAS libtorch calls, and the machine figures printed with the results.
#include <dlfcn.h>
#include <sys/stat.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_info.h"

namespace torch_bench {

constexpr double CLIP_THRESHOLD = 5.0;  // DyNet's default: the global L2 norm of the gradients

/// DyNet's Glorot-uniform: scale sqrt(3 * nd) / sqrt(sum of dims), where a lookup
/// table counts only its row dimension.
inline torch::Tensor glorot(std::vector<int64_t> dims, bool lookup = false) {
  double sum = 0;
  const size_t nd = lookup ? dims.size() - 1 : dims.size();
  for (size_t i = lookup ? 1 : 0; i < dims.size(); ++i) sum += static_cast<double>(dims[i]);
  const double scale = std::sqrt(3.0 * static_cast<double>(nd)) / std::sqrt(sum);
  return torch::empty(dims).uniform_(-scale, scale).requires_grad_();
}

/// DyNet's clipping: when the L2 norm of all gradients exceeds CLIP_THRESHOLD,
/// every gradient is scaled by CLIP_THRESHOLD / norm.  Not
/// torch::nn::utils::clip_grad_norm_: libtorch 1.13's scales each gradient
/// through .data(), which for a sparse tensor is a new handle whose mul_ leaves
/// the gradient itself unscaled, so the embedding table would go unclipped.
/// A sparse gradient holds one row per lookup (repeated words repeated), so it
/// is coalesced before its norm is taken.
inline void clip_gradients(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> norms;
  for (auto& p : params) {
    if (!p.grad().defined()) continue;
    if (p.grad().is_sparse()) {
      p.mutable_grad() = p.grad().coalesce();
      norms.push_back(p.grad()._values().norm());
    } else {
      norms.push_back(p.grad().norm());
    }
  }
  if (norms.empty()) return;
  const double norm = torch::stack(norms).norm().item<double>();
  if (!std::isfinite(norm)) throw std::runtime_error("clip_gradients: the gradient norm is " + std::to_string(norm));
  if (norm <= CLIP_THRESHOLD) return;
  for (auto& p : params)
    if (p.grad().defined()) p.mutable_grad().mul_(CLIP_THRESHOLD / norm);
}

/// One trainer step as SimpleSGDTrainer::update does it: clip, step, and clear
/// the gradients.  Cleared to none, as current PyTorch's zero_grad does: no
/// zeroing pass over a dense gradient of the embedding table.
inline void update(torch::optim::SGD& sgd, std::vector<torch::Tensor>& params) {
  clip_gradients(params);
  sgd.step();
  for (auto& p : params) p.mutable_grad() = torch::Tensor();
}

/// Single-thread GFLOP/s of a 512x512x512 float product with libtorch's own GEMM,
/// best of 5.
inline double gemm512_gflops() {
  torch::NoGradGuard no_grad;
  const int64_t n = 512;
  torch::Tensor a = torch::rand({n, n}), b = torch::rand({n, n}), c = torch::empty({n, n});
  torch::mm_out(c, a, b);
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    torch::mm_out(c, a, b);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * n * n * n / best / 1e9;
}

/// OpenBLAS chooses its kernels from the CPU model when it is loaded, before
/// main(); under a virtual machine's generic model name ("Intel Xeon Processor")
/// it falls back to its Prescott (SSE3) kernels, on this machine 5x slower at a
/// 512^3 product than its AVX-512 ones.  Then the program runs itself again with
/// OPENBLAS_CORETYPE naming the kernels the CPU's flags allow, so that libtorch is
/// measured with the BLAS at its best.
inline void use_best_openblas_kernels(char** argv) {
  using CoreName = char* (*)();
  auto corename = reinterpret_cast<CoreName>(::dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (!corename || std::getenv("OPENBLAS_CORETYPE")) return;
  std::ifstream in("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      flags = line + " ";
      break;
    }
  auto has = [&](const char* f) { return flags.find(std::string(" ") + f + " ") != std::string::npos; };
  const char* best = has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq") ? "SkylakeX"
                     : has("avx2") && has("fma")                                             ? "Haswell"
                                                                                             : nullptr;
  const std::string current = corename() ? corename() : "";
  if (!best || current == best) return;
  ::setenv("OPENBLAS_CORETYPE", best, 1);
  ::execv("/proc/self/exe", argv);  // returns only on failure: go on with the kernels loaded
}

/// The BLAS library libtorch's CPU GEMM calls (Debian's libblas.so.3 is an
/// alternative: the reference BLAS unless an optimised one is installed) and,
/// for OpenBLAS, its kernels; its threads are pinned to one (OpenBLAS sizes its
/// own pool from the cores).
inline std::string blas_library() {
  using SetThreads = void (*)(int);
  using CoreName = char* (*)();
  if (auto set = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(1);
  std::string name = "unknown";
  Dl_info info;
  void* sgemm = ::dlsym(RTLD_DEFAULT, "sgemm_");
  if (sgemm && ::dladdr(sgemm, &info) && info.dli_fname) {
    char resolved[PATH_MAX];
    name = ::realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
  }
  if (auto corename = reinterpret_cast<CoreName>(::dlsym(RTLD_DEFAULT, "openblas_get_corename")))
    name += std::string(":") + corename();
  return name;
}

inline bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

/// One thread for every figure of BENCHMARKS.md: libtorch's intra- and
/// inter-op pools, set before any parallel work.
inline void use_one_thread() {
  at::set_num_interop_threads(1);
  torch::set_num_threads(1);
}

/// The shared corpora: ../shared/data next to the project root, else from the current folder.
inline std::string default_data_dir() {
  std::string d = std::string(DYNET_LITE_PROJECT_ROOT) + "/../shared/data";
  return file_exists(d) ? d : "../shared/data";
}

/// The end of every result line: the BLAS, the threads, the machine and the
/// flags, as examples/example_util.h's append_bench_tail writes them.
inline void append_tail(std::ostream& line, const std::string& blas) {
  line << " blas=" << blas << " threads=" << torch::get_num_threads() << " cpu=\"" << bench::cpu_model()
       << "\" flags=\"" << DYNET_LITE_BENCH_FLAGS << "\"";
}

/// What a timed benchmark run measured: the first losses (to compare libraries),
/// the summed loss of the timed instances and the seconds they took.
struct TimedRun {
  std::vector<float> first_losses;
  double loss_sum = 0;
  double seconds = 0;
};

/// Trains on `warmup` instances, then times `timed` more: every `batch` instances
/// (in order) are one fresh graph whose losses are summed, one backward and one
/// update.  `new_graph()` starts a graph; `loss(k)` builds instance k's loss.
template <class NewGraph, class Loss>
TimedRun train_timed(size_t warmup, size_t timed, size_t batch, NewGraph new_graph, Loss loss_of,
                     torch::optim::SGD& sgd, std::vector<torch::Tensor>& params) {
  TimedRun r;
  std::vector<torch::Tensor> losses;
  auto train_range = [&](size_t begin, size_t end, bool counted) {
    for (size_t start = begin; start < end; start += batch) {
      const size_t stop = std::min(end, start + batch);
      new_graph();
      losses.clear();
      for (size_t k = start; k < stop; ++k) losses.push_back(loss_of(k));
      torch::Tensor loss = losses.size() == 1 ? losses[0] : torch::stack(losses).sum();
      const float l = loss.item<float>();
      loss.backward();
      update(sgd, params);
      if (r.first_losses.size() < 3) r.first_losses.push_back(l);
      if (counted) r.loss_sum += l;
    }
  };
  train_range(0, warmup, false);
  const auto t0 = std::chrono::steady_clock::now();
  train_range(warmup, warmup + timed, true);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace torch_bench
