// ExportedProgram<Tensor>: graph, signature, state_dict, constants and metadata together.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "../error.hpp"
#include "../ir/graph.hpp"
#include "../ir/tensor.hpp"
#include "detail/edit_index.hpp"
#include "graph_signature.hpp"
#include "ordered_dict.hpp"

namespace epgraph {

namespace detail {
struct edit_access;  // edit.hpp: the edits' access to the program's EditIndex
}  // namespace detail

/// A custom (TorchBind) object held in `constants`: its class and its serialized bytes, kept
/// verbatim (epgraph does not interpret them).
struct ScriptObject {
  std::string class_fqn;
  std::vector<std::byte> payload;
  friend bool operator==(const ScriptObject& a, const ScriptObject& b) {
    return a.class_fqn == b.class_fqn && a.payload == b.payload;
  }
};

/// The range a symbol may take (torch's `range_constraints` entry, a `ValueRanges`); an absent
/// bound is unbounded (torch's `int_oo`).
struct RangeConstraint {
  std::string symbol;
  std::optional<std::int64_t> min_val;
  std::optional<std::int64_t> max_val;
  friend bool operator==(const RangeConstraint& a, const RangeConstraint& b) {
    return a.symbol == b.symbol && a.min_val == b.min_val && a.max_val == b.max_val;
  }
};

/// One record (zip entry) of an archive, kept verbatim. The bytes are immutable and shared
/// between copies of the metadata (copying a program does not copy them). load_archive leaves
/// them unread (a `source` and no `data`) until first asked for through bytes().
class ArchiveRecord {
 public:
  /// Full entry name in the archive, including any root folder
  /// (`linear_3/data/sample_inputs/model.pt`).
  std::string name;
  /// The entry's bytes when the record holds them: records made in code, and records whose bytes
  /// the caller replaced (assign a new pointer: the record then counts as changed and is
  /// written from these bytes). Null in a record load_archive left unread (see `source`); read
  /// such a record through bytes().
  std::shared_ptr<const std::vector<std::byte>> data;
  /// Where an unread record's bytes come from (load_archive: its archive entry, checked against
  /// the file's size and mtime at each read), or null. While `data` is null the record is
  /// unchanged and save_archive copies its entry from the source archive without reading it.
  std::shared_ptr<const tensor_source> source;

  /// An empty record.
  ArchiveRecord() = default;
  /// A record holding `bytes` (`source` optional: normally null). No-throw moves.
  ArchiveRecord(std::string entry_name, std::shared_ptr<const std::vector<std::byte>> bytes,
                std::shared_ptr<const tensor_source> from = {}) noexcept
      : name(std::move(entry_name)), data(std::move(bytes)), source(std::move(from)) {}

  /// The entry's bytes: `*data`, else the bytes read from `source` on the first call and kept
  /// (a record with neither gives an empty vector). Throws what the source's read() throws
  /// (archive_error when the archive changed on disk or its entry is corrupt); the record is
  /// unchanged then. The first read must not race with another access to the same record (as
  /// for a non-const call). O(bytes) for the first read, O(1) after.
  [[nodiscard]] const std::vector<std::byte>& bytes() const { return *shared_bytes(); }
  /// The same bytes as a shared pointer (never null). Throws as bytes() does.
  [[nodiscard]] std::shared_ptr<const std::vector<std::byte>> shared_bytes() const {
    if (data) return data;
    if (!read_) {
      read_ = source ? std::make_shared<const std::vector<std::byte>>(source->read())
                     : std::make_shared<const std::vector<std::byte>>();
    }
    return read_;
  }
  /// Whether the bytes are in memory (`data` set, or read from `source` already). No-throw.
  [[nodiscard]] bool is_loaded() const noexcept { return data != nullptr || read_ != nullptr; }
  /// Whether the record still has the bytes of its source (a source and no `data`). No-throw.
  [[nodiscard]] bool is_unchanged_from_source() const noexcept {
    return source != nullptr && data == nullptr;
  }

