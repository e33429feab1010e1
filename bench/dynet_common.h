#pragma once
// What the DyNet reference programs (bench/dynet_*.cc) share: the command line,
// DyNet's initialisation, the timed training loop, the corpus readers and the
// machine figures printed with the results.  These programs are
// compiled against DyNet 2.1 itself (scripts/build_dynet.sh), or, ported by
// their include prefix (bench/CMakeLists.txt), against dynet_lite: never both
// in one program, since both libraries are built on Eigen, and two copies of its
// templates compiled with different flags in one process may interpose each
// other.  The readers here therefore repeat, in a few lines, what
// dynet_lite/io/conllu.h and dynet_lite/io/ptb_tree.h read, for the files of
// ../shared/data only (well-formed; a malformed line is an error naming it).
#include <dynet/dynet.h>
#include <dynet/expr.h>
#include <dynet/init.h>
#include <dynet/training.h>
#include <sys/stat.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_info.h"
#ifdef DYNET_BENCH_PORTED
#include "dynet_lite/exec/autobatch.h"
#endif

namespace dynet_bench {

inline bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

/// The shared corpora: ../shared/data next to the project root, else from the current folder.
inline std::string default_data_dir() {
  std::string d = std::string(DYNET_LITE_PROJECT_ROOT) + "/../shared/data";
  return file_exists(d) ? d : "../shared/data";
}

struct ConllToken {
  std::string form, upos;
};
using ConllSentence = std::vector<ConllToken>;

/// CoNLL-U sentences (FORM and UPOS of each word line; comments, multiword
/// ranges "3-4" and empty nodes "8.1" skipped), as dynet_lite::read_conllu.
inline std::vector<ConllSentence> read_conllu(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::vector<ConllSentence> out;
  ConllSentence cur;
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
      continue;
    }
    if (line[0] == '#') continue;
    std::vector<std::string> cols;
    std::istringstream ls(line);
    std::string col;
    while (std::getline(ls, col, '\t')) cols.push_back(col);
    if (cols.size() != 10) throw std::runtime_error(path + ":" + std::to_string(lineno) + ": not 10 columns");
    if (cols[0].find_first_of("-.") != std::string::npos) continue;
    cur.push_back({cols[1], cols[3]});
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

/// A bracketed tree (SST), nodes in post-order: children before their parent,
/// the root last.  A leaf has a word and no children.
struct BracketTree {
  std::vector<int> label;
  std::vector<std::string> word;
  std::vector<std::vector<int>> children;
  size_t size() const { return label.size(); }
};

inline std::vector<BracketTree> read_trees(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::vector<BracketTree> out;
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    BracketTree t;
    struct Frame {
      int label = 0;
      std::string word;
      std::vector<int> children;
    };
    std::vector<Frame> stack;
    auto fail = [&](const char* why) { throw std::runtime_error(path + ":" + std::to_string(lineno) + ": " + why); };
    for (size_t p = 0; p < line.size();) {
      const char ch = line[p];
      if (std::isspace(static_cast<unsigned char>(ch))) {
        ++p;
      } else if (ch == '(') {
        stack.emplace_back();
        size_t e = ++p;
        while (e < line.size() && !std::isspace(static_cast<unsigned char>(line[e]))) ++e;
        stack.back().label = std::stoi(line.substr(p, e - p));
        p = e;
      } else if (ch == ')') {
        if (stack.empty()) fail("unbalanced ')'");
        Frame f = std::move(stack.back());
        stack.pop_back();
        t.label.push_back(f.label);
        t.word.push_back(f.word);
        t.children.push_back(f.children);
        if (!stack.empty()) stack.back().children.push_back(static_cast<int>(t.size()) - 1);
        ++p;
      } else {
        size_t e = p;
        while (e < line.size() && line[e] != ')' && !std::isspace(static_cast<unsigned char>(line[e]))) ++e;
        if (stack.empty()) fail("a word outside brackets");
        stack.back().word = line.substr(p, e - p);
        p = e;
      }
    }
    if (!stack.empty() || t.size() == 0) fail("unbalanced '('");
    out.push_back(std::move(t));
  }
  return out;
}

class Timer {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

/// Single-thread GFLOP/s of a 512x512x512 float product with Eigen as this
/// program is compiled (DyNet's own flags), best of 5.
inline double gemm512_gflops() {
  const int n = 512;
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  c.noalias() = a * b;
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    Timer t;
    c.noalias() = a * b;
    best = std::min(best, t.seconds());
  }
  return 2.0 * n * n * n / best / 1e9;
}

/// The library a program was built against: DyNet 2.1.2, or dynet_lite for the
/// ported copy bench/CMakeLists.txt makes of a program.
#ifndef DYNET_BENCH_LIB
#define DYNET_BENCH_LIB "dynet dynet_version=2.1.2"
#endif

/// The end of every result line: the library, the machine and the flags; in a
/// copy ported to dynet_lite also its execution counters over the timed graphs
/// (train_timed resets them when the timer starts).
inline void append_tail(std::ostream& line) {
#ifdef DYNET_BENCH_PORTED
  const dynet_lite::AutobatchStats s = dynet_lite::autobatch_totals();
  line << " counters{nodes=" << s.nodes << " merged=" << s.cse_merged << " kernels=" << s.kernels
       << " batched_groups=" << s.batched_groups << " fused_regions=" << s.fused_regions
       << " fused_groups=" << s.fused_groups << " bytes_gathered=" << s.bytes_gathered
       << " plan_hits=" << s.plan_hits << " plan_misses=" << s.plan_misses << std::setprecision(3)
       << " build_s=" << s.build_seconds << " schedule_s=" << s.schedule_seconds
       << " forward_s=" << s.forward_seconds << " backward_s=" << s.backward_seconds << "}";
#endif
  line << " lib=" DYNET_BENCH_LIB " threads=1 cpu=\"" << bench::cpu_model() << "\" flags=\"" << DYNET_BENCH_FLAGS
       << "\"";
}

