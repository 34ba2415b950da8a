// Tests for ExportedProgram (exported_program.hpp), tensors (tensor.hpp) and ordered_dict.
#include <catch2/catch.hpp>
#include <cstring>
#include <epgraph/ir/print.hpp>
#include <epgraph/program/exported_program.hpp>
#include <string>
#include <utility>
#include <vector>

namespace {
using namespace epgraph;  // NOLINT: test file
using Program = ExportedProgram<HostTensor>;

// [p_w, x] -> add(x, p_w) -> [add]
Program small_program() {
  auto g = std::make_unique<Graph>();
  Node* w = g->placeholder("p_w");
  Node* x = g->placeholder("x");
  Node* add = g->call_function("torch.ops.aten.add.Tensor", {x, w});
  g->output({add, x});
  ExportGraphSignature sig;
  sig.input_specs = {InputSpec(InputKind::PARAMETER, TensorArgument{"p_w"}, "w"),
                     InputSpec(InputKind::USER_INPUT, TensorArgument{"x"})};
  sig.output_specs = {OutputSpec(OutputKind::USER_OUTPUT, TensorArgument{"add"}),
                      OutputSpec(OutputKind::USER_INPUT_MUTATION, TensorArgument{"x"}, "x")};
  ordered_dict<HostTensor> sd;
  sd.insert("w", HostTensor::full(dtype::float32, {2}, 1.5));
  return Program(std::move(g), std::move(sig), std::move(sd));
}
}  // namespace

TEST_CASE("the program follows replace_all_uses_with on output uses", "[program]") {
  Program ep = small_program();
  Graph& g = ep.graph();
  Node* add = g.find_node("add");
  Node* x = g.find_node("x");
  Node* relu = nullptr;
  {
    auto guard = g.inserting_after(add);
    relu = g.call_function("torch.ops.aten.relu.default", {add});
  }
  add->replace_all_uses_with(relu, [&](Node* u) { return u != relu; });
  CHECK(ep.graph_signature().output_specs[0].name() == "relu");
  CHECK(ep.graph_signature().input_specs[1].name() == "x");
  // A returned placeholder replaced: the output spec follows, the input spec keeps its
  // placeholder (torch's hook would rename the input spec too, breaking the signature).
  Node* neg = nullptr;
  {
    auto guard = g.inserting_before(add);
    neg = g.call_function("torch.ops.aten.neg.default", {x});
  }
  x->replace_all_uses_with(neg, [&](Node* u) { return u->op() == OpCode::output; });
  CHECK(ep.graph_signature().output_specs[1].name() == "neg");
  CHECK(ep.graph_signature().output_specs[1].target() == std::optional<std::string>("x"));
  CHECK(ep.graph_signature().input_specs[1].name() == "x");
}

TEST_CASE("the program follows renames, USER_INPUT_MUTATION targets follow the input",
          "[program]") {
  Program ep = small_program();
  Graph& g = ep.graph();
  CHECK(g.rename_node(g.find_node("x"), "input") == "input_1");
  CHECK(ep.graph_signature().input_specs[1].name() == "input_1");
  CHECK(ep.graph_signature().output_specs[1].name() == "input_1");
  CHECK(ep.graph_signature().output_specs[1].target() == std::optional<std::string>("input_1"));
  CHECK(g.rename_node(g.find_node("add"), "sum") == "sum_1");
  CHECK(ep.graph_signature().output_specs[0].name() == "sum_1");
  CHECK(g.rename_node(g.find_node("p_w"), "p_weight") == "p_weight");
  CHECK(ep.graph_signature().input_specs[0].name() == "p_weight");
  CHECK(ep.graph_signature().input_specs[0].target() == std::optional<std::string>("w"));
}

