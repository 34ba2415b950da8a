// The operator registry fills itself on first use: a program whose only epgraph header is
// epgraph/ir/graph.hpp checks calls against torch's schemas and judges purity exactly as one
// that includes epgraph.hpp. This executable has no other translation unit that includes
// epgraph (the Catch main does not), so nothing else can have filled the registry: before the
// registry filled itself, aten_schemas.hpp's static initializer did, and only in programs that
// included it (relu(x, x, x) was accepted here and copy_ counted as pure, so DCE erased it).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/ir/graph.hpp>
// The table itself (data only: including it registers nothing), for its size. In compiled mode
// registry.hpp leaves it to the library.
#include <epgraph/ops/detail/aten_schema_table.hpp>
#include <string>

using epgraph::Graph;
using epgraph::Node;

namespace {
std::string node_names(const Graph& g) {
  std::string out;
  for (const Node& n : g.nodes()) out += std::string(n.name()) + " ";
  return out;
}
}  // namespace

TEST_CASE("global_registry holds torch's schemas with only the IR headers included",
          "[registry][ir_only]") {
  const epgraph::FunctionSchema* relu = epgraph::global_registry().find("aten::relu");
  REQUIRE(relu != nullptr);
  CHECK(relu->str() == "aten::relu(Tensor self) -> Tensor");
  CHECK(epgraph::global_registry().size() == epgraph::detail::aten_schema_text_count);
  CHECK(epgraph::global_registry().size() == 3880);
}

TEST_CASE("a call that does not bind is refused with only the IR headers included",
          "[registry][ir_only]") {
  Graph g;
  Node* x = g.placeholder("x");
  CHECK_THROWS_WITH(g.call_function("torch.ops.aten.relu.default", {x, x, x}),
                    "Cannot create node 'relu' (torch.ops.aten.relu.default): 3 positional "
                    "arguments given, but it takes 1; schema: aten::relu(Tensor self) -> Tensor");
  CHECK(node_names(g) == "x ");
}

TEST_CASE("copy_ is impure and survives dead-code elimination with only the IR headers",
          "[registry][ir_only]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* copy = g.call_function("torch.ops.aten.copy_.default", {x, y});
  Node* relu = g.call_function("torch.ops.aten.relu.default", {y});
  g.output({x});
  CHECK(copy->is_impure());
  CHECK_FALSE(relu->is_impure());
  CHECK(g.eliminate_dead_code());  // relu goes, copy_ stays
  CHECK(node_names(g) == "x y copy_ output ");
}
