// Reading the arguments of serialized nodes (torch's Argument union) into epgraph Arguments,
// nested graphs (as_graph) included.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the reader).

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../ir/argument.hpp"
#include "../../ir/graph.hpp"
#include "../../ir/tensor.hpp"
#include "../error.hpp"
#include "../format.hpp"
#include "checked_access.hpp"
#include "dispose.hpp"
#include "node_record.hpp"
#include "read_record.hpp"
#include "read_values.hpp"
#include "simd_value.hpp"
#include "tree.hpp"
#if EPGRAPH_JSON_HAS_SIMDJSON
#include "simdjson_feed.hpp"
#endif

namespace epgraph::json::detail {

// The nested graphs of a graph being read (as_graph arguments), the first read of each name kept
// for comparison with later ones.
class NestedGraphs {
 public:
  // Reads the nested graph `sub` at `path` into a scratch graph and throws its errors (a
  // GraphReader, which itself reads nested graphs with this class: hence a function).
  using Validate = void (*)(const ojson& sub, const Path& path, bool legacy);

  NestedGraphs(Graph& graph, GraphValues& values, bool legacy, Validate validate)
      : g_(graph), values_(values), legacy_(legacy), validate_(validate) {}
  NestedGraphs(const NestedGraphs&) = delete;
  NestedGraphs& operator=(const NestedGraphs&) = delete;
#if EPGRAPH_JSON_HAS_SIMDJSON
  ~NestedGraphs() {
    for (auto& t : kept_) dismantle(t);
  }
#endif

  // A nested graph argument (`as_graph`: the branch of a cond, the body of a map, the subgraph of
  // an invoke_subgraph) becomes a get_attr node whose target is the graph's name, its graph
  // checked and kept verbatim in the node's record. Like torch's deserialize_input, every use
  // makes its own get_attr node: a graph called again (several invoke_subgraph calls of one
  // nested_compile_region) gets a node named by FX's rule (`repeated_subgraph0_1`) reading the
  // same target. Throws serialization_error for a bad nested graph and for a second graph of
  // the same name that differs from the first (torch would register the last one and run it
  // from every call).
  Argument read(const ojson& v, const Path& p) {
    const std::string name = get_string(field(v, p, "name"), at_key(p, "name"));
    const Path gp = at_key(p, "graph");
    const ojson& sub = field(v, p, "graph");
    Node* n = nullptr;
    if (const ojson* const* first = graphs_.find(name)) {
      if (**first != sub) {
        throw serialization_error(gp, "differs from the nested graph '" + name +
                                          "' read before under the same name (torch would "
                                          "call the last one from every node)");
      }
      n = g_.create_node(OpCode::get_attr, name, {}, {}, name);  // FX's rule: `<name>_1`
    } else {
      validate_(sub, gp, legacy_);  // the nested graph is kept verbatim
      n = create(OpCode::get_attr, name, {}, {}, name, p);
      (void)graphs_.add(name, &sub);
    }
    ojson info = object_with_room(1);
    JsonDisposer info_guard(info);
    info[record_key::graph] = sub;
    store_record(n, info);
    (void)values_.add(std::string(n->name()), n);
    return Argument(n);
  }

  // How many names have a nested graph (grows when read() kept a graph of a new name, which then
  // points into the JSON it was read from).
  [[nodiscard]] std::size_t size() const noexcept { return graphs_.size(); }
#if EPGRAPH_JSON_HAS_SIMDJSON
  // Keeps `tree` (a node's tree, built from simdjson's document) alive: a kept graph points into
  // it.
  void keep(ojson tree) { kept_.push_back(std::move(tree)); }
#endif

 private:
  Node* create(OpCode op, const std::string& target, ArgumentList args, Kwargs kwargs,
               const std::string& name, const Path& path) {
    if (!name.empty() && g_.find_node(name) != nullptr && values_.contains(name)) {
      throw serialization_error(path, "duplicate value name '" + name + "'");
    }
    return g_.create_node(op, target, std::move(args), std::move(kwargs), name);
  }

  Graph& g_;
  GraphValues& values_;
  bool legacy_;
  Validate validate_;
  NamedTable<const ojson*> graphs_;  // nested graphs by name, the first read of each
#if EPGRAPH_JSON_HAS_SIMDJSON
  // Trees of nodes read from simdjson's document that graphs_ points into.
  std::vector<ojson> kept_;
#endif
};

// Reads argument unions (torch's deserialize_input), resolving value names against the graph's
// values. Written once against the value type J: ordered_json or SimdValue (simd_value.hpp).
class ArgumentReader {
 public:
  ArgumentReader(const GraphValues& values, NestedGraphs& graphs)
      : values_(values), graphs_(graphs) {}

