// rnnlm: an LSTM language model on the Penn Treebank text, the benchmark task
// T4 `rnnlm` of BENCHMARKS.md.
//
// Model (T4): each sentence is wrapped in <s> ... </s>; a word is a 128-dim
// embedding, a 1-layer vanilla LSTM of 256 units reads the words, and a softmax
// over the whole vocabulary predicts the next word.  The loss is the sum of
// pickneglogsoftmax over every target word, </s> included.  Training is
// minibatched with the batch dimension: the sentences are sorted by length, cut
// into consecutive minibatches of B, shorter ones padded with </s>; the padded
// positions are multiplied by a 0/1 mask so that they add nothing to the loss.
// Plain SGD (learning rate 0.1, DyNet's default clipping), Glorot initialisation.
//
// Trained on ptb.valid.txt (its vocabulary, which contains <unk>); perplexity
// reported on ptb.test.txt, unknown words mapped to <unk>, next to the
// perplexity of the training unigram distribution on the same text.
//
// Run `rnnlm --help` for the options (training, --load, --score, --bench).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
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
#include "dynet_lite/lstm.h"
#include "dynet_lite/training.h"
#ifdef DYNET_LITE_ONNX
#include "dynet_lite/onnx.h"
#endif

namespace dynet = dynet_lite;
using namespace dynet;

namespace {

// Hyperparameters of T4 (BENCHMARKS.md); fixed, so that figures compare.
constexpr unsigned EMBED_DIM = 128;
constexpr unsigned HIDDEN_DIM = 256;
constexpr unsigned LAYERS = 1;
constexpr float LEARNING_RATE = 0.1f;
constexpr unsigned SHUFFLE_SEED = 12345;  // the minibatch order (fixed, as T4 asks)
const char* const BOS = "<s>";
const char* const EOS = "</s>";
const char* const UNK = "<unk>";
const char* const VOCAB_MAGIC = "dynet_lite-rnnlm-vocabulary";

/// A sentence as word ids, <s> first and </s> last.
using Sentence = std::vector<unsigned>;

/// The vocabulary: <s>, </s>, <unk>, then the training words in order of appearance.
struct Vocabulary {
  Dict words;
  unsigned bos = 0, eos = 0, unk = 0;

  /// A vocabulary still growing: <s>, </s> and <unk>; read_sentences adds the
  /// training words to it, finish() closes it.
  static Vocabulary open() {
    Vocabulary v;
    v.bos = static_cast<unsigned>(v.words.convert(BOS));
    v.eos = static_cast<unsigned>(v.words.convert(EOS));
    v.unk = static_cast<unsigned>(v.words.convert(UNK));
    return v;
  }

  void finish() {
    words.freeze();
    words.set_unk(UNK);
    bos = static_cast<unsigned>(words.convert(BOS));
    eos = static_cast<unsigned>(words.convert(EOS));
    unk = static_cast<unsigned>(words.get_unk_id());
  }

  /// The words' ids between <s> and </s>: while the vocabulary is open a new
  /// word gets the next id, once it is finished an unknown one is <unk>.
  Sentence convert(const std::vector<std::string>& s) {
    Sentence out;
    out.reserve(s.size() + 2);
    out.push_back(bos);
    for (const auto& w : s) out.push_back(static_cast<unsigned>(words.convert(w)));
    out.push_back(eos);
    return out;
  }

  /// The vocabulary file's content (examples::save_model writes it).
  examples::VocabularyWriter write() const {
    examples::VocabularyWriter out(VOCAB_MAGIC);
    out.dict("words", words);
    return out;
  }

