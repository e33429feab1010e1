// Bracketed-tree reader (SST format).
#include "dynet_lite/io/ptb_tree.h"

#include <cctype>
#include <fstream>

#include "dynet_lite/except.h"

namespace dynet_lite {

std::vector<std::string> PTBTree::words() const {
  std::vector<std::string> w;
  for (const TreeNode& n : nodes)  // post-order visits the leaves left to right
    if (n.is_leaf()) w.push_back(n.word);
  return w;
}

namespace {

struct Frame {
  int label = 0;
  bool has_word = false;
  std::string word;
  std::vector<int> children;
};

bool parse_int(const std::string& s, int& v) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t k = i; k < s.size(); ++k)
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return false;
  try {
    v = std::stoi(s);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

}  // namespace

PTBTree parse_ptb_tree(const std::string& text, const std::string& name, size_t lineno, bool unescape) {
  PTBTree tree;
  std::vector<Frame> stack;
  bool expect_label = false;
  bool finished = false;
  size_t pos = 0;
  auto fail = [&](const std::string& why) {
    DYNET_LITE_CHECK(false, io_error,
                     "read_ptb_trees: " << name << ":" << lineno << ": " << why << " (at column " << pos + 1 << ")");
  };
  const size_t n = text.size();
  while (pos < n) {
    const char ch = text[pos];
    if (std::isspace(static_cast<unsigned char>(ch))) {
      ++pos;
      continue;
    }
    if (finished) fail("text after the end of the tree");
    if (ch == '(') {
      if (expect_label) fail("expected a label after '('");
      if (!stack.empty() && stack.back().has_word) fail("a leaf cannot also have subtrees");
      stack.emplace_back();
      expect_label = true;
      ++pos;
      continue;
    }
    if (ch == ')') {
      if (expect_label) fail("empty node '()'");
      if (stack.empty()) fail("unbalanced ')'");
      Frame f = std::move(stack.back());
      stack.pop_back();
      if (!f.has_word && f.children.size() != 2)
        fail("node with " + std::to_string(f.children.size()) + " subtrees (binary trees expected)");
      TreeNode node;
      node.label = f.label;
      node.word = std::move(f.word);
      node.children = std::move(f.children);
      tree.nodes.push_back(std::move(node));
      const int idx = static_cast<int>(tree.nodes.size()) - 1;
      if (stack.empty())
        finished = true;
      else
        stack.back().children.push_back(idx);
      ++pos;
      continue;
    }
    // an atom: a label or a word
    size_t end = pos;
    while (end < n && text[end] != '(' && text[end] != ')' && !std::isspace(static_cast<unsigned char>(text[end])))
      ++end;
    std::string atom = text.substr(pos, end - pos);
    if (stack.empty()) fail("'" + atom + "' outside brackets");
    Frame& f = stack.back();
    if (expect_label) {
      if (!parse_int(atom, f.label)) fail("label '" + atom + "' is not an integer");
      expect_label = false;
    } else {
      if (f.has_word) fail("a leaf has more than one word ('" + f.word + "' then '" + atom + "')");
      if (!f.children.empty()) fail("word '" + atom + "' mixed with subtrees");
      if (unescape) {
        if (atom == "-LRB-") atom = "(";
        else if (atom == "-RRB-") atom = ")";
      }
      f.word = std::move(atom);
      f.has_word = true;
    }
    pos = end;
  }
  if (!finished) {
    pos = n;
    fail(stack.empty() ? std::string("no tree") : "unbalanced '(' (" + std::to_string(stack.size()) + " open)");
  }
  return tree;
}

PTBTreeReader::PTBTreeReader(const std::string& path, bool unescape)
    : lines_(path, "read_ptb_trees"), unescape_(unescape) {}

PTBTreeReader::PTBTreeReader(std::istream& in, const std::string& name, bool unescape)
    : lines_(in, name), unescape_(unescape) {}

PTBTreeReader::~PTBTreeReader() = default;

bool PTBTreeReader::next(PTBTree& t) {
  while (lines_.next()) {
    const std::string& line = lines_.line();
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    t = parse_ptb_tree(line, lines_.name(), lines_.line_number(), unescape_);
    return true;
  }
  t.nodes.clear();
  return false;
}

std::vector<PTBTree> read_ptb_trees(std::istream& in, const std::string& name, bool unescape) {
  PTBTreeReader reader(in, name, unescape);
  std::vector<PTBTree> trees;
  for (PTBTree t; reader.next(t);) {
    t.nodes.shrink_to_fit();
    trees.push_back(std::move(t));
  }
  return trees;
}

std::vector<PTBTree> read_ptb_trees(const std::string& path, bool unescape) {
  std::ifstream in(path);
  DYNET_LITE_CHECK(in.is_open(), io_error, "read_ptb_trees: cannot open '" << path << "'");
  return read_ptb_trees(in, path, unescape);
}

}  // namespace dynet_lite
