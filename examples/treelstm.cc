// treelstm: a binary Tree-LSTM sentiment classifier on the Stanford Sentiment
// Treebank, the benchmark task T3 `treelstm` of BENCHMARKS.md.
//
// Model: every train word has a 128-dim embedding (unknown words share <unk>);
// a binary (N-ary, N = 2) Tree-LSTM of Tai, Socher & Manning 2015 with 128 units
// (NaryTreeLSTMBuilder) computes every node bottom-up, the leaves from their word
// embedding, the inner nodes from their two children; a node's sentiment (5
// classes, 0 very negative .. 4 very positive) is softmax(W h + b).  The loss is
// pickneglogsoftmax at the root (the benchmark), or at every node (--all-nodes,
// the default for training, as it learns faster).  Plain SGD with rate 0.1.
//
// Run `treelstm --help` for the options (training, --predict, --bench).
#include "dynet_lite/treelstm.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/bench.h"
#include "common/cli.h"
#include "common/onnx_reference.h"
#include "common/util.h"
#include "common/vocab_file.h"
#include "dynet_lite/compile.h"
#include "dynet_lite/dict.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/init.h"
#include "dynet_lite/io.h"
#include "dynet_lite/io/ptb_tree.h"
#include "dynet_lite/training.h"
#ifdef DYNET_LITE_ONNX
#include "dynet_lite/onnx.h"
#endif

namespace dynet = dynet_lite;
using namespace dynet;

namespace {

// Hyperparameters of T3 (BENCHMARKS.md).
constexpr unsigned EMB_DIM = 128;
constexpr unsigned HIDDEN_DIM = 128;
constexpr unsigned NUM_CLASSES = 5;
constexpr float LEARNING_RATE = 0.1f;
const char* const UNK = "<unk>";
const char* const VOCAB_MAGIC = "dynet_lite-treelstm-vocabulary";

/// A text key of a tree (labels, words and shape), to find the same tree in two files.
std::string tree_key(const PTBTree& t) {
  std::string k;
  for (const auto& n : t.nodes) {
    k += std::to_string(n.label);
    if (n.is_leaf()) {
      k += ' ';
      k += n.word;
    } else {
      for (int c : n.children) k += ',' + std::to_string(c);
    }
    k += '\n';
  }
  return k;
}

/// A tree ready for the network, nodes in post-order (children first, root last).
/// A node has at most two children, kept in place (-1 where there is none): a
/// training set holds some 300,000 nodes.
struct Tree {
  std::vector<int> word;                      ///< per node: word id, -1 for an inner node
  std::vector<std::array<int, 2>> child_ids;  ///< per node: its children, -1 for none
  std::vector<unsigned> label;                ///< per node, 0..4
  size_t size() const { return word.size(); }
  unsigned root_label() const { return label.back(); }
  size_t leaves() const { return static_cast<size_t>(std::count_if(word.begin(), word.end(), [](int w) { return w >= 0; })); }
  size_t num_children(size_t k) const { return (child_ids[k][0] >= 0) + (child_ids[k][1] >= 0); }
  /// The children of node k, as the Tree-LSTM builder takes them.
  std::vector<int> children(size_t k) const {
    return std::vector<int>(child_ids[k].begin(), child_ids[k].begin() + num_children(k));
  }
  /// The tree's shape (the wiring of its nodes, not its words or labels), as a key.
  uint64_t shape_key() const {
    std::vector<unsigned> shape;
    for (size_t k = 0; k < size(); ++k) {
      shape.push_back(static_cast<unsigned>(num_children(k)));
      for (size_t l = 0; l < num_children(k); ++l) shape.push_back(static_cast<unsigned>(child_ids[k][l]));
    }
    return dynet_lite::ProgramCache::key_of(shape);
  }
};

struct Vocabulary {
  Dict words;

  /// The vocabulary of the training trees, and the trees converted: they are
  /// read one at a time (the parsed text is never held whole), each word added
  /// at its first appearance.  A tree `skip` returns true for is left out (it
  /// sees every tree of the file); the first `max` others are kept (0: all).
  template <class Skip>
  static Vocabulary build(const std::string& path, size_t max, Skip skip, std::vector<Tree>& trees) {
    Vocabulary v;
    v.words.convert(UNK);
    PTBTreeReader reader(path);
    for (PTBTree t; reader.next(t);)
      if (!skip(t) && (max == 0 || trees.size() < max)) v.add(t, trees.size(), path, trees);
    trees.shrink_to_fit();
    v.words.freeze();
    v.words.set_unk(UNK);
    return v;
  }

