// outline_partition (epgraph/passes/outline_partition.hpp): the nested graph the program owns,
// the invoke_subgraph call and its getitems in the partition's place, metadata carried, verify's
// checks of nested graphs, and every refusal with its exact message and the program unchanged.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/passes/outline_partition.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/partition_program.hpp"
#include "support/program_builders.hpp"
#include "support/refusal.hpp"
#include "support/snapshot.hpp"

namespace outline_partition_test {

using Strings = std::vector<std::string>;

epgraph_test::Program program() { return epgraph_test::partition_program(true); }

epgraph::Node* call(epgraph::Graph& g, const char* target, epgraph::ArgumentList args,
                    const char* name) {
  return epgraph_test::partition_call(g, target, std::move(args), name, true);
}

std::vector<const epgraph::Node*> nodes_of(const epgraph_test::Program& ep, const Strings& names) {
  std::vector<const epgraph::Node*> out;
  for (const std::string& n : names) out.push_back(ep.graph().find_node(n));
  return out;
}

std::string meta_of(const epgraph::Node& n) {
  std::string out;
  for (const auto& [k, v] : n.meta().other) out += (out.empty() ? "" : "; ") + k + "=" + v;
  return out;
}

}  // namespace outline_partition_test

TEST_CASE("outline_partition: nested graph, invoke_subgraph call and getitems in its place",
          "[outline_partition]") {
  using namespace outline_partition_test;
  epgraph_test::Program ep = program();
  const Strings keys_before = epgraph_test::keys(ep.state_dict());
  // Operands in order of first use, state included; escaping values in graph order.
  const epgraph::PartitionBoundary b =
      epgraph::partition_boundary(ep, nodes_of(ep, {"scaled", "sub", "add", "mul"}));
  Strings operands;
  for (const epgraph::Node* n : epgraph::outline_operands(b)) operands.emplace_back(n->name());
  CHECK(operands == Strings{"relu", "p_w", "b_s", "neg", "c_k"});

  epgraph::Node* c = epgraph::outline_partition(ep, nodes_of(ep, {"scaled", "sub", "add", "mul"}));
  REQUIRE(c != nullptr);
  CHECK(c->name() == "invoke_subgraph");
  CHECK(epgraph::to_string(ep.graph()) ==
        "graph():\n"
        "    %p_w : [num_users=1] = placeholder[target=p_w]\n"
        "    %p_v : [num_users=1] = placeholder[target=p_v]\n"
        "    %b_s : [num_users=1] = placeholder[target=b_s]\n"
        "    %c_k : [num_users=1] = placeholder[target=c_k]\n"
        "    %x : [num_users=1] = placeholder[target=x]\n"
        "    %relu : [num_users=2] = call_function[target=torch.ops.aten.relu.default](args = "
        "(%x,), kwargs = {})\n"
        "    %neg : [num_users=1] = call_function[target=torch.ops.aten.neg.default](args = "
        "(%relu,), kwargs = {})\n"
        "    %repeated_subgraph0 : [num_users=1] = get_attr[target=repeated_subgraph0]\n"
        "    %invoke_subgraph : [num_users=2] = "
        "call_function[target=torch.ops.higher_order.invoke_subgraph](args = "
        "(%repeated_subgraph0, subgraph_0, %relu, %p_w, %b_s, %neg, %c_k), kwargs = {})\n"
        "    %getitem : [num_users=1] = call_function[target=operator.getitem](args = "
        "(%invoke_subgraph, 0), kwargs = {})\n"
        "    %getitem_1 : [num_users=1] = call_function[target=operator.getitem](args = "
        "(%invoke_subgraph, 1), kwargs = {})\n"
        "    %other : [num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = "
        "(%getitem, %p_v), kwargs = {})\n"
        "    return (getitem_1, other)");
  REQUIRE(ep.nested_graphs().size() == 1);
  const epgraph::Graph* sub = ep.nested_graph("repeated_subgraph0");
  REQUIRE(sub != nullptr);
  CHECK(epgraph::to_string(*sub) ==
        "graph():\n"
        "    %relu : [num_users=1] = placeholder[target=relu]\n"
        "    %p_w : [num_users=1] = placeholder[target=p_w]\n"
        "    %b_s : [num_users=1] = placeholder[target=b_s]\n"
        "    %neg : [num_users=1] = placeholder[target=neg]\n"
        "    %c_k : [num_users=1] = placeholder[target=c_k]\n"
        "    %mul : [num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = "
        "(%relu, %p_w), kwargs = {})\n"
        "    %add : [num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = "
        "(%mul, %b_s), kwargs = {})\n"
        "    %sub : [num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = "
        "(%add, %neg), kwargs = {})\n"
        "    %scaled : [num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = "
        "(%sub, %c_k), kwargs = {})\n"
        "    return (add, scaled)");
  // Inputs, outputs, specs and state are unchanged; the output spec follows `scaled`'s getitem.
  CHECK(epgraph::to_string(ep.graph_signature()) ==
        "\n# inputs\n"
        "p_w: PARAMETER target='w'\n"
        "p_v: PARAMETER target='v'\n"
        "b_s: BUFFER target='s' persistent=True\n"
        "c_k: CONSTANT_TENSOR target='k'\n"
        "x: USER_INPUT\n"
        "\n# outputs\n"
        "getitem_1: USER_OUTPUT\n"
        "other: USER_OUTPUT\n");
  CHECK(epgraph_test::keys(ep.state_dict()) == keys_before);
  CHECK(epgraph_test::keys(ep.constants()) == Strings{"k"});
  // Values: the call's tuple, each getitem's tensor; metadata carried.
  CHECK(c->meta().val.describe() == "a tuple of 2 values");
  REQUIRE(c->meta().val.elements() != nullptr);
  CHECK(epgraph_test::describe(*(*c->meta().val.elements())[1].tensor()) == "float32[2, 2]");
  const epgraph::Node* item = ep.graph().find_node("getitem_1");
  REQUIRE(item != nullptr);
  CHECK(item->meta().val.tensor() != nullptr);
  CHECK(meta_of(*item) == "stack_trace=line of mul; nn_module_stack=L__self__,,M");
  CHECK(meta_of(*c) == "stack_trace=line of mul; nn_module_stack=L__self__,,M");
  CHECK(meta_of(*sub->find_node("sub")) == "stack_trace=line of sub; nn_module_stack=L__self__,,M");
  CHECK(sub->find_node("sub")->meta().val.tensor() != nullptr);
  CHECK(sub->find_node("relu")->meta().val.tensor() != nullptr);
  epgraph::verify(ep);
  // A second partition gets the next target and identifier.
  epgraph::Node* c2 = epgraph::outline_partition(ep, nodes_of(ep, {"other"}));
  CHECK(c2->name() == "invoke_subgraph_1");
  CHECK(c2->args()[0].node()->target() == "repeated_subgraph1");
  CHECK(c2->args()[1].as<std::string>() == "subgraph_1");
  epgraph::verify(ep);
  // clone copies the nested graphs.
  const epgraph_test::Program copy = ep.clone();
  CHECK(epgraph_test::snapshot(copy) == epgraph_test::snapshot(ep));
}

