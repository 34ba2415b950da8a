// Catch2 checks shared by the edit tests.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <catch2/catch.hpp>
#include <epgraph/program/verify.hpp>

namespace epgraph_test {

// The program is consistent by every check epgraph has: the graph signature agrees with the
// graph (ExecuTorch's validation), the graph is well formed, and the full verifier passes.
template <class Program>
void check_valid(const Program& ep) {
  CHECK_NOTHROW(epgraph::validate_graph_signature(ep));
  CHECK_NOTHROW(ep.graph().lint());
  CHECK_NOTHROW(epgraph::verify(ep));
}

}  // namespace epgraph_test
