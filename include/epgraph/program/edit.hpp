// Program edits after ExecuTorch's helpers: mutable buffers, constant placeholders, mutations.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// Program edits that add or remove state: mutable buffers (KV caches), constant placeholders
/// (parameters, buffers, lifted tensor constants) and buffer mutation outputs. Each keeps graph,
/// signature, state_dict and constants in agreement and is all-or-nothing: it either completes
/// or throws and leaves the program exactly as it was (node order, names, namespace counters,
/// users, insertion point, signature, dictionaries). Mirrors ExecuTorch's
/// backends/transforms/utils.py (create_mutable_buffer, create_constant_placeholder,
/// delete_constant_placeholder), without its bugs.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../ir/argument.hpp"
#include "../ir/graph.hpp"
#include "../ir/node.hpp"
#include "../ir/tensor.hpp"
#include "detail/edit_index.hpp"
#include "exported_program.hpp"
#include "graph_signature.hpp"
#include "lookup.hpp"
#include "module_attributes.hpp"
#include "verify.hpp"

namespace epgraph {

/// The placeholder that create_mutable_buffer or create_constant_placeholder made for the
/// requested name `requested_name` (recorded in its `meta().requested_name`, like upstream's
/// `meta["requested_name"]`), or nullptr. Throws nothing and does not allocate. O(placeholders).
/// Mirrors `_find_placeholder` in ExecuTorch's backends/transforms/utils.py.
[[nodiscard]] inline const Node* find_requested_placeholder(
    const Graph& graph, std::string_view requested_name) noexcept {
  // A const graph hands out const nodes, whose meta() is the non-allocating reader.
  for (const Node* n = graph.first_node(); n != nullptr && n->op() == OpCode::placeholder;
       n = n->next()) {
    if (n->meta().requested_name == requested_name) return n;
  }
  return nullptr;
}
/// The same for a mutable graph, handing out a mutable node. Throws nothing and does not
/// allocate. O(placeholders).
[[nodiscard]] inline Node* find_requested_placeholder(Graph& graph,
                                                      std::string_view requested_name) noexcept {
  return const_cast<Node*>(find_requested_placeholder(std::as_const(graph), requested_name));
}

namespace detail {

// Refuses a placeholder name that FX's namespace hands out but Python cannot bind in the code
// torch generates for the program (`ep.module()`, GraphModule.recompile: `def forward(self,
// <placeholders>)`). FX renames keywords and builtins (`class` -> `class_1`, see
// is_reserved_name) and sanitizes non-identifiers, but leaves two names alone: `self`, which
// duplicates forward's own first parameter ("SyntaxError: duplicate argument 'self' in function
// definition"), and `None`, a keyword that FX's table of illegal names maps to the value None
// and so reads as allowed ("SyntaxError: invalid syntax"). torch (and ExecuTorch's helpers,
// which name nodes through the same namespace) would write a program whose module cannot be
// built; epgraph refuses instead, before anything changes. `what` is "Buffer" / "Placeholder".
inline void check_bindable(std::string_view requested, const std::string& assigned,
                           const char* what) {
  const char* reason = nullptr;
  if (assigned == "self") {
    reason =
        "ep.module() binds placeholders as parameters of forward(self, ...), so a "
        "placeholder named 'self' makes its code a SyntaxError (duplicate argument 'self')";
  } else if (assigned == "None") {
    reason =
        "'None' is a Python keyword that torch.fx's namespace does not rename, so "
        "ep.module()'s generated code would be a SyntaxError";
  }
  if (reason == nullptr) return;
  std::string message = std::string(what) + " name '" + std::string(requested) + "'";
  if (assigned != requested) message += " (assigned '" + assigned + "')";
  throw value_error(message + " cannot be used: " + reason);
}

// Refuses a state target that ep.module() cannot register because its module already has an
// attribute of that name (`forward`, `training`, `to`; see module_attribute_in): torch and
// ExecuTorch write such a program, torch.export.load and its verifier accept it, and building
// its module raises KeyError. `what` is "Buffer" / "Constant"; `name` the requested name.
inline void check_registrable(const std::string& target, std::string_view name, const char* what) {
  const std::optional<std::string_view> taken = module_attribute_in(target);
  if (!taken) return;
  std::string message = std::string(what) + " target '" + target + "'";
  if (name != target) message += " (from name '" + std::string(name) + "')";
  throw value_error(
      message +
      " cannot be used: ep.module() registers it on a module that already has an attribute '" +
      std::string(*taken) + "' (torch raises KeyError \"attribute '" + std::string(*taken) +
      "' already exists\")");
}

// Refuses a new state target that clashes with the module path of a state target the program
// has (module_paths_clash: `lin` beside `lin.weight`) or falls on a nested graph's submodule
// (falls_on_submodule: `true_graph_0`): torch and ExecuTorch write such a program, torch's
// loader and verifier accept it, and building its module fails. The nested graphs looked at
// are the program's own and the record of the get_attr node named like the target's first
// component (verify reports the rest). `what` is "Buffer" / "Constant"; `name` the requested
// name. O(input specs + log nested graphs).
template <class T>
void check_module_path_free(const ExportedProgram<T>& ep, const std::string& target,
                            std::string_view name, const char* what) {
  std::string message = std::string(what) + " target '" + target + "'";
  if (name != target) message += " (from name '" + std::string(name) + "')";
  for (const InputSpec& s : ep.graph_signature().input_specs) {
    if (!s.target() || !module_paths_clash(target, *s.target())) continue;
    const bool longer = s.target()->size() > target.size();
    throw value_error(message + " cannot be used: target '" + *s.target() + "' of input spec '" +
                      s.name() + "' is already there, and ep.module() cannot register '" +
                      (longer ? target : *s.target()) + "' as a tensor and as the module of '" +
                      (longer ? *s.target() : target) + "'");
  }
  const std::string_view first = std::string_view(target).substr(0, target.find('.'));
  std::string owner;
  if (ep.nested_graph(first) != nullptr) {
    owner = "the program's nested graph '" + std::string(first) + "'";
  } else if (const Node* n = ep.graph().find_node(first);
             n != nullptr && n->op() == OpCode::get_attr && n->target() == first &&
             !n->meta().serialized.empty()) {
    owner = "the nested graph get_attr node '" + std::string(n->name()) + "' reads";
  }
  if (!owner.empty()) {
    throw value_error(message + " cannot be used: '" + std::string(first) +
                      "' is the submodule of " + owner + " in ep.module()");
  }
}

inline bool is_blank(std::string_view s) noexcept {
  return s.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos;
}

// The state_dict key for a buffer placeholder name: one leading "b_" removed (export's prefix).
inline std::string buffer_target_of(std::string_view name) {
  if (name.substr(0, 2) == "b_") name.remove_prefix(2);
  return std::string(name);
}

// Where a new input spec of canonical rank `rank` (see input_rank: 1 PARAMETER, 2 persistent
// BUFFER, 3 non-persistent BUFFER, 4 CONSTANT_TENSOR) goes so that it adds no departure from
// torch's canonical input order (input_order_departures): before the first spec that ranks after
// it, or at the end. Every spec before that index ranks at most `rank`, so the new spec departs
// from nothing; every spec after it already follows the spec at that index, which ranks higher
// than `rank`, so what each of them is compared with (and any departure it had) is unchanged.
// On a program in canonical order this is the end of the block of its kind. Throws nothing.
// O(input specs).
inline std::size_t canonical_input_index(const ExportGraphSignature& sig, int rank) noexcept {
  std::size_t i = 0;
  while (i < sig.input_specs.size() && input_rank(sig.input_specs[i]) <= rank) ++i;
  return i;
}

inline bool is_mutation_output(OutputKind k) noexcept {
  return k == OutputKind::BUFFER_MUTATION || k == OutputKind::PARAMETER_MUTATION ||
         k == OutputKind::USER_INPUT_MUTATION;
}

// Where a new mutation output goes: after the leading output tokens, inside the run of mutation
// outputs that follows them, before the first one whose mutated input has index >= `threshold`
// (or at the end of that run). Mutation outputs whose target names no input are passed over.
// An output's mutated input is the first input of the matching kind (BUFFER, PARAMETER or, for a
// user-input mutation, USER_INPUT named by the target). Only inputs at index >= `threshold` are
// indexed (usually a handful: user inputs and non-persistent state), so the cost is
// O(input specs + output specs) with no allocation per spec before the threshold.
inline std::size_t mutation_output_index(const ExportGraphSignature& sig, std::size_t threshold) {
  const auto& inputs = sig.input_specs;
  // The mutable kind an input answers to, or -1: 0 BUFFER, 1 PARAMETER, 2 USER_INPUT.
  auto input_pool = [](const InputSpec& s) -> int {
    if (s.kind() == InputKind::BUFFER && s.target()) return 0;
    if (s.kind() == InputKind::PARAMETER && s.target()) return 1;
    if (s.kind() == InputKind::USER_INPUT && names_graph_value(s.arg())) return 2;
    return -1;
  };
  auto input_key = [](const InputSpec& s) -> std::string_view {
    return s.kind() == InputKind::USER_INPUT ? std::string_view(s.name())
                                             : std::string_view(*s.target());
  };
  // (pool, key) of inputs at index >= threshold, first occurrence kept.
  std::vector<std::pair<int, std::string_view>> late;
  for (std::size_t i = threshold; i < inputs.size(); ++i) {
    const int pool = input_pool(inputs[i]);
    if (pool >= 0) late.emplace_back(pool, input_key(inputs[i]));
  }
  std::sort(late.begin(), late.end());
  // True when the first input of `pool` keyed `key` has index >= threshold.
  auto mutates_late_input = [&](int pool, std::string_view key) {
    if (!std::binary_search(late.begin(), late.end(), std::make_pair(pool, key))) return false;
    for (std::size_t i = 0; i < threshold && i < inputs.size(); ++i) {
      if (input_pool(inputs[i]) == pool && input_key(inputs[i]) == key) return false;
    }
    return true;
  };
  const auto& outputs = sig.output_specs;
  std::size_t k = 0;
  while (k < outputs.size() && outputs[k].kind() == OutputKind::TOKEN) ++k;
  for (; k < outputs.size() && is_mutation_output(outputs[k].kind()); ++k) {
    const OutputSpec& o = outputs[k];
    if (!o.target()) continue;
    const int pool = o.kind() == OutputKind::BUFFER_MUTATION      ? 0
                     : o.kind() == OutputKind::PARAMETER_MUTATION ? 1
                                                                  : 2;
    if (mutates_late_input(pool, *o.target())) return k;
  }
  return k;
}

// Specs are inserted into the live signature vectors after their capacity was reserved: with
// no-throw moves that insertion cannot fail, so no copy of the signature is needed.
static_assert(std::is_nothrow_move_constructible_v<InputSpec> &&
                  std::is_nothrow_move_assignable_v<InputSpec> &&
                  std::is_nothrow_move_constructible_v<OutputSpec> &&
                  std::is_nothrow_move_assignable_v<OutputSpec>,
              "signature specs must move without throwing");

// The edits' access to a program's EditIndex and to its signature without counting the access
// as an outside change (ExportedProgram::graph_signature() bumps the signature epoch).
struct edit_access {
  template <class T>
  static EditIndex& index(ExportedProgram<T>& ep) noexcept {
    return ep.edit_index_;
  }
  template <class T>
  static ExportGraphSignature& signature(ExportedProgram<T>& ep) noexcept {
    return ep.signature_;
  }
  template <class T>
  static std::uint64_t signature_epoch(const ExportedProgram<T>& ep) noexcept {
    return ep.signature_epoch_;
  }
  // Starts loading the slots that adding a persistent buffer placeholder `name` with target
  // `target` looks up in the program's big tables (state_dict's index, the graph's name index
  // and interned targets), so that their cache misses overlap instead of following one another
  // (about 10% of a create_mutable_buffer call at 1M nodes). No-throw; changes nothing.
  template <class T>
  static void prefetch_buffer_lookups(const ExportedProgram<T>& ep, std::string_view name,
                                      std::string_view target) noexcept {
    ep.state_dict().prefetch(target);
    ep.graph().prefetch_placeholder_lookups(name);
  }
};

// True when the program is unchanged since its index was stamped (see EditIndex). O(1).
template <class T>
bool stamp_is_current(const ExportedProgram<T>& ep, const EditIndex& ix) noexcept {
  const ExportGraphSignature& sig = ep.graph_signature();
  return ix.stamped && ix.graph_version == ep.graph().version() &&
         ix.signature_epoch == edit_access::signature_epoch(ep) &&
         ix.inputs == sig.input_specs.size() && ix.outputs == sig.output_specs.size() &&
         ix.input_data == static_cast<const void*>(sig.input_specs.data()) &&
         ix.output_data == static_cast<const void*>(sig.output_specs.data());
}

// Records the program's current state as validated. Call only on a valid program. O(1).
template <class T>
void stamp(ExportedProgram<T>& ep, EditIndex& ix) noexcept {
  const ExportGraphSignature& sig = std::as_const(ep).graph_signature();
  ix.stamped = true;
  ix.graph_version = ep.graph().version();
  ix.signature_epoch = edit_access::signature_epoch(ep);
  ix.inputs = sig.input_specs.size();
  ix.outputs = sig.output_specs.size();
  ix.input_data = sig.input_specs.data();
  ix.output_data = sig.output_specs.data();
}

inline std::size_t target_hash(std::string_view target) noexcept {
  return std::hash<std::string_view>()(target);
}

// The requested name a placeholder carries (EditIndex::requested's key). No-throw.
inline std::string_view requested_name_of(const Node* n) noexcept {
  return n->read_meta().requested_name;
}

// Builds the lookups of `ix` from scratch. On an exception (std::bad_alloc) `ix` stays unbuilt.
// O(placeholders + input specs).
template <class T>
void build_index(ExportedProgram<T>& ep, EditIndex& ix) {
  ix.built = false;
  ix.mutation_pos = EditIndex::unknown;
  ix.requested.clear();
  ix.target_hashes.clear();
  ix.requested_duplicates = false;
  for (Node* n = ep.graph().first_node(); n != nullptr && n->op() == OpCode::placeholder;
       n = n->next()) {
    const std::string& r = n->read_meta().requested_name;
    if (r.empty()) continue;
    if (!ix.requested.insert(r, n, requested_name_of)) ix.requested_duplicates = true;
  }
  const auto& inputs = ep.graph_signature().input_specs;
  ix.target_hashes.reserve_more(inputs.size());
  ix.first_after.fill(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].target()) ix.target_hashes.add_reserved(target_hash(*inputs[i].target()));
    const int rank = input_rank(inputs[i]);
    for (int r = 0; r < rank; ++r) {
      std::size_t& f = ix.first_after[static_cast<std::size_t>(r)];
      if (f == inputs.size()) f = i;
    }
  }
  ix.built = true;
}

