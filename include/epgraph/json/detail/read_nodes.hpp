// Reading a serialized node from its JSON tree into call_function and getitem nodes.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the reader).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../ir/argument.hpp"
#include "../../ir/graph.hpp"
#include "../../ir/names.hpp"
#include "../../ir/value.hpp"
#include "../error.hpp"
#include "checked_access.hpp"
#include "node_record.hpp"
#include "read_arguments.hpp"
#include "read_record.hpp"
#include "read_values.hpp"
#include "simd_value.hpp"
#include "text.hpp"

namespace epgraph::json::detail {

// Reads serialized nodes (any form of schema 8.x, 7.x and the legacy one) into the graph, the way
// torch's deserialize_node builds them. Written once against the value type J: ordered_json (a
// node's tree) or SimdValue (simdjson's document, simd_value.hpp), with the same graph, records
// and errors from both.
class NodeReader {
 public:
  NodeReader(Graph& graph, GraphValues& values, ArgumentReader& args, NodeRecordWriter& record)
      : g_(graph), values_(values), args_(args), record_(record) {}

  // A serialized node (torch's deserialize_node) -> a call_function node, plus one getitem node
  // per output of a multi-output node. The node's record (NodeMeta::serialized) is written as
  // text (NodeRecordWriter). Throws serialization_error (the messages listed at
  // load_exported_program_from_string), std::bad_alloc and, for J = SimdValue, needs_tree before
  // it has changed anything. O(size of the node).
  template <class J>
  void read(const J& serialized, const Path& path) {
    expect_object(serialized, path);
    std::array<member_ref<J>, kNodeKeys.size()> fields{};
    const auto& jn = fetch_fields(serialized, kNodeKeys, fields);
    const std::string target = target_from_json(
        get_string(required(fields[0], path, node_key::target), at_key(path, node_key::target)));
    const Path ip = at_key(path, node_key::inputs);
    const auto& inputs = required(fields[1], path, node_key::inputs);
    expect_array(inputs, ip);
    const Path op = at_key(path, node_key::outputs);
    const auto& outputs = required(fields[2], path, node_key::outputs);
    expect_array(outputs, op);
    const bool hop = is_hop_target(target);
    ArgumentList args;
    Kwargs kwargs;
    read_node_inputs(inputs, ip, hop, args, kwargs);
    NodeFields<J> f = read_node_fields(jn, fields, path, outputs, op);
    const bool single_value =
        f.outs.size() == 1 &&
        (f.outs[0].first == "as_tensor" || f.outs[0].first == "as_sym_int" ||
         f.outs[0].first == "as_sym_float" || f.outs[0].first == "as_sym_bool");
    const bool hop_tuple_of_one =
        hop && f.outs.size() == 1 && f.hop_single == false && f.outs[0].first != "as_none";
    std::string name = f.given_name;
    std::string out_name;
    if (single_value) {
      out_name = output_value_name(f.outs[0], at_key(at_index(op, 0), f.outs[0].first));
      if (!hop_tuple_of_one) name = out_name;
    }
    if (!name.empty() && values_.contains(name)) {
      throw serialization_error(path, "duplicate value name '" + name + "'");
    }
    Node* node = nullptr;
    {
      // A single value's node takes the value's name as the file has it (torch's sync_fx_node);
      // a node with several outputs, or none, is named by FX's rule, as in torch.
      std::optional<VerbatimNames> keep;
      if (single_value && !hop_tuple_of_one) keep.emplace(g_.names());
      node = g_.call_function(target, std::move(args), std::move(kwargs), name);
    }
    node->mutable_meta().other = f.meta;
    if (f.outs.empty()) {
      // no value
    } else if (hop_tuple_of_one) {
      // the node's value is the tuple of its one output's, as for several outputs (torch's
      // deserialize_multiple_outputs gives `cond` and `map_impl` `(FakeTensor(...),)`)
      const Node* item = make_getitem(
          node, 0, out_name.empty() ? output_value_name(f.outs[0], at_index(op, 0)) : out_name,
          at_index(op, 0), true);
      set_tuple_value(node, {item});
      (void)values_.add(std::string(node->name()), node);
    } else if (single_value) {
      GraphValues::append_extra(values_.register_value(out_name, node, at_index(op, 0)),
                                record_.text());
    } else if (f.outs.size() == 1 && f.outs[0].first == "as_none") {
      g_.rename_node(node, Graph::default_name(OpCode::call_function, target) + "_unused");
    } else {
      read_multiple_outputs(node, f.outs, op);
      (void)values_.add(std::string(node->name()), node);
    }
    record_.finish(node);
  }

