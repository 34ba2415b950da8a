// Writing the outputs of serialized nodes: the layout the file gave (or the schema's, for a node
// made in C++), named after the getitem nodes that read them.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the writer).

#include <cstdint>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../../ir/graph.hpp"
#include "../../ir/tensor.hpp"
#include "../error.hpp"
#include "node_record.hpp"
#include "text.hpp"
#include "tree.hpp"
#include "write_arguments.hpp"
#include "write_values.hpp"

namespace epgraph::json::detail {

// Writes nodes' `outputs` and keeps what that tells about the rest of the graph: the getitem
// nodes written as outputs, and the unused outputs that need a tensor_values entry.
class OutputWriter {
 public:
  OutputWriter(WrittenValues& values, ArgumentWriter& args) : values_(values), args_(args) {}

  // The outputs of nodes made in C++ that no getitem node reads (see note_unused_outputs).
  [[nodiscard]] const std::vector<std::pair<std::string, TensorMeta>>& unused() const noexcept {
    return unused_outputs_;
  }

  // Throws unless every getitem node of `g` was written as an output of the node it reads (call
  // after writing the nodes). torch's format has no node for operator.getitem: its value is one
  // of the outputs of a multi-output node. torch's serializer skips every getitem node, so one
  // reading a placeholder or a single-value node (e.g. after replace_all_uses_with) would vanish
  // from the file and its users would name a value nothing produces; epgraph refuses instead.
  void check_getitems_written(const Graph& g) const {
    for (const Node& n : g.nodes()) {
      if (!is_getitem(n) || written_getitems_.count(&n) != 0) continue;
      const Node* parent = n.args().empty() ? nullptr : n.args()[0].node();
      std::string why;
      if (parent == nullptr) {
        why = "its first argument is not a node";
      } else if (parent->op() != OpCode::call_function) {
        why = "'" + std::string(parent->name()) + "' is a " + std::string(op_name(parent->op())) +
              ", not a multi-output call_function node";
      } else {
        why = "'" + std::string(parent->name()) +
              "' is not written as a multi-output node with that index (a node made in C++ is "
              "written as one only when every user is a getitem with a constant index)";
      }
      throw serialization_error("graph_module.graph.nodes",
                                "node '" + std::string(n.name()) +
                                    "' (operator.getitem) cannot be written: torch's format "
                                    "records a getitem only as an output of the node it reads, "
                                    "and " +
                                    why);
    }
  }

  // The node's `outputs` (outputs(), with the two common layouts written here).
  void node_outputs_text(const Node& n, const ojson& info, JsonText& out) {
    const ojson* layout = info.contains(record_key::out) ? &info[record_key::out] : nullptr;
    if (!layout && values_.last_getitem_index(n) < 0) {
      out.raw('[');  // outputs(): the node's own value
      args_.node_ref_text(&n, out);
      out.raw(']');
    } else if (layout && layout->is_array() && layout->size() == 1 && (*layout)[0].is_object() &&
               !(*layout)[0].empty() && (*layout)[0].begin().key() == "as_tensor" &&
               !is_hop_target(n.target())) {
      out.raw(std::string_view("[{\"as_tensor\":{\"name\":"));  // outputs(): renamed
      out.string(n.name());
      out.raw(std::string_view("}}]"));
    } else {
      write_tree(out, outputs(n, info));
    }
  }

