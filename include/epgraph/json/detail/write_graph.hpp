// Writing one graph as torch's serialized Graph (GraphModuleSerializer.serialize_graph): inputs,
// nodes, outputs and the value tables, straight to text.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the writer).

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "../../ir/graph.hpp"
#include "../../ir/tensor.hpp"
#include "../error.hpp"
#include "../tensor_meta.hpp"
#include "checked_access.hpp"
#include "dispose.hpp"
#include "dom.hpp"
#include "node_record.hpp"
#include "text.hpp"
#include "tree.hpp"
#include "write_arguments.hpp"
#include "write_outputs.hpp"
#include "write_values.hpp"

namespace epgraph::json::detail {

// Writes a graph. The parts: WrittenValues (records, value kinds, tables; the first pass),
// ArgumentWriter (arguments and node references), OutputWriter (nodes' outputs, getitems).
class GraphWriter {
 public:
  // `nested`: the program's nested graphs (ExportedProgram::nested_graphs), or nullptr.
  explicit GraphWriter(SignatureValues sig = {}, const ::epgraph::NestedGraphs* nested = nullptr)
      : values_(std::move(sig), nested, &GraphWriter::nested_json),
        args_(values_),
        outputs_(values_, args_) {}
  GraphWriter(const GraphWriter&) = delete;
  GraphWriter& operator=(const GraphWriter&) = delete;

  // Appends to `out` the graph's JSON object, without `custom_obj_values` / `sym_float_values`
  // when `with_custom_objs` / `with_sym_floats` is false. Each node, input
  // and output is built as a small tree, dumped and freed at once; `tensor_values` is written
  // straight from the tensor metadata.
  // The JSON object of a nested graph the program owns, written by a writer of its own.
  static ojson nested_json(const Graph& g, const ::epgraph::NestedGraphs* nested) {
    std::string text;
    JsonText out(text);
    GraphWriter(SignatureValues{}, nested).write_text(g, out, true, true);
    return parse_ordered(text);
  }

  void write_text(const Graph& g, JsonText& out, bool with_custom_objs, bool with_sym_floats) {
    values_.prepare(g);
    std::string inputs_text;
    std::string outputs_text;
    JsonText inputs(inputs_text);
    JsonText outputs(outputs_text);
    std::string& text = out.buffer();
    text.append("{\"inputs\":[");
    const std::size_t inputs_at = text.size();
    text.append("],\"outputs\":[");
    const std::size_t outputs_at = text.size();
    text.append("],\"nodes\":[");
    bool first_node = true;
    bool single = false;
    auto add = [](JsonText& to, ojson v) {
      if (!to.buffer().empty()) to.raw(',');
      write_tree(to, std::move(v));
    };
    for (const Node& n : g.nodes()) {
      switch (n.op()) {
        case OpCode::placeholder:
          if (!inputs.buffer().empty()) inputs.raw(',');
          args_.input_text(n, inputs);
          values_.forget();
          break;
        case OpCode::call_function:
          if (!is_getitem(n)) {
            if (!first_node) out.raw(',');
            first_node = false;
            node_text(n, out);
            values_.forget();
          }
          break;
        case OpCode::output: {
          if (n.args().empty()) break;
          if (const ArgumentList* l = n.args()[0].list()) {
            for (const Argument& a : *l) add(outputs, args_.graph_output(a));
          } else {
            single = true;
            add(outputs, args_.graph_output(n.args()[0]));
          }
          break;
        }
        default: break;  // get_attr nodes are written inside the node using them
      }
    }
    outputs_.check_getitems_written(g);
    text.insert(outputs_at, outputs_text);
    text.insert(inputs_at, inputs_text);
    text.append("],\"tensor_values\":{");
    tensor_values_text(g, out);
    out.raw(std::string_view("},\"sym_int_values\":"));
    members_text(values_.sym_ints(), out);
    out.raw(std::string_view(",\"sym_bool_values\":"));
    members_text(values_.sym_bools(), out);
    out.raw(std::string_view(",\"is_single_tensor_return\":"));
    out.boolean(single);
    if (with_custom_objs) {
      out.raw(std::string_view(",\"custom_obj_values\":"));
      members_text(values_.custom_objs(), out);
    }
    if (with_sym_floats) {
      out.raw(std::string_view(",\"sym_float_values\":"));
      members_text(values_.sym_floats(), out);
    }
    out.raw('}');
  }

 private:
  // The members of `tensor_values` (NodeMeta::val of every value with an entry, token tensors,
  // then the unused outputs of nodes made in C++), written straight from the tensor metadata.
  void tensor_values_text(const Graph& g, JsonText& out) {
    bool first_value = true;
    const Path values_path("graph_module.graph.tensor_values");
    auto entry = [&](std::string_view name, const TensorMeta& meta) {
      // Metadata torch's deserializer refuses (a C++ pass set it: the reader refuses it too) is
      // refused here, with the message loading it would give, rather than written.
      check_tensor_meta(meta, at_key(values_path, name));
      if (!first_value) out.raw(',');
      first_value = false;
      out.key(name);
      out.tensor_meta(meta);
    };
    for (const Node& n : g.nodes()) {
      if (!values_.has_tensor_entry(&n)) continue;
      if (const TensorMeta* meta = n.meta().val.tensor()) {
        entry(n.name(), *meta);
      } else if (values_.is_token(&n)) {
        entry(n.name(), token_tensor_meta());
      }
    }
    for (const auto& [name, meta] : outputs_.unused()) entry(name, meta);
  }

