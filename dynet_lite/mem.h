#pragma once
/// \file mem.h
/// DyNet's host memory allocator interface.  dynet_lite's graphs and parameters
/// take memory from their devices' arenas; these are for programs that call
/// DyNet's allocators themselves.
#include <cstddef>

namespace dynet_lite {

/// Allocates, frees and zeroes blocks aligned to `align` bytes.
struct MemAllocator {
  explicit MemAllocator(int align) : align(align) {}
  MemAllocator(const MemAllocator&) = delete;
  MemAllocator& operator=(const MemAllocator&) = delete;
  virtual ~MemAllocator() = default;
  virtual void* malloc(std::size_t n) = 0;
  virtual void free(void* mem) = 0;
  virtual void zero(void* p, std::size_t n) = 0;
  /// n rounded up to a multiple of align.
  std::size_t round_up_align(std::size_t n) const {
    if (align < 2) return n;
    return ((n + align - 1) / align) * align;
  }
  const int align;
};

/// Host memory aligned to 32 bytes (DyNet's CPUAllocator); malloc throws
/// std::bad_alloc when the memory cannot be had.
struct CPUAllocator : public MemAllocator {
  CPUAllocator() : MemAllocator(32) {}
  void* malloc(std::size_t n) override;
  void free(void* mem) override;
  void zero(void* p, std::size_t n) override;
};

}  // namespace dynet_lite
