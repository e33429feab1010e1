// tagger: a BiLSTM part-of-speech tagger (UPOS) on the Universal Dependencies
// English Web Treebank, the benchmark tasks T1 `tagger` and T2 `tagger-char`
// of BENCHMARKS.md.
//
// Model (T1): each word is a 128-dim embedding (train words seen at least twice,
// others <unk>); a forward and a backward vanilla LSTM (1 layer, 50 units each)
// read the sentence; per token h = tanh(W [fwd_t; bwd_t] + b) with 32 units and
// scores = V h + c over the 17 tags; the loss is the sum over tokens of
// pickneglogsoftmax(scores, gold).  With --char (T2), a word seen fewer than 5
// times in train is represented by a character BiLSTM instead (character
// embedding 20, forward and backward LSTMs of 64 units, the final states
// concatenated to 128).  Plain SGD (learning rate 0.1, DyNet's default clipping),
// Glorot-initialised parameters.
//
// Run `tagger --help` for the options (training, --predict, --bench).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
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
#include "dynet_lite/io/conllu.h"
#include "dynet_lite/lstm.h"
#include "dynet_lite/training.h"
#ifdef DYNET_LITE_ONNX
#include "dynet_lite/onnx.h"
#endif

namespace dynet = dynet_lite;
using namespace dynet;

namespace {

// Hyperparameters of T1 / T2 (BENCHMARKS.md); fixed, so that figures compare.
constexpr unsigned WORD_DIM = 128;
constexpr unsigned LSTM_DIM = 50;
constexpr unsigned HIDDEN_DIM = 32;
constexpr unsigned CHAR_DIM = 20;
constexpr unsigned CHAR_LSTM_DIM = 64;
constexpr unsigned MIN_WORD_COUNT = 2;       // T1: rarer words are <unk>
constexpr unsigned MIN_WORD_COUNT_CHAR = 5;  // T2: rarer words go through the characters
constexpr float LEARNING_RATE = 0.1f;
const char* const UNK = "<unk>";
const char* const VOCAB_MAGIC = "dynet_lite-tagger-vocabulary";

/// Splits a UTF-8 string into its characters (code points, as byte strings).
/// A stray continuation byte counts as a character of its own.
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

/// Calls f(sentence) for the first `max` sentences of the CoNLL-U file `path`
/// (0: all), one at a time, with only FORM and UPOS read.
template <class F>
void for_each_sentence(const std::string& path, size_t max, F&& f) {
  ConlluReader reader(path, ConlluColumns::form | ConlluColumns::upos);
  ConlluSentence s;
  for (size_t n = 0; (max == 0 || n < max) && reader.next(s); ++n) f(s);
}

/// A word's character ids, one list shared by every token of the same form (and
/// none in a model without characters), owned by the Vocabulary's SpellingStore:
/// a training set of 200,000 tokens keeps one pointer each instead of a vector
/// each.  It points at the length, which the ids follow.
class Spelling {
 public:
  Spelling() = default;
  explicit Spelling(const unsigned* stored) : stored_(stored) {}
  size_t size() const { return stored_ ? stored_[0] : 0; }
  unsigned operator[](size_t k) const { return stored_[1 + k]; }
  const unsigned* begin() const { return stored_ ? stored_ + 1 : nullptr; }
  const unsigned* end() const { return begin() + size(); }

 private:
  const unsigned* stored_ = nullptr;
};

/// Spellings one after another in blocks that never move (a length, then the
/// ids), instead of one heap vector each.
class SpellingStore {
 public:
  Spelling add(const std::vector<unsigned>& ids) {
    const size_t need = ids.size() + 1;
    if (blocks_.empty() || used_ + need > blocks_.back().size()) {
      blocks_.emplace_back(std::max<size_t>(kBlock, need));
      used_ = 0;
    }
    unsigned* at = blocks_.back().data() + used_;
    at[0] = static_cast<unsigned>(ids.size());
    std::copy(ids.begin(), ids.end(), at + 1);
    used_ += need;
    return Spelling(at);
  }

 private:
  static constexpr size_t kBlock = 16384;
  std::vector<std::vector<unsigned>> blocks_;
  size_t used_ = 0;
};

/// One token ready for the network: a word id, or (by_chars) a character sequence.
/// A model with characters keeps the characters of every word (word dropout may
/// spell out a known word).  16 bytes: the corpus is held as tokens.
struct Token {
  Spelling chars;
  unsigned word = 0;
  uint16_t tag = 0;
  bool by_chars = false;
};
using Sentence = std::vector<Token>;

/// The three vocabularies of a tagger, and whether it uses characters.
struct Vocabulary {
  bool use_char = false;
  Dict words, tags, chars;
  std::vector<unsigned> word_counts;  ///< training count per word id (not saved)
  /// The character ids of each form spelled so far (not saved).
  std::unordered_map<std::string, Spelling> spellings;
  SpellingStore spelling_store;

  Vocabulary() = default;
  // Tokens point into spelling_store: moved (its blocks stay where they are), never copied.
  Vocabulary(Vocabulary&&) = default;
  Vocabulary& operator=(Vocabulary&&) = default;
  Vocabulary(const Vocabulary&) = delete;

  /// The training count of word id w (0 for <unk> and for a loaded vocabulary).
  unsigned count(unsigned w) const { return w < word_counts.size() ? word_counts[w] : 0; }

  /// From the first `max` training sentences of the CoNLL-U file `path` (0:
  /// all): words by count threshold, every tag, every character.
  static Vocabulary build(const std::string& path, size_t max, bool use_char) {
    Vocabulary v;
    v.use_char = use_char;
    // The 17 universal tags, in a fixed order: the output layer does not depend
    // on which tags a (shortened) training set happens to contain.
    for (const char* tag : {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
                            "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X"})
      v.tags.convert(tag);
    v.tags.freeze();
    std::unordered_map<std::string, unsigned> counts;
    std::vector<std::string> order;  // first-appearance order, so ids do not depend on hashing
    for_each_sentence(path, max, [&](const ConlluSentence& s) {
      for (const auto& t : s.tokens) {
        if (counts[t.form]++ == 0) order.push_back(t.form);
        if (use_char)
          for (const auto& c : utf8_chars(t.form)) v.chars.convert(c);
      }
    });
    const unsigned min_count = use_char ? MIN_WORD_COUNT_CHAR : MIN_WORD_COUNT;
    v.words.convert(UNK);
    v.word_counts.push_back(0);
    for (const auto& w : order)
      if (counts[w] >= min_count) {
        v.words.convert(w);
        v.word_counts.push_back(counts[w]);
      }
    v.words.freeze();
    v.words.set_unk(UNK);
    if (use_char) v.chars.convert(UNK);
    v.chars.freeze();
    if (use_char) v.chars.set_unk(UNK);
    return v;
  }

  /// A word form as the network sees it (the tag is left at 0).
  Token token(const std::string& form) {
    Token t;
    t.word = static_cast<unsigned>(words.convert(form));
    if (use_char) {
      t.by_chars = !words.contains(form);
      Spelling& known = spellings[form];
      if (known.size() == 0) {
        std::vector<unsigned> ids;
        for (const auto& c : utf8_chars(form)) ids.push_back(static_cast<unsigned>(chars.convert(c)));
        if (ids.empty()) ids.push_back(static_cast<unsigned>(chars.get_unk_id()));
        known = spelling_store.add(ids);
      }
      t.chars = known;
    }
    return t;
  }

