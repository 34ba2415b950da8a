// Checking a program: validate_graph_signature, verify (every violation), input order.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// Checks that an exported program is consistent: `validate_graph_signature` (the quick check
/// ExecuTorch's graph-edit helpers run, first mismatch only), `verify` (torch.export's
/// verifier rules plus Graph::lint, every violation at once; at VerifyLevel::canonical_order also
/// torch's canonical input order, which PyTorch's NativeRT requires) and
/// `input_order_departures` (that order on its own, for warnings).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "../detail/strings.hpp"
#include "../error.hpp"
#include "../ir/argument.hpp"
#include "../ir/bind.hpp"
#include "../ir/graph.hpp"
#include "../ir/node.hpp"
#include "../ir/print.hpp"
#include "../ir/symbolic.hpp"
#include "../ir/value.hpp"
#include "../ops/registry.hpp"
#include "exported_program.hpp"
#include "graph_signature.hpp"
#include "module_attributes.hpp"

namespace epgraph {

namespace detail {

// Python's repr of a constant value: None, True, 3, 1.5, 'text'.
inline std::string constant_repr(const ConstantValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using V = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<V, None>) {
          return "None";
        } else if constexpr (std::is_same_v<V, bool>) {
          return x ? "True" : "False";
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<V, double>) {
          return python_float_repr(x);
        } else {
          return python_str_repr(x);
        }
      },
      v);
}

// The constant an output-node result holds (None, bool, int, float, string), or empty for a node,
// a list or another kind of value.
inline std::optional<ConstantValue> result_constant(const Argument& a) {
  if (a.is_none()) return ConstantValue(None{});
  if (a.is<bool>()) return ConstantValue(a.as<bool>());
  if (a.is<std::int64_t>()) return ConstantValue(a.as<std::int64_t>());
  if (a.is<double>()) return ConstantValue(a.as<double>());
  if (a.is<std::string>()) return ConstantValue(a.as<std::string>());
  return std::nullopt;
}

// How a result of the output node is named in messages: the node's name, or the Python repr of a
// constant, or the FX text of anything else.
inline std::string result_repr(const Argument& a) {
  if (const Node* n = a.node()) return std::string(n->name());
  if (auto c = result_constant(a)) return constant_repr(*c);
  return format_arg(a);
}

// How a spec's argument is named in messages: its name, or the repr of a ConstantArgument's value.
inline std::string spec_arg_repr(const ArgumentSpec& arg) {
  if (const auto* c = std::get_if<ConstantArgument>(&arg)) return constant_repr(c->value);
  return arg_name(arg);
}

// True when output result `a` is what `spec` describes: a node named like the spec's (non-constant)
// argument, or a constant equal to the value of a ConstantArgument spec.
inline bool result_matches(const Argument& a, const OutputSpec& spec) {
  if (const Node* n = a.node()) {
    return names_graph_value(spec.arg()) && spec.name() == n->name();
  }
  const auto* c = std::get_if<ConstantArgument>(&spec.arg());
  if (c == nullptr) return false;
  const auto v = result_constant(a);
  return v && *v == c->value;
}

// The results the output node returns (its args()[0] list). Throws runtime_error when there is
// no output node or it does not hold a list.
inline const ArgumentList& output_results(const Graph& graph) {
  const Node* out = graph.output_node();
  if (out == nullptr) throw runtime_error("Graph has no output node");
  const ArgumentList* results = out->args().empty() ? nullptr : out->args()[0].list();
  if (results == nullptr) {
    throw runtime_error("Output node '" + std::string(out->name()) +
                        "' does not return a list of results");
  }
  return *results;
}

}  // namespace detail

/// Checks that the signature is up to date with the graph, and throws runtime_error at the first
/// mismatch, with upstream's messages:
/// - "Graph has N placeholder nodes but signature has M input specs";
/// - "Input node A does not match input spec B" (the i-th placeholder against the i-th spec);
/// - "Graph has no output node" / "Output node 'output' does not return a list of results";
/// - "Graph has N output nodes but signature has M output specs" (N = results of the output node);
/// - "Output node A does not match output spec B" (the i-th result against the i-th spec).
/// A result may be a constant or None (upstream crashes on them): it matches a ConstantArgument
/// spec of equal value (None == None, int == int, ...), and messages show it as Python's repr
/// (`None`, `3`, `'a'`); a ConstantArgument spec is likewise shown by its value's repr.
/// Read-only. O(placeholders + input specs + output specs); never walks compute nodes.
/// Mirrors `_validate_graph_signature` in ExecuTorch's backends/transforms/utils.py.
inline void validate_graph_signature(const Graph& graph, const ExportGraphSignature& signature) {
  const auto& inputs = signature.input_specs;
  if (graph.num_placeholders() != inputs.size()) {
    throw runtime_error("Graph has " + std::to_string(graph.num_placeholders()) +
                        " placeholder nodes but signature has " + std::to_string(inputs.size()) +
                        " input specs");
  }
  std::size_t i = 0;
  for (const Node& n : graph.placeholders()) {
    if (n.name() != arg_name(inputs[i].arg())) {
      throw runtime_error("Input node " + std::string(n.name()) + " does not match input spec " +
                          detail::spec_arg_repr(inputs[i].arg()));
    }
    ++i;
  }
  const ArgumentList& results = detail::output_results(graph);
  const auto& outputs = signature.output_specs;
  if (results.size() != outputs.size()) {
    throw runtime_error("Graph has " + std::to_string(results.size()) +
                        " output nodes but signature has " + std::to_string(outputs.size()) +
                        " output specs");
  }
  for (std::size_t k = 0; k < results.size(); ++k) {
    if (!detail::result_matches(results[k], outputs[k])) {
      throw runtime_error("Output node " + detail::result_repr(results[k]) +
                          " does not match output spec " + detail::spec_arg_repr(outputs[k].arg()));
    }
  }
}

