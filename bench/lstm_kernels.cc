// Speed of the fused recurrent steps' element-wise kernels (ops/lstm.cc,
// ops/treelstm.cc) on the benchmark models' hidden sizes and a batch of 64 (the
// columns of one b64-auto group), through the graph API as a user runs them:
//   gates   treelstm_gates with one child: four blocks of h rows, three sigmoids
//           and a tanh, the activations of vanilla_lstm_gates too;
//   h       vanilla_lstm_h forward, h = o * tanh(c);
//   h+bwd   vanilla_lstm_h forward and backward (dc and do), with the two sums
//           that make a loss of it.
// Each figure is the median over `reps` timed batches of nanoseconds per column
// (per batch element), graph overhead included.
//   lstm_kernels [--reps R] [--batch N] [H ...]
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <vector>

#include "bench_info.h"
#include "dynet_lite/dynet.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/init.h"

namespace dl = dynet_lite;

namespace {

// Pre-activations spread over the range gates see in training.
std::vector<float> values(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.1f);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  unsigned batch = 64;
  std::vector<unsigned> hids;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
      batch = static_cast<unsigned>(std::atoi(argv[++i]));
    } else if (argv[i][0] >= '1' && argv[i][0] <= '9') {
      hids.push_back(static_cast<unsigned>(std::strtoul(argv[i], nullptr, 10)));
    } else {
      std::cerr << "usage: lstm_kernels [--reps R] [--batch N] [H ...]\n";
      return 2;
    }
  }
  if (reps < 1 || batch < 1) {
    std::cerr << "lstm_kernels: --reps and --batch must be positive\n";
    return 2;
  }
  if (hids.empty()) hids = {50, 64, 128, 256};  // tagger, char LSTM, Tree-LSTM, language model
  dl::initialize(argc, argv);
  bench::print_environment(std::cout);
  std::cout << "batch " << batch << ", ns per column (median of " << reps << ")\n"
            << "    H     gates         h     h+bwd\n";
  for (unsigned h : hids) {
    const std::vector<float> pre = values(4 * h * batch, 4.f), cell = values(h * batch, 2.f);
    dl::ComputationGraph gates_graph;
    dl::Expression gates = dl::treelstm_gates(dl::input(gates_graph, dl::Dim({4 * h}, batch), pre), 1);
    const double t_gates = bench::seconds_per_call([&] { gates_graph.forward(gates); }, reps);
    // Gates in (0.1, 0.9) as inputs, so that only the output step and the
    // loss's two sums run after them.
    std::vector<float> open = values(4 * h * batch, 0.4f);
    for (float& v : open) v += 0.5f;
    dl::ComputationGraph cg;
    dl::Expression g = dl::input(cg, dl::Dim({4 * h}, batch), open);
    dl::Expression c = dl::input(cg, dl::Dim({h}, batch), cell);
    dl::Expression out = dl::vanilla_lstm_h(c, g);
    dl::Expression loss = dl::sum_batches(dl::sum_elems(out));
    const double t_base = bench::seconds_per_call([&] { cg.forward(c); }, reps);
    const double t_h = bench::seconds_per_call([&] { cg.forward(out); }, reps);
    const double t_hb = bench::seconds_per_call(
        [&] {
          cg.forward(loss);
          cg.backward(loss, true);
        },
        reps);
    // The inputs' copies are taken off.
    const double per = 1e9 / batch;
    std::cout << std::setw(5) << h << std::fixed << std::setprecision(1) << " " << std::setw(9) << t_gates * per << " "
              << std::setw(9) << (t_h - t_base) * per << " " << std::setw(9) << (t_hb - t_base) * per << "\n";
  }
  return 0;
}
