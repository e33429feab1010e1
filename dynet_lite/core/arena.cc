#include "dynet_lite/core/arena.h"

#include <algorithm>

namespace dynet_lite {

Arena::Arena(Device* device, size_t initial_bytes) : device_(device) {
  size_t size = std::max<size_t>(initial_bytes, 4 * 1024);
  chunks_.push_back({static_cast<char*>(device_->allocate(size)), size});
  select(0, 0);
}

Arena::~Arena() {
  for (Chunk& c : chunks_) device_->release(c.base);
}

void Arena::select(size_t chunk, size_t offset) {
  current_ = chunk;
  base_ = chunks_[chunk].base;
  limit_ = chunks_[chunk].size;
  offset_ = offset;
}

void* Arena::allocate_slow(size_t rounded) {
  used_before_current_ += offset_;
  // Use a later chunk (kept from an earlier graph) when it is big enough.
  for (size_t c = current_ + 1; c < chunks_.size(); ++c) {
    if (chunks_[c].size >= rounded) {
      // Chunks between current_ and c stay unused for this graph.
      for (size_t k = current_ + 1; k < c; ++k) std::swap(chunks_[k], chunks_[c]);
      select(current_ + 1, rounded);
      return base_;
    }
  }
  size_t size = std::max(rounded, chunks_.back().size * 2);
  Chunk fresh{static_cast<char*>(device_->allocate(size)), size};
  chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(current_ + 1), fresh);
  select(current_ + 1, rounded);
  return base_;
}

void Arena::reset() {
  if (chunks_.size() > kMaxChunks) {
    size_t total = capacity_bytes();
    for (Chunk& c : chunks_) device_->release(c.base);
    chunks_.clear();
    chunks_.push_back({static_cast<char*>(device_->allocate(total)), total});
  }
  used_before_current_ = 0;
  select(0, 0);
}

void Arena::rewind_slow(const Mark& m) {
  // Recompute the bytes used before the marked chunk.
  size_t before = 0;
  for (size_t c = 0; c < m.chunk; ++c) before += chunks_[c].size;  // upper bound is fine for stats
  used_before_current_ = before;
  select(m.chunk, m.offset);
}

size_t Arena::capacity_bytes() const {
  size_t s = 0;
  for (const Chunk& c : chunks_) s += c.size;
  return s;
}

size_t Arena::used_bytes() const { return used_before_current_ + offset_; }

}  // namespace dynet_lite