TEST_CASE("moving a program keeps node pointers and the hook", "[program]") {
  Program a = small_program();
  Node* add = a.graph().find_node("add");
  Program b = std::move(a);
  CHECK(b.graph().find_node("add") == add);
  b.graph().rename_node(add, "total");
  CHECK(b.graph_signature().output_specs[0].name() == "total");
  CHECK(a.graph().size() == 0);
  CHECK(a.graph_signature().input_specs.empty());
}

TEST_CASE("clone is deep and independent", "[program]") {
  Program ep = small_program();
  Program copy = ep.clone();
  CHECK(to_string(copy.graph()) == to_string(ep.graph()));
  CHECK(copy.graph_signature() == ep.graph_signature());
  CHECK(copy.state_dict().at("w") == ep.state_dict().at("w"));
  copy.graph().rename_node(copy.graph().find_node("add"), "other");
  CHECK(copy.graph_signature().output_specs[0].name() == "other");
  CHECK(ep.graph_signature().output_specs[0].name() == "add");
  copy.state_dict().erase("w");
  CHECK(ep.state_dict().contains("w"));
  CHECK_THROWS_WITH(Program(nullptr, {}), "Exported program needs a graph");
}

TEST_CASE("HostTensor holds typed bytes and checks shapes", "[tensor]") {
  HostTensor t = HostTensor::full(dtype::float32, {2, 3}, 0.5);
  CHECK(t.numel() == 6);
  CHECK(t.nbytes() == 24);
  CHECK(t.strides() == std::vector<std::int64_t>{3, 1});
  float f = 0;
  std::memcpy(&f, t.bytes().data() + 20, 4);
  CHECK(f == 0.5f);
  HostTensor h = HostTensor::full(dtype::float16, {1}, 1.0);
  CHECK(std::to_integer<int>(h.bytes()[1]) == 0x3c);
  HostTensor bf = HostTensor::full(dtype::bfloat16, {1}, -2.0);
  CHECK(std::to_integer<int>(bf.bytes()[1]) == 0xc0);
  CHECK(tensor_meta_of(t).sizes == std::vector<SymInt>{std::int64_t{2}, std::int64_t{3}});
  CHECK(tensor_meta_of(t).device.str() == "cpu");
  CHECK_THROWS_WITH(HostTensor(dtype::float32, {2, -1}),
                    "Tensor size -1 at dimension 1 is negative");
  CHECK_THROWS_AS(HostTensor(dtype::float32, {1LL << 40, 1LL << 40}), value_error);
  CHECK_THROWS_WITH(HostTensor::from_bytes(dtype::float32, {2, 3}, std::vector<std::byte>(5)),
                    "Tensor data has 5 bytes but dtype float32 and sizes [2, 3] need 24");
  CHECK_THROWS_WITH(HostTensor::full(dtype::complex64, {1}, 1.0),
                    "Cannot fill a tensor of dtype complex64");
  CHECK(parse_dtype("torch.bfloat16") == dtype::bfloat16);
  CHECK(parse_dtype("float") == dtype::float32);
  CHECK_THROWS_WITH(parse_dtype("float31"), "Unknown dtype 'float31'");
}

TEST_CASE("ordered_dict keeps insertion order and refuses duplicates", "[dict]") {
  ordered_dict<int> d;
  d.insert("b", 1);
  d.insert("a", 2);
  d.insert_or_assign("b", 3);
  d.insert_or_assign("c", 4);
  std::vector<std::pair<std::string, int>> items(d.begin(), d.end());
  CHECK(items == std::vector<std::pair<std::string, int>>{{"b", 3}, {"a", 2}, {"c", 4}});
  CHECK_THROWS_WITH(d.insert("a", 9), "Key 'a' already exists");
  CHECK_THROWS_WITH((void)d.at("zz"), "Key 'zz' not found");
  CHECK(d.position("c") == 2);
  CHECK(d.erase("a"));
  CHECK_FALSE(d.erase("a"));
  CHECK(d.position("c") == 1);
  ordered_dict<int> copy = d;
  copy.insert("z", 0);
  CHECK(d.size() == 2);
  CHECK(copy.size() == 3);
}
