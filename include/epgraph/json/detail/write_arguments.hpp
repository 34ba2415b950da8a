// Writing epgraph Arguments as torch's Argument union: node references, lists, scalars.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the writer).

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "../../ir/argument.hpp"
#include "../../ir/graph.hpp"
#include "../../ir/tensor.hpp"
#include "../error.hpp"
#include "../tensor_meta.hpp"
#include "checked_access.hpp"
#include "node_record.hpp"
#include "text.hpp"
#include "tree.hpp"
#include "write_values.hpp"

namespace epgraph::json::detail {

// Thrown by list_item for an element that is not a node in a list written as tensors (a list
// that mixes tensors with other values, e.g. read from an `as_sym_ints` naming a tensor);
// node_inputs_text names the node and the input.
// Also thrown by arg for a list whose elements fit no one list type of torch's format (a bool
// among ints, a string among numbers, a string in a list of int lists): `mix` says what.
struct mixed_list_error : serialization_error {
  explicit mixed_list_error(const std::string& what_mixes = "tensors with other values")
      : serialization_error("graph_module.graph.nodes", "a list argument mixes " + what_mixes),
        mix(what_mixes) {}
  std::string mix;
};

// Writes arguments (torch's serialize_input), typing node references by WrittenValues.
class ArgumentWriter {
 public:
  explicit ArgumentWriter(WrittenValues& values) : values_(values) {}

  // `n` as an argument: its name under the union member of its value's kind. Throws
  // serialization_error for a tensor value without metadata.
  ojson node_ref(const Node* n) {
    const ValueKind k = values_.value_kind(n);
    const std::string name(n->name());
    switch (k) {
      case ValueKind::sym_int: return object_of("as_sym_int", object_of("as_name", name));
      case ValueKind::sym_float: return object_of("as_sym_float", object_of("as_name", name));
      case ValueKind::sym_bool: return object_of("as_sym_bool", object_of("as_name", name));
      case ValueKind::custom_obj: {
        const ojson& i = values_.info(n);
        const ojson fqn = i.contains(record_key::custom_obj) ? i[record_key::custom_obj]
                                                             : i[record_key::class_fqn];
        return object_of("as_custom_obj", object_of("name", name, "class_fqn", fqn));
      }
      case ValueKind::graph:
        // Named after the get_attr's target, as torch's serialize_input names it: a graph
        // called again reads it through a node named `<target>_1`.
        if (const Graph* g = values_.owned_nested_graph(n)) {
          return object_of("as_graph", object_of("name", std::string(n->target()), "graph",
                                                 values_.nested_graph_json(*g)));
        }
        return object_of("as_graph", object_of("name", std::string(n->target()), "graph",
                                               values_.info(n)[record_key::graph]));
      case ValueKind::tensor: break;
    }
    if (!values_.has_tensor_entry(n)) {
      // torch.export.load (and epgraph's loader) need the metadata of every tensor value.
      throw serialization_error("graph_module.graph.tensor_values",
                                "node '" + name +
                                    "' produces a tensor but has no tensor metadata "
                                    "(NodeMeta::val); set it before saving");
    }
    return object_of("as_tensor", object_of("name", name));
  }

  // One of the graph's outputs (torch's serialize_output).
  ojson graph_output(const Argument& a) {
    if (const Node* n = a.node()) {
      if (values_.value_kind(n) == ValueKind::custom_obj) {
        // torch's deserialize_graph_output reads tensors, symbols and constants only.
        throw serialization_error("graph_module.graph.outputs",
                                  "graph output '" + std::string(n->name()) +
                                      "' is a custom object, which torch's format cannot return");
      }
      return node_ref(n);
    }
    if (a.is<bool>()) return object_of("as_bool", a.as<bool>());
    if (a.is<std::int64_t>()) return object_of("as_int", a.as<std::int64_t>());
    if (a.is<double>()) return object_of("as_float", float_to_json(a.as<double>()));
    return object_of("as_none", true);
  }

  // input(n) as text. A record without "value" (a substring of its text when present) is not a
  // constant input: the placeholder is written as node_ref, without parsing the record.
  void input_text(const Node& n, JsonText& out) {
    if (n.meta().serialized.find("\"value\"") == std::string::npos && !values_.is_special(&n)) {
      node_ref_text(&n, out);
      return;
    }
    write_tree(out, input(n));
  }

  // A node reference as an argument (node_ref(n)): a tensor with metadata, the common case, is
  // written here; anything else as node_ref's tree (which throws node_ref's errors).
  void node_ref_text(const Node* n, JsonText& out) {
    if (!values_.is_special(n) && values_.has_tensor_entry(n)) {
      out.raw(std::string_view("{\"as_tensor\":{\"name\":"));
      out.string(n->name());
      out.raw(std::string_view("}}"));
      return;
    }
    write_tree(out, node_ref(n));
  }

