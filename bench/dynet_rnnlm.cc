// dynet_rnnlm: BENCHMARKS.md task T4 (LSTM language model) written for DyNet
// 2.1 itself, compared with dynet_lite's `rnnlm --bench` in the same rounds
// (bench/run_all.py --dynet).
//
// The model code is examples/rnnlm.cc's, unchanged but for the namespace: word
// embedding 128, one VanillaLSTMBuilder layer of 256, a softmax over the
// vocabulary (<s>, </s>, <unk>, then ptb.valid.txt's words in order of
// appearance), the loss summed over every target word (</s> included).
// manual-B: sentences sorted by length (stable), cut into minibatches of B,
// padded with </s> and masked, the minibatch order shuffled once with
// std::mt19937(12345); the LSTM runs step by step in the batch dimension and the
// softmax once over the stacked states of every step.  b64-auto: the same 64
// sentences built as 64 unbatched sequences in one graph, DyNet's
// --dynet-autobatch 1.  One warm-up minibatch, then one epoch counted;
// SimpleSGDTrainer with rate 0.1 (DyNet's default clipping), one thread.
//
//   dynet_rnnlm --bench manual-1|manual-4|manual-16|manual-64|b64-auto [--compact] [--data-dir DIR]
//               [--dynet-mem M]
//
// --compact uses CompactVanillaLSTMBuilder (DyNet's fused gate operations, the
// same function) instead of VanillaLSTMBuilder.
// Prints one line in the format of `rnnlm --bench`, with lib=dynet.
#include <dynet/dynet.h>
#include <dynet/expr.h>
#include <dynet/init.h>
#include <dynet/lstm.h>
#include <dynet/training.h>

#include <iostream>
#include <numeric>
#include <random>
#include <unordered_map>

#include "dynet_common.h"

using namespace dynet;

namespace {

constexpr unsigned EMBED_DIM = 128;
constexpr unsigned HIDDEN_DIM = 256;
constexpr unsigned LAYERS = 1;
constexpr float LEARNING_RATE = 0.1f;
constexpr unsigned SHUFFLE_SEED = 12345;
using Sentence = std::vector<unsigned>;

/// ptb.valid.txt as ids; returns the vocabulary size.  </s> is id 1.
unsigned read_corpus(const std::string& path, std::vector<Sentence>& out) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::unordered_map<std::string, unsigned> ids{{"<s>", 0}, {"</s>", 1}, {"<unk>", 2}};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    Sentence s{0};
    for (std::string w; ls >> w;) s.push_back(ids.emplace(w, static_cast<unsigned>(ids.size())).first->second);
    if (s.size() == 1) continue;
    s.push_back(1);
    out.push_back(std::move(s));
  }
  return static_cast<unsigned>(ids.size());
}

/// examples/rnnlm.cc's RNNLanguageModel (training graphs), for either builder.
template <class Builder>
class RNNLanguageModel {
 public:
  RNNLanguageModel(ParameterCollection& pc, unsigned vocab_size)
      : vocab_size(vocab_size),
        p_embed(pc.add_lookup_parameters(vocab_size, {EMBED_DIM})),
        p_R(pc.add_parameters({vocab_size, HIDDEN_DIM})),
        p_bias(pc.add_parameters({vocab_size})),
        lstm(LAYERS, EMBED_DIM, HIDDEN_DIM, pc) {}

  void new_graph(ComputationGraph& cg) {
    cg_ = &cg;
    lstm.new_graph(cg);
    R = parameter(cg, p_R);
    bias = parameter(cg, p_bias);
  }

  Expression batch_loss(const std::vector<const Sentence*>& batch, unsigned eos) {
    const unsigned B = static_cast<unsigned>(batch.size());
    size_t steps = 0;
    for (const Sentence* s : batch) steps = std::max(steps, s->size() - 1);
    ids_.resize(B);
    targets_.clear();
    mask_.clear();
    hs_.clear();
    bool padded = false;
    lstm.start_new_sequence();
    for (size_t t = 0; t < steps; ++t) {
      for (unsigned b = 0; b < B; ++b) {
        const Sentence& s = *batch[b];
        const bool real = t + 1 < s.size();
        ids_[b] = t < s.size() ? s[t] : eos;
        targets_.push_back(real ? s[t + 1] : eos);
        mask_.push_back(real ? 1.f : 0.f);
        padded |= !real;
      }
      hs_.push_back(lstm.add_input(lookup(*cg_, p_embed, ids_)));
    }
    Expression h = hs_.size() == 1 ? hs_[0] : concatenate_to_batch(hs_);
    Expression loss = pickneglogsoftmax(affine_transform({bias, R, h}), targets_);
    if (padded) loss = cmult(loss, input(*cg_, Dim({1}, static_cast<unsigned>(mask_.size())), mask_));
    return h.dim().bd > 1 ? sum_batches(loss) : loss;
  }

