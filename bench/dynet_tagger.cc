// dynet_tagger: BENCHMARKS.md tasks T1 `tagger` and T2 `tagger-char` written
// for DyNet 2.1 itself, so that dynet_lite's figures can be compared with
// DyNet's on the same machine in the same rounds (bench/run_all.py --dynet;
// DyNet is built by scripts/build_dynet.sh with its own default flags).
//
// The model code is examples/tagger.cc's, unchanged but for the namespace: that
// program is written against DyNet's API, which dynet_lite keeps.  The data and
// vocabulary rules are the example's too (train words seen at least twice, or
// with --char at least 5 times, in first-appearance order after <unk>; the 17
// universal tags in a fixed order; every character of the train words), 100
// warm-up then 2,000 counted sentences in file order; one step is building the
// graph, forward, backward and a SimpleSGDTrainer update (rate 0.1, DyNet's
// default clipping).  Random initial values come from DyNet's generator, so the
// first losses are close to, not equal to, dynet_lite's.
//
//   dynet_tagger --bench b1|b64|b64-auto|b64-depth [--char] [--compact] [--data-dir DIR] [--dynet-mem M]
//
// b64-auto and b64-depth run DyNet's --dynet-autobatch 1 (agenda) and 2 (depth).
// --compact uses CompactVanillaLSTMBuilder (DyNet's fused gate operations)
// instead of VanillaLSTMBuilder.  Prints one line in the format of `tagger --bench`.
#include <dynet/dynet.h>
#include <dynet/expr.h>
#include <dynet/init.h>
#include <dynet/lstm.h>
#include <dynet/training.h>

#include <iostream>
#include <memory>
#include <unordered_map>

#include "dynet_common.h"

using namespace dynet;

namespace {

// Hyperparameters of T1 / T2 (BENCHMARKS.md), as in examples/tagger.cc.
constexpr unsigned WORD_DIM = 128;
constexpr unsigned LSTM_DIM = 50;
constexpr unsigned HIDDEN_DIM = 32;
constexpr unsigned CHAR_DIM = 20;
constexpr unsigned CHAR_LSTM_DIM = 64;
constexpr unsigned MIN_WORD_COUNT = 2;
constexpr unsigned MIN_WORD_COUNT_CHAR = 5;
constexpr float LEARNING_RATE = 0.1f;
constexpr size_t WARMUP = 100, TIMED = 2000;
const char* const TAGS[] = {"ADJ",  "ADP",  "ADV",   "AUX",   "CCONJ", "DET", "INTJ", "NOUN", "NUM",
                            "PART", "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X"};
constexpr unsigned NUM_TAGS = sizeof(TAGS) / sizeof(TAGS[0]);

std::vector<std::string> utf8_chars(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
    if (i + len > s.size()) len = 1;
    out.push_back(s.substr(i, len));
    i += len;
  }
  return out;
}

struct Token {
  unsigned word = 0;
  bool by_chars = false;
  std::vector<unsigned> chars;
  unsigned tag = 0;
};
using Sentence = std::vector<Token>;