  /// Reads the first `max` sentences of the CoNLL-U file `path` (0: all), one
  /// at a time, converting each as it comes: the parsed text of the corpus is
  /// never held whole.  A tag outside the universal set is an error naming the
  /// tag and the sentence.
  std::vector<Sentence> read(const std::string& path, size_t max = 0) {
    std::vector<Sentence> out;
    for_each_sentence(path, max, [&](const ConlluSentence& cs) {
      Sentence s;
      s.reserve(cs.size());
      for (const auto& ct : cs.tokens) {
        Token t = token(ct.form);
        DYNET_LITE_CHECK(tags.contains(ct.upos), std::runtime_error,
                         path << ": sentence " << out.size() + 1 << ", token " << ct.id << " '" << ct.form
                              << "' has the tag '" << ct.upos << "', not one of the 17 universal POS tags");
        t.tag = static_cast<uint16_t>(tags.convert(ct.upos));
        s.push_back(std::move(t));
      }
      out.push_back(std::move(s));
    });
    out.shrink_to_fit();
    return out;
  }

  /// Saves to `path` atomically: a header, the char setting, then each dictionary.
  /// The vocabulary file's content (examples::save_model writes it).
  examples::VocabularyWriter write() const {
    examples::VocabularyWriter out(VOCAB_MAGIC);
    out.number("char", use_char ? 1 : 0);
    out.dict("words", words);
    out.dict("tags", tags);
    out.dict("chars", chars);
    return out;
  }

  static Vocabulary load(const std::string& path) {
    examples::VocabularyReader in(path, VOCAB_MAGIC, "tagger");
    Vocabulary v;
    v.use_char = in.number("char") != 0;
    for (auto [key, dict] : {std::pair<const char*, Dict*>{"words", &v.words}, {"tags", &v.tags},
                             {"chars", &v.chars}}) {
      in.dict(key, *dict);
      dict->freeze();
    }
    in.check(v.words.contains(UNK), std::string("the words lack ") + UNK);
    in.check(v.tags.size() > 0, "no tags");
    v.words.set_unk(UNK);
    if (v.use_char) {
      in.check(v.chars.contains(UNK), std::string("the characters lack ") + UNK);
      v.chars.set_unk(UNK);
    }
    return v;
  }
};

/// The network.  Built once; per graph only new_graph() and the expressions.
class Tagger {
 public:
  Tagger(ParameterCollection& pc, const Vocabulary& v)
      : use_char(v.use_char),
        p_word(pc.add_lookup_parameters(v.words.size(), {WORD_DIM}, "word-embeddings")),
        fwd(1, WORD_DIM, LSTM_DIM, pc),
        bwd(1, WORD_DIM, LSTM_DIM, pc),
        p_W(pc.add_parameters({HIDDEN_DIM, 2 * LSTM_DIM}, 0.f, "W-hidden")),
        p_b(pc.add_parameters({HIDDEN_DIM}, 0.f, "b-hidden")),
        p_V(pc.add_parameters({v.tags.size(), HIDDEN_DIM}, 0.f, "V-output")),
        p_c(pc.add_parameters({v.tags.size()}, 0.f, "c-output")),
        num_tags(v.tags.size()) {
    if (use_char) {
      p_char = pc.add_lookup_parameters(v.chars.size(), {CHAR_DIM}, "char-embeddings");
      cfwd = VanillaLSTMBuilder(1, CHAR_DIM, CHAR_LSTM_DIM, pc);
      cbwd = VanillaLSTMBuilder(1, CHAR_DIM, CHAR_LSTM_DIM, pc);
    }
  }

  /// Adds the parameters to a new graph (as constants when not training).
  void new_graph(ComputationGraph& cg, bool training) {
    cg_ = &cg;
    training_ = training;
    if (autobatch_ >= 0) cg.set_autobatch(autobatch_);
    const float d = training ? lstm_dropout_ : 0.f, dc = training ? char_dropout_ : 0.f;
    for (VanillaLSTMBuilder* b : {&fwd, &bwd}) {
      b->new_graph(cg, training);
      b->set_dropout(d);  // rate 0: no masks, the plain LSTM
    }
    if (use_char) {
      for (VanillaLSTMBuilder* b : {&cfwd, &cbwd}) {
        b->new_graph(cg, training);
        b->set_dropout(dc);
      }
    }
    W = training ? parameter(cg, p_W) : const_parameter(cg, p_W);
    b = training ? parameter(cg, p_b) : const_parameter(cg, p_b);
    V = training ? parameter(cg, p_V) : const_parameter(cg, p_V);
    c = training ? parameter(cg, p_c) : const_parameter(cg, p_c);
  }

  /// The batching strategy of the graphs that follow (-1: --dynet-autobatch's).
  void set_autobatch(int strategy) { autobatch_ = strategy; }

  /// Variational dropout (rate d on the inputs and the recurrent states) in the
  /// word BiLSTM and rate dc in the character BiLSTMs, for the graphs that follow;
  /// 0 turns it off.  Evaluation graphs (new_graph(cg, false)) never drop.
  void set_lstm_dropout(float d, float dc) {
    lstm_dropout_ = d;
    char_dropout_ = dc;
  }

  /// Word dropout for the next sentence_loss: token i with dropped[i] != 0 is
  /// seen as <unk> (or spelled out by the character model).  nullptr: none.
  void set_dropped(const std::vector<unsigned char>* dropped) { dropped_ = dropped; }

  /// The tag scores of every token of `s`, in `scores`.
  void tag_scores(const Sentence& s, std::vector<Expression>& scores) {
    const size_t n = s.size();
    xs_.resize(n);
    fh_.resize(n);
    bh_.resize(n);
    for (size_t i = 0; i < n; ++i) xs_[i] = word_repr(s[i], i, dropped_ && (*dropped_)[i]);
    scores_of_inputs(scores);
  }

  /// The tag scores from the word vectors in xs_ (the BiLSTM and the MLP).
  void scores_of_inputs(std::vector<Expression>& scores) {
    const size_t n = xs_.size();
    fh_.resize(n);
    bh_.resize(n);
    fwd.start_new_sequence();
    for (size_t i = 0; i < n; ++i) fh_[i] = fwd.add_input(xs_[i]);
    bwd.start_new_sequence();
    for (size_t i = n; i-- > 0;) bh_[i] = bwd.add_input(xs_[i]);
    scores.resize(n);
    for (size_t i = 0; i < n; ++i) {
      Expression h = tanh(affine_transform({b, W, concatenate({fh_[i], bh_[i]})}));
      scores[i] = affine_transform({c, V, h});
    }
  }

  /// Sum over tokens of pickneglogsoftmax(scores, gold tag).
  Expression sentence_loss(const Sentence& s) {
    tag_scores(s, scores_);
    losses_.resize(s.size());
    for (size_t i = 0; i < s.size(); ++i)
      losses_[i] = program_ ? pickneglogsoftmax(scores_[i], program_->index(slot('t', i)))
                            : pickneglogsoftmax(scores_[i], s[i].tag);
    return sum(losses_);
  }

