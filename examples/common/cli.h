#pragma once
// The command line of the example programs: options on CLI11, the corpus options
// they share, and the main() every example runs.
//
// DyNet's own flags (--dynet-seed, --dynet-autobatch, --dynet-mem, ...) are taken
// out of argv by dynet_lite::extract_dynet_params before CLI11 sees the rest.
// A bad option or value ends the program with one line on stderr,
// "<program>: error: <what>", and exit status 2; --help prints the usage.
#include <CLI/CLI.hpp>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace examples {

/// The values a number option accepts: from `min` to `max`, each end included
/// unless marked open.  The default accepts every number.
struct Bounds {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false, max_open = false;
};
/// [min, infinity)
inline Bounds at_least(double min) { return Bounds{min}; }
/// (min, infinity)
inline Bounds above(double min) { return Bounds{min, std::numeric_limits<double>::infinity(), true}; }

/// Sets up a new option set (`CLI::App app{description, program}`, before any
/// option is added): an option given twice takes its last value, and the usage
/// ends with a note on DyNet's flags.
void init_cli(CLI::App& app);

/// `name` takes a non-negative integer (decimal, at most 4e9) within `bounds`.
CLI::Option* add_count(CLI::App& app, const std::string& name, unsigned& target, const std::string& help,
                       Bounds bounds = {});
/// `name` takes a number (as strtod reads it) within `bounds`.
CLI::Option* add_number(CLI::App& app, const std::string& name, float& target, const std::string& help,
                        Bounds bounds = {});
/// `name` takes one of `choices`; anything else is an error listing them.
CLI::Option* add_choice(CLI::App& app, const std::string& name, std::string& target,
                        const std::vector<std::string>& choices, const std::string& help);

/// --model FILE, where training saves the model (in the group `training`), and in
/// the group "using a saved model": --load FILE and `apply` IN (--predict,
/// --score: what the loaded model does with IN), each with its help.
void add_saved_model_options(CLI::App& app, const std::string& training, std::string& model,
                             const std::string& model_help, std::string& load, const std::string& load_help,
                             const std::string& apply, std::string& input, const std::string& apply_help);

/// Where a corpus lives: `folder` under the data folder, with the file names of
/// its splits (`dev` empty where the corpus has none).
struct CorpusLayout {
  std::string folder, train, dev, test;
};

/// --data-dir and the files of a corpus: --train, --test and (where the layout
/// has one) --dev.  Paths left empty take their defaults in resolve_corpus().
struct CorpusOptions {
  std::string data_dir, train, dev, test;

  /// Adds --data-dir, --train, --dev (when the layout has a dev split) and --test;
  /// `files` says what the files hold ("CoNLL-U files").
  void add_corpus_options(CLI::App& app, const CorpusLayout& layout, const std::string& files);
  /// The defaults: the data folder is default_data_dir(); the corpus is its
  /// `layout.folder`, or the data folder itself when that holds the training file.
  void resolve_corpus(const CorpusLayout& layout);
};

/// How an example seeds DyNet's random generator when --dynet-seed is not given.
enum class DefaultSeed { Fixed, Random };

/// The main() of an example: takes DyNet's flags out of argv, parses the rest into
/// `app`, calls `finish_options` (checks across options, derived defaults; it
/// reports a bad combination by throwing std::invalid_argument), initialises
/// DyNet (seed 1 unless --dynet-seed or `seed` says otherwise) and returns what
/// `run` returns.  --help: the usage on stdout, status 0.  A bad option or value:
/// one error line, status 2.  An exception from `run`: one error line, status 1.
int run_main(CLI::App& app, int argc, char** argv, const std::function<void()>& finish_options,
             const std::function<int()>& run, DefaultSeed seed = DefaultSeed::Fixed);

}  // namespace examples
