#pragma once
// The hash mixers of the graph: common subexpression elimination (exec/cse.cc)
// and automatic batching's signatures and plan keys (exec/signature.cc).
#include <cstdint>

#include "dynet_lite/dim.h"

namespace dynet_lite {
namespace hash {

/// Golden-ratio multiplier.
constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

/// One multiply per word: short dependency chains for the per-node lookups of
/// common subexpression elimination.  Finish with finish().
inline uint64_t mix_fast(uint64_t h, uint64_t v) { return (h ^ v) * kGolden; }
/// Spreads the high bits of a mix_fast() chain into the low ones (table slots).
inline uint64_t finish(uint64_t h) { return h ^ (h >> 31); }

/// Shifts and a multiply per word (boost's hash_combine, then a multiply): well
/// spread in every bit without a finishing step; batching signatures and keys.
inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + kGolden + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

/// Multipliers of fold(), one per word.
constexpr uint64_t kFoldMul[6] = {0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL,
                                  0xd6e8feb86659fd93ULL, 0xff51afd7ed558ccdULL, 0xc4ceb9fe1a85ec53ULL};
/// Up to six words folded with independent multiplies, one per word: unlike a
/// chain of mixes, their latencies overlap (batching hashes every node of a
/// graph).  Mix the result once before use.
inline uint64_t fold(const uint64_t* w, unsigned n) {
  uint64_t h = 0, all = 0;
  for (unsigned k = 0; k < n; ++k) {
    h ^= w[k] * kFoldMul[k];
    all ^= w[k];
  }
  return h ^ (all >> 29);
}
/// A shape as fold() of its words: rank and batch, then two dimensions a word.
inline uint64_t fold_dim(const Dim& d) {
  static_assert(1 + (DYNET_MAX_TENSOR_DIM + 1) / 2 <= 6, "a multiplier per word of a shape");
  uint64_t w[1 + (DYNET_MAX_TENSOR_DIM + 1) / 2];
  w[0] = d.nd | (static_cast<uint64_t>(d.bd) << 32);
  unsigned n = 1;
  for (unsigned i = 0; i < d.nd; i += 2) w[n++] = d.d[i] | (i + 1 < d.nd ? static_cast<uint64_t>(d.d[i + 1]) << 32 : 0);
  return fold(w, n);
}

/// Folds a shape into `h` with `mixer`: rank and batch in one word, then two
/// dimensions a word.
template <class Mixer>
inline uint64_t dim(uint64_t h, const Dim& d, Mixer mixer) {
  h = mixer(h, d.nd | (static_cast<uint64_t>(d.bd) << 32));
  for (unsigned i = 0; i < d.nd; i += 2)
    h = mixer(h, d.d[i] | (i + 1 < d.nd ? static_cast<uint64_t>(d.d[i + 1]) << 32 : 0));
  return h;
}

}  // namespace hash
}  // namespace dynet_lite
