// parser: a greedy transition-based dependency parser (arc-hybrid, labelled) on
// the Universal Dependencies English Web Treebank, after Kiperwasser & Goldberg
// (2016), "Simple and accurate dependency parsing using bidirectional LSTM
// feature representations".
//
// Model: each token is the concatenation of a word embedding (100) and an
// embedding of its gold UPOS tag (25); a 2-layer BiLSTM (125 units each way)
// reads the sentence, an artificial ROOT token first.  A configuration is scored
// from the BiLSTM vectors of the top three stack items and the first buffer item
// (a learned vector stands for an empty slot) by an MLP with one tanh hidden
// layer (100 units) over the labelled transitions SHIFT, LEFT-ARC(l) and
// RIGHT-ARC(l).  The first layer is linear in each slot, so W_k h_i is computed
// once per token and slot k (one matrix product per slot and sentence), and each
// transition only adds the columns it needs.
//
// Training: the static oracle of the gold tree gives the transition sequence;
// non-projective training sentences (which the oracle cannot derive) are skipped
// and counted.  The loss is the sum over transitions of pickneglogsoftmax of the
// gold labelled transition; one graph per sentence, its shape set by the
// transitions; Adam.  Words seen c times in train are replaced by <unk> with
// probability 0.25 / (0.25 + c) while training (word dropout).
//
// Evaluation: greedy decoding among the valid transitions; UAS and LAS over all
// tokens, punctuation included.
//
// Inference with --compile runs the encoder of each sentence length as a
// compiled program (dynet_lite/compile.h) and every transition through one
// compiled scorer program, fed the four slot columns of the encoder's output.
//
// Run `parser --help` for the options (training, --load, --predict).
#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/cli.h"
#include "common/onnx_reference.h"
#include "common/util.h"
#include "common/vocab_file.h"
#include "dynet_lite/compile.h"
#include "dynet_lite/dict.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/init.h"
#include "dynet_lite/io.h"
#include "dynet_lite/io/conllu.h"
#include "dynet_lite/lstm.h"
#include "dynet_lite/training.h"
#ifdef DYNET_LITE_ONNX
#include "dynet_lite/onnx.h"
#endif

namespace dynet = dynet_lite;
using namespace dynet;

namespace {

constexpr unsigned WORD_DIM = 100;
constexpr unsigned POS_DIM = 25;
constexpr unsigned LSTM_DIM = 125;  // per direction
constexpr unsigned LSTM_LAYERS = 2;
constexpr unsigned MLP_DIM = 100;
constexpr unsigned NUM_SLOTS = 4;  // s0, s1, s2, b0
constexpr float WORD_DROPOUT = 0.25f;
const char* const UNK = "<unk>";
const char* const ROOT = "<root>";
const char* const VOCAB_MAGIC = "dynet_lite-parser-vocabulary";

/// A sentence ready for the network; position 0 is the artificial ROOT.
struct Sentence {
  std::vector<unsigned> words, tags, counts;  // counts: training count of the word (0 for <unk>, ROOT)
  std::vector<int> heads;                     // gold heads (-1 when unknown), heads[0] unused
  std::vector<int> labels;                    // gold label ids (-1 when unknown or not in train)
  size_t size() const { return words.size(); }  // tokens + 1
};

/// The vocabularies: words, UPOS tags and dependency labels.
struct Vocabulary {
  Dict words, tags, labels;
  std::vector<unsigned> word_counts;  ///< per word id (not saved)

  static Vocabulary build(const std::vector<ConlluSentence>& train) {
    Vocabulary v;
    std::unordered_map<std::string, unsigned> counts;
    std::vector<std::string> order;
    v.words.convert(UNK);
    v.words.convert(ROOT);
    v.tags.convert(UNK);
    v.tags.convert(ROOT);
    for (const auto& s : train)
      for (const auto& t : s.tokens) {
        if (counts[t.form]++ == 0) order.push_back(t.form);
        v.tags.convert(t.upos);
        if (t.head >= 0) v.labels.convert(t.deprel);
      }
    for (const auto& w : order) v.words.convert(w);
    v.finish();
    v.word_counts.assign(v.words.size(), 0);
    for (const auto& w : order) v.word_counts[v.words.convert(w)] = counts[w];
    return v;
  }

  void finish() {
    words.freeze();
    words.set_unk(UNK);
    tags.freeze();
    tags.set_unk(UNK);
    labels.freeze();
  }

