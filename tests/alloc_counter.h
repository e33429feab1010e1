#pragma once
// Counts heap allocations through operator new (replaced in alloc_counter.cc,
// which a test binary links when it includes this header), to check that
// kernels and updates allocate nothing once warm.
namespace test {

/// Calls to operator new since the program started.
long allocations();

/// Whether allocations() sees allocations: false where a tool (valgrind)
/// replaces operator new with its own.
bool allocations_counted();

/// The calls to operator new made by `f()`, or -1 where they are not counted.
template <class F>
long allocations_during(F&& f) {
  if (!allocations_counted()) return -1;
  const long before = allocations();
  f();
  return allocations() - before;
}

}  // namespace test
