// Argument: a node argument value (None, scalars, strings, nodes, dtypes, ..., lists).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
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
namespace detail {
class EdgeUpdate;  // detail/edges.hpp: the one writer of a list in a node's arguments
}  // namespace detail

/// Python's None as an argument value (`epgraph::none`).
struct None {
  friend bool operator==(None, None) noexcept { return true; }
  friend bool operator!=(None, None) noexcept { return false; }
};
/// The None value.
inline constexpr None none{};

/// A list of arguments (a Python list or tuple inside FX `args`), e.g. the tensors of `aten.cat`.
using ArgumentList = std::vector<Argument>;

/// A heap-held value with value semantics (deep copy, equality of contents): how Argument keeps
/// its rare large alternatives (string, Device, list) so that an Argument stays 16 bytes.
/// `get()` (or `*`) gives the value. A box is never empty except after being moved from, and an
/// Argument never exposes a moved-from box (a moved-from Argument holds None).
template <class T>
class Boxed {
 public:
  /// Boxes `value`. Throws std::bad_alloc.
  explicit Boxed(T value) : ptr_(std::make_unique<T>(std::move(value))) {}
  /// A deep copy. Throws std::bad_alloc.
  Boxed(const Boxed& other) : ptr_(std::make_unique<T>(*other.ptr_)) {}
  Boxed(Boxed&&) noexcept = default;
  /// Deep copy assignment. Strong guarantee.
  Boxed& operator=(const Boxed& other) {
    ptr_ = std::make_unique<T>(*other.ptr_);
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  ~Boxed() = default;

  /// The boxed value.
  [[nodiscard]] const T& get() const noexcept { return *ptr_; }
  /// The boxed value.
  [[nodiscard]] const T& operator*() const noexcept { return *ptr_; }
  /// The boxed value's members.
  const T* operator->() const noexcept { return ptr_.get(); }
  /// The boxed value, writable (a box owns its value; copies are deep).
  [[nodiscard]] T& get() noexcept { return *ptr_; }

  /// Equal when the boxed values are equal.
  friend bool operator==(const Boxed& a, const Boxed& b) { return *a.ptr_ == *b.ptr_; }
  friend bool operator!=(const Boxed& a, const Boxed& b) { return !(a == b); }

 private:
  std::unique_ptr<T> ptr_;
};

namespace detail {
// How Argument stores an alternative `A`: boxed for the big ones.
template <class A>
struct argument_storage {
  using type = A;
};
template <>
struct argument_storage<std::string> {
  using type = Boxed<std::string>;
};
template <>
struct argument_storage<Device> {
  using type = Boxed<Device>;
};
template <>
struct argument_storage<ArgumentList> {
  using type = Boxed<ArgumentList>;
};
// A node is held as `const Node*`: an Argument never hands out write access to the node it
// names (see Argument::node()).
template <>
struct argument_storage<Node*> {
  using type = const Node*;
};
template <>
struct argument_storage<const Node*> {
  using type = const Node*;
};

// Write access to a node named by an argument, for the graph's own code (detail/edges.hpp,
// Graph's members): only code that holds the non-const Graph owning `node` may call it. Every
// node is created non-const by its Graph, so the cast is well defined.
[[nodiscard]] inline Node* writable_node(const Node* node) noexcept {
  return const_cast<Node*>(node);
}
}  // namespace detail

/// One value in a node's `args` or `kwargs`: what torch.fx calls an `Argument`. It holds exactly
/// one of: None, bool, int64, double, string, a `Node*` (the value another node produces: a
/// tensor, a symbolic int/float/bool, ...), a dtype, a Layout, a MemoryFormat, a Device, or a
/// nested list of these. The kind is the held alternative; there is no separate tag.
///
/// An Argument is 16 bytes: strings, devices and lists are kept in a `Boxed` heap cell, so the
/// `Value` variant visited through `value()` has the alternatives `Boxed<std::string>`,
/// `Boxed<Device>` and `Boxed<ArgumentList>` for them (use `.get()`), and `const Node*` for a
/// node; `is<std::string>()`,
/// `as<std::string>()`, `list()` and the other accessors take the plain types. A moved-from
/// Argument holds None.
///
/// A node held here is non-owning and read-only: `node()` gives a `const Node*`, so a
/// `const Graph&` cannot reach a writable node through its nodes' arguments (as it cannot through
/// `users()`, `prev()` or `next()`). Code that holds the non-const graph gets write access with
/// `Graph::writable(arg.node())`. Arguments are changed on a node only through
/// `Node::set_args`/`set_kwargs`/`replace_input_with`, which keep `users()` in sync.
class Argument {
 public:
  using Value = std::variant<None, bool, std::int64_t, double, Boxed<std::string>, const Node*,
                             dtype, Layout, MemoryFormat, Boxed<Device>, Boxed<ArgumentList>>;