  // input_arg(a, rec) as text.
  void input_arg_text(const Argument& a, const ojson* rec, JsonText& out) {
    if (const Node* n = a.node()) {
      // Of the hints, only as_optional_tensor writes a node otherwise than node_ref.
      if (input_record_tag(rec) != ArgTag::as_optional_tensor) {
        node_ref_text(n, out);
        return;
      }
    }
    write_tree(out, input_arg(a, rec));
  }

  // Why torch's loader (and epgraph's reader) would refuse the argument `a` once written, in the
  // reader's words, or "" when it would not: a ScalarType torch has no dtype for, a Layout or
  // MemoryFormat outside torch's enum, a device of negative index. A C++ pass can build any of
  // these; the writer refuses them rather than write a file nothing loads. Only the argument
  // itself is looked at (the schema has no list of these). O(1).
  static std::string refused_argument_value(const Argument& a) {
    if (a.is<dtype>()) {
      const auto d = static_cast<std::int64_t>(a.as<dtype>());
      if (!known_scalar_type(d)) return "unknown ScalarType " + std::to_string(d);
    } else if (a.is<Layout>()) {
      const auto l = static_cast<std::int64_t>(a.as<Layout>());
      if (!known_layout(l)) return "unknown Layout " + std::to_string(l);
    } else if (a.is<MemoryFormat>()) {
      const auto m = static_cast<std::int64_t>(a.as<MemoryFormat>());
      if (!known_memory_format(m)) return "unknown MemoryFormat " + std::to_string(m);
    } else if (a.is<Device>()) {
      const Device& d = a.as<Device>();
      if (d.index && *d.index < 0) return "Device index must not be negative";
    }
    return {};
  }

 private:
  // A graph input: a constant input's value, or the placeholder as node_ref.
  ojson input(const Node& n) {
    const ojson& i = values_.info(&n);
    if (auto v = i.find(record_key::value); v != i.end())
      return object_of(i[record_key::as].get<std::string>(), *v);
    return node_ref(&n);
  }

  // One node input, typed like the input read from the file (`rec`, null for a new input).
  ojson input_arg(const Argument& a, const ojson* rec) {
    const ArgTag hint = input_record_tag(rec);
    if (hint == ArgTag::as_operator && a.is<std::string>()) {
      const std::string original = rec->value(record_key::op, std::string());
      return object_of("as_operator", operator_arg_to_json(a.as<std::string>(), original));
    }
    return arg(a, hint);
  }

  // `a` as the union member `hint` when it fits (a tag the file gave), else as torch's
  // serialize_input would type it from the value.
  ojson arg(const Argument& a, ArgTag hint_in) {
    const ArgTag hint =
        (hint_in != ArgTag::unknown && fits(hint_in, a)) ? hint_in : ArgTag::unknown;
    switch (hint) {
      case ArgTag::as_optional_tensor:
        if (a.is_none()) return object_of("as_optional_tensor", object_of("as_none", true));
        return object_of("as_optional_tensor",
                         object_of("as_tensor", object_of("name", a.node()->name())));
      case ArgTag::as_sym_int:
        return object_of("as_sym_int", object_of("as_int", a.as<std::int64_t>()));
      case ArgTag::as_sym_float:
        return object_of("as_sym_float", object_of("as_float", float_to_json(a.as<double>())));
      case ArgTag::as_sym_bool: return object_of("as_sym_bool", object_of("as_bool", a.as<bool>()));
      case ArgTag::as_operator:
        return object_of("as_operator", operator_arg_to_json(a.as<std::string>(), ""));
      case ArgTag::as_complex: {
        const ArgumentList& l = *a.list();
        return object_of("as_complex", object_of("real", float_to_json(l[0].as<double>()), "imag",
                                                 float_to_json(l[1].as<double>())));
      }
      case ArgTag::as_string_to_argument: {
        // A repeated key keeps its first place and takes the last value (ordered_json's d[k] = v).
        MemberList d;
        for (const Argument& kv : *a.list()) {
          const std::string& key = (*kv.list())[0].as<std::string>();
          d.set(key, arg((*kv.list())[1], ArgTag::unknown));
        }
        return object_of("as_string_to_argument", d.take());
      }
      default: break;
    }
    if (const ArgumentList* l = a.list()) {
      const ArgTag kind = hint == ArgTag::unknown ? infer_list(*l) : hint;
      // Before any element is written: list_item reads each element as the kind's type.
      if (!l->empty() && !list_fits(kind, *l) && kind != ArgTag::as_tensors &&
          kind != ArgTag::as_optional_tensors && kind != ArgTag::as_nested_tensors) {
        throw mixed_list_error(
            "values of different types, which no list type of torch's "
            "format holds (taken for " +
            std::string(arg_tag_name(kind)) + ")");
      }
      Tree items(ojson::array());
      for (const Argument& x : *l) items->push_back(list_item(kind, x));
      return object_of(std::string(arg_tag_name(kind)), items.take());
    }
    return scalar_arg(a);
  }

