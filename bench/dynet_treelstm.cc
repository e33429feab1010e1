// dynet_treelstm: BENCHMARKS.md task T3 (binary Tree-LSTM sentiment classifier)
// written for DyNet 2.1 itself, compared with dynet_lite's `treelstm --bench` in
// the same rounds (bench/run_all.py --dynet).
//
// The model is the one examples/treelstm.cc trains: the N-ary Tree-LSTM of Tai
// et al. 2015 (N = 2, 128 units) as dynet_lite's NaryTreeLSTMBuilder computes
// it.  DyNet's own NaryTreeLSTMBuilder is another model (peephole terms from the
// children's cells, an input at every node, one parameter lookup per gate and
// child), so the cell is written here with DyNet's expressions, as a DyNet user
// writes a Tree-LSTM: per inner node one affine_transform for the rows i, o, u,
// f_0, f_1 from the two children's outputs, the gates picked with pick_range,
// the forget gates' pre-activations + 1; per leaf one affine_transform for the
// rows i, o, u from the word embedding (a leaf has no forget gate).  The
// parameters are drawn in the order, shapes and initialisation of the example's
// (W as {5h, 128}, of which the leaves use the rows i, o, u; b zero), so that
// DyNet draws the same initial values and the first losses agree to float
// rounding.  The root's
// scores W h + b over 5 classes, the loss pickneglogsoftmax at the root.  Every
// train word in first-appearance order after <unk>, 50 warm-up then 1,000
// counted trees in file order, SimpleSGDTrainer with rate 0.1 (DyNet's default
// clipping), one thread.
//
//   dynet_treelstm --bench b1|b64|b64-auto|b64-depth [--data-dir DIR] [--dynet-mem M]
//                  [--dynet-fusion 0|1: the copy ported to dynet_lite only]
//
// Prints one line in the format of `treelstm --bench`, with lib=dynet.
#include <dynet/dynet.h>
#include <dynet/expr.h>
#include <dynet/init.h>
#include <dynet/param-init.h>
#include <dynet/training.h>

#include <iostream>
#include <unordered_map>

#include "dynet_common.h"

using namespace dynet;

namespace {

constexpr unsigned EMB_DIM = 128;
constexpr unsigned HIDDEN_DIM = 128;
constexpr unsigned NUM_CLASSES = 5;
constexpr float LEARNING_RATE = 0.1f;
constexpr size_t WARMUP = 50, TIMED = 1000;

struct Tree {
  std::vector<int> word;  ///< per node: word id, -1 for an inner node
  std::vector<std::vector<int>> children;
  unsigned root_label = 0;
  size_t size() const { return word.size(); }
};

unsigned convert(const std::vector<dynet_bench::BracketTree>& raw, std::vector<Tree>& out) {
  std::unordered_map<std::string, int> words;
  words.emplace("<unk>", 0);
  for (const auto& t : raw)
    for (size_t k = 0; k < t.size(); ++k)
      if (t.children[k].empty()) words.emplace(t.word[k], static_cast<int>(words.size()));
  for (const auto& t : raw) {
    Tree r;
    for (size_t k = 0; k < t.size(); ++k) {
      if (t.children[k].size() > 2) throw std::runtime_error("a node with more than 2 children");
      if (t.label[k] < 0 || t.label[k] >= static_cast<int>(NUM_CLASSES)) throw std::runtime_error("label out of range");
      r.word.push_back(t.children[k].empty() ? words.at(t.word[k]) : -1);
      r.children.push_back(t.children[k]);
    }
    r.root_label = static_cast<unsigned>(t.label.back());
    out.push_back(std::move(r));
  }
  return static_cast<unsigned>(words.size());
}

class TreeClassifier {
 public:
  TreeClassifier(ParameterCollection& pc, unsigned vocab)
      : p_emb(pc.add_lookup_parameters(vocab, {EMB_DIM})),
        draw_only_(),
        p_Wiou(iou_rows_of(pc, draw_only_.add_parameters({5 * HIDDEN_DIM, EMB_DIM}))),
        p_b(pc.add_parameters({5 * HIDDEN_DIM}, ParameterInitConst(0.f))),
        p_U0(pc.add_parameters({5 * HIDDEN_DIM, HIDDEN_DIM})),
        p_U1(pc.add_parameters({5 * HIDDEN_DIM, HIDDEN_DIM})),
        p_W(pc.add_parameters({NUM_CLASSES, HIDDEN_DIM})),
        p_bout(pc.add_parameters({NUM_CLASSES})) {}

  void new_graph(ComputationGraph& cg) {
    cg_ = &cg;
    Wiou = parameter(cg, p_Wiou);
    U0 = parameter(cg, p_U0);
    U1 = parameter(cg, p_U1);
    b = parameter(cg, p_b);
    biou = pick_range(b, 0, 3 * HIDDEN_DIM);
    W = parameter(cg, p_W);
    bout = parameter(cg, p_bout);
  }

