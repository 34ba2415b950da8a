// The iterator and range Graph hands out over its node list (Graph::iterator, Graph::nodes()).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <iterator>

#include "../node.hpp"

namespace epgraph::detail {

// Forward iterator over a node list, yielding `N&` (Node or const Node); with
// `placeholders_only`, it ends at the first node that is not a placeholder.
template <class N>
class NodeIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = Node;
  using difference_type = std::ptrdiff_t;
  using pointer = N*;
  using reference = N&;
  NodeIterator() = default;
  explicit NodeIterator(N* n, bool placeholders_only = false) noexcept
      : node_(n), placeholders_only_(placeholders_only) {
    skip();
  }
  reference operator*() const noexcept { return *node_; }
  pointer operator->() const noexcept { return node_; }
  NodeIterator& operator++() noexcept {
    node_ = node_->next();
    skip();
    return *this;
  }
  NodeIterator operator++(int) noexcept {
    auto old = *this;
    ++*this;
    return old;
  }
  friend bool operator==(const NodeIterator& a, const NodeIterator& b) noexcept {
    return a.node_ == b.node_;
  }
  friend bool operator!=(const NodeIterator& a, const NodeIterator& b) noexcept {
    return a.node_ != b.node_;
  }

 private:
  void skip() noexcept {
    if (placeholders_only_ && node_ != nullptr && node_->op() != OpCode::placeholder) {
      node_ = nullptr;
    }
  }
  N* node_ = nullptr;
  bool placeholders_only_ = false;
};

// A range of nodes for range-for loops.
template <class It>
struct NodeRange {
  It first;
  It last;
  It begin() const noexcept { return first; }
  It end() const noexcept { return last; }
};

}  // namespace epgraph::detail