  // A value that is not a list, typed from the value.
  ojson scalar_arg(const Argument& a) {
    if (const Node* n = a.node()) return node_ref(n);
    if (a.is_none()) return object_of("as_none", true);
    if (a.is<bool>()) return object_of("as_bool", a.as<bool>());
    if (a.is<std::int64_t>()) return object_of("as_int", a.as<std::int64_t>());
    if (a.is<double>()) return object_of("as_float", float_to_json(a.as<double>()));
    if (a.is<std::string>()) return object_of("as_string", a.as<std::string>());
    if (a.is<dtype>()) return object_of("as_scalar_type", static_cast<std::int32_t>(a.as<dtype>()));
    if (a.is<Layout>()) return object_of("as_layout", static_cast<std::int32_t>(a.as<Layout>()));
    if (a.is<MemoryFormat>())
      return object_of("as_memory_format", static_cast<std::int32_t>(a.as<MemoryFormat>()));
    const Device& d = a.as<Device>();
    Tree dev(object_of("type", d.type, "index", nullptr));
    if (d.index) (*dev)["index"] = *d.index;
    return object_of("as_device", dev.take());
  }

  static bool all_of(const ArgumentList& l, bool (*pred)(const Argument&)) {
    return std::all_of(l.begin(), l.end(), pred);
  }

  // Whether every element of `l` is a node whose value is `kind`, or (when allowed) None or a
  // plain value.
  bool nodes_of(const ArgumentList& l, ValueKind kind, bool allow_none, bool allow_plain) {
    for (const Argument& x : l) {
      if (const Node* n = x.node()) {
        if (values_.value_kind(n) != kind) return false;
      } else if (!(allow_none && x.is_none()) && !(allow_plain && !x.list() && !x.is_none())) {
        return false;
      }
    }
    return true;
  }

  // Whether `a` can be written as the union member `hint` (the file's tag of the argument).
  bool fits(ArgTag hint, const Argument& a) {
    const ArgumentList* l = a.list();
    switch (hint) {
      case ArgTag::as_optional_tensor:
        return a.is_none() || (a.node() && values_.value_kind(a.node()) == ValueKind::tensor);
      case ArgTag::as_sym_int: return a.is<std::int64_t>();
      case ArgTag::as_sym_float: return a.is<double>();
      case ArgTag::as_sym_bool: return a.is<bool>();
      case ArgTag::as_operator: return a.is<std::string>();
      case ArgTag::as_complex:
        return l && l->size() == 2 && all_of(*l, [](const Argument& x) { return x.is<double>(); });
      case ArgTag::as_string_to_argument:
        return l && all_of(*l, [](const Argument& x) {
                 return x.list() && x.list()->size() == 2 && (*x.list())[0].is<std::string>();
               });
      default: break;
    }
    if (!l) return false;
    return l->empty() || list_fits(hint, *l);
  }

  // fits() for a non-empty list `l`.
  bool list_fits(ArgTag hint, const ArgumentList& l) {
    switch (hint) {
      case ArgTag::as_tensors: return nodes_of(l, ValueKind::tensor, false, false);
      case ArgTag::as_optional_tensors: return nodes_of(l, ValueKind::tensor, true, false);
      case ArgTag::as_sym_ints:
        return nodes_of(l, ValueKind::sym_int, false, true) &&
               all_of(l, [](const Argument& x) { return x.node() || x.is<std::int64_t>(); });
      case ArgTag::as_sym_floats:
        return nodes_of(l, ValueKind::sym_float, false, true) &&
               all_of(l, [](const Argument& x) { return x.node() || x.is<double>(); });
      case ArgTag::as_sym_bools:
        return nodes_of(l, ValueKind::sym_bool, false, true) &&
               all_of(l, [](const Argument& x) { return x.node() || x.is<bool>(); });
      case ArgTag::as_ints:
        return all_of(l, [](const Argument& x) { return x.is<std::int64_t>(); });
      case ArgTag::as_floats:
        return all_of(l, [](const Argument& x) { return x.is<double>() || x.is<std::int64_t>(); });
      case ArgTag::as_bools: return all_of(l, [](const Argument& x) { return x.is<bool>(); });
      case ArgTag::as_strings:
        return all_of(l, [](const Argument& x) { return x.is<std::string>(); });
      case ArgTag::as_int_lists:
        return all_of(l, [](const Argument& x) {
          return x.list() != nullptr &&
                 all_of(*x.list(), [](const Argument& y) { return y.is<std::int64_t>(); });
        });
      case ArgTag::as_float_lists:
        return all_of(l, [](const Argument& x) {
          return x.list() != nullptr && all_of(*x.list(), [](const Argument& y) {
                   return y.is<double>() || y.is<std::int64_t>();
                 });
        });
      case ArgTag::as_nested_tensors:
        return all_of(l, [](const Argument& x) { return x.list() != nullptr; });
      default: return false;
    }
  }