  /// The summed loss of a padded minibatch, the static-graph way (T6): every
  /// sentence padded to the longest (T tokens), position t of all B sentences
  /// one batched lookup and one batched LSTM step, a 0/1 mask per position that
  /// keeps the backward LSTM at its zero state over a sentence's padding and
  /// zeroes the loss there.  With `p`, the words, tags and masks come from its
  /// slots (set by bind_padded()), so that one program serves every minibatch
  /// of B sentences padded to T.
  Expression padded_loss(size_t T, unsigned B, Program* p) {
    xs_.resize(T);
    fh_.resize(T);
    bh_.resize(T);
    masks_.resize(T);
    for (size_t t = 0; t < T; ++t) {
      const std::string n = std::to_string(t);
      xs_[t] = p ? lookup(*cg_, p_word, p->indices("w" + n, B))
                 : lookup(*cg_, p_word, std::vector<unsigned>(pad_words_.begin() + t * B, pad_words_.begin() + (t + 1) * B));
      masks_[t] = p ? p->input("m" + n, Dim({1}, B))
                    : input(*cg_, Dim({1}, B), std::vector<float>(pad_mask_.begin() + t * B, pad_mask_.begin() + (t + 1) * B));
    }
    fwd.start_new_sequence();
    for (size_t t = 0; t < T; ++t) fh_[t] = fwd.add_input(xs_[t]);
    bwd.start_new_sequence();
    for (size_t t = T; t-- > 0;) {
      bwd.add_input(xs_[t]);
      const std::vector<Expression> s = bwd.final_s();  // {c, h}
      bh_[t] = bwd.set_s(bwd.state(), {cmult(s[0], masks_[t]), cmult(s[1], masks_[t])});
    }
    losses_.resize(T);
    for (size_t t = 0; t < T; ++t) {
      Expression h = tanh(affine_transform({b, W, concatenate({fh_[t], bh_[t]})}));
      Expression scores = affine_transform({c, V, h});
      Expression loss = p ? pickneglogsoftmax(scores, p->indices("t" + std::to_string(t), B))
                          : pickneglogsoftmax(scores, std::vector<unsigned>(pad_tags_.begin() + t * B,
                                                                            pad_tags_.begin() + (t + 1) * B));
      losses_[t] = cmult(loss, masks_[t]);
    }
    return sum_batches(sum(losses_));
  }

  /// Lays out a padded minibatch (word dropout in `dropped`) for padded_loss();
  /// returns its length T (the longest sentence).
  size_t pad_batch(const std::vector<const Sentence*>& batch, const std::vector<std::vector<unsigned char>>& dropped) {
    size_t T = 0;
    for (const Sentence* s : batch) T = std::max(T, s->size());
    pad_words_.clear();
    pad_tags_.clear();
    pad_mask_.clear();
    for (size_t t = 0; t < T; ++t)
      for (size_t k = 0; k < batch.size(); ++k) {
        const Sentence& s = *batch[k];
        const bool real = t < s.size();
        pad_words_.push_back(real && !dropped[k][t] ? s[t].word : 0u);  // padding reads <unk>
        pad_tags_.push_back(real ? s[t].tag : 0u);
        pad_mask_.push_back(real ? 1.f : 0.f);
      }
    return T;
  }

  /// Sets the slots of a padded_loss() program to the minibatch laid out last.
  void bind_padded(Program& p, size_t T, unsigned B) {
    for (size_t t = 0; t < T; ++t) {
      const std::string n = std::to_string(t);
      p.set("w" + n, std::vector<unsigned>(pad_words_.begin() + t * B, pad_words_.begin() + (t + 1) * B));
      p.set("t" + n, std::vector<unsigned>(pad_tags_.begin() + t * B, pad_tags_.begin() + (t + 1) * B));
      p.set("m" + n, std::vector<float>(pad_mask_.begin() + t * B, pad_mask_.begin() + (t + 1) * B));
    }
  }

  /// The tag scores of `s` as one expression {tags, n}.
  Expression all_scores(const Sentence& s) {
    tag_scores(s, scores_);
    return concatenate_cols(scores_);  // one forward for the sentence
  }

#ifdef DYNET_LITE_ONNX
  /// Writes the network as ONNX, traced on `sample` (two tokens or more): input
  /// "words" int64 [seq, batch] (word ids, 0 for <unk>), output "scores" float
  /// [seq, batch, tags].  One file serves every sentence length and batch size.
  void export_onnx(const Sentence& sample, const std::string& path) {
    if (use_char) return export_onnx_char(sample, path);
    ComputationGraph cg;
    new_graph(cg, false);
    std::vector<Expression> scores;
    tag_scores(sample, scores);
    OnnxExporter ex(cg);
    ex.add_sequence_input(xs_, "words");
    ex.add_recurrence(fwd);
    ex.add_recurrence(bwd);
    ex.add_sequence_output(scores, "scores");
    ex.save(path);
  }

  /// With --char a token's vector comes from its word's row or, for a word
  /// spelled out, from the character BiLSTM, a choice the data makes; the
  /// network leaves as three models, `path` and the two stem-words.onnx and
  /// stem-chars.onnx (`path` without .onnx):
  ///   path:  "reprs" float [seq, batch, 128] (the tokens' vectors) -> "scores"
  ///   words: "words" int64 [seq, batch] -> "reprs" [seq, batch, 128]
  ///   chars: "chars" int64 [chars, batch] (one word) -> "repr" [batch, 128]
  void export_onnx_char(const Sentence& sample, const std::string& path) {
    const std::string stem = path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0
                                 ? path.substr(0, path.size() - 5)
                                 : path;
    {
      ComputationGraph cg;
      new_graph(cg, false);
      xs_.clear();
      for (size_t i = 0; i < sample.size(); ++i) xs_.push_back(input(cg, {WORD_DIM}, std::vector<float>(WORD_DIM)));
      std::vector<Expression> scores;
      scores_of_inputs(scores);
      OnnxExporter ex(cg);
      ex.add_sequence_input(xs_, "reprs");
      ex.add_recurrence(fwd);
      ex.add_recurrence(bwd);
      ex.add_sequence_output(scores, "scores");
      ex.save(path);
    }
    {
      ComputationGraph cg;
      std::vector<Expression> rows;
      for (const Token& t : sample) rows.push_back(const_lookup(cg, p_word, t.word));
      OnnxExporter ex(cg);
      ex.add_sequence_input(rows, "words");
      ex.add_sequence_output(rows, "reprs");
      ex.save(stem + "-words.onnx");
    }
    ComputationGraph cg;
    new_graph(cg, false);
    std::vector<Expression> chars;
    for (unsigned k = 0; k < 3; ++k) chars.push_back(const_lookup(cg, p_char, k));
    cfwd.start_new_sequence();
    for (const Expression& c : chars) cfwd.add_input(c);
    cbwd.start_new_sequence();
    for (size_t k = chars.size(); k-- > 0;) cbwd.add_input(chars[k]);
    OnnxExporter ex(cg);
    ex.add_sequence_input(chars, "chars");
    ex.add_recurrence(cfwd);
    ex.add_recurrence(cbwd);
    ex.add_output(concatenate({cfwd.back(), cbwd.back()}), "repr");
    ex.save(stem + "-chars.onnx");
  }
#endif

  /// Best tag of every token.
  std::vector<unsigned> predict(const Sentence& s) { return best_tags(as_vector(cg_->forward(all_scores(s))), s.size()); }

