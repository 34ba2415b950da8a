// What the signature says about a node: is_parameter/is_buffer/..., get/set_param_tensor.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// Lookups from graph nodes to what the signature says about them: is this placeholder a
/// parameter, a buffer, a lifted constant, a mutable buffer; where does its tensor live. Mirrors
/// `torch._export.utils` (is_param / is_buffer / is_lifted_tensor_constant / get_param / ...)
/// and ExecuTorch's `backends/transforms/utils.py` (is_param_node, get_param_tensor,
/// set_param_tensor).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "../error.hpp"
#include "../ir/graph.hpp"
#include "../ir/node.hpp"
#include "exported_program.hpp"
#include "graph_signature.hpp"

namespace epgraph {

/// The input spec that binds placeholder `node` (the spec whose argument names it), or nullptr
/// when `node` is null, not a placeholder, or named by no input spec. The pointer is valid until
/// the signature changes. Throws nothing. O(input specs). Like looking `node.name` up in torch's
/// `inputs_to_parameters` / `inputs_to_buffers` / ... maps (torch/export/graph_signature.py), for
/// every kind at once.
template <class T>
[[nodiscard]] const InputSpec* input_spec_for(const ExportedProgram<T>& ep, const Node* node) {
  if (node == nullptr || node->op() != OpCode::placeholder) return nullptr;
  for (const InputSpec& s : ep.graph_signature().input_specs) {
    if (names_graph_value(s.arg()) && s.name() == node->name()) return &s;
  }
  return nullptr;
}

/// The input spec whose target is `target` among inputs of kind `kind` (a state_dict / constants
/// key such as "bn.running_mean"), or nullptr. The pointer is valid until the signature changes.
/// Throws nothing. O(input specs). epgraph addition (no upstream function).
template <class T>
[[nodiscard]] const InputSpec* input_spec_by_target(const ExportedProgram<T>& ep, InputKind kind,
                                                    std::string_view target) {
  for (const InputSpec& s : ep.graph_signature().input_specs) {
    if (s.kind() == kind && s.target() && *s.target() == target) return &s;
  }
  return nullptr;
}

namespace detail {

template <class T>
bool has_input_kind(const ExportedProgram<T>& ep, const Node* node, InputKind kind) {
  const InputSpec* s = input_spec_for(ep, node);
  return s != nullptr && s->kind() == kind;
}

}  // namespace detail

/// True when `node` is a placeholder bound to a PARAMETER input spec. Null gives false. Throws
/// nothing. O(input specs). Mirrors `torch._export.utils.is_param`.
template <class T>
[[nodiscard]] bool is_parameter(const ExportedProgram<T>& ep, const Node* node) {
  return detail::has_input_kind(ep, node, InputKind::PARAMETER);
}

/// True when `node` is a placeholder bound to a BUFFER input spec (persistent or not). Null gives
/// false. Throws nothing. O(input specs). Mirrors `torch._export.utils.is_buffer`.
template <class T>
[[nodiscard]] bool is_buffer(const ExportedProgram<T>& ep, const Node* node) {
  return detail::has_input_kind(ep, node, InputKind::BUFFER);
}

/// True when `node` is a placeholder bound to a CONSTANT_TENSOR input spec. Null gives false.
/// Throws nothing. O(input specs). Mirrors `torch._export.utils.is_lifted_tensor_constant`.
template <class T>
[[nodiscard]] bool is_lifted_tensor_constant(const ExportedProgram<T>& ep, const Node* node) {
  return detail::has_input_kind(ep, node, InputKind::CONSTANT_TENSOR);
}

/// True when `node` is a buffer placeholder whose target is the target of a BUFFER_MUTATION
/// output spec: the program writes the buffer back. Decided by the signature alone, not by
/// looking at the node's users (a buffer mutated through a functional op has users that do not
/// write it). Null gives false. Throws nothing. O(input specs + output specs). Mirrors the
/// `buffers_to_mutate` test of `create_constant_placeholder` (ExecuTorch
/// backends/transforms/utils.py), which looks at output names instead of targets and so misses
/// buffers whose mutation output is a computed node.
template <class T>
[[nodiscard]] bool is_mutable_buffer(const ExportedProgram<T>& ep, const Node* node) {
  const InputSpec* s = input_spec_for(ep, node);
  if (s == nullptr || s->kind() != InputKind::BUFFER || !s->target()) return false;
  for (const OutputSpec& o : ep.graph_signature().output_specs) {
    if (o.kind() == OutputKind::BUFFER_MUTATION && o.target() == s->target()) return true;
  }
  return false;
}

/// The node whose value the program writes back to the buffer with target `buffer_target`: the
/// output node's result at the position of the BUFFER_MUTATION spec for that target. Returns
/// nullptr when no such spec exists, or the output node is missing, holds no list of results or
/// holds no node at that position. Throws nothing. O(output specs). Like looking the target up
/// in torch's `buffers_to_mutate` (torch/export/graph_signature.py), in the other direction.
template <class T>
[[nodiscard]] const Node* buffer_mutation_value(const ExportedProgram<T>& ep,
                                                std::string_view buffer_target) {
  const auto& outputs = ep.graph_signature().output_specs;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (outputs[k].kind() != OutputKind::BUFFER_MUTATION || !outputs[k].target() ||
        *outputs[k].target() != buffer_target) {
      continue;
    }
    const Node* out = ep.graph().output_node();
    if (out == nullptr || out->args().empty()) return nullptr;
    const ArgumentList* results = out->args()[0].list();
    if (results == nullptr || k >= results->size()) return nullptr;
    return (*results)[k].node();
  }
  return nullptr;
}

