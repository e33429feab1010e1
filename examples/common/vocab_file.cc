#include "vocab_file.h"

#include "dynet_lite/except.h"
#include "util.h"

namespace examples {

void VocabularyWriter::dict(const char* name, const dynet_lite::Dict& d) {
  body_ << name << " " << d.size() << "\n";
  for (const auto& w : d.get_words()) body_ << w << "\n";
}

void VocabularyWriter::save(const std::string& path, const std::string& model_stamp) const {
  write_file_atomically(path, magic_ + " 2\nmodel " + model_stamp + "\n" + body_.str());
}

namespace {
// Reads line `lineno` of `path` into `line`; false at the end of the file.  The
// writer ends every line with a newline, so a line that ends the file without
// one is a file cut short: an error, not an entry that lost its last letters.
bool read_line(std::istream& in, std::string& line, const std::string& path, size_t lineno) {
  if (!std::getline(in, line)) return false;
  DYNET_LITE_CHECK(!in.eof(), dynet_lite::io_error,
                   path << ":" << lineno << ": the file ends inside this line (it was cut short)");
  return true;
}

// Reads the header "<magic> <version>" and, from version 2, "model <stamp>";
// returns the stamp ("" for version 1) and leaves `in` after those lines.
std::string read_header(std::istream& in, const std::string& path, const std::string& magic,
                        const std::string& kind, size_t& lineno) {
  std::string line;
  DYNET_LITE_CHECK(read_line(in, line, path, 1), dynet_lite::io_error,
                   path << ":1: file ends where the header was expected");
  lineno = 1;
  std::istringstream header(line);
  std::string m;
  int version = 0;
  header >> m >> version;
  DYNET_LITE_CHECK((magic.empty() || m == magic) && (version == 1 || version == 2), dynet_lite::io_error,
                   path << ":1: not a " << kind << " vocabulary file (header '" << line << "')");
  if (version == 1) return "";
  DYNET_LITE_CHECK(read_line(in, line, path, 2), dynet_lite::io_error,
                   path << ":2: file ends where the model stamp was expected");
  lineno = 2;
  std::istringstream ls(line);
  std::string key, stamp;
  ls >> key >> stamp;
  DYNET_LITE_CHECK(key == "model" && !stamp.empty() && (ls >> std::ws).eof(), dynet_lite::io_error,
                   path << ":2: expected 'model <stamp>', found '" << line << "'");
  return stamp;
}
}  // namespace

std::string read_model_stamp(const std::string& path) {
  std::ifstream in(path);
  DYNET_LITE_CHECK(in.good(), dynet_lite::io_error, "cannot open the vocabulary file '" << path << "'");
  size_t lineno = 0;
  return read_header(in, path, "", "model", lineno);
}

VocabularyReader::VocabularyReader(const std::string& path, const std::string& magic, const std::string& kind)
    : path_(path), in_(path) {
  DYNET_LITE_CHECK(in_.good(), dynet_lite::io_error, "cannot open the vocabulary file '" << path << "'");
  read_header(in_, path, magic, kind, lineno_);
}

const std::string& VocabularyReader::next(const std::string& what) {
  DYNET_LITE_CHECK(read_line(in_, line_, path_, lineno_ + 1), dynet_lite::io_error,
                   path_ << ":" << lineno_ + 1 << ": file ends where " << what << " was expected");
  ++lineno_;
  return line_;
}

unsigned VocabularyReader::number(const char* name) {
  std::istringstream ls(next(name));
  std::string key;
  long long n = -1;
  ls >> key >> n;
  DYNET_LITE_CHECK(key == name && n >= 0 && n <= 0xffffffffLL && ls.eof(), dynet_lite::io_error,
                   path_ << ":" << lineno_ << ": expected '" << name << " <number>', found '" << line_ << "'");
  return static_cast<unsigned>(n);
}

void VocabularyReader::dict(const char* name, dynet_lite::Dict& d) {
  const unsigned n = number(name);
  for (unsigned i = 0; i < n; ++i) {
    next(name);
    DYNET_LITE_CHECK(!d.contains(line_), dynet_lite::io_error,
                     path_ << ":" << lineno_ << ": '" << line_ << "' appears twice in " << name);
    d.convert(line_);
  }
}

void VocabularyReader::check(bool ok, const std::string& what) const {
  DYNET_LITE_CHECK(ok, dynet_lite::io_error, path_ << ": " << what);
}

}  // namespace examples