/// validate_graph_signature on a program's graph and signature (see the overload above).
template <class T>
void validate_graph_signature(const ExportedProgram<T>& ep) {
  validate_graph_signature(ep.graph(), ep.graph_signature());
}

/// How strict verify() is. Each level checks everything the one before it checks.
enum class VerifyLevel {
  /// What torch.export's own verifier rejects (`_verify_exported_program_signature` in
  /// torch/_export/verifier.py, torch 2.13), plus Graph::lint and the checks VerifyOptions turns
  /// on. torch's verifier never looks at the order of the input specs: it pairs the i-th
  /// placeholder with the i-th spec and checks each spec's kind, argument and target, so a
  /// program torch.export itself wrote with `strict=True` (a lifted CONSTANT_TENSOR before a
  /// BUFFER) passes. Departures from the canonical input order are not errors at this level;
  /// input_order_departures lists them.
  torch,
  /// torch, and also torch's canonical input order TOKEN < PARAMETER < persistent BUFFER <
  /// non-persistent BUFFER < CONSTANT_TENSOR < CUSTOM_OBJ < USER_INPUT (see
  /// input_order_departures). PyTorch's C++ runtime NativeRT refuses to load a program whose
  /// non-user inputs depart from it (`checkInputOrders` in torch/nativert/graph/GraphSignature.cpp,
  /// called by the GraphSignature constructor), and ExecuTorch's create_constant_placeholder
  /// refuses to put a constant after a user input.
  canonical_order,
};

/// What verify() checks.
struct VerifyOptions {
  /// When true (the default), every PARAMETER / BUFFER / CONSTANT_TENSOR / CUSTOM_OBJ target must
  /// be present in the dictionary its kind and persistence put it in (and a non-persistent buffer
  /// must be absent from state_dict). Set it to false for a program without its data, such as one
  /// read from a bare serialized-program JSON file with no weights: every other rule still holds.
  bool check_state = true;
  /// When true (the default), every call_function node whose operator schema global_registry()
  /// knows must bind to it (normalized_arguments). Operators without a schema are not an error:
  /// operators_without_schema lists them.
  bool check_schemas = true;
  /// VerifyLevel::torch (the default): only what torch's verifier rejects is an error.
  /// VerifyLevel::canonical_order: departures from the canonical input order are errors too.
  VerifyLevel level = VerifyLevel::torch;
};

