#include "dynet_lite/init.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "dynet_lite/backends/gpu_backend.h"
#include "dynet_lite/core/random.h"
#include "dynet_lite/except.h"

namespace dynet_lite {

int autobatch_flag = 0;
int profiling_flag = 0;

namespace {
DynetParams& params_in_force() {
  static DynetParams p;
  return p;
}

// A flag's integer value: digits only (an optional sign), within [lo, hi].
long long parse_integer(const char* flag, const std::string& text, long long lo, long long hi) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  DYNET_LITE_ARG_CHECK(end != text.c_str() && *end == '\0' && errno == 0 && v >= lo && v <= hi,
                       "initialize: " << flag << " expects an integer from " << lo << " to " << hi << ", got '"
                                      << text << "'");
  return v;
}

// A flag's real value: a finite number within [lo, hi).
double parse_real(const char* flag, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  DYNET_LITE_ARG_CHECK(end != text.c_str() && *end == '\0' && errno == 0 && std::isfinite(v) && v >= lo && v < hi,
                       "initialize: " << flag << " expects a number in [" << lo << ", " << hi << "), got '" << text
                                      << "'");
  return v;
}

// The largest arena --dynet-mem may ask for, in megabytes (1 TiB).
constexpr double kMaxMemMb = 1 << 20;

// --dynet-mem: "N" or "N,N,N[,N]" megabytes, each positive and at most kMaxMemMb.
void check_mem_descriptor(const std::string& m) {
  size_t start = 0, parts = 0;
  while (true) {
    const size_t comma = m.find(',', start);
    const std::string part = m.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const double mb = parse_real("--dynet-mem", part, 0, kMaxMemMb + 1);
    DYNET_LITE_ARG_CHECK(mb > 0, "initialize: --dynet-mem expects megabytes above 0, got '" << m << "'");
    ++parts;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  DYNET_LITE_ARG_CHECK(parts == 1 || parts == 3 || parts == 4,
                       "initialize: --dynet-mem expects N or N,N,N[,N] megabytes, got '" << m << "'");
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
      check_mem_descriptor(p.mem_descriptor);
    } else if (flag == "--dynet-seed") {
      p.random_seed = static_cast<unsigned>(parse_integer("--dynet-seed", take_value(), 0, UINT_MAX));
    } else if (flag == "--dynet-autobatch") {
      p.autobatch = static_cast<int>(parse_integer("--dynet-autobatch", take_value(), 0, 2));
    } else if (flag == "--dynet-cse") {
      p.cse = static_cast<int>(parse_integer("--dynet-cse", take_value(), 0, 1));
    } else if (flag == "--dynet-fusion") {
      p.fusion = static_cast<int>(parse_integer("--dynet-fusion", take_value(), 0, 1));
    } else if (flag == "--dynet-weight-decay") {
      p.weight_decay = static_cast<float>(parse_real("--dynet-weight-decay", take_value(), 0, 1));
    } else if (flag == "--dynet-profiling") {
      p.profiling = static_cast<int>(parse_integer("--dynet-profiling", take_value(), 0, 9));
    } else if (flag == "--dynet-gpus") {
      p.requested_gpus = static_cast<int>(parse_integer("--dynet-gpus", take_value(), 0, 1024));
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
                                  "--dynet-cse, --dynet-fusion, --dynet-weight-decay, --dynet-profiling, --dynet-gpus, --dynet-gpu, "
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
  set_default_device(default_device());  // DyNet's default_device is no longer null
  autobatch_flag = params.autobatch;
  profiling_flag = params.profiling;
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
  // "N" or "N,N,N[,N]" megabytes; the first figure sizes the value arena.  A
  // descriptor set directly in DynetParams is checked here too.
  check_mem_descriptor(m);
  const double mb = std::strtod(m.c_str(), nullptr);
  return static_cast<size_t>(mb * (1u << 20));
}

}  // namespace dynet_lite