  // A serialized node (torch's serialize_node): target, inputs, outputs and metadata written
  // here, with the small parts (outputs, most arguments) built as trees; the optional fields as
  // the file had them (a node made in C++ gets the current form).
  void node_text(const Node& n, JsonText& out) {
    const ojson& info = values_.info(&n);
    out.raw('{');
    out.key(node_key::target);
    out.string(target_to_json(n.target()));
    out.raw(',');
    out.key(node_key::inputs);
    node_inputs_text(n, info, out);
    out.raw(',');
    out.key(node_key::outputs);
    outputs_.node_outputs_text(n, info, out);
    out.raw(',');
    out.key(node_key::metadata);
    node_metadata_text(n, out);
    node_optional_fields_text(n, info, out);
    out.raw('}');
  }

  // The node's `inputs`: positional arguments, then keyword arguments, each as the file named
  // and typed it (`args` / `kwargs` of the record `info`).
  void node_inputs_text(const Node& n, const ojson& info, JsonText& out) {
    const ojson no_records = ojson::array();
    const ojson& arg_recs = info.contains(record_key::args) ? info[record_key::args] : no_records;
    const ojson& kw_recs =
        info.contains(record_key::kwargs) ? info[record_key::kwargs] : no_records;
    bool first = true;
    std::size_t position = 0;  // of the input, for messages about an input without a name
    auto input = [&](const std::string& name, const Argument& a, const ojson* rec,
                     std::int64_t kind) {
      out.raw(std::string_view(first ? "{" : ",{"));
      first = false;
      // An operator without a schema has unnamed inputs (torch writes name ""): say which one.
      const std::string which =
          name.empty() ? "input " + std::to_string(position) : "input '" + name + "'";
      ++position;
      out.key(record_key::name);
      out.string(name);
      out.raw(std::string_view(",\"arg\":"));
      if (const std::string why = ArgumentWriter::refused_argument_value(a); !why.empty()) {
        throw serialization_error("graph_module.graph.nodes", "node '" + std::string(n.name()) +
                                                                  "' (" + std::string(n.target()) +
                                                                  ") cannot be written: " + which +
                                                                  ": " + why);
      }
      try {
        args_.input_arg_text(a, rec, out);
      } catch (const mixed_list_error& e) {
        throw serialization_error("graph_module.graph.nodes", "node '" + std::string(n.name()) +
                                                                  "' (" + std::string(n.target()) +
                                                                  ") cannot be written: " + which +
                                                                  " is a list that mixes " + e.mix);
      }
      if (!rec || rec->contains(record_key::kind)) {
        out.raw(',');
        out.key(record_key::kind);
        if (rec && (*rec)[record_key::kind].is_null()) {
          out.null();
        } else {
          out.integer(kind);
        }
      }
      out.raw('}');
    };
    out.raw('[');
    for (std::size_t i = 0; i < n.args().size(); ++i) {
      const ojson* rec = i < arg_recs.size() ? &arg_recs[i] : nullptr;
      input(input_record_name(rec), n.args()[i], rec, kPositional);
    }
    for (const auto& [key, value] : n.kwargs()) {
      const ojson* rec = nullptr;
      for (const auto& r : kw_recs) {
        if (r[record_key::name] == key) rec = &r;
      }
      input(key, value, rec, kKeyword);
    }
    out.raw(']');
  }

  // The node's `metadata` (NodeMeta::other). A repeated key keeps its first place and takes its
  // last value, as an ordered_json object filled with md[k] = v.
  static void node_metadata_text(const Node& n, JsonText& out) {
    const auto& other = n.meta().other;
    bool unique_keys = other.size() <= 16;
    for (std::size_t i = 1; unique_keys && i < other.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j)
        unique_keys = unique_keys && other[i].first != other[j].first;
    }
    if (!unique_keys) {
      ojson md = ojson::object();
      JsonDisposer dispose_md(md);
      for (const auto& [k, v] : other) md[k] = v;  // growing copies strings only
      out.value(md);
      return;
    }
    out.raw('{');
    for (std::size_t i = 0; i < other.size(); ++i) {
      if (i != 0) out.raw(',');
      out.key(other[i].first);
      out.string(other[i].second);
    }
    out.raw('}');
  }

  // The node's optional fields: is_hop_single_tensor_return and name as the file had them (or
  // the current form for a node made in C++), then the fields of a newer schema kept.
  void node_optional_fields_text(const Node& n, const ojson& info, JsonText& out) {
    const bool fresh = info.empty();
    if (fresh) {
      // A higher-order operator read through getitem nodes returns a tuple, even of one value.
      const bool tuple = is_hop_target(n.target()) && values_.last_getitem_index(n) >= 0;
      out.raw(',');
      out.key(node_key::is_hop_single_tensor_return);
      if (tuple) {
        out.boolean(false);
      } else {
        out.null();
      }
    } else if (auto h = info.find(record_key::hop); h != info.end()) {
      out.raw(',');
      out.key(node_key::is_hop_single_tensor_return);
      out.value(*h);
    }
    if (fresh || info.contains(record_key::has_name)) {
      out.raw(',');
      out.key(node_key::name);
      out.string(n.name());
    }
    if (auto e = info.find(record_key::extra); e != info.end()) {
      for (auto it = e->begin(); it != e->end(); ++it) {
        out.raw(',');
        out.key(it.key());
        out.value(it.value());
      }
    }
  }

  WrittenValues values_;
  ArgumentWriter args_;
  OutputWriter outputs_;
};

}  // namespace epgraph::json::detail
