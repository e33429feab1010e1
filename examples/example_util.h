#pragma once
// Small helpers shared by the example programs (tagger, treelstm): strict
// command-line numbers, a progress bar on stderr, atomic file writes, data paths,
// and the machine/flags description printed with benchmark figures.
#include <sys/stat.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "dynet_lite/backends/cpu/gemm.h"
#include "dynet_lite/devices.h"
#include "dynet_lite/init.h"
#include "dynet_lite/except.h"
#include "dynet_lite/exec/autobatch.h"

namespace examples {

/// Wall-clock seconds since construction (or the last reset()).
class Timer {
 public:
  Timer() { reset(); }
  void reset() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

/// A non-negative integer option value; throws std::invalid_argument naming the option.
inline unsigned parse_unsigned(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  DYNET_LITE_ARG_CHECK(!text.empty() && *end == '\0' && errno == 0 && v >= 0 && v <= 4000000000LL,
                       option << " expects a non-negative integer, got '" << text << "'");
  return static_cast<unsigned>(v);
}

inline float parse_float(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  DYNET_LITE_ARG_CHECK(!text.empty() && *end == '\0' && errno == 0, option << " expects a number, got '" << text << "'");
  return static_cast<float>(v);
}

inline bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

/// The folder holding the shared corpora: `../shared/data` next to the project
/// root (the build records the root), else the same path from the current folder.
inline std::string default_data_dir() {
#ifdef DYNET_LITE_PROJECT_ROOT
  std::string d = std::string(DYNET_LITE_PROJECT_ROOT) + "/../shared/data";
  if (file_exists(d)) return d;
#endif
  return "../shared/data";
}

/// Writes `content` to `path` atomically: a temporary file in the same folder,
/// flushed and closed, then renamed over `path`.  Throws dynet_lite::io_error.
inline void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    DYNET_LITE_CHECK(out.good(), dynet_lite::io_error, "cannot write '" << tmp << "'");
    out << content;
    out.flush();
    DYNET_LITE_CHECK(out.good(), dynet_lite::io_error, "writing '" << tmp << "' failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    DYNET_LITE_CHECK(false, dynet_lite::io_error, "cannot rename '" << tmp << "' to '" << path << "'");
  }
}

/// A progress bar on stderr: redrawn in place on a terminal at most 5 times a
/// second, else one line every 10%.  Shows the mean loss and the throughput.
class ProgressBar {
 public:
  /// `unit` names the instances in the throughput ("sent", "trees").
  ProgressBar(std::string label, size_t total, std::string unit = "inst")
      : label_(std::move(label)), unit_(std::move(unit)), total_(total ? total : 1), tty_(::isatty(2) != 0) {}

  /// `done` instances finished so far; `loss` the mean loss per unit so far.
  void update(size_t done, double loss, const char* loss_unit) {
    const double t = timer_.seconds();
    const unsigned decile = static_cast<unsigned>(10.0 * done / total_);
    if (tty_) {
      if (done < total_ && t - last_draw_ < 0.2) return;
    } else if (decile == last_decile_ && done < total_) {
      return;
    }
    last_draw_ = t;
    last_decile_ = decile;
    const unsigned width = 30;
    const unsigned filled = static_cast<unsigned>(width * std::min<double>(1.0, double(done) / total_));
    std::ostringstream line;
    line << label_ << " [" << std::string(filled, '=') << (filled < width ? ">" : "")
         << std::string(width - filled - (filled < width ? 1 : 0), ' ') << "] " << std::setw(3)
         << static_cast<unsigned>(100.0 * done / total_) << "% " << done << "/" << total_ << "  loss/" << loss_unit
         << " " << std::fixed << std::setprecision(4) << loss << "  " << std::setprecision(1)
         << (t > 0 ? done / t : 0.0) << " " << unit_ << "/s";
    if (tty_)
      std::cerr << "\r" << line.str() << "\x1b[K" << std::flush;
    else
      std::cerr << line.str() << "\n" << std::flush;
  }
  /// Ends the bar's line (on a terminal).
  void finish() {
    if (tty_) std::cerr << "\n";
  }
  double seconds() const { return timer_.seconds(); }

 private:
  std::string label_, unit_;
  size_t total_;
  bool tty_;
  Timer timer_;
  double last_draw_ = -1;
  unsigned last_decile_ = ~0u;
};

/// The CPU model, from /proc/cpuinfo.
inline std::string cpu_model() {
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

/// The compiler flags this program was built with (recorded by CMake).
inline std::string build_flags() {
#ifdef DYNET_LITE_EXAMPLE_FLAGS
  return DYNET_LITE_EXAMPLE_FLAGS;
#else
  return "unknown";
#endif
}

/// Single-thread GFLOP/s of a 512x512x512 float product with the CPU backend's
/// own product (cpu::gemm, in the instruction set in use), best of a few
/// repetitions: the machine's reference for the GFLOP/s of a run.
inline double gemm512_gflops() {
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

/// The rates of a timed run's products: `GFLOP/s` counts the multiply-adds the
/// CPU products executed (cpu::product_macs(), from `macs_before` on), twice each;
/// `model_GFLOP/s` the model's own count (`model_flops`), which a library that
/// merges nothing must execute.  They differ by what merging (core/cse.h) saved.
inline void append_gflops(std::ostream& line, uint64_t macs_before, double model_flops, double seconds) {
  const double executed = 2.0 * static_cast<double>(dynet_lite::cpu::product_macs() - macs_before);
  line << " GFLOP/s=" << std::fixed << std::setprecision(2) << executed / seconds / 1e9
       << " model_GFLOP/s=" << model_flops / seconds / 1e9 << " gemm512_GFLOP/s=" << gemm512_gflops();
}

/// The end of every benchmark line: batching counters (when on), the machine and
/// the flags, so that figures from different runs can be compared.
inline void append_bench_tail(std::ostream& line, bool autobatch, const dynet_lite::AutobatchStats& stats) {
  if (autobatch)
    line << " autobatch{nodes=" << stats.nodes << " merged=" << stats.cse_merged << " kernels=" << stats.kernels
         << " batched_groups=" << stats.batched_groups << " split_groups=" << stats.split_groups
         << " bytes_gathered=" << stats.bytes_gathered << " plan_hits=" << stats.plan_hits
         << " plan_misses=" << stats.plan_misses << " schedule_s=" << std::setprecision(3) << stats.schedule_seconds
         << " forward_s=" << stats.forward_seconds << " backward_s=" << stats.backward_seconds << "}";
  line << " threads=1 device=" << dynet_lite::default_device()->name << " cpu_kernels=" << dynet_lite::cpu_kernels()
       << " cpu=\"" << cpu_model() << "\" flags=\""
       << build_flags() << "\"";
}

}  // namespace examples
