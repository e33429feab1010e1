#include "vocab_file.h"

#include "dynet_lite/except.h"
#include "util.h"

namespace examples {

void VocabularyWriter::dict(const char* name, const dynet_lite::Dict& d) {
  out_ << name << " " << d.size() << "\n";
  for (const auto& w : d.get_words()) out_ << w << "\n";
}

void VocabularyWriter::save(const std::string& path) const { write_file_atomically(path, out_.str()); }

VocabularyReader::VocabularyReader(const std::string& path, const std::string& magic, const std::string& kind)
    : path_(path), in_(path) {
  DYNET_LITE_CHECK(in_.good(), dynet_lite::io_error, "cannot open the vocabulary file '" << path << "'");
  std::istringstream header(next("the header"));
  std::string m;
  int version = 0;
  header >> m >> version;
  DYNET_LITE_CHECK(m == magic && version == 1, dynet_lite::io_error,
                   path << ":1: not a " << kind << " vocabulary file (header '" << line_ << "')");
}

const std::string& VocabularyReader::next(const std::string& what) {
  DYNET_LITE_CHECK(std::getline(in_, line_), dynet_lite::io_error,
                   path_ << ":" << lineno_ + 1 << ": file ends where " << what << " was expected");
  ++lineno_;
  return line_;
}

unsigned VocabularyReader::number(const char* name) {
  std::istringstream ls(next(name));
  std::string key;
  long long n = -1;
  ls >> key >> n;
  DYNET_LITE_CHECK(key == name && n >= 0 && ls.eof(), dynet_lite::io_error,
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
