#define BOOST_TEST_MODULE dict_readers
#include "test_utils.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "dynet_lite/dict.h"
#include "dynet_lite/except.h"
#include "dynet_lite/io/conllu.h"
#include "dynet_lite/io/ptb_tree.h"

using namespace dynet_lite;

namespace {
std::string data_file(const std::string& rel) { return std::string(DYNET_LITE_DATA_DIR) + "/" + rel; }
bool exists(const std::string& path) { return std::ifstream(path).good(); }
/// Runs check(path) on the corpus file `rel` of the data folder; when the file is
/// absent, notes that the test is skipped.
template <class F>
void with_corpus(const std::string& rel, F check) {
  const std::string path = data_file(rel);
  if (!exists(path)) {
    BOOST_TEST_MESSAGE("skipped: " << path << " is absent");
    return;
  }
  check(path);
}
/// A temporary file with the given content, removed at scope exit.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& content, const std::string& tag) {
    path = "/tmp/dynet_lite_test_" + tag + "_" + std::to_string(::getpid()) + ".txt";
    std::ofstream(path) << content;
  }
  ~TempFile() { std::remove(path.c_str()); }
};
}  // namespace

BOOST_AUTO_TEST_SUITE(dict)

BOOST_AUTO_TEST_CASE(convert_both_ways) {
  Dict d;
  BOOST_CHECK_EQUAL(d.convert("the"), 0);
  BOOST_CHECK_EQUAL(d.convert("cat"), 1);
  BOOST_CHECK_EQUAL(d.convert("the"), 0);
  BOOST_CHECK_EQUAL(d.size(), 2u);
  BOOST_CHECK_EQUAL(d.convert(1), "cat");
  BOOST_CHECK(d.contains("cat"));
  BOOST_CHECK(!d.contains("dog"));
  BOOST_CHECK_EQUAL(d.get_words().size(), 2u);
  BOOST_CHECK_EQUAL(d.get_words()[0], "the");
  BOOST_CHECK_EQUAL(d.get_unk_id(), -1);
}

BOOST_AUTO_TEST_CASE(id_out_of_range) {
  Dict d;
  d.convert("a");
  test::check_throws_with<index_error>([&] { d.convert(1); }, {"Dict::convert", "id 1", "size 1"});
  test::check_throws_with<index_error>([&] { d.convert(-1); }, {"id -1"});
}

BOOST_AUTO_TEST_CASE(frozen_without_unk_names_word) {
  Dict d;
  d.convert("a");
  d.freeze();
  BOOST_CHECK(d.is_frozen());
  BOOST_CHECK_EQUAL(d.convert("a"), 0);
  test::check_throws_with<std::runtime_error>([&] { d.convert("zebra"); }, {"zebra", "frozen"});
  BOOST_CHECK_EQUAL(d.size(), 1u);
}

