// torch_treelstm: BENCHMARKS.md task T3 (binary Tree-LSTM sentiment classifier)
// written per instance in eager libtorch, the reference that dynet_lite's
// `treelstm --bench` figures are compared with (bench/run_all.py --torch).
//
// It mirrors examples/treelstm.cc's benchmark mode: the same tree reader
// (dynet_lite/io/ptb_tree.h), the same vocabulary (every train word, in
// first-appearance order after <unk>), 50 warm-up then 1,000 counted trees in
// file order, embedding 128, the N-ary Tree-LSTM of Tai et al. 2015 with N = 2
// and 128 units as NaryTreeLSTMBuilder computes it (one matrix of rows i, o, u,
// f_0, f_1 per input and per child position, the forget gates' pre-activations
// + 1, leaves from their word, inner nodes from their children only), the root's
// scores W h + b over 5 classes, the loss -log softmax at the root, plain SGD
// with learning rate 0.1 after DyNet's global-norm clipping at 5, DyNet's
// Glorot scales, one thread.
//
// The graph is built eagerly, one tree at a time and one node at a time in
// post-order, as a libtorch user would write the recursion.  b1: one tree per
// update; b64: the losses of 64 trees summed, one backward and one update.  The
// embeddings of a tree's leaves are looked up in one call, with a sparse gradient.
//
//   torch_treelstm --bench b1|b64 [--data-dir DIR] [--train FILE]
//
// Prints one line in the format of `treelstm --bench`, with lib=libtorch.
#include <torch/torch.h>
#include <torch/version.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "dynet_lite/io/ptb_tree.h"
#include "torch_common.h"

namespace {

// Hyperparameters of T3 (BENCHMARKS.md), as in examples/treelstm.cc.
constexpr int64_t EMB_DIM = 128;
constexpr int64_t HIDDEN_DIM = 128;
constexpr int64_t N = 2;  // children per node at most
constexpr int64_t GATE_ROWS = (3 + N) * HIDDEN_DIM;
constexpr int64_t NUM_CLASSES = 5;
constexpr double LEARNING_RATE = 0.1;
constexpr size_t WARMUP = 50, TIMED = 1000;

/// A tree as ids, nodes in post-order (children first, root last).
struct Tree {
  std::vector<int> children[2];  ///< per node, -1 where there is no such child
  std::vector<int> leaf;         ///< per node: its index among the leaves, -1 for an inner node
  torch::Tensor words;           ///< int64 {leaves}
  int64_t root_label = 0;
  size_t leaves = 0;
  size_t size() const { return leaf.size(); }
};

/// The trees as ids, with examples/treelstm.cc's vocabulary.  Returns the
/// number of word ids (<unk> is 0).
int64_t convert(const std::vector<dynet_lite::PTBTree>& trees, const std::string& name, std::vector<Tree>& out) {
  std::unordered_map<std::string, int64_t> words{{"<unk>", 0}};
  for (const auto& t : trees)
    for (const auto& n : t.nodes)
      if (n.is_leaf()) words.emplace(n.word, static_cast<int64_t>(words.size()));
  for (size_t ti = 0; ti < trees.size(); ++ti) {
    const auto& t = trees[ti];
    if (t.nodes.empty()) continue;
    Tree r;
    std::vector<int64_t> ids;
    for (const auto& n : t.nodes) {
      if (n.label < 0 || n.label >= NUM_CLASSES)
        throw std::runtime_error(name + ": tree " + std::to_string(ti + 1) + " has the label " +
                                 std::to_string(n.label) + ", expected 0..4");
      if (n.children.size() > static_cast<size_t>(N))
        throw std::runtime_error(name + ": tree " + std::to_string(ti + 1) + " has a node with " +
                                 std::to_string(n.children.size()) + " children; the binary Tree-LSTM needs at most 2");
      for (int l = 0; l < 2; ++l) r.children[l].push_back(l < static_cast<int>(n.children.size()) ? n.children[l] : -1);
      r.leaf.push_back(n.is_leaf() ? static_cast<int>(ids.size()) : -1);
      if (n.is_leaf()) ids.push_back(words.at(n.word));
    }
    r.leaves = ids.size();
    r.words = torch::tensor(ids, torch::kLong).view({static_cast<int64_t>(ids.size())});
    r.root_label = t.root_label();
    out.push_back(std::move(r));
  }
  return static_cast<int64_t>(words.size());
}

class TreeClassifier {
 public:
  explicit TreeClassifier(int64_t vocab)
      : emb_(torch_bench::glorot({vocab, EMB_DIM}, true)),
        w_(torch_bench::glorot({GATE_ROWS, EMB_DIM})),
        b_(torch::zeros({GATE_ROWS}).requires_grad_()),
        u_{torch_bench::glorot({GATE_ROWS, HIDDEN_DIM}), torch_bench::glorot({GATE_ROWS, HIDDEN_DIM})},
        wo_(torch_bench::glorot({NUM_CLASSES, HIDDEN_DIM})),
        bo_(torch_bench::glorot({NUM_CLASSES})) {
    forget_ = torch::zeros({GATE_ROWS});
    forget_.narrow(0, 3 * HIDDEN_DIM, N * HIDDEN_DIM).fill_(1.f);
  }

