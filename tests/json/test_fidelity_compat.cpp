// Fidelity with torch 2.13 (issue 13 items 3 and 8), on documents written here in torch's form:
// - a nested graph several higher-order calls share (`torch.compiler.nested_compile_region`)
//   loads as torch loads it (one get_attr node per call, the later ones named by FX's rule) and
//   saves with every call naming the graph as torch's serializer does;
// - a document of a newer minor schema version keeps its version and its unknown node fields
//   through load -> save, and is refused, naming the field, when it has a field epgraph could
//   only drop.
// The expected values are torch 2.13's (tests/interop/test_fidelity_archive.py checks them
// against torch itself).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cstdint>
#include <epgraph/epgraph.hpp>
#include <epgraph/json/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "../support/json_documents.hpp"

namespace {

using epgraph::HostTensor;
using epgraph::json::load_exported_program_from_string;
using epgraph::json::save_exported_program_to_string;
using epgraph::json::serialization_error;
using nlohmann::json;
using Program = epgraph::ExportedProgram<HostTensor>;

json meta4() {
  return {{"dtype", 7},
          {"sizes", json::array({{{"as_int", 4}}})},
          {"requires_grad", false},
          {"device", {{"type", "cpu"}, {"index", nullptr}}},
          {"strides", json::array({{{"as_int", 1}}})},
          {"storage_offset", {{"as_int", 0}}},
          {"layout", 7}};
}
json tensor_arg(const std::string& name) { return {{"as_tensor", {{"name", name}}}}; }
json named(const std::string& name, json arg) {
  return {{"name", name}, {"arg", std::move(arg)}, {"kind", 1}};
}
json node(const std::string& target, json inputs, const std::string& out, const std::string& name,
          json hop_single = nullptr) {
  return {{"target", target},
          {"inputs", std::move(inputs)},
          {"outputs", json::array({tensor_arg(out)})},
          {"metadata", json::object()},
          {"is_hop_single_tensor_return", std::move(hop_single)},
          {"name", name}};
}
json graph_of(json inputs, json nodes, json outputs, json tensor_values) {
  return {{"inputs", std::move(inputs)},       {"outputs", std::move(outputs)},
          {"nodes", std::move(nodes)},         {"tensor_values", std::move(tensor_values)},
          {"sym_int_values", json::object()},  {"sym_bool_values", json::object()},
          {"is_single_tensor_return", false},  {"custom_obj_values", json::object()},
          {"sym_float_values", json::object()}};
}
json one_io_signature(const std::string& in, const std::string& out) {
  return {{"input_specs", json::array({{{"user_input", {{"arg", tensor_arg(in)}}}}})},
          {"output_specs", json::array({{{"user_output", {{"arg", tensor_arg(out)}}}}})}};
}

// block(x) = sigmoid(x) + 1.0, the nested graph torch.export writes for a nested_compile_region.
json block_graph(double addend = 1.0) {
  json nodes = json::array();
  nodes.push_back(node("torch.ops.aten.sigmoid.default",
                       json::array({named("self", tensor_arg("arg0_1"))}), "sigmoid", "sigmoid"));
  nodes.push_back(
      node("torch.ops.aten.add.Tensor",
           {named("self", tensor_arg("sigmoid")), named("other", {{"as_float", addend}})}, "add",
           "add"));
  return graph_of(json::array({tensor_arg("arg0_1")}), nodes, json::array({tensor_arg("add")}),
                  {{"arg0_1", meta4()}, {"sigmoid", meta4()}, {"add", meta4()}});
}

// forward(x) = block(block(x)): two invoke_subgraph calls of one graph, as torch 2.13 writes
// them (make_cases.py's shared_subgraph.pt2). `second_addend` != 1.0 makes the second call's
// copy of the graph differ from the first.
json shared_subgraph_program(double second_addend = 1.0) {
  auto call = [](json graph, const std::string& in, const std::string& out,
                 const std::string& name) {
    return node("torch.ops.higher_order.invoke_subgraph",
                {named("", {{"as_graph", {{"name", "repeated_subgraph0"}, {"graph", graph}}}}),
                 named("", {{"as_string", "subgraph_0"}}), named("", tensor_arg(in))},
                out, name, false);
  };
  json nodes = json::array();
  nodes.push_back(call(block_graph(), "x", "getitem", "invoke_subgraph"));
  nodes.push_back(call(block_graph(second_addend), "getitem", "getitem_1", "invoke_subgraph_1"));
  json graph =
      graph_of(json::array({tensor_arg("x")}), nodes, json::array({tensor_arg("getitem_1")}),
               {{"x", meta4()}, {"getitem", meta4()}, {"getitem_1", meta4()}});
  return epgraph_test::program_document(graph, one_io_signature("x", "getitem_1"));
}

// What torch 2.13 prints for shared_subgraph_program() after torch.export.load.
const char* const kSharedSubgraphGraph =
    "graph():\n"
    "    %x : [num_users=1] = placeholder[target=x]\n"
    "    %repeated_subgraph0 : [num_users=1] = get_attr[target=repeated_subgraph0]\n"
    "    %invoke_subgraph : [num_users=1] = "
    "call_function[target=torch.ops.higher_order.invoke_subgraph](args = (%repeated_subgraph0, "
    "subgraph_0, %x), kwargs = {})\n"
    "    %getitem : [num_users=1] = call_function[target=operator.getitem](args = "
    "(%invoke_subgraph, 0), kwargs = {})\n"
    "    %repeated_subgraph0_1 : [num_users=1] = get_attr[target=repeated_subgraph0]\n"
    "    %invoke_subgraph_1 : [num_users=1] = "
    "call_function[target=torch.ops.higher_order.invoke_subgraph](args = "
    "(%repeated_subgraph0_1, subgraph_0, %getitem), kwargs = {})\n"
    "    %getitem_1 : [num_users=1] = call_function[target=operator.getitem](args = "
    "(%invoke_subgraph_1, 0), kwargs = {})\n"
    "    return (getitem_1,)";

// y = relu(x) on a [4] tensor, in schema `minor` (8.minor).
json relu_program(int minor) {
  json nodes = json::array({node("torch.ops.aten.relu.default",
                                 json::array({named("self", tensor_arg("x"))}), "relu", "relu")});
  json graph = graph_of(json::array({tensor_arg("x")}), nodes, json::array({tensor_arg("relu")}),
                        {{"x", meta4()}, {"relu", meta4()}});
  json doc = epgraph_test::program_document(graph, one_io_signature("x", "relu"));
  doc["schema_version"]["minor"] = minor;
  return doc;
}

json& relu_node(json& doc) { return doc["graph_module"]["graph"]["nodes"][0]; }

std::string refusal(const std::string& path, const std::string& field) {
  return path + ": field '" + field +
         "' of schema 8.21 is unknown to epgraph, which implements schema 8.20 and keeps unknown "
         "fields only on nodes, at the top level and in graph_module: refusing the file rather "
         "than dropping the field";
}

}  // namespace