  /// The trees of `path` (unknown words are <unk>), read one at a time.
  std::vector<Tree> read(const std::string& path) {
    std::vector<Tree> out;
    PTBTreeReader reader(path);
    for (PTBTree t; reader.next(t);) add(t, out.size(), path, out);
    out.shrink_to_fit();
    return out;
  }

  /// Converts tree `t` (number `index` of the file `name`) onto `out`; a label
  /// outside 0..4 is an error naming the file and tree.
  void add(const PTBTree& t, size_t index, const std::string& name, std::vector<Tree>& out) {
    Tree r;
    r.word.reserve(t.size());
    r.child_ids.reserve(t.size());
    r.label.reserve(t.size());
    for (const auto& n : t.nodes) {
      DYNET_LITE_CHECK(n.label >= 0 && n.label < static_cast<int>(NUM_CLASSES), std::runtime_error,
                       name << ": tree " << index + 1 << " has the label " << n.label << ", expected 0.."
                            << NUM_CLASSES - 1);
      DYNET_LITE_CHECK(n.children.size() <= 2, std::runtime_error,
                       name << ": tree " << index + 1 << " has a node with " << n.children.size()
                            << " children; the binary Tree-LSTM needs at most 2");
      r.word.push_back(n.is_leaf() ? words.convert(n.word) : -1);
      std::array<int, 2> c{-1, -1};
      std::copy(n.children.begin(), n.children.end(), c.begin());
      r.child_ids.push_back(c);
      r.label.push_back(static_cast<unsigned>(n.label));
    }
    if (r.size()) out.push_back(std::move(r));
  }

  /// The vocabulary file's content (examples::save_model writes it).
  examples::VocabularyWriter write() const {
    examples::VocabularyWriter out(VOCAB_MAGIC);
    out.dict("words", words);
    return out;
  }

  static Vocabulary load(const std::string& path) {
    examples::VocabularyReader in(path, VOCAB_MAGIC, "treelstm");
    Vocabulary v;
    in.dict("words", v.words);
    v.words.freeze();
    in.check(v.words.contains(UNK), std::string("the words lack ") + UNK);
    v.words.set_unk(UNK);
    return v;
  }
};

/// The network.  Built once; per graph only new_graph() and the expressions.
class TreeClassifier {
 public:
  TreeClassifier(ParameterCollection& pc, const Vocabulary& v)
      : p_emb(pc.add_lookup_parameters(v.words.size(), {EMB_DIM}, "word-embeddings")),
        builder(2, 1, EMB_DIM, HIDDEN_DIM, pc),
        p_W(pc.add_parameters({NUM_CLASSES, HIDDEN_DIM}, 0.f, "W-output")),
        p_b(pc.add_parameters({NUM_CLASSES}, 0.f, "b-output")) {}

  void new_graph(ComputationGraph& cg, bool training) {
    cg_ = &cg;
    training_ = training;
    builder.new_graph(cg, training);
    W = training ? parameter(cg, p_W) : const_parameter(cg, p_W);
    b = training ? parameter(cg, p_b) : const_parameter(cg, p_b);
  }

  /// Runs the Tree-LSTM over `t`; the states land in h_ (per node).
  void encode(const Tree& t) {
    builder.start_new_sequence();
    builder.set_num_elements(static_cast<int>(t.size()));
    h_.resize(t.size());
    for (size_t k = 0; k < t.size(); ++k) {
      Expression x = t.word[k] < 0 ? Expression() : leaf_input(t, k);  // an inner node: only its children
      h_[k] = builder.add_input(static_cast<int>(k), t.children(k), x);
    }
  }

  Expression scores(const Expression& h) { return affine_transform({b, W, h}); }