  /// Same name and same bytes (two unchanged records of the same source are equal without
  /// reading it). Throws as bytes() does.
  friend bool operator==(const ArchiveRecord& a, const ArchiveRecord& b) {
    if (a.name != b.name) return false;
    if (a.data && a.data == b.data) return true;
    if (a.is_unchanged_from_source() && b.is_unchanged_from_source() && a.source == b.source) {
      return true;
    }
    return a.bytes() == b.bytes();
  }
  friend bool operator!=(const ArchiveRecord& a, const ArchiveRecord& b) { return !(a == b); }

 private:
  // Bytes read from `source` by the first bytes() call (shared by copies made after it).
  mutable std::shared_ptr<const std::vector<std::byte>> read_;
};

/// What epgraph remembers about the archive (.pt2 / .ep zip file) a program was loaded from, so
/// that saving the program again keeps the input's layout and every record epgraph does not
/// interpret. Filled by epgraph::archive::load_archive and read by save_archive (see
/// epgraph/archive/pt2_archive.hpp); the core never interprets it.
struct ArchiveInfo {
  /// "pt2" (current layout: models/<name>.json, data/weights/..., torch >= 2.8) or "legacy"
  /// (serialized_exported_program.json, torch <= 2.7).
  std::string layout;
  /// Root folder of every entry, with its trailing '/' (`linear_3/`), or "" when there is none.
  std::string prefix;
  /// Model name of the current layout (`model` for models/model.json); "" for legacy archives.
  std::string model_name;
  /// Every entry name of the input archive, in the input's order.
  std::vector<std::string> entry_order;
  /// The input's entries, verbatim, except the exported program JSON and the raw tensor payloads
  /// that were loaded into state_dict / constants: pickles, sample inputs, version records,
  /// weights/constants configs (saving regenerates the configs from the program's tensors and
  /// keeps their pickled entries), in the input's order.
  std::vector<ArchiveRecord> records;

  friend bool operator==(const ArchiveInfo& a, const ArchiveInfo& b) {
    return a.layout == b.layout && a.prefix == b.prefix && a.model_name == b.model_name &&
           a.entry_order == b.entry_order && a.records == b.records;
  }
};

/// Program-level facts besides graph, signature and data.
struct ProgramMetadata {
  /// Operator set versions, e.g. {"aten", 10}, in order.
  std::vector<std::pair<std::string, std::int64_t>> opset_version;
  /// Symbol ranges, in order.
  std::vector<RangeConstraint> range_constraints;
  /// Verifier dialects ("ATEN", "TRAINING", "EDGE").
  std::vector<std::string> verifiers;
  /// torch.__version__ of the exporter, when known.
  std::string torch_version;
  /// Fields epgraph does not model (module_call_graph, ...), kept verbatim as serialized text for
  /// round trips, by field name, in order.
  std::vector<std::pair<std::string, std::string>> opaque;
  /// The archive the program was loaded from (layout and uninterpreted records), when it was
  /// loaded by epgraph::archive::load_archive; absent otherwise.
  std::optional<ArchiveInfo> archive;