// What every edit does first: validate_graph_signature, unless the program is unchanged since
// the last validation (then O(1)), and the lookups built. Throws what validate_graph_signature
// throws, and std::bad_alloc; the program never changes.
template <class T>
EditIndex& validated_index(ExportedProgram<T>& ep) {
  EditIndex& ix = edit_access::index(ep);
  if (!stamp_is_current(ep, ix)) {
    ix.drop();
    validate_graph_signature(ep);
    stamp(ep, ix);
  }
  if (!ix.built) build_index(ep, ix);
  return ix;
}

// find_requested_placeholder through the index. O(length of name).
inline Node* indexed_requested_placeholder(const EditIndex& ix, std::string_view name) noexcept {
  return ix.requested.lookup(name, requested_name_of);
}

// Throws runtime_error "<what> target 't' already exists in state_dict" / "... in constants" /
// "... as the target of input spec '<spec>'" when `target` (whose target_hash is `hash`) is
// taken, looking input targets up in the index. `in_state_dict_checked`: the caller has just
// found `target` absent from state_dict (that probe is not repeated). O(length of target), plus
// O(input specs) only when the target's hash is taken.
template <class T>
void check_target_free_indexed(const ExportedProgram<T>& ep, const EditIndex& ix,
                               const std::string& target, std::size_t hash, const char* what,
                               bool in_state_dict_checked = false) {
  auto head = [&] { return std::string(what) + " target '" + target + "' already exists "; };
  if (!in_state_dict_checked && ep.state_dict().contains(target)) {
    throw runtime_error(head() + "in state_dict");
  }
  if (ep.constants().contains(target)) throw runtime_error(head() + "in constants");
  if (ix.target_hashes.count(hash) == 0) return;
  for (const InputSpec& s : ep.graph_signature().input_specs) {
    if (s.target() && *s.target() == target) {
      throw runtime_error(head() + "as the target of input spec '" + s.name() + "'");
    }
  }
}