  /// pickneglogsoftmax at the root, or summed over every node.
  Expression loss(const Tree& t, bool all_nodes) {
    encode(t);
    if (!all_nodes) return pickneglogsoftmax(scores(h_.back()), t.root_label());
    losses_.resize(t.size());
    for (size_t k = 0; k < t.size(); ++k) losses_[k] = pickneglogsoftmax(scores(h_[k]), t.label[k]);
    return sum(losses_);
  }

  /// Class probabilities at the root.
  std::vector<float> root_probabilities(const Tree& t) { return as_vector(cg_->forward(root_softmax(t))); }
  Expression root_softmax(const Tree& t) {
    encode(t);
    return softmax(scores(h_.back()));
  }

#ifdef DYNET_LITE_ONNX
  /// Writes the network as ONNX, traced on `sample` (a tree with leaves and inner
  /// nodes): inputs "tree_words" int64 [nodes] (word id of each leaf, -1 for
  /// inner nodes) and "tree_children" int64 [nodes, 2] (-1 for leaves), nodes in
  /// post-order; output "probs" float [1, 5], the root's class probabilities.
  /// One file serves every tree.
  void export_onnx(const Tree& sample, const std::string& path) {
    ComputationGraph cg;
    new_graph(cg, false);
    Expression probs = root_softmax(sample);
    OnnxExporter ex(cg);
    ex.add_tree(builder, "tree");
    ex.add_output(probs, "probs");
    ex.save(path);
  }
#endif

  /// While set, the graphs built read the leaves' words from slots of `p`
  /// (--compile: a program per tree shape).
  void use_program(Program* p) { program_ = p; }
  /// Sets the word slots of a program built for the shape of `t`.
  static void bind(Program& p, const Tree& t) {
    for (size_t k = 0; k < t.size(); ++k)
      if (t.word[k] >= 0) p.set("w" + std::to_string(k), static_cast<unsigned>(t.word[k]));
  }

  /// Multiply-adds of the matrix products of one forward pass: W x at the
  /// leaves (the i, o, u rows: a leaf has no forget gate), U_l h_l per child at
  /// the inner nodes, and the output layer at the root (or at every node).
  static double forward_macs(const Tree& t, bool all_nodes) {
    const double gates = (3 + 2) * HIDDEN_DIM;
    double macs = 0;
    for (size_t k = 0; k < t.size(); ++k)
      macs += t.word[k] >= 0 ? 3.0 * HIDDEN_DIM * EMB_DIM : t.num_children(k) * gates * HIDDEN_DIM;
    macs += (all_nodes ? t.size() : 1) * double(NUM_CLASSES) * HIDDEN_DIM;
    return macs;
  }

 private:
  Expression leaf_input(const Tree& t, size_t k) {
    if (program_) {
      const unsigned* slot = program_->index("w" + std::to_string(k));
      return training_ ? lookup(*cg_, p_emb, slot) : const_lookup(*cg_, p_emb, slot);
    }
    const unsigned w = static_cast<unsigned>(t.word[k]);
    return training_ ? lookup(*cg_, p_emb, w) : const_lookup(*cg_, p_emb, w);
  }

