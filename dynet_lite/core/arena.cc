#include "dynet_lite/core/arena.h"

#include <algorithm>

namespace dynet_lite {

Arena::Arena(Device* device, size_t initial_bytes) : device_(device) {
#ifdef DYNET_LITE_ARENA_POISON
  host_ = device->type == DeviceType::CPU;
#endif
  size_t size = std::max<size_t>(initial_bytes, 4 * 1024);
  chunks_.push_back({static_cast<char*>(device_->allocate(size)), size});
  poison(chunks_.back().base, size);
  select(0, 0);
}

Arena::~Arena() { release_all(); }

void Arena::release_all() {
  for (Chunk& c : chunks_) {
    unpoison(c.base, c.size);
    device_->release(c.base);
  }
  chunks_.clear();
}

void Arena::select(size_t chunk, size_t offset) {
  current_ = chunk;
  base_ = chunks_[chunk].base;
  limit_ = chunks_[chunk].size;
  offset_ = offset;
}

void* Arena::allocate_slow(size_t rounded, size_t bytes) {
  if (current_ == 0 && offset_ == 0 && chunks_.size() > 0 && !keep_chunks_) {
    // Nothing is in use: rather than keep the chunks and add one, trade them all
    // for one that holds this request (a gradient block, a graph's first value)
    // and a quarter more, or the most this arena has held, whichever is larger.
    size_t largest = 0;
    for (const Chunk& c : chunks_) largest = std::max(largest, c.size);
    if (largest < rounded) {
      note_peak();
      constexpr size_t kRound = size_t(64) << 10;
      const size_t want = std::max(rounded, peak_);
      const size_t size = (want + want / 4 + kRound - 1) / kRound * kRound;
      Chunk fresh{static_cast<char*>(device_->allocate(size)), size};
      release_all();
      chunks_.push_back(fresh);
      poison(chunks_.back().base, size);
      select(0, rounded);
      unpoison(base_, bytes);
      return base_;
    }
  }
  if (offset_ > chunks_[current_].reached) chunks_[current_].reached = offset_;
  used_before_current_ += offset_;
  // Use a later chunk (kept from an earlier graph) when it is big enough.
  for (size_t c = current_ + 1; c < chunks_.size(); ++c) {
    if (chunks_[c].size >= rounded) {
      // Chunks between current_ and c stay unused for this graph (kept in
      // their order: passed over).
      if (keep_chunks_) {
        select(c, rounded);
      } else {
        for (size_t k = current_ + 1; k < c; ++k) std::swap(chunks_[k], chunks_[c]);
        select(current_ + 1, rounded);
      }
      unpoison(base_, bytes);
      return base_;
    }
  }
  size_t size = std::max(rounded, chunks_.back().size * 2);
  Chunk fresh{static_cast<char*>(device_->allocate(size)), size};
  poison(fresh.base, size);
  const size_t at = keep_chunks_ ? chunks_.size() : current_ + 1;
  chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(at), fresh);
  select(at, rounded);
  unpoison(base_, bytes);
  return base_;
}

void Arena::reset() {
  note_peak();
  const size_t capacity = capacity_bytes();
  if (!keep_chunks_ && (chunks_.size() > kMaxChunks || (chunks_.size() > 1 && capacity > 2 * peak_ + kMergeSlack))) {
    constexpr size_t kRound = size_t(64) << 10;
    const size_t merged = std::min(capacity, (peak_ + peak_ / 4 + kRound - 1) / kRound * kRound);
    release_all();
    chunks_.push_back({static_cast<char*>(device_->allocate(merged)), merged});
  }
  trim_chunks();
  // Everything handed out since the last reset: the chunks up to the current one.
  for (size_t c = 0; c <= current_ && c < chunks_.size(); ++c) poison(chunks_[c].base, chunks_[c].size);
  used_before_current_ = 0;
  select(0, 0);
}

// Where a chunk's use has grown, the device may give back the memory past it
// (CpuDevice: the rest of the huge page it ends in).
void Arena::trim_chunks() {
  for (Chunk& c : chunks_)
    if (c.reached > c.trimmed) {
      device_->trim(c.base, c.reached, c.size);
      c.trimmed = c.reached;
    }
}

void Arena::rewind_slow(const Mark& m) {
  note_peak();
  poison(chunks_[m.chunk].base + m.offset, chunks_[m.chunk].size - m.offset);
  for (size_t c = m.chunk + 1; c <= current_; ++c) poison(chunks_[c].base, chunks_[c].size);
  // Recompute the bytes used before the marked chunk.
  size_t before = 0;
  for (size_t c = 0; c < m.chunk; ++c) before += chunks_[c].size;  // upper bound is fine for stats
  used_before_current_ = before;
  select(m.chunk, m.offset);
}

void Arena::seek(const Mark& m) {
  note_peak();
  for (size_t c = 0; c < chunks_.size(); ++c) {
    if (c < m.chunk)
      unpoison(chunks_[c].base, chunks_[c].size);
    else
      poison(chunks_[c].base, chunks_[c].size);
  }
  unpoison(chunks_[m.chunk].base, m.offset);
  size_t before = 0;
  for (size_t c = 0; c < m.chunk; ++c) before += chunks_[c].size;  // upper bound, as rewind_slow
  used_before_current_ = before;
  select(m.chunk, m.offset);
}

size_t Arena::capacity_bytes() const {
  size_t s = 0;
  for (const Chunk& c : chunks_) s += c.size;
  return s;
}

}  // namespace dynet_lite