  Expression loss(const Tree& t) {
    const unsigned H = HIDDEN_DIM;
    h_.resize(t.size());
    c_.resize(t.size());
    for (size_t k = 0; k < t.size(); ++k) {
      const auto& ch = t.children[k];
      Expression pre = t.word[k] >= 0   ? affine_transform({biou, Wiou, lookup(*cg_, p_emb, t.word[k])})
                       : ch.size() == 2 ? affine_transform({b, U0, h_[ch[0]], U1, h_[ch[1]]})
                                        : affine_transform({b, U0, h_[ch[0]]});
      Expression io = logistic(pick_range(pre, 0, 2 * H));
      Expression u = tanh(pick_range(pre, 2 * H, 3 * H));
      Expression c = cmult(pick_range(io, 0, H), u);
      if (t.word[k] < 0) {
        Expression f = logistic(pick_range(pre, 3 * H, (3 + ch.size()) * H) + 1.f);
        for (size_t l = 0; l < ch.size(); ++l) c = c + cmult(pick_range(f, l * H, (l + 1) * H), c_[ch[l]]);
      }
      c_[k] = c;
      h_[k] = cmult(pick_range(io, H, 2 * H), tanh(c));
    }
    return pickneglogsoftmax(affine_transform({bout, W, h_.back()}), t.root_label);
  }

  /// examples/treelstm.cc's forward_macs (root loss).
  static double forward_macs(const Tree& t) {
    double macs = 0;
    for (size_t k = 0; k < t.size(); ++k)
      macs += t.word[k] >= 0 ? 3.0 * HIDDEN_DIM * EMB_DIM : t.children[k].size() * 5.0 * HIDDEN_DIM * HIDDEN_DIM;
    return macs + double(NUM_CLASSES) * HIDDEN_DIM;
  }

 private:
  LookupParameter p_emb;
  /// A parameter {3h, 128} holding the rows i, o, u of `w` ({5h, 128}).
  static Parameter iou_rows_of(ParameterCollection& pc, Parameter w) {
    const std::vector<float> all = as_vector(*w.values());
    const unsigned rows = 5 * HIDDEN_DIM, keep = 3 * HIDDEN_DIM;
    std::vector<float> iou(keep * EMB_DIM);
    for (unsigned c = 0; c < EMB_DIM; ++c)
      std::copy(all.begin() + c * rows, all.begin() + c * rows + keep, iou.begin() + c * keep);
    Parameter p = pc.add_parameters({keep, EMB_DIM}, ParameterInitConst(0.f));
    p.set_value(iou);
    return p;
  }

  ParameterCollection draw_only_;  ///< W's draw, outside the trained model
  Parameter p_Wiou, p_b, p_U0, p_U1, p_W, p_bout;
  ComputationGraph* cg_ = nullptr;
  Expression Wiou, U0, U1, b, biou, W, bout;
  std::vector<Expression> h_, c_;
};

int run(int argc, char** argv) {
  const dynet_bench::Options o = dynet_bench::parse_options(argc, argv, "sst/train.txt", "1024", false, false);
  dynet_bench::check_instance_mode(o.mode);
  dynet_bench::initialize_dynet(o);
  // Before the data is read: its matrices do not add to the peak resident memory.
  const double gemm512 = dynet_bench::gemm512_gflops();

  std::vector<Tree> train;
  const unsigned vocab = convert(dynet_bench::read_trees(o.train_path), train);
  if (train.size() < WARMUP + TIMED) throw std::runtime_error("too few trees in '" + o.train_path + "'");
  ParameterCollection pc;
  TreeClassifier model(pc, vocab);
  SimpleSGDTrainer trainer(pc, LEARNING_RATE);
  const dynet_bench::TimedRun run = dynet_bench::train_timed(
      WARMUP, TIMED, o.mode == "b1" ? 1 : 64, [&](ComputationGraph& cg) { model.new_graph(cg); },
      [&](size_t k) { return model.loss(train[k]); }, trainer);
  const double seconds = run.seconds;
  double macs = 0;
  size_t nodes = 0;
  for (size_t k = WARMUP; k < WARMUP + TIMED; ++k) {
    macs += TreeClassifier::forward_macs(train[k]);
    nodes += train[k].size();
  }
  std::ostringstream line;
  line << "T3 treelstm mode=" << o.mode << " trees=" << TIMED << " nodes=" << nodes << " seconds=" << std::fixed
       << std::setprecision(3) << seconds << " trees/s=" << std::setprecision(1) << TIMED / seconds
       << " loss_first_steps=" << dynet_bench::first_losses(run.first_losses) << " loss/tree=" << std::setprecision(4)
       << run.loss_sum / TIMED << " GFLOP/s=" << std::setprecision(2) << 3 * 2 * macs / seconds / 1e9
       << " gemm512_GFLOP/s=" << gemm512;
  dynet_bench::append_tail(line);
  std::cout << line.str() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return bench::run_reporting_errors("dynet_treelstm", run, argc, argv); }