  Sentence convert(const ConlluSentence& cs, bool with_gold) {
    Sentence s;
    s.words.push_back(static_cast<unsigned>(words.convert(ROOT)));
    s.tags.push_back(static_cast<unsigned>(tags.convert(ROOT)));
    s.counts.push_back(0);
    s.heads.push_back(-1);
    s.labels.push_back(-1);
    for (const auto& t : cs.tokens) {
      const unsigned w = static_cast<unsigned>(words.convert(t.form));
      s.words.push_back(w);
      s.tags.push_back(static_cast<unsigned>(tags.convert(t.upos)));
      s.counts.push_back(w < word_counts.size() ? word_counts[w] : 0);
      s.heads.push_back(with_gold ? t.head : -1);
      s.labels.push_back(with_gold && labels.contains(t.deprel) ? labels.convert(t.deprel) : -1);
    }
    return s;
  }

  /// Converts a treebank; every token must have a HEAD within the sentence.
  std::vector<Sentence> convert_gold(const std::vector<ConlluSentence>& corpus, const std::string& name) {
    std::vector<Sentence> out;
    for (size_t si = 0; si < corpus.size(); ++si) {
      const auto& cs = corpus[si];
      for (const auto& t : cs.tokens)
        DYNET_LITE_CHECK(t.head >= 0 && t.head <= static_cast<int>(cs.size()), std::runtime_error,
                         name << ": sentence " << si + 1 << ", token " << t.id << " '" << t.form
                              << "': HEAD must be a token of the sentence or 0, got "
                              << (t.head < 0 ? std::string("_") : std::to_string(t.head)));
      if (!cs.tokens.empty()) out.push_back(convert(cs, true));
    }
    DYNET_LITE_CHECK(!out.empty(), std::runtime_error, name << ": no sentences");
    return out;
  }

  /// The vocabulary file's content (examples::save_model writes it).
  examples::VocabularyWriter write() const {
    examples::VocabularyWriter out(VOCAB_MAGIC);
    out.dict("words", words);
    out.dict("tags", tags);
    out.dict("labels", labels);
    return out;
  }

  static Vocabulary load(const std::string& path) {
    examples::VocabularyReader in(path, VOCAB_MAGIC, "parser");
    Vocabulary v;
    in.dict("words", v.words);
    in.dict("tags", v.tags);
    in.dict("labels", v.labels);
    for (const char* w : {UNK, ROOT}) {
      in.check(v.words.contains(w), std::string("the words lack ") + w);
      in.check(v.tags.contains(w), std::string("the tags lack ") + w);
    }
    in.check(v.labels.size() > 0, "no dependency labels");
    v.finish();
    return v;
  }
};

// ---------------------------------------------------------------- transition system

/// Arc-hybrid (Kuhlmann, Gómez-Rodríguez & Satta 2011).  Stack starts as [ROOT],
/// buffer as 1..n.  SHIFT moves the buffer front onto the stack; LEFT-ARC(l)
/// makes the buffer front the head of s0 and pops s0; RIGHT-ARC(l) makes s1 the
/// head of s0 and pops s0.  A RIGHT-ARC from ROOT is allowed only once the
/// buffer is empty, so every tree has exactly one root.
/// Transition ids: 0 SHIFT, 1 + l LEFT-ARC(l), 1 + L + l RIGHT-ARC(l).
struct Configuration {
  std::vector<unsigned> stack;
  unsigned next = 1, n = 0;  // buffer = next..n
  std::vector<int> heads, labels;

