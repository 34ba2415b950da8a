// Tests that a const Graph hands out const nodes and a mutable one mutable nodes (issue 15).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/ir/graph.hpp>
#include <epgraph/program/edit.hpp>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace {
using epgraph::Graph;
using epgraph::Node;

// The return type of each accessor, on a mutable and on a const graph / node.
template <class G>
using first_node_t = decltype(std::declval<G&>().first_node());
template <class G>
using last_node_t = decltype(std::declval<G&>().last_node());
template <class G>
using output_node_t = decltype(std::declval<G&>().output_node());
template <class G>
using find_node_t = decltype(std::declval<G&>().find_node(std::string_view()));
template <class G>
using node_ref_t = decltype(*std::declval<G&>().nodes().begin());
template <class G>
using placeholder_ref_t = decltype(*std::declval<G&>().placeholders().begin());
template <class N>
using next_t = decltype(std::declval<N&>().next());
template <class N>
using prev_t = decltype(std::declval<N&>().prev());
template <class N>
using graph_t = decltype(std::declval<N&>().graph());
template <class N>
using meta_t = decltype(std::declval<N&>().meta());
template <class G>
using requested_t =
    decltype(epgraph::find_requested_placeholder(std::declval<G&>(), std::string_view()));

static_assert(std::is_same_v<first_node_t<Graph>, Node*>);
static_assert(std::is_same_v<first_node_t<const Graph>, const Node*>);
static_assert(std::is_same_v<last_node_t<Graph>, Node*>);
static_assert(std::is_same_v<last_node_t<const Graph>, const Node*>);
static_assert(std::is_same_v<output_node_t<Graph>, Node*>);
static_assert(std::is_same_v<output_node_t<const Graph>, const Node*>);
static_assert(std::is_same_v<find_node_t<Graph>, Node*>);
static_assert(std::is_same_v<find_node_t<const Graph>, const Node*>);
static_assert(std::is_same_v<node_ref_t<Graph>, Node&>);
static_assert(std::is_same_v<node_ref_t<const Graph>, const Node&>);
static_assert(std::is_same_v<placeholder_ref_t<Graph>, Node&>);
static_assert(std::is_same_v<placeholder_ref_t<const Graph>, const Node&>);
static_assert(std::is_same_v<next_t<Node>, Node*>);
static_assert(std::is_same_v<next_t<const Node>, const Node*>);
static_assert(std::is_same_v<prev_t<Node>, Node*>);
static_assert(std::is_same_v<prev_t<const Node>, const Node*>);
static_assert(std::is_same_v<graph_t<Node>, Graph&>);
static_assert(std::is_same_v<graph_t<const Node>, const Graph&>);
// Reading a const node's metadata picks the non-allocating reader.
static_assert(std::is_same_v<meta_t<const Node>, const epgraph::NodeMeta&>);
static_assert(std::is_same_v<requested_t<Graph>, Node*>);
static_assert(std::is_same_v<requested_t<const Graph>, const Node*>);
static_assert(noexcept(std::declval<const Graph&>().find_node(std::string_view())));
static_assert(noexcept(std::declval<Graph&>().find_node(std::string_view())));
}  // namespace

TEST_CASE("const and mutable accessors name the same nodes", "[graph][const]") {
  Graph g;
  const Graph& cg = g;
  CHECK(cg.first_node() == nullptr);
  CHECK(cg.last_node() == nullptr);
  CHECK(cg.output_node() == nullptr);
  Node* x = g.placeholder("x");
  Node* neg = g.call_function("torch.ops.aten.neg.default", {x});
  Node* out = g.output({neg});

  CHECK(cg.first_node() == x);
  CHECK(g.first_node() == x);
  CHECK(cg.last_node() == out);
  CHECK(g.last_node() == out);
  CHECK(cg.output_node() == out);
  CHECK(g.output_node() == out);
  CHECK(cg.find_node("neg") == neg);
  CHECK(g.find_node("neg") == neg);
  CHECK(cg.find_node("absent") == nullptr);
  CHECK(g.find_node("absent") == nullptr);

  std::vector<const Node*> forward;
  for (const Node* n = cg.first_node(); n != nullptr; n = n->next()) forward.push_back(n);
  CHECK(forward == std::vector<const Node*>{x, neg, out});
  std::vector<const Node*> backward;
  for (const Node* n = cg.last_node(); n != nullptr; n = n->prev()) backward.push_back(n);
  CHECK(backward == std::vector<const Node*>{out, neg, x});
  std::vector<const Node*> ranged;
  for (const Node& n : cg.nodes()) ranged.push_back(&n);
  CHECK(ranged == forward);
  CHECK(std::as_const(*x).next() == neg);
  CHECK(x->next() == neg);
  CHECK(neg->prev() == x);
  CHECK(&std::as_const(*neg).graph() == &cg);
  CHECK(&neg->graph() == &g);

  // A const node's meta() reads (empty metadata); the mutable node's writer still writes.
  CHECK(cg.find_node("x")->meta().requested_name.empty());
  x->mutable_meta().requested_name = "wanted";
  CHECK(epgraph::find_requested_placeholder(cg, "wanted") == x);
  CHECK(epgraph::find_requested_placeholder(g, "wanted") == x);
  CHECK(epgraph::find_requested_placeholder(cg, "other") == nullptr);
  CHECK_NOTHROW(cg.lint());
}