namespace detail {

// Rank of an input in torch's canonical order.
inline int input_rank(const InputSpec& s) noexcept {
  switch (s.kind()) {
    case InputKind::TOKEN: return 0;
    case InputKind::PARAMETER: return 1;
    case InputKind::BUFFER: return s.persistent() == false ? 3 : 2;
    case InputKind::CONSTANT_TENSOR: return 4;
    case InputKind::CUSTOM_OBJ: return 5;
    case InputKind::USER_INPUT: return 6;
  }
  return 6;
}

inline std::string input_kind_text(const InputSpec& s) {
  if (s.kind() == InputKind::BUFFER) {
    return s.persistent() == false ? "non-persistent BUFFER" : "persistent BUFFER";
  }
  return std::string(kind_name(s.kind()));
}

// 0: token, 1: mutation of an input, 2: anything else (user outputs, loss, gradients).
inline int output_rank(OutputKind k) noexcept {
  switch (k) {
    case OutputKind::TOKEN: return 0;
    case OutputKind::BUFFER_MUTATION:
    case OutputKind::PARAMETER_MUTATION:
    case OutputKind::USER_INPUT_MUTATION: return 1;
    default: return 2;
  }
}

// Rule 5: state targets ep.module() cannot register (see module_attribute_in).
inline void check_registrable_targets(const ExportGraphSignature& sig,
                                      std::vector<std::string>& out) {
  for (const InputSpec& s : sig.input_specs) {
    if (!s.target()) continue;
    switch (s.kind()) {
      case InputKind::PARAMETER:
      case InputKind::BUFFER:
      case InputKind::CONSTANT_TENSOR:
      case InputKind::CUSTOM_OBJ: break;
      default: continue;
    }
    const std::optional<std::string_view> taken = module_attribute_in(*s.target());
    if (!taken) continue;
    out.push_back("Input spec '" + s.name() + "' (" + std::string(kind_name(s.kind())) +
                  ") has target '" + *s.target() + "', which ep.module() cannot register: its " +
                  "module already has an attribute '" + std::string(*taken) + "'");
  }
}

// Rule 5, the targets among themselves: a state target that is another's module path
// (module_paths_clash: `lin` beside `lin.weight`), or that falls on a nested graph's submodule
// (falls_on_submodule: `true_graph_0`). Sorted, so that the targets under `t.` are one range:
// O(specs log specs + nested graphs + clashes).
template <class T>
void check_target_paths(const ExportedProgram<T>& ep, std::vector<std::string>& out) {
  std::vector<const InputSpec*> specs;
  for (const InputSpec& s : ep.graph_signature().input_specs) {
    if (!s.target()) continue;
    switch (s.kind()) {
      case InputKind::PARAMETER:
      case InputKind::BUFFER:
      case InputKind::CONSTANT_TENSOR:
      case InputKind::CUSTOM_OBJ: specs.push_back(&s); break;
      default: break;
    }
  }
  auto said = [](const InputSpec& s) {
    return "Input spec '" + s.name() + "' (" + std::string(kind_name(s.kind())) + ") has target '" +
           *s.target() + "', which ep.module() cannot register: ";
  };
  std::vector<const InputSpec*> sorted = specs;
  std::sort(sorted.begin(), sorted.end(),
            [](const InputSpec* a, const InputSpec* b) { return *a->target() < *b->target(); });
  for (const InputSpec* s : specs) {
    const std::string under = *s->target() + ".";
    const auto it = std::lower_bound(
        sorted.begin(), sorted.end(), under,
        [](const InputSpec* x, const std::string& key) { return *x->target() < key; });
    if (it == sorted.end() || !module_paths_clash(*s->target(), *(*it)->target())) continue;
    out.push_back(said(*s) + "target '" + *(*it)->target() + "' of input spec '" + (*it)->name() +
                  "' needs a submodule '" + *s->target() + "' there");
  }
  // the nested graphs' submodules: the program's own, and the records of get_attr nodes
  std::vector<std::pair<std::string_view, std::string>> submodules;
  for (const auto& entry : ep.nested_graphs()) {
    submodules.emplace_back(entry.first, "the program's nested graph '" + entry.first + "'");
  }
  for (const Node& n : ep.graph().nodes()) {
    if (n.op() != OpCode::get_attr || n.meta().serialized.empty()) continue;
    submodules.emplace_back(n.target(),
                            "the nested graph get_attr node '" + std::string(n.name()) + "' reads");
  }
  for (const InputSpec* s : specs) {
    for (const auto& [name, what] : submodules) {
      if (!falls_on_submodule(*s->target(), name)) continue;
      out.push_back(said(*s) + "'" + std::string(name) + "' is the submodule of " + what);
      break;
    }
  }
}

template <class T>
void check_state(const ExportedProgram<T>& ep, std::vector<std::string>& out) {
  for (const InputSpec& s : ep.graph_signature().input_specs) {
    if (!s.target()) continue;
    const std::string& t = *s.target();
    const auto* constant = ep.constants().find(t);
    switch (s.kind()) {
      case InputKind::PARAMETER:
        if (!ep.state_dict().contains(t))
          out.push_back("Parameter " + t + " is not in the state dict.");
        break;
      case InputKind::BUFFER:
        if (s.persistent() != false) {
          // torch's verifier accepts a persistent buffer found only in constants
          // (torch/_export/verifier.py, "Allow buffers that live in constants"), but ep.module()
          // reads every persistent buffer from the state dict (_register_attrs_to_new_gm in
          // torch/export/_unlift.py raises KeyError): such a program loads and does not run,
          // so epgraph reports it, saying why.
          if (ep.state_dict().contains(t)) break;
          if (constant == nullptr) {
            out.push_back("Buffer " + t + " is not in the state dict.");
          } else {
            out.push_back("Buffer " + t +
                          " is not in the state dict but in the constants dictionary: torch's "
                          "verifier accepts that, ep.module() raises KeyError('" +
                          t + "') (it reads persistent buffers from the state dict)");
          }
          break;
        }
        if (ep.state_dict().contains(t)) {
          out.push_back("Non-persistent buffer " + t + " is in the state dict, it should not be.");
        }
        if (constant == nullptr) {
          out.push_back("Non-persistent buffer " + t + " is not in the constants dictionary.");
        } else if (std::holds_alternative<ScriptObject>(*constant)) {
          out.push_back("Non-persistent buffer " + t +
                        " is a custom object in the constants dictionary, not a tensor.");
        }
        break;
      case InputKind::CONSTANT_TENSOR:
        if (constant == nullptr) {
          out.push_back("Constant tensor " + t + " is not in the constants dictionary.");
        } else if (std::holds_alternative<ScriptObject>(*constant)) {
          out.push_back("Constant tensor " + t +
                        " is a custom object in the constants dictionary, not a tensor.");
        }
        break;
      case InputKind::CUSTOM_OBJ:
        if (constant == nullptr) {
          out.push_back("Custom object " + t + " is not in the constants dictionary.");
        } else if (!std::holds_alternative<ScriptObject>(*constant)) {
          out.push_back("Custom object " + t +
                        " is a tensor in the constants dictionary, not a custom object.");
        }
        break;
      default: break;
    }
  }
}

inline void check_inputs_match(const Graph& graph, const ExportGraphSignature& sig,
                               std::vector<std::string>& out) {
  const auto& specs = sig.input_specs;
  if (graph.num_placeholders() == specs.size()) {
    std::size_t i = 0;
    for (const Node& n : graph.placeholders()) {
      if (n.name() != arg_name(specs[i].arg())) {
        out.push_back("Input node " + std::string(n.name()) + " does not match input spec " +
                      spec_arg_repr(specs[i].arg()));
      }
      ++i;
    }
    return;
  }
  out.push_back("Graph has " + std::to_string(graph.num_placeholders()) +
                " placeholder nodes but signature has " + std::to_string(specs.size()) +
                " input specs");
  std::unordered_map<std::string_view, std::size_t> spec_names;
  for (const InputSpec& s : specs) ++spec_names[arg_name(s.arg())];
  std::unordered_map<std::string_view, std::size_t> node_names;
  for (const Node& n : graph.placeholders()) {
    ++node_names[n.name()];
    if (spec_names.count(n.name()) == 0) {
      out.push_back("Placeholder " + std::string(n.name()) + " has no input spec");
    }
  }
  for (const InputSpec& s : specs) {
    if (node_names.count(arg_name(s.arg())) == 0) {
      out.push_back("Input spec " + spec_arg_repr(s.arg()) + " names no placeholder");
    }
  }
}

inline void check_outputs_match(const Graph& graph, const ExportGraphSignature& sig,
                                std::vector<std::string>& out) {
  const Node* output = graph.output_node();
  if (output == nullptr) return;  // lint reports it
  const ArgumentList* results = output->args().empty() ? nullptr : output->args()[0].list();
  if (results == nullptr) {
    out.push_back("Output node '" + std::string(output->name()) +
                  "' does not return a list of results");
    return;
  }
  const auto& specs = sig.output_specs;
  if (results->size() != specs.size()) {
    out.push_back("Graph has " + std::to_string(results->size()) +
                  " output nodes but signature has " + std::to_string(specs.size()) +
                  " output specs");
    return;
  }
  for (std::size_t k = 0; k < specs.size(); ++k) {
    if (!result_matches((*results)[k], specs[k])) {
      out.push_back("Output node " + result_repr((*results)[k]) + " does not match output spec " +
                    spec_arg_repr(specs[k].arg()));
    }
  }
}

inline void check_output_order(const ExportGraphSignature& sig, std::vector<std::string>& out) {
  const OutputSpec* highest = nullptr;
  for (const OutputSpec& s : sig.output_specs) {
    const int rank = output_rank(s.kind());
    if (highest != nullptr && rank < output_rank(highest->kind())) {
      const std::string after = "' (" + std::string(kind_name(s.kind())) +
                                ") comes after output '" + spec_arg_repr(highest->arg()) + "' (" +
                                std::string(kind_name(highest->kind())) + ")";
      if (rank == 0) {
        out.push_back("Output token '" + spec_arg_repr(s.arg()) + after +
                      ": output tokens must come first");
      } else {
        out.push_back("Mutation output '" + spec_arg_repr(s.arg()) + after +
                      ": mutation outputs must come right after the output tokens");
      }
    }
    if (highest == nullptr || rank > output_rank(highest->kind())) highest = &s;
  }
}

inline void check_output_targets(const ExportGraphSignature& sig, std::vector<std::string>& out) {
  std::unordered_set<std::string_view> buffers;
  std::unordered_set<std::string_view> parameters;
  std::unordered_set<std::string_view> user_inputs;
  for (const InputSpec& s : sig.input_specs) {
    if (s.kind() == InputKind::USER_INPUT) {
      if (names_graph_value(s.arg())) user_inputs.insert(s.name());
    } else if (s.target() && s.kind() == InputKind::BUFFER) {
      buffers.insert(*s.target());
    } else if (s.target() && s.kind() == InputKind::PARAMETER) {
      parameters.insert(*s.target());
    }
  }
  // "KIND:target" -> first output mutating it
  std::unordered_map<std::string, const OutputSpec*> mutated;
  for (const OutputSpec& s : sig.output_specs) {
    if (!s.target()) continue;
    const std::unordered_set<std::string_view>* pool = nullptr;
    const char* what = "";
    switch (s.kind()) {
      case OutputKind::BUFFER_MUTATION:
        pool = &buffers;
        what = "a buffer";
        break;
      case OutputKind::PARAMETER_MUTATION:
      case OutputKind::GRADIENT_TO_PARAMETER:
        pool = &parameters;
        what = "a parameter";
        break;
      case OutputKind::USER_INPUT_MUTATION:
      case OutputKind::GRADIENT_TO_USER_INPUT:
        pool = &user_inputs;
        what = "a user input";
        break;
      default: continue;
    }
    const std::string& t = *s.target();
    const std::string who = "Output '" + s.name() + "' (" + std::string(kind_name(s.kind())) + ")";
    if (pool->count(t) == 0) {
      out.push_back(who + " targets '" + t + "', which is not " + what + " of the signature");
      continue;
    }
    if (output_rank(s.kind()) != 1) continue;
    auto inserted = mutated.emplace(std::string(kind_name(s.kind())) + ":" + t, &s);
    if (!inserted.second) {
      out.push_back(who + " mutates '" + t + "', which output '" + inserted.first->second->name() +
                    "' already mutates");
    }
  }
}

}  // namespace detail

