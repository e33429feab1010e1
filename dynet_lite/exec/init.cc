#include "dynet_lite/init.h"

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "dynet_lite/backends/gpu_backend.h"
#include "dynet_lite/core/random.h"
#include "dynet_lite/except.h"

namespace dynet_lite {

namespace {
DynetParams& params_in_force() {
  static DynetParams p;
  return p;
}

template <class T>
T parse_number(const char* flag, const char* text) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text, &end);
  DYNET_LITE_ARG_CHECK(end != text && *end == '\0' && errno == 0,
                       "initialize: " << flag << " expects a number, got '" << text << "'");
  return static_cast<T>(v);
}
}  // namespace

DynetParams extract_dynet_params(int& argc, char**& argv, bool shared_parameters) {
  DynetParams p;
  p.shared_parameters = shared_parameters;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--dynet", 0) != 0 && arg.rfind("--dynet_", 0) != 0) {
      argv[out++] = argv[i];
      continue;
    }
    std::string flag = arg, value;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    for (char& c : flag)
      if (c == '_') c = '-';
    auto take_value = [&]() -> std::string {
      if (eq != std::string::npos) return value;
      DYNET_LITE_ARG_CHECK(i + 1 < argc, "initialize: " << flag << " needs a value");
      return argv[++i];
    };
    if (flag == "--dynet-mem") {
      p.mem_descriptor = take_value();
    } else if (flag == "--dynet-seed") {
      p.random_seed = parse_number<unsigned>("--dynet-seed", take_value().c_str());
    } else if (flag == "--dynet-autobatch") {
      p.autobatch = parse_number<int>("--dynet-autobatch", take_value().c_str());
      DYNET_LITE_ARG_CHECK(p.autobatch >= 0 && p.autobatch <= 2,
                           "initialize: --dynet-autobatch must be 0, 1 or 2, got " << p.autobatch);
    } else if (flag == "--dynet-cse") {
      p.cse = parse_number<int>("--dynet-cse", take_value().c_str());
      DYNET_LITE_ARG_CHECK(p.cse == 0 || p.cse == 1, "initialize: --dynet-cse must be 0 or 1, got " << p.cse);
    } else if (flag == "--dynet-weight-decay") {
      p.weight_decay = parse_number<float>("--dynet-weight-decay", take_value().c_str());
      DYNET_LITE_ARG_CHECK(p.weight_decay >= 0.f && p.weight_decay < 1.f,
                           "initialize: --dynet-weight-decay must be in [0, 1), got " << p.weight_decay);
    } else if (flag == "--dynet-profiling") {
      p.profiling = parse_number<int>("--dynet-profiling", take_value().c_str());
    } else if (flag == "--dynet-gpus") {
      p.requested_gpus = parse_number<int>("--dynet-gpus", take_value().c_str());
      p.ngpus_requested = true;
    } else if (flag == "--dynet-gpu") {
      p.requested_gpus = 1;
      p.ngpus_requested = true;
    } else if (flag == "--dynet-devices") {
      p.devices = take_value();
      p.ids_requested = true;
    } else {
      DYNET_LITE_ARG_CHECK(false,
                           "initialize: unknown flag '"
                               << arg
                               << "' (known: --dynet-mem, --dynet-seed, --dynet-autobatch, "
                                  "--dynet-cse, --dynet-weight-decay, --dynet-profiling, --dynet-gpus, --dynet-gpu, "
                                  "--dynet-devices)");
    }
  }
  argc = out;
  argv[argc] = nullptr;
  return p;
}

void initialize(DynetParams& params) {
  if (params.random_seed == 0) params.random_seed = std::random_device{}();
  reseed_global_rng(params.random_seed);
  bool wants_gpu = (params.ngpus_requested && params.requested_gpus > 0) ||
                   (params.ids_requested && params.devices.find("GPU") != std::string::npos);
  if (wants_gpu) initialize_gpu_devices(params);
  params_in_force() = params;
}

void initialize(int& argc, char**& argv, bool shared_parameters) {
  DynetParams p = extract_dynet_params(argc, argv, shared_parameters);
  initialize(p);
}

const DynetParams& current_params() { return params_in_force(); }

size_t default_arena_bytes() {
  const std::string& m = params_in_force().mem_descriptor;
  if (m.empty()) return 1u << 20;
  // "N" or "N,N,N[,N]" megabytes; the first figure sizes the value arena.
  double mb = std::strtod(m.c_str(), nullptr);
  return mb > 0 ? static_cast<size_t>(mb * (1u << 20)) : (1u << 20);
}

}  // namespace dynet_lite