TEST_CASE("outline_partition: a computed mutation is written back through its getitem",
          "[outline_partition]") {
  using namespace outline_partition_test;
  // add = num_batches_tracked + 1 is written back (BUFFER_MUTATION): the spec follows its getitem.
  epgraph_test::Program ep = epgraph_test::linear_batchnorm_program();
  ep.graph().find_node("add")->mutable_meta().val =
      epgraph::tensor_meta_of(epgraph::HostTensor::zeros(epgraph::dtype::int64, {}));
  epgraph::Node* c = epgraph::outline_partition(ep, nodes_of(ep, {"add"}));
  CHECK(epgraph::format_node(*c) ==
        "%invoke_subgraph : [num_users=1] = "
        "call_function[target=torch.ops.higher_order.invoke_subgraph](args = "
        "(%repeated_subgraph0, subgraph_0, %b_bn_num_batches_tracked), kwargs = {})");
  CHECK(epgraph_test::output_spec_strings(ep.graph_signature())[2] ==
        "getitem_5: BUFFER_MUTATION target='bn.num_batches_tracked'");
  CHECK(epgraph::to_string(*ep.nested_graph("repeated_subgraph0")) ==
        "graph():\n"
        "    %b_bn_num_batches_tracked : [num_users=1] = "
        "placeholder[target=b_bn_num_batches_tracked]\n"
        "    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = "
        "(%b_bn_num_batches_tracked, 1), kwargs = {})\n"
        "    return (add,)");
  epgraph::verify(ep);
}