  explicit Configuration(size_t size) : n(static_cast<unsigned>(size - 1)), heads(size, -1), labels(size, -1) {
    stack.push_back(0);
  }
  bool terminal() const { return next > n && stack.size() == 1; }
  bool can_shift() const { return next <= n; }
  bool can_left() const { return stack.size() >= 2 && next <= n; }
  bool can_right() const { return stack.size() >= 3 || (stack.size() == 2 && next > n); }
  /// Applies a valid action (kind 0 shift, 1 left, 2 right) with label `l`.
  void apply(int kind, int l) {
    if (kind == 0) {
      stack.push_back(next++);
      return;
    }
    const unsigned s0 = stack.back();
    stack.pop_back();
    heads[s0] = kind == 1 ? static_cast<int>(next) : static_cast<int>(stack.back());
    labels[s0] = l;
  }
  /// Token index at stack position k from the top (0 = s0), or `none`.
  unsigned stack_at(unsigned k, unsigned none) const {
    return k < stack.size() ? stack[stack.size() - 1 - k] : none;
  }
};

/// The static oracle's transition sequence for a gold tree, or false when the
/// tree cannot be derived (non-projective, or a label unknown to the model).
bool oracle(const Sentence& s, unsigned num_labels, std::vector<unsigned>& actions) {
  actions.clear();
  const size_t size = s.size();
  std::vector<unsigned> missing(size, 0);  // gold dependents not yet attached
  for (size_t i = 1; i < size; ++i) {
    if (s.heads[i] < 0 || s.labels[i] < 0) return false;
    ++missing[s.heads[i]];
  }
  Configuration c(size);
  while (!c.terminal()) {
    const unsigned s0 = c.stack.back();
    if (c.can_left() && s.heads[s0] == static_cast<int>(c.next) && missing[s0] == 0) {
      actions.push_back(1 + s.labels[s0]);
      --missing[c.next];
      c.apply(1, s.labels[s0]);
    } else if (c.can_right() && s.heads[s0] == static_cast<int>(c.stack[c.stack.size() - 2]) && missing[s0] == 0) {
      actions.push_back(1 + num_labels + s.labels[s0]);
      --missing[c.stack[c.stack.size() - 2]];
      c.apply(2, s.labels[s0]);
    } else if (c.can_shift()) {
      actions.push_back(0);
      c.apply(0, -1);
    } else {
      return false;
    }
  }
  for (size_t i = 1; i < size; ++i)
    if (c.heads[i] != s.heads[i]) return false;
  return true;
}

// ---------------------------------------------------------------- the network

class Parser {
 public:
  Parser(ParameterCollection& pc, const Vocabulary& v)
      : num_labels(v.labels.size()),
        num_actions(1 + 2 * v.labels.size()),
        p_word(pc.add_lookup_parameters(v.words.size(), {WORD_DIM}, "word-embeddings")),
        p_tag(pc.add_lookup_parameters(v.tags.size(), {POS_DIM}, "tag-embeddings")),
        p_empty(pc.add_parameters({2 * LSTM_DIM}, 0.f, "empty-slot")),
        p_b1(pc.add_parameters({MLP_DIM}, 0.f, "mlp-b1")),
        p_W2(pc.add_parameters({num_actions, MLP_DIM}, 0.f, "mlp-W2")),
        p_b2(pc.add_parameters({num_actions}, 0.f, "mlp-b2")) {
    for (unsigned k = 0; k < NUM_SLOTS; ++k)
      p_W1.push_back(pc.add_parameters({MLP_DIM, 2 * LSTM_DIM}, 0.f, "mlp-W1-slot" + std::to_string(k)));
    for (unsigned l = 0; l < LSTM_LAYERS; ++l) {
      const unsigned in = l == 0 ? WORD_DIM + POS_DIM : 2 * LSTM_DIM;
      fwd.emplace_back(1, in, LSTM_DIM, pc);
      bwd.emplace_back(1, in, LSTM_DIM, pc);
    }
  }

  void new_graph(ComputationGraph& cg, bool training) {
    cg_ = &cg;
    training_ = training;
    for (auto& b : fwd) b.new_graph(cg, training);
    for (auto& b : bwd) b.new_graph(cg, training);
    auto par = [&](Parameter p) { return training ? parameter(cg, p) : const_parameter(cg, p); };
    empty = par(p_empty);
    b1 = par(p_b1);
    W2 = par(p_W2);
    b2 = par(p_b2);
    W1.clear();
    for (auto& p : p_W1) W1.push_back(par(p));
  }

  /// Runs the BiLSTM over `s` and projects every token's vector through each
  /// slot's first-layer weights: proj[k] is {MLP_DIM, size + 1}, column size the
  /// empty slot.  `drop[i]` replaces word i by <unk> (word dropout).
  void encode(const Sentence& s, const std::vector<unsigned char>* drop) {
    const size_t n = s.size();
    layer_.resize(n);
    word_in_.resize(n);
    tag_in_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const unsigned w = drop && (*drop)[i] ? 0u : s.words[i];
      Expression we, te;
      if (program_) {  // the words and tags come from the program's slots (inference)
        we = const_lookup(*cg_, p_word, program_->index("w" + std::to_string(i)));
        te = const_lookup(*cg_, p_tag, program_->index("t" + std::to_string(i)));
      } else {
        we = training_ ? lookup(*cg_, p_word, w) : const_lookup(*cg_, p_word, w);
        te = training_ ? lookup(*cg_, p_tag, s.tags[i]) : const_lookup(*cg_, p_tag, s.tags[i]);
      }
      word_in_[i] = we;
      tag_in_[i] = te;
      layer_[i] = concatenate({we, te});
    }
    fh_.resize(n);
    bh_.resize(n);
    for (unsigned l = 0; l < LSTM_LAYERS; ++l) {
      fwd[l].start_new_sequence();
      for (size_t i = 0; i < n; ++i) fh_[i] = fwd[l].add_input(layer_[i]);
      bwd[l].start_new_sequence();
      for (size_t i = n; i-- > 0;) bh_[i] = bwd[l].add_input(layer_[i]);
      for (size_t i = 0; i < n; ++i) layer_[i] = concatenate({fh_[i], bh_[i]});
    }
    layer_.push_back(empty);
    Expression H = concatenate_cols(layer_);  // {2 LSTM_DIM, n + 1}
    layer_.pop_back();
    proj_.resize(NUM_SLOTS);
    for (unsigned k = 0; k < NUM_SLOTS; ++k) proj_[k] = W1[k] * H;
    size_ = static_cast<unsigned>(n);
  }

