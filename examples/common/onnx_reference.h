#pragma once
// --export FILE.onnx and --export-reference FILE.json, shared by the examples:
// the model leaves as ONNX (dynet_lite/onnx.h), and the reference file holds
// runs on the test set (the inputs fed to the exported model and dynet_lite's
// outputs) that tests/onnx_check.py replays in ONNX Runtime.
#include <CLI/CLI.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace examples {

/// Adds --export and --export-reference (both need --load MODEL or training);
/// `more` ends --export's help (the further files an example writes).
void add_export_options(CLI::App& app, std::string& export_path, std::string& reference_path,
                        const std::string& more = "");

/// Throws std::invalid_argument when the library was built without the ONNX
/// exporter (DYNET_LITE_ONNX off) and `export_path` is set.
void check_export_available(const std::string& export_path);

/// Runs for tests/onnx_check.py: JSON list of {"inputs": {...}, "outputs": {...}},
/// each tensor {"dtype", "shape", "data"}, an output with how it is compared:
/// "argmax" (equal argmax along the last axis) or a relative tolerance.
class ReferenceWriter {
 public:
  void begin_run();
  void ids(const std::string& name, const std::vector<long>& shape, const std::vector<long>& data);
  void floats(const std::string& name, const std::vector<long>& shape, const std::vector<float>& data);
  /// An output; `compare` is "argmax" or a tolerance such as "1e-5".
  void output(const std::string& name, const std::vector<long>& shape, const std::vector<float>& data,
              const std::string& compare);
  /// An output of shape [seq, 1, classes] compared through one number: the sum
  /// over t of its element [t, 0, picks[t]] (a sentence's log-likelihood from
  /// per-position log-probabilities) against `value`.
  void picked_sum(const std::string& name, const std::vector<long>& picks, float value, const std::string& compare);
  size_t runs() const { return runs_; }
  /// Writes the file atomically.
  void save(const std::string& path);

 private:
  void end_run();
  std::ostringstream out_, inputs_, outputs_;
  size_t runs_ = 0;
  bool open_ = false;
};

}  // namespace examples
