// Reading one serialized graph into an epgraph Graph (torch's GraphModuleDeserializer
// .deserialize_graph): its inputs, nodes and outputs.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the reader).

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../detail/strings.hpp"
#include "../../ir/argument.hpp"
#include "../../ir/graph.hpp"
#include "../../ir/names.hpp"
#include "../error.hpp"
#include "../format.hpp"
#include "checked_access.hpp"
#include "dispose.hpp"
#include "dom.hpp"
#include "node_record.hpp"
#include "read_arguments.hpp"
#include "read_nodes.hpp"
#include "read_record.hpp"
#include "read_values.hpp"
#include "tree.hpp"
#if EPGRAPH_JSON_HAS_SIMDJSON
#include "simdjson_feed.hpp"
#endif

namespace epgraph::json::detail {

// Reads one serialized graph into an epgraph Graph, the way
// GraphModuleDeserializer.deserialize_graph builds an FX graph. The parts: GraphValues (the
// value names and tables), NodeReader (nodes, from their tree or simdjson's document),
// ArgumentReader and NestedGraphs (arguments), NodeRecordWriter (each node's record).
class GraphReader {
 public:
  // Nodes are built as the file has them: torch's deserializer does not check calls against
  // their schemas either (verify reports those that do not bind), so the graph's schema checks
  // are off while the reader lives.
  GraphReader(Graph& graph, bool legacy)
      : g_(graph),
        schema_checks_(graph.schema_checks()),
        graphs_(graph, values_, legacy, &GraphReader::read_nested),
        args_(values_, graphs_),
        nodes_(graph, values_, args_, record_) {
    g_.set_schema_checks(false);
  }
  GraphReader(const GraphReader&) = delete;
  GraphReader& operator=(const GraphReader&) = delete;
  ~GraphReader() { g_.set_schema_checks(schema_checks_); }

  // Reads the graph `jg` at `path` into the reader's graph. `input_spec_names[i]` names
  // constant graph inputs (torch takes the spec's name). `streamed`: the top-level graph's
  // tensor_values as a TensorValuesSink read them (the tree's tensor_values is then empty), or
  // nullptr. Throws serialization_error (the messages listed at
  // load_exported_program_from_string) and std::bad_alloc. O(size of `jg`).
  void read(const ojson& jg, const Path& path, const std::vector<std::string>& input_spec_names,
            TensorValuesSink* streamed = nullptr) {
    read_graph(jg, path, input_spec_names, streamed);
  }
  // read() that frees each entry of `jg`'s `nodes` once it is read (the entry becomes null),
  // unless a nested graph read from it is kept for later comparison: freed while still in cache,
  // and the graph's own allocations reuse its memory (freeing the whole tree at the end was
  // slower: bench/README.md, json_load). On an exception `jg` is left partly freed
  // (the caller discards it). Same errors and complexity as read().
  void read_consuming(ojson& jg, const Path& path, const std::vector<std::string>& input_spec_names,
                      TensorValuesSink* streamed = nullptr) {
    read_graph(jg, path, input_spec_names, streamed);
  }
#if EPGRAPH_JSON_HAS_SIMDJSON
  // Makes the next read_consuming take the graph's nodes from `nodes` (simdjson's document,
  // parsed by `feeder`: ParsedDocument::nodes) instead of the tree's `nodes`, which must be
  // empty; both must outlive that call. NodeReader reads each node from the document, except a
  // node with a nested graph or a repeated key (see simd_value.hpp), which it reads from the tree
  // that node would have been: the graph and the errors are the same as from the tree.
  void take_nodes_from(SimdjsonFeeder& feeder, const simdjson::dom::array& nodes) noexcept {
    feeder_ = &feeder;
    direct_nodes_ = &nodes;
  }
  // How many nodes were read from simdjson's document, not a tree (tests tell the two routes
  // apart with it).
  [[nodiscard]] std::size_t nodes_read_direct() const noexcept { return direct_read_; }
#endif

  // Serialized value name -> node.
  const ValueTable& values() const { return values_.table(); }