TEST_CASE("outline_partition: refusals name the node and change nothing", "[outline_partition]") {
  using namespace outline_partition_test;
  using epgraph::value_error;
  using epgraph_test::check_refused;
  epgraph_test::Program ep = program();
  const auto outline = [&ep](const Strings& names) {
    return [&ep, names]() { (void)epgraph::outline_partition(ep, nodes_of(ep, names)); };
  };
  check_refused<value_error>(ep, outline({}), "outline_partition: the partition is empty");
  // {mul, sub}: mul -> add -> sub leaves it and comes back.
  check_refused<value_error>(ep, outline({"mul", "sub"}),
                             "validate_partition: the partition {mul, sub} is not convex: the "
                             "path mul -> add -> sub leaves it after 'mul' and re-enters it at "
                             "'sub'");
  check_refused<value_error>(
      ep, outline({"x", "relu"}),
      "outline_partition: node 'x' is a placeholder node; a partition holds call_function nodes "
      "only");
  // An in-place write of a value from outside: relu_(relu) in the partition {relu_, tail}.
  epgraph_test::Program inplace = program();
  {
    epgraph::Graph& g = inplace.graph();
    auto at = g.inserting_before(g.output_node());
    epgraph::Node* w = call(g, "torch.ops.aten.relu_.default", {g.find_node("relu")}, "relu_");
    epgraph::Node* tail = call(g, "torch.ops.aten.neg.default", {w}, "tail");
    g.output_node()->set_args(epgraph::ArgumentList{epgraph::Argument(
        epgraph::ArgumentList{epgraph::Argument(g.find_node("scaled")), epgraph::Argument(tail)})});
    inplace.graph_signature().output_specs[1] = epgraph_test::user_output("tail");
  }
  check_refused<value_error>(
      inplace,
      [&]() {
        (void)epgraph::outline_partition(inplace, nodes_of(inplace, {"relu_", "tail"}));
      },
      "outline_partition: node 'relu_' (torch.ops.aten.relu_.default) writes 'relu' in place, "
      "which the partition reads from outside; the nested graph of an invoke_subgraph must not "
      "mutate its operands");
  // Nothing of the partition is used outside it.
  epgraph_test::Program dead = program();
  {
    epgraph::Graph& g = dead.graph();
    auto at = g.inserting_before(g.output_node());
    (void)call(g, "torch.ops.aten.neg.default", {g.find_node("other")}, "unused");
  }
  check_refused<value_error>(
      dead, [&]() { (void)epgraph::outline_partition(dead, nodes_of(dead, {"unused"})); },
      "outline_partition: no value of the partition is used outside it (nothing to return)");
  // A custom object cannot be an operand.
  epgraph_test::Program objects = epgraph_test::constants_program();
  check_refused<value_error>(
      objects,
      [&]() { (void)epgraph::outline_partition(objects, nodes_of(objects, {"call_torchbind"})); },
      "outline_partition: the partition reads 'obj', a CUSTOM_OBJ input; only user inputs, "
      "parameters, buffers and tensor constants can become operands of an invoke_subgraph "
      "call");
  // An in-place write outside between two readers inside (mul reads relu before relu_ writes
  // it, sub after): no place for the call keeps both orders.
  epgraph_test::Program between = program();
  {
    epgraph::Graph& g = between.graph();
    auto at = g.inserting_before(g.find_node("sub"));
    (void)call(g, "torch.ops.aten.relu_.default", {g.find_node("relu")}, "relu_");
    g.find_node("sub")->replace_input_with(g.find_node("neg"), g.find_node("relu"));
  }
  check_refused<value_error>(
      between,
      [&]() {
        (void)epgraph::outline_partition(between, nodes_of(between, {"mul", "add", "sub"}));
      },
      "outline_partition: 'relu_', outside the partition, comes between 'mul' and 'sub' of it "
      "('relu_' writes 'relu' in place and 'mul' reads it; 'relu_' writes 'relu' in place and "
      "'sub' reads it): one invoke_subgraph call cannot come both before and after it");
  // write_relu must follow the call (mul read relu before it), write_neg must precede it (sub
  // reads neg after it), and write_relu comes first.
  epgraph_test::Program crossed = program();
  {
    epgraph::Graph& g = crossed.graph();
    auto at = g.inserting_before(g.find_node("sub"));
    (void)call(g, "torch.ops.aten.relu_.default", {g.find_node("relu")}, "write_relu");
    (void)call(g, "torch.ops.aten.relu_.default", {g.find_node("neg")}, "write_neg");
  }
  check_refused<value_error>(
      crossed,
      [&]() {
        (void)epgraph::outline_partition(crossed, nodes_of(crossed, {"mul", "add", "sub"}));
      },
      "outline_partition: one invoke_subgraph call must come after 'write_neg' ('write_neg' "
      "writes 'neg' in place and 'sub' reads it) and before 'write_relu' ('write_relu' writes "
      "'relu' in place and 'mul' reads it), which comes first");
  // relu_ writes relu after mul read it, so it must follow the call; but the call's operand
  // neg comes after relu_: refused late, by the re-sort of the copy, and still nothing changed.
  epgraph_test::Program follower = program();
  {
    epgraph::Graph& g = follower.graph();
    auto at = g.inserting_before(g.find_node("neg"));
    (void)call(g, "torch.ops.aten.relu_.default", {g.find_node("relu")}, "relu_");
  }
  check_refused<epgraph::runtime_error>(
      follower,
      [&]() {
        (void)epgraph::outline_partition(follower, nodes_of(follower, {"mul", "add", "sub"}));
      },
      "outline_partition: the call cannot take the partition's place: Cannot sort the graph "
      "topologically: 'relu_' writes 'relu' in place and "
      "'invoke_subgraph' reads it, and sorting would swap them");
  // A refused second outline leaves the first one's nested graph in place.
  (void)epgraph::outline_partition(ep, nodes_of(ep, {"sub", "scaled"}));
  check_refused<value_error>(ep, outline({"mul", "other"}),
                             "validate_partition: the partition {mul, other} is not convex: the "
                             "path mul -> add -> other leaves it after 'mul' and re-enters it at "
                             "'other'");
  CHECK(ep.nested_graphs().size() == 1);
}