  friend bool operator==(const ProgramMetadata& a, const ProgramMetadata& b) {
    return a.opset_version == b.opset_version && a.range_constraints == b.range_constraints &&
           a.verifiers == b.verifiers && a.torch_version == b.torch_version &&
           a.opaque == b.opaque && a.archive == b.archive;
  }
};

/// The nested graphs a program owns, by the target of the get_attr nodes that read them (torch:
/// the submodules of `ep.graph_module`, e.g. `ep.graph_module.repeated_subgraph0` called through
/// `torch.ops.higher_order.invoke_subgraph`). Ordered by target, so saving is deterministic.
using NestedGraphs = std::map<std::string, std::unique_ptr<Graph>, std::less<>>;

/// torch.export's `ExportedProgram`, templated on the host's tensor type `Tensor` (anything with
/// a `tensor_traits` specialization; HostTensor is ready to use).
///
/// It owns the graph (held by unique_ptr so node pointers survive moves of the program), the
/// signature, `state_dict` (parameters and persistent buffers) and `constants` (lifted tensor
/// constants, non-persistent buffers and custom objects), both in insertion order and keyed by
/// fully qualified name, and the metadata. It also owns the nested graphs passes build
/// (nested_graphs(): outline_partition's `repeated_subgraph0`); nested graphs read from a file
/// stay with their get_attr node (NodeMeta::serialized, see NestedGraphTargets).
///
/// The program follows its graph like torch's replace hooks do: when `replace_all_uses_with` or
/// `replace_input_with` moves output uses to another node, output specs that named the old node
/// name the new one; when a node is renamed, specs naming it follow, and USER_INPUT_MUTATION and
/// GRADIENT_TO_USER_INPUT targets follow a renamed user input. BUFFER_MUTATION targets
/// (state_dict keys) never change.
/// Unlike torch (whose hook renames input specs too when a placeholder is returned directly and
/// replaced), input specs keep naming their placeholder after a replacement.
///
/// Movable, not copyable: `clone()` makes a deep copy.
template <class Tensor>
class ExportedProgram : private GraphObserver {
 public:
  using tensor_type = Tensor;
  /// What `constants` holds: a tensor or a custom object.
  using constant_type = std::variant<Tensor, ScriptObject>;

  /// An empty program: empty graph, empty signature and dictionaries.
  ExportedProgram() : graph_(std::make_unique<Graph>()) { graph_->set_observer(this); }

  /// A program from its parts. Takes ownership of `graph` (must not be null: value_error "Exported
  /// program needs a graph"). Nothing is validated here: call validate_graph_signature / verify.
  ExportedProgram(std::unique_ptr<Graph> graph, ExportGraphSignature graph_signature,
                  ordered_dict<Tensor> state_dict = {}, ordered_dict<constant_type> constants = {},
                  ProgramMetadata metadata = {})
      : graph_(std::move(graph)),
        signature_(std::move(graph_signature)),
        state_dict_(std::move(state_dict)),
        constants_(std::move(constants)),
        metadata_(std::move(metadata)) {
    if (!graph_) throw value_error("Exported program needs a graph");
    graph_->set_observer(this);
  }

  ExportedProgram(const ExportedProgram&) = delete;
  ExportedProgram& operator=(const ExportedProgram&) = delete;
  /// Moves; node pointers into the graph stay valid. The moved-from program is empty.
  ExportedProgram(ExportedProgram&& other) : ExportedProgram() { swap(other); }
  /// Moves; node pointers into the graph stay valid.
  ExportedProgram& operator=(ExportedProgram&& other) {
    if (this != &other) {
      ExportedProgram tmp(std::move(other));
      swap(tmp);
    }
    return *this;
  }
  ~ExportedProgram() override {
    if (graph_) graph_->set_observer(nullptr);
  }

  /// Exchanges two programs. No-throw.
  void swap(ExportedProgram& other) noexcept {
    graph_.swap(other.graph_);
    std::swap(signature_, other.signature_);
    state_dict_.swap(other.state_dict_);
    constants_.swap(other.constants_);
    std::swap(metadata_, other.metadata_);
    std::swap(signature_epoch_, other.signature_epoch_);
    edit_index_.swap(other.edit_index_);
    nested_graphs_.swap(other.nested_graphs_);
    if (graph_) graph_->set_observer(this);
    if (other.graph_) other.graph_->set_observer(&other);
  }