  static Vocabulary load(const std::string& path) {
    examples::VocabularyReader in(path, VOCAB_MAGIC, "rnnlm");
    Vocabulary v;
    in.dict("words", v.words);
    for (const char* w : {BOS, EOS, UNK}) in.check(v.words.contains(w), std::string("the vocabulary lacks ") + w);
    v.finish();
    return v;
  }
};

/// Throws, naming `path` and the line, when a word is one of the sentence
/// boundaries: every sentence is wrapped in them.
void check_no_boundary(const std::vector<std::string>& words, const std::string& path, size_t lineno) {
  for (const std::string& w : words)
    DYNET_LITE_CHECK(w != BOS && w != EOS, std::runtime_error,
                     path << ":" << lineno << ": the token '" << w
                          << "' is reserved for the sentence boundaries (every sentence is wrapped in <s> ... </s>)");
}

/// Reads the first `max` sentences of `path` (0: all), one a line (tokens
/// separated by white space; blank lines are skipped), as word ids of `vocab`
/// (Vocabulary::convert), each line converted as it is read: the text is never
/// held whole (as strings, the Penn Treebank's validation text takes about 3
/// MB).  Throws io_error naming the file when it cannot be opened or holds no
/// sentence, and the line when it uses a reserved token.
std::vector<Sentence> read_sentences(const std::string& path, Vocabulary& vocab, size_t max = 0) {
  std::ifstream in(path);
  DYNET_LITE_CHECK(in.good(), io_error, "cannot open '" << path << "'");
  std::vector<Sentence> out;
  std::string line;
  size_t lineno = 0;
  while ((max == 0 || out.size() < max) && std::getline(in, line)) {
    ++lineno;
    const std::vector<std::string> words = examples::split_words(line);
    check_no_boundary(words, path, lineno);
    if (!words.empty()) out.push_back(vocab.convert(words));
  }
  DYNET_LITE_CHECK(!in.bad(), io_error, "reading '" << path << "' failed");
  DYNET_LITE_CHECK(!out.empty(), std::runtime_error, "'" << path << "' holds no sentence");
  out.shrink_to_fit();
  return out;
}

/// Number of target words (every word after <s>, </s> included).
size_t count_targets(const std::vector<Sentence>& data) {
  size_t n = 0;
  for (const auto& s : data) n += s.size() - 1;
  return n;
}

/// Minibatches of B: sentence indices sorted by length (stable), cut into
/// consecutive groups of B.
std::vector<std::vector<size_t>> make_minibatches(const std::vector<Sentence>& data, unsigned B) {
  std::vector<size_t> order(data.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return data[a].size() < data[b].size(); });
  std::vector<std::vector<size_t>> batches;
  for (size_t i = 0; i < order.size(); i += B)
    batches.emplace_back(order.begin() + i, order.begin() + std::min(order.size(), i + B));
  return batches;
}

/// The network.  Built once; per graph only new_graph() and the expressions.
class RNNLanguageModel {
 public:
  /// The model of the words of `vocab`.
  RNNLanguageModel(ParameterCollection& pc, const Vocabulary& vocab) : RNNLanguageModel(pc, vocab.words.size()) {}
  RNNLanguageModel(ParameterCollection& pc, unsigned vocab_size)
      : vocab_size(vocab_size),
        p_embed(pc.add_lookup_parameters(vocab_size, {EMBED_DIM}, "embeddings")),
        p_R(pc.add_parameters({vocab_size, HIDDEN_DIM}, 0.f, "softmax-W")),
        p_bias(pc.add_parameters({vocab_size}, 0.f, "softmax-b")),
        lstm(LAYERS, EMBED_DIM, HIDDEN_DIM, pc) {}

  /// Adds the parameters to a new graph (as constants when not training).
  void new_graph(ComputationGraph& cg, bool training) {
    cg_ = &cg;
    training_ = training;
    lstm.new_graph(cg, training);
    R = training ? parameter(cg, p_R) : const_parameter(cg, p_R);
    bias = training ? parameter(cg, p_bias) : const_parameter(cg, p_bias);
  }

