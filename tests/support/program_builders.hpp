// epgraph test support: small exported programs built in code, in the shape torch.export gives
// them (names, input order, output layout). All use epgraph::HostTensor.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <cstdint>
#include <epgraph/epgraph.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace epgraph_test {

using Tensor = epgraph::HostTensor;
using Program = epgraph::ExportedProgram<Tensor>;

/// A float32 tensor of `sizes` filled with `value`.
inline Tensor tensor(std::vector<std::int64_t> sizes, double value = 0.0) {
  return Tensor::full(epgraph::dtype::float32, std::move(sizes), value);
}

/// Adds a placeholder named `name` with the metadata of `like`.
inline epgraph::Node* add_placeholder(epgraph::Graph& g, std::string_view name,
                                      const Tensor& like) {
  epgraph::Node* n = g.placeholder(name);
  n->mutable_meta().val = epgraph::tensor_meta_of(like);
  return n;
}

/// Spec shorthands.
inline epgraph::InputSpec user_input(std::string name) {
  return {epgraph::InputKind::USER_INPUT, epgraph::TensorArgument{std::move(name)}};
}
inline epgraph::InputSpec parameter(std::string name, std::string target) {
  return {epgraph::InputKind::PARAMETER, epgraph::TensorArgument{std::move(name)},
          std::move(target)};
}
inline epgraph::InputSpec buffer(std::string name, std::string target, bool persistent = true) {
  return {epgraph::InputKind::BUFFER, epgraph::TensorArgument{std::move(name)}, std::move(target),
          persistent};
}
inline epgraph::InputSpec constant_tensor(std::string name, std::string target) {
  return {epgraph::InputKind::CONSTANT_TENSOR, epgraph::TensorArgument{std::move(name)},
          std::move(target)};
}
inline epgraph::InputSpec input_token(std::string name) {
  return {epgraph::InputKind::TOKEN, epgraph::TokenArgument{std::move(name)}};
}
inline epgraph::OutputSpec user_output(std::string name) {
  return {epgraph::OutputKind::USER_OUTPUT, epgraph::TensorArgument{std::move(name)}};
}
inline epgraph::OutputSpec buffer_mutation(std::string name, std::string target) {
  return {epgraph::OutputKind::BUFFER_MUTATION, epgraph::TensorArgument{std::move(name)},
          std::move(target)};
}
inline epgraph::OutputSpec user_input_mutation(std::string name, std::string target) {
  return {epgraph::OutputKind::USER_INPUT_MUTATION, epgraph::TensorArgument{std::move(name)},
          std::move(target)};
}
inline epgraph::OutputSpec output_token(std::string name) {
  return {epgraph::OutputKind::TOKEN, epgraph::TokenArgument{std::move(name)}};
}

/// `forward(x): return x` —
///     graph(): %x = placeholder; return (x,)
///     inputs [x: USER_INPUT]; outputs [x: USER_OUTPUT]; empty state.
inline Program plain_program() {
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::Node* x = add_placeholder(*g, "x", tensor({2, 3}));
  g->output({x});
  epgraph::ExportGraphSignature sig;
  sig.input_specs.push_back(user_input("x"));
  sig.output_specs.push_back(user_output("x"));
  return Program(std::move(g), std::move(sig));
}

/// A module with a parameter and a buffer and no user input, `forward(): return weight * scale`:
///     inputs [p_weight: PARAMETER 'weight', b_scale: BUFFER 'scale' persistent]
///     %mul = aten.mul.Tensor(p_weight, b_scale); outputs [mul: USER_OUTPUT]
///     state_dict {weight, scale}.
inline Program params_and_buffers_program() {
  auto g = std::make_unique<epgraph::Graph>();
  Tensor w = tensor({2, 2}, 1.0);
  Tensor s = tensor({2}, 2.0);
  epgraph::Node* p = add_placeholder(*g, "p_weight", w);
  epgraph::Node* b = add_placeholder(*g, "b_scale", s);
  epgraph::Node* mul = g->call_function("torch.ops.aten.mul.Tensor", {p, b});
  g->output({mul});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {parameter("p_weight", "weight"), buffer("b_scale", "scale")};
  sig.output_specs = {user_output("mul")};
  epgraph::ordered_dict<Tensor> sd;
  sd.insert("weight", w);
  sd.insert("scale", s);
  return Program(std::move(g), std::move(sig), std::move(sd));
}