  /// None.
  Argument() noexcept = default;
  /// None.
  Argument(None) noexcept {}
  /// A bool (Python `True`/`False`).
  Argument(bool b) noexcept : value_(b) {}
  /// Any integer type, stored as int64.
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool> &&
                                          !std::is_same_v<I, char>,
                                      int> = 0>
  Argument(I i) noexcept : value_(static_cast<std::int64_t>(i)) {}
  /// A double (Python float).
  Argument(double d) noexcept : value_(d) {}
  /// A string. Throws std::bad_alloc.
  Argument(std::string s) : value_(Boxed<std::string>(std::move(s))) {}
  /// A string. Throws std::bad_alloc.
  Argument(const char* s) : value_(Boxed<std::string>(std::string(s))) {}
  /// A string. Throws std::bad_alloc.
  Argument(std::string_view s) : value_(Boxed<std::string>(std::string(s))) {}
  /// The value produced by `node` (non-owning; must be a node of the same graph when stored on a
  /// node). A null pointer is refused by the setters that store it. Takes `const Node*` (a
  /// `Node*` converts): a const node pointer must not fall to the bool constructor.
  Argument(const Node* node) noexcept : value_(node) {}
  Argument(std::nullptr_t) = delete;  // ambiguous: use epgraph::none or a node
  /// A dtype such as `torch.float32`.
  Argument(dtype d) noexcept : value_(d) {}
  /// A layout such as `torch.strided`.
  Argument(Layout l) noexcept : value_(l) {}
  /// A memory format such as `torch.contiguous_format`.
  Argument(MemoryFormat m) noexcept : value_(m) {}
  /// A device such as `cpu`. Throws std::bad_alloc.
  Argument(Device d) : value_(Boxed<Device>(std::move(d))) {}
  /// A list. Throws std::bad_alloc.
  Argument(ArgumentList list) : value_(Boxed<ArgumentList>(std::move(list))) {}
  /// A list: `Argument{x, y}` is the list `[x, y]`. Throws std::bad_alloc.
  Argument(std::initializer_list<Argument> list)
      : value_(Boxed<ArgumentList>(ArgumentList(list))) {}

  /// A deep copy. Throws std::bad_alloc (strings, devices, lists).
  Argument(const Argument&) = default;
  /// Takes `other`'s value; `other` holds None afterwards.
  Argument(Argument&& other) noexcept : value_(std::move(other.value_)) {
    other.value_.emplace<None>();
  }
  /// Deep copy assignment. Strong guarantee.
  Argument& operator=(const Argument& other) {
    if (this != &other) {
      Argument copy(other);
      *this = std::move(copy);
    }
    return *this;
  }
  /// Takes `other`'s value; `other` holds None afterwards.
  Argument& operator=(Argument&& other) noexcept {
    if (this != &other) {
      value_ = std::move(other.value_);
      other.value_.emplace<None>();
    }
    return *this;
  }
  ~Argument() = default;

  /// The held value (strings, devices and lists are `Boxed`, see the class comment).
  [[nodiscard]] const Value& value() const noexcept { return value_; }

  /// True when the value is an `A` (one of None, bool, std::int64_t, double, std::string, Node*,
  /// dtype, Layout, MemoryFormat, Device, ArgumentList; `Node*` and `const Node*` both ask for a
  /// node).
  template <class A>
  [[nodiscard]] bool is() const noexcept {
    return std::holds_alternative<typename detail::argument_storage<A>::type>(value_);
  }
  /// The value as an `A`; throws std::bad_variant_access when it holds another alternative.
  /// A node is read with node() (there is no `as<Node*>()`: it would hand out write access).
  template <class A>
  [[nodiscard]] const A& as() const {
    static_assert(!std::is_same_v<A, Node*>, "read a node with node(): it gives a const Node*");
    using S = typename detail::argument_storage<A>::type;
    if constexpr (std::is_same_v<S, A>) {
      return std::get<A>(value_);
    } else {
      return std::get<S>(value_).get();
    }
  }
  /// True when the value is None.
  [[nodiscard]] bool is_none() const noexcept { return is<None>(); }
  /// The node when the value is a node, else nullptr. Read-only: with the non-const graph,
  /// `Graph::writable(arg.node())` gives the writable node. O(1).
  [[nodiscard]] const Node* node() const noexcept {
    const auto* n = std::get_if<const Node*>(&value_);
    return n ? *n : nullptr;
  }
  /// The list when the value is a list, else nullptr.
  [[nodiscard]] const ArgumentList* list() const noexcept {
    const auto* l = std::get_if<Boxed<ArgumentList>>(&value_);
    return l ? &l->get() : nullptr;
  }

