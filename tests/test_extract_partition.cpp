// extract_partition, partition_boundary and replace_partition_with_call
// (epgraph/passes/extract_partition.hpp): the extracted program's nodes, specs and data, the
// host's call, and every refusal with its exact message and the program unchanged.
// SPDX-License-Identifier: BSD-3-Clause
#include <algorithm>
#include <catch2/catch.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/passes/extract_partition.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/checks.hpp"
#include "support/partition_program.hpp"
#include "support/program_builders.hpp"
#include "support/refusal.hpp"
#include "support/snapshot.hpp"

using ExtractStrings = std::vector<std::string>;

namespace {

epgraph_test::Program extract_program() { return epgraph_test::partition_program(false); }

epgraph::Node* extract_call(epgraph::Graph& g, const char* target, epgraph::ArgumentList args,
                            const char* name) {
  return epgraph_test::partition_call(g, target, std::move(args), name, false);
}

std::vector<const epgraph::Node*> extract_nodes(const epgraph_test::Program& ep,
                                                const ExtractStrings& names) {
  std::vector<const epgraph::Node*> out;
  for (const std::string& n : names) out.push_back(ep.graph().find_node(n));
  return out;
}

// "name = target(arg, ...)" per node, "name: placeholder", "return (a, b)".
ExtractStrings extract_lines(const epgraph::Graph& g) {
  ExtractStrings out;
  for (const epgraph::Node& n : g.nodes()) {
    if (n.op() == epgraph::OpCode::placeholder) {
      out.push_back(std::string(n.name()) + ": placeholder");
      continue;
    }
    std::string args;
    for (const epgraph::Argument& a : n.args()) {
      args += (args.empty() ? "" : ", ") + epgraph::format_arg(a);
    }
    args.erase(std::remove(args.begin(), args.end(), '%'), args.end());
    if (n.op() == epgraph::OpCode::output) {
      out.push_back("return " + args);
    } else {
      out.push_back(std::string(n.name()) + " = " + std::string(n.target()) + "(" + args + ")");
    }
  }
  return out;
}

ExtractStrings extract_specs(const epgraph::ExportGraphSignature& sig) {
  ExtractStrings out;
  for (const epgraph::InputSpec& s : sig.input_specs) {
    out.push_back(s.name() + " " + std::string(epgraph::kind_name(s.kind())) +
                  (s.target() ? " " + *s.target() : std::string()));
  }
  for (const epgraph::OutputSpec& s : sig.output_specs) {
    out.push_back("-> " + s.name() + " " + std::string(epgraph::kind_name(s.kind())));
  }
  return out;
}

ExtractStrings extract_names(const std::vector<const epgraph::Node*>& nodes) {
  ExtractStrings out;
  for (const epgraph::Node* n : nodes) out.emplace_back(n->name());
  return out;
}

const ExtractStrings extract_partition_names{"scaled", "add", "sub", "mul"};  // any order

}  // namespace

TEST_CASE("partition_boundary: inputs in order of first use, state in input order",
          "[extract_partition]") {
  const epgraph_test::Program ep = extract_program();
  const epgraph::PartitionBoundary b =
      epgraph::partition_boundary(ep, extract_nodes(ep, extract_partition_names));
  CHECK(extract_names(b.nodes) == ExtractStrings{"mul", "add", "sub", "scaled"});
  CHECK(extract_names(b.user_inputs) == ExtractStrings{"relu", "neg"});
  CHECK(extract_names(b.state_inputs) == ExtractStrings{"p_w", "b_s", "c_k"});
  CHECK(extract_names(b.outputs) == ExtractStrings{"add", "scaled"});
  CHECK(epgraph::partition_call_schema(b, "my_backend::subgraph_0") ==
        "my_backend::subgraph_0(Tensor relu, Tensor neg) -> (Tensor, Tensor)");
}