/// An effectful op threaded through an effect token (torch's with_effects):
///     inputs [token: TOKEN, x: USER_INPUT]
///     %with_effects = higher_order.with_effects(token, mylib.record.default, x)
///     %getitem = getitem(with_effects, 0)      -> output TOKEN
///     %getitem_1 = getitem(with_effects, 1)    -> output USER_OUTPUT (when `with_user_output`)
inline Program token_program(bool with_user_output = true) {
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::Node* token = g->placeholder("token");
  epgraph::Node* x = add_placeholder(*g, "x", tensor({3}));
  epgraph::Node* effects = g->call_function("torch.ops.higher_order.with_effects",
                                            {token, "torch.ops.mylib.record.default", x});
  epgraph::Node* tok = g->call_function("operator.getitem", {effects, 0});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {input_token("token"), user_input("x")};
  sig.output_specs = {output_token("getitem")};
  if (with_user_output) {
    epgraph::Node* y = g->call_function("operator.getitem", {effects, 1});
    g->output({tok, y});
    sig.output_specs.push_back(user_output("getitem_1"));
  } else {
    g->output({tok});
  }
  return Program(std::move(g), std::move(sig));
}

/// Class name of the custom object in constants_program().
inline constexpr const char* custom_class = "__torch__.torch.classes._TorchScriptTesting._Foo";

/// Every kind of constant input, in torch's order, then a user input:
///     inputs [p_w: PARAMETER 'w', b_pb: BUFFER 'pb' persistent, b_npb: BUFFER 'npb'
///             non-persistent, c_lifted_tensor_0: CONSTANT_TENSOR 'lifted_tensor_0',
///             obj: CUSTOM_OBJ 'obj', x: USER_INPUT]
///     %add .. %add_3 add them to x; %call_torchbind = call_torchbind(obj, 'add_tensor', add_3)
///     outputs [call_torchbind: USER_OUTPUT]
///     state_dict {w, pb}; constants {npb, lifted_tensor_0, obj (custom object)}.
inline Program constants_program() {
  auto g = std::make_unique<epgraph::Graph>();
  Tensor w = tensor({4}, 1.0);
  Tensor pb = tensor({4}, 2.0);
  Tensor npb = tensor({4}, 3.0);
  Tensor c = tensor({4}, 4.0);
  epgraph::Node* p_w = add_placeholder(*g, "p_w", w);
  epgraph::Node* b_pb = add_placeholder(*g, "b_pb", pb);
  epgraph::Node* b_npb = add_placeholder(*g, "b_npb", npb);
  epgraph::Node* c_t = add_placeholder(*g, "c_lifted_tensor_0", c);
  epgraph::Node* obj = g->placeholder("obj");
  epgraph::Node* x = add_placeholder(*g, "x", tensor({4}));
  epgraph::Node* add = g->call_function("torch.ops.aten.add.Tensor", {x, p_w});
  epgraph::Node* add_1 = g->call_function("torch.ops.aten.add.Tensor", {add, b_pb});
  epgraph::Node* add_2 = g->call_function("torch.ops.aten.add.Tensor", {add_1, b_npb});
  epgraph::Node* add_3 = g->call_function("torch.ops.aten.add.Tensor", {add_2, c_t});
  epgraph::Node* call =
      g->call_function("torch.ops.higher_order.call_torchbind", {obj, "add_tensor", add_3});
  g->output({call});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {parameter("p_w", "w"),
                     buffer("b_pb", "pb"),
                     buffer("b_npb", "npb", false),
                     constant_tensor("c_lifted_tensor_0", "lifted_tensor_0"),
                     {epgraph::InputKind::CUSTOM_OBJ,
                      epgraph::CustomObjArgument{"obj", custom_class}, std::string("obj")},
                     user_input("x")};
  sig.output_specs = {user_output("call_torchbind")};
  epgraph::ordered_dict<Tensor> sd;
  sd.insert("w", w);
  sd.insert("pb", pb);
  epgraph::ordered_dict<Program::constant_type> constants;
  constants.insert("npb", npb);
  constants.insert("lifted_tensor_0", c);
  constants.insert("obj", epgraph::ScriptObject{custom_class, {std::byte{1}, std::byte{2}}});
  return Program(std::move(g), std::move(sig), std::move(sd), std::move(constants));
}