 private:
  // The fields of a serialized node the reader knows (schema 8.20), in the order the reader
  // takes them.
  static constexpr std::array<std::string_view, 6> kNodeKeys = {
      node_key::target,   node_key::inputs, node_key::outputs,
      node_key::metadata, node_key::name,   node_key::is_hop_single_tensor_return};
  // An input's fields.
  static constexpr std::array<std::string_view, 3> kInputKeys = {record_key::name, "arg",
                                                                 record_key::kind};

  // One serialized output of a node: its union tag (a view into the node's JSON) and value.
  template <class J>
  using NodeOutput = std::pair<std::string_view, member_ref<J>>;

  // What read_node takes from a serialized node besides its inputs.
  template <class J>
  struct NodeFields {
    std::optional<bool> hop_single;   // is_hop_single_tensor_return, when given and not null
    std::string given_name;           // `name`, when given and not null
    std::vector<NodeOutput<J>> outs;  // `outputs`
    std::vector<std::pair<std::string, std::string>> meta;  // `metadata`
  };

  // Reads a node's `inputs` into `args` / `kwargs` (positional or keyword by their ArgumentKind,
  // or, without one, keyword when a higher-order operator's input has a name) and writes their
  // records to the record writer's args() / kwargs().
  template <class J>
  void read_node_inputs(const J& inputs, const Path& ip, bool hop, ArgumentList& args,
                        Kwargs& kwargs) {
    record_.clear_inputs();
    for_each_element(inputs, [&](std::size_t i, const J& in) {
      const Path p = at_index(ip, i);
      expect_object(in, p);
      std::array<member_ref<J>, kInputKeys.size()> f{};
      (void)fetch_fields(in, kInputKeys, f);
      // A view into the document (which outlives the node's reading): most names are not kept.
      const std::string_view name =
          get_string(required(f[0], p, record_key::name), at_key(p, record_key::name));
      std::string member;
      Argument a = args_.read(required(f[1], p, "arg"), at_key(p, "arg"), &member);
      std::string operator_text;
      if (member == "as_operator") {  // kept as torch.fx prints it; the file's text is recorded
        std::string shown = operator_arg_from_json(a.as<std::string>());
        if (shown != a.as<std::string>()) {
          operator_text = a.as<std::string>();
          a = Argument(std::move(shown));
        }
      }
      std::optional<std::int64_t> kind;
      const member_ref<J>& k = f[2];
      if (k && !k->is_null()) kind = get_int(*k, at_key(p, record_key::kind));
      const bool positional = kind ? *kind != kKeyword : (!hop || name.empty());
      if (positional && !kwargs.empty()) {
        throw serialization_error(
            p, "positional argument '" + std::string(name) + "' after keyword arguments");
      }
      JsonText& rec = positional ? record_.args() : record_.kwargs();
      append_input_record_with(rec, name, member, operator_text, static_cast<bool>(k),
                               [&] { write_json(rec, *k); });
      if (positional) {
        args.push_back(std::move(a));
      } else {
        kwargs.emplace_back(std::string(name), std::move(a));
      }
    });
  }

