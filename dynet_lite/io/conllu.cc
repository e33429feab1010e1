// CoNLL-U reader.
#include "dynet_lite/io/conllu.h"

#include <fstream>
#include <string_view>

#include "dynet_lite/except.h"

namespace dynet_lite {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (ch < '0' || ch > '9') return false;
  return true;
}

/// Splits on tabs (empty fields kept) into at most `max` views; returns the
/// number of fields the line has (which may exceed `max`).
size_t split_tabs(std::string_view line, std::string_view* out, size_t max) {
  size_t n = 0, start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    const std::string_view field = line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start);
    if (n < max) out[n] = field;
    ++n;
    if (tab == std::string_view::npos) return n;
    start = tab + 1;
  }
}

constexpr size_t kColumns = 10;

}  // namespace

ConlluReader::ConlluReader(const std::string& path, ConlluColumns keep)
    : lines_(path, "read_conllu"), keep_(keep) {}

ConlluReader::ConlluReader(std::istream& in, const std::string& name, ConlluColumns keep)
    : lines_(in, name), keep_(keep) {}

ConlluReader::~ConlluReader() = default;

bool ConlluReader::next(ConlluSentence& s) {
  s.tokens.clear();
  auto fail = [&](const std::string& why) {
    DYNET_LITE_CHECK(false, io_error, "read_conllu: " << lines_.name() << ":" << lines_.line_number() << ": " << why);
  };
  // A field or line quoted in a message is cut: a malformed file may hold megabytes on one line.
  auto shown = [](std::string_view text) {
    return text.size() > 80 ? std::string(text.substr(0, 80)) + "..." : std::string(text);
  };
  // IDs and HEADs: digits (checked) of at most 9 of them, so within int.
  auto number = [&](std::string_view field, const char* what) {
    if (field.size() > 9) fail(std::string(what) + " '" + shown(field) + "' out of range");
    int v = 0;
    for (char ch : field) v = 10 * v + (ch - '0');
    return v;
  };
  auto keep = [&](ConlluColumns c, std::string_view field, std::string& into) {
    if (has_columns(keep_, c)) into.assign(field.data(), field.size());
  };
  std::string_view cols[kColumns];
  while (lines_.next()) {
    std::string& line = lines_.line();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (!s.tokens.empty()) return true;
      continue;
    }
    if (line[0] == '#') continue;
    const size_t num_cols = split_tabs(line, cols, kColumns);
    if (num_cols != kColumns)
      fail("expected 10 tab-separated columns, got " + std::to_string(num_cols) + " in '" + shown(line) + "'");
    const std::string_view id = cols[0];
    const size_t sep = id.find_first_of("-.");
    if (sep != std::string_view::npos) {
      // multiword token or empty node: check its shape, then skip it
      if (!all_digits(id.substr(0, sep)) || !all_digits(id.substr(sep + 1))) fail("malformed ID '" + shown(id) + "'");
      continue;
    }
    if (!all_digits(id)) fail("malformed ID '" + shown(id) + "'");
    ConlluToken& t = s.tokens.emplace_back();
    t.id = number(id, "ID");
    if (t.id != static_cast<int>(s.tokens.size()))
      fail("token ID " + std::string(id) + " out of sequence (expected " + std::to_string(s.tokens.size()) + ")");
    keep(ConlluColumns::form, cols[1], t.form);
    keep(ConlluColumns::lemma, cols[2], t.lemma);
    keep(ConlluColumns::upos, cols[3], t.upos);
    keep(ConlluColumns::xpos, cols[4], t.xpos);
    keep(ConlluColumns::feats, cols[5], t.feats);
    if (cols[6] == "_")
      t.head = -1;
    else if (all_digits(cols[6]))
      t.head = number(cols[6], "HEAD");
    else
      fail("malformed HEAD '" + shown(cols[6]) + "'");
    keep(ConlluColumns::deprel, cols[7], t.deprel);
  }
  return !s.tokens.empty();
}

std::vector<ConlluSentence> read_conllu(std::istream& in, const std::string& name, ConlluColumns keep) {
  ConlluReader reader(in, name, keep);
  std::vector<ConlluSentence> sentences;
  for (ConlluSentence s; reader.next(s);) {
    s.tokens.shrink_to_fit();
    sentences.push_back(std::move(s));
  }
  sentences.shrink_to_fit();
  return sentences;
}

std::vector<ConlluSentence> read_conllu(const std::string& path, ConlluColumns keep) {
  std::ifstream in(path);
  DYNET_LITE_CHECK(in.is_open(), io_error, "read_conllu: cannot open '" << path << "'");
  return read_conllu(in, path, keep);
}

std::vector<ConlluSentence> read_conllu(std::istream& in, const std::string& name) {
  return read_conllu(in, name, ConlluColumns::all);
}

std::vector<ConlluSentence> read_conllu(const std::string& path) { return read_conllu(path, ConlluColumns::all); }

}  // namespace dynet_lite
