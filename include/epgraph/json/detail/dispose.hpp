// Tearing down deep nlohmann::json trees without deep recursion or allocation.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Destroying nlohmann::json trees without allocating. Internal to epgraph::json.
//
// nlohmann::json 3.11.2's destructor is noexcept but allocates: json_value::destroy moves the
// children of a NON-EMPTY array or object onto a heap std::vector (`stack.reserve(size)`, then
// push_back) so that deep trees do not recurse. When that allocation fails, std::bad_alloc
// leaves a noexcept destructor: std::terminate. An empty array or object (reserve(0) allocates
// nothing) and every other value (null, boolean, number, string, binary) is destroyed without
// allocating. dismantle() empties a tree bottom-up so that nlohmann never destroys a non-empty
// container; JsonDisposer does it for a tree when its scope ends, on the normal path and when an
// exception leaves the scope.

#include <nlohmann/json.hpp>

namespace epgraph::json::detail {

/// Empties `j` without allocating: each child is dismantled first (so it is a primitive or an
/// empty container), then the container is cleared (destroying elements that are primitives or
/// empty containers allocates nothing; clear() keeps the container's storage and frees it when
/// `j` itself is destroyed). `j` is left an empty array/object or its primitive value. Works for
/// every nlohmann::basic_json (json, ordered_json). Recursion depth is the nesting depth of `j`:
/// the loader refuses documents nested deeper than max_json_depth (512) before parsing.
/// No allocation, never throws. O(number of values in `j`).
template <class J>
void dismantle(J& j) noexcept {
  if (j.is_array()) {
    auto& elements = j.template get_ref<typename J::array_t&>();
    for (auto& e : elements) dismantle(e);
    elements.clear();
  } else if (j.is_object()) {
    auto& members = j.template get_ref<typename J::object_t&>();
    for (auto& m : members) dismantle(m.second);
    members.clear();
  }
}

/// Dismantles the tree it guards when it goes out of scope (normal end or exception), unless
/// release() was called first (the tree is returned to the caller, who then guards it). Declare
/// it right after the value: it then runs before the value's destructor. Holds a reference: the
/// value must outlive the guard.
template <class J>
class BasicJsonDisposer {
 public:
  explicit BasicJsonDisposer(J& j) noexcept : j_(&j) {}
  BasicJsonDisposer(const BasicJsonDisposer&) = delete;
  BasicJsonDisposer& operator=(const BasicJsonDisposer&) = delete;
  ~BasicJsonDisposer() {
    if (j_ != nullptr) dismantle(*j_);
  }
  /// Stops guarding (the value is handed on intact).
  void release() noexcept { j_ = nullptr; }

 private:
  J* j_;
};

using JsonDisposer = BasicJsonDisposer<nlohmann::ordered_json>;

}  // namespace epgraph::json::detail
