#pragma once
// The text file a saved model's vocabularies go to (FILE.vocab next to FILE):
// a header line "<magic> 2", the line "model <stamp>" naming the model file it
// belongs to (examples/common/util.h, save_model), then lines "<name> <number>":
// a setting, or the size of a dictionary followed by its entries, one a line.
// Files of version 1 have no "model" line (their pair is not checked).
#include <fstream>
#include <sstream>
#include <string>

#include "dynet_lite/dict.h"

namespace examples {

/// Builds a vocabulary file in memory; save() writes it atomically.
class VocabularyWriter {
 public:
  explicit VocabularyWriter(std::string magic) : magic_(std::move(magic)) {}
  VocabularyWriter(VocabularyWriter&&) = default;
  /// A setting: "<name> <value>".
  void number(const char* name, long long value) { body_ << name << " " << value << "\n"; }
  /// A dictionary: "<name> <size>", then its entries in id order.
  void dict(const char* name, const dynet_lite::Dict& d);
  /// Writes the file (a temporary flushed to disk, then renamed over `path`),
  /// naming the model file whose stamp (model_file_stamp) is `model_stamp`.
  void save(const std::string& path, const std::string& model_stamp) const;

 private:
  std::string magic_;
  std::ostringstream body_;
};

/// Reads a vocabulary file in the order it was written; every error is a
/// dynet_lite::io_error naming the file and the line.
class VocabularyReader {
 public:
  /// Opens `path` and checks its header; `kind` ("tagger") names the file in the
  /// error when the header is not `magic`'s.
  VocabularyReader(const std::string& path, const std::string& magic, const std::string& kind);
  /// Reads the line "<name> <number>" and returns the number.
  unsigned number(const char* name);
  /// Reads a dictionary into `d` (new, not frozen); an entry given twice is an error.
  void dict(const char* name, dynet_lite::Dict& d);
  /// Throws "<path>: <what>" unless `ok`.
  void check(bool ok, const std::string& what) const;

 private:
  const std::string& next(const std::string& what);

  std::string path_, line_;
  std::ifstream in_;
  size_t lineno_ = 0;
};

/// The stamp of the model file the vocabulary file `path` belongs to; empty for
/// a file of version 1, which names none.  An io_error when `path` cannot be
/// read or its first lines are malformed.
std::string read_model_stamp(const std::string& path);

}  // namespace examples