  // ---- compiled inference (--compile)

  /// While set, encode() reads token i's word and tag from the slots "w<i>"
  /// and "t<i>" of `p` (new_graph(p->graph(), false) first).
  void use_program(Program* p) { program_ = p; }
  static void bind(Program& p, const Sentence& s) {
    for (size_t i = 0; i < s.size(); ++i) {
      p.set("w" + std::to_string(i), s.words[i]);
      p.set("t" + std::to_string(i), s.tags[i]);
    }
  }
  /// After encode(): every token's vector (and the empty slot's, column size)
  /// through each slot's first-layer weights, slot after slot: {MLP_DIM,
  /// NUM_SLOTS (size + 1)}.
  Expression slot_features() const { return concatenate_cols(proj_); }
  /// The scorer of configurations fed from the four slots' feature columns
  /// (inputs "s0".."s3" of `p`); the same sum as scores(), so the same values.
  void build_scorer(Program& p) {
    new_graph(p.graph(), false);
    std::vector<Expression> terms;
    for (unsigned k = 0; k < NUM_SLOTS; ++k) terms.push_back(p.input("s" + std::to_string(k), {MLP_DIM}));
    terms.push_back(b1);
    p.set_output(affine_transform({b2, W2, tanh(sum(terms))}));
  }
  /// Greedy decoding through compiled programs: the encoder of `s`'s length
  /// from `encoders`, then `scorer` (build_scorer) once per transition.
  Configuration parse_compiled(const Sentence& s, ProgramCache& encoders, Program& scorer) {
    Program& enc = encoders.get(s.size(), [&](Program& p) {
      new_graph(p.graph(), false);
      use_program(&p);
      encode(s, nullptr);
      use_program(nullptr);
      p.set_output(slot_features());
    });
    bind(enc, s);
    const std::vector<float> f = as_vector(enc.forward());
    const size_t n = s.size(), cols = n + 1;
    thread_local std::vector<float> column(MLP_DIM);
    Configuration c(n);
    while (!c.terminal()) {
      const unsigned at[NUM_SLOTS] = {c.stack_at(0, n), c.stack_at(1, n), c.stack_at(2, n),
                                      c.next <= c.n ? c.next : static_cast<unsigned>(n)};
      for (unsigned k = 0; k < NUM_SLOTS; ++k) {
        const float* from = f.data() + (k * cols + at[k]) * MLP_DIM;
        column.assign(from, from + MLP_DIM);
        scorer.set("s" + std::to_string(k), column);
      }
      apply_best(c, as_vector(scorer.forward()));
    }
    return c;
  }

  /// Scores of all labelled transitions in configuration `c` (after encode()).
  Expression scores(const Configuration& c) {
    Expression terms[NUM_SLOTS + 1];
    for (unsigned k = 0; k < 3; ++k) terms[k] = pick(proj_[k], c.stack_at(k, size_), 1);
    terms[3] = pick(proj_[3], c.next <= c.n ? c.next : size_, 1);
    terms[4] = b1;
    Expression h = tanh(sum(std::vector<Expression>(terms, terms + NUM_SLOTS + 1)));
    return affine_transform({b2, W2, h});
  }

  /// Sum of the losses of the oracle's transitions (one graph, built at once).
  Expression sentence_loss(const Sentence& s, const std::vector<unsigned>& actions,
                           const std::vector<unsigned char>* drop) {
    encode(s, drop);
    Configuration c(s.size());
    losses_.clear();
    for (unsigned a : actions) {
      losses_.push_back(pickneglogsoftmax(scores(c), a));
      const int kind = a == 0 ? 0 : a <= num_labels ? 1 : 2;
      c.apply(kind, kind == 0 ? -1 : kind == 1 ? int(a - 1) : int(a - 1 - num_labels));
    }
    return sum(losses_);
  }