/// `BatchNorm1d(Linear(3, 4)(x))` in training mode, as torch.export + run_decompositions()
/// gives it (torch 2.13):
///     inputs [p_linear_weight, p_linear_bias, p_bn_weight, p_bn_bias: PARAMETER,
///             b_bn_running_mean, b_bn_running_var, b_bn_num_batches_tracked: BUFFER, x]
///     %permute, %addmm, %add (num_batches_tracked + 1),
///     %_native_batch_norm_legit_functional, %getitem, %getitem_3, %getitem_4
///     outputs [getitem_3: BUFFER_MUTATION 'bn.running_mean', getitem_4: BUFFER_MUTATION
///              'bn.running_var', add: BUFFER_MUTATION 'bn.num_batches_tracked',
///              getitem: USER_OUTPUT]
inline Program linear_batchnorm_program() {
  auto g = std::make_unique<epgraph::Graph>();
  const Tensor lw = tensor({4, 3}, 0.5);
  const Tensor lb = tensor({4}, 0.1);
  const Tensor bw = tensor({4}, 1.0);
  const Tensor bb = tensor({4}, 0.0);
  const Tensor rm = tensor({4}, 0.0);
  const Tensor rv = tensor({4}, 1.0);
  const Tensor nbt = Tensor::zeros(epgraph::dtype::int64, {});
  epgraph::Node* p_lw = add_placeholder(*g, "p_linear_weight", lw);
  epgraph::Node* p_lb = add_placeholder(*g, "p_linear_bias", lb);
  epgraph::Node* p_bw = add_placeholder(*g, "p_bn_weight", bw);
  epgraph::Node* p_bb = add_placeholder(*g, "p_bn_bias", bb);
  epgraph::Node* b_rm = add_placeholder(*g, "b_bn_running_mean", rm);
  epgraph::Node* b_rv = add_placeholder(*g, "b_bn_running_var", rv);
  epgraph::Node* b_nbt = add_placeholder(*g, "b_bn_num_batches_tracked", nbt);
  epgraph::Node* x = add_placeholder(*g, "x", tensor({2, 3}));
  epgraph::Node* permute =
      g->call_function("torch.ops.aten.permute.default", {p_lw, epgraph::Argument{1, 0}});
  epgraph::Node* addmm = g->call_function("torch.ops.aten.addmm.default", {p_lb, x, permute});
  epgraph::Node* add = g->call_function("torch.ops.aten.add.Tensor", {b_nbt, 1});
  epgraph::Node* bn = g->call_function("torch.ops.aten._native_batch_norm_legit_functional.default",
                                       {addmm, p_bw, p_bb, b_rm, b_rv, true, 0.1, 1e-05});
  epgraph::Node* getitem = g->call_function("operator.getitem", {bn, 0});
  epgraph::Node* getitem_3 = g->call_function("operator.getitem", {bn, 3}, {}, "getitem_3");
  epgraph::Node* getitem_4 = g->call_function("operator.getitem", {bn, 4}, {}, "getitem_4");
  g->output({getitem_3, getitem_4, add, getitem});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {parameter("p_linear_weight", "linear.weight"),
                     parameter("p_linear_bias", "linear.bias"),
                     parameter("p_bn_weight", "bn.weight"),
                     parameter("p_bn_bias", "bn.bias"),
                     buffer("b_bn_running_mean", "bn.running_mean"),
                     buffer("b_bn_running_var", "bn.running_var"),
                     buffer("b_bn_num_batches_tracked", "bn.num_batches_tracked"),
                     user_input("x")};
  sig.output_specs = {buffer_mutation("getitem_3", "bn.running_mean"),
                      buffer_mutation("getitem_4", "bn.running_var"),
                      buffer_mutation("add", "bn.num_batches_tracked"), user_output("getitem")};
  epgraph::ordered_dict<Tensor> sd;
  sd.insert("linear.weight", lw);
  sd.insert("linear.bias", lb);
  sd.insert("bn.weight", bw);
  sd.insert("bn.bias", bb);
  sd.insert("bn.running_mean", rm);
  sd.insert("bn.running_var", rv);
  sd.insert("bn.num_batches_tracked", nbt);
  return Program(std::move(g), std::move(sig), std::move(sd));
}

