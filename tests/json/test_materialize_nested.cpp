// materialize_nested_graphs: the nested graphs a loaded program keeps as records become Graphs
// the program owns; the saver writes them back to the same document, propagate_meta runs them,
// and a pass's change inside a branch is saved. Errors change nothing. The documents are
// torch 2.13's form of a cond (tests/support/cond_documents.hpp);
// tests/interop/test_propagate_meta.py runs the same on programs torch exported.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/json/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "../support/cond_documents.hpp"

namespace {

using MaterializeProgram = epgraph::ExportedProgram<epgraph::HostTensor>;

MaterializeProgram materialize_cond() {
  namespace cd = epgraph_test::cond_documents;
  return epgraph::json::load_exported_program_from_string(
      cd::cond_program(cd::kSinPlus1, cd::kCosMinus1).dump());
}

std::vector<std::string> owned_targets(const MaterializeProgram& ep) {
  std::vector<std::string> out;
  for (const auto& entry : ep.nested_graphs()) out.push_back(entry.first);
  return out;
}

}  // namespace

TEST_CASE("materialize_nested_graphs: a cond's branches become Graphs and save unchanged",
          "[json][nested][materialize]") {
  MaterializeProgram ep = materialize_cond();
  const std::string saved_before = epgraph::json::save_exported_program_to_string(ep);
  CHECK(ep.nested_graphs().empty());
  CHECK_FALSE(ep.graph().find_node("true_graph_0")->meta().serialized.empty());
  // the loader gives the cond (one output, is_hop_single_tensor_return false) the tuple of its
  // output's value, as torch.export.load does: it was unset (41fd629)
  CHECK(epgraph::value_text(ep.graph().find_node("cond")->meta().val) ==
        "(float32[4] stride [1] offset 0)");
  CHECK(epgraph::json::materialize_nested_graphs(ep) == 2);
  CHECK(owned_targets(ep) == std::vector<std::string>{"false_graph_0", "true_graph_0"});
  CHECK(ep.graph().find_node("true_graph_0")->meta().serialized.empty());
  CHECK(ep.graph().find_node("false_graph_0")->meta().serialized.empty());
  const epgraph::Graph& t = *ep.nested_graph("true_graph_0");
  std::vector<std::string> names;
  for (const epgraph::Node& n : t.nodes()) names.push_back(std::string(n.name()));
  CHECK(names == std::vector<std::string>{"x", "sin", "add", "output"});
  CHECK(epgraph::value_text(t.find_node("sin")->meta().val) == "float32[4] stride [1] offset 0");
  // the saver writes the owned graphs where the records were: the same document (its members
  // in torch's order, where this document's records kept nlohmann::json's sorted order)
  CHECK(nlohmann::json::parse(epgraph::json::save_exported_program_to_string(ep)) ==
        nlohmann::json::parse(saved_before));
  // nothing is left to make a Graph of
  CHECK(epgraph::json::materialize_nested_graphs(ep) == 0);
  // propagate_meta runs the branches: every value, theirs included, is torch's
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  CHECK(r.nodes == 8);  // sum_1, gt, cond, getitem, and sin/cos and add in each branch
  CHECK(r.equal == r.nodes);
  CHECK(r.differences.empty());
  CHECK(r.uncomputed.empty());
}

TEST_CASE("materialize_nested_graphs: a value changed in a branch is saved from the Graph",
          "[json][nested][materialize]") {
  MaterializeProgram ep = materialize_cond();
  (void)epgraph::json::materialize_nested_graphs(ep);
  // a pass replaces sin by cos in the true branch
  epgraph::Graph& t = *ep.nested_graph("true_graph_0");
  epgraph::Node* sin = t.find_node("sin");
  epgraph::Node* cos = nullptr;
  {
    const auto at = t.inserting_after(sin);
    cos = t.call_function("torch.ops.aten.cos.default", {t.find_node("x")}, {}, "cos");
  }
  cos->mutable_meta().val = sin->meta().val;
  sin->replace_all_uses_with(cos);
  t.erase_node(sin);
  const MaterializeProgram back = epgraph::json::load_exported_program_from_string(
      epgraph::json::save_exported_program_to_string(ep));
  MaterializeProgram reread = back.clone();
  CHECK(epgraph::json::materialize_nested_graphs(reread) == 2);
  std::vector<std::string> targets;
  for (const epgraph::Node& n : reread.nested_graph("true_graph_0")->nodes()) {
    targets.push_back(std::string(n.target()));
  }
  CHECK(targets == std::vector<std::string>{"x", "torch.ops.aten.cos.default",
                                            "torch.ops.aten.add.Tensor", "output"});
}

TEST_CASE("materialize_nested_graphs: a clash or a bad record changes nothing",
          "[json][nested][materialize]") {
  SECTION("the program already owns a graph of that name") {
    MaterializeProgram ep = materialize_cond();
    (void)ep.add_nested_graph("false_graph_0", std::make_unique<epgraph::Graph>());
    const std::string record = ep.graph().find_node("true_graph_0")->meta().serialized;
    CHECK_THROWS_AS(epgraph::json::materialize_nested_graphs(ep), epgraph::value_error);
    CHECK_THROWS_WITH(epgraph::json::materialize_nested_graphs(ep),
                      "Node 'false_graph_0' reads nested graph 'false_graph_0' from its record, "
                      "and the program already owns a nested graph of that name");
    CHECK(owned_targets(ep) == std::vector<std::string>{"false_graph_0"});
    CHECK(ep.graph().find_node("true_graph_0")->meta().serialized == record);
    CHECK(ep.nested_graph("false_graph_0")->size() == 0);
  }
  SECTION("a record that is not JSON") {
    MaterializeProgram ep = materialize_cond();
    ep.graph().find_node("false_graph_0")->mutable_meta().serialized = "{\"graph\": [";
    const std::string record = ep.graph().find_node("true_graph_0")->meta().serialized;
    CHECK_THROWS_AS(epgraph::json::materialize_nested_graphs(ep),
                    epgraph::json::serialization_error);
    CHECK(ep.nested_graphs().empty());
    CHECK(ep.graph().find_node("true_graph_0")->meta().serialized == record);
  }
  SECTION("two nodes of one target with different records") {
    MaterializeProgram ep = materialize_cond();
    epgraph::Graph& g = ep.graph();
    epgraph::Node* again = nullptr;
    {
      const auto at = g.inserting_after(g.find_node("true_graph_0"));
      again = g.get_attr("true_graph_0");
    }
    again->mutable_meta().serialized = g.find_node("false_graph_0")->meta().serialized;
    CHECK_THROWS_WITH(epgraph::json::materialize_nested_graphs(ep),
                      "Node 'true_graph_1' reads nested graph 'true_graph_0' with a record "
                      "that differs from the one node 'true_graph_0' holds");
    CHECK(ep.nested_graphs().empty());
    CHECK_FALSE(g.find_node("true_graph_0")->meta().serialized.empty());
  }
}
