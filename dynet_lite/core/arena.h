#pragma once
// A bump allocator over chunks of device memory.  allocate() is a pointer bump;
// reset() is O(1) and keeps every chunk for the next graph; when a request does not
// fit, a new chunk (at least twice the last) is added, so arenas grow by themselves;
// when nothing is in use (the first request after a reset, such as a backward
// pass's gradient block), the chunks are instead traded for one that fits, so
// that a growing graph does not keep the old chunks mapped beside the new one.
// Growth by doubling can leave most of the chunks unused: when the chunks hold
// more than twice what any graph has used, reset() trades them for one chunk of
// that use and a quarter more.  Where a chunk's use has grown, reset() lets the
// device give back the memory past it (Device::trim).
//
// Under AddressSanitizer the part of each host chunk not handed out is poisoned
// (unpoisoned by allocate(), poisoned again by reset() and rewind()), so that an
// access past the end of an allocation, or to memory of a cleared graph, is
// reported although the arena's memory is one big block to the allocator.
#include <cstddef>
#include <utility>
#include <vector>

#include "dynet_lite/devices.h"

#if defined(__SANITIZE_ADDRESS__)
#define DYNET_LITE_ARENA_POISON 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DYNET_LITE_ARENA_POISON 1
#endif
#endif
#ifdef DYNET_LITE_ARENA_POISON
#include <sanitizer/asan_interface.h>
#endif

namespace dynet_lite {

class Arena {
 public:
  /// `initial_bytes` is only a hint for the first chunk (e.g. from --dynet-mem).
  Arena(Device* device, size_t initial_bytes);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  static constexpr size_t kAlign = 64;

  /// `bytes` of memory aligned to kAlign, valid until reset() or rewind() past it.
  void* allocate(size_t bytes) {
    size_t rounded = (bytes + kAlign - 1) & ~(kAlign - 1);
    if (offset_ + rounded <= limit_) {
      void* p = base_ + offset_;
      offset_ += rounded;
      unpoison(p, bytes);
      return p;
    }
    return allocate_slow(rounded, bytes);
  }
  float* allocate_floats(size_t n) { return static_cast<float*>(allocate(n * sizeof(float))); }

  /// Forgets every allocation.  The chunks are kept as they are (their pages are
  /// already mapped and touched; a merged chunk would be fresh memory again, whose
  /// first touch costs a page fault and a kernel zeroing per page), so the next
  /// graph of the same size needs no new chunk.  They are merged into one only
  /// when more than kMaxChunks have accumulated, or when they hold more than twice
  /// the most this arena ever had in use (and kMergeSlack more): the merged chunk
  /// holds that peak and a quarter more.
  void reset();
  static constexpr size_t kMaxChunks = 6;
  static constexpr size_t kMergeSlack = size_t(1) << 20;

  struct Mark {
    size_t chunk = 0;
    size_t offset = 0;
  };
  Mark mark() const { return {current_, offset_}; }
  /// Frees everything allocated after `m` (checkpoint/revert, per-kernel scratch).
  void rewind(const Mark& m) {
    if (m.chunk == current_) {
      if (m.offset < offset_) {
        note_peak();
        poison(base_ + m.offset, offset_ - m.offset);
        offset_ = m.offset;
      }
      return;
    }
    rewind_slow(m);
  }

  /// Sets the position to `m`, forward or back: what lies before it is handed
  /// out again (a compiled program taking back memory whose layout it recorded,
  /// to compute its values again where they were).
  void seek(const Mark& m);
  /// Chunk i's memory: chunks keep their place and their memory until a reset
  /// merges them or a graph's first request trades them for a larger one.
  const char* chunk_base(size_t i) const { return chunks_[i].base; }
  size_t chunk_size(size_t i) const { return chunks_[i].size; }
  /// From now on the chunks keep their memory and their order: the arena grows
  /// by adding chunks after the last, and neither merges nor trades them (the
  /// memory a cache's compiled programs take turns with, whose batched
  /// captures' values stay where they were computed).  Travels with swap().
  void keep_chunks() { keep_chunks_ = true; }

  /// Exchanges the chunks (and the position in them) of two arenas of one device
  /// (compiled programs taking turns with one set of memory).
  void swap(Arena& other) noexcept {
    std::swap(chunks_, other.chunks_);
    std::swap(current_, other.current_);
    std::swap(base_, other.base_);
    std::swap(offset_, other.offset_);
    std::swap(limit_, other.limit_);
    std::swap(used_before_current_, other.used_before_current_);
    std::swap(peak_, other.peak_);
    std::swap(keep_chunks_, other.keep_chunks_);
  }

  size_t capacity_bytes() const;
  size_t used_bytes() const { return used_before_current_ + offset_; }
  /// The most bytes in use at once since the arena was made.
  size_t peak_bytes() const { return used_bytes() > peak_ ? used_bytes() : peak_; }
  size_t num_chunks() const { return chunks_.size(); }
  Device* device() const { return device_; }

 private:
  void* allocate_slow(size_t rounded, size_t bytes);
  void rewind_slow(const Mark& m);
  void release_all();
  void select(size_t chunk, size_t offset);
  // Use only falls at a rewind or a reset: noting it there catches every peak.
  void note_peak() {
    const size_t used = used_before_current_ + offset_;
    if (used > peak_) peak_ = used;
    if (offset_ > chunks_[current_].reached) chunks_[current_].reached = offset_;
  }

  struct Chunk {
    char* base;
    size_t size;
    size_t reached = 0;  // the most of it in use at once
    size_t trimmed = 0;  // `reached` when Device::trim was last called
  };
  void trim_chunks();
  Device* device_;
  std::vector<Chunk> chunks_;
  size_t current_ = 0;
  char* base_ = nullptr;
  size_t offset_ = 0;
  size_t limit_ = 0;
  size_t used_before_current_ = 0;  // bytes allocated in chunks before the current one
  size_t peak_ = 0;                 // see peak_bytes()
  bool keep_chunks_ = false;        // see keep_chunks()

#ifdef DYNET_LITE_ARENA_POISON
  bool host_ = false;  // only host memory has ASan shadow
  void poison(void* p, size_t n) const {
    if (host_ && n) ASAN_POISON_MEMORY_REGION(p, n);
  }
  void unpoison(void* p, size_t n) const {
    if (host_ && n) ASAN_UNPOISON_MEMORY_REGION(p, n);
  }
#else
  void poison(void*, size_t) const {}
  void unpoison(void*, size_t) const {}
#endif
};

}  // namespace dynet_lite
