// Small string helpers every layer uses (std::string_view::starts_with is C++20).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string_view>

namespace epgraph::detail {

// True when `s` begins with `prefix` (an empty prefix included). No-throw; O(prefix size).
inline bool starts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.substr(0, prefix.size()) == prefix;
}

// True when `s` ends with `suffix` (an empty suffix included). No-throw; O(suffix size).
inline bool ends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace epgraph::detail