  std::vector<torch::Tensor> parameters() const { return {emb_, w_, b_, u_[0], u_[1], wo_, bo_}; }

  /// Once per update, as the builder's new_graph: the bias with the forget gates' + 1.
  void new_graph() { bias_ = b_ + forget_; }

  /// -log softmax(W h_root + b)[root label].
  torch::Tensor loss(const Tree& t) {
    torch::Tensor x = torch::embedding(emb_, t.words, /*padding_idx=*/-1, /*scale_grad_by_freq=*/false,
                                       /*sparse=*/true);
    h_.assign(t.size(), {});
    c_.assign(t.size(), {});
    for (size_t k = 0; k < t.size(); ++k) {
      // A leaf has no forget gate: only the i, o, u rows of W and b (as the
      // NaryTreeLSTMBuilder does).
      torch::Tensor pre = t.leaf[k] >= 0 ? torch::addmm(bias_.narrow(0, 0, 3 * HIDDEN_DIM), x.narrow(0, t.leaf[k], 1),
                                                        w_.narrow(0, 0, 3 * HIDDEN_DIM).t())
                                         : bias_.view({1, -1});
      int nchild = 0;
      for (int l = 0; l < 2; ++l)
        if (t.children[l][k] >= 0) {
          pre = torch::addmm(pre, h_[t.children[l][k]], u_[l].t());
          ++nchild;
        }
      torch::Tensor io = torch::sigmoid(pre.narrow(1, 0, 2 * HIDDEN_DIM));
      torch::Tensor c = io.narrow(1, 0, HIDDEN_DIM) * torch::tanh(pre.narrow(1, 2 * HIDDEN_DIM, HIDDEN_DIM));
      if (nchild) {
        torch::Tensor f = torch::sigmoid(pre.narrow(1, 3 * HIDDEN_DIM, nchild * HIDDEN_DIM));
        for (int l = 0; l < nchild; ++l)
          c = torch::addcmul(c, f.narrow(1, l * HIDDEN_DIM, HIDDEN_DIM), c_[t.children[l][k]]);
      }
      c_[k] = c;
      h_[k] = io.narrow(1, HIDDEN_DIM, HIDDEN_DIM) * torch::tanh(c);
    }
    torch::Tensor scores = torch::addmm(bo_, h_.back(), wo_.t());  // {1, 5}
    return torch::nll_loss(torch::log_softmax(scores, 1), torch::full({1}, t.root_label, torch::kLong), {},
                           at::Reduction::Sum);
  }

