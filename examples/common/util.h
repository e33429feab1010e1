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

/// The loss of a minibatch: its one loss, or the sum of its losses.
dynet_lite::Expression batch_loss(const std::vector<dynet_lite::Expression>& losses);

bool file_exists(const std::string& path);

/// The folder holding the shared corpora: `../shared/data` next to the project
/// root (the build records the root), else the same path from the current folder.
std::string default_data_dir();

/// Writes `content` to `path` atomically: a temporary file in the same folder,
/// flushed and closed, then renamed over `path`.  Throws dynet_lite::io_error.
void write_file_atomically(const std::string& path, const std::string& content);

/// Saves the parameters of `pc` to `path` and the vocabulary `v` (anything with
/// save(path)) to `path`.vocab, each atomically.
template <class Vocabulary>
void save_model(dynet_lite::ParameterCollection& pc, const Vocabulary& v, const std::string& path) {
  dynet_lite::TextFileSaver saver(path);  // atomic: a temporary file renamed over `path`
  saver.save(pc);
  v.save(path + ".vocab");
}

/// Reads the parameter values saved at `path` into `pc` (built with the same shapes).
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
