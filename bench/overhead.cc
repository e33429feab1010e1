// T5 `overhead` of BENCHMARKS.md: the cost of building and running a long chain
// of small operations, where per-node overhead dominates.
//
// One graph: x = input(8 values); 1,000 times x = tanh(W * x + b) (W 8x8, b 8);
// loss = sum_elems(square(x)); forward, backward, one SimpleSGD update.  100
// graphs are timed after 10 warm-up graphs.  Reported per chain step and per node:
//   build     constructing the ComputationGraph, adding every node, and
//             destroying the graph at the end (its memory returns to the pool)
//   forward   cg.forward(loss)
//   backward  cg.backward(loss)
//   update    trainer.update()
//
//   overhead [--graphs G] [--warmup W] [--steps S] [--runs N] [--compiled] [--by-structure] [--dynet-seed S]
// With --runs N > 1 the benchmark runs N times, each in a separate process,
// and prints every run and the median of each figure.  --compiled also runs
// the chain as a compiled program (dynet_lite/compile.h: built once, its input
// a slot set anew for each graph, every graph a replay), in the same rounds
// (rebuilt, compiled, rebuilt, ...), and gives the ratio of build + forward +
// backward per node.  --by-structure likewise runs each graph, built as
// usual, through ProgramCache::forward(e) (the program of its structure:
// every graph after the first two a replay, the graph's input bound to it).
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench_info.h"
#include "dynet_lite/compile.h"
#include "dynet_lite/devices.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/init.h"
#include "dynet_lite/training.h"

namespace dynet = dynet_lite;
using namespace dynet;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  unsigned graphs = 100, warmup = 10, steps = 1000, runs = 1;
  bool child = false;     // prints one machine-readable RESULT line only
  bool compiled = false;      // (child) runs the compiled program; (parent) compares it
  bool by_structure = false;  // the same for graphs built as usual and run by ProgramCache::forward(e)
};

enum Mode { kRebuilt, kCompiled, kByStructure };
const char* const kModeNames[3] = {"", " compiled", " by structure"};

constexpr unsigned kPhases = 5;
const char* const kPhaseNames[kPhases] = {"build", "forward", "backward", "update", "total"};

/// Nanoseconds per graph of each phase, and the nodes of a graph.
struct Result {
  std::array<double, kPhases> ns_per_graph{};
  unsigned nodes = 0;
  std::vector<float> first_losses;
};

double ns_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

/// The chain as a compiled program: built once; each graph sets the input slot
/// ("build"), replays forward and backward, and updates.
Result run_compiled(const Options& o) {
  ParameterCollection model;
  Parameter p_W = model.add_parameters({8, 8});
  Parameter p_b = model.add_parameters({8});
  SimpleSGDTrainer trainer(model, 0.1f);
  const std::vector<float> x0 = {0.5f, -0.3f, 0.8f, 0.1f, -0.7f, 0.2f, -0.1f, 0.4f};
  Program program;
  {
    ComputationGraph& cg = program.graph();
    Expression W = parameter(cg, p_W);
    Expression b = parameter(cg, p_b);
    Expression x = program.input("x", {8});
    for (unsigned s = 0; s < o.steps; ++s) x = tanh(W * x + b);
    program.set_output(sum_elems(square(x)));
  }
  Result r;
  for (unsigned g = 0; g < o.warmup + o.graphs; ++g) {
    const bool timed = g >= o.warmup;
    auto t0 = Clock::now();
    program.set("x", x0);
    const double t_build = ns_since(t0);
    auto t1 = Clock::now();
    const float loss_value = as_scalar(program.forward());
    const double t_forward = ns_since(t1);
    auto t2 = Clock::now();
    program.backward();
    const double t_backward = ns_since(t2);
    auto t3 = Clock::now();
    trainer.update();
    const double t_update = ns_since(t3);
    r.nodes = program.graph().size();
    if (r.first_losses.size() < 5) r.first_losses.push_back(loss_value);
    if (timed) {
      r.ns_per_graph[0] += t_build;
      r.ns_per_graph[1] += t_forward;
      r.ns_per_graph[2] += t_backward;
      r.ns_per_graph[3] += t_update;
    }
  }
  for (unsigned k = 0; k < 4; ++k) r.ns_per_graph[k] /= o.graphs;
  r.ns_per_graph[4] = r.ns_per_graph[0] + r.ns_per_graph[1] + r.ns_per_graph[2] + r.ns_per_graph[3];
  return r;
}

