#include "util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "dynet_lite/except.h"
#include "dynet_lite/io/temp_files.h"
#include "vocab_file.h"

namespace examples {

float train_step(dynet_lite::ComputationGraph& cg, const dynet_lite::Expression& loss, dynet_lite::Trainer& trainer) {
  const float l = dynet_lite::as_scalar(cg.forward(loss));
  cg.backward(loss);
  trainer.update();
  return l;
}

float train_step(dynet_lite::ProgramCache& programs, const dynet_lite::Expression& loss, dynet_lite::Trainer& trainer) {
  const float l = dynet_lite::as_scalar(programs.forward(loss));
  programs.backward(loss);
  trainer.update();
  return l;
}

dynet_lite::Expression batch_loss(const std::vector<dynet_lite::Expression>& losses) {
  return losses.size() == 1 ? losses[0] : dynet_lite::sum(losses);
}

std::istream& open_input(const std::string& path, std::ifstream& file) {
  if (path == "-") return std::cin;
  // A folder opens as a stream that reads nothing: refuse it by name.
  struct stat st;
  DYNET_LITE_CHECK(::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode), dynet_lite::io_error,
                   "'" << path << "' is a directory, not a file");
  file.open(path);
  DYNET_LITE_CHECK(file.good(), dynet_lite::io_error, "cannot open '" << path << "': " << std::strerror(errno));
  return file;
}

void check_input_length(size_t words, const std::string& input, size_t lineno) {
  DYNET_LITE_CHECK(words <= kMaxInputWords, std::runtime_error,
                   "'" << input << "', line " << lineno << ": " << words << " words, more than the "
                       << kMaxInputWords << " a sentence may have; split it");
}

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream ls(line);
  std::vector<std::string> words;
  for (std::string w; ls >> w;) words.push_back(w);
  return words;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string default_data_dir() {
#ifdef DYNET_LITE_PROJECT_ROOT
  std::string d = std::string(DYNET_LITE_PROJECT_ROOT) + "/../shared/data";
  if (file_exists(d)) return d;
#endif
  return "../shared/data";
}

void write_file_atomically(const std::string& path, const std::string& content) {
  dynet_lite::io_detail::remove_dead_temporaries(path);
  const std::string tmp = dynet_lite::io_detail::temporary_path(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  DYNET_LITE_CHECK(fd >= 0, dynet_lite::io_error, "cannot write '" << tmp << "': " << std::strerror(errno));
  const char* p = content.data();
  size_t left = content.size();
  bool ok = true;
  while (ok && left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    ok = w > 0;
    if (ok) {
      p += w;
      left -= static_cast<size_t>(w);
    }
  }
  ok = ok && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    DYNET_LITE_CHECK(false, dynet_lite::io_error,
                     (ok ? "cannot rename '" : "writing '") << tmp << (ok ? "' to '" + path + "'" : "' failed")
                                                            << ": " << std::strerror(err));
  }
  dynet_lite::io_detail::sync_directory_of(path);
}

std::string model_file_stamp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  uint64_t bytes = 0;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    for (std::streamsize k = 0; k < n; ++k) {
      h ^= static_cast<unsigned char>(buf[static_cast<size_t>(k)]);
      h *= 1099511628211ull;
    }
    bytes += static_cast<uint64_t>(n);
  }
  if (in.bad()) return "";
  std::ostringstream s;
  s << bytes << "-" << std::hex << std::setw(16) << std::setfill('0') << h;
  return s.str();
}

void finish_interrupted_save(const std::string& path) {
  const std::string vocab = path + ".vocab", next = path + ".next";
  if (!file_exists(vocab) || !file_exists(next)) return;
  std::string stamp;
  try {
    stamp = read_model_stamp(vocab);
  } catch (const dynet_lite::io_error&) {
    return;  // not a pair this code wrote: the save replaces it
  }
  if (stamp.empty() || model_file_stamp(next) != stamp) return;
  DYNET_LITE_CHECK(std::rename(next.c_str(), path.c_str()) == 0, dynet_lite::io_error,
                   "cannot rename '" << next << "' to '" << path << "': " << std::strerror(errno));
  dynet_lite::io_detail::sync_directory_of(path);
}

std::string model_file_to_load(const std::string& path) {
  const std::string stamp = read_model_stamp(path + ".vocab");
  if (stamp.empty()) return path;  // a vocabulary file of version 1 names no model file
  if (model_file_stamp(path) == stamp) return path;
  if (model_file_stamp(path + ".next") == stamp) return path + ".next";  // saved, not yet renamed
  DYNET_LITE_CHECK(false, dynet_lite::io_error,
                   path << ".vocab names the model file " << stamp << ", which is neither '" << path << "' ("
                        << (file_exists(path) ? model_file_stamp(path) : std::string("absent")) << ") nor '"
                        << path << ".next'");
  return path;
}

void load_model(dynet_lite::ParameterCollection& pc, const std::string& path) {
  dynet_lite::TextFileLoader loader(model_file_to_load(path));
  loader.populate(pc);
}

ProgressBar::ProgressBar(std::string label, size_t total, std::string unit)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total ? total : 1), tty_(::isatty(2) != 0) {}

void ProgressBar::update(size_t done, double loss, const char* loss_unit) {
  const double t = timer_.seconds();
  const unsigned decile = static_cast<unsigned>(10.0 * done / total_);
  if (tty_) {
    if (done < total_ && t - last_draw_ < 0.2) return;
  } else if (decile == last_decile_ && done < total_) {
    return;
  }
  last_draw_ = t;
  last_decile_ = decile;
  const unsigned width = 30;
  const unsigned filled = static_cast<unsigned>(width * std::min<double>(1.0, double(done) / total_));
  std::ostringstream line;
  line << label_ << " [" << std::string(filled, '=') << (filled < width ? ">" : "")
       << std::string(width - filled - (filled < width ? 1 : 0), ' ') << "] " << std::setw(3)
       << static_cast<unsigned>(100.0 * done / total_) << "% " << done << "/" << total_ << "  loss/" << loss_unit << " "
       << std::fixed << std::setprecision(4) << loss << "  " << std::setprecision(1) << (t > 0 ? done / t : 0.0) << " "
       << unit_ << "/s";
  if (tty_)
    std::cerr << "\r" << line.str() << "\x1b[K" << std::flush;
  else
    std::cerr << line.str() << "\n" << std::flush;
}

void ProgressBar::finish() {
  if (tty_) std::cerr << "\n";
}

}  // namespace examples
