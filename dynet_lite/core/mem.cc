#include "dynet_lite/mem.h"

#include <cstring>
#include <new>

namespace dynet_lite {

void* CPUAllocator::malloc(std::size_t n) {
  // Sized new with an alignment throws std::bad_alloc itself; a zero-byte block
  // still gets a distinct pointer to free.
  return ::operator new(round_up_align(n ? n : 1), std::align_val_t(static_cast<std::size_t>(align)));
}

void CPUAllocator::free(void* mem) {
  if (mem) ::operator delete(mem, std::align_val_t(static_cast<std::size_t>(align)));
}

void CPUAllocator::zero(void* p, std::size_t n) { std::memset(p, 0, n); }

}  // namespace dynet_lite
