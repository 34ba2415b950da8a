// Printing graphs and nodes exactly as torch.fx prints them (print(ep.graph)).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "../detail/compiled_mode.hpp"
#include "argument.hpp"
#include "graph.hpp"
#include "node.hpp"
#include "tensor.hpp"

namespace epgraph {

/// Python's `repr(float)`: the shortest text that reads back as the same double, written the way
/// CPython writes it (`1.0`, `0.1`, `1e-05`, `1e+16`, `inf`, `-inf`, `nan`). O(1).
[[nodiscard]] EPGRAPH_DETAIL_CORE_INLINE std::string python_float_repr(double value);

/// Python's `repr(str)` for printable text: single quotes unless the text holds a single quote
/// and no double quote; backslash, the chosen quote and control characters escaped. O(length).
[[nodiscard]] EPGRAPH_DETAIL_CORE_INLINE std::string python_str_repr(std::string_view s);

/// One argument as torch.fx prints it inside a node line (`_format_arg` in torch/fx/node.py):
/// nodes as `%name`, lists as `[...]`, strings without quotes, floats as Python writes them,
/// dtypes as `torch.float32`, devices as `cpu`. O(size).
[[nodiscard]] EPGRAPH_DETAIL_CORE_INLINE std::string format_arg(const Argument& arg);

/// One node line as torch.fx prints it (`Node.format_node` in torch/fx/node.py), e.g.
/// `%add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%x, 1), kwargs =
/// {})` or `return (add, sum_1)` for the output node. O(size of the node's arguments).
[[nodiscard]] EPGRAPH_DETAIL_CORE_INLINE std::string format_node(const Node& node);

/// The whole graph as `print(graph)` shows it in torch.fx: `graph():` then one line per node,
/// indented by four spaces. O(size of the graph).
[[nodiscard]] EPGRAPH_DETAIL_CORE_INLINE std::string to_string(const Graph& graph);

/// Writes `to_string(graph)` followed by a newline, like Python's `print(graph)`.
EPGRAPH_DETAIL_CORE_INLINE std::ostream& operator<<(std::ostream& os, const Graph& graph);

}  // namespace epgraph

#if EPGRAPH_DETAIL_CORE_DEFINITIONS
#include "detail/print_impl.hpp"  // the definitions (header-only; compiled mode: src/compiled.cpp)
#endif