TEST_CASE("extract_partition: a complete program with the partition's state",
          "[extract_partition]") {
  const epgraph_test::Program ep = extract_program();
  const auto before = epgraph_test::snapshot(ep);
  const epgraph_test::Program sub =
      epgraph::extract_partition(ep, extract_nodes(ep, extract_partition_names));
  CHECK(epgraph_test::snapshot(ep) == before);  // the original is untouched
  CHECK(extract_lines(sub.graph()) ==
        ExtractStrings{"p_w: placeholder", "b_s: placeholder", "c_k: placeholder",
                       "relu: placeholder", "neg: placeholder",
                       "mul = torch.ops.aten.mul.Tensor(relu, p_w)",
                       "add = torch.ops.aten.add.Tensor(mul, b_s)",
                       "sub = torch.ops.aten.sub.Tensor(add, neg)",
                       "scaled = torch.ops.aten.mul.Tensor(sub, c_k)", "return [add, scaled]"});
  CHECK(extract_specs(sub.graph_signature()) ==
        ExtractStrings{"p_w PARAMETER w", "b_s BUFFER s", "c_k CONSTANT_TENSOR k",
                       "relu USER_INPUT", "neg USER_INPUT", "-> add USER_OUTPUT",
                       "-> scaled USER_OUTPUT"});
  CHECK(sub.graph_signature().input_specs[1].persistent() == true);
  CHECK(epgraph_test::keys(sub.state_dict()) == ExtractStrings{"w", "s"});
  CHECK(sub.state_dict().at("w") == ep.state_dict().at("w"));
  CHECK(sub.state_dict().at("s") == ep.state_dict().at("s"));
  CHECK(epgraph_test::keys(sub.constants()) == ExtractStrings{"k"});
  CHECK(std::get<epgraph::HostTensor>(sub.constants().at("k")) ==
        std::get<epgraph::HostTensor>(ep.constants().at("k")));
  CHECK(sub.graph().find_node("relu")->meta().val == ep.graph().find_node("relu")->meta().val);
  CHECK(sub.metadata().archive.has_value() == false);
  const auto& opaque = sub.metadata().opaque;
  REQUIRE(opaque.size() == 1);
  CHECK(opaque[0].first == "graph_module.module_call_graph");
  CHECK(opaque[0].second ==
        R"([{"fqn": "", "signature": {"inputs": [], "outputs": [], "in_spec": "[1, {\"type\": )"
        R"(\"builtins.tuple\", \"context\": \"null\", \"children_spec\": [{\"type\": )"
        R"(\"builtins.tuple\", \"context\": \"null\", \"children_spec\": [{\"type\": null, )"
        R"(\"context\": null, \"children_spec\": []}, {\"type\": null, \"context\": null, )"
        R"(\"children_spec\": []}]}, {\"type\": \"builtins.dict\", \"context\": \"[]\", )"
        R"(\"children_spec\": []}]}]", "out_spec": "[1, {\"type\": \"builtins.tuple\", )"
        R"(\"context\": \"null\", \"children_spec\": [{\"type\": null, \"context\": null, )"
        R"(\"children_spec\": []}, {\"type\": null, \"context\": null, \"children_spec\": )"
        R"([]}]}]", "forward_arg_names": ["relu", "neg"]}}])");
  epgraph_test::check_valid(sub);
}