TEST_CASE("verify: nested graphs the program owns and the invoke_subgraph calls reading them",
          "[outline_partition][verify]") {
  using namespace outline_partition_test;
  epgraph_test::Program ep = program();
  (void)epgraph::outline_partition(ep, nodes_of(ep, {"scaled", "sub", "add", "mul"}));
  epgraph::verify(ep);
  const auto problems = [&ep]() {
    try {
      epgraph::verify(ep);
    } catch (const epgraph::verification_error& e) {
      return e.violations();
    }
    return std::vector<std::string>{};
  };
  (void)ep.nested_graph("repeated_subgraph0")->placeholder("extra");
  CHECK(problems() == Strings{"Node 'invoke_subgraph' (invoke_subgraph) passes 5 operand(s) to "
                              "nested graph 'repeated_subgraph0', which has 6 placeholder(s)"});
  std::unique_ptr<epgraph::Graph> taken = ep.remove_nested_graph("repeated_subgraph0");
  REQUIRE(taken != nullptr);
  CHECK(problems() == Strings{"Node 'invoke_subgraph' (invoke_subgraph) calls "
                              "'repeated_subgraph0', which is no nested graph of the program"});
  CHECK_THROWS_WITH(ep.add_nested_graph("a.b", std::make_unique<epgraph::Graph>()),
                    "Nested graph target 'a.b' is not a Python identifier");
  CHECK_THROWS_WITH(ep.add_nested_graph("g", nullptr), "Nested graph 'g' is null");
  (void)ep.add_nested_graph("repeated_subgraph0", std::move(taken));
  CHECK_THROWS_WITH(ep.add_nested_graph("repeated_subgraph0", std::make_unique<epgraph::Graph>()),
                    "The program already has a nested graph 'repeated_subgraph0'");
}

TEST_CASE("outline_partition: the call goes after an in-place write a later node read after",
          "[outline_partition]") {
  using namespace outline_partition_test;
  // relu_ writes `neg` in place before `sub` of the partition {mul, add, sub} reads it: the call
  // must come after relu_ (re-sorting alone would put it right after `neg`, reading the value
  // before the write).
  epgraph_test::Program ep = program();
  {
    epgraph::Graph& g = ep.graph();
    auto at = g.inserting_before(g.find_node("sub"));
    (void)call(g, "torch.ops.aten.relu_.default", {g.find_node("neg")}, "relu_");
  }
  (void)epgraph::outline_partition(ep, nodes_of(ep, {"mul", "add", "sub"}));
  Strings order;
  for (const epgraph::Node& n : ep.graph().nodes()) {
    if (n.op() != epgraph::OpCode::placeholder) order.emplace_back(n.name());
  }
  CHECK(order == Strings{"relu", "neg", "relu_", "repeated_subgraph0", "invoke_subgraph", "getitem",
                         "getitem_1", "scaled", "other", "output"});
  epgraph::verify(ep);
}

