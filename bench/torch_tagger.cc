// torch_tagger: BENCHMARKS.md task T1 (BiLSTM POS tagger) written per instance in
// eager libtorch, the reference that dynet_lite's `tagger --bench` figures are
// compared with (run both in the same rounds: bench/run_all.py --torch).
//
// It mirrors examples/tagger.cc's benchmark mode: the same CoNLL-U reader
// (dynet_lite/io/conllu.h), the same vocabulary (train words seen at least twice,
// in first-appearance order, others <unk>; the 17 universal tags in a fixed
// order), 100 warm-up then 2,000 counted sentences in file order, word embedding
// 128, a forward and a backward vanilla LSTM with 50 units (the forget gate's
// pre-activation + 1, a zero initial state),
// h = tanh(W [fwd_t; bwd_t] + b) with 32 units, scores = V h + c over 17 tags,
// the loss summed over tokens, plain SGD with learning rate 0.1 after clipping
// the global gradient norm to 5 (DyNet's default), Glorot-uniform initialisation
// with DyNet's scales, one thread.
//
// The graph is built eagerly, define-by-run, one sentence at a time and one LSTM
// step at a time, as a libtorch user would write it without padding sentences
// into a batch.  b1: one sentence per update; b64: the losses of 64 sentences
// summed, one backward and one update.  Where libtorch has a natural faster
// idiom that keeps the per-instance structure it is used, so that the figure is
// not a strawman: an LSTM step is one call of torch::lstm_cell (what
// torch::nn::LSTMCell runs; about 10% faster here than the gates written out,
// --explicit-gates), the embeddings of a sentence are looked up in one call, the
// gradient of the embedding table is sparse (--dense-embedding for the default
// dense one), and the output layer runs once over the sentence's stacked states
// (--per-token computes it token by token, as the dynet_lite example builds it).
//
//   torch_tagger --bench b1|b64 [--data-dir DIR] [--explicit-gates] [--dense-embedding] [--per-token]
//
// Prints one line in the format of `tagger --bench`, with lib=libtorch.
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "dynet_lite/io/conllu.h"
#include "torch_common.h"

namespace {

// Hyperparameters of T1 (BENCHMARKS.md), as in examples/tagger.cc.
constexpr int64_t WORD_DIM = 128;
constexpr int64_t LSTM_DIM = 50;
constexpr int64_t HIDDEN_DIM = 32;
constexpr unsigned MIN_WORD_COUNT = 2;
constexpr double LEARNING_RATE = 0.1;
constexpr float FORGET_BIAS = 1.f;  // VanillaLSTMBuilder's default
constexpr size_t WARMUP = 100, TIMED = 2000;
const char* const TAGS[] = {"ADJ",  "ADP",  "ADV",   "AUX",   "CCONJ", "DET", "INTJ", "NOUN", "NUM",
                            "PART", "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X"};
constexpr int64_t NUM_TAGS = sizeof(TAGS) / sizeof(TAGS[0]);

struct Sentence {
  torch::Tensor words, tags;  // int64 {n}
  size_t size() const { return static_cast<size_t>(words.size(0)); }
};

/// The training sentences as ids, with the vocabulary rule of examples/tagger.cc.
/// Returns the number of word ids (<unk> is 0).
int64_t convert(const std::vector<dynet_lite::ConlluSentence>& corpus, const std::string& name,
                std::vector<Sentence>& out) {
  std::unordered_map<std::string, unsigned> counts;
  std::vector<std::string> order;  // first-appearance order, as the example's Dict
  for (const auto& s : corpus)
    for (const auto& t : s.tokens)
      if (counts[t.form]++ == 0) order.push_back(t.form);
  std::unordered_map<std::string, int64_t> words, tags;
  int64_t next = 1;  // 0 is <unk>
  for (const auto& w : order)
    if (counts[w] >= MIN_WORD_COUNT) words.emplace(w, next++);
  for (int64_t k = 0; k < NUM_TAGS; ++k) tags.emplace(TAGS[k], k);
  for (size_t si = 0; si < corpus.size(); ++si) {
    std::vector<int64_t> w, t;
    for (const auto& ct : corpus[si].tokens) {
      auto wi = words.find(ct.form);
      w.push_back(wi == words.end() ? 0 : wi->second);
      auto ti = tags.find(ct.upos);
      if (ti == tags.end())
        throw std::runtime_error(name + ": sentence " + std::to_string(si + 1) + ", token " + std::to_string(ct.id) +
                                 " '" + ct.form + "' has the tag '" + ct.upos +
                                 "', not one of the 17 universal POS tags");
      t.push_back(ti->second);
    }
    if (w.empty()) continue;
    const auto n = static_cast<int64_t>(w.size());
    out.push_back({torch::tensor(w, torch::kLong).view({n}), torch::tensor(t, torch::kLong).view({n})});
  }
  return next;
}

struct Lstm {
  torch::Tensor wx, wh, b;  // {4h, in}, {4h, h}, {4h}; the forget gate's rows are the second quarter
  explicit Lstm(int64_t in)
      : wx(torch_bench::glorot({4 * LSTM_DIM, in})),
        wh(torch_bench::glorot({4 * LSTM_DIM, LSTM_DIM})),
        b(torch::zeros({4 * LSTM_DIM}).requires_grad_()) {}
};

class Tagger {
 public:
  Tagger(int64_t vocab, bool sparse, bool per_token, bool explicit_gates)
      : emb_(torch_bench::glorot({vocab, WORD_DIM}, true)),
        fwd_(WORD_DIM),
        bwd_(WORD_DIM),
        w_(torch_bench::glorot({HIDDEN_DIM, 2 * LSTM_DIM})),
        b_(torch_bench::glorot({HIDDEN_DIM})),
        v_(torch_bench::glorot({NUM_TAGS, HIDDEN_DIM})),
        c_(torch_bench::glorot({NUM_TAGS})),
        sparse_(sparse),
        per_token_(per_token),
        explicit_gates_(explicit_gates) {
    forget_ = torch::zeros({4 * LSTM_DIM});
    forget_.narrow(0, LSTM_DIM, LSTM_DIM).fill_(FORGET_BIAS);
  }

