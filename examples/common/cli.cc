#include "cli.h"

#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "dynet_lite/init.h"
#include "util.h"

namespace examples {

namespace {

/// "must be >= 0", "must be in [0, 1)": what `bounds` asks of a value.
std::string requirement(const Bounds& b) {
  std::ostringstream s;
  if (b.max == std::numeric_limits<double>::infinity())
    s << "must be " << (b.min_open ? "> " : ">= ") << b.min;
  else
    s << "must be in " << (b.min_open ? "(" : "[") << b.min << ", " << b.max << (b.max_open ? ")" : "]");
  return s.str();
}

bool within(double v, const Bounds& b) {
  return (b.min_open ? v > b.min : v >= b.min) && (b.max_open ? v < b.max : v <= b.max);
}

[[noreturn]] void bad_value(const std::string& name, const std::string& text, const std::string& what) {
  throw CLI::ValidationError(name + " " + what + ", got '" + text + "'");
}

unsigned parse_count(const std::string& name, const std::string& text, const Bounds& bounds) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < 0 || v > 4000000000LL)
    bad_value(name, text, "expects a non-negative integer");
  if (!within(static_cast<double>(v), bounds)) bad_value(name, text, requirement(bounds));
  return static_cast<unsigned>(v);
}

float parse_number(const std::string& name, const std::string& text, const Bounds& bounds) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0) bad_value(name, text, "expects a number");
  const float f = static_cast<float>(v);
  // inf and nan pass no bound a training option means (and a huge double becomes inf as a float).
  if (!std::isfinite(f)) bad_value(name, text, "expects a finite number");
  if (!within(f, bounds)) bad_value(name, text, requirement(bounds));
  return f;
}

std::string join_choices(const std::vector<std::string>& choices) {
  std::string s;
  for (size_t i = 0; i < choices.size(); ++i) s += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return s;
}

}  // namespace

void init_cli(CLI::App& app) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_help_flag("-h,--help", "this text");
  app.get_formatter()->column_width(34);
  app.footer(
      "DyNet's flags are read as well: --dynet-seed S, --dynet-autobatch 0|1|2, --dynet-cse 0|1, --dynet-mem M,\n"
      "--dynet-weight-decay L, --dynet-gpus N, --dynet-devices LIST.");
}

CLI::Option* add_count(CLI::App& app, const std::string& name, unsigned& target, const std::string& help,
                       Bounds bounds) {
  return app
      .add_option_function<std::string>(
          name, [&target, name, bounds](const std::string& text) { target = parse_count(name, text, bounds); }, help)
      ->type_name("N");
}

CLI::Option* add_number(CLI::App& app, const std::string& name, float& target, const std::string& help, Bounds bounds) {
  return app
      .add_option_function<std::string>(
          name, [&target, name, bounds](const std::string& text) { target = parse_number(name, text, bounds); }, help)
      ->type_name("X");
}

CLI::Option* add_choice(CLI::App& app, const std::string& name, std::string& target,
                        const std::vector<std::string>& choices, const std::string& help) {
  return app
      .add_option_function<std::string>(
          name,
          [&target, name, choices](const std::string& text) {
            for (const auto& c : choices)
              if (text == c) {
                target = text;
                return;
              }
            bad_value(name, text, "expects " + join_choices(choices));
          },
          help)
      ->type_name("MODE");
}

void add_saved_model_options(CLI::App& app, const std::string& training, std::string& model,
                             const std::string& model_help, std::string& load, const std::string& load_help,
                             const std::string& apply, std::string& input, const std::string& apply_help) {
  app.add_option("--model", model, model_help)->type_name("FILE")->group(training);
  const char* const saved = "using a saved model";
  app.add_option("--load", load, load_help)->type_name("FILE")->group(saved);
  app.add_option(apply, input, apply_help)->type_name("IN")->group(saved);
}

void CorpusOptions::add_corpus_options(CLI::App& app, const CorpusLayout& layout, const std::string& files) {
  const std::string in = " (default DIR/" + layout.folder + "/";
  app.add_option("--data-dir", data_dir,
                 "folder with " + layout.folder + "/ (default ../shared/data from the project root)")
      ->type_name("DIR");
  app.add_option("--train", train, files + ": training data" + in + layout.train + ")")->type_name("FILE");
  if (!layout.dev.empty())
    app.add_option("--dev", dev, files + ": development data" + in + layout.dev + ")")->type_name("FILE");
  app.add_option("--test", test, files + ": test data" + in + layout.test + ")")->type_name("FILE");
}

void CorpusOptions::resolve_corpus(const CorpusLayout& layout) {
  if (data_dir.empty()) data_dir = default_data_dir();
  std::string dir = data_dir + "/" + layout.folder;
  if (!file_exists(dir) && file_exists(data_dir + "/" + layout.train)) dir = data_dir;
  if (train.empty()) train = dir + "/" + layout.train;
  if (dev.empty() && !layout.dev.empty()) dev = dir + "/" + layout.dev;
  if (test.empty()) test = dir + "/" + layout.test;
}

int run_main(CLI::App& app, int argc, char** argv, const std::function<void()>& finish_options,
             const std::function<int()>& run, DefaultSeed seed) {
  const std::string program = app.get_name();
  dynet_lite::DynetParams params;
  try {
    params = dynet_lite::extract_dynet_params(argc, argv);
    app.parse(argc, argv);
    if (finish_options) finish_options();
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ExtrasError&) {
    const std::string first = app.remaining().empty() ? "" : app.remaining().front();
    std::cerr << program << ": error: " << (first.rfind("-", 0) == 0 ? "unknown option '" : "unexpected argument '")
              << first << "' (see --help)\n";
    return 2;
  } catch (const CLI::ParseError& e) {
    std::cerr << program << ": error: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << program << ": error: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    if (seed == DefaultSeed::Fixed && params.random_seed == 0) params.random_seed = 1;
    dynet_lite::initialize(params);
    return run();
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace examples