  LookupParameter p_emb;
  NaryTreeLSTMBuilder builder;
  Parameter p_W, p_b;
  ComputationGraph* cg_ = nullptr;
  Program* program_ = nullptr;
  bool training_ = true;
  Expression W, b;
  std::vector<Expression> h_, losses_;
};

/// Root accuracies: fine-grained (5 classes) and binary (negative 0-1 against
/// positive 3-4, trees with a neutral root left out; the prediction compares the
/// summed probabilities of the two sides).
struct Accuracy {
  double fine = 0, binary = 0;
  size_t trees = 0, binary_trees = 0;
};

/// Root class probabilities of `t`: from a program of `programs` built for its
/// shape once the shape comes a second time, else from an ordinary graph.
std::vector<float> root_probabilities_compiled(TreeClassifier& model, ProgramCache& programs, const Tree& t) {
  Program* p = programs.get_if_seen(t.shape_key(), 1, [&](Program& p) {
    model.new_graph(p.graph(), false);
    model.use_program(&p);
    p.set_output(model.root_softmax(t));
    model.use_program(nullptr);
  });
  if (!p) {
    ComputationGraph cg;
    model.new_graph(cg, false);
    return model.root_probabilities(t);
  }
  TreeClassifier::bind(*p, t);
  return as_vector(p->forward());
}

/// Programs kept at once (--compile).
constexpr size_t kPrograms = 4096;

Accuracy evaluate(TreeClassifier& model, const std::vector<Tree>& data, ProgramCache* programs = nullptr) {
  size_t fine_ok = 0, bin_ok = 0, bin_n = 0;
  for (const auto& t : data) {
    std::vector<float> p;
    if (programs) {
      p = root_probabilities_compiled(model, *programs, t);
    } else {
      ComputationGraph cg;
      model.new_graph(cg, false);
      p = model.root_probabilities(t);
    }
    const unsigned pred = static_cast<unsigned>(std::max_element(p.begin(), p.end()) - p.begin());
    fine_ok += pred == t.root_label();
    if (t.root_label() != 2) {
      ++bin_n;
      const bool gold_pos = t.root_label() > 2;
      const bool pred_pos = p[3] + p[4] > p[0] + p[1];
      bin_ok += gold_pos == pred_pos;
    }
  }
  Accuracy a;
  a.trees = data.size();
  a.binary_trees = bin_n;
  a.fine = data.empty() ? 0 : double(fine_ok) / data.size();
  a.binary = bin_n ? double(bin_ok) / bin_n : 0;
  return a;
}

struct Options : examples::CorpusOptions {
  std::string model_path = "treelstm.model", load, predict, bench, export_path, reference_path;
  bool all_nodes = true, all_nodes_given = false, root_only = false, keep_dev_in_train = false, compile = false,
       tree_shapes = false;
  unsigned epochs = 5, max_train = 0, batch = 1;
};

const examples::CorpusLayout SST{"sst", "train.txt", "dev.txt", "test.txt"};

void add_options(CLI::App& app, Options& o) {
  const char* const training = "training (the default mode)";
  o.add_corpus_options(app, SST, "trees, one a line");
  app.add_flag("--all-nodes", o.all_nodes_given, "a loss at every node (the default for training)")->group(training);
  app.add_flag("--root-only", o.root_only, "a loss at the root only (as the benchmark)")->group(training);
  examples::add_count(app, "--epochs", o.epochs, "passes over the training data (default 5)")->group(training);
  examples::add_count(app, "--max-train-sentences,--max-train-trees", o.max_train,
                      "use only the first N training trees (quick runs)")
      ->group(training);
  examples::add_count(app, "--batch", o.batch, "trees per update (default 1)", examples::at_least(1))->group(training);
  app.add_flag("--keep-dev-in-train", o.keep_dev_in_train,
               "keep the training trees that also appear in the dev file (the\nshared sst/train.txt holds the 1,101 "
               "dev trees after the 8,544\nof the standard train split; they are removed by default, so\nthat dev "
               "accuracy and model selection mean something)")
      ->group(training);
  examples::add_saved_model_options(
      app, training, o.model_path,
      "where the best model (by dev fine-grained accuracy) goes; its\nvocabulary goes to FILE.vocab "
      "(default treelstm.model).\nReports fine-grained (5-class) and binary (0-1 vs 3-4, neutral roots "
      "left out)\nroot accuracy on dev every epoch, and on test with the best dev\nmodel at the end.",
      o.load, "accuracies of the saved model on --test; with --predict, classify IN", "--predict", o.predict,
      "classify the trees of IN (bracket form as in SST, one a line;\nthe labels in IN are ignored), '-' "
      "reads standard input");
  app.add_flag("--compile", o.compile,
               "evaluate and --predict through compiled programs, one per tree\nshape that comes a second time "
               "(replayed when it comes again)");
  app.add_flag("--tree-shapes", o.tree_shapes,
               "how often tree shapes repeat in the train, dev and test files\n(what --compile can replay)");
  examples::add_choice(app, "--bench", o.bench, examples::minibatch_modes(),
                       "1,000 train trees after 50 warm-up trees, root loss; prints one line\n(mode b1, b64, "
                       "b64-auto or b64-depth)")
      ->group("benchmark (BENCHMARKS.md T3)");
  examples::add_export_options(app, o.export_path, o.reference_path);
}

void finish_options(Options& o) {
  DYNET_LITE_ARG_CHECK(!(o.root_only && o.all_nodes_given), "--all-nodes and --root-only exclude each other");
  DYNET_LITE_ARG_CHECK(o.bench.empty() || !o.all_nodes_given,
                       "the benchmark (T3) has a loss at the root only; drop --all-nodes");
  o.all_nodes = !o.root_only;
  o.resolve_corpus(SST);
  DYNET_LITE_ARG_CHECK(o.predict.empty() || !o.load.empty(), "--predict needs --load MODEL");
  DYNET_LITE_ARG_CHECK(o.reference_path.empty() || !o.export_path.empty(), "--export-reference needs --export FILE");
  examples::check_export_available(o.export_path);
}

std::string format(const Accuracy& a) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << "fine-grained " << 100 * a.fine << "% (" << a.trees << " trees), binary "
    << 100 * a.binary << "% (" << a.binary_trees << " trees)";
  return s.str();
}