  /// The best tag of each of the n columns of scores `v`.
  std::vector<unsigned> best_tags(const std::vector<float>& v, size_t n) const {
    std::vector<unsigned> out(n);
    for (size_t i = 0; i < n; ++i) {
      const float* col = v.data() + i * num_tags;
      out[i] = static_cast<unsigned>(std::max_element(col, col + num_tags) - col);
    }
    return out;
  }

  /// Multiply-adds of the matrix products of one forward pass over `s` (the LSTM
  /// skips W_h at the first step, whose previous state is zero).
  double forward_macs(const Sentence& s) const {
    const double n = static_cast<double>(s.size());
    double macs = 2 * (4.0 * LSTM_DIM * WORD_DIM * n + 4.0 * LSTM_DIM * LSTM_DIM * (n - 1));
    macs += n * (double(HIDDEN_DIM) * 2 * LSTM_DIM + double(num_tags) * HIDDEN_DIM);
    for (const auto& t : s)
      if (t.by_chars) {
        const double L = static_cast<double>(t.chars.size());
        macs += 2 * (4.0 * CHAR_LSTM_DIM * CHAR_DIM * L + 4.0 * CHAR_LSTM_DIM * CHAR_LSTM_DIM * (L - 1));
      }
    return macs;
  }

  // ---- compiled programs (--compile): one per sentence structure

  /// While set, the graphs built read every word, character and tag from named
  /// slots of `p` instead of holding them (new_graph(p->graph(), ...) first).
  /// `prefix` tells the sentences of one program apart.
  void use_program(Program* p, const std::string& prefix = "") {
    program_ = p;
    prefix_ = prefix;
  }

  /// What fixes the graph of `s`: its length and, with --char, which tokens are
  /// spelled out and how many characters they have.
  uint64_t structure_key(const Sentence& s, const std::vector<unsigned char>* dropped) const {
    std::vector<unsigned> shape{static_cast<unsigned>(s.size())};
    if (use_char)
      for (size_t i = 0; i < s.size(); ++i)
        shape.push_back(spelled(s[i], dropped && (*dropped)[i]) ? static_cast<unsigned>(s[i].chars.size()) + 1 : 0);
    return ProgramCache::key_of(shape);
  }

  /// Sets the slots of a program built for `s` (training: with its tags).
  /// The slots are found by name at the first bind of a program and sentence
  /// and set through their handles after that.
  void bind(Program& p, const Sentence& s, const std::vector<unsigned char>* dropped, bool with_tags,
            const std::string& prefix = "") {
    prefix_ = prefix;
    Binding& b = bindings_[{&p, prefix}];
    // A graph's id is never reused: a later program at the same address is told apart.
    const bool find = b.refs.empty() || b.graph_id != p.graph().get_id() || b.with_tags != with_tags;
    if (find) {
      b.refs.clear();
      b.graph_id = p.graph().get_id();
      b.with_tags = with_tags;
    }
    size_t r = 0;
    const auto set = [&](const auto& name, unsigned value) {
      if (find) b.refs.push_back(p.slot(name()));
      p.set(b.refs.at(r++), value);
    };
    for (size_t i = 0; i < s.size(); ++i) {
      const bool drop = dropped && (*dropped)[i];
      if (spelled(s[i], drop)) {
        for (size_t k = 0; k < s[i].chars.size(); ++k) {
          set([&] { return char_slot('c', i, k); }, s[i].chars[k]);
          set([&] { return char_slot('d', i, k); }, s[i].chars[k]);
        }
      } else {
        set([&] { return slot('w', i); }, drop ? 0u : s[i].word);
      }
      if (with_tags) set([&] { return slot('t', i); }, s[i].tag);
    }
  }

 private:
  // The slots bind() sets for a program and sentence prefix, in its order.
  struct Binding {
    unsigned graph_id = 0;
    bool with_tags = false;
    std::vector<Program::SlotRef> refs;
  };
  std::map<std::pair<const Program*, std::string>, Binding> bindings_;

  std::string slot(char kind, size_t i) const { return prefix_ + kind + std::to_string(i); }
  // Character k of token i, for the forward ('c') and the backward ('d') character LSTM.
  std::string char_slot(char direction, size_t i, size_t k) const {
    return prefix_ + direction + std::to_string(i) + "_" + std::to_string(k);
  }
  bool spelled(const Token& t, bool dropped) const { return t.by_chars || (dropped && use_char); }

  /// Looks up row `index` of p, or, in a compiled program, the slot that
  /// `name()` names (made only then: a rebuilt graph builds no names).
  template <class Name>
  Expression word_lookup(LookupParameter p, unsigned index, Name&& name) {
    if (program_) {
      const unsigned* slot_index = program_->index(name());
      return training_ ? lookup(*cg_, p, slot_index) : const_lookup(*cg_, p, slot_index);
    }
    return training_ ? lookup(*cg_, p, index) : const_lookup(*cg_, p, index);
  }

  Expression word_repr(const Token& t, size_t i, bool dropped) {
    if (!spelled(t, dropped)) return word_lookup(p_word, dropped ? 0u : t.word, [&] { return slot('w', i); });  // <unk> is word 0
    cfwd.start_new_sequence();
    for (size_t k = 0; k < t.chars.size(); ++k) cfwd.add_input(word_lookup(p_char, t.chars[k], [&] { return char_slot('c', i, k); }));
    cbwd.start_new_sequence();
    for (size_t k = t.chars.size(); k-- > 0;) cbwd.add_input(word_lookup(p_char, t.chars[k], [&] { return char_slot('d', i, k); }));
    return concatenate({cfwd.back(), cbwd.back()});
  }

