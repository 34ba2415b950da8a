// Nested graphs copied between programs, through the JSON writer and reader (issue 31 item 5):
// a cond grafted onto another program with a cond saves each pair of branches under its own
// targets and loads back; a program with two different nested graphs under one target (what
// torch.fx's graph_copy makes) is refused by the saver before anything is written, naming both
// get_attr nodes. The documents are written here in torch 2.13's form (the cond node of
// ../shared/cases/passes/d09_copy_nested_graphs/cond.pt2); tests/interop/test_passes.py
// (test_graft_cond_into_cond) runs the same graft on files torch exported and runs them.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/json/json.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../support/json_documents.hpp"
#include "../support/snapshot.hpp"

namespace {

using epgraph::Argument;
using epgraph::HostTensor;
using epgraph::Node;
using epgraph::OpCode;
using epgraph::json::load_exported_program_from_string;
using epgraph::json::save_exported_program;
using epgraph::json::save_exported_program_to_string;
using epgraph::json::serialization_error;
using nlohmann::json;
using Program = epgraph::ExportedProgram<HostTensor>;

// Tensor metadata of dtype `dtype` (7 float32, 12 bool) and sizes `sizes` (contiguous, cpu).
json meta(int dtype, std::vector<std::int64_t> sizes) {
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
json vec4() { return meta(7, {4}); }
json tensor_arg(const std::string& name) { return {{"as_tensor", {{"name", name}}}}; }
json named(const std::string& name, json arg) {
  return {{"name", name}, {"arg", std::move(arg)}, {"kind", 1}};
}
json node(const std::string& target, json inputs, const std::string& out, json hop = nullptr) {
  return {{"target", target},
          {"inputs", std::move(inputs)},
          {"outputs", json::array({tensor_arg(out)})},
          {"metadata", json::object()},
          {"is_hop_single_tensor_return", std::move(hop)},
          {"name", out}};
}
json graph_of(json inputs, json nodes, json outputs, json tensor_values) {
  return {{"inputs", std::move(inputs)},       {"outputs", std::move(outputs)},
          {"nodes", std::move(nodes)},         {"tensor_values", std::move(tensor_values)},
          {"sym_int_values", json::object()},  {"sym_bool_values", json::object()},
          {"is_single_tensor_return", false},  {"custom_obj_values", json::object()},
          {"sym_float_values", json::object()}};
}

// A branch graph: x -> <op>(x) -> add(., addend), as torch.export writes `lambda t: t.sin() + 1`.
json branch(const std::string& op, std::int64_t addend) {
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
json cond_program(const json& then_graph, const json& else_graph) {
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

const json kSinPlus1 = branch("sin", 1);
const json kCosMinus1 = branch("cos", -1);
const json kExp = branch("exp", 0);
const json kTanh = branch("tanh", 4);

// d3tool's `graft`: graph_copy of `src` onto `dst`'s result, the output rerouted to the copy.
void graft(Program& dst, const Program& src) {
  epgraph::Graph& g = dst.graph();
  Node* out = g.output_node();
  Node* result = out->args()[0].list()->at(0).node();
  std::unordered_map<const Node*, Node*> remap = {{src.graph().find_node("x"), result}};
  Argument copied;
  {
    auto at = g.inserting_before(out);
    copied = g.graph_copy(src.graph(), remap);
  }
  out->replace_input_with(result, copied.list()->at(0).node());
}

// The nested graphs the saved document's cond nodes name, "name" -> graph, in node order.
std::vector<std::pair<std::string, json>> saved_branches(const json& doc) {
  std::vector<std::pair<std::string, json>> out;
  for (const json& n : doc["graph_module"]["graph"]["nodes"]) {
    for (const json& in : n["inputs"]) {
      if (in["arg"].contains("as_graph")) {
        out.emplace_back(in["arg"]["as_graph"]["name"].get<std::string>(),
                         in["arg"]["as_graph"]["graph"]);
      }
    }
  }
  return out;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("a cond grafted onto a cond saves each pair of branches under its own targets",
          "[json][nested][copy]") {
  Program dst = load_exported_program_from_string(cond_program(kExp, kTanh).dump());
  const Program src = load_exported_program_from_string(cond_program(kSinPlus1, kCosMinus1).dump());
  graft(dst, src);
  epgraph::verify(dst);
  const std::string text = save_exported_program_to_string(dst);
  const auto branches = saved_branches(json::parse(text));
  REQUIRE(branches.size() == 4);
  CHECK(branches[0] == std::make_pair(std::string("true_graph_0"), kExp));
  CHECK(branches[1] == std::make_pair(std::string("false_graph_0"), kTanh));
  CHECK(branches[2] == std::make_pair(std::string("true_graph_1"), kSinPlus1));
  CHECK(branches[3] == std::make_pair(std::string("false_graph_1"), kCosMinus1));
  // epgraph's loader reads it back (it refused the file FX's graft gives), as torch would.
  const Program back = load_exported_program_from_string(text);
  CHECK(epgraph::to_string(back.graph()) == epgraph::to_string(dst.graph()));
  CHECK(epgraph::to_string(back.graph())
            .find("%true_graph_1 : [num_users=1] = get_attr[target=true_graph_1]") !=
        std::string::npos);

  // The same graft of a program with the same branches shares them: one target each.
  Program same = load_exported_program_from_string(cond_program(kSinPlus1, kCosMinus1).dump());
  graft(same, src);
  const auto shared = saved_branches(json::parse(save_exported_program_to_string(same)));
  REQUIRE(shared.size() == 4);
  CHECK(shared[2] == std::make_pair(std::string("true_graph_0"), kSinPlus1));
  CHECK(shared[3] == std::make_pair(std::string("false_graph_0"), kCosMinus1));
  CHECK_NOTHROW(load_exported_program_from_string(save_exported_program_to_string(same)));
}

TEST_CASE("the saver refuses two different nested graphs under one target before writing",
          "[json][nested][errors]") {
  // torch.fx's graft: the copied get_attr nodes keep the targets true_graph_0 / false_graph_0.
  Program ep = load_exported_program_from_string(cond_program(kExp, kTanh).dump());
  const Program src = load_exported_program_from_string(cond_program(kSinPlus1, kCosMinus1).dump());
  graft(ep, src);
  epgraph::Graph& g = ep.graph();
  Node* cond_1 = g.find_node("cond_1");
  for (const char* old_target : {"true_graph_1", "false_graph_1"}) {
    Node* renamed = g.find_node(old_target);
    Node* fx_copy = nullptr;
    {
      auto at = g.inserting_before(cond_1);
      fx_copy =
          g.create_node(OpCode::get_attr, old_target[0] == 't' ? "true_graph_0" : "false_graph_0");
    }
    fx_copy->mutable_meta() = renamed->meta();
    cond_1->replace_input_with(renamed, fx_copy);
    g.erase_node(renamed);
  }
  CHECK(epgraph::to_string(g).find(
            "%true_graph_2 : [num_users=1] = get_attr[target=true_graph_0]") != std::string::npos);
  const std::string message =
      "graph_module.graph.nodes: get_attr nodes 'true_graph_0' and 'true_graph_2' both name "
      "target 'true_graph_0' for different nested graphs: torch's loader would call the last one "
      "read from both";
  CHECK_THROWS_AS(save_exported_program_to_string(ep), serialization_error);
  CHECK_THROWS_WITH(save_exported_program_to_string(ep), message);

  // To a file: the file keeps its old content and no temporary file is left.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "epgraph_nested_graph_save_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "model.json";
  { std::ofstream(file) << "old content"; }
  const epgraph_test::Snapshot before = epgraph_test::snapshot(ep);
  CHECK_THROWS_WITH(save_exported_program(ep, file), message);
  CHECK(read_text(file) == "old content");
  CHECK(std::distance(std::filesystem::directory_iterator(dir),
                      std::filesystem::directory_iterator()) == 1);
  CHECK(epgraph_test::snapshot(ep) == before);  // saving changes nothing either
  std::filesystem::remove_all(dir);

  // verify names every pair.
  try {
    epgraph::verify(ep);
    FAIL("verify accepted the program");
  } catch (const epgraph::verification_error& e) {
    CHECK(e.violations() ==
          std::vector<std::string>{"get_attr nodes 'true_graph_0' and 'true_graph_2' both name "
                                   "target 'true_graph_0' for different nested graphs",
                                   "get_attr nodes 'false_graph_0' and 'false_graph_2' both name "
                                   "target 'false_graph_0' for different nested graphs"});
  }
}

}  // namespace