TEST_CASE("outline_partition: a SymInt crosses the boundary as an operand", "[outline_partition]") {
  using namespace outline_partition_test;
  // size = sym_size(relu, 0) outside; view(relu, [size, 2]) inside: size is an operand (torch's
  // invoke_subgraph takes ints and SymInts besides tensors); a SymBool is refused.
  epgraph_test::Program ep = program();
  {
    epgraph::Graph& g = ep.graph();
    auto at = g.inserting_before(g.output_node());
    epgraph::Node* size = g.call_function("torch.ops.aten.sym_size.int",
                                          {g.find_node("relu"), std::int64_t{0}}, {}, "size");
    size->mutable_meta().val = epgraph::SymIntValue{epgraph::SymExpr{"s0", 2}};
    epgraph::Node* view = call(g, "torch.ops.aten.view.default",
                               {g.find_node("relu"), epgraph::ArgumentList{size, 2}}, "view");
    g.output_node()->set_args(epgraph::ArgumentList{epgraph::Argument(
        epgraph::ArgumentList{epgraph::Argument(g.find_node("scaled")), epgraph::Argument(view)})});
    ep.graph_signature().output_specs[1] = epgraph_test::user_output("view");
    ep.metadata().range_constraints = {epgraph::RangeConstraint{"s0", 2, 64}};
  }
  epgraph::Node* c = epgraph::outline_partition(ep, nodes_of(ep, {"view"}));
  CHECK(epgraph::format_node(*c) ==
        "%invoke_subgraph : [num_users=1] = "
        "call_function[target=torch.ops.higher_order.invoke_subgraph](args = "
        "(%repeated_subgraph0, subgraph_0, %relu, %size), kwargs = {})");
  const epgraph::Node* operand = ep.nested_graph("repeated_subgraph0")->find_node("size");
  REQUIRE(operand != nullptr);
  CHECK(operand->op() == epgraph::OpCode::placeholder);
  CHECK(operand->meta().val == epgraph::NodeValue(epgraph::SymIntValue{epgraph::SymExpr{"s0", 2}}));
  epgraph::verify(ep);
}

TEST_CASE("outline_partition: a nested graph the partition calls moves with it",
          "[outline_partition]") {
  using namespace outline_partition_test;
  // cond(x, true_graph_0, true_graph_0, ()) reads the get_attr node true_graph_0: it is copied
  // into the nested graph (with the graph it names) and leaves the program's graph.
  epgraph_test::Program ep = program();
  {
    epgraph::Graph& g = ep.graph();
    auto at = g.inserting_before(g.output_node());
    epgraph::Node* branch = g.get_attr("true_graph_0", "true_graph_0");
    epgraph::Node* c = call(g, "torch.ops.higher_order.cond",
                            {g.find_node("x"), branch, branch, epgraph::ArgumentList{}}, "cond");
    g.output_node()->set_args(epgraph::ArgumentList{epgraph::Argument(
        epgraph::ArgumentList{epgraph::Argument(g.find_node("scaled")), epgraph::Argument(c)})});
    ep.graph_signature().output_specs[1] = epgraph_test::user_output("cond");
  }
  // Extraction refuses it (the extracted program would need the nested graph as well).
  epgraph_test::check_refused<epgraph::value_error>(
      ep, [&]() { (void)epgraph::extract_partition(ep, nodes_of(ep, {"cond"})); },
      "extract_partition: 'true_graph_0', read by 'cond' inside the partition, is a get_attr "
      "node (target 'true_graph_0', a nested graph); a partition calling a nested graph is not "
      "supported");
  (void)epgraph::outline_partition(ep, nodes_of(ep, {"cond"}));
  CHECK(ep.graph().find_node("true_graph_0") == nullptr);
  CHECK(epgraph::to_string(*ep.nested_graph("repeated_subgraph0")) ==
        "graph():\n"
        "    %x : [num_users=1] = placeholder[target=x]\n"
        "    %true_graph_0 : [num_users=1] = get_attr[target=true_graph_0]\n"
        "    %cond : [num_users=1] = call_function[target=torch.ops.higher_order.cond](args = "
        "(%x, %true_graph_0, %true_graph_0, []), kwargs = {})\n"
        "    return (cond,)");
  epgraph::verify(ep);
}