/// examples/tagger.cc's Vocabulary::build and convert.  Returns the number of
/// word ids and of character ids.
std::pair<unsigned, unsigned> convert(const std::vector<dynet_bench::ConllSentence>& corpus, bool use_char,
                                      std::vector<Sentence>& out) {
  std::unordered_map<std::string, unsigned> counts, words, chars, tags;
  std::vector<std::string> order;
  for (const auto& s : corpus)
    for (const auto& t : s) {
      if (counts[t.form]++ == 0) order.push_back(t.form);
      if (use_char)
        for (const auto& c : utf8_chars(t.form)) chars.emplace(c, static_cast<unsigned>(chars.size()));
    }
  const unsigned char_unk = static_cast<unsigned>(chars.size());
  const unsigned min_count = use_char ? MIN_WORD_COUNT_CHAR : MIN_WORD_COUNT;
  unsigned next = 1;  // 0 is <unk>
  for (const auto& w : order)
    if (counts[w] >= min_count) words.emplace(w, next++);
  for (unsigned k = 0; k < NUM_TAGS; ++k) tags.emplace(TAGS[k], k);
  for (const auto& cs : corpus) {
    Sentence s;
    for (const auto& ct : cs) {
      Token t;
      auto wi = words.find(ct.form);
      t.word = wi == words.end() ? 0 : wi->second;
      if (use_char) {
        t.by_chars = wi == words.end();
        for (const auto& c : utf8_chars(ct.form)) t.chars.push_back(chars.at(c));
        if (t.chars.empty()) t.chars.push_back(char_unk);
      }
      auto ti = tags.find(ct.upos);
      if (ti == tags.end()) throw std::runtime_error("the tag '" + ct.upos + "' is not a universal POS tag");
      t.tag = ti->second;
      s.push_back(std::move(t));
    }
    if (!s.empty()) out.push_back(std::move(s));
  }
  return {next, char_unk + 1};
}

/// examples/tagger.cc's Tagger (training graphs, no dropout), for either builder.
template <class Builder>
class Tagger {
 public:
  Tagger(ParameterCollection& pc, unsigned num_words, unsigned num_chars, bool use_char)
      : use_char(use_char),
        p_word(pc.add_lookup_parameters(num_words, {WORD_DIM})),
        fwd(1, WORD_DIM, LSTM_DIM, pc),
        bwd(1, WORD_DIM, LSTM_DIM, pc),
        p_W(pc.add_parameters({HIDDEN_DIM, 2 * LSTM_DIM})),
        p_b(pc.add_parameters({HIDDEN_DIM})),
        p_V(pc.add_parameters({NUM_TAGS, HIDDEN_DIM})),
        p_c(pc.add_parameters({NUM_TAGS})) {
    if (use_char) {
      p_char = pc.add_lookup_parameters(num_chars, {CHAR_DIM});
      cfwd = Builder(1, CHAR_DIM, CHAR_LSTM_DIM, pc);
      cbwd = Builder(1, CHAR_DIM, CHAR_LSTM_DIM, pc);
    }
  }

  void new_graph(ComputationGraph& cg) {
    cg_ = &cg;
    fwd.new_graph(cg);
    bwd.new_graph(cg);
    if (use_char) {
      cfwd.new_graph(cg);
      cbwd.new_graph(cg);
    }
    W = parameter(cg, p_W);
    b = parameter(cg, p_b);
    V = parameter(cg, p_V);
    c = parameter(cg, p_c);
  }

  Expression sentence_loss(const Sentence& s) {
    const size_t n = s.size();
    xs_.resize(n);
    fh_.resize(n);
    bh_.resize(n);
    for (size_t i = 0; i < n; ++i) xs_[i] = word_repr(s[i]);
    fwd.start_new_sequence();
    for (size_t i = 0; i < n; ++i) fh_[i] = fwd.add_input(xs_[i]);
    bwd.start_new_sequence();
    for (size_t i = n; i-- > 0;) bh_[i] = bwd.add_input(xs_[i]);
    losses_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      Expression h = tanh(affine_transform({b, W, concatenate({fh_[i], bh_[i]})}));
      losses_[i] = pickneglogsoftmax(affine_transform({c, V, h}), s[i].tag);
    }
    return sum(losses_);
  }

  /// examples/tagger.cc's forward_macs.
  static double forward_macs(const Sentence& s) {
    const double n = static_cast<double>(s.size());
    double macs = 2 * (4.0 * LSTM_DIM * WORD_DIM * n + 4.0 * LSTM_DIM * LSTM_DIM * (n - 1));
    macs += n * (double(HIDDEN_DIM) * 2 * LSTM_DIM + double(NUM_TAGS) * HIDDEN_DIM);
    for (const auto& t : s)
      if (t.by_chars) {
        const double L = static_cast<double>(t.chars.size());
        macs += 2 * (4.0 * CHAR_LSTM_DIM * CHAR_DIM * L + 4.0 * CHAR_LSTM_DIM * CHAR_LSTM_DIM * (L - 1));
      }
    return macs;
  }

 private:
  Expression word_repr(const Token& t) {
    if (!t.by_chars) return lookup(*cg_, p_word, t.word);
    cfwd.start_new_sequence();
    for (unsigned ch : t.chars) cfwd.add_input(lookup(*cg_, p_char, ch));
    cbwd.start_new_sequence();
    for (size_t k = t.chars.size(); k-- > 0;) cbwd.add_input(lookup(*cg_, p_char, t.chars[k]));
    return concatenate({cfwd.back(), cbwd.back()});
  }

  bool use_char;
  LookupParameter p_word, p_char;
  Builder fwd, bwd, cfwd, cbwd;
  Parameter p_W, p_b, p_V, p_c;
  ComputationGraph* cg_ = nullptr;
  Expression W, b, V, c;
  std::vector<Expression> xs_, fh_, bh_, losses_;
};