  /// Summed loss of B sentences run side by side in the batch dimension; the
  /// shorter ones are padded with </s> and their padded positions masked out.
  /// A {1} expression.  `eos` is the padding word.  The LSTM runs step by step;
  /// the softmax, which no later step needs, runs once over the hidden states of
  /// every step stacked in the batch dimension: one product with the vocabulary
  /// matrix instead of one a step, the same sum.
  Expression batch_loss(const std::vector<const Sentence*>& batch, unsigned eos) {
    const size_t steps = fill_batch(batch, eos);
    const unsigned B = static_cast<unsigned>(batch.size());
    bool padded = false;
    for (float m : mask_) padded |= m == 0.f;
    lstm.start_new_sequence();
    for (size_t t = 0; t < steps; ++t) {
      const std::vector<unsigned> ids(ids_.begin() + t * B, ids_.begin() + (t + 1) * B);
      hs_.push_back(lstm.add_input(training_ ? lookup(*cg_, p_embed, ids) : const_lookup(*cg_, p_embed, ids)));
    }
    Expression loss = stacked_loss(targets_);
    if (padded) loss = cmult(loss, input(*cg_, Dim({1}, static_cast<unsigned>(mask_.size())), mask_));
    return loss.dim().bd > 1 ? sum_batches(loss) : loss;
  }

  /// batch_loss() of a minibatch of B sentences of which the longest has
  /// `steps` targets, built in program `p` with its words, targets and mask in
  /// slots (the mask always applied, so that one program serves every such
  /// minibatch); bind_batch() sets them.
  Expression batch_loss(Program& p, size_t steps, unsigned B) {
    hs_.clear();
    lstm.start_new_sequence();
    for (size_t t = 0; t < steps; ++t) {
      const std::vector<unsigned>* ids = p.indices("x" + std::to_string(t), B);
      hs_.push_back(lstm.add_input(training_ ? lookup(*cg_, p_embed, ids) : const_lookup(*cg_, p_embed, ids)));
    }
    const unsigned n = static_cast<unsigned>(steps) * B;
    Expression loss = cmult(stacked_loss(p.indices("y", n)), p.input("m", Dim({1}, n)));
    return n > 1 ? sum_batches(loss) : loss;
  }

  /// Sets the slots of a program of batch_loss(p, steps, B) to `batch`.
  void bind_batch(Program& p, const std::vector<const Sentence*>& batch, unsigned eos) {
    const unsigned B = static_cast<unsigned>(batch.size());
    const size_t steps = fill_batch(batch, eos);
    for (size_t t = 0; t < steps; ++t)
      p.set("x" + std::to_string(t), std::vector<unsigned>(ids_.begin() + t * B, ids_.begin() + (t + 1) * B));
    p.set("y", targets_);
    p.set("m", mask_);
  }

  /// The number of targets of the longest sentence of `batch`.
  static size_t steps_of(const std::vector<const Sentence*>& batch) {
    size_t steps = 0;
    for (const Sentence* s : batch) steps = std::max(steps, s->size() - 1);
    return steps;
  }

  /// Summed loss of one sentence built alone (no batch dimension), as the
  /// b64-auto benchmark builds 64 of them in one graph.
  Expression sentence_loss(const Sentence& s) {
    losses_.clear();
    lstm.start_new_sequence();
    for (size_t t = 0; t + 1 < s.size(); ++t) {
      Expression x = training_ ? lookup(*cg_, p_embed, s[t]) : const_lookup(*cg_, p_embed, s[t]);
      Expression h = lstm.add_input(x);
      losses_.push_back(pickneglogsoftmax(affine_transform({bias, R, h}), s[t + 1]));
    }
    return losses_.size() == 1 ? losses_[0] : sum(losses_);
  }

#ifdef DYNET_LITE_ONNX
  /// Writes the network as ONNX, traced on `sample` (three words or more, <s>
  /// and </s> included): input "words" int64 [seq, batch] (the words read),
  /// output "log_probs" float [seq, batch, vocabulary] (the log-distribution of
  /// the next word).  One file serves every length and batch size.
  void export_onnx(const Sentence& sample, const std::string& path) {
    ComputationGraph cg;
    new_graph(cg, false);
    lstm.start_new_sequence();
    std::vector<Expression> xs, ys;
    for (size_t t = 0; t + 1 < sample.size(); ++t) {
      xs.push_back(const_lookup(cg, p_embed, sample[t]));
      ys.push_back(log_softmax(affine_transform({bias, R, lstm.add_input(xs.back())})));
    }
    OnnxExporter ex(cg);
    ex.add_sequence_input(xs, "words");
    ex.add_recurrence(lstm);
    ex.add_sequence_output(ys, "log_probs");
    ex.save(path);
  }
#endif