Result run(const Options& o) {
  if (o.compiled) return run_compiled(o);
  ProgramCache programs(4);  // --by-structure
  ParameterCollection model;
  Parameter p_W = model.add_parameters({8, 8});
  Parameter p_b = model.add_parameters({8});
  SimpleSGDTrainer trainer(model, 0.1f);
  const std::vector<float> x0 = {0.5f, -0.3f, 0.8f, 0.1f, -0.7f, 0.2f, -0.1f, 0.4f};

  Result r;
  for (unsigned g = 0; g < o.warmup + o.graphs; ++g) {
    bool timed = g >= o.warmup;
    auto t0 = Clock::now();
    auto cg = std::make_unique<ComputationGraph>();
    Expression W = parameter(*cg, p_W);
    Expression b = parameter(*cg, p_b);
    Expression x = input(*cg, {8}, x0);
    for (unsigned s = 0; s < o.steps; ++s) x = tanh(W * x + b);
    Expression loss = sum_elems(square(x));
    double t_build = ns_since(t0);

    auto t1 = Clock::now();
    float loss_value = as_scalar(o.by_structure ? programs.forward(loss) : cg->forward(loss));
    double t_forward = ns_since(t1);

    auto t2 = Clock::now();
    if (o.by_structure)
      programs.backward(loss);
    else
      cg->backward(loss);
    double t_backward = ns_since(t2);

    auto t3 = Clock::now();
    trainer.update();
    double t_update = ns_since(t3);

    r.nodes = cg->size();
    auto t4 = Clock::now();
    cg.reset();
    t_build += ns_since(t4);

    if (r.first_losses.size() < 5) r.first_losses.push_back(loss_value);
    if (timed) {
      r.ns_per_graph[0] += t_build;
      r.ns_per_graph[1] += t_forward;
      r.ns_per_graph[2] += t_backward;
      r.ns_per_graph[3] += t_update;
    }
  }
  for (unsigned k = 0; k < 4; ++k) r.ns_per_graph[k] /= o.graphs;
  r.ns_per_graph[4] = r.ns_per_graph[0] + r.ns_per_graph[1] + r.ns_per_graph[2] + r.ns_per_graph[3];
  return r;
}

void print_table(const Options& o, const std::array<double, kPhases>& ns_per_graph, unsigned nodes) {
  std::cout << std::left << std::setw(10) << "phase" << std::right << std::setw(14) << "ns/step" << std::setw(12)
            << "ns/node" << std::setw(14) << "ms/graph" << "\n";
  for (unsigned k = 0; k < kPhases; ++k) {
    std::cout << std::left << std::setw(10) << kPhaseNames[k] << std::right << std::fixed << std::setprecision(1)
              << std::setw(14) << ns_per_graph[k] / o.steps << std::setw(12) << ns_per_graph[k] / nodes
              << std::setprecision(3) << std::setw(14) << ns_per_graph[k] * 1e-6 << "\n";
  }
}

bool parse_unsigned(const char* text, unsigned& out, bool allow_zero = false) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < (allow_zero ? 0 : 1)) return false;
  out = static_cast<unsigned>(v);
  return true;
}

/// Runs this program again as a child and reads its RESULT line.
bool run_child(const std::string& self, const Options& o, const std::string& child_flags, int mode, Result& r) {
  std::ostringstream cmd;
  cmd << "'" << self << "' --child --graphs " << o.graphs << " --warmup " << o.warmup << " --steps " << o.steps
      << (mode == kCompiled ? " --compiled" : mode == kByStructure ? " --by-structure" : "") << child_flags;
  FILE* pipe = popen(cmd.str().c_str(), "r");
  if (!pipe) return false;
  char line[1024];
  bool found = false;
  while (std::fgets(line, sizeof line, pipe)) {
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag != "RESULT") continue;
    in >> r.nodes;
    for (double& v : r.ns_per_graph) in >> v;
    found = static_cast<bool>(in);
  }
  return pclose(pipe) == 0 && found;
}

}  // namespace