  /// Multiply-adds of one forward pass (examples/treelstm.cc's count, root loss).
  static double forward_macs(const Tree& t) {
    double macs = 0;
    for (size_t k = 0; k < t.size(); ++k)
      macs += t.leaf[k] >= 0 ? 3.0 * HIDDEN_DIM * EMB_DIM  // i, o, u rows only
                             : ((t.children[0][k] >= 0) + (t.children[1][k] >= 0)) * double(GATE_ROWS) * HIDDEN_DIM;
    return macs + double(NUM_CLASSES) * HIDDEN_DIM;
  }

 private:
  torch::Tensor emb_, w_, b_, u_[2], wo_, bo_, forget_, bias_;
  std::vector<torch::Tensor> h_, c_;
};

void usage(std::ostream& out) {
  out << "usage: torch_treelstm --bench b1|b64 [--data-dir DIR] [--train FILE]\n"
         "BENCHMARKS.md T3 in eager libtorch, one tree at a time; prints one line like `treelstm --bench`.\n"
         "  --data-dir DIR       folder with sst/ (default ../shared/data from the project root)\n";
}

int run(int argc, char** argv) {
  std::string mode, data_dir, train_path;
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
    } else {
      throw std::invalid_argument("unknown option '" + a + "' (see --help)");
    }
  }
  if (mode != "b1" && mode != "b64") throw std::invalid_argument("--bench expects b1 or b64, got '" + mode + "'");
  if (data_dir.empty()) data_dir = torch_bench::default_data_dir();
  if (train_path.empty()) train_path = data_dir + "/sst/train.txt";

  torch_bench::use_one_thread();
  const std::string blas = torch_bench::blas_library();
  torch::manual_seed(1);

  std::vector<Tree> train;
  const int64_t vocab = convert(dynet_lite::read_ptb_trees(train_path), train_path, train);
  if (train.size() < WARMUP + TIMED)
    throw std::runtime_error("--bench needs " + std::to_string(WARMUP + TIMED) + " training trees, '" + train_path +
                             "' has " + std::to_string(train.size()));
  const size_t batch = mode == "b1" ? 1 : 64;

  TreeClassifier model(vocab);
  std::vector<torch::Tensor> params = model.parameters();
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(LEARNING_RATE));
  const torch_bench::TimedRun run = torch_bench::train_timed(
      WARMUP, TIMED, batch, [&] { model.new_graph(); }, [&](size_t k) { return model.loss(train[k]); }, sgd,
      params);
  const std::vector<float>& first_losses = run.first_losses;
  const double loss_sum = run.loss_sum, seconds = run.seconds;
  size_t words = 0, nodes = 0;
  double macs = 0;
  for (size_t k = WARMUP; k < WARMUP + TIMED; ++k) {
    words += train[k].leaves;
    nodes += train[k].size();
    macs += TreeClassifier::forward_macs(train[k]);
  }
  const double gflops = 3 * 2 * macs / seconds / 1e9;  // forward + two backward products, 2 flops a MAC
  std::ostringstream line;
  line << "T3 treelstm mode=" << mode << " lib=libtorch torch=" << TORCH_VERSION << " trees=" << TIMED
       << " words=" << words << " nodes=" << nodes << " seconds=" << std::fixed << std::setprecision(3) << seconds
       << " trees/s=" << std::setprecision(1) << TIMED / seconds << " words/s=" << words / seconds
       << " loss_first_steps=";
  for (size_t i = 0; i < first_losses.size(); ++i) line << (i ? "," : "") << std::setprecision(4) << first_losses[i];
  line << " loss/tree=" << std::setprecision(4) << loss_sum / TIMED << " GFLOP/s=" << std::setprecision(2) << gflops
       << " gemm512_GFLOP/s=" << torch_bench::gemm512_gflops() << " embedding=sparse";
  torch_bench::append_tail(line, blas);
  std::cout << line.str() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  torch_bench::use_best_openblas_kernels(argv);
  return bench::run_reporting_errors("torch_treelstm", run, argc, argv);
}
