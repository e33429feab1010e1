#define BOOST_TEST_MODULE fuzz

#include <chrono>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dynet_lite/cfsm-builder.h"
#include "dynet_lite/dict.h"
#include "dynet_lite/except.h"
#include "dynet_lite/hsm-builder.h"
#include "dynet_lite/io.h"
#include "dynet_lite/io/conllu.h"
#include "dynet_lite/io/ptb_tree.h"
#include "dynet_lite/training.h"
#include "test_files.h"
#include "test_utils.h"
#ifdef DYNET_LITE_FUZZ_VOCABULARY
#include "common/util.h"
#include "common/vocab_file.h"
#endif

// Damaged copies of every format the library reads (slices of the shipped
// corpora, a saved model, a trainer's state, the softmax builders' cluster
// files, a vocabulary file), truncated and
// bit-flipped with a fixed seed, go to every reader.  Each reader must load the
// input or throw a std::exception: never crash, never hang (each input is
// timed).  Crashes would end the test; the counts are printed.

namespace dl = dynet_lite;

namespace {

std::string data_file(const std::string& rel) { return std::string(DYNET_LITE_DATA_DIR) + "/" + rel; }

/// `bytes` bytes of `path` from line `skip_lines`, or "" when it is absent.
std::string slice(const std::string& rel, size_t skip_lines, size_t bytes) {
  std::ifstream in(data_file(rel), std::ios::binary);
  if (!in) return "";
  std::string line, out;
  for (size_t k = 0; k < skip_lines && std::getline(in, line); ++k) {
  }
  while (out.size() < bytes && std::getline(in, line)) out += line + "\n";
  return out;
}

/// The model every saved input is loaded into: its shapes are those saved.
struct Model {
  dl::ParameterCollection pc;
  dl::Parameter w, b;
  dl::LookupParameter e;
  Model() : w(pc.add_parameters({4, 3})), b(pc.add_parameters({4})), e(pc.add_lookup_parameters(5, {3})) {}
};

const char* const kVocabMagic = "dynet_lite-fuzz-vocabulary";

/// A softmax builder reading `path` as its cluster file (a format without
/// counts: a truncated copy may load).
template <class Builder>
bool read_clusters(const std::string& path) {
  dl::ParameterCollection pc;
  dl::Dict words;
  Builder builder(4, path, words, pc);
  return false;
}

#ifdef DYNET_LITE_FUZZ_VOCABULARY
/// Writes the vocabulary file the tests damage (a setting and a dictionary);
/// returns the dictionary's words.
std::vector<std::string> write_vocabulary(const std::string& path) {
  examples::VocabularyWriter v(kVocabMagic);
  dl::Dict words;
  for (const char* w : {"<unk>", "the", "cat", "sat"}) words.convert(w);
  v.number("layers", 2);
  v.dict("words", words);
  v.save(path, "1234-00000000deadbeef");
  return words.get_words();
}

/// Reads such a file back; returns the dictionary's words.
std::vector<std::string> read_vocabulary(const std::string& path) {
  examples::VocabularyReader in(path, kVocabMagic, "fuzz");
  in.number("layers");
  dl::Dict words;
  in.dict("words", words);
  return words.get_words();
}
#endif

enum class Outcome { Loaded, CleanError };

struct Counts {
  unsigned inputs = 0, runs = 0, loads = 0, clean_errors = 0, silent_truncations = 0;
  double slowest_ms = 0;
  std::string slowest;
};

/// A damaged copy of `s`: truncated, bit-flipped, or with a number replaced by
/// an extreme one.
std::string damage(const std::string& s, std::mt19937& rng, bool& truncated) {
  truncated = false;
  if (s.empty()) return s;
  std::uniform_int_distribution<size_t> at(0, s.size() - 1);
  std::string d = s;
  switch (rng() % 4) {
    case 0:
      truncated = true;
      d.resize(at(rng));
      break;
    case 1: {
      const unsigned flips = 1 + rng() % 8;
      for (unsigned k = 0; k < flips; ++k) d[at(rng)] ^= static_cast<char>(1u << (rng() % 8));
      break;
    }
    case 2: {
      static const char* const extremes[] = {"99999999999999999999", "-1", "4294967296", "nan", "1e400", "-0",
                                             "2147483648",           "(",  ")",          "\t",  "\n\n",  "#",
                                             "{1000000,1000000}",    ""};
      const size_t p = at(rng);
      const size_t len = std::min<size_t>(d.size() - p, rng() % 6);
      d.replace(p, len, extremes[rng() % (sizeof(extremes) / sizeof(*extremes))]);
      break;
    }
    default: {  // a run of random bytes
      const size_t p = at(rng);
      for (size_t k = p; k < std::min(d.size(), p + 1 + rng() % 16); ++k) d[k] = static_cast<char>(rng());
      break;
    }
  }
  return d;
}

}  // namespace

