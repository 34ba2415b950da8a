// epgraph: read, edit, validate and write torch.export exported programs from C++.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "tensor.hpp"

namespace epgraph {

class Node;
class Argument;

/// Python's None as an argument value (`epgraph::none`).
struct None {
  friend bool operator==(None, None) noexcept { return true; }
  friend bool operator!=(None, None) noexcept { return false; }
};
/// The None value.
inline constexpr None none{};

/// A list of arguments (a Python list or tuple inside FX `args`), e.g. the tensors of `aten.cat`.
using ArgumentList = std::vector<Argument>;

/// One value in a node's `args` or `kwargs`: what torch.fx calls an `Argument`. It holds exactly
/// one of: None, bool, int64, double, string, a `Node*` (the value another node produces: a
/// tensor, a symbolic int/float/bool, ...), a dtype, a Layout, a MemoryFormat, a Device, or a
/// nested list of these. The kind is the held alternative; there is no separate tag.
///
/// A `Node*` held here is non-owning. Arguments are changed on a node only through
/// `Node::set_args`/`set_kwargs`/`replace_input_with`, which keep `users()` in sync.
class Argument {
 public:
  using Value = std::variant<None, bool, std::int64_t, double, std::string, Node*, dtype, Layout,
                             MemoryFormat, Device, ArgumentList>;

  /// None.
  Argument() noexcept = default;
  /// None.
  Argument(None) noexcept {}
  /// A bool (Python `True`/`False`).
  Argument(bool b) noexcept : value_(b) {}
  /// Any integer type, stored as int64.
  template <class I,
            std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool> &&
                                 !std::is_same_v<I, char>,
                             int> = 0>
  Argument(I i) noexcept : value_(static_cast<std::int64_t>(i)) {}
  /// A double (Python float).
  Argument(double d) noexcept : value_(d) {}
  /// A string.
  Argument(std::string s) noexcept : value_(std::move(s)) {}
  /// A string.
  Argument(const char* s) : value_(std::string(s)) {}
  /// A string.
  Argument(std::string_view s) : value_(std::string(s)) {}
  /// The value produced by `node` (non-owning; must be a node of the same graph when stored on a
  /// node). A null pointer is refused by the setters that store it.
  Argument(Node* node) noexcept : value_(node) {}
  Argument(std::nullptr_t) = delete;  // ambiguous: use epgraph::none or a node
  /// A dtype such as `torch.float32`.
  Argument(dtype d) noexcept : value_(d) {}
  /// A layout such as `torch.strided`.
  Argument(Layout l) noexcept : value_(l) {}
  /// A memory format such as `torch.contiguous_format`.
  Argument(MemoryFormat m) noexcept : value_(m) {}
  /// A device such as `cpu`.
  Argument(Device d) noexcept : value_(std::move(d)) {}
  /// A list.
  Argument(ArgumentList list) noexcept : value_(std::move(list)) {}
  /// A list: `Argument{x, y}` is the list `[x, y]`.
  Argument(std::initializer_list<Argument> list) : value_(ArgumentList(list)) {}

  /// The held value.
  [[nodiscard]] const Value& value() const noexcept { return value_; }

  /// True when the value is an `A` (one of Value's alternatives).
  template <class A>
  [[nodiscard]] bool is() const noexcept {
    return std::holds_alternative<A>(value_);
  }
  /// The value as an `A`; throws std::bad_variant_access when it holds another alternative.
  template <class A>
  [[nodiscard]] const A& as() const {
    return std::get<A>(value_);
  }
  /// True when the value is None.
  [[nodiscard]] bool is_none() const noexcept { return is<None>(); }
  /// The node when the value is a node, else nullptr.
  [[nodiscard]] Node* node() const noexcept {
    const auto* n = std::get_if<Node*>(&value_);
    return n ? *n : nullptr;
  }
  /// The list when the value is a list, else nullptr.
  [[nodiscard]] const ArgumentList* list() const noexcept {
    return std::get_if<ArgumentList>(&value_);
  }

  /// Structural equality; nodes compare by identity.
  friend bool operator==(const Argument& a, const Argument& b) { return a.value_ == b.value_; }
  friend bool operator!=(const Argument& a, const Argument& b) { return !(a == b); }

 private:
  Value value_;
};

/// Keyword arguments in call order (a Python dict keeps insertion order).
using Kwargs = std::vector<std::pair<std::string, Argument>>;

/// Calls `f(Node*)` for every node inside `arg`, depth first, in order, repeats included.
/// O(size of the argument).
template <class F>
void for_each_node(const Argument& arg, F&& f) {
  if (arg.is<Node*>()) {
    f(arg.as<Node*>());  // may be null: the setters refuse it with a clear error
  } else if (const ArgumentList* l = arg.list()) {
    for (const Argument& a : *l) for_each_node(a, f);
  }
}

/// An argument with every node `from` replaced by `to` (`add(x, x)` -> `add(y, y)`). O(size).
[[nodiscard]] inline Argument replace_node_in(const Argument& arg, const Node* from, Node* to) {
  if (Node* n = arg.node()) return n == from ? Argument(to) : arg;
  if (const ArgumentList* l = arg.list()) {
    ArgumentList out;
    out.reserve(l->size());
    for (const Argument& a : *l) out.push_back(replace_node_in(a, from, to));
    return Argument(std::move(out));
  }
  return arg;
}

}  // namespace epgraph