BOOST_AUTO_TEST_CASE(frozen_with_unk) {
  Dict d;
  d.convert("a");
  test::check_throws_with<std::runtime_error>([&] { d.set_unk("<unk>"); }, {"set_unk", "freeze"});
  d.freeze();
  d.set_unk("<unk>");
  BOOST_CHECK_EQUAL(d.get_unk_id(), 1);
  BOOST_CHECK_EQUAL(d.convert("zebra"), 1);
  BOOST_CHECK_EQUAL(d.size(), 2u);
  BOOST_CHECK(d.is_frozen());
  test::check_throws_with<std::runtime_error>([&] { d.set_unk("<UNK>"); }, {"already", "<unk>"});
  d.clear();
  BOOST_CHECK_EQUAL(d.size(), 0u);
  BOOST_CHECK_EQUAL(d.get_unk_id(), -1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(conllu)

const char* kConllu =
    "# sent_id = 1\n"
    "# text = I don't know.\n"
    "1\tI\tI\tPRON\tPRP\t_\t3\tnsubj\t_\t_\n"
    "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "2\tdo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_\n"
    "3\tknow\tknow\tVERB\tVB\t_\t0\troot\t_\t_\n"
    "3.1\tknows\tknow\tVERB\tVB\t_\t_\t_\t3:conj\t_\n"
    "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n"
    "\n"
    "# sent_id = 2\n"
    "1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n"
    "\n";

BOOST_AUTO_TEST_CASE(fixture_sentences) {
  std::istringstream in(kConllu);
  auto s = read_conllu(in, "fixture");
  BOOST_REQUIRE_EQUAL(s.size(), 2u);
  BOOST_REQUIRE_EQUAL(s[0].size(), 4u);  // 2-3 and 3.1 skipped
  BOOST_CHECK_EQUAL(s[0].tokens[1].form, "do");
  BOOST_CHECK_EQUAL(s[0].tokens[1].upos, "AUX");
  BOOST_CHECK_EQUAL(s[0].tokens[1].head, 3);
  BOOST_CHECK_EQUAL(s[0].tokens[1].deprel, "aux");
  BOOST_CHECK_EQUAL(s[0].tokens[2].head, 0);
  BOOST_CHECK_EQUAL(s[0].tokens[3].id, 4);
  BOOST_CHECK_EQUAL(s[1].tokens[0].form, "Hi");
}

BOOST_AUTO_TEST_CASE(fixture_file_without_final_blank_line) {
  TempFile f("1\ta\ta\tDET\tDT\t_\t0\troot\t_\t_", "conllu_ok");
  auto s = read_conllu(f.path);
  BOOST_REQUIRE_EQUAL(s.size(), 1u);
  BOOST_CHECK_EQUAL(s[0].tokens[0].upos, "DET");
}

BOOST_AUTO_TEST_CASE(malformed_lines_name_file_and_line) {
  TempFile f("# c\n1\ta\ta\tDET\tDT\t_\t0\troot\t_\t_\n2\tb\tb\tNOUN\n", "conllu_bad");
  test::check_throws_with<io_error>([&] { read_conllu(f.path); }, {f.path.c_str(), ":3:", "10 tab-separated"});
  std::istringstream bad_head("1\ta\ta\tDET\tDT\t_\tx\troot\t_\t_\n");
  test::check_throws_with<io_error>([&] { read_conllu(bad_head, "mem"); }, {"mem:1:", "HEAD 'x'"});
  std::istringstream bad_id("1\ta\ta\tDET\tDT\t_\t0\troot\t_\t_\n3\tb\tb\tDET\tDT\t_\t0\troot\t_\t_\n");
  test::check_throws_with<io_error>([&] { read_conllu(bad_id, "mem"); }, {"mem:2:", "out of sequence"});
  std::istringstream bad_range("1-x\ta\t_\t_\t_\t_\t_\t_\t_\t_\n");
  test::check_throws_with<io_error>([&] { read_conllu(bad_range, "mem"); }, {"mem:1:", "ID '1-x'"});
  test::check_throws_with<io_error>([&] { read_conllu("/nonexistent/x.conllu"); }, {"/nonexistent/x.conllu"});
  // IDs and HEADs beyond int: a clear error naming the line, not a bare stoi.
  std::istringstream huge_id("99999999999\ta\ta\tDET\tDT\t_\t0\troot\t_\t_\n");
  test::check_throws_with<io_error>([&] { read_conllu(huge_id, "mem"); }, {"mem:1:", "ID '99999999999' out of range"});
  std::istringstream huge_head("1\ta\ta\tDET\tDT\t_\t99999999999\troot\t_\t_\n");
  test::check_throws_with<io_error>([&] { read_conllu(huge_head, "mem"); }, {"mem:1:", "HEAD '99999999999' out of range"});
  // A megabyte line is quoted cut, not whole.
  std::istringstream long_line(std::string(1 << 20, 'x') + "\n");
  try {
    read_conllu(long_line, "mem");
    BOOST_ERROR("no exception");
  } catch (const io_error& e) {
    BOOST_CHECK_LT(std::string(e.what()).size(), 300u);
  }
}

BOOST_AUTO_TEST_CASE(reader_hands_out_one_sentence_at_a_time) {
  std::istringstream in(kConllu);
  ConlluReader reader(in, "fixture");
  ConlluSentence s;
  BOOST_REQUIRE(reader.next(s));
  BOOST_REQUIRE_EQUAL(s.size(), 4u);
  BOOST_CHECK_EQUAL(s.tokens[1].form, "do");
  BOOST_CHECK_EQUAL(s.tokens[1].lemma, "do");
  BOOST_CHECK_EQUAL(s.tokens[1].xpos, "VBP");
  BOOST_CHECK_EQUAL(s.tokens[1].deprel, "aux");
  BOOST_CHECK_EQUAL(reader.line_number(), 9u);  // the blank line that ends it
  BOOST_REQUIRE(reader.next(s));
  BOOST_REQUIRE_EQUAL(s.size(), 1u);  // the tokens of the first sentence are gone
  BOOST_CHECK_EQUAL(s.tokens[0].form, "Hi");
  BOOST_CHECK_EQUAL(s.tokens[0].id, 1);
  BOOST_CHECK(!reader.next(s));
  BOOST_CHECK_EQUAL(s.size(), 0u);
  BOOST_CHECK(!reader.next(s));  // stays at the end
}

BOOST_AUTO_TEST_CASE(reader_keeps_only_the_columns_asked_for) {
  std::istringstream in(kConllu);
  ConlluReader reader(in, "fixture", ConlluColumns::form | ConlluColumns::upos);
  ConlluSentence s;
  BOOST_REQUIRE(reader.next(s));
  const ConlluToken& t = s.tokens[1];
  BOOST_CHECK_EQUAL(t.form, "do");
  BOOST_CHECK_EQUAL(t.upos, "AUX");
  BOOST_CHECK(t.lemma.empty() && t.xpos.empty() && t.feats.empty() && t.deprel.empty());
  BOOST_CHECK_EQUAL(t.id, 2);
  BOOST_CHECK_EQUAL(t.head, 3);  // ID and HEAD are always read
  BOOST_CHECK(has_columns(ConlluColumns::all, ConlluColumns::deprel | ConlluColumns::form));
  BOOST_CHECK(!has_columns(ConlluColumns::form, ConlluColumns::form | ConlluColumns::upos));
  // The whole corpus with some columns: the same sentences.
  std::istringstream again(kConllu);
  auto all = read_conllu(again, "fixture", ConlluColumns::upos);
  BOOST_REQUIRE_EQUAL(all.size(), 2u);
  BOOST_CHECK_EQUAL(all[0].tokens[3].upos, "PUNCT");
  BOOST_CHECK(all[0].tokens[3].form.empty());
  BOOST_CHECK_EQUAL(all[0].tokens.capacity(), all[0].tokens.size());
}

BOOST_AUTO_TEST_CASE(reader_errors_name_file_and_line) {
  TempFile f("1\ta\ta\tDET\tDT\t_\t0\troot\t_\t_\n\n1\tb\tb\tNOUN\n", "conllu_reader_bad");
  ConlluReader reader(f.path, ConlluColumns::form);
  ConlluSentence s;
  BOOST_REQUIRE(reader.next(s));  // the first sentence is good
  BOOST_CHECK_EQUAL(s.tokens[0].form, "a");
  test::check_throws_with<io_error>([&] { reader.next(s); }, {f.path.c_str(), ":3:", "10 tab-separated"});
  test::check_throws_with<io_error>([&] { ConlluReader r("/nonexistent/x.conllu"); }, {"/nonexistent/x.conllu"});
}

BOOST_AUTO_TEST_CASE(real_ewt_train) {
  with_corpus("ud-english-ewt/en_ewt-ud-train.conllu", [](const std::string& path) {
    auto s = read_conllu(path);
    BOOST_CHECK_EQUAL(s.size(), 12544u);
    size_t tokens = 0;
    for (auto& x : s) {
      tokens += x.size();
      for (auto& t : x.tokens) BOOST_REQUIRE(t.head >= 0 && t.head <= static_cast<int>(x.size()));
    }
    BOOST_CHECK(tokens > 200000 && tokens < 210000);
    BOOST_CHECK_EQUAL(s[0].tokens[0].form, "Al");
    BOOST_CHECK_EQUAL(s[0].tokens[0].upos, "PROPN");
    // Sentence by sentence, the same corpus.
    ConlluReader reader(path, ConlluColumns::form | ConlluColumns::upos);
    size_t n = 0;
    for (ConlluSentence x; reader.next(x); ++n) {
      BOOST_REQUIRE_LT(n, s.size());
      BOOST_REQUIRE_EQUAL(x.size(), s[n].size());
      for (size_t i = 0; i < x.size(); ++i) {
        BOOST_REQUIRE_EQUAL(x.tokens[i].form, s[n].tokens[i].form);
        BOOST_REQUIRE_EQUAL(x.tokens[i].upos, s[n].tokens[i].upos);
      }
    }
    BOOST_CHECK_EQUAL(n, s.size());
  });
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(ptb_tree)

BOOST_AUTO_TEST_CASE(fixture_tree) {
  PTBTree t = parse_ptb_tree("(3 (2 The) (4 (2 -LRB-) (3 Rock)))");
  BOOST_REQUIRE_EQUAL(t.size(), 5u);
  // post-order: The, -LRB-, Rock, (4 ..), root
  BOOST_CHECK_EQUAL(t.nodes[0].word, "The");
  BOOST_CHECK_EQUAL(t.nodes[1].word, "-LRB-");
  BOOST_CHECK_EQUAL(t.nodes[3].label, 4);
  BOOST_CHECK_EQUAL(t.nodes[3].children.size(), 2u);
  BOOST_CHECK_EQUAL(t.nodes[3].children[0], 1);
  BOOST_CHECK_EQUAL(t.nodes[3].children[1], 2);
  BOOST_CHECK_EQUAL(t.root(), 4);
  BOOST_CHECK_EQUAL(t.root_label(), 3);
  BOOST_CHECK_EQUAL(t.nodes[4].children[0], 0);
  BOOST_CHECK_EQUAL(t.nodes[4].children[1], 3);
  for (int k = 0; k < static_cast<int>(t.size()); ++k)
    for (int c : t.nodes[k].children) BOOST_CHECK(c < k);
  auto w = t.words();
  BOOST_REQUIRE_EQUAL(w.size(), 3u);
  BOOST_CHECK_EQUAL(w[2], "Rock");
  PTBTree u = parse_ptb_tree("(1 (0 -LRB-) (2 -RRB-))", "x", 1, true);
  BOOST_CHECK_EQUAL(u.nodes[0].word, "(");
  BOOST_CHECK_EQUAL(u.nodes[1].word, ")");
  PTBTree leaf = parse_ptb_tree("  (2 word)  ");
  BOOST_CHECK_EQUAL(leaf.size(), 1u);
}

BOOST_AUTO_TEST_CASE(malformed_trees_name_file_and_line) {
  TempFile f("(3 (2 a) (2 b))\n\n(3 (2 a) (2 b)\n", "ptb_bad");
  test::check_throws_with<io_error>([&] { read_ptb_trees(f.path); }, {f.path.c_str(), ":3:", "unbalanced"});
  test::check_throws_with<io_error>([&] { parse_ptb_tree("(x (2 a) (2 b))", "s", 7); }, {"s:7:", "label 'x'"});
  test::check_throws_with<io_error>([&] { parse_ptb_tree("(3 (2 a) (2 b) (2 c))", "s", 1); }, {"3 subtrees"});
  test::check_throws_with<io_error>([&] { parse_ptb_tree("(3 (2 a))", "s", 1); }, {"1 subtrees"});
  test::check_throws_with<io_error>([&] { parse_ptb_tree("(3 (2 a) (2 b)))", "s", 1); }, {"text after"});
  test::check_throws_with<io_error>([&] { parse_ptb_tree("(2 a b)", "s", 1); }, {"more than one word"});
  test::check_throws_with<io_error>([&] { parse_ptb_tree("(2 a (2 b))", "s", 1); }, {"leaf cannot"});
  test::check_throws_with<io_error>([&] { parse_ptb_tree("()", "s", 1); }, {"empty node"});
  test::check_throws_with<io_error>([&] { read_ptb_trees("/nonexistent/t.txt"); }, {"/nonexistent/t.txt"});
}

BOOST_AUTO_TEST_CASE(reader_hands_out_one_tree_at_a_time) {
  std::istringstream in("(3 (2 a) (2 b))\n\n  \n(1 (0 -LRB-) (2 c))\n");
  PTBTreeReader reader(in, "mem", true);
  PTBTree t;
  BOOST_REQUIRE(reader.next(t));
  BOOST_CHECK_EQUAL(t.size(), 3u);
  BOOST_CHECK_EQUAL(t.root_label(), 3);
  BOOST_CHECK_EQUAL(reader.line_number(), 1u);
  BOOST_REQUIRE(reader.next(t));  // blank lines skipped
  BOOST_CHECK_EQUAL(reader.line_number(), 4u);
  BOOST_CHECK_EQUAL(t.nodes[0].word, "(");
  BOOST_CHECK_EQUAL(t.root_label(), 1);
  BOOST_CHECK(!reader.next(t));
  BOOST_CHECK_EQUAL(t.size(), 0u);
  std::istringstream bad("(3 (2 a) (2 b))\n(3 (2 a)\n");
  PTBTreeReader bad_reader(bad, "mem");
  BOOST_REQUIRE(bad_reader.next(t));
  test::check_throws_with<io_error>([&] { bad_reader.next(t); }, {"mem:2:"});
  test::check_throws_with<io_error>([&] { PTBTreeReader r("/nonexistent/t.txt"); }, {"/nonexistent/t.txt"});
}

BOOST_AUTO_TEST_CASE(real_sst_train) {
  with_corpus("sst/train.txt", [](const std::string& path) {
    auto trees = read_ptb_trees(path);
    BOOST_CHECK_EQUAL(trees.size(), 9645u);
    for (auto& t : trees) {
      BOOST_REQUIRE(t.root_label() >= 0 && t.root_label() <= 4);
      BOOST_REQUIRE_EQUAL(t.size(), 2 * t.words().size() - 1);  // binary
    }
    BOOST_CHECK_EQUAL(trees[0].words()[0], "The");
    BOOST_CHECK_EQUAL(trees[0].root_label(), 3);
    PTBTreeReader reader(path);
    size_t n = 0;
    for (PTBTree t; reader.next(t); ++n) {
      BOOST_REQUIRE_LT(n, trees.size());
      BOOST_REQUIRE_EQUAL(t.size(), trees[n].size());
      BOOST_REQUIRE(t.words() == trees[n].words());
    }
    BOOST_CHECK_EQUAL(n, trees.size());
  });
}

BOOST_AUTO_TEST_SUITE_END()