TEST_CASE("a nested graph several calls share loads, prints and saves as torch's",
          "[json][fidelity][subgraph]") {
  const json doc = shared_subgraph_program();
  const Program ep = load_exported_program_from_string(doc.dump());
  CHECK(epgraph::to_string(ep.graph()) == kSharedSubgraphGraph);
  const epgraph::Node* first = ep.graph().find_node("repeated_subgraph0");
  const epgraph::Node* second = ep.graph().find_node("repeated_subgraph0_1");
  REQUIRE(first != nullptr);
  REQUIRE(second != nullptr);
  CHECK(first->op() == epgraph::OpCode::get_attr);
  CHECK(second->op() == epgraph::OpCode::get_attr);
  CHECK(second->target() == "repeated_subgraph0");
  CHECK(epgraph::to_string(ep.graph_signature()) ==
        "\n# inputs\nx: USER_INPUT\n\n# outputs\ngetitem_1: USER_OUTPUT\n");

  // Both calls name the graph by the get_attr's target, as torch's serializer does: the saved
  // document is the input document.
  const std::string saved = save_exported_program_to_string(ep);
  const json out = json::parse(saved);
  CHECK(out == doc);
  const json& nodes = out["graph_module"]["graph"]["nodes"];
  CHECK(nodes[1]["inputs"][0]["arg"]["as_graph"]["name"] == "repeated_subgraph0");
  CHECK(epgraph::to_string(load_exported_program_from_string(saved).graph()) ==
        kSharedSubgraphGraph);
}

TEST_CASE("two different nested graphs under one name are refused",
          "[json][fidelity][subgraph][errors]") {
  CHECK_THROWS_AS(load_exported_program_from_string(shared_subgraph_program(2.0).dump()),
                  serialization_error);
  CHECK_THROWS_WITH(
      load_exported_program_from_string(shared_subgraph_program(2.0).dump()),
      "graph_module.graph.nodes[1].inputs[0].arg.as_graph.graph: differs from the nested graph "
      "'repeated_subgraph0' read before under the same name (torch would call the last one from "
      "every node)");
}