  bool use_char;
  LookupParameter p_word, p_char;
  VanillaLSTMBuilder fwd, bwd, cfwd, cbwd;
  Parameter p_W, p_b, p_V, p_c;
  unsigned num_tags;
  // per graph
  ComputationGraph* cg_ = nullptr;
  bool training_ = true;
  float lstm_dropout_ = 0.f, char_dropout_ = 0.f;
  int autobatch_ = -1;
  const std::vector<unsigned char>* dropped_ = nullptr;
  Program* program_ = nullptr;
  std::string prefix_;
  Expression W, b, V, c;
  std::vector<Expression> xs_, fh_, bh_, scores_, losses_, masks_;
  std::vector<unsigned> pad_words_, pad_tags_;  // padded minibatch, position-major
  std::vector<float> pad_mask_;
};

/// Compiled programs kept at once (--compile): every sentence length of the
/// corpora, and then some.
constexpr size_t kPrograms = 256;

/// The best tags of `s`, from a program of `programs` built for its structure.
std::vector<unsigned> predict_compiled(Tagger& tagger, ProgramCache& programs, const Sentence& s) {
  Program& p = programs.get(tagger.structure_key(s, nullptr), [&](Program& p) {
    tagger.new_graph(p.graph(), false);
    tagger.use_program(&p);
    p.set_output(tagger.all_scores(s));
    tagger.use_program(nullptr);
  });
  tagger.bind(p, s, nullptr, false);
  return tagger.best_tags(as_vector(p.forward()), s.size());
}

/// Token accuracy of the tagger on `data` (`programs`: compiled, one per structure).
double accuracy(Tagger& tagger, const std::vector<Sentence>& data, ProgramCache* programs = nullptr) {
  size_t correct = 0, total = 0;
  for (const auto& s : data) {
    std::vector<unsigned> pred;
    if (programs) {
      pred = predict_compiled(tagger, *programs, s);
    } else {
      ComputationGraph cg;
      tagger.new_graph(cg, false);
      pred = tagger.predict(s);
    }
    for (size_t i = 0; i < s.size(); ++i) correct += pred[i] == s[i].tag;
    total += s.size();
  }
  return total ? double(correct) / total : 0.0;
}

// Training defaults.  T1's are the ones its README figure was measured with.
// T2's (--char) bring the character model from 93.6% to 94.5% test UPOS
// (94.45-94.65% over three runs): with plain SGD at a constant rate it fits the
// train set within a few epochs (train loss near 0, dev flat at 93.6%).  What
// helps most is spelling out many more known words by their characters during
// training (word dropout 2 instead of 0.25: a word seen 5 times is spelled out
// 29% of the time instead of 5%), so the char BiLSTM learns to tag frequent words
// too; then dropout on the word BiLSTM, a decaying rate and 30 epochs.  Adding
// char BiLSTM dropout (0.2, with word LSTM dropout 0.3 and decay 0.1) did worse
// (94.3%).
struct TrainDefaults {
  unsigned epochs;
  float lr_decay, word_dropout, lstm_dropout, char_dropout;
};
constexpr TrainDefaults T1_DEFAULTS{10, 0.f, 0.25f, 0.f, 0.f};
constexpr TrainDefaults T2_DEFAULTS{30, 0.05f, 2.f, 0.25f, 0.f};

struct Options : examples::CorpusOptions {
  std::string model_path, load, predict, bench, bench_static, export_path, reference_path;
  bool use_char = false, compile = false, compile_structure = false;
  unsigned max_train = 0, batch = 1;
  // Set by finish_options unless given: the defaults depend on --char (TrainDefaults).
  unsigned epochs = 0;
  unsigned static_epochs = 5;  // --bench-static: T6's 5, or --epochs when given
  float lr_decay = 0, word_dropout = 0, lstm_dropout = 0, char_dropout = 0;
  float clip = 5;  ///< gradient clipping threshold on the global norm (DyNet's default); 0: off
};

const examples::CorpusLayout UD_EWT{"ud-english-ewt", "en_ewt-ud-train.conllu", "en_ewt-ud-dev.conllu",
                                    "en_ewt-ud-test.conllu"};

/// "(default A / B)": a training default of T1 and of T2 (--char).
template <class T>
std::string defaults(T t1, T t2) {
  std::ostringstream s;
  s << "(default " << t1 << " / " << t2 << ")";
  return s.str();
}

void add_options(CLI::App& app, Options& o) {
  using examples::add_count;
  using examples::add_number;
  const char* const training = "training (the default mode; defaults T1 / T2 (--char), none apply to --bench)";
  o.add_corpus_options(app, UD_EWT, "CoNLL-U file");
  app.add_flag("--char", o.use_char, "words seen < 5 times in train go through a character BiLSTM (T2)");
  CLI::Option* compile = app.add_flag("--compile", o.compile,
               "run each sentence structure (length; with --char, the spelled words'\nlengths) as a compiled "
               "program, built once and replayed\n(training, evaluation, --predict, --bench); a training "
               "minibatch's\nstructure is compiled when it comes a second time");
  app.add_flag("--compile-structure", o.compile_structure,
               "build every graph as usual and run it through the compiled program of\nits structure, made at "
               "its second sight (training, --bench)")
      ->excludes(compile);
  add_count(app, "--epochs", o.epochs,
            "passes over the training data " + defaults(T1_DEFAULTS.epochs, T2_DEFAULTS.epochs))
      ->group(training);
  add_count(app, "--max-train-sentences", o.max_train, "use only the first N training sentences (quick runs)")
      ->group(training);
  add_count(app, "--batch", o.batch, "sentences per update (default 1)", examples::at_least(1))->group(training);
  add_number(app, "--lr-decay", o.lr_decay,
             "plain SGD from rate 0.1, after epoch e the rate is 0.1 / (1 + D e)\n(DyNet's eta_decay) " +
                 defaults(T1_DEFAULTS.lr_decay, T2_DEFAULTS.lr_decay),
             examples::at_least(0))
      ->type_name("D")
      ->group(training);
  add_number(app, "--clip", o.clip, "rescale the gradient to global norm T when larger (0: off; default 5)",
             examples::at_least(0))
      ->type_name("T")
      ->group(training);
  add_number(app, "--word-dropout", o.word_dropout,
             "during training a word seen c times is replaced by <unk> (with\n--char: spelled out) with "
             "probability A / (A + c); 0 turns it\noff " +
                 defaults(T1_DEFAULTS.word_dropout, T2_DEFAULTS.word_dropout),
             examples::at_least(0))
      ->type_name("A")
      ->group(training);
  add_number(app, "--lstm-dropout", o.lstm_dropout,
             "variational dropout on the word BiLSTM's inputs and recurrent\nstates " +
                 defaults(T1_DEFAULTS.lstm_dropout, T2_DEFAULTS.lstm_dropout),
             examples::Bounds{0, 1, false, true})
      ->type_name("D")
      ->group(training);
  add_number(
      app, "--char-dropout", o.char_dropout,
      "the same on the character BiLSTMs (--char) " + defaults(T1_DEFAULTS.char_dropout, T2_DEFAULTS.char_dropout),
      examples::Bounds{0, 1, false, true})
      ->type_name("D")
      ->group(training);
  examples::add_saved_model_options(
      app, training, o.model_path,
      "where the best model (by dev accuracy) goes; its vocabulary\ngoes to FILE.vocab (default "
      "tagger.model / tagger-char.model)",
      o.load, "accuracy of the saved model on --test; with --predict, tag IN", "--predict", o.predict,
      "tag IN (one sentence a line, tokens separated by spaces),\nprinting word/TAG; '-' reads standard "
      "input");
  examples::add_choice(app, "--bench", o.bench, examples::minibatch_modes(),
                       "2,000 train sentences after 100 warm-up sentences; prints one line\n(mode b1, b64, b64-auto "
                       "or b64-depth)")
      ->group("benchmark (BENCHMARKS.md T1, or T2 with --char)");
  examples::add_export_options(app, o.export_path, o.reference_path,
                               "; with --char the\nword rows and the character BiLSTM go to STEM-words.onnx and\n"
                               "STEM-chars.onnx (STEM: FILE without .onnx)");
  examples::add_choice(app, "--bench-static", o.bench_static, {"instances", "padded", "bucketed"},
                       "T6: 5 epochs (or --epochs N) of T1 in minibatches of 64, as per-instance graphs\nwith automatic batching, "
                       "padded minibatches in file order or\nlength buckets (with --compile: compiled); prints "
                       "sentences/s, the\nshare of padding, dev and test accuracy")
      ->group("benchmark (BENCHMARKS.md T6)");
}

void finish_options(const CLI::App& app, Options& o) {
  const TrainDefaults& def = o.use_char ? T2_DEFAULTS : T1_DEFAULTS;
  if (app.count("--epochs")) o.static_epochs = o.epochs;
  if (!app.count("--epochs")) o.epochs = def.epochs;
  if (!app.count("--lr-decay")) o.lr_decay = def.lr_decay;
  if (!app.count("--word-dropout")) o.word_dropout = def.word_dropout;
  if (!app.count("--lstm-dropout")) o.lstm_dropout = def.lstm_dropout;
  if (!app.count("--char-dropout")) o.char_dropout = def.char_dropout;
  o.resolve_corpus(UD_EWT);
  if (o.model_path.empty()) o.model_path = o.use_char ? "tagger-char.model" : "tagger.model";
  DYNET_LITE_ARG_CHECK(o.predict.empty() || !o.load.empty(), "--predict needs --load MODEL");
  DYNET_LITE_ARG_CHECK(o.reference_path.empty() || !o.export_path.empty(), "--export-reference needs --export FILE");
  examples::check_export_available(o.export_path);
}

size_t count_words(const std::vector<Sentence>& data) {
  size_t n = 0;
  for (const auto& s : data) n += s.size();
  return n;
}

// ---------------------------------------------------------------- modes

/// One training step on the sentences order[start, end) through the compiled
/// program of their structures.  A single sentence's program is made at the
/// first sight of its structure (lengths come again and again); a minibatch's
/// when its structures come a second time (programs.get_if_seen), its first
/// sight running as an ordinary graph, as a minibatch of shuffled sentences,
/// which rarely comes again, always does.  Returns the loss.
float train_compiled(Tagger& tagger, ProgramCache& programs, const std::vector<Sentence>& data,
                     const std::vector<size_t>& order, size_t start, size_t end,
                     const std::vector<std::vector<unsigned char>>& dropped, Trainer& trainer) {
  std::vector<unsigned> key;
  for (size_t k = start; k < end; ++k) {
    const uint64_t h = tagger.structure_key(data[order[k]], &dropped[k - start]);
    key.push_back(static_cast<unsigned>(h));
    key.push_back(static_cast<unsigned>(h >> 32));
  }
  const auto prefix = [&](size_t k) { return end - start == 1 ? std::string() : std::to_string(k - start) + "/"; };
  // The minibatch's loss on `cg`, its inputs the slots of `p` where given.
  const auto minibatch_loss = [&](ComputationGraph& cg, Program* p) {
    tagger.new_graph(cg, true);
    std::vector<Expression> losses;
    for (size_t k = start; k < end; ++k) {
      if (p) tagger.use_program(p, prefix(k));
      tagger.set_dropped(&dropped[k - start]);
      losses.push_back(tagger.sentence_loss(data[order[k]]));
    }
    tagger.set_dropped(nullptr);
    if (p) tagger.use_program(nullptr);
    return examples::batch_loss(losses);
  };
  Program* compiled = programs.get_if_seen(ProgramCache::key_of(key), end - start == 1 ? 0 : 1,
                                           [&](Program& p) { p.set_output(minibatch_loss(p.graph(), &p)); });
  if (!compiled) {
    ComputationGraph cg;
    return examples::train_step(cg, minibatch_loss(cg, nullptr), trainer);
  }
  Program& p = *compiled;
  for (size_t k = start; k < end; ++k) tagger.bind(p, data[order[k]], &dropped[k - start], true, prefix(k));
  const float loss = as_scalar(p.forward());
  p.backward();
  trainer.update();
  return loss;
}

int run_predict(const Options& o) {
  examples::SavedModel<Vocabulary, Tagger> saved(o.load);
  ProgramCache programs(kPrograms);
  size_t lineno = 0;
  examples::for_each_input_line(o.predict, [&](const std::string& line) {
    const std::vector<std::string> forms = examples::split_words(line);
    examples::check_input_length(forms.size(), o.predict, ++lineno);
    if (forms.empty()) {
      std::cout << "\n";
      return;
    }
    Sentence s;
    for (const auto& f : forms) s.push_back(saved.vocab.token(f));
    std::vector<unsigned> tags;
    if (o.compile) {
      tags = predict_compiled(saved.model, programs, s);
    } else {
      ComputationGraph cg;
      saved.model.new_graph(cg, false);
      tags = saved.model.predict(s);
    }
    for (size_t i = 0; i < forms.size(); ++i)
      std::cout << (i ? " " : "") << forms[i] << "/" << saved.vocab.tags.convert(static_cast<int>(tags[i]));
    std::cout << "\n";
  });
  return 0;
}

#ifdef DYNET_LITE_ONNX
/// --export (and --export-reference): the saved model `path` as ONNX, traced on
/// the first test sentence of two tokens or more; the reference holds every
/// test sentence's word ids and dynet_lite's tag scores (compared by argmax).
int run_export(const Options& o, const std::string& path) {
  examples::SavedModel<Vocabulary, Tagger> saved(path);
  std::vector<Sentence> test = saved.vocab.read(o.test);
  auto sample = std::find_if(test.begin(), test.end(), [](const Sentence& s) { return s.size() >= 2; });
  DYNET_LITE_CHECK(sample != test.end(), std::runtime_error, "--export: no test sentence of two tokens in " << o.test);
  saved.model.export_onnx(*sample, o.export_path);
  std::cout << "exported the tagger to " << o.export_path << "\n";
  if (o.reference_path.empty()) return 0;
  examples::ReferenceWriter ref;
  for (const Sentence& s : test) {
    ComputationGraph cg;
    saved.model.new_graph(cg, false);
    std::vector<long> ids;
    for (const Token& t : s) ids.push_back(t.word);
    const long n = static_cast<long>(s.size()), tags = static_cast<long>(saved.vocab.tags.size());
    ref.begin_run();
    ref.ids("words", {n, 1}, ids);
    if (saved.vocab.use_char) {  // which tokens are spelled out, and their characters
      std::vector<long> spelled, chars;
      for (const Token& t : s) {
        spelled.push_back(t.by_chars);
        chars.push_back(static_cast<long>(t.chars.size()));
        chars.insert(chars.end(), t.chars.begin(), t.chars.end());
      }
      ref.ids("spelled", {n}, spelled);
      ref.ids("chars", {static_cast<long>(chars.size())}, chars);  // per token: its length, then its characters
    }
    ref.output("scores", {n, 1, tags}, as_vector(cg.forward(saved.model.all_scores(s))), "argmax");
  }
  ref.save(o.reference_path);
  std::cout << "wrote " << ref.runs() << " test sentences to " << o.reference_path << "\n";
  return 0;
}
#else
int run_export(const Options&, const std::string&) { return 1; }  // refused by finish_options
#endif

int run_evaluate(const Options& o) {
  examples::SavedModel<Vocabulary, Tagger> saved(o.load);
  std::vector<Sentence> test = saved.vocab.read(o.test);
  examples::Timer t;
  ProgramCache programs(kPrograms);
  const double acc = accuracy(saved.model, test, o.compile ? &programs : nullptr);
  std::cout << "test accuracy " << std::fixed << std::setprecision(2) << 100 * acc << "% (" << count_words(test)
            << " tokens of " << o.test << ", " << std::setprecision(1) << t.seconds() << " s)\n";
  return 0;
}

int run_train(const Options& o) {
  examples::Timer total_time;
  Vocabulary vocab = Vocabulary::build(o.train, o.max_train, o.use_char);
  std::vector<Sentence> train = vocab.read(o.train, o.max_train);
  DYNET_LITE_CHECK(!train.empty(), std::runtime_error, "no sentences in '" << o.train << "'");
  std::vector<Sentence> dev = vocab.read(o.dev);
  std::cerr << "train " << train.size() << " sentences (" << count_words(train) << " tokens), dev " << dev.size()
            << "; vocabulary " << vocab.words.size() << " words, " << vocab.tags.size() << " tags";
  if (o.use_char) std::cerr << ", " << vocab.chars.size() << " characters";
  std::cerr << "\n";

  ParameterCollection pc;
  Tagger tagger(pc, vocab);
  SimpleSGDTrainer trainer(pc, LEARNING_RATE);
  trainer.learning_rate_decay = o.lr_decay;
  trainer.clipping_enabled = o.clip > 0;
  if (o.clip > 0) trainer.clip_threshold = o.clip;
  tagger.set_lstm_dropout(o.lstm_dropout, o.char_dropout);
  std::cerr << "model: " << pc.parameter_count() << " parameters" << (o.use_char ? " (T2, char model)" : " (T1)")
            << "\n";
  std::cout << "training: " << o.epochs << " epochs, batch " << o.batch << ", SGD rate " << LEARNING_RATE
            << " decay " << o.lr_decay << ", clip " << o.clip << ", word dropout " << o.word_dropout
            << ", LSTM dropout " << o.lstm_dropout;
  if (o.use_char) std::cout << ", char LSTM dropout " << o.char_dropout;
  std::cout << std::endl;

  std::vector<size_t> order(train.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 shuffle_rng(current_params().random_seed);
  double best_dev = -1, train_seconds = 0;
  unsigned best_epoch = 0;
  std::vector<Expression> batch_losses;
  std::vector<std::vector<unsigned char>> dropped(o.batch);
  ProgramCache programs(kPrograms);
  std::uniform_real_distribution<float> coin(0.f, 1.f);
  for (unsigned epoch = 1; epoch <= static_cast<unsigned>(o.epochs); ++epoch) {
    std::shuffle(order.begin(), order.end(), shuffle_rng);
    examples::ProgressBar bar("epoch " + std::to_string(epoch), train.size(), "sent");
    double loss_sum = 0;
    size_t words = 0;
    for (size_t start = 0; start < order.size(); start += o.batch) {
      const size_t end = std::min(order.size(), start + o.batch);
      for (size_t k = start; k < end; ++k) {
        const Sentence& s = train[order[k]];
        std::vector<unsigned char>& drop = dropped[k - start];
        drop.assign(s.size(), 0);
        if (o.word_dropout > 0)
          for (size_t i = 0; i < s.size(); ++i)
            drop[i] =
                !s[i].by_chars && s[i].word != 0 &&
                coin(shuffle_rng) < o.word_dropout / (o.word_dropout + static_cast<float>(vocab.count(s[i].word)));
        words += s.size();
      }
      if (o.compile) {
        loss_sum += train_compiled(tagger, programs, train, order, start, end, dropped, trainer);
      } else {
        ComputationGraph cg;
        tagger.new_graph(cg, true);
        batch_losses.clear();
        for (size_t k = start; k < end; ++k) {
          tagger.set_dropped(&dropped[k - start]);
          batch_losses.push_back(tagger.sentence_loss(train[order[k]]));
        }
        tagger.set_dropped(nullptr);
        const Expression loss = examples::batch_loss(batch_losses);
        loss_sum += o.compile_structure ? examples::train_step(programs, loss, trainer)
                                        : examples::train_step(cg, loss, trainer);
      }
      bar.update(end, loss_sum / words, "word");
    }
    bar.finish();
    const float epoch_rate = trainer.learning_rate;
    trainer.update_epoch();  // the decayed rate for the next epoch
    const double epoch_seconds = bar.seconds();
    train_seconds += epoch_seconds;
    examples::Timer eval_time;
    const double dev_acc = accuracy(tagger, dev, o.compile ? &programs : nullptr);
    std::cout << "epoch " << epoch << ": rate " << std::fixed << std::setprecision(4) << epoch_rate << ", train loss/word "
              << std::fixed << loss_sum / words << ", " << std::setprecision(1) << train.size() / epoch_seconds << " sent/s, "
              << words / epoch_seconds << " words/s, " << epoch_seconds << " s; dev accuracy " << std::setprecision(2)
              << 100 * dev_acc << "% (" << std::setprecision(1) << eval_time.seconds() << " s)";
    if (dev_acc > best_dev) {
      best_dev = dev_acc;
      best_epoch = epoch;
      examples::save_model_noted(pc, vocab, o.model_path);
    }
    std::cout << std::endl;
  }
  if (best_dev < 0) return 0;  // --epochs 0
  if (!o.export_path.empty()) run_export(o, o.model_path);

  // The test figure comes from the best model as saved, read back from disk.
  examples::SavedModel<Vocabulary, Tagger> best(o.model_path);
  std::vector<Sentence> test = best.vocab.read(o.test);
  ProgramCache test_programs(kPrograms);
  const double test_acc = accuracy(best.model, test, o.compile ? &test_programs : nullptr);
  std::cout << "best dev accuracy " << std::fixed << std::setprecision(2) << 100 * best_dev << "% (epoch " << best_epoch
            << "), test accuracy "
            << 100 * test_acc << "% (" << count_words(test) << " tokens); training " << std::setprecision(1)
            << train_seconds << " s, total " << total_time.seconds() << " s\n";
  return 0;
}

int run_bench(const Options& o) {
  const size_t WARMUP = 100, TIMED = 2000;
  const examples::MinibatchMode mode = examples::minibatch_mode(o.bench);
  examples::BenchRecorder recorder(mode.autobatch != 0 && !o.compile && !o.compile_structure);
  // The vocabulary counts the whole training file; only the sentences the
  // benchmark trains on are read and kept.
  Vocabulary vocab = Vocabulary::build(o.train, 0, o.use_char);
  std::vector<Sentence> train = vocab.read(o.train, WARMUP + TIMED);
  DYNET_LITE_CHECK(train.size() >= WARMUP + TIMED, std::runtime_error,
                   "--bench needs " << WARMUP + TIMED << " training sentences, '" << o.train << "' has "
                                            << train.size());

  ParameterCollection pc;
  Tagger tagger(pc, vocab);  // the builders are built once; per step only the graph
  SimpleSGDTrainer trainer(pc, LEARNING_RATE);
  ProgramCache programs(kPrograms);
  if (o.compile) {
    // The minibatches in file order, each through the program of its structures,
    // batched as the mode says.
    tagger.set_autobatch(mode.autobatch);
    std::vector<size_t> order(WARMUP + TIMED);
    std::iota(order.begin(), order.end(), 0);
    std::vector<std::vector<unsigned char>> none(mode.batch);
    auto run = [&](size_t begin, size_t end, bool timed) {
      for (size_t start = begin; start < end; start += mode.batch) {
        const size_t stop = std::min(end, start + mode.batch);
        for (size_t k = start; k < stop; ++k) none[k - start].assign(train[k].size(), 0);
        const float loss = train_compiled(tagger, programs, train, order, start, stop, none, trainer);
        recorder.record(loss, timed);
      }
    };
    run(0, WARMUP, false);
    recorder.start();
    run(WARMUP, WARMUP + TIMED, true);
    recorder.stop();
  } else {
    examples::bench_minibatches(
        recorder, mode, WARMUP, TIMED, trainer, [&](ComputationGraph& cg) { tagger.new_graph(cg, true); },
        [&](size_t k) { return tagger.sentence_loss(train[k]); }, o.compile_structure ? &programs : nullptr);
  }
  size_t words = 0;
  double macs = 0;
  for (size_t k = WARMUP; k < WARMUP + TIMED; ++k) {
    words += train[k].size();
    macs += tagger.forward_macs(train[k]);
  }
  std::ostringstream head;
  head << (o.use_char ? "T2 tagger-char" : "T1 tagger") << " mode=" << o.bench << " sentences=" << TIMED
       << " words=" << words;
  if (o.compile || o.compile_structure)
    head << " compiled{programs=" << programs.size() << " hits=" << programs.hits() << " misses=" << programs.misses()
         << (o.compile_structure ? " uncompiled=" + std::to_string(programs.uncompiled()) : std::string()) << "}";
  // the model's count: forward one product per matrix product, backward two (d input, d weights)
  recorder.print(head.str(), {{"sent/s", TIMED}, {"words/s", words}}, "loss/word", recorder.loss_sum() / words,
                 3 * 2 * macs);
  return 0;
}


/// Minibatches of B sentence indices (T6): consecutive in file order, or
/// (`by_length`) consecutive after a stable sort by length.
std::vector<std::vector<size_t>> minibatches(const std::vector<Sentence>& data, size_t B, bool by_length) {
  std::vector<size_t> order(data.size());
  std::iota(order.begin(), order.end(), 0);
  if (by_length)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return data[a].size() < data[b].size(); });
  std::vector<std::vector<size_t>> out;
  for (size_t i = 0; i < order.size(); i += B)
    out.emplace_back(order.begin() + i, order.begin() + std::min(order.size(), i + B));
  return out;
}