  /// Multiply-adds of the matrix products of one forward pass over `steps`
  /// positions of a batch of B (the LSTM skips W_h at the first step, whose
  /// previous state is zero).
  double forward_macs(size_t steps, unsigned B) const {
    if (steps == 0) return 0;
    const double per_step = 4.0 * HIDDEN_DIM * EMBED_DIM + double(vocab_size) * HIDDEN_DIM;
    return B * (steps * per_step + (steps - 1) * 4.0 * HIDDEN_DIM * HIDDEN_DIM);
  }

  unsigned vocab_size;

 private:
  /// The words (step-major), targets and mask of `batch` padded with `eos`;
  /// returns the number of steps.
  size_t fill_batch(const std::vector<const Sentence*>& batch, unsigned eos) {
    const size_t steps = steps_of(batch);
    ids_.clear();
    targets_.clear();
    mask_.clear();
    hs_.clear();
    for (size_t t = 0; t < steps; ++t)
      for (const Sentence* s : batch) {
        const bool real = t + 1 < s->size();
        ids_.push_back(t < s->size() ? (*s)[t] : eos);
        targets_.push_back(real ? (*s)[t + 1] : eos);
        mask_.push_back(real ? 1.f : 0.f);
      }
    return steps;
  }

  /// The loss of every step's hidden state (hs_) against `targets`, {1} x (steps * B).
  template <class Targets>
  Expression stacked_loss(const Targets& targets) {
    Expression h = hs_.size() == 1 ? hs_[0] : concatenate_to_batch(hs_);  // {H} x (steps * B)
    return pickneglogsoftmax(affine_transform({bias, R, h}), targets);
  }

  LookupParameter p_embed;
  Parameter p_R, p_bias;
  VanillaLSTMBuilder lstm;
  ComputationGraph* cg_ = nullptr;
  bool training_ = false;
  Expression R, bias;
  std::vector<unsigned> ids_, targets_;
  std::vector<float> mask_;
  std::vector<Expression> losses_, hs_;
};

/// Compiled programs kept at once (--compile): one per minibatch shape.
constexpr size_t kPrograms = 256;

/// The program of `programs` for minibatches shaped as `batch` (its longest
/// sentence's targets, its size), built on the first sight of that shape, with
/// its slots set to `batch`.
Program& bucket_program(RNNLanguageModel& lm, ProgramCache& programs, const std::vector<const Sentence*>& batch,
                        unsigned eos, bool training) {
  const size_t steps = RNNLanguageModel::steps_of(batch);
  const unsigned B = static_cast<unsigned>(batch.size());
  Program& p = programs.get(ProgramCache::key_of({static_cast<unsigned>(steps), B}), [&](Program& p) {
    lm.new_graph(p.graph(), training);
    p.set_output(lm.batch_loss(p, steps, B));
  });
  lm.bind_batch(p, batch, eos);
  return p;
}

/// A training step on `batch` (through a program of `programs` when given); returns the loss.
float train_batch(RNNLanguageModel& lm, const std::vector<const Sentence*>& batch, unsigned eos, Trainer& trainer,
                  ProgramCache* programs) {
  if (!programs) {
    ComputationGraph cg;
    lm.new_graph(cg, true);
    return examples::train_step(cg, lm.batch_loss(batch, eos), trainer);
  }
  Program& p = bucket_program(lm, *programs, batch, eos, true);
  const float loss = as_scalar(p.forward());
  p.backward();
  trainer.update();
  return loss;
}