// ---------------------------------------------------------------- modes

int run_predict(const Options& o) {
  examples::SavedModel<Vocabulary, TreeClassifier> saved(o.load);
  ProgramCache programs(kPrograms);
  const std::string name = o.predict == "-" ? "<stdin>" : o.predict;
  size_t lineno = 0;
  examples::for_each_input_line(o.predict, [&](const std::string& line) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) return;
    // A tree's words are at most half its brackets: a runaway line is refused before it is parsed.
    examples::check_input_length(static_cast<size_t>(std::count(line.begin(), line.end(), '(')) / 2, name, lineno);
    PTBTree pt = parse_ptb_tree(line, name, lineno);
    for (auto& n : pt.nodes) n.label = 0;  // the input's labels play no part
    std::vector<Tree> one;
    saved.vocab.add(pt, 0, name, one);
    const Tree& t = one[0];
    std::vector<float> p;
    if (o.compile) {
      p = root_probabilities_compiled(saved.model, programs, t);
    } else {
      ComputationGraph cg;
      saved.model.new_graph(cg, false);
      p = saved.model.root_probabilities(t);
    }
    const unsigned pred = static_cast<unsigned>(std::max_element(p.begin(), p.end()) - p.begin());
    std::cout << pred << "\t" << std::fixed << std::setprecision(3);
    for (unsigned k = 0; k < NUM_CLASSES; ++k) std::cout << (k ? " " : "") << p[k];
    std::cout << "\t";
    std::vector<std::string> words = pt.words();
    for (size_t i = 0; i < words.size(); ++i) std::cout << (i ? " " : "") << words[i];
    std::cout << "\n";
  });
  return 0;
}

#ifdef DYNET_LITE_ONNX
/// --export (and --export-reference): the saved model `path` as ONNX, traced on
/// the first test tree with an inner node; the reference holds every test tree
/// (its words and children) and dynet_lite's root probabilities, compared by
/// their argmax (the predicted label).
int run_export(const Options& o, const std::string& path) {
  examples::SavedModel<Vocabulary, TreeClassifier> saved(path);
  std::vector<Tree> test = saved.vocab.read(o.test);
  auto sample = std::find_if(test.begin(), test.end(), [](const Tree& t) { return t.size() >= 3; });
  DYNET_LITE_CHECK(sample != test.end(), std::runtime_error, "--export: no test tree with an inner node in " << o.test);
  saved.model.export_onnx(*sample, o.export_path);
  std::cout << "exported the Tree-LSTM to " << o.export_path << "\n";
  if (o.reference_path.empty()) return 0;
  examples::ReferenceWriter ref;
  for (const Tree& t : test) {
    ComputationGraph cg;
    saved.model.new_graph(cg, false);
    std::vector<long> words, children;
    for (size_t k = 0; k < t.size(); ++k) {
      words.push_back(t.word[k]);
      for (size_t l = 0; l < 2; ++l) children.push_back(t.child_ids[k][l]);
    }
    const long n = static_cast<long>(t.size());
    ref.begin_run();
    ref.ids("tree_words", {n}, words);
    ref.ids("tree_children", {n, 2}, children);
    ref.output("probs", {1, static_cast<long>(NUM_CLASSES)}, saved.model.root_probabilities(t), "argmax");
  }
  ref.save(o.reference_path);
  std::cout << "wrote " << ref.runs() << " test trees to " << o.reference_path << "\n";
  return 0;
}
#else
int run_export(const Options&, const std::string&) { return 1; }  // refused by finish_options
#endif

