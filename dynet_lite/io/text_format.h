#pragma once
// DyNet's text model format, shared by TextFileSaver and TextFileLoader (internal).
#include <fstream>
#include <string>
#include <vector>

#include "dynet_lite/dim.h"

namespace dynet_lite {
namespace io_detail {

constexpr const char* kParameterTag = "#Parameter#";
constexpr const char* kLookupTag = "#LookupParameter#";
constexpr const char* kZeroGrad = "ZERO_GRAD";
constexpr const char* kFullGrad = "FULL_GRAD";

/// `{10,5}`: the dimensions without the batch (parameters have none).
std::string format_dim(const Dim& d);
/// Appends n floats, space separated, 9 significant digits, then '\n'.
void append_values(std::string& out, const float* v, size_t n);

/// One entry's header, as read from the file.
struct EntryInfo {
  bool lookup = false;
  std::string name;
  Dim dim;                 ///< for a lookup table: the row shape with the row count appended
  size_t bytes = 0;        ///< size of the data lines
  bool full_grad = false;  ///< a gradient line follows the values
  size_t header_line = 0;  ///< 1-based
  std::streamoff data_pos = 0;
};

/// Reads a model file entry by entry; every error is an io_error naming the
/// file and the line.
class TextModelReader {
 public:
  explicit TextModelReader(const std::string& filename);
  /// The next header; false at the end of the file.  Skips the data of the
  /// previous entry when it was not read.
  bool next(EntryInfo& e);
  /// Reads the data of the entry last returned by next().  `grads` receives the
  /// gradient of a FULL_GRAD entry (cleared for ZERO_GRAD); may be null.
  void read_data(const EntryInfo& e, std::vector<float>& values, std::vector<float>* grads);
  const std::string& filename() const { return filename_; }

 private:
  [[noreturn]] void fail(size_t line, const std::string& what) const;
  void parse_values(const EntryInfo& e, const char* b, const char* end, size_t line, float* out);
  std::string filename_;
  std::ifstream in_;
  std::streamoff file_size_ = 0;
  std::streamoff next_header_pos_ = 0;
  size_t next_line_ = 1;
};

}  // namespace io_detail
}  // namespace dynet_lite