/// Summed negative log-likelihood (nats) of `data` under the model, computed in
/// minibatches of 64 (masked, so the same as one sentence at a time), through
/// compiled programs of `programs` when given.
double total_nll(RNNLanguageModel& lm, const std::vector<Sentence>& data, unsigned eos,
                 ProgramCache* programs = nullptr) {
  double nll = 0;
  std::vector<const Sentence*> batch;
  for (const auto& ids : make_minibatches(data, 64)) {
    batch.clear();
    for (size_t i : ids) batch.push_back(&data[i]);
    if (programs) {
      nll += as_scalar(bucket_program(lm, *programs, batch, eos, false).forward());
    } else {
      ComputationGraph cg;
      lm.new_graph(cg, false);
      nll += as_scalar(cg.forward(lm.batch_loss(batch, eos)));
    }
  }
  return nll;
}

/// Perplexity of `test` under the training unigram distribution (maximum
/// likelihood over the training target words, </s> included).  When a test word
/// has no training count (only possible for <unk> when the training text lacks
/// it), every count gets +1 (Laplace); `smoothed` says so.
double unigram_perplexity(const std::vector<Sentence>& train, const std::vector<Sentence>& test, unsigned vocab_size,
                          bool& smoothed) {
  std::vector<double> counts(vocab_size, 0.0);
  for (const auto& s : train)
    for (size_t t = 1; t < s.size(); ++t) counts[s[t]] += 1;
  smoothed = false;
  for (const auto& s : test)
    for (size_t t = 1; t < s.size(); ++t) smoothed |= counts[s[t]] == 0;
  double total = 0;
  for (double& c : counts) total += (c += smoothed ? 1 : 0);
  double nll = 0;
  for (const auto& s : test)
    for (size_t t = 1; t < s.size(); ++t) nll -= std::log(counts[s[t]] / total);
  return std::exp(nll / count_targets(test));
}

struct Options : examples::CorpusOptions {
  std::string model_path = "rnnlm.model", load, score, bench, export_path, reference_path;
  unsigned epochs = 5, max_train = 0, max_test = 0, batch = 16;
  bool compile = false;
};

// T4 trains on the PTB validation text (BENCHMARKS.md); it has no dev split.
const examples::CorpusLayout PTB{"ptb", "ptb.valid.txt", "", "ptb.test.txt"};

void add_options(CLI::App& app, Options& o) {
  const char* const training = "training (the default mode)";
  o.add_corpus_options(app, PTB, "text, one sentence a line");
  app.add_flag("--compile", o.compile,
               "run each minibatch shape (longest sentence, size) as a compiled\nprogram, built once and replayed "
               "(training, evaluation, --score,\n--bench manual-B)");
  examples::add_count(app, "--epochs", o.epochs, "passes over the training text (default 5)")->group(training);
  examples::add_count(app, "--batch", o.batch, "sentences per minibatch (default 16)", examples::at_least(1))
      ->group(training);
  examples::add_count(app, "--max-train-sentences", o.max_train, "use only the first N training sentences (quick runs)")
      ->group(training);
  examples::add_count(app, "--max-test-sentences", o.max_test,
                      "evaluate on the first N test sentences only (quick runs)")
      ->group(training);
  examples::add_saved_model_options(
      app, training, o.model_path,
      "the model with the lowest training loss so far is saved\nthere after each epoch, its vocabulary "
      "to FILE.vocab\n(default rnnlm.model; T4 has no held-out set besides the test)",
      o.load, "perplexity of the saved model on --test; with --score, score IN", "--score", o.score,
      "per sentence of IN: log-probability (nats), words, perplexity;\n'-' reads standard input");
  examples::add_choice(app, "--bench", o.bench, {"manual-1", "manual-4", "manual-16", "manual-64", "b64-auto"},
                       "one epoch of the training text after 1 warm-up minibatch; prints\none line (mode "
                       "manual-1, manual-4, manual-16, manual-64 or b64-auto)")
      ->group("benchmark (BENCHMARKS.md T4)");
  examples::add_export_options(app, o.export_path, o.reference_path);
}