TEST_CASE("a newer minor version keeps its version and its unknown node fields",
          "[json][fidelity][forward-compat]") {
  json doc = relu_program(21);
  relu_node(doc)["stream"] = {{"priority", 2}, {"lanes", json::array({1, 2})}};
  relu_node(doc)["cost"] = 3.5;
  doc["future_top_level"] = "kept";
  doc["graph_module"]["future_module_field"] = json::array({1});
  const Program ep = load_exported_program_from_string(doc.dump());
  CHECK(epgraph::to_string(ep.graph()) ==
        "graph():\n"
        "    %x : [num_users=1] = placeholder[target=x]\n"
        "    %relu : [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = "
        "(%x,), kwargs = {})\n"
        "    return (relu,)");
  const json out = json::parse(save_exported_program_to_string(ep));
  CHECK(out["schema_version"] == json({{"major", 8}, {"minor", 21}}));
  CHECK(out == doc);
  // The unknown fields follow the known ones, in the file's order (doc.dump() sorts keys).
  const std::string text = save_exported_program_to_string(ep);
  CHECK(text.find("\"name\":\"relu\",\"cost\":3.5,\"stream\":{\"lanes\":[1,2],\"priority\":2}}") !=
        std::string::npos);

  // An edit elsewhere keeps both: a node added in C++ is valid in any 8.x.
  Program edited = load_exported_program_from_string(doc.dump());
  epgraph::Node* relu = edited.graph().find_node("relu");
  epgraph::Node* neg = nullptr;
  {
    auto at = edited.graph().inserting_after(relu);
    neg = edited.graph().call_function("torch.ops.aten.neg.default", {relu});
  }
  neg->mutable_meta().val = relu->meta().val;
  const json edited_out = json::parse(save_exported_program_to_string(edited));
  CHECK(edited_out["schema_version"]["minor"] == 21);
  CHECK(edited_out["graph_module"]["graph"]["nodes"][0]["stream"]["priority"] == 2);
  CHECK(edited_out["graph_module"]["graph"]["nodes"][1]["target"] == "torch.ops.aten.neg.default");
}

TEST_CASE("versions up to 8.20 are written as 8.20, unknown node fields are kept in any version",
          "[json][fidelity][forward-compat]") {
  json doc = relu_program(20);
  relu_node(doc)["stream"] = 1;
  const json out = json::parse(
      save_exported_program_to_string(load_exported_program_from_string<HostTensor>(doc.dump())));
  CHECK(out == doc);
  json old = relu_program(5);
  const json old_out = json::parse(
      save_exported_program_to_string(load_exported_program_from_string<HostTensor>(old.dump())));
  CHECK(old_out["schema_version"] == json({{"major", 8}, {"minor", 20}}));
  // torch ignores unknown fields elsewhere in such a file (no 8.20 schema has them): so does
  // epgraph.
  json extra = relu_program(20);
  extra["graph_module"]["graph"]["tensor_values"]["x"]["future"] = 1;
  const json extra_out = json::parse(
      save_exported_program_to_string(load_exported_program_from_string<HostTensor>(extra.dump())));
  CHECK_FALSE(extra_out["graph_module"]["graph"]["tensor_values"]["x"].contains("future"));
}

TEST_CASE("a newer minor version with a field epgraph would drop is refused, naming it",
          "[json][fidelity][forward-compat][errors]") {
  json tensor_field = relu_program(21);
  tensor_field["graph_module"]["graph"]["tensor_values"]["x"]["memory_kind"] = "pinned";
  CHECK_THROWS_AS(load_exported_program_from_string(tensor_field.dump()), serialization_error);
  CHECK_THROWS_WITH(load_exported_program_from_string(tensor_field.dump()),
                    refusal("graph_module.graph.tensor_values.x", "memory_kind"));

  json argument_field = relu_program(21);
  relu_node(argument_field)["inputs"][0]["alias"] = true;
  CHECK_THROWS_WITH(load_exported_program_from_string(argument_field.dump()),
                    refusal("graph_module.graph.nodes[0].inputs[0]", "alias"));

  json spec_field = relu_program(21);
  spec_field["graph_module"]["signature"]["input_specs"][0]["user_input"]["doc"] = "x";
  CHECK_THROWS_WITH(load_exported_program_from_string(spec_field.dump()),
                    refusal("graph_module.signature.input_specs[0].user_input", "doc"));

  json graph_field = relu_program(21);
  graph_field["graph_module"]["graph"]["streams"] = json::array();
  CHECK_THROWS_WITH(load_exported_program_from_string(graph_field.dump()),
                    refusal("graph_module.graph", "streams"));

  // A newer major version stays refused.
  json major = relu_program(0);
  major["schema_version"]["major"] = 9;
  CHECK_THROWS_WITH(load_exported_program_from_string(major.dump()),
                    "schema_version: schema major version 9 is newer than the newest supported "
                    "(8)");
}