/// The departures of `signature`'s input specs from torch's canonical order TOKEN < PARAMETER <
/// persistent BUFFER < non-persistent BUFFER < CONSTANT_TENSOR < CUSTOM_OBJ < USER_INPUT, one
/// message per departing spec, in spec order; empty when the order is canonical. Each spec is
/// compared with the highest-ranked spec before it (the first of that rank):
/// - "Persistent buffers must come before non-persistent buffers: 'b_a' comes after 'b_b'";
/// - "Input 'b_offset' (persistent BUFFER) comes after input 'c_gain' (CONSTANT_TENSOR): inputs
///   must be ordered TOKEN < PARAMETER < persistent BUFFER < non-persistent BUFFER <
///   CONSTANT_TENSOR < CUSTOM_OBJ < USER_INPUT" for every other pair.
/// torch.export produces this order for non-strict exports, but a `strict=True` export can put a
/// lifted constant before a buffer, and torch.export.load and torch's own verifier accept any
/// order (see VerifyLevel::torch). PyTorch's C++ runtime NativeRT refuses a program whose TOKEN,
/// PARAMETER, BUFFER, CONSTANT_TENSOR and CUSTOM_OBJ inputs are out of this order or whose
/// persistent buffer follows a non-persistent one ("Input arg ... is out of order!",
/// "Persistent buffers must come before non-persistent buffers."; `checkInputOrders` in
/// torch/nativert/graph/GraphSignature.cpp); it skips user inputs, whose place last is where
/// torch.export puts them and what ExecuTorch's create_constant_placeholder requires. epgraph's
/// edits never add a departure (they may keep ones the program had). verify reports these as
/// errors at VerifyLevel::canonical_order; `pt2_edit validate` prints them as warnings unless
/// given `--strict`. Read-only. O(input specs).
[[nodiscard]] inline std::vector<std::string> input_order_departures(
    const ExportGraphSignature& signature) {
  std::vector<std::string> out;
  const InputSpec* highest = nullptr;
  for (const InputSpec& s : signature.input_specs) {
    if (highest != nullptr && detail::input_rank(s) < detail::input_rank(*highest)) {
      if (detail::input_rank(s) == 2 && detail::input_rank(*highest) == 3) {
        out.push_back("Persistent buffers must come before non-persistent buffers: '" +
                      detail::spec_arg_repr(s.arg()) + "' comes after '" +
                      detail::spec_arg_repr(highest->arg()) + "'");
      } else {
        out.push_back("Input '" + detail::spec_arg_repr(s.arg()) + "' (" +
                      detail::input_kind_text(s) + ") comes after input '" +
                      detail::spec_arg_repr(highest->arg()) + "' (" +
                      detail::input_kind_text(*highest) +
                      "): inputs must be ordered TOKEN < PARAMETER < persistent BUFFER < "
                      "non-persistent BUFFER < CONSTANT_TENSOR < CUSTOM_OBJ < USER_INPUT");
      }
    }
    if (highest == nullptr || detail::input_rank(s) > detail::input_rank(*highest)) highest = &s;
  }
  return out;
}