// The node a placeholder for input index `index` goes before: the placeholder of the spec now
// at `index`, or the node after the last placeholder. Needs a validated program (the i-th
// placeholder is named by the i-th input spec). Never null there (the output node follows the
// placeholders). O(length of the names).
template <class T>
Node* placeholder_anchor(ExportedProgram<T>& ep, std::size_t index) {
  const auto& inputs = ep.graph_signature().input_specs;
  Graph& graph = ep.graph();
  if (index < inputs.size()) return graph.find_node(inputs[index].name());
  if (inputs.empty()) return graph.first_node();
  return graph.find_node(inputs.back().name())->next();
}

// Records a new target (by its hash) and requested name in the index after a committed edit; on
// failure the index is marked unbuilt (rebuilt by the next edit). No-throw.
inline void note_new_placeholder(EditIndex& ix, std::size_t target_hash, std::string_view name,
                                 Node* node) noexcept {
  try {
    ix.target_hashes.add(target_hash);
    (void)ix.requested.insert(name, node, requested_name_of);
  } catch (...) {
    ix.built = false;
  }
}

}  // namespace detail

/// Adds a persistent buffer that the program reads and writes back, such as a KV cache: a
/// placeholder, its BUFFER input spec, `state_dict[target] = data`, and a BUFFER_MUTATION output
/// returning the placeholder itself (point it at the computed new value with set_buffer_mutation).
///
/// - `name` is the requested placeholder name, by convention `b_<target>`. The buffer's target
///   (state_dict key) is the name minus one leading `b_`. The node gets the name the graph's
///   namespace assigns to the request (`x` taken -> `x_1`, `0_cache` -> `_0_cache`), its target
///   is that name, and the buffer's target is recomputed from it the same way (`x_1`,
///   `_0_cache`); the request is recorded in `meta().requested_name`, the tensor metadata of
///   `data` in `meta().val`.
/// - Input position: before the first spec that ranks after a persistent buffer in torch's
///   canonical order TOKEN < PARAMETER < persistent BUFFER < non-persistent BUFFER <
///   CONSTANT_TENSOR < CUSTOM_OBJ < USER_INPUT (a non-persistent BUFFER, CONSTANT_TENSOR,
///   CUSTOM_OBJ or USER_INPUT), or last when there is none. On a program in canonical order that
///   is the end of the persistent-buffer block; on one that departs from it (a `strict=True`
///   export can put a lifted constant before a buffer: `[p_w, c_gain, b_offset, x]` ->
///   `[p_w, b_cache, c_gain, b_offset, x]`, where ExecuTorch puts it too) the new spec adds no
///   departure to the ones input_order_departures already lists. The placeholder takes the same
///   position among placeholders (whatever the graph's insertion point is; it is left
///   unchanged).
/// - Output position: after the output tokens, among the mutation outputs in the order of the
///   inputs they mutate, before user outputs: `[y]` -> `[b, y]`, `[token]` -> `[token, b]`.
///   The placeholder is inserted in the output node's results at the same index.
///
/// `data` is moved into state_dict. Returns the new placeholder (owned by the graph).
/// Afterwards validate_graph_signature and Graph::lint pass. Throws, checking in this order (the
/// order of ExecuTorch's checks, whose messages these are where it has the check):
/// - value_error "Buffer name cannot be empty" for an empty or all-whitespace name;
/// - runtime_error "Buffer target '<t>' already exists in state_dict" when the requested target
///   (the name minus one leading `b_`) is a key of state_dict, whatever name FX would assign:
///   `create_mutable_buffer(ep, "b_cache", ...)` twice fails with "Buffer target 'cache' already
///   exists in state_dict", ExecuTorch's message;
/// - what validate_graph_signature throws when the signature does not match the graph;
/// - runtime_error "Placeholder for '<name>' already exists in the graph" when a placeholder was
///   already created for this requested name;
/// - value_error "Buffer name 'self' cannot be used: ep.module() binds placeholders as
///   parameters of forward(self, ...), ..." / "Buffer name 'None' cannot be used: 'None' is a
///   Python keyword that torch.fx's namespace does not rename, ..." when the name the namespace
///   assigns is one Python cannot bind as forward's parameter (see detail::check_bindable; torch
///   and ExecuTorch would write a program whose ep.module() raises SyntaxError);
/// - value_error "Buffer target cannot be empty (from name 'b_')" when the target recomputed
///   from the assigned name (`b_`, or `b-`, which FX names `b_`) is empty;
/// - value_error "Buffer target 'forward' cannot be used: ep.module() registers it on a module
///   that already has an attribute 'forward' (torch raises KeyError "attribute 'forward' already
///   exists")" (with "(from name 'b_forward')" when the name differs) when the target names an
///   attribute of the module ep.module() builds (see module_attribute_in; torch and ExecuTorch
///   write such a program, and only building its module fails);
/// - value_error "Buffer target 'lin' (from name 'b_lin') cannot be used: target 'lin.weight' of
///   input spec 'p_lin_weight' is already there, and ep.module() cannot register 'lin' as a
///   tensor and as the module of 'lin.weight'" when the target and an existing state target
///   are one another's module path (module_paths_clash), and "... cannot be used:
///   'true_graph_0' is the submodule of the nested graph get_attr node 'true_graph_0' reads in
///   ep.module()" when it falls on a nested graph's submodule (torch and ExecuTorch write both;
///   building the module fails);
/// - runtime_error "Buffer target '<t>' already exists in state_dict" / "... in constants" /
///   "... as the target of input spec '<spec>'" when the buffer's target (from the assigned
///   name) is taken. A requested target taken only in `constants` or by an input spec is no
///   obstacle when FX renames the node: `b_npb` next to a non-persistent buffer `npb` (placeholder
///   `b_npb`) becomes `b_npb_1` with target `npb_1`, as in ExecuTorch (whose result torch
///   verifies and runs); where the name is not renamed the target is the requested one and is
///   refused (ExecuTorch would key a second input by it);
/// - std::bad_alloc, and what tensor_traits<T> throws.
/// Strong guarantee: on any exception the program is exactly as before (namespace included).
/// Cost: O(length of name), amortized, when the program is unchanged since the previous edit of
/// this header (independent of the number of nodes and specs: the program keeps the result of
/// its last validation and the lookups the edit needs, see detail/edit_index.hpp); the first
/// edit after a load or after a change made otherwise (graph operations, graph_signature())
/// validates again and rebuilds them, O(placeholders + input specs + output specs). Mirrors
/// `create_mutable_buffer` in ExecuTorch's backends/transforms/utils.py, minus its known bugs:
/// every check runs before anything changes (upstream can leave a node or an entry behind), the
/// signature and state_dict use the name FX actually assigned, the placeholder never lands after
/// the output node or among compute nodes, the buffer goes before non-persistent buffers (upstream
/// puts it after them, an order PyTorch's C++ runtime rejects), and output tokens stay first.
template <class T>
Node* create_mutable_buffer(ExportedProgram<T>& ep, std::string_view name, T data) {
  if (detail::is_blank(name)) throw value_error("Buffer name cannot be empty");
  Graph& graph = ep.graph();
  const ExportGraphSignature& sig = std::as_const(ep).graph_signature();
  // ExecuTorch's first check, with its message: the target the caller asked for is a key of
  // state_dict (e.g. the same name requested twice). Its test suite pins this message.
  const std::string requested_target = detail::buffer_target_of(name);
  // The target and the node's name are usually the requested ones: start loading their slots
  // in the big tables (the index's target hashes when built, state_dict, the graph's name index
  // and interned targets) while the first of them is probed below.
  detail::EditIndex& kept = detail::edit_access::index(ep);
  const std::size_t requested_hash = detail::target_hash(requested_target);
  if (kept.built) {
    kept.target_hashes.prefetch(requested_hash);
    kept.requested.prefetch(name);
  }
  detail::edit_access::prefetch_buffer_lookups(std::as_const(ep), name, requested_target);
  if (ep.state_dict().contains(requested_target)) {
    throw runtime_error("Buffer target '" + requested_target + "' already exists in state_dict");
  }
  detail::EditIndex& ix = detail::validated_index(ep);
  if (detail::indexed_requested_placeholder(ix, name) != nullptr) {
    throw runtime_error("Placeholder for '" + std::string(name) + "' already exists in the graph");
  }
  const std::string node_name = graph.propose_name(name);
  detail::check_bindable(name, node_name, "Buffer");
  // Only the target the buffer will have must be free: a requested target held elsewhere (a
  // non-persistent buffer's key in constants, say) is no obstacle when FX renames the node and
  // so the target (`b_npb` -> `b_npb_1`, target `npb_1`), as in ExecuTorch.
  std::string target = detail::buffer_target_of(node_name);
  if (target.empty()) {
    throw value_error("Buffer target cannot be empty (from name '" + node_name + "')");
  }
  detail::check_registrable(target, name, "Buffer");
  detail::check_module_path_free(ep, target, name, "Buffer");
  const bool requested = target == requested_target;
  const std::size_t target_hash = requested ? requested_hash : detail::target_hash(target);
  detail::check_target_free_indexed(ep, ix, target, target_hash, "Buffer", requested);

  // Input position: before the first spec that ranks after a persistent buffer.
  const std::size_t in_pos = ix.first_after[2];
  if (ix.mutation_pos == detail::EditIndex::unknown) {
    ix.mutation_pos = detail::mutation_output_index(sig, in_pos);
  }
  const std::size_t out_pos = ix.mutation_pos;

  // Everything that can fail is prepared here; the commit below cannot throw.
  TensorMeta meta = tensor_meta_of(data);
  InputSpec new_input(InputKind::BUFFER, TensorArgument{node_name}, target, true);
  OutputSpec new_output(OutputKind::BUFFER_MUTATION, TensorArgument{node_name}, target);
  auto& in_specs = detail::edit_access::signature(ep).input_specs;
  auto& out_specs = detail::edit_access::signature(ep).output_specs;
  // Room for the new specs (moving the existing ones changes nothing observable).
  detail::reserve_more(in_specs, 1);
  detail::reserve_more(out_specs, 1);
  Node* anchor = detail::placeholder_anchor(ep, in_pos);

  const std::function<void(Node&)> finish = [&](Node& node) {
    node.mutable_meta().val = std::move(meta);
    node.mutable_meta().requested_name = std::string(name);
    ep.state_dict().insert(target, std::move(data));
    try {
      graph.insert_result(out_pos, &node);  // strong
    } catch (...) {
      ep.state_dict().erase(target);
      throw;
    }
  };
  Node* node = nullptr;
  {
    auto at = graph.inserting_before(anchor);
    node = graph.create_node(OpCode::placeholder, node_name, {}, {}, name, finish);
  }
  // No-throw: capacity is reserved and specs move without throwing.
  in_specs.insert(in_specs.begin() + static_cast<std::ptrdiff_t>(in_pos), std::move(new_input));
  out_specs.insert(out_specs.begin() + static_cast<std::ptrdiff_t>(out_pos), std::move(new_output));
  // The program is valid again (the placeholder and its spec went to the same index, the result
  // and its spec too): keep the stamp and the lookups in step. The new input ranks 2 and goes
  // before every late input (see mutation_output_index), so the next buffer's output goes right
  // after this one.
  detail::stamp(ep, ix);
  ix.note_input_inserted(in_pos, 2);
  ix.mutation_pos = out_pos + 1;
  detail::note_new_placeholder(ix, target_hash, name, node);
  return node;
}

