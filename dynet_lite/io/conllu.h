#pragma once
/// \file conllu.h
/// Reader for CoNLL-U files (Universal Dependencies): one token per line with ten
/// tab-separated columns ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC,
/// sentences separated by blank lines, comments starting with '#'.
/// Multiword-token lines (ID "3-4") and empty nodes (ID "8.1") are skipped.
///
/// read_conllu() returns the whole corpus; ConlluReader hands out one sentence
/// at a time, so that a program converting the corpus to its own form (word ids)
/// never holds the parsed text of more than one sentence.  Both can keep only
/// some of the text columns (ConlluColumns): the others are left empty.
#include <iosfwd>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "dynet_lite/io/line_reader.h"

namespace dynet_lite {

struct ConlluToken {
  int id = 0;  ///< 1-based position in the sentence
  std::string form, lemma, upos, xpos, feats;
  int head = 0;  ///< id of the head, 0 for the root, -1 when the column is "_"
  std::string deprel;
};

struct ConlluSentence {
  std::vector<ConlluToken> tokens;
  size_t size() const { return tokens.size(); }
};

/// The text columns a reader keeps (ID and HEAD are always read and checked).
/// Combine with |: `ConlluColumns::form | ConlluColumns::upos`.
enum class ConlluColumns : unsigned {
  none = 0,
  form = 1u << 0,
  lemma = 1u << 1,
  upos = 1u << 2,
  xpos = 1u << 3,
  feats = 1u << 4,
  deprel = 1u << 5,
  all = (1u << 6) - 1,
};
inline constexpr ConlluColumns operator|(ConlluColumns a, ConlluColumns b) {
  return static_cast<ConlluColumns>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
/// Whether `set` holds every column of `c`.
inline constexpr bool has_columns(ConlluColumns set, ConlluColumns c) {
  return (static_cast<unsigned>(set) & static_cast<unsigned>(c)) == static_cast<unsigned>(c);
}

/// Reads a CoNLL-U file or stream one sentence at a time:
/// \code
///   ConlluReader reader(path, ConlluColumns::form | ConlluColumns::upos);
///   for (ConlluSentence s; reader.next(s);) ...
/// \endcode
/// Errors are those of read_conllu(), raised by the next() that meets them.
class ConlluReader {
 public:
  /// Opens `path`; throws io_error naming it when it cannot be opened.
  explicit ConlluReader(const std::string& path, ConlluColumns keep = ConlluColumns::all);
  /// Reads from `in`, which must outlive the reader; `name` is used in error messages.
  ConlluReader(std::istream& in, const std::string& name, ConlluColumns keep = ConlluColumns::all);
  ~ConlluReader();
  ConlluReader(const ConlluReader&) = delete;
  ConlluReader& operator=(const ConlluReader&) = delete;

  /// The next sentence (never empty) into `s`, its tokens replaced; false at the
  /// end of the input (`s` is then empty).  The columns not kept are empty strings.
  bool next(ConlluSentence& s);
  /// The number of the last line read (1-based).
  size_t line_number() const { return lines_.line_number(); }
  const std::string& name() const { return lines_.name(); }

 private:
  LineReader lines_;
  ConlluColumns keep_;
};

/// Reads every sentence of a CoNLL-U file.  Throws io_error naming the file when
/// it cannot be opened, and the file and line number for a malformed line (wrong
/// number of columns, a bad ID or HEAD, IDs out of sequence).
std::vector<ConlluSentence> read_conllu(const std::string& path);
/// The same from a stream; `name` is used in error messages.
std::vector<ConlluSentence> read_conllu(std::istream& in, const std::string& name);
/// The same keeping only the columns `keep` (the others empty); the vectors
/// are cut to their size, so the corpus takes no more memory than it needs.
std::vector<ConlluSentence> read_conllu(const std::string& path, ConlluColumns keep);
std::vector<ConlluSentence> read_conllu(std::istream& in, const std::string& name, ConlluColumns keep);

}  // namespace dynet_lite