 private:
  // The node's `outputs`: its layout from the file (`info`'s out) with the names of the getitem
  // nodes reading each output, or fresh_outputs().
  ojson outputs(const Node& n, const ojson& info) {
    if (!info.contains(record_key::out)) return fresh_outputs(n);
    const std::string name(n.name());
    const ojson& layout = info[record_key::out];
    Tree out(ojson::array());
    auto item_name = [&](const Node& parent, std::int64_t idx, const std::string& fallback) {
      const Node* gi = WrittenValues::getitem_at(parent, idx);
      if (gi == nullptr) return fallback;
      written_getitems_.insert(gi);
      return std::string(gi->name());
    };
    auto renamed = [&](const ojson& o, const std::string& new_name) {
      const std::string m = o.begin().key();
      if (m == "as_tensor") return object_of(m, object_of("name", new_name));
      return object_of(m, object_of("as_name", new_name));
    };
    const bool hop_tuple_of_one =
        is_hop_target(n.target()) && layout.size() == 1 && info.contains(record_key::hop) &&
        info[record_key::hop] == false && layout[0].begin().key() != "as_none";
    auto list_items = [&](const Node* parent, const ojson& arr, const std::string& fallback) {
      Tree items(ojson::array());
      for (std::size_t k = 0; k < arr.size(); ++k) {
        const std::string nm = parent ? item_name(*parent, static_cast<std::int64_t>(k),
                                                  fallback + "_" + std::to_string(k))
                                      : fallback + "_" + std::to_string(k);
        if (arr[k].is_object() && arr[k].contains("name"))
          items->push_back(object_of("name", nm));
        else
          items->push_back(object_of("as_name", nm));
      }
      return items.take();
    };
    if (layout.empty()) return out.take();
    const std::string m0 = layout[0].begin().key();
    if (hop_tuple_of_one) {
      out->push_back(renamed(layout[0], item_name(n, 0, name + "_unused_0")));
    } else if (layout.size() == 1 && (m0 == "as_tensor" || m0 == "as_sym_int" ||
                                      m0 == "as_sym_float" || m0 == "as_sym_bool")) {
      out->push_back(renamed(layout[0], name));
    } else if (layout.size() == 1 && m0 == "as_none") {
      if (const Node* gi = WrittenValues::getitem_at(n, 0))
        written_getitems_.insert(gi);  // reads the None
      out->push_back(layout[0]);
    } else if (layout.size() == 1) {
      out->push_back(object_of(m0, list_items(&n, layout[0][m0], name + "_unused")));
    } else {
      for (std::size_t i = 0; i < layout.size(); ++i) {
        const std::string m = layout[i].begin().key();
        const auto idx = static_cast<std::int64_t>(i);
        if (m == "as_none") {
          // The loader makes a getitem node for a None output too, as torch's does.
          if (const Node* gi = WrittenValues::getitem_at(n, idx)) written_getitems_.insert(gi);
          out->push_back(layout[i]);
        } else if (m == "as_tensor" || m == "as_sym_int" || m == "as_sym_float") {
          out->push_back(
              renamed(layout[i], item_name(n, idx, name + "_unused_" + std::to_string(i))));
        } else {
          const Node* gi =
              WrittenValues::getitem_at(n, idx);  // a list, read through its own getitem users
          if (gi) written_getitems_.insert(gi);
          out->push_back(
              object_of(m, list_items(gi, layout[i][m], name + "_unused_" + std::to_string(i))));
        }
      }
    }
    if (info.contains(record_key::schema)) note_unused_outputs(n, *out);
    return out.take();
  }

  // The outputs of a node made in C++ (no layout from a file): the node's own value, or, read
  // through getitem nodes (a tuple result, e.g. with_effects), one output per index up to the
  // last one read, named after its getitem node.
  ojson fresh_outputs(const Node& n) {
    const std::int64_t last = values_.last_getitem_index(n);
    if (last < 0) return array_of(args_.node_ref(&n));
    const std::string name(n.name());
    Tree out(ojson::array());
    for (std::int64_t i = 0; i <= last; ++i) {
      const Node* gi = WrittenValues::getitem_at(n, i);
      if (gi) written_getitems_.insert(gi);
      out->push_back(
          gi ? args_.node_ref(gi)
             : object_of("as_tensor", object_of("name", name + "_unused_" + std::to_string(i))));
    }
    if (last == 0 && !is_hop_target(n.target())) {
      return array_of(object_of("as_tensors", array_of(std::move((*out)[0]["as_tensor"]))));
    }
    return out.take();
  }

  // Outputs of a node made in C++ that no getitem node reads are written under made-up names
  // (`<node>_unused_<i>`, as torch does); their tensor_values entries come from the node's
  // tuple meta().val. `out` is the node's written outputs.
  void note_unused_outputs(const Node& n, const ojson& out) {
    const NodeValue& val = n.meta().val;
    auto add = [&](const ojson& tensor_arg, const NodeValue* v) {
      const std::string nm = tensor_arg["name"].get<std::string>();
      if (n.graph().find_node(nm) != nullptr) return;  // a getitem node: it has its own entry
      if (v == nullptr || v->tensor() == nullptr) {
        throw serialization_error("graph_module.graph.tensor_values",
                                  "output '" + nm + "' of node '" + std::string(n.name()) +
                                      "' is read by no getitem node and meta().val gives no "
                                      "tensor metadata for it");
      }
      unused_outputs_.emplace_back(nm, *v->tensor());
    };
    auto element = [](const NodeValue* v, std::size_t i) -> const NodeValue* {
      if (v == nullptr || v->elements() == nullptr || i >= v->elements()->size()) return nullptr;
      return &(*v->elements())[i];
    };
    const bool single_list = out.size() == 1 && out[0].contains("as_tensors");
    for (std::size_t i = 0; i < out.size(); ++i) {
      const NodeValue* vi = single_list ? &val : element(&val, i);
      if (auto t = out[i].find("as_tensor"); t != out[i].end()) {
        if (out.size() > 1) add(*t, vi);
      } else if (auto l = out[i].find("as_tensors"); l != out[i].end()) {
        for (std::size_t k = 0; k < l->size(); ++k) add((*l)[k], element(vi, k));
      }
    }
  }

  WrittenValues& values_;
  ArgumentWriter& args_;
  std::unordered_set<const Node*> written_getitems_;  // getitem nodes written as outputs
  std::vector<std::pair<std::string, TensorMeta>> unused_outputs_;  // see note_unused_outputs
};

}  // namespace epgraph::json::detail