  std::vector<torch::Tensor> parameters() const {
    return {emb_, fwd_.wx, fwd_.wh, fwd_.b, bwd_.wx, bwd_.wh, bwd_.b, w_, b_, v_, c_};
  }

  /// Once per update, as the example's new_graph: the LSTM biases with the
  /// forget bias folded in.
  void new_graph() {
    fb_ = fwd_.b + forget_;
    bb_ = bwd_.b + forget_;
  }

  /// Sum over tokens of -log softmax(scores)[gold].
  torch::Tensor sentence_loss(const Sentence& s) {
    const int64_t n = s.words.size(0);
    torch::Tensor x = torch::embedding(emb_, s.words, /*padding_idx=*/-1, /*scale_grad_by_freq=*/false, sparse_);
    fh_.assign(n, {});
    bh_.assign(n, {});
    torch::Tensor h, c;
    for (int64_t i = 0; i < n; ++i) fh_[i] = step(fwd_, fb_, x.narrow(0, i, 1), h, c);
    h = c = torch::Tensor();
    for (int64_t i = n; i-- > 0;) bh_[i] = step(bwd_, bb_, x.narrow(0, i, 1), h, c);
    if (per_token_) {
      std::vector<torch::Tensor> losses(n);
      for (int64_t i = 0; i < n; ++i) {
        torch::Tensor hid = torch::tanh(torch::addmm(b_, torch::cat({fh_[i], bh_[i]}, 1), w_.t()));
        torch::Tensor scores = torch::addmm(c_, hid, v_.t());
        losses[i] = torch::nll_loss(torch::log_softmax(scores, 1), s.tags.narrow(0, i, 1), {}, at::Reduction::Sum);
      }
      return torch::stack(losses).sum();
    }
    torch::Tensor states = torch::cat({torch::cat(fh_, 0), torch::cat(bh_, 0)}, 1);  // {n, 100}
    torch::Tensor hid = torch::tanh(torch::addmm(b_, states, w_.t()));
    torch::Tensor scores = torch::addmm(c_, hid, v_.t());  // {n, 17}
    return torch::nll_loss(torch::log_softmax(scores, 1), s.tags, {}, at::Reduction::Sum);
  }

 private:
  /// One LSTM step on x {1, in}; h and c advance.  torch::lstm_cell orders the
  /// gate rows i, f, g, o: the forget rows (where the + 1 goes) are the second
  /// quarter, as in DyNet's i, f, o, g, and the initial scales are the same for
  /// every row, so the two orders are the same model.
  torch::Tensor step(const Lstm& p, const torch::Tensor& bias, const torch::Tensor& x, torch::Tensor& h,
                     torch::Tensor& c) const {
    if (!explicit_gates_) {
      if (!h.defined()) h = c = torch::zeros({1, LSTM_DIM});
      auto hc = torch::lstm_cell(x, {h, c}, p.wx, p.wh, bias, {});
      c = std::get<1>(hc);
      return h = std::get<0>(hc);
    }
    // The gates written out, rows i, f, o, g; the first step has no W_h product.
    torch::Tensor pre = torch::addmm(bias, x, p.wx.t());
    if (h.defined()) pre = torch::addmm(pre, h, p.wh.t());
    torch::Tensor ifo = torch::sigmoid(pre.narrow(1, 0, 3 * LSTM_DIM));
    torch::Tensor g = torch::tanh(pre.narrow(1, 3 * LSTM_DIM, LSTM_DIM));
    torch::Tensor ig = ifo.narrow(1, 0, LSTM_DIM) * g;
    c = c.defined() ? torch::addcmul(ig, ifo.narrow(1, LSTM_DIM, LSTM_DIM), c) : ig;
    h = ifo.narrow(1, 2 * LSTM_DIM, LSTM_DIM) * torch::tanh(c);
    return h;
  }