/// Adds a constant input (a PARAMETER, a BUFFER or a lifted CONSTANT_TENSOR) as a placeholder at
/// the graph's current insertion point, which the caller sets with inserting_before/after:
/// its input spec goes at the same index among the input specs, its data in the dictionary of
/// its kind under the assigned node name (which is also its target).
///
/// - kind PARAMETER: `state_dict`; BUFFER: `state_dict` when `persistent_buffer` is true,
///   `constants` when false; CONSTANT_TENSOR: `constants`. `persistent_buffer` is ignored for
///   kinds other than BUFFER (the spec gets no persistent flag).
/// - The node is named by the graph's namespace from `name` (`x` taken -> `x_1`), its target is
///   that name, the request is kept in `meta().requested_name` and `data`'s metadata in
///   `meta().val`.
/// - Sharing: when a placeholder was already created for the same requested name, that node is
///   returned and nothing changes (kind and data are not compared), as upstream does for shared
///   weights.
/// - Placement: at the insertion point when it lies inside the placeholder prefix (an
///   inserting_after point then moves to the new node, as in FX); that position is the caller's
///   and may depart from torch's canonical input order (input_order_departures reports it).
///   When the point does not lie there (the default point, or a point among compute nodes), the
///   node goes to its kind's canonical place: before the first input spec that ranks after its
///   kind in TOKEN < PARAMETER < persistent BUFFER < non-persistent BUFFER < CONSTANT_TENSOR <
///   CUSTOM_OBJ < USER_INPUT, so it adds no departure (a PARAMETER on `[p_weight, b_scale]`
///   gives `[p_weight, p_new, b_scale]`; a CONSTANT_TENSOR on `[p_w, x]` gives `[p_w, c, x]`).
///   ExecuTorch instead puts the node at the end of the graph (after the output node) and its
///   spec after every other placeholder: after the buffers for a PARAMETER (an order NativeRT
///   rejects), and after the user inputs when there are any, which it then refuses ("Failed to
///   insert ...") although the canonical place exists; epgraph places such a request and does
///   not refuse it.
///
/// `data` is moved into its dictionary. Returns the placeholder (owned by the graph). Throws,
/// checking in this order:
/// - value_error "Placeholder name cannot be empty" for an empty or all-whitespace name;
/// - what validate_graph_signature throws when the signature does not match the graph;
/// - runtime_error "Placeholder '<name>' already exists as a mutable buffer" when the existing
///   placeholder for `name` is a mutable buffer (see is_mutable_buffer);
/// - runtime_error "Can only create constant input nodes." for kinds USER_INPUT, CUSTOM_OBJ, TOKEN
///   (ExecuTorch's type and message, as for the next one);
/// - runtime_error "Must set persistent_buffer when creating a new buffer." for a BUFFER without
///   `persistent_buffer`;
/// - value_error "Placeholder name 'self' cannot be used: ..." / "Placeholder name 'None' ..."
///   when the assigned name is one Python cannot bind (as for create_mutable_buffer);
/// - value_error "Constant target 'training' cannot be used: ep.module() registers it on a module
///   that already has an attribute 'training' (...)" when the assigned name (the target) names an
///   attribute of the module ep.module() builds (see module_attribute_in);
/// - value_error "Constant target 'lin' cannot be used: target 'lin.weight' of input spec
///   'p_lin_weight' is already there, ..." / "... is the submodule of ..." as for
///   create_mutable_buffer;
/// - runtime_error "Constant target '<t>' already exists in state_dict" / "... in constants" /
///   "... as the target of input spec '<spec>'" when the assigned name is already a key;
/// - runtime_error "Failed to insert <name>; Const placeholder nodes must be inserted before user
///   input nodes in the graph." when the caller's insertion point (inside the placeholder
///   prefix) comes after a user input;
/// - std::bad_alloc, and what tensor_traits<T> throws.
/// Strong guarantee. Cost as for create_mutable_buffer (O(length of name) amortized between
/// edits), plus O(index) when the caller's insertion point places the node. Mirrors
/// `create_constant_placeholder` in ExecuTorch's backends/transforms/utils.py, placing what the
/// caller does not place as described above.
template <class T>
Node* create_constant_placeholder(ExportedProgram<T>& ep, std::string_view name, InputKind kind,
                                  T data, std::optional<bool> persistent_buffer = {}) {
  if (detail::is_blank(name)) throw value_error("Placeholder name cannot be empty");
  Graph& graph = ep.graph();
  detail::EditIndex& ix = detail::validated_index(ep);
  if (Node* existing = detail::indexed_requested_placeholder(ix, name)) {
    if (is_mutable_buffer(std::as_const(ep), existing)) {
      throw runtime_error("Placeholder '" + std::string(name) +
                          "' already exists as a mutable buffer");
    }
    return existing;
  }
  bool in_state_dict = true;
  switch (kind) {
    case InputKind::PARAMETER: break;
    case InputKind::BUFFER:
      if (!persistent_buffer) {
        throw runtime_error("Must set persistent_buffer when creating a new buffer.");
      }
      in_state_dict = *persistent_buffer;
      break;
    case InputKind::CONSTANT_TENSOR: in_state_dict = false; break;
    default: throw runtime_error("Can only create constant input nodes.");
  }
  if (kind != InputKind::BUFFER) persistent_buffer.reset();
  const std::string node_name = graph.propose_name(name);
  detail::check_bindable(name, node_name, "Placeholder");
  std::string target = node_name;
  detail::check_registrable(target, name, "Constant");
  detail::check_module_path_free(ep, target, name, "Constant");
  const std::size_t target_hash = detail::target_hash(target);
  detail::check_target_free_indexed(ep, ix, target, target_hash, "Constant");

  InputSpec new_input(kind, TensorArgument{node_name}, target, persistent_buffer);
  const int rank = detail::input_rank(new_input);

  // Where the node goes: its index among placeholders, and whether the insertion point is usable
  // as is (inside the placeholder prefix) or the node goes to its kind's canonical place.
  const Graph::InsertPoint point = graph.insertion_point();
  bool use_caller_point = false;
  std::size_t index = 0;
  if (point.anchor != nullptr) {
    const Node* next = point.before ? point.anchor : point.anchor->next();
    const Node* prev = next != nullptr ? next->prev() : graph.last_node();
    if (prev == nullptr || prev->op() == OpCode::placeholder) {
      use_caller_point = true;
      for (const Node* n = graph.first_node(); n != next && n->op() == OpCode::placeholder;
           n = n->next()) {
        ++index;
      }
    }
  }
  if (!use_caller_point) index = ix.first_after[static_cast<std::size_t>(rank)];
  // first_after[5] is the first USER_INPUT (the only rank above 5).
  if (ix.first_after[5] < index) {
    throw runtime_error("Failed to insert " + std::string(name) +
                        "; Const placeholder nodes must be inserted before user input nodes "
                        "in the graph.");
  }

  TensorMeta meta = tensor_meta_of(data);
  auto& in_specs = detail::edit_access::signature(ep).input_specs;
  detail::reserve_more(in_specs, 1);  // moving the specs changes nothing observable
  using constant_type = typename ExportedProgram<T>::constant_type;
  std::optional<constant_type> as_constant;
  if (!in_state_dict) as_constant.emplace(std::move(data));

  const std::function<void(Node&)> finish = [&](Node& node) {
    node.mutable_meta().val = std::move(meta);
    node.mutable_meta().requested_name = std::string(name);
    if (in_state_dict) {
      ep.state_dict().insert(target, std::move(data));
    } else {
      ep.constants().insert(target, std::move(*as_constant));
    }
  };
  Node* node = nullptr;
  if (use_caller_point) {
    node = graph.create_node(OpCode::placeholder, node_name, {}, {}, name, finish);
  } else {
    auto at = graph.inserting_before(detail::placeholder_anchor(ep, index));
    node = graph.create_node(OpCode::placeholder, node_name, {}, {}, name, finish);
  }
  // No-throw: capacity is reserved and specs move without throwing.
  in_specs.insert(in_specs.begin() + static_cast<std::ptrdiff_t>(index), std::move(new_input));
  // Valid again (placeholder and spec at the same index). The position of the next mutable
  // buffer's output stays right when the new input comes before every late input and ranks with
  // them (its target is new, so no mutation output changes the input it mutates); else it is
  // recomputed by the next create_mutable_buffer.
  const bool keeps_mutation_pos = rank <= 2 && index <= ix.first_after[2];
  detail::stamp(ep, ix);
  ix.note_input_inserted(index, rank);
  if (!keeps_mutation_pos) ix.mutation_pos = detail::EditIndex::unknown;
  detail::note_new_placeholder(ix, target_hash, name, node);
  return node;
}