  /// Greedy decoding: heads and label ids of tokens 1..n (index 0 unused).
  /// `slots` and `all_scores`, when given, receive each transition's four slot
  /// positions (size(): empty) and its scores.
  Configuration parse(const Sentence& s, std::vector<long>* slots = nullptr, std::vector<float>* all_scores = nullptr) {
    encode(s, nullptr);
    Configuration c(s.size());
    while (!c.terminal()) {
      const std::vector<float> v = as_vector(cg_->incremental_forward(scores(c)));
      if (slots) {
        for (unsigned k = 0; k < 3; ++k) slots->push_back(c.stack_at(k, size_));
        slots->push_back(c.next <= c.n ? c.next : size_);
        all_scores->insert(all_scores->end(), v.begin(), v.end());
      }
      apply_best(c, v);
    }
    return c;
  }

  /// Applies the best-scoring valid transition of `v` to `c`.
  void apply_best(Configuration& c, const std::vector<float>& v) const {
      int best_kind = -1, best_label = -1;
      float best = -1e30f;
      auto consider = [&](int kind, int label, float score) {
        if (score > best) best = score, best_kind = kind, best_label = label;
      };
      if (c.can_shift()) consider(0, -1, v[0]);
      if (c.can_left())
        for (unsigned l = 0; l < num_labels; ++l) consider(1, l, v[1 + l]);
      if (c.can_right())
        for (unsigned l = 0; l < num_labels; ++l) consider(2, l, v[1 + num_labels + l]);
      c.apply(best_kind, best_label);
  }

#ifdef DYNET_LITE_ONNX
  /// Writes the network as two ONNX models, traced on `sample` (two tokens or
  /// more, ROOT included).  `encoder`: inputs "words" and "tags" int64 [seq,
  /// batch]; outputs "features" float [seq, batch, 4, MLP] (each token's vector
  /// through the first layer's weights of slot k = 0..3: stack 0..2, buffer 0)
  /// and "empty_features" [1, 4, MLP] (the empty slot's).  `scorer`: input
  /// "slots" float [batch, 4, MLP] (the features of a configuration's four
  /// slots), output "scores" [batch, actions].
  void export_onnx(const Sentence& sample, const std::string& encoder, const std::string& scorer) {
    {
      ComputationGraph cg;
      new_graph(cg, false);
      encode(sample, nullptr);
      auto features = [&](const Expression& h) {
        std::vector<Expression> cols;
        for (unsigned k = 0; k < NUM_SLOTS; ++k) cols.push_back(W1[k] * h);
        return concatenate_cols(cols);  // {MLP, 4}
      };
      std::vector<Expression> feats;
      for (const Expression& h : layer_) feats.push_back(features(h));
      OnnxExporter ex(cg);
      ex.add_sequence_input(word_in_, "words");
      ex.add_sequence_input(tag_in_, "tags");
      for (unsigned l = 0; l < LSTM_LAYERS; ++l) {
        ex.add_recurrence(fwd[l]);
        ex.add_recurrence(bwd[l]);
      }
      ex.add_sequence_output(feats, "features");
      ex.add_output(features(empty), "empty_features");
      ex.save(encoder);
    }
    ComputationGraph cg;
    new_graph(cg, false);
    Expression slots = input(cg, {MLP_DIM, NUM_SLOTS}, std::vector<float>(MLP_DIM * NUM_SLOTS, 0.f));
    Expression h = tanh(sum_dim(slots, {1}) + b1);
    OnnxExporter ex(cg);
    ex.add_input(slots, "slots");
    ex.add_output(affine_transform({b2, W2, h}), "scores");
    ex.save(scorer);
  }
#endif

  unsigned num_labels, num_actions;

 private:
  LookupParameter p_word, p_tag;
  Parameter p_empty, p_b1, p_W2, p_b2;
  std::vector<Parameter> p_W1;
  std::vector<VanillaLSTMBuilder> fwd, bwd;
  ComputationGraph* cg_ = nullptr;
  bool training_ = false;
  Program* program_ = nullptr;
  Expression empty, b1, W2, b2;
  std::vector<Expression> W1, layer_, fh_, bh_, proj_, losses_, word_in_, tag_in_;
  unsigned size_ = 0;
};

struct Score {
  size_t tokens = 0, heads = 0, labelled = 0;
  double uas() const { return tokens ? 100.0 * heads / tokens : 0; }
  double las() const { return tokens ? 100.0 * labelled / tokens : 0; }
};

/// Compiled inference (--compile): an encoder program per sentence length and
/// the transition scorer.
struct CompiledParser {
  explicit CompiledParser(Parser& parser) : encoders(512) { parser.build_scorer(scorer); }
  ProgramCache encoders;
  Program scorer;
};

/// The parse of `s`, through `compiled` when given.
Configuration parse(Parser& parser, const Sentence& s, CompiledParser* compiled) {
  if (compiled) return parser.parse_compiled(s, compiled->encoders, compiled->scorer);
  ComputationGraph cg;
  parser.new_graph(cg, false);
  return parser.parse(s);
}

