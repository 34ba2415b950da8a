// Reading the usual serialized nodes straight from simdjson's document, without a JSON tree.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the reader); empty unless epgraph::json links simdjson.
//
// Every function here reads only the forms torch writes for most nodes and returns false, having
// changed nothing, for any other; the caller then builds the node's tree and reads it with
// NodeReader, so the graph and the errors are the same either way (test_json_backends).

#include "../format.hpp"

#if EPGRAPH_JSON_HAS_SIMDJSON

#include <simdjson.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../ir/argument.hpp"
#include "../../ir/graph.hpp"
#include "../../ir/names.hpp"
#include "../../ir/tensor.hpp"
#include "checked_access.hpp"
#include "node_record.hpp"
#include "read_record.hpp"
#include "read_values.hpp"
#include "simdjson_feed.hpp"
#include "text.hpp"

namespace epgraph::json::detail {

// A tensor argument {"name": <string>} naming a value read before: its node; nullptr for any
// other form or name (tensor_ref's errors). No allocation. O(length of the name).
inline Node* direct_tensor(const GraphValues& values, const simdjson::dom::element& e) {
  using simdjson::dom::element_type;
  if (e.type() != element_type::OBJECT) return nullptr;
  const simdjson::dom::object obj = e.get_object().value_unsafe();
  auto it = obj.begin();
  if (it == obj.end()) return nullptr;
  const simdjson::dom::key_value_pair kv = *it;
  if (kv.key != "name" || kv.value.type() != element_type::STRING || ++it != obj.end()) {
    return nullptr;
  }
  Node* const* n = values.find(kv.value.get_string().value_unsafe());
  return n == nullptr ? nullptr : *n;
}

// The one member of a union object whose value is not null, when the object has exactly one
// member; false otherwise. No allocation. O(1).
struct DirectMember {
  std::string_view key;
  simdjson::dom::element value;
};
inline bool direct_union(const simdjson::dom::element& e, DirectMember& out) {
  if (e.type() != simdjson::dom::element_type::OBJECT) return false;
  const simdjson::dom::object obj = e.get_object().value_unsafe();
  auto it = obj.begin();
  if (it == obj.end()) return false;
  const simdjson::dom::key_value_pair kv = *it;
  out = DirectMember{kv.key, kv.value};
  return out.value.type() != simdjson::dom::element_type::NULL_VALUE && ++it == obj.end();
}

// One scalar element of a list argument of tag `tag`, or of a scalar argument of that list's
// element tag, as read_arg / read_list_item read it without an error; false (out unspecified)
// for any other form. Throws std::bad_alloc. O(1).
inline bool direct_scalar(const GraphValues& values, ArgTag tag, const simdjson::dom::element& v,
                          Argument& out) {
  using simdjson::dom::element_type;
  switch (tag) {
    case ArgTag::as_tensor: {
      Node* n = direct_tensor(values, v);
      if (n == nullptr) return false;
      out = Argument(n);
      return true;
    }
    case ArgTag::as_int: {
      std::int64_t i = 0;
      if (!simdjson_int(v, i)) return false;
      out = Argument(i);
      return true;
    }
    case ArgTag::as_float:
      // get_float: any number, as a double (nlohmann's conversion of an integer).
      if (v.type() == element_type::DOUBLE) {
        out = Argument(v.get_double().value_unsafe());
      } else if (v.type() == element_type::INT64) {
        out = Argument(static_cast<double>(v.get_int64().value_unsafe()));
      } else {
        return false;
      }
      return true;
    case ArgTag::as_bool:
      if (v.type() != element_type::BOOL) return false;
      out = Argument(v.get_bool().value_unsafe());
      return true;
    case ArgTag::as_string:
      if (v.type() != element_type::STRING) return false;
      out = Argument(std::string(v.get_string().value_unsafe()));
      return true;
    case ArgTag::as_sym_int: {  // {"as_name": <value>} or {"as_int": <integer>}
      DirectMember kv;
      if (!direct_union(v, kv)) return false;
      std::int64_t i = 0;
      if (kv.key == "as_int" && simdjson_int(kv.value, i)) {
        out = Argument(i);
        return true;
      }
      if (kv.key != "as_name" || kv.value.type() != element_type::STRING) return false;
      Node* const* n = values.find(kv.value.get_string().value_unsafe());
      if (n == nullptr) return false;
      out = Argument(*n);
      return true;
    }
    default: return false;
  }
}

// An argument union {"<tag>": <value>} in the forms direct_scalar reads, their lists, None and
// the enums, as read_arg reads it without an error; false (out unspecified) for any other
// form. `tag_out` receives the tag. Throws std::bad_alloc. O(size of the value).
inline bool direct_arg(const GraphValues& values, const simdjson::dom::element& e,
                       std::string_view& tag_out, Argument& out) {
  DirectMember kv;
  if (!direct_union(e, kv)) return false;
  tag_out = kv.key;
  const simdjson::dom::element v = kv.value;
  switch (const ArgTag tag = arg_tag(kv.key)) {
    case ArgTag::as_none: out = Argument(none); return true;
    case ArgTag::as_scalar_type:
    case ArgTag::as_layout:
    case ArgTag::as_memory_format: {
      std::int64_t i = 0;
      if (!simdjson_int(v, i)) return false;
      if (tag == ArgTag::as_scalar_type) {
        if (!known_scalar_type(i)) return false;
        out = Argument(static_cast<dtype>(i));
      } else if (tag == ArgTag::as_layout) {
        if (!known_layout(i)) return false;
        out = Argument(static_cast<Layout>(i));
      } else {
        if (!known_memory_format(i)) return false;
        out = Argument(static_cast<MemoryFormat>(i));
      }
      return true;
    }
    case ArgTag::as_tensors:
    case ArgTag::as_ints:
    case ArgTag::as_floats:
    case ArgTag::as_bools:
    case ArgTag::as_strings:
    case ArgTag::as_sym_ints: {
      if (v.type() != simdjson::dom::element_type::ARRAY) return false;
      const ArgTag item = tag == ArgTag::as_tensors   ? ArgTag::as_tensor
                          : tag == ArgTag::as_ints    ? ArgTag::as_int
                          : tag == ArgTag::as_floats  ? ArgTag::as_float
                          : tag == ArgTag::as_bools   ? ArgTag::as_bool
                          : tag == ArgTag::as_strings ? ArgTag::as_string
                                                      : ArgTag::as_sym_int;
      const simdjson::dom::array arr = v.get_array().value_unsafe();
      ArgumentList list;
      list.reserve(arr.size());
      for (const simdjson::dom::element x : arr) {
        Argument a;
        if (!direct_scalar(values, item, x, a)) return false;
        list.push_back(std::move(a));
      }
      out = Argument(std::move(list));
      return true;
    }
    default: return direct_scalar(values, tag, v, out);
  }
}

// read_node_direct's outputs: none, or one new tensor value {"as_tensor": {"name": ...}}
// (`single` and its `name`); false for any other form. No allocation. O(1).
inline bool direct_outputs(const simdjson::dom::element& outputs_e, bool& single,
                           std::string_view& name) {
  using simdjson::dom::element_type;
  const simdjson::dom::array outputs = outputs_e.get_array().value_unsafe();
  single = outputs.size() == 1;
  if (outputs.size() > 1) return false;
  if (!single) return true;
  DirectMember kv;
  if (!direct_union(outputs.at(0).value_unsafe(), kv) || kv.key != "as_tensor") return false;
  DirectMember nkv;
  if (!direct_union(kv.value, nkv) || nkv.key != record_key::name ||
      nkv.value.type() != element_type::STRING) {
    return false;
  }
  name = nkv.value.get_string().value_unsafe();
  return true;
}

// read_node_direct's metadata: null, or string -> string without a repeated key, into `meta`
// in the file's order; false for any other form. Throws std::bad_alloc. O(members^2).
inline bool direct_metadata(const simdjson::dom::element& meta_e,
                            std::vector<std::pair<std::string, std::string>>& meta) {
  using simdjson::dom::element_type;
  if (meta_e.type() == element_type::OBJECT) {
    const simdjson::dom::object md = meta_e.get_object().value_unsafe();
    meta.reserve(md.size());
    for (const simdjson::dom::key_value_pair kv : md) {
      if (kv.value.type() != element_type::STRING) return false;
      for (const auto& m : meta) {
        if (m.first == kv.key) return false;
      }
      meta.emplace_back(std::string(kv.key), std::string(kv.value.get_string().value_unsafe()));
    }
  } else if (meta_e.type() != element_type::NULL_VALUE) {
    return false;
  }
  return true;
}

// read_node_direct's inputs into `args` / `kwargs`, their records into `record`'s args() /
// kwargs() (as NodeReader writes them); false for any input that is not {"name",
// "arg", "kind"?} with an argument direct_arg reads, or a positional one after a keyword one.
// Throws std::bad_alloc. O(size of the inputs).
inline bool direct_inputs(const GraphValues& values, NodeRecordWriter& record,
                          const simdjson::dom::element& inputs_e, ArgumentList& args,
                          Kwargs& kwargs) {
  using simdjson::dom::element_type;
  record.clear_inputs();
  const simdjson::dom::array inputs = inputs_e.get_array().value_unsafe();
  for (const simdjson::dom::element in : inputs) {
    static constexpr std::array<std::string_view, 3> in_keys = {record_key::name, "arg",
                                                                record_key::kind};
    std::array<simdjson::dom::element, 3> in_f;
    unsigned in_seen = 0;
    std::int64_t kind = 0;
    if (!simdjson_fields(in, in_keys, in_f, in_seen) || (in_seen & 3u) != 3u ||
        in_f[0].type() != element_type::STRING ||
        ((in_seen & 4u) != 0 && !simdjson_int(in_f[2], kind))) {
      return false;
    }
    const std::string_view in_name = in_f[0].get_string().value_unsafe();
    const simdjson::dom::element& arg_e = in_f[1];
    std::string_view tag;
    Argument a;
    if (!direct_arg(values, arg_e, tag, a)) return false;
    const bool has_kind = (in_seen & 4u) != 0;
    const bool positional = !has_kind || kind != kKeyword;
    if (positional && !kwargs.empty()) return false;
    JsonText& rec = positional ? record.args() : record.kwargs();
    append_input_record_with(rec, in_name, tag, {}, has_kind, [&] { rec.integer(kind); });
    if (positional) {
      args.push_back(std::move(a));
    } else {
      kwargs.emplace_back(std::string(in_name), std::move(a));
    }
  }
  return true;
}

// read_node_direct's record up to the value's members, as read_node_fields writes it: `hop`
// the is_hop_single_tensor_return value (null or boolean) when given, `has_name` when the
// node had a name field, `out_name` the single tensor output's name (nullptr: no output).
inline void write_direct_record(NodeRecordWriter& record, const simdjson::dom::element* hop,
                                bool has_name, const std::string_view* out_name) {
  record.start();
  JsonText& rec = record.text();
  if (hop != nullptr) {
    rec.raw(',');
    rec.key(record_key::hop);
    if (hop->type() == simdjson::dom::element_type::NULL_VALUE) {
      rec.raw(std::string_view("null"));
    } else {
      rec.boolean(hop->get_bool().value_unsafe());
    }
  }
  if (has_name) {
    rec.raw(',');
    rec.key(record_key::has_name);
    rec.boolean(true);
  }
  rec.raw(',');
  rec.key(record_key::out);
  rec.raw('[');
  if (out_name != nullptr) {
    rec.raw('{');
    rec.key("as_tensor");
    rec.raw('{');
    rec.key(record_key::name);
    rec.string(*out_name);
    rec.raw(std::string_view("}}"));
  }
  rec.raw(']');
}

// NodeReader::read for a node of simdjson's document in the forms torch writes for most nodes: the
// fields target, inputs, outputs, metadata and, optionally, name and a null or boolean
// is_hop_single_tensor_return (each once, no other), not a higher-order operator; inputs {"name",
// "arg", "kind"?} with the arguments direct_arg reads and values read before; no output or one
// tensor output {"as_tensor": {"name": <new value>}}; metadata null or string -> string without a
// repeated key. The node, its name, metadata and record are the ones NodeReader gives from the
// tree. Returns false, having changed nothing, for any other node (also every node read_node
// refuses); the caller then reads its tree. Throws std::bad_alloc and what Graph::call_function
// throws (as read_node would). O(size of the node).
inline bool read_node_direct(Graph& g, GraphValues& values, NodeRecordWriter& record,
                             const simdjson::dom::element& e, const Path& path) {
  using simdjson::dom::element_type;
  // The fields by their index in `keys` (bit 1 << index in `seen`).
  static constexpr std::array<std::string_view, 6> keys = {
      node_key::target,   node_key::inputs, node_key::outputs,
      node_key::metadata, node_key::name,   node_key::is_hop_single_tensor_return};
  enum : unsigned { k_name = 16, k_hop = 32 };
  std::array<simdjson::dom::element, 6> f;
  unsigned seen = 0;
  if (!simdjson_fields(e, keys, f, seen)) return false;
  const simdjson::dom::element& target_e = f[0];
  const simdjson::dom::element& inputs_e = f[1];
  const simdjson::dom::element& outputs_e = f[2];
  const simdjson::dom::element& meta_e = f[3];
  const simdjson::dom::element& name_e = f[4];
  const simdjson::dom::element& hop_e = f[5];
  // torch writes null for every node that is not a higher-order operator's.
  if ((seen & k_hop) != 0 && hop_e.type() != element_type::NULL_VALUE &&
      hop_e.type() != element_type::BOOL) {
    return false;
  }
  if ((seen & 15u) != 15u || target_e.type() != element_type::STRING ||
      inputs_e.type() != element_type::ARRAY || outputs_e.type() != element_type::ARRAY) {
    return false;
  }
  std::string target = target_from_json(target_e.get_string().value_unsafe());
  if (is_hop_target(target)) return false;
  bool single_value = false;
  std::string_view out_name;
  if (!direct_outputs(outputs_e, single_value, out_name)) return false;
  std::string_view given_name;
  if ((seen & k_name) != 0) {
    if (name_e.type() == element_type::STRING) {
      given_name = name_e.get_string().value_unsafe();
    } else if (name_e.type() != element_type::NULL_VALUE) {
      return false;
    }
  }
  const std::string_view name = single_value ? out_name : given_name;
  // A value's name is registered even when empty (register_value then refuses a taken one).
  if ((single_value || !name.empty()) && values.contains(name)) return false;
  std::vector<std::pair<std::string, std::string>> meta;
  if (!direct_metadata(meta_e, meta)) return false;
  ArgumentList args;
  Kwargs kwargs;
  if (!direct_inputs(values, record, inputs_e, args, kwargs)) return false;
  write_direct_record(record, (seen & k_hop) != 0 ? &hop_e : nullptr, (seen & k_name) != 0,
                      single_value ? &out_name : nullptr);
  Node* node = nullptr;
  {
    std::optional<VerbatimNames> keep;
    if (single_value) keep.emplace(g.names());
    node = g.call_function(target, std::move(args), std::move(kwargs), std::string(name));
  }
  node->mutable_meta().other = std::move(meta);
  if (single_value) {
    GraphValues::append_extra(values.register_value(std::string(out_name), node, path),
                              record.text());
  }
  record.finish(node);
  return true;
}

}  // namespace epgraph::json::detail

#endif  // EPGRAPH_JSON_HAS_SIMDJSON
