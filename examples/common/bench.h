#pragma once
// What the examples' --bench modes share: the modes that set the minibatch and
// the batching strategy, and the one line a run prints.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dynet_lite/compile.h"
#include "dynet_lite/dynet.h"
#include "dynet_lite/exec/autobatch.h"
#include "util.h"

namespace examples {

/// The --bench modes of the tagger and the Tree-LSTM: b1 (one instance an
/// update), b64 (64 in one graph, run in order), b64-auto (64 with automatic
/// batching), b64-depth (64 batched by depth).
const std::vector<std::string>& minibatch_modes();
struct MinibatchMode {
  unsigned batch;
  int autobatch;  ///< the strategy for ComputationGraph::set_autobatch
};
MinibatchMode minibatch_mode(const std::string& mode);

class BenchRecorder;

/// The --bench loop of the minibatch modes: the instances [0, warmup) untimed,
/// then [warmup, warmup + timed) timed by `recorder`, `mode.batch` of them in one
/// graph per trainer update.  `new_graph(cg)` adds the model to a new graph,
/// `instance_loss(k)` builds the loss of instance k in it.  With `programs`,
/// each graph runs through the program of its structure (ProgramCache::forward).
template <class NewGraph, class InstanceLoss>
void bench_minibatches(BenchRecorder& recorder, MinibatchMode mode, size_t warmup, size_t timed,
                       dynet_lite::Trainer& trainer, NewGraph&& new_graph, InstanceLoss&& instance_loss,
                       dynet_lite::ProgramCache* programs = nullptr);

/// The record of a --bench run: the first losses, the timed steps' loss sum and
/// batching counters, the clock and the product counter.
class BenchRecorder {
 public:
  /// `autobatch`: whether the graphs batch automatically (their counters are kept).
  /// Measures the machine's reference product rate (gemm512_GFLOP/s) now: made
  /// before the program reads its data, its matrices do not add to the run's
  /// peak resident memory.
  explicit BenchRecorder(bool autobatch);

  /// Records a step's loss (the first three always; the sum and the counters of
  /// `cg` when `timed`).
  void record(const dynet_lite::ComputationGraph& cg, float loss, bool timed) {
    record(loss, timed);
    if (timed && autobatch_) stats_.add(cg.autobatch_stats());
  }
  /// Records a step's loss alone (a compiled program's run).
  void record(float loss, bool timed) {
    if (first_losses_.size() < 3) first_losses_.push_back(loss);
    if (timed) loss_sum_ += loss;
  }
  /// Starts the clock and the count of executed multiply-adds (after the warm-up).
  void start();
  /// Stops the clock; returns the seconds since start().
  double stop();

  double loss_sum() const { return loss_sum_; }
  double seconds() const { return seconds_; }

  /// Prints the run's line to stdout: `head` ("T1 tagger mode=b64 sentences=2000
  /// words=45000"), seconds=, each rate name=count/seconds, loss_first_steps=,
  /// `loss_name`=`loss_value`, the GFLOP/s of the executed products and of the
  /// model's `model_flops`, the batching counters (when batching) and the
  /// machine and flags, so that figures from different runs can be compared.
  void print(const std::string& head, const std::vector<std::pair<std::string, double>>& rates,
             const std::string& loss_name, double loss_value, double model_flops) const;

 private:
  bool autobatch_;
  double gemm512_gflops_;
  std::vector<float> first_losses_;
  double loss_sum_ = 0, seconds_ = 0;
  dynet_lite::AutobatchStats stats_;
  uint64_t macs_before_ = 0;
  long faults_ = 0;  // minor page faults: at start(), then those of the timed steps
  Timer timer_;
};

template <class NewGraph, class InstanceLoss>
void bench_minibatches(BenchRecorder& recorder, MinibatchMode mode, size_t warmup, size_t timed,
                       dynet_lite::Trainer& trainer, NewGraph&& new_graph, InstanceLoss&& instance_loss,
                       dynet_lite::ProgramCache* programs) {
  std::vector<dynet_lite::Expression> losses;
  auto run = [&](size_t begin, size_t end, bool is_timed) {
    for (size_t start = begin; start < end; start += mode.batch) {
      const size_t stop = std::min(end, start + mode.batch);
      dynet_lite::ComputationGraph cg;
      cg.set_autobatch(mode.autobatch);
      new_graph(cg);
      losses.clear();
      for (size_t k = start; k < stop; ++k) losses.push_back(instance_loss(k));
      if (programs)
        recorder.record(train_step(*programs, batch_loss(losses), trainer), is_timed);
      else
        recorder.record(cg, train_step(cg, batch_loss(losses), trainer), is_timed);
    }
  };
  run(0, warmup, false);
  recorder.start();
  run(warmup, warmup + timed, true);
  recorder.stop();
}

}  // namespace examples
