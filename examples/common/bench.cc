#include "bench.h"

#include <Eigen/Dense>
#include <algorithm>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <sys/resource.h>

#include "dynet_lite/backends/cpu/gemm.h"
#include "dynet_lite/devices.h"
#include "dynet_lite/init.h"

namespace examples {

namespace {

/// The CPU model, from /proc/cpuinfo.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t c = line.find(':');
      if (c != std::string::npos) return line.substr(c + 2);
    }
  }
  return "unknown CPU";
}

/// The compiler flags the examples were built with (recorded by CMake).
std::string build_flags() {
#ifdef DYNET_LITE_EXAMPLE_FLAGS
  return DYNET_LITE_EXAMPLE_FLAGS;
#else
  return "unknown";
#endif
}

/// Single-thread GFLOP/s of a 512x512x512 float product with the CPU backend's
/// own product (cpu::gemm, in the instruction set in use), best of a few
/// repetitions: the machine's reference for the GFLOP/s of a run.
double gemm512_gflops() {
  const int n = 512;
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  auto product = [&] { dynet_lite::cpu::gemm(a.data(), b.data(), c.data(), n, n, n, false); };
  product();  // warm-up
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    Timer t;
    product();
    best = std::min(best, t.seconds());
  }
  volatile float sink = c(0, 0);
  (void)sink;
  return 2.0 * n * n * n / best / 1e9;
}

}  // namespace

const std::vector<std::string>& minibatch_modes() {
  static const std::vector<std::string> modes{"b1", "b64", "b64-auto", "b64-depth"};
  return modes;
}

MinibatchMode minibatch_mode(const std::string& mode) {
  return {mode == "b1" ? 1u : 64u, mode == "b64-auto" ? 1 : mode == "b64-depth" ? 2 : 0};
}

BenchRecorder::BenchRecorder(bool autobatch) : autobatch_(autobatch), gemm512_gflops_(gemm512_gflops()) {}

namespace {
/// Minor page faults of this process so far (first touches of its memory).
long minor_faults() {
  struct rusage u;
  return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : 0;
}
}  // namespace

void BenchRecorder::start() {
  macs_before_ = dynet_lite::cpu::product_macs();
  faults_ = minor_faults();
  timer_.reset();
}

double BenchRecorder::stop() {
  seconds_ = timer_.seconds();
  faults_ = minor_faults() - faults_;
  return seconds_;
}

void BenchRecorder::print(const std::string& head, const std::vector<std::pair<std::string, double>>& rates,
                          const std::string& loss_name, double loss_value, double model_flops) const {
  std::ostringstream line;
  line << head << " seconds=" << std::fixed << std::setprecision(3) << seconds_ << std::setprecision(1);
  for (const auto& [name, count] : rates) line << " " << name << "=" << count / seconds_;
  line << " loss_first_steps=";
  for (size_t i = 0; i < first_losses_.size(); ++i) line << (i ? "," : "") << std::setprecision(4) << first_losses_[i];
  line << " " << loss_name << "=" << std::setprecision(4) << loss_value;
  // GFLOP/s counts the multiply-adds the CPU products executed, twice each;
  // model_GFLOP/s the model's own count, which a library that merges nothing
  // must execute.  They differ by what merging (exec/cse.h) saved.
  const double executed = 2.0 * static_cast<double>(dynet_lite::cpu::product_macs() - macs_before_);
  line << " GFLOP/s=" << std::setprecision(2) << executed / seconds_ / 1e9
       << " model_GFLOP/s=" << model_flops / seconds_ / 1e9 << " gemm512_GFLOP/s=" << gemm512_gflops_
       << " page_faults=" << faults_;
  const dynet_lite::AutobatchStats& s = stats_;
  if (autobatch_)
    line << " autobatch{nodes=" << s.nodes << " merged=" << s.cse_merged << " kernels=" << s.kernels
         << " batched_groups=" << s.batched_groups << " split_groups=" << s.split_groups
         << " bytes_gathered=" << s.bytes_gathered << " plan_hits=" << s.plan_hits << " plan_misses=" << s.plan_misses
         << " schedule_s=" << std::setprecision(3) << s.schedule_seconds << " forward_s=" << s.forward_seconds
         << " backward_s=" << s.backward_seconds << "}";
  line << " threads=1 device=" << dynet_lite::default_device()->name << " cpu_kernels=" << dynet_lite::cpu_kernels()
       << " cpu=\"" << cpu_model() << "\" flags=\""
       << build_flags() << "\"";
  std::cout << line.str() << std::endl;
}

}  // namespace examples
