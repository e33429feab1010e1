#pragma once
// Small helpers shared by the example programs: a timer, a progress bar on
// stderr, the training step, atomic file writes, the data folder, and saving a
// model with its vocabulary.
#include <chrono>
#include <cstddef>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "dynet_lite/compile.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/io.h"
#include "dynet_lite/model.h"
#include "dynet_lite/training.h"

namespace examples {

/// Wall-clock seconds since construction (or the last reset()).
class Timer {
 public:
  Timer() { reset(); }
  void reset() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

/// Runs forward to `loss`, backward from it and one trainer update; returns the loss.
float train_step(dynet_lite::ComputationGraph& cg, const dynet_lite::Expression& loss, dynet_lite::Trainer& trainer);
/// The same through the compiled program of the loss's graph's structure
/// (ProgramCache::forward(e); a structure seen once runs as it is).
float train_step(dynet_lite::ProgramCache& programs, const dynet_lite::Expression& loss, dynet_lite::Trainer& trainer);

/// The loss of a minibatch: its one loss, or the sum of its losses.
dynet_lite::Expression batch_loss(const std::vector<dynet_lite::Expression>& losses);

bool file_exists(const std::string& path);

/// The folder holding the shared corpora: `../shared/data` next to the project
/// root (the build records the root), else the same path from the current folder.
std::string default_data_dir();

/// Writes `content` to `path` atomically: a temporary file in the same folder
/// ("<path>.tmp.<pid>"), flushed to disk and closed, then renamed over `path`.
/// Temporaries that killed writes to `path` left are removed first.  Throws
/// dynet_lite::io_error.
void write_file_atomically(const std::string& path, const std::string& content);

// ---- a model and its vocabulary, saved as one
//
// FILE holds the parameters (DyNet's text format) and FILE.vocab the
// vocabulary, whose second line names the model file it belongs to by a stamp
// (the file's size and 64-bit FNV-1a hash).  A save (save_model):
//   1. finishes an earlier save interrupted between its steps 3 and 4;
//   2. writes the parameters to FILE.next (a temporary flushed to disk, renamed);
//   3. writes FILE.vocab with the stamp of FILE.next (the same way): this rename
//      is the commit point;
//   4. renames FILE.next over FILE.
// A load (SavedModel) reads FILE.vocab, then whichever of FILE and FILE.next has
// its stamp.  Killed before the rename of step 3, the pair FILE.vocab, FILE is
// the old one (a FILE.next left over matches neither and is replaced by the
// next save); killed after it, FILE.vocab is new and FILE.next holds its model;
// after step 4 both are new.  So a crash at any moment leaves both files old
// or both new.  Temporaries of killed saves are removed by the next save once
// their process is gone.  tests/test_save_kill.cc kills saves at random moments.

/// The stamp of the file at `path`: "<bytes>-<FNV-1a 64 in hex>"; "" when it
/// cannot be read.
std::string model_file_stamp(const std::string& path);

/// Step 1 of a save to `path` (above): when FILE.vocab names FILE.next, renames
/// FILE.next over FILE.
void finish_interrupted_save(const std::string& path);

/// Saves the parameters of `pc` to `path` and the vocabulary `v` (anything with
/// write(), giving a VocabularyWriter) to `path`.vocab, as one (above).
template <class Vocabulary>
void save_model(dynet_lite::ParameterCollection& pc, const Vocabulary& v, const std::string& path) {
  finish_interrupted_save(path);
  const std::string next = path + ".next";
  dynet_lite::TextFileSaver saver(next);  // atomic: a temporary file renamed over `next`
  saver.save(pc);
  v.write().save(path + ".vocab", model_file_stamp(next));  // the commit point
  finish_interrupted_save(path);
}

/// The model file the vocabulary file `path`.vocab belongs to: `path` or
/// `path`.next (above); `path` for a vocabulary file that names none.  An
/// io_error when neither matches.
std::string model_file_to_load(const std::string& path);

/// Reads the parameter values saved at `path` into `pc` (built with the same
/// shapes): from model_file_to_load(path).
void load_model(dynet_lite::ParameterCollection& pc, const std::string& path);

/// save_model, then "  [saved PATH]" on stdout (on the line of the epoch it ends).
template <class Vocabulary>
void save_model_noted(dynet_lite::ParameterCollection& pc, const Vocabulary& v, const std::string& path) {
  save_model(pc, v, path);
  std::cout << "  [saved " << path << "]";
}

/// A model read back from what save_model() wrote at `path`: the vocabulary from
/// `path`.vocab, the model built on it (`Model(pc, vocab)`), then its parameters.
template <class Vocabulary, class Model>
struct SavedModel {
  Vocabulary vocab;
  dynet_lite::ParameterCollection pc;
  Model model;
  explicit SavedModel(const std::string& path) : vocab(Vocabulary::load(path + ".vocab")), model(pc, vocab) {
    load_model(pc, path);
  }
};

/// The input `path` names: standard input for "-", else the file, opened into
/// `file` (a dynet_lite::io_error when it cannot be opened).
std::istream& open_input(const std::string& path, std::ifstream& file);

/// Calls f(line) for every line of the input `path` names ("-": standard input).
template <class F>
void for_each_input_line(const std::string& path, F&& f) {
  std::ifstream file;
  std::istream& in = open_input(path, file);
  for (std::string line; std::getline(in, line);) f(line);
}

/// The words of `line`, split at white space.
std::vector<std::string> split_words(const std::string& line);

/// The longest input sentence --predict and --score take: a graph grows with
/// the sentence, and a runaway line (a file without newlines) would take
/// gigabytes.  Longer lines are an error naming the input and the line.
constexpr size_t kMaxInputWords = 5000;
void check_input_length(size_t words, const std::string& input, size_t lineno);

/// A progress bar on stderr: redrawn in place on a terminal at most 5 times a
/// second, else one line every 10%.  Shows the mean loss and the throughput.
class ProgressBar {
 public:
  /// `unit` names the instances in the throughput ("sent", "trees").
  ProgressBar(std::string label, size_t total, std::string unit = "inst");

  /// `done` instances finished so far; `loss` the mean loss per unit so far.
  void update(size_t done, double loss, const char* loss_unit);
  /// Ends the bar's line (on a terminal).
  void finish();
  double seconds() const { return timer_.seconds(); }

 private:
  std::string label_, unit_;
  size_t total_;
  bool tty_;
  Timer timer_;
  double last_draw_ = -1;
  unsigned last_decile_ = ~0u;
};

}  // namespace examples