void finish_options(Options& o) {
  o.resolve_corpus(PTB);
  DYNET_LITE_ARG_CHECK(o.score.empty() || !o.load.empty(), "--score needs --load MODEL");
  DYNET_LITE_ARG_CHECK(o.reference_path.empty() || !o.export_path.empty(), "--export-reference needs --export FILE");
  examples::check_export_available(o.export_path);
}

// ---------------------------------------------------------------- modes

#ifdef DYNET_LITE_ONNX
/// --export (and --export-reference): the saved model `path` as ONNX, traced on
/// the first test sentence of three words or more; the reference holds, per test
/// sentence, the words read, the words to predict and dynet_lite's
/// log-likelihood (nats), compared to 1e-4 relative with the sum of the exported
/// model's log_probs at those words.
int run_export(const Options& o, const std::string& path) {
  examples::SavedModel<Vocabulary, RNNLanguageModel> saved(path);
  std::vector<Sentence> test = read_sentences(o.test, saved.vocab, o.max_test);
  auto sample = std::find_if(test.begin(), test.end(), [](const Sentence& s) { return s.size() >= 3; });
  DYNET_LITE_CHECK(sample != test.end(), std::runtime_error, "--export: no test sentence of three words in " << o.test);
  saved.model.export_onnx(*sample, o.export_path);
  std::cout << "exported the language model to " << o.export_path << "\n";
  if (o.reference_path.empty()) return 0;
  examples::ReferenceWriter ref;
  for (const Sentence& s : test) {
    if (s.size() < 2) continue;
    ComputationGraph cg;
    saved.model.new_graph(cg, false);
    const float ll = -as_scalar(cg.forward(saved.model.sentence_loss(s)));
    std::vector<long> read(s.begin(), s.end() - 1), next(s.begin() + 1, s.end());
    ref.begin_run();
    ref.ids("words", {static_cast<long>(read.size()), 1}, read);
    ref.picked_sum("log_probs", next, ll, "1e-4");
  }
  ref.save(o.reference_path);
  std::cout << "wrote " << ref.runs() << " test sentences to " << o.reference_path << "\n";
  return 0;
}
#else
int run_export(const Options&, const std::string&) { return 1; }  // refused by finish_options
#endif

int run_evaluate(const Options& o) {
  examples::SavedModel<Vocabulary, RNNLanguageModel> saved(o.load);
  std::vector<Sentence> test = read_sentences(o.test, saved.vocab, o.max_test);
  examples::Timer t;
  ProgramCache programs(kPrograms);
  const double nll = total_nll(saved.model, test, saved.vocab.eos, o.compile ? &programs : nullptr);
  const size_t words = count_targets(test);
  std::cout << "test perplexity " << std::fixed << std::setprecision(2) << std::exp(nll / words) << " (" << words
            << " target words of " << o.test << ", " << std::setprecision(1) << t.seconds() << " s)\n";
  return 0;
}

int run_score(const Options& o) {
  examples::SavedModel<Vocabulary, RNNLanguageModel> saved(o.load);
  ProgramCache programs(kPrograms);  // one per sentence length
  size_t lineno = 0;
  examples::for_each_input_line(o.score, [&](const std::string& line) {
    ++lineno;
    const std::vector<std::string> words = examples::split_words(line);
    examples::check_input_length(words.size(), o.score, lineno);
    check_no_boundary(words, o.score, lineno);
    Sentence s = saved.vocab.convert(words);
    double nll;
    if (o.compile) {
      nll = as_scalar(bucket_program(saved.model, programs, {&s}, saved.vocab.eos, false).forward());
    } else {
      ComputationGraph cg;
      saved.model.new_graph(cg, false);
      nll = as_scalar(cg.forward(saved.model.sentence_loss(s)));
    }
    std::cout << std::fixed << std::setprecision(3) << -nll << "\t" << s.size() - 1 << "\t" << std::setprecision(2)
              << std::exp(nll / (s.size() - 1)) << "\t" << line << "\n";
  });
  return 0;
}