/// UAS / LAS over every token (punctuation included).
Score evaluate(Parser& parser, const std::vector<Sentence>& data, CompiledParser* compiled = nullptr) {
  Score sc;
  for (const auto& s : data) {
    Configuration c = parse(parser, s, compiled);
    for (size_t i = 1; i < s.size(); ++i) {
      ++sc.tokens;
      if (c.heads[i] == s.heads[i]) {
        ++sc.heads;
        sc.labelled += c.labels[i] == s.labels[i] && s.labels[i] >= 0;
      }
    }
  }
  return sc;
}

struct Options : examples::CorpusOptions {
  std::string model_path = "parser.model", load, predict, export_path, reference_path;
  bool compile = false;
  unsigned epochs = 10, max_train = 0, max_dev = 0, max_test = 0;
  float learning_rate = 0.001f;
};

const examples::CorpusLayout UD_EWT{"ud-english-ewt", "en_ewt-ud-train.conllu", "en_ewt-ud-dev.conllu",
                                    "en_ewt-ud-test.conllu"};

void add_options(CLI::App& app, Options& o) {
  const char* const training = "training (the default mode)";
  o.add_corpus_options(app, UD_EWT, "CoNLL-U file");
  examples::add_count(app, "--epochs", o.epochs, "passes over the training data (default 10)")->group(training);
  examples::add_count(app, "--max-train-sentences", o.max_train, "use only the first N training sentences (quick runs)")
      ->group(training);
  examples::add_count(app, "--max-dev-sentences", o.max_dev, "evaluate on the first N dev sentences only (quick runs)")
      ->group(training);
  examples::add_count(app, "--max-test-sentences", o.max_test, "likewise for the test sentences")->group(training);
  examples::add_number(app, "--learning-rate", o.learning_rate, "Adam's learning rate (default 0.001)",
                       examples::above(0))
      ->type_name("R")
      ->group(training);
  examples::add_saved_model_options(
      app, training, o.model_path,
      "where the best model (by dev LAS) goes; its vocabulary\ngoes to FILE.vocab (default parser.model)", o.load,
      "UAS / LAS of the saved model on --test; with --predict, parse IN", "--predict", o.predict,
      "parse the CoNLL-U file IN (FORM and UPOS are read), writing\nCoNLL-U with HEAD and DEPREL filled "
      "to standard output;\n'-' reads standard input");
  app.add_flag("--compile", o.compile,
               "with --load: parse through compiled programs (an encoder per\nsentence length, one transition "
               "scorer); the same parses");
  examples::add_export_options(app, o.export_path, o.reference_path,
                               " (the BiLSTM encoder);\nthe transition scorer goes to STEM-scorer.onnx (STEM: FILE\n"
                               "without .onnx)");
}

void finish_options(Options& o) {
  o.resolve_corpus(UD_EWT);
  DYNET_LITE_ARG_CHECK(o.predict.empty() || !o.load.empty(), "--predict needs --load MODEL");
  DYNET_LITE_ARG_CHECK(!o.compile || !o.load.empty(), "--compile needs --load MODEL (it is for inference)");
  DYNET_LITE_ARG_CHECK(o.reference_path.empty() || !o.export_path.empty(), "--export-reference needs --export FILE");
  examples::check_export_available(o.export_path);
}

size_t count_tokens(const std::vector<Sentence>& data) {
  size_t n = 0;
  for (const auto& s : data) n += s.size() - 1;
  return n;
}

std::string format_score(const Score& sc) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << "UAS " << sc.uas() << "% LAS " << sc.las() << "%";
  return out.str();
}

// ---------------------------------------------------------------- modes

/// The columns training and evaluation read (the others stay empty, so the
/// parsed corpora take less memory).
constexpr ConlluColumns kGoldColumns = ConlluColumns::form | ConlluColumns::upos | ConlluColumns::deprel;

int run_predict(const Options& o) {
  examples::SavedModel<Vocabulary, Parser> saved(o.load);
  std::vector<ConlluSentence> input;
  if (o.predict == "-") {
    input = read_conllu(std::cin, "<stdin>");
  } else {
    input = read_conllu(o.predict);
  }
  std::unique_ptr<CompiledParser> compiled;
  if (o.compile) compiled = std::make_unique<CompiledParser>(saved.model);
  for (const auto& cs : input) {
    if (cs.tokens.empty()) continue;
    Sentence s = saved.vocab.convert(cs, false);
    Configuration c = parse(saved.model, s, compiled.get());
    for (size_t i = 0; i < cs.tokens.size(); ++i) {
      const ConlluToken& t = cs.tokens[i];
      auto col = [](const std::string& x) { return x.empty() ? std::string("_") : x; };
      std::cout << t.id << "\t" << col(t.form) << "\t" << col(t.lemma) << "\t" << col(t.upos) << "\t" << col(t.xpos)
                << "\t" << col(t.feats) << "\t" << c.heads[i + 1] << "\t" << saved.vocab.labels.convert(c.labels[i + 1])
                << "\t_\t_\n";
    }
    std::cout << "\n";
  }
  return 0;
}

