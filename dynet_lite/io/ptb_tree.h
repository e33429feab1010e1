#pragma once
/// \file ptb_tree.h
/// Reader for labelled binary trees in Penn Treebank bracket form, one tree per
/// line, as in the Stanford Sentiment Treebank: `(3 (2 The) (2 Rock))`.  Every
/// node carries an integer label; a leaf is `(label word)`, an internal node
/// `(label left right)`.  Parentheses inside words are escaped as -LRB- / -RRB-.
#include <iosfwd>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "dynet_lite/io/line_reader.h"

namespace dynet_lite {

struct TreeNode {
  int label = 0;
  std::string word;           ///< leaves only
  std::vector<int> children;  ///< indices into PTBTree::nodes (empty for a leaf)
  bool is_leaf() const { return children.empty(); }
};

/// Nodes in post-order: every child comes before its parent, so a Tree-LSTM can
/// add them in index order (add_input(k, nodes[k].children, x_k)); the root is last.
struct PTBTree {
  std::vector<TreeNode> nodes;
  size_t size() const { return nodes.size(); }
  int root() const { return static_cast<int>(nodes.size()) - 1; }
  int root_label() const { return nodes.back().label; }
  /// The words of the leaves, left to right.
  std::vector<std::string> words() const;
};

/// Parses one tree.  With unescape_brackets, -LRB- / -RRB- become "(" / ")".
/// Throws io_error naming `name` and `lineno` when the text is malformed
/// (unbalanced brackets, a non-integer label, a node that is neither a leaf nor
/// binary, text after the tree).
PTBTree parse_ptb_tree(const std::string& text, const std::string& name = "<string>", size_t lineno = 1,
                       bool unescape_brackets = false);
/// Reads a file or stream of trees one tree at a time (blank lines are skipped),
/// so that a program converting the trees to its own form never holds the text
/// of more than one:
/// \code
///   PTBTreeReader reader(path);
///   for (PTBTree t; reader.next(t);) ...
/// \endcode
/// Errors are those of parse_ptb_tree(), raised by the next() that meets them.
class PTBTreeReader {
 public:
  /// Opens `path`; throws io_error naming it when it cannot be opened.
  explicit PTBTreeReader(const std::string& path, bool unescape_brackets = false);
  /// Reads from `in`, which must outlive the reader; `name` is used in error messages.
  PTBTreeReader(std::istream& in, const std::string& name, bool unescape_brackets = false);
  ~PTBTreeReader();
  PTBTreeReader(const PTBTreeReader&) = delete;
  PTBTreeReader& operator=(const PTBTreeReader&) = delete;

  /// The next tree into `t`; false at the end of the input (`t` is then empty).
  bool next(PTBTree& t);
  /// The number of the last line read (1-based).
  size_t line_number() const { return lines_.line_number(); }
  const std::string& name() const { return lines_.name(); }

 private:
  LineReader lines_;
  bool unescape_;
};

/// Reads every tree of a file (blank lines are skipped).
std::vector<PTBTree> read_ptb_trees(const std::string& path, bool unescape_brackets = false);
std::vector<PTBTree> read_ptb_trees(std::istream& in, const std::string& name, bool unescape_brackets = false);

}  // namespace dynet_lite