  /// The graph (torch `ep.graph`).
  [[nodiscard]] Graph& graph() noexcept { return *graph_; }
  /// The graph (torch `ep.graph`).
  [[nodiscard]] const Graph& graph() const noexcept { return *graph_; }
  /// The signature (torch `ep.graph_signature`). Edits through this reference are not checked;
  /// prefer the functions of edit.hpp, and run verify() after direct changes. Each call counts
  /// as a possible change: the next edit of edit.hpp validates the program again
  /// (validate_graph_signature, O(placeholders + specs)) instead of trusting its last check.
  /// Changes that add or remove specs through a reference kept from an earlier call are noticed
  /// too; replacing a spec in place through such a kept reference after an edit is not, so call
  /// graph_signature() again for each change. O(1).
  [[nodiscard]] ExportGraphSignature& graph_signature() noexcept {
    ++signature_epoch_;
    return signature_;
  }
  /// The signature (torch `ep.graph_signature`).
  [[nodiscard]] const ExportGraphSignature& graph_signature() const noexcept { return signature_; }
  /// Parameters and persistent buffers by fully qualified name (torch `ep.state_dict`).
  [[nodiscard]] ordered_dict<Tensor>& state_dict() noexcept { return state_dict_; }
  /// Parameters and persistent buffers by fully qualified name (torch `ep.state_dict`).
  [[nodiscard]] const ordered_dict<Tensor>& state_dict() const noexcept { return state_dict_; }
  /// Lifted tensor constants, non-persistent buffers and custom objects (torch `ep.constants`).
  [[nodiscard]] ordered_dict<constant_type>& constants() noexcept { return constants_; }
  /// Lifted tensor constants, non-persistent buffers and custom objects (torch `ep.constants`).
  [[nodiscard]] const ordered_dict<constant_type>& constants() const noexcept { return constants_; }
  /// Versions, range constraints, verifiers and opaque fields.
  [[nodiscard]] ProgramMetadata& metadata() noexcept { return metadata_; }
  /// Versions, range constraints, verifiers and opaque fields.
  [[nodiscard]] const ProgramMetadata& metadata() const noexcept { return metadata_; }

  /// The nested graphs the program owns (see NestedGraphs), by get_attr target. A get_attr node
  /// of the graph whose target is a key here and that carries no record of its own
  /// (NodeMeta::serialized empty) reads that graph: epgraph::json writes it as the node's
  /// `as_graph` argument, as torch's serializer writes a submodule. The graphs belong to the
  /// program, not to a node: Graph::node_copy / graph_copy of such a get_attr node into another
  /// program does not bring its graph (give it there with add_nested_graph(target,
  /// nested_graph(target)->clone()); verify reports an invoke_subgraph calling a target the
  /// program lacks). O(1).
  [[nodiscard]] const NestedGraphs& nested_graphs() const noexcept { return nested_graphs_; }
  /// The nested graph the program owns under `target`, or nullptr. O(log nested graphs).
  [[nodiscard]] const Graph* nested_graph(std::string_view target) const noexcept {
    const auto it = nested_graphs_.find(target);
    return it == nested_graphs_.end() ? nullptr : it->second.get();
  }
  /// The nested graph the program owns under `target`, or nullptr. O(log nested graphs).
  [[nodiscard]] Graph* nested_graph(std::string_view target) noexcept {
    const auto it = nested_graphs_.find(target);
    return it == nested_graphs_.end() ? nullptr : it->second.get();
  }
  /// Gives the program `graph` as its nested graph `target` (torch's
  /// `GraphModule.register_module(target, submodule)`) and returns it; a get_attr node with that
  /// target then reads it. Throws value_error, changing nothing: "Nested graph 'x' is null" for
  /// a null `graph`; "Nested graph target 'a.b' is not a Python identifier" (torch registers it
  /// as an attribute of the module); "The program already has a nested graph 'x'". Also
  /// std::bad_alloc (strong). O(log nested graphs + length of `target`).
  Graph& add_nested_graph(std::string target, std::unique_ptr<Graph> graph) {
    if (!graph) throw value_error("Nested graph '" + target + "' is null");
    if (target.empty() || detail::is_ascii_digit(target.front()) ||
        !std::all_of(target.begin(), target.end(), detail::is_ident_char)) {
      throw value_error("Nested graph target '" + target + "' is not a Python identifier");
    }
    if (nested_graphs_.count(target) != 0) {
      throw value_error("The program already has a nested graph '" + target + "'");
    }
    Graph& g = *graph;
    nested_graphs_.emplace(std::move(target), std::move(graph));
    return g;
  }
  /// Removes the nested graph `target` and returns it (null when there is none). Node pointers
  /// into it stay valid as long as the returned graph lives. O(log nested graphs). No-throw.
  std::unique_ptr<Graph> remove_nested_graph(std::string_view target) noexcept {
    const auto it = nested_graphs_.find(target);
    if (it == nested_graphs_.end()) return nullptr;
    std::unique_ptr<Graph> out = std::move(it->second);
    nested_graphs_.erase(it);
    return out;
  }

