#pragma once
/// \file conllu.h
/// Reader for CoNLL-U files (Universal Dependencies): one token per line with ten
/// tab-separated columns ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC,
/// sentences separated by blank lines, comments starting with '#'.
/// Multiword-token lines (ID "3-4") and empty nodes (ID "8.1") are skipped.
#include <istream>
#include <string>
#include <vector>

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

/// Reads every sentence of a CoNLL-U file.  Throws io_error naming the file when
/// it cannot be opened, and the file and line number for a malformed line (wrong
/// number of columns, a bad ID or HEAD, IDs out of sequence).
std::vector<ConlluSentence> read_conllu(const std::string& path);
/// The same from a stream; `name` is used in error messages.
std::vector<ConlluSentence> read_conllu(std::istream& in, const std::string& name);

}  // namespace dynet_lite
