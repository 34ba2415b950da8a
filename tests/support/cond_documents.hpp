// Programs with torch.cond written as torch 2.13's serializer writes them (the cond node of
// ../shared/cases/passes/d09_copy_nested_graphs/cond.pt2), and the FX-style graft of one onto
// another, for the nested-graph tests of tests/json and tests/archive.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <epgraph/epgraph.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "json_documents.hpp"

namespace epgraph_test::cond_documents {

using nlohmann::json;

// Tensor metadata of dtype `dtype` (7 float32, 12 bool) and sizes `sizes` (contiguous, cpu).
inline json meta(int dtype, std::vector<std::int64_t> sizes) {
  json s = json::array();
  json st = json::array();
  std::int64_t stride = 1;
  std::vector<std::int64_t> strides(sizes.size());
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= sizes[i];
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    s.push_back({{"as_int", sizes[i]}});
    st.push_back({{"as_int", strides[i]}});
  }
  return {{"dtype", dtype},
          {"sizes", s},
          {"requires_grad", false},
          {"device", {{"type", "cpu"}, {"index", nullptr}}},
          {"strides", st},
          {"storage_offset", {{"as_int", 0}}},
          {"layout", 7}};
}
inline json vec4() { return meta(7, {4}); }
inline json tensor_arg(const std::string& name) { return {{"as_tensor", {{"name", name}}}}; }
inline json named(const std::string& name, json arg) {
  return {{"name", name}, {"arg", std::move(arg)}, {"kind", 1}};
}
inline json node(const std::string& target, json inputs, const std::string& out,
                 json hop = nullptr) {
  return {{"target", target},
          {"inputs", std::move(inputs)},
          {"outputs", json::array({tensor_arg(out)})},
          {"metadata", json::object()},
          {"is_hop_single_tensor_return", std::move(hop)},
          {"name", out}};
}
inline json graph_of(json inputs, json nodes, json outputs, json tensor_values) {
  return {{"inputs", std::move(inputs)},       {"outputs", std::move(outputs)},
          {"nodes", std::move(nodes)},         {"tensor_values", std::move(tensor_values)},
          {"sym_int_values", json::object()},  {"sym_bool_values", json::object()},
          {"is_single_tensor_return", false},  {"custom_obj_values", json::object()},
          {"sym_float_values", json::object()}};
}

// A branch graph: x -> <op>(x) -> add(., addend), as torch.export writes `lambda t: t.sin() + 1`.
inline json branch(const std::string& op, std::int64_t addend) {
  json nodes = json::array();
  nodes.push_back(
      node("torch.ops.aten." + op + ".default", json::array({named("self", tensor_arg("x"))}), op));
  nodes.push_back(node("torch.ops.aten.add.Tensor",
                       {named("self", tensor_arg(op)), named("other", {{"as_int", addend}})},
                       "add"));
  return graph_of(json::array({tensor_arg("x")}), nodes, json::array({tensor_arg("add")}),
                  {{"x", vec4()}, {op, vec4()}, {"add", vec4()}});
}

// forward(x) = torch.cond(x.sum() > 0, then, else, (x,)), the cond node as torch 2.13 writes it.
inline json cond_program(const json& then_graph, const json& else_graph) {
  json nodes = json::array();
  nodes.push_back(
      node("torch.ops.aten.sum.default", json::array({named("self", tensor_arg("x"))}), "sum_1"));
  nodes.push_back(node("torch.ops.aten.gt.Scalar",
                       {named("self", tensor_arg("sum_1")), named("other", {{"as_int", 0}})},
                       "gt"));
  nodes.push_back(
      node("torch.ops.higher_order.cond",
           {named("", tensor_arg("gt")),
            named("", {{"as_graph", {{"name", "true_graph_0"}, {"graph", then_graph}}}}),
            named("", {{"as_graph", {{"name", "false_graph_0"}, {"graph", else_graph}}}}),
            named("", {{"as_tensors", json::array({{{"name", "x"}}})}})},
           "getitem", false));
  nodes.back()["name"] = "cond";
  json graph =
      graph_of(json::array({tensor_arg("x")}), nodes, json::array({tensor_arg("getitem")}),
               {{"x", vec4()}, {"sum_1", meta(7, {})}, {"gt", meta(12, {})}, {"getitem", vec4()}});
  return epgraph_test::program_document(
      graph,
      {{"input_specs", json::array({{{"user_input", {{"arg", tensor_arg("x")}}}}})},
       {"output_specs", json::array({{{"user_output", {{"arg", tensor_arg("getitem")}}}}})}});
}

inline const json kSinPlus1 = branch("sin", 1);
inline const json kCosMinus1 = branch("cos", -1);
inline const json kExp = branch("exp", 0);
inline const json kTanh = branch("tanh", 4);

// d3tool's `graft`: graph_copy of `src` onto `dst`'s result, the output rerouted to the copy.
template <class Program>
void graft(Program& dst, const Program& src) {
  epgraph::Graph& g = dst.graph();
  epgraph::Node* out = g.output_node();
  epgraph::Node* result = g.writable(out->args()[0].list()->at(0).node());
  std::unordered_map<const epgraph::Node*, epgraph::Node*> remap = {
      {src.graph().find_node("x"), result}};
  epgraph::Argument copied;
  {
    auto at = g.inserting_before(out);
    copied = g.graph_copy(src.graph(), remap);
  }
  out->replace_input_with(result, g.writable(copied.list()->at(0).node()));
}

// What torch.fx's graph_copy gives instead: after graft(), the copied get_attr nodes
// true_graph_1 / false_graph_1 are replaced by ones reading true_graph_0 / false_graph_0 (named
// true_graph_2 / false_graph_2 by FX's rule) that carry the same records.
template <class Program>
void keep_targets_as_fx_does(Program& ep) {
  epgraph::Graph& g = ep.graph();
  epgraph::Node* cond_1 = g.find_node("cond_1");
  for (const char* copied : {"true_graph_1", "false_graph_1"}) {
    epgraph::Node* renamed = g.find_node(copied);
    epgraph::Node* fx_copy = nullptr;
    {
      auto at = g.inserting_before(cond_1);
      fx_copy = g.create_node(epgraph::OpCode::get_attr,
                              copied[0] == 't' ? "true_graph_0" : "false_graph_0");
    }
    fx_copy->mutable_meta() = renamed->meta();
    cond_1->replace_input_with(renamed, fx_copy);
    g.erase_node(renamed);
  }
}

}  // namespace epgraph_test::cond_documents