  // Reads a node's other fields and writes the record up to its output layout ("out", with
  // legacy null members dropped); the value's members ("sym"/"custom_obj") and the closing brace
  // come after.
  // `fields`: fetch_fields' members of kNodeKeys.
  template <class J, class Fields>
  NodeFields<J> read_node_fields(const J& jn, const Fields& fields, const Path& path,
                                 const J& outputs, const Path& op) {
    NodeFields<J> f;
    JsonText& rec = record_.text();
    record_.start();
    if (const member_ref<J>& h = fields[5]) {
      rec.raw(',');
      rec.key(record_key::hop);
      write_json(rec, *h);
      if (!h->is_null()) {
        f.hop_single = get_bool(*h, at_key(path, node_key::is_hop_single_tensor_return));
      }
    }
    if (const member_ref<J>& n = fields[4]) {
      rec.raw(',');
      rec.key(record_key::has_name);
      rec.boolean(true);
      if (!n->is_null()) f.given_name = get_string(*n, at_key(path, node_key::name));
    }
    NodeRecordWriter::append_unknown_node_fields(jn, record_.text());
    rec.raw(',');
    rec.key(record_key::out);
    rec.raw('[');
    for_each_element(outputs, [&](std::size_t i, const J& out) {
      auto mv = union_member(out, at_index(op, i));
      if (i != 0) rec.raw(',');
      rec.raw('{');
      rec.key(mv.first);
      write_json(rec, *mv.second);
      rec.raw('}');
      f.outs.push_back(std::move(mv));
    });
    rec.raw(']');
    f.meta = read_node_metadata(fields[3], path);
    return f;
  }

  // A node's `metadata` (required, may be null): string -> string, in the file's order.
  // `md`: the node's metadata member (fetch_fields).
  template <class Ref>
  static std::vector<std::pair<std::string, std::string>> read_node_metadata(const Ref& md,
                                                                             const Path& path) {
    using J = std::decay_t<decltype(*md)>;
    std::vector<std::pair<std::string, std::string>> meta;
    if (!md) throw serialization_error(path, "missing required field 'metadata'");
    if (md->is_null()) return meta;
    const Path mp = at_key(path, node_key::metadata);
    expect_object(*md, mp);
    meta.reserve(md->size());
    for_each_member(*md, [&](std::string_view key, const J& value) {
      meta.emplace_back(std::string(key), std::string(get_string(value, at_key(mp, key))));
    });
    return meta;
  }

  // The name of a single-value output (as_tensor's `name`, a symbol's `as_name`).
  template <class Output>  // NodeOutput<J>
  static std::string output_value_name(const Output& o, const Path& p) {
    if (o.first == "as_tensor") {
      return std::string(
          get_string(field(*o.second, p, record_key::name), at_key(p, record_key::name)));
    }
    return output_item_name(*o.second, p);
  }

  // The name of a symbolic output ({"as_name": ...}); anything else is refused.
  template <class J>
  static std::string output_item_name(const J& item, const Path& p) {
    const auto sm_sv = union_member(item, p);
    if (sm_sv.first != "as_name")
      throw serialization_error(p, "a node output must be a named value");
    return std::string(get_string(*sm_sv.second, at_key(p, sm_sv.first)));
  }

  // The getitem node reading output `idx` of `parent`, named `gname` (the file's name when
  // `is_value`: it then produces a graph value, registered with its metadata).
  Node* make_getitem(Node* parent, std::int64_t idx, const std::string& gname, const Path& p,
                     bool is_value) {
    if (is_value && values_.contains(gname)) {
      throw serialization_error(p, "duplicate value name '" + gname + "'");
    }
    Node* gi = nullptr;
    {
      // A named output keeps the file's name (torch's generate_getitem + sync_fx_node).
      std::optional<VerbatimNames> keep;
      if (is_value) keep.emplace(g_.names());
      gi = g_.call_function("operator.getitem", {Argument(parent), Argument(idx)}, {}, gname);
    }
    gi->mutable_meta().other = parent->meta().other;
    if (is_value) {
      const GraphValues::ValueExtra e = values_.register_value(gname, gi, p);
      if (e.sym != nullptr || e.custom_obj != nullptr) {
        std::string text;
        JsonText extra(text);
        GraphValues::append_extra(e, extra);
        text[0] = '{';  // the record is the extra member alone
        text.push_back('}');
        gi->mutable_meta().serialized = std::move(text);
      }
    }
    return gi;
  }

