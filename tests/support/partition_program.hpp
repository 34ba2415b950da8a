// The program the partition tests (test_extract_partition.cpp, test_outline_partition.cpp) cut:
// parameters w (read only inside the partition) and v (only outside), a persistent buffer s and
// a tensor constant k (inside), a user input x:
//     relu = relu(x); mul = mul(relu, p_w); add = add(mul, b_s); neg = neg(relu)
//     sub = sub(add, neg); scaled = mul(sub, c_k); other = mul(add, p_v)
//     return (scaled, other)
// The partition {mul, add, sub, scaled} reads relu, p_w, b_s, neg (which comes after mul) and
// c_k; add (read by other) and scaled (returned) escape.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <epgraph/epgraph.hpp>
#include <memory>
#include <string>
#include <utility>

#include "program_builders.hpp"

namespace epgraph_test {

// A call_function node with a [2, 2] float value; with `node_meta`, also a stack_trace and an
// nn_module_stack naming it.
inline epgraph::Node* partition_call(epgraph::Graph& g, const char* target,
                                     epgraph::ArgumentList args, const char* name, bool node_meta) {
  epgraph::Node* n = g.call_function(target, std::move(args), {}, name);
  n->mutable_meta().val = epgraph::tensor_meta_of(tensor({2, 2}));
  if (node_meta) {
    n->mutable_meta().other = {{"stack_trace", std::string("line of ") + name},
                               {"nn_module_stack", "L__self__,,M"}};
  }
  return n;
}

// The program above; `node_meta`: whether its call_function nodes carry other metadata.
inline Program partition_program(bool node_meta) {
  auto g = std::make_unique<epgraph::Graph>();
  const epgraph::HostTensor w = tensor({2, 2}, 2.0);
  const epgraph::HostTensor v = tensor({2, 2}, 3.0);
  const epgraph::HostTensor s = tensor({2, 2}, 4.0);
  const epgraph::HostTensor k = tensor({2, 2}, 5.0);
  epgraph::Node* p_w = add_placeholder(*g, "p_w", w);
  epgraph::Node* p_v = add_placeholder(*g, "p_v", v);
  epgraph::Node* b_s = add_placeholder(*g, "b_s", s);
  epgraph::Node* c_k = add_placeholder(*g, "c_k", k);
  epgraph::Node* x = add_placeholder(*g, "x", tensor({2, 2}));
  auto call = [&](const char* target, epgraph::ArgumentList args, const char* name) {
    return partition_call(*g, target, std::move(args), name, node_meta);
  };
  epgraph::Node* relu = call("torch.ops.aten.relu.default", {x}, "relu");
  epgraph::Node* mul = call("torch.ops.aten.mul.Tensor", {relu, p_w}, "mul");
  epgraph::Node* add = call("torch.ops.aten.add.Tensor", {mul, b_s}, "add");
  epgraph::Node* neg = call("torch.ops.aten.neg.default", {relu}, "neg");
  epgraph::Node* sub = call("torch.ops.aten.sub.Tensor", {add, neg}, "sub");
  epgraph::Node* scaled = call("torch.ops.aten.mul.Tensor", {sub, c_k}, "scaled");
  epgraph::Node* other = call("torch.ops.aten.mul.Tensor", {add, p_v}, "other");
  g->output({scaled, other});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {parameter("p_w", "w"), parameter("p_v", "v"), buffer("b_s", "s"),
                     constant_tensor("c_k", "k"), user_input("x")};
  sig.output_specs = {user_output("scaled"), user_output("other")};
  epgraph::ordered_dict<epgraph::HostTensor> sd;
  sd.insert("w", w);
  sd.insert("v", v);
  sd.insert("s", s);
  epgraph::ordered_dict<Program::constant_type> constants;
  constants.insert("k", k);
  return Program(std::move(g), std::move(sig), std::move(sd), std::move(constants));
}

}  // namespace epgraph_test