namespace detail {
// Rule 9 of verify: call_function nodes whose arguments do not bind to their schema.
// Each distinct target's schema is looked up once (a chain of 100k nodes spent a fifth of verify
// making and finding the schema name of every node's target).
inline void check_schemas(const Graph& graph, std::vector<std::string>& out) {
  std::unordered_map<std::string_view, const FunctionSchema*> schemas;
  for (const Node& n : graph.nodes()) {
    if (n.op() != OpCode::call_function) continue;
    auto [it, added] = schemas.try_emplace(n.target(), nullptr);
    if (added) it->second = global_registry().find_target(n.target());
    if (it->second == nullptr) continue;
    try {
      (void)NormalizedArguments(*it->second, n.args(), n.kwargs());
    } catch (const value_error& e) {
      // normalized_arguments' message
      out.push_back("Node '" + std::string(n.name()) + "' (" + std::string(n.target()) +
                    ") does not match its schema: " + e.what());
    }
  }
}

// Rule 6a of verify, at every level: each call_function node whose target names
// an aten:: or prims:: operator (`torch.ops.aten.<op>.<overload>`) that the schema table of torch
// does not hold, which torch cannot load ("Node 'bad' calls
// 'torch.ops.aten.not_an_op.default', which is not an operator of torch 2.13.0 (no schema
// aten::not_an_op)"). Other namespaces are not checked (custom ops register their own schemas).
// A target found to be fine is not looked up again.
inline void check_aten_targets(const Graph& graph, std::vector<std::string>& out) {
  std::unordered_set<std::string_view> fine;
  for (const Node& n : graph.nodes()) {
    if (n.op() != OpCode::call_function) continue;
    const std::string_view target = n.target();
    if (target.empty()) {
      out.push_back("Node '" + std::string(n.name()) + "' has an empty target");
      continue;
    }
    if (fine.count(target) != 0) continue;
    const std::string key = schema_name_of_target(target);
    if (key.empty() && (::epgraph::detail::starts_with(target, "torch.ops.aten.") ||
                        ::epgraph::detail::starts_with(target, "torch.ops.prims."))) {
      // torch.ops.aten.mul (a packet, not an overload), torch.ops.aten.mul.Tensor.default, ...
      out.push_back("Node '" + std::string(n.name()) + "' calls '" + std::string(target) +
                    "', which is not an operator overload (torch.ops.<namespace>.<op>.<overload>)");
      continue;
    }
    if ((key.rfind("aten::", 0) != 0 && key.rfind("prims::", 0) != 0) ||
        global_registry().find(key) != nullptr) {
      fine.insert(target);
      continue;
    }
    out.push_back("Node '" + std::string(n.name()) + "' calls '" + std::string(n.target()) +
                  "', which is not an operator of torch " +
                  std::string(global_registry_torch_version()) + " (no schema " + key + ")");
  }
}

// Rule 12 of verify: each symbolic expression of a node's value is one sym::parse reads and uses
// only symbols that are keys of range_constraints, as torch.export.load requires (sympify, then
// "vr must not be None" for a symbol without a range), of the kind its slot holds: a SymBool
// (a relation, And, Or, Not, True, False) where a SymBool belongs and nowhere else (torch loads
// `Eq(s0, 4)` as a size and fails later, when the size is used). Each distinct text is parsed
// once.
template <class T>
void check_value_symbols(const ExportedProgram<T>& ep, std::vector<std::string>& out) {
  std::unordered_map<std::string_view, const RangeConstraint*> keys;
  for (const RangeConstraint& r : ep.metadata().range_constraints) {
    keys.emplace(r.symbol, &r);
    if (r.min_val && r.max_val && *r.min_val > *r.max_val) {
      out.push_back("Range constraint '" + r.symbol + "' has min_val " +
                    std::to_string(*r.min_val) + " > max_val " + std::to_string(*r.max_val));
    }
  }
  struct Read {
    std::string problem;                     // why the text is refused, or ""
    std::optional<std::int64_t> constant;    // its value when it has no symbol
    bool boolean = false;                    // a SymBool expression
    const RangeConstraint* range = nullptr;  // the range of the one symbol it is, if it is one
  };
  std::unordered_map<std::string, Read> seen;  // by text: each is parsed once
  for (const Node& n : ep.graph().nodes()) {
    const std::string why = find_in_sym_exprs(
        n.meta().val, [&](const SymExpr& e, const std::string& field) -> std::string {
          auto it = seen.find(e.expr);
          if (it == seen.end()) {
            Read read;
            try {
              const sym::Expr parsed = sym::parse(e.expr);
              read.constant = parsed.as_integer();
              read.boolean = parsed.is_boolean();
              const std::vector<std::string> names = parsed.free_symbols();
              for (const std::string& s : names) {
                if (keys.count(s) != 0) continue;
                // torch 2.13 loads a backed symbol without a range (its ShapeEnv gives it the
                // default one) but refuses an unbacked one
                read.problem =
                    "the symbol '" + s + "' is not a key of range_constraints " +
                    (sym::is_unbacked_name(s)
                         ? "(torch.export.load refuses it: \"vr must not be None\")"
                         : "(torch.export.load accepts it, but torch.export writes a range for "
                           "every symbol it makes: the program was edited without one)");
                break;
              }
              if (read.problem.empty() && names.size() == 1 && !read.boolean &&
                  sym::str(parsed) == names[0]) {
                read.range = keys.at(names[0]);
              }
            } catch (const value_error& error) {
              read.problem = error.what();
            }
            it = seen.emplace(e.expr, std::move(read)).first;
          }
          const Read& read = it->second;
          if (!read.problem.empty()) return field + ": " + read.problem;
          constexpr std::string_view bool_slot = "SymBool";  // field ends with it
          const bool wants_boolean =
              field.size() >= bool_slot.size() &&
              std::string_view(field).substr(field.size() - bool_slot.size()) == bool_slot;
          if (read.boolean != wants_boolean) {
            return field + ": '" + e.expr + "' is " +
                   (read.boolean ? "a SymBool expression (a relation, And, Or, Not, True or "
                                   "False), where " +
                                       std::string(field.find("SymFloat") != std::string::npos
                                                       ? "a SymFloat"
                                                       : "an integer") +
                                       " belongs"
                                 : std::string("not a SymBool expression (a relation, And, Or, "
                                               "Not, True or False)"));
          }
          // a symbol whose export-time value is outside its range (torch: "-1 not in VR[2, 64]")
          if (read.range != nullptr && e.hint &&
              ((read.range->min_val && *e.hint < *read.range->min_val) ||
               (read.range->max_val && *e.hint > *read.range->max_val))) {
            const auto bound = [](const std::optional<std::int64_t>& b, const char* inf) {
              return b ? std::to_string(*b) : std::string(inf);
            };
            return field + ": the hint " + std::to_string(*e.hint) + " of '" + e.expr +
                   "' is outside its range constraint [" + bound(read.range->min_val, "-int_oo") +
                   ", " + bound(read.range->max_val, "int_oo") +
                   "] (torch.export.load refuses a symbol whose first hint is outside its range)";
          }
          // a constant whose export-time value disagrees (torch: "int(sym)=7 != hint=4")
          if (read.constant && e.hint && *read.constant != *e.hint) {
            return field + ": the expression '" + e.expr + "' is " +
                   std::to_string(*read.constant) + ", but its hint is " + std::to_string(*e.hint);
          }
          return {};
        });
    if (!why.empty()) out.push_back("Node '" + std::string(n.name()) + "': " + why);
  }
}

// Rule 11 of verify: the nested graphs the program owns (ExportedProgram::nested_graphs) and the
// nodes reading them.
template <class T>
void check_nested_graphs(const ExportedProgram<T>& ep, const VerifyOptions& options,
                         std::vector<std::string>& out) {
  for (const auto& [target, nested] : ep.nested_graphs()) {
    const std::string prefix = "Nested graph '" + target + "': ";
    try {
      nested->lint();
    } catch (const lint_error& e) {
      for (const std::string& v : e.violations()) out.push_back(prefix + v);
    }
    if (options.check_schemas) {
      std::vector<std::string> unbound;
      check_schemas(*nested, unbound);
      for (const std::string& v : unbound) out.push_back(prefix + v);
    }
  }
  for (const Node& n : ep.graph().nodes()) {
    if (n.op() == OpCode::get_attr && !n.meta().serialized.empty() &&
        ep.nested_graph(n.target()) != nullptr) {
      out.push_back("get_attr node '" + std::string(n.name()) +
                    "' carries a nested graph under "
                    "target '" +
                    std::string(n.target()) + "', which is also a nested graph the program owns");
    }
    if (n.op() != OpCode::call_function || n.target() != "torch.ops.higher_order.invoke_subgraph") {
      continue;
    }
    const ArgumentView args = n.args();
    const Node* attr = args.size() > 0 ? args[0].node() : nullptr;
    if (attr == nullptr || attr->op() != OpCode::get_attr) {
      out.push_back("Node '" + std::string(n.name()) +
                    "' (invoke_subgraph): argument 0 is not a get_attr node naming its subgraph");
      continue;
    }
    if (args.size() < 2 || !args[1].is<std::string>()) {
      out.push_back("Node '" + std::string(n.name()) +
                    "' (invoke_subgraph): argument 1, the identifier, is not a string");
    }
    const Graph* nested =
        attr->meta().serialized.empty() ? ep.nested_graph(attr->target()) : nullptr;
    if (nested == nullptr) {
      if (attr->meta().serialized.empty()) {
        out.push_back("Node '" + std::string(n.name()) + "' (invoke_subgraph) calls '" +
                      std::string(attr->target()) + "', which is no nested graph of the program");
      }
      continue;  // a nested graph read from a file: kept verbatim, checked by the loader
    }
    const std::size_t operands = args.size() < 2 ? 0 : args.size() - 2;
    if (operands != nested->num_placeholders()) {
      out.push_back("Node '" + std::string(n.name()) + "' (invoke_subgraph) passes " +
                    std::to_string(operands) + " operand(s) to nested graph '" +
                    std::string(attr->target()) + "', which has " +
                    std::to_string(nested->num_placeholders()) + " placeholder(s)");
    }
  }
}
}  // namespace detail

