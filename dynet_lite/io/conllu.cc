// CoNLL-U reader.
#include "dynet_lite/io/conllu.h"

#include <fstream>

#include "dynet_lite/except.h"

namespace dynet_lite {

namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (ch < '0' || ch > '9') return false;
  return true;
}

/// Splits on tabs (empty fields kept).
void split_tabs(const std::string& line, std::vector<std::string>& out) {
  out.clear();
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    if (tab == std::string::npos) {
      out.push_back(line.substr(start));
      return;
    }
    out.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
}

}  // namespace

std::vector<ConlluSentence> read_conllu(std::istream& in, const std::string& name) {
  std::vector<ConlluSentence> sentences;
  ConlluSentence cur;
  std::string line;
  std::vector<std::string> cols;
  size_t lineno = 0;
  auto fail = [&](const std::string& why) {
    DYNET_LITE_CHECK(false, io_error, "read_conllu: " << name << ":" << lineno << ": " << why);
  };
  // A field or line quoted in a message is cut: a malformed file may hold megabytes on one line.
  auto shown = [](const std::string& text) { return text.size() > 80 ? text.substr(0, 80) + "..." : text; };
  // IDs and HEADs: digits (checked) of at most 9 of them, so within int.
  auto number = [&](const std::string& field, const char* what) {
    if (field.size() > 9) fail(std::string(what) + " '" + shown(field) + "' out of range");
    return std::stoi(field);
  };
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (!cur.tokens.empty()) sentences.push_back(std::move(cur));
      cur = ConlluSentence();
      continue;
    }
    if (line[0] == '#') continue;
    split_tabs(line, cols);
    if (cols.size() != 10)
      fail("expected 10 tab-separated columns, got " + std::to_string(cols.size()) + " in '" + shown(line) + "'");
    const std::string& id = cols[0];
    if (id.find('-') != std::string::npos || id.find('.') != std::string::npos) {
      // multiword token or empty node: check its shape, then skip it
      const size_t sep = id.find_first_of("-.");
      if (!all_digits(id.substr(0, sep)) || !all_digits(id.substr(sep + 1)))
        fail("malformed ID '" + shown(id) + "'");
      continue;
    }
    if (!all_digits(id)) fail("malformed ID '" + shown(id) + "'");
    ConlluToken t;
    t.id = number(id, "ID");
    if (t.id != static_cast<int>(cur.tokens.size()) + 1)
      fail("token ID " + id + " out of sequence (expected " + std::to_string(cur.tokens.size() + 1) + ")");
    t.form = cols[1];
    t.lemma = cols[2];
    t.upos = cols[3];
    t.xpos = cols[4];
    t.feats = cols[5];
    if (cols[6] == "_")
      t.head = -1;
    else if (all_digits(cols[6]))
      t.head = number(cols[6], "HEAD");
    else
      fail("malformed HEAD '" + shown(cols[6]) + "'");
    t.deprel = cols[7];
    cur.tokens.push_back(std::move(t));
  }
  if (!cur.tokens.empty()) sentences.push_back(std::move(cur));
  return sentences;
}

std::vector<ConlluSentence> read_conllu(const std::string& path) {
  std::ifstream in(path);
  DYNET_LITE_CHECK(in.is_open(), io_error, "read_conllu: cannot open '" << path << "'");
  return read_conllu(in, path);
}

}  // namespace dynet_lite
