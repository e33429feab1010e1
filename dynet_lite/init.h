#pragma once
/// \file init.h
/// DyNet's process start-up: initialize(argc, argv) reads the --dynet-* flags.
/// Everything it sets is a default that a graph or model can override; nothing
/// here is required (a program that never calls initialize() works too).
#include <string>

namespace dynet_lite {

/// DyNet's global batching flag: the strategy new graphs start with (0 off, 1
/// agenda, 2 depth; ComputationGraph::set_autobatch changes one graph's).
/// initialize() sets it from --dynet-autobatch; programs may assign it.
extern int autobatch_flag;
/// DyNet's global profiling flag: new graphs print their statistics when > 0
/// (--dynet-profiling).
extern int profiling_flag;

struct DynetParams {
  unsigned random_seed = 0;            ///< --dynet-seed; 0 picks a random seed
  std::string mem_descriptor = "";     ///< --dynet-mem: initial arena size hint in MB
  float weight_decay = 0.f;            ///< --dynet-weight-decay
  int autobatch = 0;                   ///< --dynet-autobatch: 0 off, 1 agenda, 2 depth
  int cse = -1;                        ///< --dynet-cse: merge equal expressions; -1 when autobatching
  int fusion = 1;                      ///< --dynet-fusion: fuse element-wise groups while autobatching
  int profiling = 0;                   ///< --dynet-profiling
  bool shared_parameters = false;      ///< accepted for compatibility
  bool ngpus_requested = false;
  bool ids_requested = false;
  bool cpu_requested = false;
  int requested_gpus = -1;             ///< --dynet-gpus
  std::string devices;                 ///< --dynet-devices, e.g. "CPU,GPU:0"
};

/// Reads and removes the --dynet-* flags from argv (so a program's own parser
/// does not see them).  Unknown --dynet-* flags throw naming the flag.
DynetParams extract_dynet_params(int& argc, char**& argv, bool shared_parameters = false);
void initialize(DynetParams& params);
void initialize(int& argc, char**& argv, bool shared_parameters = false);
/// Releases pooled graph memory of the calling thread.
void cleanup();
/// Whether the CUDA backend is compiled into this build.
bool has_cuda_backend();
/// The instruction set of the CPU kernels in use: "avx512", "avx2" or "sse2",
/// the widest this CPU runs, or the one the environment variable DYNET_LITE_ISA
/// names (see the README, "Build options").
const char* cpu_kernels();

/// The settings in force (from initialize(), or the defaults).
const DynetParams& current_params();
/// Initial bytes for a graph's value arena (from --dynet-mem; only a hint).
size_t default_arena_bytes();

}  // namespace dynet_lite