  // Argument union -> epgraph Argument (torch's deserialize_input). `member_out`, when given,
  // receives the union tag. `graph_arg` nodes (as_graph) are created on the way (NestedGraphs;
  // for J = SimdValue, needs_tree is thrown instead, before anything is created). Throws
  // serialization_error and std::bad_alloc. O(size of the argument).
  template <class J>
  Argument read(const J& j, const Path& path, std::string* member_out) {
    const auto m_vp = union_member(j, path);
    const std::string_view m = m_vp.first;
    const J& v = *m_vp.second;
    const Path p = at_key(path, m);
    if (member_out) *member_out = m;
    switch (const ArgTag tag = arg_tag(m)) {
      case ArgTag::as_none: return Argument(none);
      case ArgTag::as_tensor: return tensor_ref(v, p);
      case ArgTag::as_int: return Argument(get_int(v, p));
      case ArgTag::as_float: return Argument(get_float(v, p));
      case ArgTag::as_string:
      case ArgTag::as_operator: return Argument(std::string(get_string(v, p)));
      case ArgTag::as_bool: return Argument(get_bool(v, p));
      case ArgTag::as_sym_int:
      case ArgTag::as_sym_float:
      case ArgTag::as_sym_bool: return sym_ref(v, p, tag);
      case ArgTag::as_scalar_type:
      case ArgTag::as_layout:
      case ArgTag::as_memory_format:
      case ArgTag::as_device: return read_enum_arg(tag, v, p);
      case ArgTag::as_optional_tensor: return optional_tensor(v, p);
      case ArgTag::as_custom_obj:
        return Argument(values_.lookup(get_string(field(v, p, "name"), at_key(p, "name")), p));
      case ArgTag::as_complex:
        return Argument{get_float(field(v, p, "real"), at_key(p, "real")),
                        get_float(field(v, p, "imag"), at_key(p, "imag"))};
      case ArgTag::as_string_to_argument: return read_string_to_argument(v, p);
      case ArgTag::as_graph:
#if EPGRAPH_JSON_HAS_SIMDJSON
        if constexpr (std::is_same_v<J, ojson>) {
          return graphs_.read(v, p);
        } else {
          throw needs_tree{};  // NestedGraphs keeps the graph as a tree
        }
#else
        return graphs_.read(v, p);  // (needs_tree exists only with simdjson)
#endif
      case ArgTag::as_tensors:
      case ArgTag::as_ints:
      case ArgTag::as_floats:
      case ArgTag::as_strings:
      case ArgTag::as_bools:
      case ArgTag::as_sym_ints:
      case ArgTag::as_sym_floats:
      case ArgTag::as_sym_bools:
      case ArgTag::as_optional_tensors:
      case ArgTag::as_int_lists:
      case ArgTag::as_float_lists:
      case ArgTag::as_nested_tensors: return read_list_arg(tag, v, p);
      case ArgTag::unknown: break;
    }
    unknown_member(path, m);
  }

 private:
  // A tensor argument ({"name": ...}): the node producing it.
  template <class J>
  Argument tensor_ref(const J& t, const Path& tp) const {
    return Argument(values_.lookup(get_string(field(t, tp, "name"), at_key(tp, "name")), tp));
  }

  // A SymInt/SymFloat/SymBool argument (`tag` is its as_sym_* tag): the node of a named symbol,
  // or the constant of the matching type.
  template <class J>
  Argument sym_ref(const J& s, const Path& sp, ArgTag tag) const {
    if (s.is_null()) throw serialization_error(sp, "expected a symbolic value, got null");
    const auto sm_sv = union_member(s, sp);
    const std::string_view sm = sm_sv.first;
    const J& sv = *sm_sv.second;
    const Path svp = at_key(sp, sm);
    if (sm == "as_name") return Argument(values_.lookup(get_string(sv, svp), svp));
    const ArgTag constant = tag == ArgTag::as_sym_int     ? ArgTag::as_int
                            : tag == ArgTag::as_sym_float ? ArgTag::as_float
                                                          : ArgTag::as_bool;
    if (arg_tag(sm) != constant) unknown_member(sp, sm);
    if (constant == ArgTag::as_int) return Argument(get_int(sv, svp));
    if (constant == ArgTag::as_float) return Argument(get_float(sv, svp));
    return Argument(get_bool(sv, svp));
  }