int run_train(const Options& o) {
  examples::Timer total_time;
  Vocabulary vocab = Vocabulary::open();
  std::vector<Sentence> train = read_sentences(o.train, vocab, o.max_train);
  vocab.finish();
  std::vector<Sentence> test = read_sentences(o.test, vocab, o.max_test);
  const size_t train_words = count_targets(train), test_words = count_targets(test);
  size_t test_unk = 0;
  for (const auto& s : test) test_unk += std::count(s.begin() + 1, s.end(), vocab.unk);
  std::cerr << "train " << train.size() << " sentences (" << train_words << " target words), test " << test.size()
            << " sentences (" << test_words << " target words, " << test_unk << " <unk>); vocabulary "
            << vocab.words.size() << " words\n";
  bool smoothed = false;
  const double unigram = unigram_perplexity(train, test, vocab.words.size(), smoothed);

  ParameterCollection pc;
  RNNLanguageModel lm(pc, vocab.words.size());
  SimpleSGDTrainer trainer(pc, LEARNING_RATE);
  std::cerr << "model: " << pc.parameter_count() << " parameters (T4), minibatches of " << o.batch << "\n";

  std::vector<std::vector<size_t>> batches = make_minibatches(train, o.batch);
  std::mt19937 shuffle_rng(SHUFFLE_SEED);
  std::vector<const Sentence*> batch;
  ProgramCache programs(kPrograms), eval_programs(kPrograms);
  double best_loss = 1e300, train_seconds = 0, last_ppl = 0;
  for (unsigned epoch = 1; epoch <= o.epochs; ++epoch) {
    std::shuffle(batches.begin(), batches.end(), shuffle_rng);
    examples::ProgressBar bar("epoch " + std::to_string(epoch), train.size(), "sent");
    double loss_sum = 0;
    size_t done = 0, words = 0;
    for (const auto& ids : batches) {
      batch.clear();
      for (size_t i : ids) {
        batch.push_back(&train[i]);
        words += train[i].size() - 1;
      }
      loss_sum += train_batch(lm, batch, vocab.eos, trainer, o.compile ? &programs : nullptr);
      done += ids.size();
      bar.update(done, loss_sum / words, "word");
    }
    bar.finish();
    const double epoch_seconds = bar.seconds();
    train_seconds += epoch_seconds;
    examples::Timer eval_time;
    last_ppl = std::exp(total_nll(lm, test, vocab.eos, o.compile ? &eval_programs : nullptr) / test_words);
    std::cout << "epoch " << epoch << ": train loss/word " << std::fixed << std::setprecision(4) << loss_sum / words
              << " (perplexity " << std::setprecision(2) << std::exp(loss_sum / words) << "), "
              << std::setprecision(1) << train.size() / epoch_seconds << " sent/s, " << words / epoch_seconds
              << " words/s, " << epoch_seconds << " s; test perplexity " << std::setprecision(2) << last_ppl
              << " (unigram " << unigram << (smoothed ? ", add-one smoothed" : "") << ") (" << std::setprecision(1)
              << eval_time.seconds() << " s)";
    if (loss_sum < best_loss) {
      best_loss = loss_sum;
      examples::save_model_noted(pc, vocab, o.model_path);
    }
    std::cout << std::endl;
  }
  std::cout << "final test perplexity " << std::fixed << std::setprecision(2) << last_ppl << " vs unigram "
            << unigram << "; training " << std::setprecision(1) << train_seconds << " s, total "
            << total_time.seconds() << " s\n";
  if (!o.export_path.empty() && best_loss < 1e300) run_export(o, o.model_path);
  return 0;
}