  // The list tag torch's serializer picks for `l` from its values (serialize_input).
  ArgTag infer_list(const ArgumentList& l) {
    if (l.empty()) return ArgTag::as_ints;
    bool has_node = false, has_none = false, has_int = false, has_float = false, has_bool = false,
         has_str = false, has_list = false;
    ValueKind node_kind = ValueKind::tensor;
    for (const Argument& x : l) {
      if (const Node* n = x.node()) {
        has_node = true;
        node_kind = values_.value_kind(n);
      } else if (x.is_none())
        has_none = true;
      else if (x.is<std::int64_t>())
        has_int = true;
      else if (x.is<double>())
        has_float = true;
      else if (x.is<bool>())
        has_bool = true;
      else if (x.is<std::string>())
        has_str = true;
      else if (x.list())
        has_list = true;
    }
    if (has_node) {
      if (has_none) return ArgTag::as_optional_tensors;
      if (node_kind == ValueKind::sym_int) return ArgTag::as_sym_ints;
      if (node_kind == ValueKind::sym_float) return ArgTag::as_sym_floats;
      if (node_kind == ValueKind::sym_bool) return ArgTag::as_sym_bools;
      return ArgTag::as_tensors;
    }
    if (has_list) {
      for (const Argument& x : l) {
        for (const Argument& y : *x.list()) {
          if (y.node()) return ArgTag::as_nested_tensors;
          if (y.is<double>()) return ArgTag::as_float_lists;
        }
      }
      return ArgTag::as_int_lists;
    }
    if (has_str) return ArgTag::as_strings;
    if (has_bool && !has_int && !has_float) return ArgTag::as_bools;
    if (has_float) return ArgTag::as_floats;
    return ArgTag::as_ints;
  }

  ojson sym_item(const Argument& x, const char* value_key) {
    if (const Node* n = x.node()) return object_of("as_name", n->name());
    if (x.is<double>()) return object_of(value_key, float_to_json(x.as<double>()));
    if (x.is<bool>()) return object_of(value_key, x.as<bool>());
    return object_of(value_key, x.as<std::int64_t>());
  }

  static ojson number_item(const Argument& x) {
    return float_to_json(x.is<double>() ? x.as<double>()
                                        : static_cast<double>(x.as<std::int64_t>()));
  }

  // The name of the node `x` refers to; throws mixed_list_error when it refers to none.
  static std::string listed_node_name(const Argument& x) {
    const Node* n = x.node();
    if (n == nullptr) throw mixed_list_error();
    return std::string(n->name());
  }

  // One element of a list argument written as `kind`.
  ojson list_item(ArgTag kind, const Argument& x) {
    switch (kind) {
      case ArgTag::as_tensors: return object_of("name", listed_node_name(x));
      case ArgTag::as_optional_tensors:
        if (x.is_none()) return object_of("as_none", true);
        return object_of("as_tensor", object_of("name", listed_node_name(x)));
      case ArgTag::as_sym_ints: return sym_item(x, "as_int");
      case ArgTag::as_sym_floats: return sym_item(x, "as_float");
      case ArgTag::as_sym_bools: return sym_item(x, "as_bool");
      case ArgTag::as_floats: return number_item(x);
      case ArgTag::as_ints: return x.as<std::int64_t>();
      case ArgTag::as_bools: return x.as<bool>();
      case ArgTag::as_strings: return x.as<std::string>();
      default: break;
    }
    Tree inner(ojson::array());  // as_nested_tensors, as_float_lists, as_int_lists
    for (const Argument& y : *x.list()) {
      if (kind == ArgTag::as_nested_tensors) {
        inner->push_back(object_of("name", listed_node_name(y)));
      } else if (kind == ArgTag::as_float_lists) {
        inner->push_back(number_item(y));
      } else {
        inner->push_back(y.as<std::int64_t>());
      }
    }
    return inner.take();
  }

  WrittenValues& values_;
};

}  // namespace epgraph::json::detail
