#pragma once
// Scratch files for the test suites: a fresh directory per use, removed
// afterwards, and whole-file reads and writes.
#include <stdlib.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace test {

/// A fresh directory under /tmp named after `prefix`, removed with its contents
/// when the object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "dynet_lite_test") {
    std::string tmpl = "/tmp/" + prefix + "_XXXXXX";
    const char* d = ::mkdtemp(tmpl.data());
    BOOST_REQUIRE_MESSAGE(d != nullptr, "cannot make a scratch directory from " << tmpl);
    dir_ = d;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return dir_; }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

/// The whole of file `path` ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Replaces file `path` with `content`.
inline void write_file(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

}  // namespace test