BOOST_AUTO_TEST_CASE(damaged_inputs_load_or_throw_cleanly) {
  const test::TempDir dir("dynet_lite_fuzz");
  const std::string path = dir.file("input");

  // The originals: corpus slices, and files written by the library.
  std::vector<std::string> originals;
  for (size_t skip : {0, 400, 5000}) {
    originals.push_back(slice("ud-english-ewt/en_ewt-ud-dev.conllu", skip, 3000));
    originals.push_back(slice("sst/dev.txt", skip / 10, 2000));
    originals.push_back(slice("ptb/ptb.valid.txt", skip, 1500));
  }
  // Cluster files of the class-factored softmax ("cluster<TAB>word") and of the
  // hierarchical one ("path<TAB>word", a path of symbols), as users write them.
  originals.push_back("10\ta\n10\tb\n10\tc\n11\td\n11\te\n0\tf\n");
  originals.push_back("0 0\ta\n0 0\tb\n0 1\tc\n1\td\n1\te\n");
  Model saved;
  {
    dl::TextFileSaver(path).save(saved.pc);
    originals.push_back(test::read_file(path));
    dl::SimpleSGDTrainer sgd(saved.pc);
    dl::AdamTrainer adam(saved.pc);
    for (dl::Trainer* t : {static_cast<dl::Trainer*>(&sgd), static_cast<dl::Trainer*>(&adam)}) {
      std::ostringstream state;
      t->save(state);
      originals.push_back(state.str());
    }
  }
#ifdef DYNET_LITE_FUZZ_VOCABULARY
  write_vocabulary(path);
  originals.push_back(test::read_file(path));
#endif
  originals.erase(std::remove(originals.begin(), originals.end(), std::string()), originals.end());
  BOOST_REQUIRE(!originals.empty());

  // The readers; each gets the input as a file at `path` (and as a stream).
  // A reader returns whether the input was of a format with lengths or counts
  // (so that a truncated copy must fail).
  struct Reader {
    const char* name;
    std::function<bool(const std::string&)> read;
  };
  std::vector<Reader> readers = {
      {"read_conllu",
       [&](const std::string& s) {
         std::istringstream in(s);
         dl::read_conllu(in, "fuzz");
         return false;
       }},
      {"read_ptb_trees",
       [&](const std::string& s) {
         std::istringstream in(s);
         dl::read_ptb_trees(in, "fuzz");
         std::istringstream in2(s);
         dl::read_ptb_trees(in2, "fuzz", true);
         return false;
       }},
      {"TextFileLoader",
       [&](const std::string&) {
         Model m;
         dl::TextFileLoader loader(path);
         loader.keys();
         loader.populate(m.pc);
         return true;
       }},
      {"Trainer::populate",
       [&](const std::string& s) {
         Model m;
         dl::AdamTrainer adam(m.pc);
         std::istringstream in(s);
         adam.populate(in);
         return true;
       }},
      {"ClassFactoredSoftmaxBuilder",
       [&](const std::string&) { return read_clusters<dl::ClassFactoredSoftmaxBuilder>(path); }},
      {"HierarchicalSoftmaxBuilder",
       [&](const std::string&) { return read_clusters<dl::HierarchicalSoftmaxBuilder>(path); }},
#ifdef DYNET_LITE_FUZZ_VOCABULARY
      {"VocabularyReader",
       [&](const std::string&) {
         read_vocabulary(path);
         examples::read_model_stamp(path);
         return true;
       }},
#endif
  };

  // Other damaged copies, and more of them: DYNET_LITE_FUZZ_SEED, DYNET_LITE_FUZZ_INPUTS.
  std::mt19937 rng(test::env_count("DYNET_LITE_FUZZ_SEED", 12345));
  Counts c;
  const unsigned per_original =
      test::env_count("DYNET_LITE_FUZZ_INPUTS", 400) / static_cast<unsigned>(originals.size()) + 1;
  for (const std::string& original : originals) {
    for (unsigned k = 0; k < per_original; ++k) {
      bool truncated = false;
      const std::string input = damage(original, rng, truncated);
      test::write_file(path, input);
      ++c.inputs;
      for (const Reader& r : readers) {
        const auto start = std::chrono::steady_clock::now();
        Outcome o;
        bool counted_format = false;
        try {
          counted_format = r.read(input);
          o = Outcome::Loaded;
        } catch (const std::exception&) {
          o = Outcome::CleanError;
        }
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (ms > c.slowest_ms) {
          c.slowest_ms = ms;
          c.slowest = r.name;
        }
        ++c.runs;
        if (o == Outcome::Loaded) {
          ++c.loads;
          // A truncated copy of the original of this very reader's format.
          if (counted_format && truncated && input.size() + 1 < original.size()) {
            const bool own_format =
                (std::string(r.name) == "TextFileLoader" && original[0] == '#' &&
                 original.compare(0, 9, "#Trainer#") != 0) ||
                (std::string(r.name) == "Trainer::populate" && original.compare(0, 9, "#Trainer#") == 0) ||
                (std::string(r.name) == "VocabularyReader" &&
                 original.compare(0, std::strlen(kVocabMagic), kVocabMagic) == 0);
            if (own_format) {
              ++c.silent_truncations;
              BOOST_ERROR(r.name << " accepted a truncated copy (" << input.size() << " of " << original.size()
                                 << " bytes)");
            }
          }
        } else {
          ++c.clean_errors;
        }
      }
    }
  }
  std::cout << "fuzz: " << c.inputs << " inputs x " << readers.size() << " readers = " << c.runs
            << " runs: " << c.clean_errors << " clean errors, " << c.loads << " loads, 0 crashes, "
            << c.silent_truncations << " truncated copies accepted; slowest run " << c.slowest_ms << " ms ("
            << c.slowest << ")" << std::endl;
  // No reader may take long on an input of a few kilobytes.
  BOOST_CHECK_LT(c.slowest_ms, 2000.0);
}