  /// A deep copy: graph (see Graph::clone), signature, state_dict, constants (tensors copied with
  /// Tensor's copy constructor), metadata and the nested graphs (Graph::clone each). Throws what
  /// Graph::clone throws. O(program size).
  [[nodiscard]] ExportedProgram clone() const {
    ExportedProgram out(graph_->clone(), signature_, state_dict_, constants_, metadata_);
    for (const auto& [target, nested] : nested_graphs_) {
      out.nested_graphs_.emplace(target, nested->clone());
    }
    return out;
  }

 private:
  void before_replace_uses(const Node& old_value, const Node& replacement,
                           bool output_uses) override {
    if (!output_uses) return;
    std::vector<OutputSpec> specs = signature_.output_specs;
    for (auto& s : specs) {
      if (names_graph_value(s.arg()) && s.name() == old_value.name()) {
        s.set_name(std::string(replacement.name()));
      }
    }
    signature_.output_specs.swap(specs);
  }

  void before_rename(const Node& node, std::string_view new_name) override {
    std::vector<InputSpec> inputs = signature_.input_specs;
    std::vector<OutputSpec> outputs = signature_.output_specs;
    const std::string name(new_name);
    bool renamed_user_input = false;
    if (node.op() == OpCode::placeholder) {
      for (auto& s : inputs) {
        if (names_graph_value(s.arg()) && s.name() == node.name()) {
          renamed_user_input = renamed_user_input || s.kind() == InputKind::USER_INPUT;
          s.set_name(name);
        }
      }
    }
    for (auto& s : outputs) {
      if (names_graph_value(s.arg()) && s.name() == node.name()) s.set_name(name);
      const bool targets_user_input = s.kind() == OutputKind::USER_INPUT_MUTATION ||
                                      s.kind() == OutputKind::GRADIENT_TO_USER_INPUT;
      if (renamed_user_input && targets_user_input &&
          s.target() == std::optional<std::string>(std::string(node.name()))) {
        s.set_target(name);
      }
    }
    signature_.input_specs.swap(inputs);
    signature_.output_specs.swap(outputs);
  }

  friend struct detail::edit_access;

  std::unique_ptr<Graph> graph_;
  ExportGraphSignature signature_;
  std::uint64_t signature_epoch_ = 0;  // see graph_signature()
  detail::EditIndex edit_index_;       // see detail/edit_index.hpp
  ordered_dict<Tensor> state_dict_;
  ordered_dict<constant_type> constants_;
  ProgramMetadata metadata_;
  NestedGraphs nested_graphs_;
};

#if defined(EPGRAPH_COMPILED) && EPGRAPH_COMPILED && !defined(EPGRAPH_DETAIL_BUILDING_COMPILED)
// Compiled mode (CMake option EPGRAPH_COMPILED, target epgraph::compiled): the members of
// ExportedProgram<HostTensor> (its destructor, clone, the rename hooks, ...) are compiled once in
// the library, so a file that holds such a program does not instantiate them.
extern template class ExportedProgram<HostTensor>;
#endif

}  // namespace epgraph