/// The call_function targets of `graph` spelled `torch.ops.<ns>.<op>.<overload>` whose schema
/// `registry` lacks, sorted and each once: what `verify` cannot check and the JSON writer cannot
/// name arguments for in nodes made in C++ (register their schemas with
/// OperatorRegistry::register_schema). Read-only. O(nodes * log registry).
[[nodiscard]] inline std::vector<std::string> operators_without_schema(
    const Graph& graph, const OperatorRegistry& registry = global_registry()) {
  std::vector<std::string> out;
  for (const Node& n : graph.nodes()) {
    if (n.op() != OpCode::call_function || schema_name_of_target(n.target()).empty()) continue;
    if (registry.find_target(n.target()) == nullptr) out.emplace_back(n.target());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// Checks everything torch.export's verifier checks that applies to epgraph's model, plus
/// Graph::lint, and throws verification_error whose violations() lists every problem found, in
/// this order:
/// 1. Graph::lint's violations, verbatim (broken links, use before definition, placeholders not
///    a prefix, missing or misplaced output node, ...);
/// 2. placeholders against input specs: "Graph has N placeholder nodes but signature has M input
///    specs" followed by "Placeholder x has no input spec" / "Input spec y names no placeholder",
///    or, when the counts agree, "Input node A does not match input spec B" for each position;
/// 3. results of the output node against output specs: "Output node 'output' does not return a
///    list of results", or "Graph has N output nodes but signature has M output specs", or
///    "Output node A does not match output spec B" for each position (constants and None match
///    a ConstantArgument of equal value, see validate_graph_signature);
/// 4. when `options.check_state`: each target is where its kind puts it, with torch's messages
///    "Parameter t is not in the state dict.", "Buffer t is not in the state dict." (persistent),
///    "Non-persistent buffer t is in the state dict, it should not be.", "Non-persistent buffer
///    t is not in the constants dictionary.", "Constant tensor t is not in the constants
///    dictionary.", "Custom object t is not in the constants dictionary.", and "... is a custom
///    object in the constants dictionary, not a tensor." / "Custom object t is a tensor in the
///    constants dictionary, not a custom object." for the wrong kind of entry. A persistent
///    buffer found only in `constants` is reported ("Buffer t is not in the state dict but in
///    the constants dictionary: torch's verifier accepts that, ep.module() raises KeyError('t')
///    (...)"): torch loads such a program and cannot build its module;
/// 5. state targets ep.module() cannot register (module_attribute_in): "Input spec 'b_forward'
///    (BUFFER) has target 'forward', which ep.module() cannot register: its module already has
///    an attribute 'forward'" (torch's verifier accepts it; building the module raises KeyError);
///    and state targets that clash with each other or with a nested graph's submodule
///    (module_paths_clash, falls_on_submodule): "Input spec 'b_lin' (BUFFER) has target 'lin',
///    which ep.module() cannot register: target 'lin.weight' of input spec 'p_lin_weight' needs
///    a submodule 'lin' there", "... target 'true_graph_0', which ep.module() cannot register:
///    'true_graph_0' is the submodule of the nested graph get_attr node 'true_graph_0' reads";
/// 6. only at `options.level == VerifyLevel::canonical_order`: the departures from torch's
///    canonical input order that input_order_departures lists ("Input 'b_offset' (persistent
///    BUFFER) comes after input 'c_gain' (CONSTANT_TENSOR): inputs must be ordered TOKEN < ... <
///    USER_INPUT", "Persistent buffers must come before non-persistent buffers: 'b_a' comes
///    after 'b_b'"). torch's verifier does not check input order, so at the default
///    VerifyLevel::torch they are not errors (call input_order_departures for them);
/// 6a. each call_function node whose `torch.ops.aten.*` / `torch.ops.prims.*` target is not in
///    the schema table of torch ("Node 'bad' calls 'torch.ops.aten.not_an_op.default', which is
///    not an operator of torch 2.13.0 (no schema aten::not_an_op)") or is not of the form
///    torch.ops.<namespace>.<op>.<overload> ("Node 'bad' calls 'torch.ops.aten.mul', which is
///    not an operator overload (torch.ops.<namespace>.<op>.<overload>)"), and each with an empty
///    target ("Node 'bad' has an empty target"): torch.export.load cannot resolve such a
///    target, so it is an error at every level;
/// 7. output layout: "Output token 't' (TOKEN) comes after output 'y' (USER_OUTPUT): output
///    tokens must come first"; "Mutation output 'm' (BUFFER_MUTATION) comes after output 'y'
///    (USER_OUTPUT): mutation outputs must come right after the output tokens";
/// 8. output targets: "Output 'm' (BUFFER_MUTATION) targets 't', which is not a buffer of the
///    signature" (likewise "a parameter" for PARAMETER_MUTATION / GRADIENT_TO_PARAMETER and "a
///    user input" for USER_INPUT_MUTATION / GRADIENT_TO_USER_INPUT, whose targets are user input
///    names), and "Output 'm2' (BUFFER_MUTATION) mutates 't', which output 'm' already mutates";
/// 9. when `options.check_schemas`: each call_function node whose schema global_registry() knows
///    binds to it: "Node 'index_copy' (torch.ops.aten.index_copy.default) does not match its
///    schema: argument 'dim' expects int, got node 'pos' (a tensor); schema: aten::index_copy(...)
///    -> Tensor" (see normalized_arguments; operators_without_schema lists the others);
/// 10. nested graphs: "get_attr nodes 'true_graph_0' and 'true_graph_1' both name target
///     'true_graph_0' for different nested graphs" for each get_attr node whose record carries a
///     nested graph other than the first one of its target (see nested_graph_clashes). torch's
///     verifier does not check this; its loader registers one submodule per target, so such a
///     program would call the last graph read from every node of the target.
/// 11. nested graphs the program owns (ExportedProgram::nested_graphs, e.g. outline_partition's):
///     each passes Graph::lint ("Nested graph 'repeated_subgraph0': <violation>") and, with
///     `options.check_schemas`, rule 9; an invoke_subgraph call reads its subgraph through a
///     get_attr node ("Node 'invoke_subgraph' (invoke_subgraph): argument 0 is not a get_attr
///     node naming its subgraph"), has a string identifier ("... argument 1, the identifier, is
///     not a string"), calls an existing graph ("Node 'invoke_subgraph' (invoke_subgraph) calls
///     'g', which is no nested graph of the program", for a get_attr without a record of its own)
///     with one operand per placeholder ("Node 'invoke_subgraph' (invoke_subgraph) passes 2
///     operand(s) to nested graph 'repeated_subgraph0', which has 3 placeholder(s)"); and no
///     get_attr node carries a graph from a file under an owned graph's target ("get_attr node
///     'g' carries a nested graph under target 'g', which is also a nested graph the program
///     owns"). torch checks these when it loads or runs the program.
/// 12. symbolic values: each expression of a node's value is one torch writes and uses only
///     symbols of range_constraints ("Node 'x': sizes[0]: the symbol 'u7' is not a key of
///     range_constraints (torch.export.load refuses it: \"vr must not be None\")"; for a backed
///     symbol `s5`, which torch 2.13 loads, "... (torch.export.load accepts it, but torch.export
///     writes a range for every symbol it makes: the program was edited without one)"; "Node
///     'x': sizes[0]: cannot read the symbolic expression 's0 +* 2': unexpected '*' at offset
///     4"); a constant expression equals its hint ("Node 'x': sizes[0]: the expression '7' is 7,
///     but its hint is 4"); every hint of a symbol lies in its range constraint ("Node 'x':
///     sizes[0]: the hint 65 of 's0' is outside its range constraint [2, 64] (torch.export.load
///     refuses a symbol whose first hint is outside its range)": torch checks the first hint it
///     reads, epgraph every one); and each range constraint has min_val <= max_val ("Range
///     constraint 's0' has min_val 100 > max_val 2").
/// Rules 2-4 and 7-8 are what `_verify_exported_program_signature` (torch/_export/verifier.py)
/// checks, reported all at once rather than first only, with these additions torch lacks: the
/// output targets of rule 8 must be unique, rules 4 (a persistent buffer only in `constants`)
/// and 5 (targets ep.module() cannot register): torch writes and loads such programs, and their
/// `ep.module()` fails; and rule 10 (torch runs the wrong nested graph). Read-only. O(nodes +
/// edges + specs + size of the records of get_attr nodes sharing a target). Mirrors
/// torch.export's verifier (`Verifier.check`, torch/_export/verifier.py) and, at
/// VerifyLevel::canonical_order, `checkInputOrders` of torch/nativert/graph/GraphSignature.cpp.
template <class T>
void verify(const ExportedProgram<T>& ep, const VerifyOptions& options = {}) {
  std::vector<std::string> problems;
  try {
    ep.graph().lint();
  } catch (const lint_error& e) {
    problems.insert(problems.end(), e.violations().begin(), e.violations().end());
  }
  const ExportGraphSignature& sig = ep.graph_signature();
  detail::check_inputs_match(ep.graph(), sig, problems);
  detail::check_outputs_match(ep.graph(), sig, problems);
  if (options.check_state) detail::check_state(ep, problems);
  detail::check_registrable_targets(sig, problems);
  detail::check_target_paths(ep, problems);
  if (options.level == VerifyLevel::canonical_order) {
    std::vector<std::string> departures = input_order_departures(sig);
    problems.insert(problems.end(), std::make_move_iterator(departures.begin()),
                    std::make_move_iterator(departures.end()));
  }
  detail::check_aten_targets(ep.graph(), problems);
  detail::check_output_order(sig, problems);
  detail::check_output_targets(sig, problems);
  if (options.check_schemas) detail::check_schemas(ep.graph(), problems);
  for (const NestedGraphClash& c : nested_graph_clashes(ep.graph())) {
    problems.push_back(c.message());
  }
  detail::check_nested_graphs(ep, options, problems);
  detail::check_value_symbols(ep, problems);
  if (!problems.empty()) throw verification_error(std::move(problems));
}

#if defined(EPGRAPH_COMPILED) && EPGRAPH_COMPILED
// Compiled mode (CMake option EPGRAPH_COMPILED, target epgraph::compiled): these are compiled
// once in the library, so a file that calls them for HostTensor does not instantiate them.
extern template void validate_graph_signature<HostTensor>(const ExportedProgram<HostTensor>&);
extern template void verify<HostTensor>(const ExportedProgram<HostTensor>&, const VerifyOptions&);
#endif

}  // namespace epgraph