/// Removes a constant input: its placeholder, its input spec, and its data from `state_dict`
/// (parameters, persistent buffers) or `constants` (non-persistent buffers, lifted tensor
/// constants, and a persistent buffer found only there, which torch accepts); data already
/// missing from its dictionary is not an error. `node` is destroyed.
/// Throws, checking in this order:
/// - value_error "Cannot delete a null node" / "Node 'x' does not belong to this program's
///   graph";
/// - runtime_error "Cannot delete input node <n> since it has users in the graph.";
/// - runtime_error "Cannot delete input node <n> since it is not a parameter, a buffer, nor a
///   lifted tensor constant." for user inputs, custom objects, tokens and non-placeholders;
/// - runtime_error "Cannot delete input node <n> since output '<o>' mutates it." when a mutation
///   output targets its buffer or parameter (delete or retarget that output first);
/// - what Graph::erase_node throws (e.g. the node anchors an insertion point); std::bad_alloc.
/// Strong guarantee. O(input specs + output specs) (no validation; a program validated by the
/// previous edit stays so, and its lookups follow). Mirrors `delete_constant_placeholder` in
/// ExecuTorch's backends/transforms/utils.py.
template <class T>
void delete_constant_placeholder(ExportedProgram<T>& ep, Node* node) {
  if (node == nullptr) throw value_error("Cannot delete a null node");
  Graph& graph = ep.graph();
  if (!graph.contains(node)) {
    throw value_error("Node '" + std::string(node->name()) +
                      "' does not belong to this program's graph");
  }
  const std::string who = "Cannot delete input node " + std::string(node->name()) + " since ";
  if (!node->users().empty()) throw runtime_error(who + "it has users in the graph.");
  const ExportGraphSignature& sig = std::as_const(ep).graph_signature();
  const InputSpec* spec = input_spec_for(std::as_const(ep), node);
  if (spec == nullptr ||
      (spec->kind() != InputKind::PARAMETER && spec->kind() != InputKind::BUFFER &&
       spec->kind() != InputKind::CONSTANT_TENSOR)) {
    throw runtime_error(who + "it is not a parameter, a buffer, nor a lifted tensor constant.");
  }
  const std::string target = *spec->target();
  // A persistent buffer lives in state_dict, or (torch accepts it, see verify) in constants.
  const bool in_state_dict =
      spec->kind() == InputKind::PARAMETER ||
      (spec->kind() == InputKind::BUFFER && spec->persistent() != false &&
       (ep.state_dict().contains(target) || !ep.constants().contains(target)));
  if (spec->kind() != InputKind::CONSTANT_TENSOR) {
    const OutputKind mutation = spec->kind() == InputKind::PARAMETER
                                    ? OutputKind::PARAMETER_MUTATION
                                    : OutputKind::BUFFER_MUTATION;
    for (const OutputSpec& o : sig.output_specs) {
      if (o.kind() == mutation && o.target() == spec->target()) {
        throw runtime_error(who + "output '" + o.name() + "' mutates it.");
      }
    }
  }
  // A program validated before stays valid (placeholder and spec leave the same index) and
  // keeps its stamp; the lookups follow.
  detail::EditIndex& ix = detail::edit_access::index(ep);
  const bool was_current = detail::stamp_is_current(ep, ix);
  const std::size_t pos = static_cast<std::size_t>(spec - sig.input_specs.data());
  const int rank = detail::input_rank(*spec);
  const std::string& requested = node->read_meta().requested_name;
  const std::size_t requested_at =
      was_current && ix.built && !requested.empty()
          ? ix.requested.find(requested, detail::RequestedIndex::hash(requested),
                              detail::requested_name_of)
          : detail::RequestedIndex::npos;
  const bool indexed_here =
      requested_at != detail::RequestedIndex::npos && ix.requested.node_at(requested_at) == node;
  graph.erase_node(node);  // strong; the last step that can throw
  auto& in_specs = detail::edit_access::signature(ep).input_specs;
  in_specs.erase(in_specs.begin() + static_cast<std::ptrdiff_t>(pos));  // no-throw moves
  if (in_state_dict) {
    ep.state_dict().erase(target);
  } else {
    ep.constants().erase(target);
  }
  if (!was_current) return;
  detail::stamp(ep, ix);
  if (!ix.built) return;
  const std::size_t h = detail::target_hash(target);
  const bool unique_target = ix.target_hashes.count(h) == 1;
  if (!(rank <= 2 && pos < ix.first_after[2] && unique_target)) {
    ix.mutation_pos = detail::EditIndex::unknown;
  }
  ix.target_hashes.remove(h);
  for (int r = 0; r < detail::EditIndex::ranks; ++r) {
    std::size_t& f = ix.first_after[static_cast<std::size_t>(r)];
    if (f > pos) {
      --f;
    } else if (f == pos) {  // the erased spec was the first to rank above r: find the next
      while (f < in_specs.size() && detail::input_rank(in_specs[f]) <= r) ++f;
    }
  }
  if (indexed_here) {
    if (ix.requested_duplicates) {
      ix.built = false;  // another placeholder may carry the name: rebuild
    } else {
      ix.requested.erase_at(requested_at);
    }
  }
}

