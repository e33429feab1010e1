#pragma once
// What the DyNet reference programs (bench/dynet_*.cc) share: the corpus readers,
// a timer, the machine figures printed with the results.  These programs are
// compiled against DyNet 2.1 itself (scripts/build_dynet.sh), so they must not
// link dynet_lite: both libraries are built on Eigen, and two copies of its
// templates compiled with different flags in one process may interpose each
// other.  The readers here therefore repeat, in a few lines, what
// dynet_lite/io/conllu.h and dynet_lite/io/ptb_tree.h read, for the files of
// ../shared/data only (well-formed; a malformed line is an error naming it).
#include <sys/stat.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_info.h"

namespace dynet_bench {

inline bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

/// The shared corpora: ../shared/data next to the project root, else from the current folder.
inline std::string default_data_dir() {
  std::string d = std::string(DYNET_LITE_PROJECT_ROOT) + "/../shared/data";
  return file_exists(d) ? d : "../shared/data";
}

struct ConllToken {
  std::string form, upos;
};
using ConllSentence = std::vector<ConllToken>;

/// CoNLL-U sentences (FORM and UPOS of each word line; comments, multiword
/// ranges "3-4" and empty nodes "8.1" skipped), as dynet_lite::read_conllu.
inline std::vector<ConllSentence> read_conllu(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::vector<ConllSentence> out;
  ConllSentence cur;
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
      continue;
    }
    if (line[0] == '#') continue;
    std::vector<std::string> cols;
    std::istringstream ls(line);
    std::string col;
    while (std::getline(ls, col, '\t')) cols.push_back(col);
    if (cols.size() != 10) throw std::runtime_error(path + ":" + std::to_string(lineno) + ": not 10 columns");
    if (cols[0].find_first_of("-.") != std::string::npos) continue;
    cur.push_back({cols[1], cols[3]});
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

/// A bracketed tree (SST), nodes in post-order: children before their parent,
/// the root last.  A leaf has a word and no children.
struct BracketTree {
  std::vector<int> label;
  std::vector<std::string> word;
  std::vector<std::vector<int>> children;
  size_t size() const { return label.size(); }
};

inline std::vector<BracketTree> read_trees(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::vector<BracketTree> out;
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    BracketTree t;
    struct Frame {
      int label = 0;
      std::string word;
      std::vector<int> children;
    };
    std::vector<Frame> stack;
    auto fail = [&](const char* why) { throw std::runtime_error(path + ":" + std::to_string(lineno) + ": " + why); };
    for (size_t p = 0; p < line.size();) {
      const char ch = line[p];
      if (std::isspace(static_cast<unsigned char>(ch))) {
        ++p;
      } else if (ch == '(') {
        stack.emplace_back();
        size_t e = ++p;
        while (e < line.size() && !std::isspace(static_cast<unsigned char>(line[e]))) ++e;
        stack.back().label = std::stoi(line.substr(p, e - p));
        p = e;
      } else if (ch == ')') {
        if (stack.empty()) fail("unbalanced ')'");
        Frame f = std::move(stack.back());
        stack.pop_back();
        t.label.push_back(f.label);
        t.word.push_back(f.word);
        t.children.push_back(f.children);
        if (!stack.empty()) stack.back().children.push_back(static_cast<int>(t.size()) - 1);
        ++p;
      } else {
        size_t e = p;
        while (e < line.size() && line[e] != ')' && !std::isspace(static_cast<unsigned char>(line[e]))) ++e;
        if (stack.empty()) fail("a word outside brackets");
        stack.back().word = line.substr(p, e - p);
        p = e;
      }
    }
    if (!stack.empty() || t.size() == 0) fail("unbalanced '('");
    out.push_back(std::move(t));
  }
  return out;
}

class Timer {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

/// Single-thread GFLOP/s of a 512x512x512 float product with Eigen as this
/// program is compiled (DyNet's own flags), best of 5.
inline double gemm512_gflops() {
  const int n = 512;
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  c.noalias() = a * b;
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    Timer t;
    c.noalias() = a * b;
    best = std::min(best, t.seconds());
  }
  return 2.0 * n * n * n / best / 1e9;
}

/// The end of every result line: the library, the machine and the flags.
inline void append_tail(std::ostream& line) {
  line << " lib=dynet dynet_version=2.1.2 threads=1 cpu=\"" << bench::cpu_model() << "\" flags=\"" << DYNET_BENCH_FLAGS
       << "\"";
}

inline std::string first_losses(const std::vector<float>& l) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(4);
  for (size_t i = 0; i < l.size(); ++i) s << (i ? "," : "") << l[i];
  return s.str();
}

}  // namespace dynet_bench