/// The command line of every program: --bench MODE [--data-dir DIR] [--train FILE]
/// [--dynet-mem MB], and --char / --compact where the program has them; a copy
/// ported to dynet_lite also takes --dynet-fusion 0|1 (DyNet has no such flag).
struct Options {
  std::string mode, train_path, mem;
  bool use_char = false, compact = false;
  int fusion = 1;
};

/// `train_file` is the default training file inside the data folder; `mem`
/// DyNet's default memory in MB for the program.
inline Options parse_options(int argc, char** argv, const char* train_file, const char* mem, bool has_char,
                             bool has_compact) {
  Options o;
  o.mem = mem;
  std::string data_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--bench")
      o.mode = value();
    else if (a == "--data-dir")
      data_dir = value();
    else if (a == "--train")
      o.train_path = value();
    else if (a == "--dynet-mem")
      o.mem = value();
    else if (a == "--char" && has_char)
      o.use_char = true;
    else if (a == "--compact" && has_compact)
      o.compact = true;
#ifdef DYNET_BENCH_PORTED
    else if (a == "--dynet-fusion") {
      const std::string v = value();
      if (v != "0" && v != "1") throw std::invalid_argument("--dynet-fusion expects 0 or 1, got '" + v + "'");
      o.fusion = v == "1";
    }
#endif
    else
      throw std::invalid_argument("unknown option '" + a + "'");
  }
  if (data_dir.empty()) data_dir = default_data_dir();
  if (o.train_path.empty()) o.train_path = data_dir + "/" + train_file;
  return o;
}

/// Throws unless `mode` is b1, b64, b64-auto or b64-depth.
inline void check_instance_mode(const std::string& mode) {
  if (mode != "b1" && mode != "b64" && mode != "b64-auto" && mode != "b64-depth")
    throw std::invalid_argument("--bench expects b1, b64, b64-auto or b64-depth, got '" + mode + "'");
}

/// DyNet's initialize: seed 1 (so that it draws dynet_lite's initial values),
/// the memory of `o`, and the autobatching of the mode (b64-auto: 1, the agenda;
/// b64-depth: 2, by depth).  With autobatching on, DyNet cannot grow its memory
/// pools, hence the memory sized up front.
inline void initialize_dynet(const Options& o) {
  dynet::DynetParams params;
  params.random_seed = 1;
  params.mem_descriptor = o.mem;
  params.autobatch = o.mode == "b64-auto" ? 1 : o.mode == "b64-depth" ? 2 : 0;
#ifdef DYNET_BENCH_PORTED
  params.fusion = o.fusion;
#endif
  dynet::initialize(params);
}

/// What a timed run measured: the first losses (to compare the libraries), the
/// summed loss of the counted steps and the seconds they took.
struct TimedRun {
  std::vector<float> first_losses;
  double loss_sum = 0;
  double seconds = 0;
};

/// One step on a built graph: forward, backward, the trainer's update; the
/// loss is recorded in `r` (summed when `counted`).
inline void train_step(dynet::ComputationGraph& cg, const dynet::Expression& loss, dynet::Trainer& trainer, TimedRun& r,
                       bool counted) {
  const float l = dynet::as_scalar(cg.forward(loss));
  cg.backward(loss);
  trainer.update();
  if (r.first_losses.size() < 3) r.first_losses.push_back(l);
  if (counted) r.loss_sum += l;
}

/// Trains on instances [0, warmup), then times [warmup, warmup + timed): every
/// `batch` instances (in order) are one fresh graph whose losses are summed.
/// `new_graph(cg)` starts a graph; `loss_of(k)` builds instance k's loss.
template <class NewGraph, class Loss>
TimedRun train_timed(size_t warmup, size_t timed, size_t batch, NewGraph new_graph, Loss loss_of,
                     dynet::Trainer& trainer) {
  TimedRun r;
  std::vector<dynet::Expression> losses;
  auto train_range = [&](size_t begin, size_t end, bool counted) {
    for (size_t start = begin; start < end; start += batch) {
      const size_t stop = std::min(end, start + batch);
      dynet::ComputationGraph cg;
      new_graph(cg);
      losses.clear();
      for (size_t k = start; k < stop; ++k) losses.push_back(loss_of(k));
      train_step(cg, losses.size() == 1 ? losses[0] : dynet::sum(losses), trainer, r, counted);
    }
  };
  train_range(0, warmup, false);
#ifdef DYNET_BENCH_PORTED
  dynet_lite::reset_autobatch_totals();
#endif
  Timer timer;
  train_range(warmup, warmup + timed, true);
  r.seconds = timer.seconds();
  return r;
}

inline std::string first_losses(const std::vector<float>& l) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(4);
  for (size_t i = 0; i < l.size(); ++i) s << (i ? "," : "") << l[i];
  return s.str();
}

}  // namespace dynet_bench
