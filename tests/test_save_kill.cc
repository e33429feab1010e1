#define BOOST_TEST_MODULE save_kill
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/util.h"
#include "common/vocab_file.h"
#include "dynet_lite/dict.h"
#include "dynet_lite/io.h"
#include "dynet_lite/model.h"
#include "test_files.h"
#include "test_utils.h"

// The examples save a model with its vocabulary as one (examples/common/util.h,
// save_model): a save killed at any moment leaves both files old or both new,
// and the temporaries of killed saves do not accumulate.  A child process saves
// generation g + 1 over generation g and is killed with SIGKILL at a random
// moment of the save; the pair left must load, and be generation g or g + 1 in
// both files.

namespace dl = dynet_lite;

namespace {

const char* const kMagic = "dynet_lite-save-kill-test";

struct Vocabulary {
  unsigned generation = 0;
  dl::Dict words;
  examples::VocabularyWriter write() const {
    examples::VocabularyWriter out(kMagic);
    out.number("generation", generation);
    out.dict("words", words);
    return out;
  }
  static Vocabulary load(const std::string& path) {
    examples::VocabularyReader in(path, kMagic, "save-kill test");
    Vocabulary v;
    v.generation = in.number("generation");
    in.dict("words", v.words);
    return v;
  }
};

/// A model of a few megabytes in the text format, so that a save takes long
/// enough to be killed in each of its steps.
struct Model {
  dl::ParameterCollection pc;
  dl::LookupParameter embeddings;
  dl::Parameter weights;
  explicit Model(unsigned generation)
      : embeddings(pc.add_lookup_parameters(2000, {64})), weights(pc.add_parameters({64, 64})) {
    std::vector<float> row(64);
    for (unsigned r = 0; r < 2000; ++r) {
      for (unsigned k = 0; k < 64; ++k)
        row[k] = static_cast<float>(generation) + 0.001f * static_cast<float>(r % 97 + k);
      embeddings.initialize(r, row);
    }
    weights.set_value(std::vector<float>(64 * 64, static_cast<float>(generation)));
  }
  /// The generation of the values loaded (every value must agree).
  unsigned generation() const {
    const std::vector<float> w = dl::as_vector(*const_cast<dl::Parameter&>(weights).values());
    for (float v : w) BOOST_REQUIRE_EQUAL(v, w[0]);
    return static_cast<unsigned>(w[0]);
  }
};

Vocabulary vocabulary(unsigned generation) {
  Vocabulary v;
  v.generation = generation;
  for (unsigned k = 0; k < 300; ++k) v.words.convert("w" + std::to_string(k));
  v.words.convert("generation-" + std::to_string(generation));
  return v;
}

/// Saves generation `g` to `path` in a child process; kills it after `delay`
/// unless it is negative (then waits for it).  Returns whether it was killed
/// before it finished.  `elapsed` receives the time from the fork to the end.
bool save_in_child(const std::string& path, unsigned g, std::chrono::microseconds delay,
                   std::chrono::microseconds* elapsed = nullptr) {
  Model m(g);
  const Vocabulary v = vocabulary(g);
  std::cout.flush();
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    try {
      examples::save_model(m.pc, v, path);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  if (delay.count() >= 0) {
    std::this_thread::sleep_for(delay);
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  BOOST_REQUIRE_EQUAL(::waitpid(pid, &status, 0), pid);
  if (elapsed)
    *elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
  if (WIFSIGNALED(status)) return true;
  BOOST_REQUIRE(WIFEXITED(status));
  BOOST_REQUIRE_EQUAL(WEXITSTATUS(status), 0);
  return false;
}

/// The generation of the pair at `path`; fails the test unless both files load
/// and agree.
unsigned load_pair(const std::string& path) {
  const Vocabulary v = Vocabulary::load(path + ".vocab");
  Model m(0);
  examples::load_model(m.pc, path);
  const unsigned g = m.generation();
  BOOST_REQUIRE_EQUAL(v.generation, g);
  BOOST_REQUIRE(v.words.contains("generation-" + std::to_string(g)));
  return g;
}

/// The temporary files ("*.tmp.<pid>") in `dir`.
std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  BOOST_REQUIRE(d != nullptr);
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.find(".tmp.") != std::string::npos) out.push_back(name);
  }
  ::closedir(d);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(killed_saves_leave_the_old_pair_or_the_new_one) {
  const test::TempDir scratch("dynet_lite_save_kill");
  const std::string& dir = scratch.path();
  const std::string path = scratch.file("model");

  // Generation 1, saved whole; the time of a whole save sets the range of the kills.
  // Generations 1 to 3, saved whole; the quickest of those saves sets the range
  // of the kill moments.
  std::chrono::microseconds save_time = std::chrono::microseconds::max();
  for (unsigned g = 1; g <= 3; ++g) {
    std::chrono::microseconds t{0};
    BOOST_REQUIRE(!save_in_child(path, g, std::chrono::microseconds(-1), &t));
    BOOST_REQUIRE_EQUAL(load_pair(path), g);
    save_time = std::min(save_time, t);
  }

  std::mt19937 rng(20240229);
  std::uniform_int_distribution<long> moment(0, static_cast<long>(save_time.count() * 11 / 10));
  unsigned current = 3, kills = 0, old_pairs = 0, new_pairs = 0, finished = 0, killed_new = 0;
  size_t most_temporaries = 0;
  for (int round = 0; round < 20; ++round) {
    const unsigned target = current + 1;
    const bool killed = save_in_child(path, target, std::chrono::microseconds(moment(rng)));
    if (killed)
      ++kills;
    else
      ++finished;
    const unsigned g = load_pair(path);
    BOOST_REQUIRE_MESSAGE(g == current || g == target,
                          "round " << round << ": generation " << g << ", expected " << current << " or " << target);
    if (g == target) {
      ++new_pairs;
      if (killed) ++killed_new;  // killed after its commit point
      current = target;
    } else {
      ++old_pairs;
    }
    // Each save removes the temporaries of killed saves before it writes its
    // own: at most one of the model's and one of the vocabulary's remain.
    const std::vector<std::string> tmp = temporaries(dir);
    most_temporaries = std::max(most_temporaries, tmp.size());
    BOOST_CHECK_LE(tmp.size(), 2u);
  }
  // A save that completes leaves no temporary at all.
  BOOST_REQUIRE(!save_in_child(path, current + 1, std::chrono::microseconds(-1)));
  BOOST_CHECK_EQUAL(load_pair(path), current + 1);
  BOOST_CHECK(temporaries(dir).empty());

  std::cout << "save_kill: whole save " << save_time.count() / 1000 << " ms; 20 saves: " << kills << " killed, "
            << finished << " finished before the kill; pair found old " << old_pairs << ", new " << new_pairs << " ("
            << killed_new << " of them killed after the commit), neither 0; at most " << most_temporaries
            << " temporary files after a kill, 0 after the last save" << std::endl;
  BOOST_CHECK_EQUAL(old_pairs + new_pairs, 20u);
}