TEST_CASE("replace_partition_with_call: one call, getitems, weights only it read removed",
          "[extract_partition]") {
  epgraph_test::Program ep = extract_program();
  const std::size_t registered = epgraph::global_registry().size();
  epgraph::Node* call = epgraph::replace_partition_with_call(
      ep, extract_nodes(ep, extract_partition_names), "extract_test::subgraph_0");
  REQUIRE(call != nullptr);
  CHECK(call->name() == "subgraph_0");
  CHECK(call->target() == "torch.ops.extract_test.subgraph_0.default");
  CHECK(extract_lines(ep.graph()) ==
        ExtractStrings{
            "p_v: placeholder", "x: placeholder", "relu = torch.ops.aten.relu.default(x)",
            "neg = torch.ops.aten.neg.default(relu)",
            "subgraph_0 = torch.ops.extract_test.subgraph_0.default(relu, neg)",
            "getitem = operator.getitem(subgraph_0, 0)",
            "getitem_1 = operator.getitem(subgraph_0, 1)",
            "other = torch.ops.aten.mul.Tensor(getitem, p_v)", "return [getitem_1, other]"});
  CHECK(extract_specs(ep.graph_signature()) == ExtractStrings{"p_v PARAMETER v", "x USER_INPUT",
                                                              "-> getitem_1 USER_OUTPUT",
                                                              "-> other USER_OUTPUT"});
  CHECK(epgraph_test::keys(ep.state_dict()) == ExtractStrings{"v"});
  CHECK(ep.constants().empty());
  const epgraph::NodeValue one = epgraph::tensor_meta_of(epgraph_test::tensor({2, 2}));
  CHECK(call->meta().val == epgraph::NodeValue(epgraph::NodeValue::List{one, one}));
  CHECK(ep.graph().find_node("getitem")->meta().val == one);
  const epgraph::FunctionSchema* schema =
      epgraph::global_registry().find("extract_test::subgraph_0");
  REQUIRE(schema != nullptr);
  CHECK(schema->str() == "extract_test::subgraph_0(Tensor relu, Tensor neg) -> (Tensor, Tensor)");
  CHECK(epgraph::global_registry().size() == registered + 1);
  epgraph_test::check_valid(ep);
}