/// A user input mutated in place (`x.add_(1); return x * 2`), functionalized:
///     inputs [x: USER_INPUT]
///     %add = aten.add.Tensor(x, 1); %mul = aten.mul.Tensor(add, 2)
///     outputs [add: USER_INPUT_MUTATION 'x', mul: USER_OUTPUT]
inline Program user_input_mutation_program() {
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::Node* x = add_placeholder(*g, "x", tensor({3}));
  epgraph::Node* add = g->call_function("torch.ops.aten.add.Tensor", {x, 1});
  epgraph::Node* mul = g->call_function("torch.ops.aten.mul.Tensor", {add, 2});
  g->output({add, mul});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {user_input("x")};
  sig.output_specs = {user_input_mutation("add", "x"), user_output("mul")};
  return Program(std::move(g), std::move(sig));
}

/// `ep` with tensor metadata (NodeMeta::val) on every call_function node that lacks it, as the
/// JSON saver requires: the metadata of its first argument node that has some, else a float32
/// scalar's.
inline Program with_tensor_meta(Program ep) {
  for (epgraph::Node& n : ep.graph().nodes()) {
    if (n.op() != epgraph::OpCode::call_function || n.meta().val.has_value()) continue;
    epgraph::TensorMeta m = epgraph::tensor_meta_of(tensor({}));
    // A node read through getitem returns a tuple: one value per index up to the last read.
    std::int64_t last = -1;
    for (const epgraph::Node* u : n.users()) {
      if (u->target() == "operator.getitem" && u->args().size() == 2 &&
          u->args()[1].is<std::int64_t>()) {
        last = std::max(last, u->args()[1].as<std::int64_t>());
      }
    }
    if (last >= 0) {
      if (n.args().size() > 0 && n.args()[0].node() && n.args()[0].node()->meta().val.tensor()) {
        m = *n.args()[0].node()->meta().val.tensor();
      }
      n.mutable_meta().val = epgraph::NodeValue::List(static_cast<std::size_t>(last + 1), m);
      continue;
    }
    for (const epgraph::Argument& a : n.args()) {
      if (a.node() != nullptr && a.node()->meta().val.tensor()) {
        m = *a.node()->meta().val.tensor();
        break;
      }
    }
    n.mutable_meta().val = m;
  }
  return ep;
}

/// Names of the placeholders, in order.
inline std::vector<std::string> placeholder_names(const epgraph::Graph& g) {
  std::vector<std::string> out;
  for (const epgraph::Node& n : g.placeholders()) out.emplace_back(n.name());
  return out;
}

/// Names of all nodes, in order.
inline std::vector<std::string> node_names(const epgraph::Graph& g) {
  std::vector<std::string> out;
  for (const epgraph::Node& n : g.nodes()) out.emplace_back(n.name());
  return out;
}

/// The output node's results as text: node names, or Python reprs of constants.
inline std::vector<std::string> output_names(const epgraph::Graph& g) {
  std::vector<std::string> out;
  for (const epgraph::Argument& a : g.output_node()->args()[0].as<epgraph::ArgumentList>()) {
    out.push_back(a.node() ? std::string(a.node()->name()) : epgraph::format_arg(a));
  }
  return out;
}

/// Input specs as torch prints them, one string each.
inline std::vector<std::string> input_spec_strings(const epgraph::ExportGraphSignature& s) {
  std::vector<std::string> out;
  for (const auto& spec : s.input_specs) out.push_back(epgraph::to_string(spec));
  return out;
}

/// Output specs as torch prints them, one string each.
inline std::vector<std::string> output_spec_strings(const epgraph::ExportGraphSignature& s) {
  std::vector<std::string> out;
  for (const auto& spec : s.output_specs) out.push_back(epgraph::to_string(spec));
  return out;
}

}  // namespace epgraph_test