  // One getitem node of `parent` per element of the list output `arr`; `parent`'s value becomes
  // the list of theirs (see tuple_value).
  template <class J>
  void read_output_items(Node* parent, const J& arr, const Path& p) {
    expect_array(arr, p);
    std::vector<const Node*> items;
    for_each_element(arr, [&](std::size_t k, const J& item) {
      const Path kp = at_index(p, k);
      std::string gname;
      member_ref<J> given{};
      if (item.is_object()) given = opt_field(item, kp, record_key::name);
      if (given) {
        gname = get_string(*given, at_key(kp, record_key::name));
      } else {
        gname = output_item_name(item, kp);
      }
      items.push_back(make_getitem(parent, static_cast<std::int64_t>(k), gname, kp, true));
    });
    set_tuple_value(parent, items);
  }

  // torch.export.load gives a node with several outputs the tuple of its outputs' values
  // (deserialize_multiple_outputs: `meta["val"]`), None for an as_none output. `items` holds
  // the getitem node of each output (nullptr for None). The value stays unset when an output
  // has none (a custom object), so that nothing is made up.
  static void set_tuple_value(Node* node, const std::vector<const Node*>& items) {
    NodeValue::List list;
    list.reserve(items.size());
    for (const Node* item : items) {
      if (item == nullptr) {
        list.emplace_back(None{});
      } else if (item->meta().val.has_value()) {
        list.push_back(item->meta().val);
      } else {
        return;
      }
    }
    node->mutable_meta().val = NodeValue(std::move(list));
  }

  // The outputs of a node with several values (or one list): getitem nodes, as torch's
  // deserialize_multiple_outputs makes them.
  template <class Output>  // NodeOutput<J>
  void read_multiple_outputs(Node* node, const std::vector<Output>& outs, const Path& op) {
    if (outs.size() == 1) {
      if (outs[0].first != "as_tensors") {
        throw serialization_error(at_index(op, 0),
                                  "unsupported node output '" + std::string(outs[0].first) + "'");
      }
      read_output_items(node, *outs[0].second, at_key(at_index(op, 0), "as_tensors"));
      return;
    }
    std::vector<const Node*> items;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const Path p = at_index(op, i);
      const Output& o = outs[i];
      const auto idx = static_cast<std::int64_t>(i);
      const ArgTag tag = arg_tag(o.first);
      if (tag == ArgTag::as_tensor || tag == ArgTag::as_sym_int || tag == ArgTag::as_sym_float) {
        const Path vp = at_key(p, o.first);
        items.push_back(make_getitem(node, idx, output_value_name(o, vp), vp, true));
      } else if (tag == ArgTag::as_none) {
        (void)make_getitem(node, idx, "as_none", p, false);
        items.push_back(nullptr);
      } else if (tag == ArgTag::as_tensors || tag == ArgTag::as_sym_ints ||
                 tag == ArgTag::as_sym_floats || tag == ArgTag::as_sym_bools) {
        Node* lst = make_getitem(node, idx, "", p, false);
        read_output_items(lst, *o.second, at_key(p, o.first));
        items.push_back(lst);
      } else {
        throw serialization_error(p, "unsupported node output '" + std::string(o.first) + "'");
      }
    }
    set_tuple_value(node, items);
  }

  Graph& g_;
  GraphValues& values_;
  ArgumentReader& args_;
  NodeRecordWriter& record_;
};

}  // namespace epgraph::json::detail