#ifdef DYNET_LITE_ONNX
/// The scorer's file next to the encoder's: FILE.onnx -> FILE-scorer.onnx.
std::string scorer_path(const std::string& encoder) {
  const std::string ext = ".onnx";
  const bool has_ext = encoder.size() > ext.size() && encoder.compare(encoder.size() - ext.size(), ext.size(), ext) == 0;
  return (has_ext ? encoder.substr(0, encoder.size() - ext.size()) : encoder) + "-scorer.onnx";
}

template <class T>
std::string json_list(const std::vector<T>& v) {
  std::ostringstream os;
  os.precision(9);
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  return os.str() + "]";
}

/// --export (and --export-reference): the saved model `path` as ONNX (encoder
/// and scorer, see Parser::export_onnx), traced on the first test sentence; the
/// reference holds, per test sentence, its word and tag ids, the slots of every
/// transition of dynet_lite's greedy parse and the scores it computed there
/// (tests/onnx_check.py --parser recomputes them in ONNX Runtime).
int run_export(const Options& o, const std::string& path) {
  examples::SavedModel<Vocabulary, Parser> saved(path);
  std::vector<Sentence> test = saved.vocab.convert_gold(read_conllu(o.test, kGoldColumns), o.test);
  if (o.max_test && test.size() > o.max_test) test.resize(o.max_test);
  auto sample = std::find_if(test.begin(), test.end(), [](const Sentence& s) { return s.size() >= 3; });
  DYNET_LITE_CHECK(sample != test.end(), std::runtime_error, "--export: no test sentence of two tokens in " << o.test);
  saved.model.export_onnx(*sample, o.export_path, scorer_path(o.export_path));
  std::cout << "exported the parser to " << o.export_path << " (encoder) and " << scorer_path(o.export_path)
            << " (scorer)\n";
  if (o.reference_path.empty()) return 0;
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < test.size(); ++i) {
    ComputationGraph cg;
    saved.model.new_graph(cg, false);
    std::vector<long> slots;
    std::vector<float> scores;
    saved.model.parse(test[i], &slots, &scores);
    std::vector<long> words(test[i].words.begin(), test[i].words.end()), tags(test[i].tags.begin(), test[i].tags.end());
    out << (i ? ",\n" : "") << "{\"words\":" << json_list(words) << ",\"tags\":" << json_list(tags)
        << ",\"slots\":" << json_list(slots) << ",\"scores\":" << json_list(scores) << "}";
  }
  out << "]\n";
  examples::write_file_atomically(o.reference_path, out.str());
  std::cout << "wrote " << test.size() << " test sentences to " << o.reference_path << "\n";
  return 0;
}
#else
int run_export(const Options&, const std::string&) { return 1; }  // refused by finish_options
#endif

int run_evaluate(const Options& o) {
  examples::SavedModel<Vocabulary, Parser> saved(o.load);
  std::vector<Sentence> test = saved.vocab.convert_gold(read_conllu(o.test, kGoldColumns), o.test);
  if (o.max_test && test.size() > o.max_test) test.resize(o.max_test);
  examples::Timer t;
  std::unique_ptr<CompiledParser> compiled;
  if (o.compile) compiled = std::make_unique<CompiledParser>(saved.model);
  const Score sc = evaluate(saved.model, test, compiled.get());
  std::cout << "test " << format_score(sc) << " (" << sc.tokens << " tokens of " << o.test
            << ", punctuation included, " << std::fixed << std::setprecision(1) << t.seconds() << " s)\n";
  return 0;
}

