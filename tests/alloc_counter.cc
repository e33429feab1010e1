#include "alloc_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

// GCC warns about free() on memory from operator new once it inlines these; the
// pair is consistent, both go through malloc/free.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

// noinline: tools that replace the allocator (valgrind) must see every call.
__attribute__((noinline)) void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void operator delete(void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The other forms go through malloc/free too, so that every delete matches its
// new (std::stable_sort's buffer comes from the nothrow form and goes back
// through the sized delete above; AddressSanitizer checks the pairs).
__attribute__((noinline)) void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++g_allocations;
  return std::malloc(n ? n : 1);
}
__attribute__((noinline)) void* operator new[](std::size_t n) { return ::operator new(n); }
__attribute__((noinline)) void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept {
  return ::operator new(n, t);
}
__attribute__((noinline)) void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete[](void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace test {

long allocations() { return g_allocations.load(); }

bool allocations_counted() {
  const long probe = allocations();
  ::operator delete(::operator new(16));
  return allocations() == probe + 1;
}

}  // namespace test
