// Programs for the archive tests: float32 bytes <-> HostTensor, tensor metadata, and the small
// program with one parameter, one buffer and one constant that the archive tests save and load.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <cstring>
#include <epgraph/ir/tensor.hpp>
#include <epgraph/program/exported_program.hpp>
#include <memory>
#include <utility>
#include <vector>

#include "archive_files.hpp"

namespace epgraph_test {

// The bytes of `v` as float32, in host order.
inline Bytes floats(const std::vector<float>& v) {
  Bytes b(v.size() * sizeof(float));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// The values of a float32 tensor.
inline std::vector<float> floats_of(const epgraph::HostTensor& t) {
  std::vector<float> v(t.nbytes() / sizeof(float));
  std::memcpy(v.data(), t.bytes().data(), t.nbytes());
  return v;
}

// The metadata of a contiguous float32 tensor of `sizes`.
inline epgraph::TensorMeta f32(std::vector<std::int64_t> sizes) {
  using epgraph::HostTensor;
  return epgraph::tensor_meta_of(HostTensor::zeros(epgraph::dtype::float32, std::move(sizes)));
}

// [p_w, b_buf, c_k, x] -> mul(add(add(x, p_w), b_buf), c_k) -> [mul], every value float32[n]:
// parameter "w" = 1..n, persistent buffer "buf" = n+1..2n, constant "k" = 2n+1..3n.
inline epgraph::ExportedProgram<epgraph::HostTensor> small_program(std::int64_t n) {
  using namespace epgraph;  // NOLINT: test helper body
  auto values = [n](int first) {
    std::vector<float> v;
    for (std::int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(first + i));
    return HostTensor::from_bytes(dtype::float32, {n}, floats(v));
  };
  auto g = std::make_unique<Graph>();
  Node* w = g->placeholder("p_w");
  Node* b = g->placeholder("b_buf");
  Node* k = g->placeholder("c_k");
  Node* x = g->placeholder("x");
  Node* add = g->call_function("torch.ops.aten.add.Tensor", {x, w});
  Node* add_1 = g->call_function("torch.ops.aten.add.Tensor", {add, b});
  Node* mul = g->call_function("torch.ops.aten.mul.Tensor", {add_1, k});
  g->output({mul});
  for (Node* node : {w, b, k, x, add, add_1, mul}) node->mutable_meta().val = f32({n});
  ExportGraphSignature sig;
  sig.input_specs = {InputSpec(InputKind::PARAMETER, TensorArgument{"p_w"}, "w"),
                     InputSpec(InputKind::BUFFER, TensorArgument{"b_buf"}, "buf", true),
                     InputSpec(InputKind::CONSTANT_TENSOR, TensorArgument{"c_k"}, "k"),
                     InputSpec(InputKind::USER_INPUT, TensorArgument{"x"})};
  sig.output_specs = {OutputSpec(OutputKind::USER_OUTPUT, TensorArgument{"mul"})};
  ordered_dict<HostTensor> sd;
  sd.insert("w", values(1));
  sd.insert("buf", values(static_cast<int>(n) + 1));
  ordered_dict<ExportedProgram<HostTensor>::constant_type> consts;
  consts.insert("k", values(2 * static_cast<int>(n) + 1));
  ProgramMetadata md;
  md.opset_version = {{"aten", 10}};
  md.verifiers = {"ATEN"};
  return ExportedProgram<HostTensor>(std::move(g), std::move(sig), std::move(sd), std::move(consts),
                                     std::move(md));
}

}  // namespace epgraph_test