  torch::Tensor emb_;
  Lstm fwd_, bwd_;
  torch::Tensor w_, b_, v_, c_, forget_;
  bool sparse_, per_token_, explicit_gates_;
  torch::Tensor fb_, bb_;
  std::vector<torch::Tensor> fh_, bh_;
};

/// Multiply-adds of the matrix products of one forward pass (examples/tagger.cc's count).
double forward_macs(size_t len) {
  const double n = static_cast<double>(len);
  return 2 * (4.0 * LSTM_DIM * WORD_DIM * n + 4.0 * LSTM_DIM * LSTM_DIM * (n - 1)) +
         n * (double(HIDDEN_DIM) * 2 * LSTM_DIM + double(NUM_TAGS) * HIDDEN_DIM);
}

void usage(std::ostream& out) {
  out << "usage: torch_tagger --bench b1|b64 [--data-dir DIR] [--train FILE] [--explicit-gates] [--dense-embedding]\n"
         "                    [--per-token]\n"
         "BENCHMARKS.md T1 in eager libtorch, one instance at a time; prints one line like `tagger --bench`.\n"
         "  --data-dir DIR       folder with ud-english-ewt/ (default ../shared/data from the project root)\n"
         "  --explicit-gates     the LSTM gates written out (default torch::lstm_cell)\n"
         "  --dense-embedding    dense gradient for the embedding table (default sparse)\n"
         "  --per-token          the output layer token by token (default once over the sentence)\n";
}

int run(int argc, char** argv) {
  std::string mode, data_dir, train_path;
  bool sparse = true, per_token = false, explicit_gates = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value (see --help)");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage(std::cout);
      return 0;
    } else if (a == "--bench") {
      mode = value();
    } else if (a == "--data-dir") {
      data_dir = value();
    } else if (a == "--train") {
      train_path = value();
    } else if (a == "--dense-embedding") {
      sparse = false;
    } else if (a == "--per-token") {
      per_token = true;
    } else if (a == "--explicit-gates") {
      explicit_gates = true;
    } else {
      throw std::invalid_argument("unknown option '" + a + "' (see --help)");
    }
  }
  if (mode != "b1" && mode != "b64") throw std::invalid_argument("--bench expects b1 or b64, got '" + mode + "'");
  if (data_dir.empty()) data_dir = torch_bench::default_data_dir();
  if (train_path.empty()) train_path = data_dir + "/ud-english-ewt/en_ewt-ud-train.conllu";

  // One thread, as every figure of BENCHMARKS.md; set before any parallel work.
  torch_bench::use_one_thread();
  const std::string blas = torch_bench::blas_library();
  torch::manual_seed(1);

  std::vector<Sentence> train;
  const int64_t vocab = convert(dynet_lite::read_conllu(train_path), train_path, train);
  if (train.size() < WARMUP + TIMED)
    throw std::runtime_error("--bench needs " + std::to_string(WARMUP + TIMED) + " training sentences, '" + train_path +
                             "' has " + std::to_string(train.size()));
  const size_t batch = mode == "b1" ? 1 : 64;

  Tagger tagger(vocab, sparse, per_token, explicit_gates);
  std::vector<torch::Tensor> params = tagger.parameters();
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(LEARNING_RATE));
  const torch_bench::TimedRun run = torch_bench::train_timed(
      WARMUP, TIMED, batch, [&] { tagger.new_graph(); }, [&](size_t k) { return tagger.sentence_loss(train[k]); }, sgd,
      params);
  const std::vector<float>& first_losses = run.first_losses;
  const double loss_sum = run.loss_sum, seconds = run.seconds;
  size_t words = 0;
  double macs = 0;
  for (size_t k = WARMUP; k < WARMUP + TIMED; ++k) {
    words += train[k].size();
    macs += forward_macs(train[k].size());
  }
  const double gflops = 3 * 2 * macs / seconds / 1e9;  // forward + two backward products, 2 flops a MAC
  std::ostringstream line;
  line << "T1 tagger mode=" << mode << " lib=libtorch torch=" << TORCH_VERSION << " sentences=" << TIMED
       << " words=" << words << " seconds=" << std::fixed << std::setprecision(3) << seconds
       << " sent/s=" << std::setprecision(1) << TIMED / seconds << " words/s=" << words / seconds
       << " loss_first_steps=";
  for (size_t i = 0; i < first_losses.size(); ++i) line << (i ? "," : "") << std::setprecision(4) << first_losses[i];
  line << " loss/word=" << std::setprecision(4) << loss_sum / words << " GFLOP/s=" << std::setprecision(2) << gflops
       << " gemm512_GFLOP/s=" << torch_bench::gemm512_gflops() << " embedding=" << (sparse ? "sparse" : "dense")
       << " output_layer=" << (per_token ? "per-token" : "per-sentence")
       << " lstm=" << (explicit_gates ? "explicit-gates" : "lstm_cell");
  torch_bench::append_tail(line, blas);
  std::cout << line.str() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  torch_bench::use_best_openblas_kernels(argv);
  return bench::run_reporting_errors("torch_tagger", run, argc, argv);
}
