// An outlined partition (epgraph/passes/outline_partition.hpp) through JSON: the nested graph the
// program owns is written as the get_attr's `as_graph` argument of the invoke_subgraph node, in
// torch 2.13's form, and reads back as the same program.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/json/json.hpp>
#include <epgraph/passes/outline_partition.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../support/program_builders.hpp"

namespace outline_json_test {

using OJson = nlohmann::ordered_json;

epgraph::Node* call(epgraph::Graph& g, const char* target, epgraph::ArgumentList args,
                    const char* name) {
  epgraph::Node* n = g.call_function(target, std::move(args), {}, name);
  n->mutable_meta().val = epgraph::tensor_meta_of(epgraph_test::tensor({2, 2}));
  n->mutable_meta().other = {{"stack_trace", std::string("line of ") + name}};
  return n;
}

// relu = relu(x); mul = mul(relu, p_w); add = add(mul, 1); neg = neg(add)
// return (neg, mul)
epgraph_test::Program program() {
  auto g = std::make_unique<epgraph::Graph>();
  const epgraph::HostTensor w = epgraph_test::tensor({2, 2}, 2.0);
  epgraph::Node* p_w = epgraph_test::add_placeholder(*g, "p_w", w);
  epgraph::Node* x = epgraph_test::add_placeholder(*g, "x", epgraph_test::tensor({2, 2}));
  epgraph::Node* relu = call(*g, "torch.ops.aten.relu.default", {x}, "relu");
  epgraph::Node* mul = call(*g, "torch.ops.aten.mul.Tensor", {relu, p_w}, "mul");
  epgraph::Node* add = call(*g, "torch.ops.aten.add.Tensor", {mul, std::int64_t{1}}, "add");
  epgraph::Node* neg = call(*g, "torch.ops.aten.neg.default", {add}, "neg");
  g->output({neg, mul});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::parameter("p_w", "w"), epgraph_test::user_input("x")};
  sig.output_specs = {epgraph_test::user_output("neg"), epgraph_test::user_output("mul")};
  epgraph::ordered_dict<epgraph::HostTensor> sd;
  sd.insert("w", w);
  return epgraph_test::Program(std::move(g), std::move(sig), std::move(sd));
}

std::vector<std::string> input_names(const OJson& graph) {
  std::vector<std::string> out;
  for (const OJson& a : graph["inputs"]) out.push_back(a["as_tensor"]["name"].get<std::string>());
  return out;
}

}  // namespace outline_json_test

TEST_CASE("outline_partition: the nested graph is written as torch writes an invoke_subgraph",
          "[outline_partition][json]") {
  using namespace outline_json_test;
  epgraph_test::Program ep = program();
  const epgraph::Graph& g = ep.graph();
  (void)epgraph::outline_partition(ep, {g.find_node("mul"), g.find_node("add")});
  const std::string text = epgraph::json::save_exported_program_to_string(ep);
  const OJson doc = OJson::parse(text);
  const OJson& nodes = doc["graph_module"]["graph"]["nodes"];
  REQUIRE(nodes.size() == 3);  // relu, invoke_subgraph, neg (getitems are its outputs)
  const OJson& n = nodes[1];
  CHECK(n["target"] == "torch.ops.higher_order.invoke_subgraph");
  CHECK(n["name"] == "invoke_subgraph");
  CHECK(n["is_hop_single_tensor_return"] == false);
  CHECK(n["metadata"] == OJson{{"stack_trace", "line of mul"}});
  REQUIRE(n["inputs"].size() == 4);
  for (const OJson& in : n["inputs"]) {  // as torch writes a higher-order op's inputs
    CHECK(in["name"] == "");
    CHECK(in["kind"] == 1);
  }
  CHECK(n["inputs"][1]["arg"] == OJson{{"as_string", "subgraph_0"}});
  CHECK(n["inputs"][2]["arg"] == OJson{{"as_tensor", {{"name", "relu"}}}});
  CHECK(n["inputs"][3]["arg"] == OJson{{"as_tensor", {{"name", "p_w"}}}});
  CHECK(n["outputs"] == OJson::array({OJson{{"as_tensor", {{"name", "getitem"}}}},
                                      OJson{{"as_tensor", {{"name", "getitem_1"}}}}}));
  const OJson& arg = n["inputs"][0]["arg"]["as_graph"];
  CHECK(arg["name"] == "repeated_subgraph0");
  const OJson& sub = arg["graph"];
  CHECK(input_names(sub) == std::vector<std::string>{"relu", "p_w"});
  CHECK(sub["outputs"] == OJson::array({OJson{{"as_tensor", {{"name", "mul"}}}},
                                        OJson{{"as_tensor", {{"name", "add"}}}}}));
  REQUIRE(sub["nodes"].size() == 2);
  CHECK(sub["nodes"][0]["target"] == "torch.ops.aten.mul.Tensor");
  CHECK(sub["nodes"][0]["metadata"] == OJson{{"stack_trace", "line of mul"}});
  CHECK(sub["nodes"][1]["inputs"][1] ==
        OJson{{"name", "other"}, {"arg", {{"as_int", 1}}}, {"kind", 1}});
  CHECK(sub["is_single_tensor_return"] == false);
  std::vector<std::string> values;
  for (auto it = sub["tensor_values"].begin(); it != sub["tensor_values"].end(); ++it) {
    values.push_back(it.key());
  }
  CHECK(values == std::vector<std::string>{"relu", "p_w", "mul", "add"});
  // The outer graph's values: the getitems, not the moved nodes.
  std::vector<std::string> outer;
  const OJson& tv = doc["graph_module"]["graph"]["tensor_values"];
  for (auto it = tv.begin(); it != tv.end(); ++it) outer.push_back(it.key());
  CHECK(outer == std::vector<std::string>{"p_w", "x", "relu", "getitem", "getitem_1", "neg"});

  // Read back: the same graph and signature, the nested graph now kept with its get_attr node
  // (as any graph read from a file); written again, the same text.
  const epgraph_test::Program back =
      epgraph::json::load_exported_program_from_string<epgraph::HostTensor>(text);
  CHECK(epgraph::to_string(back.graph()) == epgraph::to_string(ep.graph()));
  CHECK(epgraph::to_string(back.graph_signature()) == epgraph::to_string(ep.graph_signature()));
  CHECK(back.nested_graphs().empty());
  CHECK(epgraph::json::save_exported_program_to_string(back) == text);
  epgraph::VerifyOptions no_state;  // a JSON record carries no weights
  no_state.check_state = false;
  epgraph::verify(back, no_state);
}