int run_evaluate(const Options& o) {
  examples::SavedModel<Vocabulary, TreeClassifier> saved(o.load);
  std::vector<Tree> test = saved.vocab.read(o.test);
  ProgramCache programs(kPrograms);
  examples::Timer t;
  std::cout << "test " << format(evaluate(saved.model, test, o.compile ? &programs : nullptr)) << " ("
            << std::fixed << std::setprecision(2) << t.seconds() << " s";
  if (o.compile)
    std::cout << "; compiled programs for the shapes that came again: " << programs.misses() << " built, "
              << programs.hits() << " replays";
  std::cout << ")\n";
  return 0;
}

/// How often a tree's shape was seen before, file by file and over the files in
/// order (train, dev, test): the share of trees a cache of compiled programs by
/// shape replays.
int run_tree_shapes(const Options& o) {
  std::unordered_map<uint64_t, unsigned> seen;
  for (const std::string& path : {o.train, o.dev, o.test}) {
    std::vector<Tree> trees;
    Vocabulary::build(path, 0, [](const PTBTree&) { return false; }, trees);
    std::unordered_map<uint64_t, unsigned> in_file;
    size_t repeats_in_file = 0, repeats_so_far = 0;
    for (const Tree& t : trees) {
      const uint64_t key = t.shape_key();
      repeats_in_file += in_file[key]++ > 0;
      repeats_so_far += seen[key]++ > 0;
    }
    std::cout << path << ": " << trees.size() << " trees, " << in_file.size() << " shapes; "
              << std::fixed << std::setprecision(1) << 100.0 * repeats_in_file / std::max<size_t>(1, trees.size())
              << "% of the trees repeat a shape of the file, " << 100.0 * repeats_so_far / std::max<size_t>(1, trees.size())
              << "% one of this or an earlier file\n";
  }
  return 0;
}

int run_train(const Options& o) {
  examples::Timer total_time;
  std::unordered_set<std::string> dev_keys;  // the dev trees, left out of train
  if (!o.keep_dev_in_train) {
    PTBTreeReader dev_reader(o.dev);
    for (PTBTree t; dev_reader.next(t);) dev_keys.insert(tree_key(t));
  }
  size_t removed = 0;
  std::vector<Tree> train;
  Vocabulary vocab = Vocabulary::build(
      o.train, o.max_train,
      [&](const PTBTree& t) {
        const bool in_dev = !dev_keys.empty() && dev_keys.count(tree_key(t)) > 0;
        removed += in_dev;
        return in_dev;
      },
      train);
  std::unordered_set<std::string>().swap(dev_keys);
  DYNET_LITE_CHECK(!train.empty(), std::runtime_error, "no training trees in '" << o.train << "'");
  std::vector<Tree> dev = vocab.read(o.dev);
  std::cerr << "train " << train.size() << " trees";
  if (removed) std::cerr << " (" << removed << " trees that are also in the dev file left out)";
  std::cerr << ", dev " << dev.size() << "; vocabulary " << vocab.words.size() << " words; loss at "
            << (o.all_nodes ? "every node" : "the root") << "\n";

  ParameterCollection pc;
  TreeClassifier model(pc, vocab);
  SimpleSGDTrainer trainer(pc, LEARNING_RATE);
  std::cerr << "model: " << pc.parameter_count() << " parameters\n";

  std::vector<size_t> order(train.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 shuffle_rng(current_params().random_seed);
  double best_dev = -1, train_seconds = 0;
  std::vector<Expression> batch_losses;
  for (unsigned epoch = 1; epoch <= o.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), shuffle_rng);
    examples::ProgressBar bar("epoch " + std::to_string(epoch), train.size(), "trees");
    double loss_sum = 0;
    size_t units = 0;  // trees, or nodes with --all-nodes
    for (size_t start = 0; start < order.size(); start += o.batch) {
      const size_t end = std::min(order.size(), start + o.batch);
      ComputationGraph cg;
      model.new_graph(cg, true);
      batch_losses.clear();
      for (size_t k = start; k < end; ++k) {
        const Tree& t = train[order[k]];
        batch_losses.push_back(model.loss(t, o.all_nodes));
        units += o.all_nodes ? t.size() : 1;
      }
      loss_sum += examples::train_step(cg, examples::batch_loss(batch_losses), trainer);
      bar.update(end, loss_sum / units, o.all_nodes ? "node" : "tree");
    }
    bar.finish();
    const double epoch_seconds = bar.seconds();
    train_seconds += epoch_seconds;
    const Accuracy acc = evaluate(model, dev);
    std::cout << "epoch " << epoch << ": train loss/" << (o.all_nodes ? "node " : "tree ") << std::fixed
              << std::setprecision(4) << loss_sum / units << ", " << std::setprecision(1)
              << train.size() / epoch_seconds << " trees/s, " << epoch_seconds << " s; dev " << format(acc);
    if (acc.fine > best_dev) {
      best_dev = acc.fine;
      examples::save_model_noted(pc, vocab, o.model_path);
    }
    std::cout << std::endl;
  }
  if (best_dev < 0) return 0;  // --epochs 0

  if (!o.export_path.empty()) run_export(o, o.model_path);
  // The test figures come from the best model as saved, read back from disk.
  examples::SavedModel<Vocabulary, TreeClassifier> best(o.model_path);
  std::vector<Tree> test = best.vocab.read(o.test);
  std::cout << "best dev fine-grained " << std::fixed << std::setprecision(2) << 100 * best_dev << "%; test "
            << format(evaluate(best.model, test)) << "; training " << std::setprecision(1) << train_seconds
            << " s, total " << total_time.seconds() << " s\n";
  return 0;
}

