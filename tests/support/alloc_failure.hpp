// epgraph test support: allocation failure injection. An executable whose tests include this
// header links support/alloc_failure_replacement.cpp, which replaces its global operator
// new/delete (kept out of the header so that unity builds, which join test files, define it
// once); the replacement behaves like the default one until a test arms it with
// fail_allocation_after(n), which makes the (n+1)-th allocation from then on throw
// std::bad_alloc, once. Allocations made with malloc (libzip, the C library) are not counted.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace epgraph_test {

namespace alloc_detail {
// Allocations left before the one that fails; negative: never fail.
inline long allocations_before_failure = -1;
// Allocations counted since the last arm (for statistics).
inline long allocations_seen = 0;

inline void* checked_malloc(std::size_t size) {
  if (allocations_before_failure == 0) {
    allocations_before_failure = -1;  // fail once
    throw std::bad_alloc();
  }
  if (allocations_before_failure > 0) --allocations_before_failure;
  ++allocations_seen;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
}  // namespace alloc_detail

/// Makes the allocation after the next `n` ones throw std::bad_alloc (n = 0: the next one).
inline void fail_allocation_after(long n) noexcept { alloc_detail::allocations_before_failure = n; }
/// Stops injecting failures.
inline void stop_failing_allocations() noexcept { alloc_detail::allocations_before_failure = -1; }

/// Runs `body()` with its 1st, 2nd, 3rd, ... allocation failing in turn until a run completes
/// without an injected failure. After each injected failure `after_failure(n)` is called (with
/// injection off) to check the state; it returns false to stop early. Returns the number of
/// injected failures. Any exception other than std::bad_alloc from `body` propagates (injection
/// switched off first).
template <class Body, class AfterFailure>
long for_each_allocation_failure(Body body, AfterFailure after_failure, long limit = 1000000) {
  long failures = 0;
  for (long n = 0; n < limit; ++n) {
    bool failed = false;
    fail_allocation_after(n);
    try {
      body();
    } catch (const std::bad_alloc&) {
      failed = true;
    } catch (...) {
      stop_failing_allocations();
      throw;
    }
    stop_failing_allocations();
    if (!failed) break;
    ++failures;
    if (!after_failure(n)) break;
  }
  return failures;
}

}  // namespace epgraph_test