#ifdef DYNET_LITE_FUZZ_VOCABULARY
// Every cut of a vocabulary file is refused, a cut inside a line included: the
// last line, left without its newline, would otherwise load as another word.
BOOST_AUTO_TEST_CASE(a_vocabulary_file_cut_anywhere_is_refused) {
  const test::TempDir dir("dynet_lite_fuzz");
  const std::string path = dir.file("vocab");
  const std::vector<std::string> words = write_vocabulary(path);
  const std::string whole = test::read_file(path);
  BOOST_CHECK(read_vocabulary(path) == words);
  unsigned refused = 0;
  for (size_t n = 0; n < whole.size(); ++n) {
    test::write_file(path, whole.substr(0, n));
    try {
      read_vocabulary(path);
      BOOST_ERROR("a copy cut to " << n << " of " << whole.size() << " bytes loaded");
    } catch (const dl::io_error& e) {
      ++refused;
      if (n > 0 && whole[n - 1] != '\n')  // cut inside a line: says so, naming the file and the line
        BOOST_CHECK_MESSAGE(std::string(e.what()).find("cut short") != std::string::npos &&
                                std::string(e.what()).find(path + ":") != std::string::npos,
                            e.what());
    }
  }
  BOOST_CHECK_EQUAL(refused, whole.size());
}
#endif
