#pragma once
// The lines of a file or stream, counted: what the streaming readers of io/
// (ConlluReader, PTBTreeReader) read from, so that their messages can name the
// file and the line.
#include <fstream>
#include <istream>
#include <memory>
#include <string>

namespace dynet_lite {

class LineReader {
 public:
  /// Opens `path`; throws io_error "<what>: cannot open '<path>'" when it cannot.
  LineReader(const std::string& path, const char* what);
  /// Reads from `in`, which must outlive the reader; `name` is used in messages.
  LineReader(std::istream& in, const std::string& name) : in_(&in), name_(name) {}

  /// The next line into line(); false at the end of the input.
  bool next() {
    if (!std::getline(*in_, line_)) return false;
    ++lineno_;
    return true;
  }
  std::string& line() { return line_; }
  /// The number of the last line read (1-based).
  size_t line_number() const { return lineno_; }
  const std::string& name() const { return name_; }

 private:
  std::unique_ptr<std::ifstream> file_;
  std::istream* in_;
  std::string name_;
  size_t lineno_ = 0;
  std::string line_;
};

}  // namespace dynet_lite
