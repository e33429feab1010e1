#pragma once
// What the examples' --bench modes share: the modes that set the minibatch and
// the batching strategy, and the one line a run prints.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

/// The record of a --bench run: the first losses, the timed steps' loss sum and
/// batching counters, the clock and the product counter.
class BenchRecorder {
 public:
  /// `autobatch`: whether the graphs batch automatically (their counters are kept).
  explicit BenchRecorder(bool autobatch) : autobatch_(autobatch) {}

  /// Records a step's loss (the first three always; the sum and the counters of
  /// `cg` when `timed`).
  void record(const dynet_lite::ComputationGraph& cg, float loss, bool timed) {
    if (first_losses_.size() < 3) first_losses_.push_back(loss);
    if (timed) {
      loss_sum_ += loss;
      if (autobatch_) stats_.add(cg.autobatch_stats());
    }
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
  std::vector<float> first_losses_;
  double loss_sum_ = 0, seconds_ = 0;
  dynet_lite::AutobatchStats stats_;
  uint64_t macs_before_ = 0;
  Timer timer_;
};

}  // namespace examples
