#include "util.h"

#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "dynet_lite/except.h"

namespace examples {

float train_step(dynet_lite::ComputationGraph& cg, const dynet_lite::Expression& loss, dynet_lite::Trainer& trainer) {
  const float l = dynet_lite::as_scalar(cg.forward(loss));
  cg.backward(loss);
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
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    DYNET_LITE_CHECK(out.good(), dynet_lite::io_error, "cannot write '" << tmp << "'");
    out << content;
    out.flush();
    DYNET_LITE_CHECK(out.good(), dynet_lite::io_error, "writing '" << tmp << "' failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    DYNET_LITE_CHECK(false, dynet_lite::io_error, "cannot rename '" << tmp << "' to '" << path << "'");
  }
}

void load_model(dynet_lite::ParameterCollection& pc, const std::string& path) {
  dynet_lite::TextFileLoader loader(path);
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