/// Makes `new_value` the value written back to the buffer whose target (state_dict or constants
/// key) is `buffer_target`: the BUFFER_MUTATION output for that buffer, in the output node's
/// results and in its output spec, now returns `new_value`. When the buffer has no mutation
/// output yet, one is created where create_mutable_buffer would put it (after the output tokens,
/// among the mutation outputs in input order, before user outputs). Use it after computing a
/// cache's new contents, e.g. `index_copy(b_k_cache, 2, input_pos, k)`. The node that was
/// returned before stays in the graph (remove it yourself if it is now dead). Nothing changes
/// when `new_value` is already the buffer's mutation output.
/// Throws, checking in this order:
/// - value_error "Cannot make a null node the new value of buffer '<t>'";
/// - value_error "Node 'x' does not belong to this program's graph";
/// - value_error "The output node cannot be the new value of buffer '<t>'";
/// - what validate_graph_signature throws;
/// - value_error "No BUFFER input has target '<t>'";
/// - runtime_error "Buffer '<t>' has more than one BUFFER_MUTATION output";
/// - std::bad_alloc.
/// Strong guarantee. O(input specs + output specs) when the program is unchanged since the
/// previous edit (no validation; replacing an existing mutation output also copies the results
/// list); plus the validation when it changed. epgraph addition (no upstream function).
template <class T>
void set_buffer_mutation(ExportedProgram<T>& ep, std::string_view buffer_target, Node* new_value) {
  const std::string t(buffer_target);
  if (new_value == nullptr) {
    throw value_error("Cannot make a null node the new value of buffer '" + t + "'");
  }
  Graph& graph = ep.graph();
  if (!graph.contains(new_value)) {
    throw value_error("Node '" + std::string(new_value->name()) +
                      "' does not belong to this program's graph");
  }
  if (new_value->op() == OpCode::output) {
    throw value_error("The output node cannot be the new value of buffer '" + t + "'");
  }
  detail::EditIndex& ix = detail::validated_index(ep);
  const ExportGraphSignature& sig = std::as_const(ep).graph_signature();
  std::size_t buffer_index = sig.input_specs.size();
  for (std::size_t i = 0; i < sig.input_specs.size(); ++i) {
    const InputSpec& s = sig.input_specs[i];
    if (s.kind() == InputKind::BUFFER && s.target() && *s.target() == t) {
      buffer_index = i;
      break;
    }
  }
  if (buffer_index == sig.input_specs.size()) {
    throw value_error("No BUFFER input has target '" + t + "'");
  }
  std::size_t found = sig.output_specs.size();
  for (std::size_t k = 0; k < sig.output_specs.size(); ++k) {
    const OutputSpec& o = sig.output_specs[k];
    if (o.kind() == OutputKind::BUFFER_MUTATION && o.target() && *o.target() == t) {
      if (found != sig.output_specs.size()) {
        throw runtime_error("Buffer '" + t + "' has more than one BUFFER_MUTATION output");
      }
      found = k;
    }
  }
  Node* output = graph.output_node();
  OutputSpec spec(OutputKind::BUFFER_MUTATION, TensorArgument{std::string(new_value->name())}, t);
  auto& out_specs = detail::edit_access::signature(ep).output_specs;
  if (found != sig.output_specs.size()) {
    const ArgumentList& current = detail::output_results(graph);
    if (current[found].node() == new_value && sig.output_specs[found] == spec) return;
    ArgumentList results = current;
    results[found] = Argument(new_value);
    output->set_args({Argument(std::move(results))});  // strong; the last step that can throw
    out_specs[found] = std::move(spec);                // no-throw move
    // Same kind and target at the same index: where the next mutable buffer's output goes is
    // unchanged.
  } else {
    const std::size_t pos = detail::mutation_output_index(sig, buffer_index + 1);
    detail::reserve_more(out_specs, 1);
    graph.insert_result(pos, new_value);  // strong; the last step that can throw
    out_specs.insert(out_specs.begin() + static_cast<std::ptrdiff_t>(pos), std::move(spec));
    ix.mutation_pos = detail::EditIndex::unknown;
  }
  detail::stamp(ep, ix);  // valid again: result and spec changed at the same index
}

}  // namespace epgraph