  /// Structural equality; nodes compare by identity.
  friend bool operator==(const Argument& a, const Argument& b) { return a.value_ == b.value_; }
  friend bool operator!=(const Argument& a, const Argument& b) { return !(a == b); }

 private:
  friend class detail::EdgeUpdate;
  // The list when the value is a list, else nullptr, writable: for EdgeUpdate, which changes the
  // output node's results in place (Graph::insert_result).
  [[nodiscard]] ArgumentList* list_in_place() noexcept {
    auto* l = std::get_if<Boxed<ArgumentList>>(&value_);
    return l ? &l->get() : nullptr;
  }

  Value value_;
};

/// A read-only view of a sequence of `T` stored elsewhere (C++20's `std::span<const T>`):
/// what `Node::args()` (T = Argument) and `Node::users()` (T = Node*) return, so that a node can
/// keep short lists inline. Converts implicitly to `std::vector<T>` (a copy) and compares equal
/// to a vector with the same elements. Valid until the viewed node's arguments or users change
/// or the node is erased.
template <class T>
class ConstSpan {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using const_iterator = const T*;
  using iterator = const T*;
  using const_reference = const T&;
  using reference = const T&;

  ConstSpan() noexcept = default;
  /// Views `size` elements at `data`.
  ConstSpan(const T* data, std::size_t size) noexcept : data_(data), size_(size) {}
  /// Views the elements of `v` (valid while `v` is unchanged).
  ConstSpan(const std::vector<T>& v) noexcept : data_(v.data()), size_(v.size()) {}

  [[nodiscard]] const T* begin() const noexcept { return data_; }
  [[nodiscard]] const T* end() const noexcept { return data_ + size_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  /// Element `i`; no bounds check (i < size()).
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  /// Element `i`. Throws std::out_of_range when i >= size().
  [[nodiscard]] const T& at(std::size_t i) const {
    if (i >= size_) throw std::out_of_range("epgraph::ConstSpan::at: index out of range");
    return data_[i];
  }
  [[nodiscard]] const T& front() const noexcept { return data_[0]; }
  [[nodiscard]] const T& back() const noexcept { return data_[size_ - 1]; }
  /// A copy of the elements. O(size).
  [[nodiscard]] std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }
  /// A copy of the elements. O(size).
  operator std::vector<T>() const { return to_vector(); }

  friend bool operator==(ConstSpan a, ConstSpan b) {
    if (a.size_ != b.size_) return false;
    for (std::size_t i = 0; i < a.size_; ++i) {
      if (!(a.data_[i] == b.data_[i])) return false;
    }
    return true;
  }
  friend bool operator!=(ConstSpan a, ConstSpan b) { return !(a == b); }

 private:
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// A node's positional arguments, read-only (see ConstSpan).
using ArgumentView = ConstSpan<Argument>;

/// Keyword arguments in call order (a Python dict keeps insertion order).
using Kwargs = std::vector<std::pair<std::string, Argument>>;

/// Calls `f(const Node*)` for every node inside `arg`, depth first, in order, repeats included.
/// O(size of the argument).
template <class F>
void for_each_node(const Argument& arg, F&& f) {
  if (arg.is<Node*>()) {
    f(arg.node());  // may be null: the setters refuse it with a clear error
  } else if (const ArgumentList* l = arg.list()) {
    for (const Argument& a : *l) for_each_node(a, f);
  }
}

/// An argument with every node `from` replaced by `to` (`add(x, x)` -> `add(y, y)`). O(size).
[[nodiscard]] inline Argument replace_node_in(const Argument& arg, const Node* from,
                                              const Node* to) {
  if (const Node* n = arg.node()) return n == from ? Argument(to) : arg;
  if (const ArgumentList* l = arg.list()) {
    ArgumentList out;
    out.reserve(l->size());
    for (const Argument& a : *l) out.push_back(replace_node_in(a, from, to));
    return Argument(std::move(out));
  }
  return arg;
}

}  // namespace epgraph