int run_train(const Options& o) {
  examples::Timer total_time;
  std::vector<ConlluSentence> train_raw = read_conllu(o.train, kGoldColumns);
  DYNET_LITE_CHECK(!train_raw.empty(), std::runtime_error, "no sentences in '" << o.train << "'");
  if (o.max_train && train_raw.size() > o.max_train) train_raw.resize(o.max_train);
  Vocabulary vocab = Vocabulary::build(train_raw);
  DYNET_LITE_CHECK(vocab.labels.size() > 0, std::runtime_error, o.train << ": no token has a HEAD and DEPREL");
  std::vector<Sentence> all_train = vocab.convert_gold(train_raw, o.train);
  std::vector<ConlluSentence>().swap(train_raw);  // the parsed corpus goes before the model and graphs come
  std::vector<Sentence> dev = vocab.convert_gold(read_conllu(o.dev, kGoldColumns), o.dev);
  if (o.max_dev && dev.size() > o.max_dev) dev.resize(o.max_dev);

  // The oracle's transitions; sentences it cannot derive are left out.
  std::vector<Sentence> train;
  std::vector<std::vector<unsigned>> gold_actions;
  std::vector<unsigned> actions;
  size_t skipped = 0;
  for (auto& s : all_train) {
    if (oracle(s, vocab.labels.size(), actions)) {
      train.push_back(std::move(s));
      gold_actions.push_back(actions);
    } else {
      ++skipped;
    }
  }
  DYNET_LITE_CHECK(!train.empty(), std::runtime_error, o.train << ": no projective sentence to train on");
  std::cerr << "train " << train.size() << " projective sentences (" << count_tokens(train) << " tokens; " << skipped
            << " non-projective skipped), dev " << dev.size() << " (" << count_tokens(dev)
            << " tokens); vocabulary " << vocab.words.size() << " words, " << vocab.tags.size() << " tags, "
            << vocab.labels.size() << " labels\n";

  ParameterCollection pc;
  Parser parser(pc, vocab);
  AdamTrainer trainer(pc, o.learning_rate);
  std::cerr << "model: " << pc.parameter_count() << " parameters, " << parser.num_actions << " transitions\n";
  std::cout << "training on " << train.size() << " sentences; skipped " << skipped
            << " non-projective training sentences" << std::endl;

  std::vector<size_t> order(train.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(current_params().random_seed);
  std::uniform_real_distribution<float> coin(0.f, 1.f);
  std::vector<unsigned char> drop;
  double best_las = -1, train_seconds = 0;
  Score best_dev;
  for (unsigned epoch = 1; epoch <= o.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    examples::ProgressBar bar("epoch " + std::to_string(epoch), train.size(), "sent");
    double loss_sum = 0;
    size_t transitions = 0, done = 0;
    for (size_t k : order) {
      const Sentence& s = train[k];
      drop.assign(s.size(), 0);
      for (size_t i = 1; i < s.size(); ++i)
        drop[i] = coin(rng) < WORD_DROPOUT / (WORD_DROPOUT + static_cast<float>(s.counts[i]));
      ComputationGraph cg;
      parser.new_graph(cg, true);
      loss_sum += examples::train_step(cg, parser.sentence_loss(s, gold_actions[k], &drop), trainer);
      transitions += gold_actions[k].size();
      bar.update(++done, loss_sum / transitions, "transition");
    }
    bar.finish();
    const double epoch_seconds = bar.seconds();
    train_seconds += epoch_seconds;
    examples::Timer eval_time;
    const Score sc = evaluate(parser, dev);
    std::cout << "epoch " << epoch << ": train loss/transition " << std::fixed << std::setprecision(4)
              << loss_sum / transitions << ", " << std::setprecision(1) << train.size() / epoch_seconds
              << " sent/s, " << epoch_seconds << " s; dev " << format_score(sc) << " (" << eval_time.seconds()
              << " s)";
    if (sc.las() > best_las) {
      best_las = sc.las();
      best_dev = sc;
      examples::save_model_noted(pc, vocab, o.model_path);
    }
    std::cout << std::endl;
  }
  if (best_las < 0) return 0;  // --epochs 0
  if (!o.export_path.empty()) run_export(o, o.model_path);

  // The test figure comes from the best model as saved, read back from disk.
  examples::SavedModel<Vocabulary, Parser> best(o.model_path);
  std::vector<Sentence> test = best.vocab.convert_gold(read_conllu(o.test, kGoldColumns), o.test);
  if (o.max_test && test.size() > o.max_test) test.resize(o.max_test);
  const Score sc = evaluate(best.model, test);
  std::cout << "best dev " << format_score(best_dev) << "; test " << format_score(sc) << " (" << sc.tokens
            << " tokens, punctuation included); training " << std::fixed << std::setprecision(1) << train_seconds
            << " s, total " << total_time.seconds() << " s\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "Greedy arc-hybrid dependency parser with BiLSTM features on UD English EWT\n(words and gold UPOS in, "
      "labelled transitions out).  UAS and LAS count every token, punctuation included.",
      "parser"};
  examples::init_cli(app);
  add_options(app, o);
  return examples::run_main(
      app, argc, argv, [&] { finish_options(o); },
      [&] {
        if (!o.predict.empty()) return run_predict(o);
        if (!o.load.empty() && !o.export_path.empty()) return run_export(o, o.load);
        if (!o.load.empty()) return run_evaluate(o);
        return run_train(o);
      });
}