  // An OptionalTensor union: None or a tensor.
  template <class J>
  Argument optional_tensor(const J& x, const Path& xp) const {
    const auto om_ov = union_member(x, xp);
    const ArgTag tag = arg_tag(om_ov.first);
    if (tag == ArgTag::as_none) return Argument(none);
    if (tag == ArgTag::as_tensor) return tensor_ref(*om_ov.second, at_key(xp, om_ov.first));
    unknown_member(xp, om_ov.first);
  }

  // as_scalar_type / as_layout / as_memory_format (torch's enum values) and as_device.
  template <class J>
  static Argument read_enum_arg(ArgTag tag, const J& v, const Path& p) {
    if (tag == ArgTag::as_device) {
      Device d;
      d.type = get_string(field(v, p, "type"), at_key(p, "type"));
      if (const member_ref<J> idx = opt_field(v, p, "index"); idx && !idx->is_null()) {
        d.index = get_int(*idx, at_key(p, "index"));
        if (*d.index < 0) {
          throw serialization_error(at_key(p, "index"), "Device index must not be negative");
        }
      }
      return Argument(std::move(d));
    }
    const std::int64_t e = get_int(v, p);
    if (tag == ArgTag::as_scalar_type) {
      check_scalar_type(e, p);
      return Argument(static_cast<dtype>(e));
    }
    if (tag == ArgTag::as_layout) {
      check_layout(e, p);
      return Argument(static_cast<Layout>(e));
    }
    if (!known_memory_format(e)) {
      throw serialization_error(p, "unknown MemoryFormat " + std::to_string(e));
    }
    return Argument(static_cast<MemoryFormat>(e));
  }

  // A list argument (`tag` is one of the list tags): one Argument per element.
  template <class J>
  Argument read_list_arg(ArgTag tag, const J& v, const Path& p) {
    expect_array(v, p);
    ArgumentList out;
    out.reserve(v.size());
    for_each_element(v, [&](std::size_t i, const J& x) {
      out.push_back(read_list_item(tag, x, at_index(p, i)));
    });
    return Argument(std::move(out));
  }

  // One element of a list argument of tag `tag`.
  template <class J>
  Argument read_list_item(ArgTag tag, const J& x, const Path& xp) {
    switch (tag) {
      case ArgTag::as_tensors: return tensor_ref(x, xp);
      case ArgTag::as_ints: return Argument(get_int(x, xp));
      case ArgTag::as_floats: return Argument(get_float(x, xp));
      case ArgTag::as_strings: return Argument(std::string(get_string(x, xp)));
      case ArgTag::as_bools: return Argument(get_bool(x, xp));
      case ArgTag::as_sym_ints: return sym_ref(x, xp, ArgTag::as_sym_int);
      case ArgTag::as_sym_floats: return sym_ref(x, xp, ArgTag::as_sym_float);
      case ArgTag::as_sym_bools: return sym_ref(x, xp, ArgTag::as_sym_bool);
      case ArgTag::as_optional_tensors: return optional_tensor(x, xp);
      default: break;
    }
    // as_int_lists / as_float_lists / as_nested_tensors: a list of lists.
    expect_array(x, xp);
    ArgumentList inner;
    for_each_element(x, [&](std::size_t i, const J& item) {
      const Path ip = at_index(xp, i);
      if (tag == ArgTag::as_int_lists) {
        inner.push_back(get_int(item, ip));
      } else if (tag == ArgTag::as_float_lists) {
        inner.push_back(get_float(item, ip));
      } else {
        inner.push_back(tensor_ref(item, ip));
      }
    });
    return Argument(std::move(inner));
  }

  // as_string_to_argument: a dict of str -> argument, kept as a list of [key, value] pairs.
  template <class J>
  Argument read_string_to_argument(const J& v, const Path& p) {
    expect_object(v, p);
    ArgumentList out;
    for_each_member(v, [&](std::string_view key, const J& value) {
      out.push_back(Argument{std::string(key), read(value, at_key(p, key), nullptr)});
    });
    return Argument(std::move(out));
  }

  const GraphValues& values_;
  NestedGraphs& graphs_;
};

}  // namespace epgraph::json::detail