/// buffer_mutation_value of a writable program: the same node, writable. Same contract.
template <class T>
[[nodiscard]] Node* buffer_mutation_value(ExportedProgram<T>& ep, std::string_view buffer_target) {
  const ExportedProgram<T>& read = ep;
  return ep.graph().writable(buffer_mutation_value(read, buffer_target));
}

/// True when `node` stands for a weight-like value: a get_attr node, or a placeholder bound to a
/// PARAMETER, BUFFER or CONSTANT_TENSOR input. Null gives false. Throws nothing. O(input specs).
/// Mirrors `is_param_node` in ExecuTorch's backends/transforms/utils.py.
template <class T>
[[nodiscard]] bool is_param_node(const ExportedProgram<T>& ep, const Node* node) {
  if (node == nullptr) return false;
  if (node->op() == OpCode::get_attr) return true;
  const InputSpec* s = input_spec_for(ep, node);
  return s != nullptr && (s->kind() == InputKind::PARAMETER || s->kind() == InputKind::BUFFER ||
                          s->kind() == InputKind::CONSTANT_TENSOR);
}

namespace detail {

// Where the tensor of a weight-like node lives: in state_dict (true) or constants (false), and
// under which key. Empty when `node` is not weight-like.
template <class T>
std::optional<std::pair<bool, std::string>> param_location(const ExportedProgram<T>& ep,
                                                           const Node* node) {
  if (node == nullptr) return std::nullopt;
  if (node->op() == OpCode::get_attr) {
    const std::string key(node->target());
    if (ep.state_dict().contains(key)) return std::make_pair(true, key);
    return std::make_pair(false, key);
  }
  const InputSpec* s = input_spec_for(ep, node);
  if (s == nullptr || !s->target()) return std::nullopt;
  switch (s->kind()) {
    case InputKind::PARAMETER: return std::make_pair(true, *s->target());
    case InputKind::BUFFER: {
      // A persistent buffer found only in constants is accepted by torch (see verify).
      const std::string& t = *s->target();
      const bool state =
          s->persistent() != false && (ep.state_dict().contains(t) || !ep.constants().contains(t));
      return std::make_pair(state, t);
    }
    case InputKind::CONSTANT_TENSOR: return std::make_pair(false, *s->target());
    default: return std::nullopt;
  }
}

}  // namespace detail

/// The tensor a weight-like node stands for, or nullptr: a parameter or persistent buffer is
/// read from `state_dict` (a persistent buffer found only in `constants`, which torch accepts,
/// from there), a non-persistent buffer or lifted tensor constant from `constants`, a
/// get_attr node from `state_dict` then `constants` by its target (none for a get_attr naming a
/// nested graph, such as a cond branch). Returns nullptr when `node` is
/// null, not weight-like, its key is missing, or the constants entry is a custom object. The
/// pointer is valid until the entry is erased. Throws only std::bad_alloc. O(input specs + length
/// of the key). Mirrors `get_param_tensor` in
/// ExecuTorch's backends/transforms/utils.py (which raises instead of returning null).
template <class T>
[[nodiscard]] const T* get_param_tensor(const ExportedProgram<T>& ep, const Node* node) {
  const auto where = detail::param_location(ep, node);
  if (!where) return nullptr;
  if (where->first) return ep.state_dict().find(where->second);
  const auto* c = ep.constants().find(where->second);
  return c == nullptr ? nullptr : std::get_if<T>(c);
}

