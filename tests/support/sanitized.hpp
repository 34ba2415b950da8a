// Whether the tests are built with AddressSanitizer (the CI's asan stage), for the randomized
// tests that run fewer cases there: that stage looks for memory errors, while the g++ stage runs
// every case. SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>

namespace epgraph_test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool sanitized_build = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool sanitized_build = true;
#else
inline constexpr bool sanitized_build = false;
#endif
#else
inline constexpr bool sanitized_build = false;
#endif

/// `all` in ordinary builds, `all / divisor` (at least 1) under AddressSanitizer.
constexpr std::uint64_t cases_for_build(std::uint64_t all, std::uint64_t divisor) {
  return sanitized_build ? (all / divisor > 0 ? all / divisor : 1) : all;
}

}  // namespace epgraph_test
