// dynet_overhead: BENCHMARKS.md T5 (`overhead`) written as a DyNet 2.1 program,
// built against DyNet itself (bench/dynet_overhead) and, ported by its include
// prefix, against dynet_lite (bench/ported_dynet_overhead), so that the two
// libraries run the same code in the same rounds (bench/run_all.py --dynet).
//
// One graph: x = input(8 values); 1,000 times x = tanh(W * x + b) (W 8x8, b 8);
// loss = sum_elems(square(x)); forward, backward, one SimpleSGD update (0.1).
// 100 graphs are timed after 10 warm-up graphs.  Prints one line: the
// nanoseconds per node of building (the graph's construction, its nodes and its
// destruction), forward, backward, update and their total, and the first losses.
//
//   dynet_overhead [--graphs G] [--warmup W] [--steps S] [DyNet's --dynet-* flags]
#include <dynet/dynet.h>
#include <dynet/expr.h>
#include <dynet/init.h>
#include <dynet/training.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench_info.h"

#ifndef DYNET_BENCH_LIB
#define DYNET_BENCH_LIB "DyNet"
#endif

using Clock = std::chrono::steady_clock;

namespace {
double ns_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

unsigned count_flag(int argc, char** argv, const char* name, unsigned fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) != 0) continue;
    char* end = nullptr;
    const long v = std::strtol(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0' || v < 1) {
      std::cerr << "dynet_overhead: " << name << " needs a positive count, not '" << argv[i + 1] << "'\n";
      std::exit(2);
    }
    return static_cast<unsigned>(v);
  }
  return fallback;
}
}  // namespace

int main(int argc, char** argv) {
  dynet::initialize(argc, argv);
  const unsigned graphs = count_flag(argc, argv, "--graphs", 100);
  const unsigned warmup = count_flag(argc, argv, "--warmup", 10);
  const unsigned steps = count_flag(argc, argv, "--steps", 1000);

  dynet::ParameterCollection model;
  dynet::Parameter p_W = model.add_parameters({8, 8});
  dynet::Parameter p_b = model.add_parameters({8});
  dynet::SimpleSGDTrainer trainer(model, 0.1f);
  const std::vector<float> x0 = {0.5f, -0.3f, 0.8f, 0.1f, -0.7f, 0.2f, -0.1f, 0.4f};

  double ns[4] = {0, 0, 0, 0};  // build, forward, backward, update: summed over the timed graphs
  unsigned nodes = 0;
  std::vector<float> first_losses;
  for (unsigned g = 0; g < warmup + graphs; ++g) {
    auto t0 = Clock::now();
    auto cg = std::make_unique<dynet::ComputationGraph>();
    dynet::Expression W = dynet::parameter(*cg, p_W);
    dynet::Expression b = dynet::parameter(*cg, p_b);
    dynet::Expression x = dynet::input(*cg, {8}, x0);
    for (unsigned s = 0; s < steps; ++s) x = dynet::tanh(W * x + b);
    dynet::Expression loss = dynet::sum_elems(dynet::square(x));
    double t_build = ns_since(t0);
    auto t1 = Clock::now();
    const float loss_value = dynet::as_scalar(cg->forward(loss));
    const double t_forward = ns_since(t1);
    auto t2 = Clock::now();
    cg->backward(loss);
    const double t_backward = ns_since(t2);
    auto t3 = Clock::now();
    trainer.update();
    const double t_update = ns_since(t3);
    nodes = static_cast<unsigned>(loss.i) + 1;
    auto t4 = Clock::now();
    cg.reset();
    t_build += ns_since(t4);
    if (first_losses.size() < 5) first_losses.push_back(loss_value);
    if (g >= warmup) {
      ns[0] += t_build;
      ns[1] += t_forward;
      ns[2] += t_backward;
      ns[3] += t_update;
    }
  }
  std::ostringstream line;
  line << "T5 overhead lib=" << DYNET_BENCH_LIB << " graphs=" << graphs << " steps=" << steps << " nodes=" << nodes
       << std::fixed << std::setprecision(1);
  const char* names[4] = {"build", "forward", "backward", "update"};
  double total = 0;
  for (int k = 0; k < 4; ++k) {
    const double per_node = ns[k] / graphs / nodes;
    total += per_node;
    line << " " << names[k] << "_ns_per_node=" << per_node;
  }
  line << " total_ns_per_node=" << total << " loss_first_steps=";
  for (size_t i = 0; i < first_losses.size(); ++i) line << (i ? "," : "") << std::setprecision(4) << first_losses[i];
  std::cout << line.str() << "\n";
  return 0;
}