static int overhead_main(int argc, char** argv) {
  DynetParams params = extract_dynet_params(argc, argv);
  if (params.random_seed == 0) params.random_seed = 1;  // same parameters every run
  // The children run with the same seed and on the same devices.
  std::string child_flags = " --dynet-seed " + std::to_string(params.random_seed);
  if (params.ngpus_requested) child_flags += " --dynet-gpus " + std::to_string(params.requested_gpus);
  if (!params.devices.empty()) child_flags += " --dynet-devices '" + params.devices + "'";
  initialize(params);

  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool ok = true;
    if (a == "--child") {
      o.child = true;
    } else if (a == "--compiled") {
      o.compiled = true;
    } else if (a == "--by-structure") {
      o.by_structure = true;
    } else if (a == "--graphs" && i + 1 < argc) {
      ok = parse_unsigned(argv[++i], o.graphs);
    } else if (a == "--warmup" && i + 1 < argc) {
      ok = parse_unsigned(argv[++i], o.warmup, /*allow_zero=*/true);
    } else if (a == "--steps" && i + 1 < argc) {
      ok = parse_unsigned(argv[++i], o.steps);
    } else if (a == "--runs" && i + 1 < argc) {
      ok = parse_unsigned(argv[++i], o.runs);
    } else {
      ok = false;
    }
    if (!ok) {
      std::cerr << "usage: overhead [--graphs G] [--warmup W] [--steps S] [--runs N] [--compiled] [--by-structure] "
                   "[--dynet-seed S]\n";
      return 2;
    }
  }

  if (o.child) {
    Result r = run(o);
    std::cout << "RESULT " << r.nodes;
    for (double v : r.ns_per_graph) std::cout << ' ' << std::setprecision(10) << v;
    std::cout << "\n";
    return 0;
  }

  std::cout << "T5 overhead: x = input(8); " << o.steps << " x tanh(W * x + b), W 8x8, b 8; loss = "
            << "sum_elems(square(x)); SimpleSGD lr 0.1\n"
            << o.graphs << " graphs timed after " << o.warmup << " warm-up graphs, one thread, "
            << (o.runs > 1 ? std::to_string(o.runs) + " runs (separate processes)" : std::string("1 run")) << "\n";
  bench::print_environment(std::cout);
  std::cout << "device:   " << default_device()->name << ", CPU kernels " << cpu_kernels() << "\n";

  if (o.runs == 1 && !o.compiled && !o.by_structure) {
    Result r = run(o);
    std::cout << "nodes per graph: " << r.nodes << "\nfirst losses:";
    for (float l : r.first_losses) std::cout << ' ' << l;
    std::cout << "\n";
    print_table(o, r.ns_per_graph, r.nodes);
    return 0;
  }

  // Loss values once, in this process, to show what is computed.
  Options one = o;
  one.graphs = 1;
  one.warmup = 4;
  one.compiled = false;
  one.by_structure = false;
  Result shown = run(one);
  std::cout << "first losses:";
  for (float l : shown.first_losses) std::cout << ' ' << l;
  std::cout << "\n";

  std::string self = "/proc/self/exe";
  {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) self.assign(buf, static_cast<size_t>(n));
  }
  // Rounds of one rebuilt run and, with --compiled and --by-structure, one run of each.
  std::vector<int> modes{kRebuilt};
  if (o.compiled) modes.push_back(kCompiled);
  if (o.by_structure) modes.push_back(kByStructure);
  std::array<std::vector<double>, kPhases> per_phase[3];
  unsigned nodes = 0;
  for (unsigned k = 0; k < o.runs; ++k)
    for (int mode : modes) {
      Result r;
      if (!run_child(self, o, child_flags, mode, r)) {
        std::cerr << "overhead: run " << k + 1 << " (child process " << self << ") failed\n";
        return 1;
      }
      nodes = r.nodes;
      std::cout << "run " << k + 1 << kModeNames[mode] << ": total " << std::fixed << std::setprecision(1)
                << r.ns_per_graph[4] / o.steps << " ns/step, " << r.ns_per_graph[4] / r.nodes << " ns/node\n";
      for (unsigned p = 0; p < kPhases; ++p) per_phase[mode][p].push_back(r.ns_per_graph[p]);
    }
  std::array<double, kPhases> med[3]{};
  for (int mode : modes)
    for (unsigned p = 0; p < kPhases; ++p) med[mode][p] = bench::median(per_phase[mode][p]);
  std::cout << "nodes per graph: " << nodes << "\nmedian of " << o.runs << " runs (each phase separately):\n";
  print_table(o, med[kRebuilt], nodes);
  const double rebuilt = med[kRebuilt][0] + med[kRebuilt][1] + med[kRebuilt][2];
  for (int mode : modes) {
    if (mode == kRebuilt) continue;
    std::cout << (mode == kCompiled ? "compiled program (build: setting the input slot; forward and backward: replays):\n"
                                    : "by structure (build: the graph as usual; forward: describing it, binding its "
                                      "input, a replay; backward: a replay):\n");
    print_table(o, med[mode], nodes);
    const double other = med[mode][0] + med[mode][1] + med[mode][2];
    std::cout << "build + forward + backward per node: rebuilt " << std::setprecision(1) << rebuilt / nodes << " ns,"
              << kModeNames[mode] << " " << other / nodes << " ns, ratio " << std::setprecision(2) << other / rebuilt
              << "\n";
  }
  return 0;
}

int main(int argc, char** argv) { return bench::run_reporting_errors("overhead", overhead_main, argc, argv); }