/// Writable overload of get_param_tensor (same rules); writing through it changes the program's
/// data but not the node's metadata.
template <class T>
[[nodiscard]] T* get_param_tensor(ExportedProgram<T>& ep, const Node* node) {
  return const_cast<T*>(get_param_tensor(std::as_const(ep), node));
}

/// Replaces the tensor a weight-like node stands for, in the dictionary where it belongs (see
/// get_param_tensor): `state_dict[target] = data` for a parameter or persistent buffer,
/// `constants[target] = data` for a non-persistent buffer or lifted tensor constant; a get_attr
/// node's target is written in `state_dict` when present there, else in `constants` when it
/// holds a tensor there. For a placeholder an existing entry keeps its position and a missing
/// one is appended; a get_attr node must name an existing tensor entry. The node's metadata is
/// not changed (as upstream, which keeps the fake tensor). Throws:
/// - runtime_error "unsupported param type, placeholder. Node 'x' is not a parameter, a buffer, a
///   lifted tensor constant nor a get_attr node" (ExecuTorch's type and message, then the node;
///   `call_function.` for a compute node); value_error "Node '<null>' is not ..." for null;
/// - value_error "Node 'true_graph_0' (get_attr 'true_graph_0') names no tensor of the program:
///   'true_graph_0' is in neither state_dict nor constants, so it names a submodule (such as the
///   branch of a cond), which cannot be replaced by a tensor" when the get_attr's target is a key
///   of neither dictionary. In an exported program every parameter, buffer and constant is a
///   placeholder, so a get_attr node names a nested graph (cond branches, map bodies,
///   invoke_subgraph), which epgraph keeps with the node and not in either dictionary. ExecuTorch
///   refuses too (setattr of a tensor on a child module: "TypeError: cannot assign
///   'torch.FloatTensor' as child module 'true_graph_0' (torch.nn.Module or None expected)");
///   before this check epgraph added an unused `constants` entry;
/// - value_error "Node 'n' (get_attr 'obj') names a custom object in constants, not a tensor" when
///   the get_attr's constants entry is a custom object (replacing it by a tensor would break the
///   calls on it; ExecuTorch replaces it);
/// - std::bad_alloc, and what T's move assignment throws.
/// Strong guarantee (given a T whose move assignment has it): every check runs before anything
/// changes. O(input specs + length of the key). Mirrors `set_param_tensor` in ExecuTorch's
/// backends/transforms/utils.py.
template <class T>
void set_param_tensor(ExportedProgram<T>& ep, const Node* node, T data) {
  const auto where = detail::param_location(ep, node);
  if (node == nullptr) {
    throw value_error(
        "Node '<null>' is not a parameter, a buffer, a lifted tensor constant nor a get_attr node");
  }
  if (!where) {  // ExecuTorch's type and message, then which node
    throw runtime_error("unsupported param type, " + std::string(op_name(node->op())) + ". Node '" +
                        std::string(node->name()) +
                        "' is not a parameter, a buffer, a lifted tensor constant nor a get_attr "
                        "node");
  }
  if (node->op() == OpCode::get_attr && !where->first) {
    const std::string who = "Node '" + std::string(node->name()) + "' (get_attr '" +
                            std::string(node->target()) + "') ";
    const auto* entry = ep.constants().find(where->second);
    if (entry == nullptr) {
      throw value_error(who + "names no tensor of the program: '" + where->second +
                        "' is in neither state_dict nor constants, so it names a submodule (such "
                        "as the branch of a cond), which cannot be replaced by a tensor");
    }
    if (std::holds_alternative<ScriptObject>(*entry)) {
      throw value_error(who + "names a custom object in constants, not a tensor");
    }
  }
  if (where->first) {
    ep.state_dict().insert_or_assign(where->second, std::move(data));
  } else {
    ep.constants().insert_or_assign(where->second,
                                    typename ExportedProgram<T>::constant_type(std::move(data)));
  }
}

}  // namespace epgraph