TEST_CASE("replace_partition_with_call: one output is the call itself, an equal schema is reused",
          "[extract_partition]") {
  for (int round = 0; round < 2; ++round) {
    epgraph_test::Program ep = extract_program();
    // {sub, scaled}: reads add, neg and c_k; only scaled escapes.
    const std::vector<const epgraph::Node*> nodes = extract_nodes(ep, {"sub", "scaled"});
    const epgraph_test::Program sub = epgraph::extract_partition(ep, nodes);
    CHECK(extract_specs(sub.graph_signature()) == ExtractStrings{"c_k CONSTANT_TENSOR k",
                                                                 "add USER_INPUT", "neg USER_INPUT",
                                                                 "-> scaled USER_OUTPUT"});
    CHECK(sub.metadata().opaque[0].second.find(
              R"("out_spec": "[1, {\"type\": null, \"context\": null, \"children_spec\": []}]")") !=
          std::string::npos);
    epgraph::Node* call =
        epgraph::replace_partition_with_call(ep, nodes, "extract_test::single_output");
    CHECK(extract_lines(ep.graph()) ==
          ExtractStrings{
              "p_w: placeholder", "p_v: placeholder", "b_s: placeholder", "x: placeholder",
              "relu = torch.ops.aten.relu.default(x)", "mul = torch.ops.aten.mul.Tensor(relu, p_w)",
              "add = torch.ops.aten.add.Tensor(mul, b_s)", "neg = torch.ops.aten.neg.default(relu)",
              "single_output = torch.ops.extract_test.single_output.default(add, neg)",
              "other = torch.ops.aten.mul.Tensor(add, p_v)", "return [single_output, other]"});
    CHECK(call->meta().val == ep.graph().find_node("other")->meta().val);
    CHECK(epgraph_test::keys(ep.state_dict()) == ExtractStrings{"w", "v", "s"});
    CHECK(ep.constants().empty());  // k was read only inside
    CHECK(epgraph::global_registry().find("extract_test::single_output")->str() ==
          "extract_test::single_output(Tensor add, Tensor neg) -> Tensor");
    epgraph_test::check_valid(ep);
  }
}

TEST_CASE("extract_partition / replace_partition_with_call: refusals change nothing",
          "[extract_partition]") {
  epgraph_test::Program ep = extract_program();
  const auto extract = [&](const ExtractStrings& names) {
    return [&ep, names]() { (void)epgraph::extract_partition(ep, extract_nodes(ep, names)); };
  };
  const auto replace = [&](const ExtractStrings& names, const char* op) {
    return [&ep, names, op]() {
      (void)epgraph::replace_partition_with_call(ep, extract_nodes(ep, names), op);
    };
  };
  using epgraph::value_error;
  using epgraph_test::check_refused;
  check_refused<value_error>(ep, extract({}), "extract_partition: the partition is empty");
  // {mul, sub}: mul -> add -> sub leaves it and comes back.
  check_refused<value_error>(ep, extract({"mul", "sub"}),
                             "validate_partition: the partition {mul, sub} is not convex: the "
                             "path mul -> add -> sub leaves it after 'mul' and re-enters it at "
                             "'sub'");
  check_refused<value_error>(ep, replace({"mul", "sub"}, "extract_test::convex"),
                             "validate_partition: the partition {mul, sub} is not convex: the "
                             "path mul -> add -> sub leaves it after 'mul' and re-enters it at "
                             "'sub'");
  check_refused<value_error>(
      ep, extract({"x", "relu"}),
      "extract_partition: node 'x' is a placeholder node; a partition holds call_function nodes "
      "only");
  check_refused<value_error>(
      ep, replace({"sub", "scaled"}, "extract_test"),
      "replace_partition_with_call: op name 'extract_test' is not of the form namespace::name "
      "(each a Python identifier)");
  check_refused<value_error>(
      ep, replace({"sub", "scaled"}, "extract_test::sub.graph"),
      "replace_partition_with_call: op name 'extract_test::sub.graph' is not of the form "
      "namespace::name (each a Python identifier)");
  // torch's own namespaces (a break test: `pt2_edit extract --op-namespace aten` wrote a host
  // program that verify then refused as calling an operator torch 2.13 does not have).
  for (const char* op :
       {"aten::subgraph_0", "prim::subgraph_0", "prims::subgraph_0", "higher_order::subgraph_0"}) {
    const std::string ns = std::string(op).substr(0, std::string(op).find("::"));
    check_refused<value_error>(ep, replace({"sub", "scaled"}, op),
                               "replace_partition_with_call: op name '" + std::string(op) +
                                   "': namespace '" + ns +
                                   "' is torch's own (its operators are torch's; verify refuses "
                                   "any other): give the backend's namespace");
  }
  // A name registered with another schema: refused before anything changes.
  (void)epgraph::global_registry().register_schema("extract_test::taken(Tensor a) -> Tensor");
  check_refused<value_error>(
      ep, replace({"sub", "scaled"}, "extract_test::taken"),
      "replace_partition_with_call: operator 'extract_test::taken' is already registered with "
      "schema 'extract_test::taken(Tensor a) -> Tensor', not 'extract_test::taken(Tensor add, "
      "Tensor neg) -> Tensor'");
  // The program already calls the op (a second partition behind the same op name).
  (void)epgraph::replace_partition_with_call(ep, extract_nodes(ep, {"sub", "scaled"}),
                                             "extract_test::clash");
  check_refused<value_error>(
      ep, replace({"mul"}, "extract_test::clash"),
      "replace_partition_with_call: the program already calls "
      "torch.ops.extract_test.clash.default (node 'clash'); give each partition an op of its "
      "own");
  // A partition whose value nobody outside reads.
  epgraph_test::Program dead = extract_program();
  {
    epgraph::Graph& g = dead.graph();
    auto at = g.inserting_before(g.output_node());
    (void)extract_call(g, "torch.ops.aten.neg.default", {g.find_node("other")}, "unused");
  }
  check_refused<value_error>(
      dead, [&]() { (void)epgraph::extract_partition(dead, extract_nodes(dead, {"unused"})); },
      "extract_partition: no value of the partition is used outside it (nothing to return)");
}

TEST_CASE("extract_partition: mutated state, mutation outputs and non-tensor values are refused",
          "[extract_partition]") {
  // linear_batchnorm_program: the batch norm writes running_mean/var back; add computes
  // num_batches_tracked + 1 (a BUFFER_MUTATION output).
  epgraph_test::Program ep = epgraph_test::linear_batchnorm_program();
  ep.graph().find_node("addmm")->mutable_meta().val =
      epgraph::tensor_meta_of(epgraph_test::tensor({2, 4}));
  using epgraph::value_error;
  using epgraph_test::check_refused;
  check_refused<value_error>(
      ep, [&]() { (void)epgraph::extract_partition(ep, extract_nodes(ep, {"add"})); },
      "extract_partition: 'add' of the partition is written back by output 'add' "
      "(BUFFER_MUTATION 'bn.num_batches_tracked'); extracting a partition that computes a "
      "mutation is not supported");
  check_refused<value_error>(
      ep,
      [&]() {
        (void)epgraph::extract_partition(
            ep, extract_nodes(ep, {"_native_batch_norm_legit_functional", "getitem"}));
      },
      "extract_partition: the partition reads BUFFER 'b_bn_running_mean' (target "
      "'bn.running_mean'), which output 'getitem_3' mutates (BUFFER_MUTATION); extracting a "
      "partition that reads mutated state is not supported");
  // The multi-output node without its getitems: its tuple would cross the boundary.
  epgraph_test::Program split = epgraph_test::plain_program();
  {
    epgraph::Graph& g = split.graph();
    auto at = g.inserting_before(g.output_node());
    epgraph::Node* x = g.find_node("x");
    epgraph::Node* s = g.call_function("torch.ops.aten.split.Tensor", {x, 1}, {}, "split");
    const epgraph::NodeValue one = epgraph::tensor_meta_of(epgraph_test::tensor({1, 3}));
    s->mutable_meta().val = epgraph::NodeValue(epgraph::NodeValue::List{one, one});
    epgraph::Node* item = g.call_function("operator.getitem", {s, 0}, {}, "getitem");
    item->mutable_meta().val = one;
    g.output_node()->set_args(
        epgraph::ArgumentList{epgraph::Argument(epgraph::ArgumentList{epgraph::Argument(item)})});
    split.graph_signature().output_specs[0] = epgraph_test::user_output("getitem");
  }
  check_refused<value_error>(
      split, [&]() { (void)epgraph::extract_partition(split, extract_nodes(split, {"split"})); },
      "extract_partition: 'split', used outside the partition by 'getitem', is not a tensor (its "
      "value is " +
          split.graph().find_node("split")->meta().val.describe() +
          "); a value crossing the partition's boundary must be one tensor");
  const epgraph_test::Program ok =
      epgraph::extract_partition(split, extract_nodes(split, {"split", "getitem"}));
  CHECK(extract_specs(ok.graph_signature()) ==
        ExtractStrings{"x USER_INPUT", "-> getitem USER_OUTPUT"});
}

TEST_CASE("replace_partition_with_call: the call goes after an in-place write the partition read",
          "[extract_partition]") {
  // relu_ writes `neg` in place before `sub` of the partition reads it: the call must come after
  // relu_ (re-sorting alone put it right after `neg`, reading the value before the write).
  epgraph_test::Program ep = extract_program();
  {
    epgraph::Graph& g = ep.graph();
    auto at = g.inserting_before(g.find_node("sub"));
    (void)extract_call(g, "torch.ops.aten.relu_.default", {g.find_node("neg")}, "relu_");
  }
  (void)epgraph::replace_partition_with_call(ep, extract_nodes(ep, extract_partition_names),
                                             "extract_test::after_write");
  ExtractStrings order;
  for (const epgraph::Node& n : ep.graph().nodes()) {
    if (n.op() != epgraph::OpCode::placeholder) order.emplace_back(n.name());
  }
  CHECK(order == ExtractStrings{"relu", "neg", "relu_", "after_write", "getitem", "getitem_1",
                                "other", "output"});
  // A write between two readers of the partition: no place keeps both orders.
  epgraph_test::Program between = extract_program();
  {
    epgraph::Graph& g = between.graph();
    auto at = g.inserting_before(g.find_node("sub"));
    (void)extract_call(g, "torch.ops.aten.relu_.default", {g.find_node("relu")}, "relu_");
    g.find_node("sub")->replace_input_with(g.find_node("neg"), g.find_node("relu"));
  }
  epgraph_test::check_refused<epgraph::value_error>(
      between,
      [&]() {
        (void)epgraph::replace_partition_with_call(
            between, extract_nodes(between, extract_partition_names), "extract_test::between");
      },
      "replace_partition_with_call: 'relu_', outside the partition, comes between 'mul' and "
      "'sub' of it ('relu_' writes 'relu' in place and 'mul' reads it; 'relu_' writes 'relu' in "
      "place and 'sub' reads it): one call of torch.ops.extract_test.between.default cannot come "
      "both before and after it");
}
