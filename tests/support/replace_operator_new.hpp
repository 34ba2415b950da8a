// The global operator new/delete replacements of a test executable, forwarding to a function the
// including translation unit defines.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Include in exactly one translation unit per executable, after defining (or declaring)
//
//     void* epgraph_test::replaced_operator_new(std::size_t size);  // throws std::bad_alloc
//
// Every form of operator new calls it (the nothrow forms turn std::bad_alloc into nullptr);
// every operator delete calls std::free, so replaced_operator_new must return memory from
// std::malloc.

#include <cstddef>
#include <cstdlib>
#include <new>

namespace epgraph_test {
void* replaced_operator_new(std::size_t size);
}  // namespace epgraph_test

void* operator new(std::size_t size) { return epgraph_test::replaced_operator_new(size); }
void* operator new[](std::size_t size) { return epgraph_test::replaced_operator_new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return epgraph_test::replaced_operator_new(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return epgraph_test::replaced_operator_new(size);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