template <class Builder>
void run_bench(const dynet_bench::Options& o) {
  // Before the data is read: its matrices do not add to the peak resident memory.
  const double gemm512 = dynet_bench::gemm512_gflops();
  std::vector<Sentence> train;
  const auto [num_words, num_chars] = convert(dynet_bench::read_conllu(o.train_path), o.use_char, train);
  if (train.size() < WARMUP + TIMED)
    throw std::runtime_error("--bench needs " + std::to_string(WARMUP + TIMED) + " training sentences, '" +
                             o.train_path + "' has " + std::to_string(train.size()));
  ParameterCollection pc;
  Tagger<Builder> tagger(pc, num_words, num_chars, o.use_char);
  SimpleSGDTrainer trainer(pc, LEARNING_RATE);
  const dynet_bench::TimedRun run = dynet_bench::train_timed(
      WARMUP, TIMED, o.mode == "b1" ? 1 : 64, [&](ComputationGraph& cg) { tagger.new_graph(cg); },
      [&](size_t k) { return tagger.sentence_loss(train[k]); }, trainer);
  size_t words = 0;
  double macs = 0;
  for (size_t k = WARMUP; k < WARMUP + TIMED; ++k) {
    words += train[k].size();
    macs += Tagger<Builder>::forward_macs(train[k]);
  }
  const double seconds = run.seconds;
  std::ostringstream line;
  line << (o.use_char ? "T2 tagger-char" : "T1 tagger") << " mode=" << o.mode << " sentences=" << TIMED
       << " words=" << words << " seconds=" << std::fixed << std::setprecision(3) << seconds
       << " sent/s=" << std::setprecision(1) << TIMED / seconds << " words/s=" << words / seconds
       << " loss_first_steps=" << dynet_bench::first_losses(run.first_losses) << " loss/word=" << std::setprecision(4)
       << run.loss_sum / words << " GFLOP/s=" << std::setprecision(2) << 3 * 2 * macs / seconds / 1e9
       << " gemm512_GFLOP/s=" << gemm512
       << " lstm=" << (o.compact ? "CompactVanillaLSTMBuilder" : "VanillaLSTMBuilder");
  dynet_bench::append_tail(line);
  std::cout << line.str() << std::endl;
}

int run(int argc, char** argv) {
  const dynet_bench::Options o =
      dynet_bench::parse_options(argc, argv, "ud-english-ewt/en_ewt-ud-train.conllu", "1024", true, true);
  dynet_bench::check_instance_mode(o.mode);
  dynet_bench::initialize_dynet(o);
  if (o.compact)
    run_bench<CompactVanillaLSTMBuilder>(o);
  else
    run_bench<VanillaLSTMBuilder>(o);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return bench::run_reporting_errors("dynet_tagger", run, argc, argv); }