  Expression sentence_loss(const Sentence& s) {
    losses_.clear();
    lstm.start_new_sequence();
    for (size_t t = 0; t + 1 < s.size(); ++t) {
      Expression h = lstm.add_input(lookup(*cg_, p_embed, s[t]));
      losses_.push_back(pickneglogsoftmax(affine_transform({bias, R, h}), s[t + 1]));
    }
    return losses_.size() == 1 ? losses_[0] : sum(losses_);
  }

  double forward_macs(size_t steps, unsigned B) const {
    if (steps == 0) return 0;
    const double per_step = 4.0 * HIDDEN_DIM * EMBED_DIM + double(vocab_size) * HIDDEN_DIM;
    return B * (steps * per_step + (steps - 1) * 4.0 * HIDDEN_DIM * HIDDEN_DIM);
  }

  unsigned vocab_size;

 private:
  LookupParameter p_embed;
  Parameter p_R, p_bias;
  Builder lstm;
  ComputationGraph* cg_ = nullptr;
  Expression R, bias;
  std::vector<unsigned> ids_, targets_;
  std::vector<float> mask_;
  std::vector<Expression> losses_, hs_;
};

template <class Builder>
void run_bench(const dynet_bench::Options& o, unsigned B) {
  const bool autobatch = o.mode == "b64-auto";
  // Before the data is read: its matrices do not add to the peak resident memory.
  const double gemm512 = dynet_bench::gemm512_gflops();
  std::vector<Sentence> train;
  const unsigned vocab = read_corpus(o.train_path, train);
  std::vector<size_t> order(train.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return train[a].size() < train[b].size(); });
  std::vector<std::vector<size_t>> batches;
  for (size_t i = 0; i < order.size(); i += B)
    batches.emplace_back(order.begin() + i, order.begin() + std::min(order.size(), i + B));
  std::mt19937 shuffle_rng(SHUFFLE_SEED);
  std::shuffle(batches.begin(), batches.end(), shuffle_rng);

  ParameterCollection pc;
  RNNLanguageModel<Builder> lm(pc, vocab);
  SimpleSGDTrainer trainer(pc, LEARNING_RATE);
  dynet_bench::TimedRun run;
  std::vector<const Sentence*> batch;
  std::vector<Expression> losses;
  auto step = [&](const std::vector<size_t>& ids, bool timed) {
    ComputationGraph cg;
    lm.new_graph(cg);
    Expression loss;
    if (autobatch) {
      losses.clear();
      for (size_t i : ids) losses.push_back(lm.sentence_loss(train[i]));
      loss = sum(losses);
    } else {
      batch.clear();
      for (size_t i : ids) batch.push_back(&train[i]);
      loss = lm.batch_loss(batch, 1);
    }
    dynet_bench::train_step(cg, loss, trainer, run, timed);
  };
  step(batches[0], false);  // warm-up
  dynet_bench::Timer timer;
  for (const auto& ids : batches) step(ids, true);
  const double seconds = timer.seconds();
  size_t words = 0;
  for (const auto& s : train) words += s.size() - 1;
  double macs = 0;
  for (const auto& ids : batches) {
    if (autobatch) {
      for (size_t i : ids) macs += lm.forward_macs(train[i].size() - 1, 1);
    } else {
      size_t steps = 0;
      for (size_t i : ids) steps = std::max(steps, train[i].size() - 1);
      macs += lm.forward_macs(steps, static_cast<unsigned>(ids.size()));
    }
  }
  std::ostringstream line;
  line << "T4 rnnlm mode=" << o.mode << " sentences=" << train.size() << " words=" << words
       << " minibatches=" << batches.size() << " seconds=" << std::fixed << std::setprecision(3) << seconds
       << " words/s=" << std::setprecision(1) << words / seconds << " sent/s=" << train.size() / seconds
       << " loss_first_steps=" << dynet_bench::first_losses(run.first_losses) << " loss/word=" << std::setprecision(4)
       << run.loss_sum / words << " GFLOP/s=" << std::setprecision(2) << 3 * 2 * macs / seconds / 1e9
       << " gemm512_GFLOP/s=" << gemm512
       << " lstm=" << (o.compact ? "CompactVanillaLSTMBuilder" : "VanillaLSTMBuilder");
  dynet_bench::append_tail(line);
  std::cout << line.str() << std::endl;
}

int run(int argc, char** argv) {
  const dynet_bench::Options o = dynet_bench::parse_options(argc, argv, "ptb/ptb.valid.txt", "2048", false, true);
  unsigned B = 64;
  if (o.mode != "b64-auto") {
    if (o.mode.rfind("manual-", 0) != 0)
      throw std::invalid_argument("--bench expects manual-B or b64-auto, got '" + o.mode + "'");
    B = static_cast<unsigned>(std::stoul(o.mode.substr(7)));
  }
  dynet_bench::initialize_dynet(o);
  if (o.compact)
    run_bench<CompactVanillaLSTMBuilder>(o, B);
  else
    run_bench<VanillaLSTMBuilder>(o, B);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return bench::run_reporting_errors("dynet_rnnlm", run, argc, argv); }