 private:
  // read() (J = const ojson) and read_consuming() (J = ojson, its nodes freed as they are read).
  template <class J>
  void read_graph(J& jg, const Path& path, const std::vector<std::string>& input_spec_names,
                  TensorValuesSink* streamed) {
    expect_object(jg, path);
    values_.read_tables(jg, path, streamed);
    const Path ip = at_key(path, "inputs");
    const auto& inputs = expect_array(field(jg, path, "inputs"), ip);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      read_input(inputs[i], at_index(ip, i), i < input_spec_names.size() ? input_spec_names[i] : "",
                 i);
    }
    const Path np = at_key(path, "nodes");
    const auto& nodes = expect_array(field(jg, path, "nodes"), np);
    if constexpr (std::is_const_v<J>) {
      for (std::size_t i = 0; i < nodes.size(); ++i) nodes_.read(nodes[i], at_index(np, i));
    } else {
#if EPGRAPH_JSON_HAS_SIMDJSON
      if (direct_nodes_ != nullptr) read_direct_nodes(np);
#endif
      // The same array as `nodes` (found above: the key is present), reached without const.
      auto& entries = jg.find("nodes")->template get_ref<ojson::array_t&>();
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        const std::size_t graphs_before = graphs_.size();
        nodes_.read(nodes[i], at_index(np, i));
        // graphs_ points into the entry when it held the first nested graph of a name.
        if (graphs_.size() == graphs_before) {
          dismantle(entries[i]);
          entries[i] = nullptr;
        }
      }
    }
    const Path op = at_key(path, "outputs");
    const auto& outputs = expect_array(field(jg, path, "outputs"), op);
    ArgumentList results;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      results.push_back(read_graph_output(outputs[i], at_index(op, i)));
    }
    bool single = false;
    if (const ojson* s = opt_field(jg, path, "is_single_tensor_return"); s && !s->is_null()) {
      single = get_bool(*s, at_key(path, "is_single_tensor_return"));
    }
    if (single) {
      if (results.size() != 1 || results[0].node() == nullptr) {
        throw serialization_error(at_key(path, "is_single_tensor_return"),
                                  "true but the graph does not return exactly one tensor");
      }
      g_.create_node(OpCode::output, "output", {results[0]});
    } else {
      g_.output(std::move(results));
    }
  }

  // Most members an input's `info` record gets (read_input: as, class_fqn or value and
  // constant_input_name, sym or custom_obj; nodes get their record as text). Reserved up
  // front: an ordered_json object that grows copies its members and destroys the old, non-empty
  // ones (dispose.hpp).
  static constexpr std::size_t kInfoMembers = 8;

  // NestedGraphs' check of a nested graph: read into a scratch graph, which is dropped.
  static void read_nested(const ojson& sub, const Path& path, bool legacy) {
    Graph scratch;  // validates the nested graph; it is kept verbatim
    GraphReader(scratch, legacy).read(sub, path, {});
  }

  // One graph input (torch's deserialize_graph_input... as a placeholder); `spec_name` names a
  // constant input (empty: `arg<index>`).
  void read_input(const ojson& j, const Path& path, const std::string& spec_name,
                  std::size_t index) {
    const auto m_v = union_member(j, path);
    const auto& m = m_v.first;
    const auto& v = m_v.second;
    const Path p = at_key(path, m);
    ojson info = object_with_room(kInfoMembers);
    JsonDisposer info_guard(info);
    info[record_key::as] = m;
    std::string name;
    if (m == "as_tensor" || m == "as_custom_obj") {
      name = get_string(field(*v, p, "name"), at_key(p, "name"));
      if (m == "as_custom_obj") {
        std::string fqn = get_string(field(*v, p, "class_fqn"), at_key(p, "class_fqn"));
        // The input and its custom_obj_values entry must name the same class: the saver writes
        // one from each, so a disagreement would not survive a save/load round trip (fuzz_json).
        if (const std::string* o = values_.custom_obj_class(name); o != nullptr && *o != fqn) {
          throw serialization_error(at_key(p, "class_fqn"),
                                    "class_fqn '" + fqn + "' disagrees with custom_obj_values['" +
                                        name + "'].class_fqn '" + *o + "'");
        }
        info[record_key::class_fqn] = std::move(fqn);
      }
    } else if (m == "as_sym_int" || m == "as_sym_float" || m == "as_sym_bool") {
      const auto sm_sv = union_member(*v, p);
      const auto& sm = sm_sv.first;
      const auto& sv = sm_sv.second;
      if (sm != "as_name") {
        throw serialization_error(p, "a constant symbolic value cannot be a graph input");
      }
      name = get_string(*sv, at_key(p, sm));
    } else if (m == "as_int" || m == "as_float" || m == "as_bool" || m == "as_none" ||
               m == "as_string") {
      name = spec_name.empty() ? "arg" + std::to_string(index) : spec_name;
      info[record_key::value] = *v;
      info[record_key::constant_input_name] = name;
    } else {
      unknown_member(path, m);
    }
    if (values_.contains(name)) {
      throw serialization_error(path, "duplicate value name '" + name + "'");
    }
    Node* node = nullptr;
    {
      // A value's name is the file's (torch's sync_fx_node overwrites the name FX gives, e.g.
      // `input` -> `input_1`); a constant input's is FX's (torch does not overwrite it).
      std::optional<VerbatimNames> keep;
      if (info.count(record_key::value) == 0) keep.emplace(g_.names());
      if (last_input_ != nullptr) {
        // After the previous input: O(1), where the default position (after the last
        // placeholder) is found by walking the placeholders.
        auto after = g_.inserting_after(last_input_);
        node = g_.placeholder(name);
      } else {
        node = g_.placeholder(name);
      }
    }
    last_input_ = node;
    if (::epgraph::detail::starts_with(m, "as_") && info.count(record_key::value) == 0) {
      if (m == "as_tensor" && !values_.has_tensor_meta(name)) {
        throw serialization_error(path, "graph input '" + name + "' has no entry in tensor_values");
      }
      values_.sync(name, node, path, info);
    } else {
      (void)values_.add(name, node);
    }
    store_record(node, info);
  }