int run_bench(const Options& o) {
  const size_t WARMUP = 50, TIMED = 1000;
  const examples::MinibatchMode mode = examples::minibatch_mode(o.bench);
  examples::BenchRecorder recorder(mode.autobatch != 0);
  std::vector<Tree> train;
  Vocabulary vocab = Vocabulary::build(o.train, 0, [](const PTBTree&) { return false; }, train);
  DYNET_LITE_CHECK(train.size() >= WARMUP + TIMED, std::runtime_error,
                   "--bench needs " << WARMUP + TIMED << " training trees, '" << o.train << "' has "
                                              << train.size());

  ParameterCollection pc;
  TreeClassifier model(pc, vocab);  // the builder is built once; per step only the graph
  SimpleSGDTrainer trainer(pc, LEARNING_RATE);
  examples::bench_minibatches(
      recorder, mode, WARMUP, TIMED, trainer, [&](ComputationGraph& cg) { model.new_graph(cg, true); },
      [&](size_t k) { return model.loss(train[k], false); });
  size_t words = 0, nodes = 0;
  double macs = 0;
  for (size_t k = WARMUP; k < WARMUP + TIMED; ++k) {
    words += train[k].leaves();
    nodes += train[k].size();
    macs += TreeClassifier::forward_macs(train[k], false);
  }
  std::ostringstream head;
  head << "T3 treelstm mode=" << o.bench << " trees=" << TIMED << " words=" << words << " nodes=" << nodes;
  // the model's count: forward one product per matrix product, backward two (d input, d weights)
  recorder.print(head.str(), {{"trees/s", TIMED}, {"words/s", words}}, "loss/tree", recorder.loss_sum() / TIMED,
                 3 * 2 * macs);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Binary Tree-LSTM sentiment classifier on the Stanford Sentiment Treebank (BENCHMARKS.md task T3).",
               "treelstm"};
  examples::init_cli(app);
  add_options(app, o);
  return examples::run_main(
      app, argc, argv, [&] { finish_options(o); },
      [&] {
        if (!o.bench.empty()) return run_bench(o);
        if (o.tree_shapes) return run_tree_shapes(o);
        if (!o.predict.empty()) return run_predict(o);
        if (!o.load.empty() && !o.export_path.empty()) return run_export(o, o.load);
        if (!o.load.empty()) return run_evaluate(o);
        return run_train(o);
      });
}