/// BENCHMARKS.md T6: T1 trained for 5 epochs in minibatches of 64 (i) as 64
/// sentence graphs in one graph with automatic batching, (ii) padded in file
/// order, (iii) padded within length buckets; with --compile each minibatch
/// structure runs as a compiled program.  The minibatches are fixed and their
/// order shuffled each epoch with a fixed seed.
int run_static(const Options& o) {
  const size_t B = 64;
  const unsigned EPOCHS = o.static_epochs;
  DYNET_LITE_ARG_CHECK(!o.use_char, "--bench-static runs T1 (no --char)");
  Vocabulary vocab = Vocabulary::build(o.train, o.max_train, false);
  std::vector<Sentence> train = vocab.read(o.train, o.max_train);
  std::vector<Sentence> dev = vocab.read(o.dev);
  std::vector<Sentence> test = vocab.read(o.test);
  const bool padded = o.bench_static != "instances";
  std::vector<std::vector<size_t>> batches = minibatches(train, B, o.bench_static == "bucketed");
  size_t positions = 0, words = count_words(train);
  for (const auto& ids : batches) {
    size_t T = 0;
    for (size_t i : ids) T = std::max(T, train[i].size());
    positions += padded ? T * ids.size() : 0;
  }

  ParameterCollection pc;
  Tagger tagger(pc, vocab);
  tagger.set_autobatch(1);
  SimpleSGDTrainer trainer(pc, LEARNING_RATE);
  trainer.clipping_enabled = o.clip > 0;
  if (o.clip > 0) trainer.clip_threshold = o.clip;
  ProgramCache programs(kPrograms);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> coin(0.f, 1.f);
  std::vector<std::vector<unsigned char>> dropped(B);
  std::vector<const Sentence*> batch;
  std::vector<Expression> losses;
  double seconds = 0, loss_sum = 0;
  for (unsigned epoch = 0; epoch < EPOCHS; ++epoch) {
    std::shuffle(batches.begin(), batches.end(), rng);
    examples::Timer timer;
    for (const auto& ids : batches) {
      batch.clear();
      for (size_t k = 0; k < ids.size(); ++k) {
        const Sentence& s = train[ids[k]];
        batch.push_back(&s);
        dropped[k].assign(s.size(), 0);
        for (size_t i = 0; i < s.size(); ++i)
          dropped[k][i] =
              s[i].word != 0 && coin(rng) < o.word_dropout / (o.word_dropout + static_cast<float>(vocab.count(s[i].word)));
      }
      if (!padded && o.compile) {
        loss_sum += train_compiled(tagger, programs, train, ids, 0, ids.size(), dropped, trainer);
      } else if (!padded) {
        ComputationGraph cg;
        tagger.new_graph(cg, true);
        losses.clear();
        for (size_t k = 0; k < ids.size(); ++k) {
          tagger.set_dropped(&dropped[k]);
          losses.push_back(tagger.sentence_loss(*batch[k]));
        }
        tagger.set_dropped(nullptr);
        loss_sum += examples::train_step(cg, examples::batch_loss(losses), trainer);
      } else {
        const size_t T = tagger.pad_batch(batch, dropped);
        const unsigned n = static_cast<unsigned>(ids.size());
        if (o.compile) {
          Program& p = programs.get(ProgramCache::key_of({static_cast<unsigned>(T), n}), [&](Program& p) {
            tagger.new_graph(p.graph(), true);
            p.set_output(tagger.padded_loss(T, n, &p));
          });
          tagger.bind_padded(p, T, n);
          loss_sum += as_scalar(p.forward());
          p.backward();
          trainer.update();
        } else {
          ComputationGraph cg;
          tagger.new_graph(cg, true);
          loss_sum += examples::train_step(cg, tagger.padded_loss(T, n, nullptr), trainer);
        }
      }
    }
    seconds += timer.seconds();
  }
  tagger.set_autobatch(-1);
  const double dev_acc = accuracy(tagger, dev), test_acc = accuracy(tagger, test);
  std::cout << "T6 tagger-static mode=" << o.bench_static << " compiled=" << (o.compile ? "yes" : "no")
            << " epochs=" << EPOCHS << " minibatch=" << B << " sentences=" << EPOCHS * train.size() << " seconds="
            << std::fixed << std::setprecision(3) << seconds << " sent/s=" << std::setprecision(1)
            << EPOCHS * train.size() / seconds << " padding="
            << std::setprecision(1) << (padded ? 100.0 * (positions - words) / positions : 0.0) << "%"
            << " loss/word=" << std::setprecision(4) << loss_sum / (EPOCHS * words) << " dev=" << std::setprecision(2)
            << 100 * dev_acc << "% test=" << 100 * test_acc << "%";
  if (o.compile)
    std::cout << " compiled{programs=" << programs.size() << " hits=" << programs.hits() << " misses="
              << programs.misses() << " evictions=" << programs.evictions() << "}";
  std::cout << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"BiLSTM part-of-speech tagger (UPOS) on UD English EWT (BENCHMARKS.md tasks T1, T2).", "tagger"};
  examples::init_cli(app);
  add_options(app, o);
  return examples::run_main(
      app, argc, argv, [&] { finish_options(app, o); },
      [&] {
        if (!o.bench.empty()) return run_bench(o);
        if (!o.bench_static.empty()) return run_static(o);
        if (!o.predict.empty()) return run_predict(o);
        if (!o.load.empty() && !o.export_path.empty()) return run_export(o, o.load);
        if (!o.load.empty()) return run_evaluate(o);
        return run_train(o);
      });
}