#if EPGRAPH_JSON_HAS_SIMDJSON
  // The nodes of direct_nodes_ at `np`, in order (see take_nodes_from). Throws what
  // NodeReader::read throws. O(size of the nodes).
  void read_direct_nodes(const Path& np) {
    const simdjson::dom::array& nodes = *direct_nodes_;
    direct_nodes_ = nullptr;
    OrderedDomBuilder builder;
    std::size_t i = 0;
    for (const simdjson::dom::element e : nodes) {
      const Path p = at_index(np, i++);
      try {
        nodes_.read(SimdValue(e), p);
        ++direct_read_;
        continue;
      } catch (const needs_tree&) {
        // Nothing was changed: the node is read from its tree below.
      }
      ojson tree = feeder_->tree(e, builder);
      JsonDisposer guard(tree);
      const std::size_t graphs_before = graphs_.size();
      nodes_.read(tree, p);
      // graphs_ points into the tree when it held the first nested graph of a name.
      if (graphs_.size() != graphs_before) graphs_.keep(std::move(tree));
    }
  }
#endif

  // One of the graph's outputs (torch's deserialize_graph_output).
  Argument read_graph_output(const ojson& j, const Path& path) {
    const auto m_v = union_member(j, path);
    const auto& m = m_v.first;
    const auto& v = m_v.second;
    const Path p = at_key(path, m);
    if (m == "as_tensor")
      return Argument(values_.lookup(get_string(field(*v, p, "name"), at_key(p, "name")), p));
    if (m == "as_sym_int" || m == "as_sym_bool" || m == "as_sym_float") {
      const auto sm_sv = union_member(*v, p);
      const auto& sm = sm_sv.first;
      const auto& sv = sm_sv.second;
      if (sm != "as_name") unknown_member(p, sm);
      return Argument(values_.lookup(get_string(*sv, at_key(p, sm)), at_key(p, sm)));
    }
    if (m == "as_int") return Argument(get_int(*v, p));
    if (m == "as_float") return Argument(get_float(*v, p));
    if (m == "as_bool") return Argument(get_bool(*v, p));
    if (m == "as_none") return Argument(none);
    unknown_member(path, m);
  }

  Graph& g_;
  bool schema_checks_;          // the graph's setting before the reader turned it off
  Node* last_input_ = nullptr;  // the placeholder read last
  GraphValues values_;
  NodeRecordWriter record_;
  NestedGraphs graphs_;
  ArgumentReader args_;
  NodeReader nodes_;
#if EPGRAPH_JSON_HAS_SIMDJSON
  SimdjsonFeeder* feeder_ = nullptr;
  const simdjson::dom::array* direct_nodes_ = nullptr;  // see take_nodes_from
  std::size_t direct_read_ = 0;
#endif
};

}  // namespace epgraph::json::detail