int run_bench(const Options& o) {
  const bool autobatch = o.bench == "b64-auto";
  const unsigned B = autobatch ? 64 : static_cast<unsigned>(std::stoul(o.bench.substr(o.bench.find('-') + 1)));
  DYNET_LITE_ARG_CHECK(!(autobatch && o.compile), "--compile applies to --bench manual-B, not b64-auto (its "
                                                  "graphs of 64 sentence lengths hardly ever repeat)");
  examples::BenchRecorder recorder(autobatch);
  Vocabulary vocab = Vocabulary::open();
  std::vector<Sentence> train = read_sentences(o.train, vocab);
  vocab.finish();
  std::vector<std::vector<size_t>> batches = make_minibatches(train, B);
  std::mt19937 shuffle_rng(SHUFFLE_SEED);
  std::shuffle(batches.begin(), batches.end(), shuffle_rng);  // once, with a fixed seed

  ParameterCollection pc;
  RNNLanguageModel lm(pc, vocab.words.size());
  SimpleSGDTrainer trainer(pc, LEARNING_RATE);
  std::vector<const Sentence*> batch;
  std::vector<Expression> losses;
  ProgramCache programs(kPrograms);
  auto step = [&](const std::vector<size_t>& ids, bool timed) {
    if (o.compile) {
      batch.clear();
      for (size_t i : ids) batch.push_back(&train[i]);
      recorder.record(train_batch(lm, batch, vocab.eos, trainer, &programs), timed);
      return;
    }
    ComputationGraph cg;
    cg.set_autobatch(autobatch ? 1 : 0);
    lm.new_graph(cg, true);
    Expression loss;
    if (autobatch) {
      losses.clear();
      for (size_t i : ids) losses.push_back(lm.sentence_loss(train[i]));
      loss = sum(losses);
    } else {
      batch.clear();
      for (size_t i : ids) batch.push_back(&train[i]);
      loss = lm.batch_loss(batch, vocab.eos);
    }
    recorder.record(cg, examples::train_step(cg, loss, trainer), timed);
  };
  step(batches[0], false);  // warm-up
  recorder.start();
  for (const auto& ids : batches) step(ids, true);
  recorder.stop();
  const size_t words = count_targets(train);
  double macs = 0;
  for (const auto& ids : batches) {
    if (autobatch) {
      for (size_t i : ids) macs += lm.forward_macs(train[i].size() - 1, 1);
    } else {
      size_t steps = 0;
      for (size_t i : ids) steps = std::max(steps, train[i].size() - 1);
      macs += lm.forward_macs(steps, static_cast<unsigned>(ids.size()));  // padding computed too
    }
  }
  std::ostringstream head;
  head << "T4 rnnlm mode=" << o.bench << " sentences=" << train.size() << " words=" << words
       << " minibatches=" << batches.size();
  if (o.compile)
    head << " compiled{programs=" << programs.size() << " hits=" << programs.hits() << " misses=" << programs.misses()
         << "}";
  // the model's count: forward one product per matrix product, backward two (d input, d weights)
  recorder.print(head.str(), {{"words/s", words}, {"sent/s", train.size()}}, "loss/word", recorder.loss_sum() / words,
                 3 * 2 * macs);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "LSTM language model on the Penn Treebank text (BENCHMARKS.md task T4).\nWords of the test text unknown to the "
      "training vocabulary become <unk>.",
      "rnnlm"};
  examples::init_cli(app);
  add_options(app, o);
  return examples::run_main(
      app, argc, argv, [&] { finish_options(o); },
      [&] {
        if (!o.bench.empty()) return run_bench(o);
        if (!o.score.empty()) return run_score(o);
        if (!o.load.empty() && !o.export_path.empty()) return run_export(o, o.load);
        if (!o.load.empty()) return run_evaluate(o);
        return run_train(o);
      });
}
