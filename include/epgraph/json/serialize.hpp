// Writing an ExportedProgram as torch.export's serialized JSON (schema 8.20, torch 2.13).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "../ir/graph.hpp"
#include "../ops/aten_schemas.hpp"
#include "../ops/registry.hpp"
#include "../ops/schema.hpp"
#include "../program/exported_program.hpp"
#include "../program/graph_signature.hpp"
#include "deserialize.hpp"
#include "detail/checked_access.hpp"
#include "detail/dom.hpp"
#include "detail/node_record.hpp"
#include "detail/text.hpp"
#include "detail/tree.hpp"
#include "error.hpp"
#include "save.hpp"
#include "tensor_meta.hpp"

namespace epgraph::json {

namespace detail {

inline ojson node_info(const Node& n) {
  const std::string& s = n.meta().serialized;
  if (s.empty()) return ojson::object();
  return parse_ordered(s);
}

// Writes the tree `v` and dismantles it (nlohmann's destructor allocates for a non-empty tree,
// see detail/tree.hpp).
inline void write_tree(JsonText& out, ojson v) {
  JsonDisposer guard(v);
  out.value(v);
}

// `members` as one JSON object.
inline void members_text(const MemberList& members, JsonText& out) {
  out.raw('{');
  bool first = true;
  for (const auto& [key, value] : members.members()) {
    if (!first) out.raw(',');
    first = false;
    out.key(key);
    out.value(value);
  }
  out.raw('}');
}

inline bool is_getitem(const Node& n) {
  return n.op() == OpCode::call_function && n.target() == "operator.getitem";
}

// What the signature says about values whose node may carry no metadata (a program built in
// C++): the names of TOKEN inputs/outputs, and CUSTOM_OBJ input names -> class_fqn.
struct SignatureValues {
  std::unordered_set<std::string> tokens;
  std::unordered_map<std::string, std::string> custom_objs;
};

// torch's effect token value, `torch.tensor([])` (torch/_higher_order_ops/effects.py
// new_token_tensor): float32, sizes [0], strides [1], on the CPU.
inline TensorMeta token_tensor_meta() {
  TensorMeta m;
  m.sizes = {SymInt{std::int64_t{0}}};
  m.strides = {SymInt{std::int64_t{1}}};
  return m;
}

class GraphWriter {
 public:
  GraphWriter() = default;
  // `nested`: the nested graphs of the program (ExportedProgram::nested_graphs), or nullptr; a
  // get_attr node without a record whose target is one of them is written as that graph.
  explicit GraphWriter(SignatureValues sig, const NestedGraphs* nested = nullptr)
      : sig_(std::move(sig)), nested_(nested) {}
  GraphWriter(const GraphWriter&) = delete;
  GraphWriter& operator=(const GraphWriter&) = delete;
  // The records are dismantled (see detail/tree.hpp): destroying them allocates nothing.
  ~GraphWriter() {
    for (auto& [node, record] : special_) dismantle(record);
    for (auto& [node, record] : plain_) dismantle(record);
  }

  // Appends to `out` the graph's JSON object, without `custom_obj_values` / `sym_float_values`
  // when `with_custom_objs` / `with_sym_floats` is false. Each node, input
  // and output is built as a small tree, dumped and freed at once; `tensor_values` is written
  // straight from the tensor metadata.
  void write_text(const Graph& g, JsonText& out, bool with_custom_objs, bool with_sym_floats) {
    prepare(g);
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
          input_text(n, inputs);
          forget();
          break;
        case OpCode::call_function:
          if (!is_getitem(n)) {
            if (!first_node) out.raw(',');
            first_node = false;
            node_text(n, out);
            forget();
          }
          break;
        case OpCode::output: {
          if (n.args().empty()) break;
          if (const ArgumentList* l = n.args()[0].list()) {
            for (const Argument& a : *l) add(outputs, graph_output(a));
          } else {
            single = true;
            add(outputs, graph_output(n.args()[0]));
          }
          break;
        }
        default: break;  // get_attr nodes are written inside the node using them
      }
    }
    check_getitems_written(g);
    text.insert(outputs_at, outputs_text);
    text.insert(inputs_at, inputs_text);
    text.append("],\"tensor_values\":{");
    tensor_values_text(g, out);
    out.raw(std::string_view("},\"sym_int_values\":"));
    members_text(sym_ints_, out);
    out.raw(std::string_view(",\"sym_bool_values\":"));
    members_text(sym_bools_, out);
    out.raw(std::string_view(",\"is_single_tensor_return\":"));
    out.boolean(single);
    if (with_custom_objs) {
      out.raw(std::string_view(",\"custom_obj_values\":"));
      members_text(objs_, out);
    }
    if (with_sym_floats) {
      out.raw(std::string_view(",\"sym_float_values\":"));
      members_text(sym_floats_, out);
    }
    out.raw('}');
  }

 private:
  // The graph table of symbolic values named `table` ("sym_int_values", "sym_float_values" or
  // "sym_bool_values") for the value of node `node`. Throws serialization_error for another name
  // (only a hand-written NodeMeta::serialized can hold one: the loader keeps the three).
  MemberList& sym_table(const std::string& table, const std::string& node) {
    if (table == "sym_int_values") return sym_ints_;
    if (table == "sym_float_values") return sym_floats_;
    if (table == "sym_bool_values") return sym_bools_;
    throw serialization_error("graph_module.graph.nodes",
                              "node '" + node + "': its record names the symbolic-value table '" +
                                  table +
                                  "' (NodeMeta::serialized); torch's format has sym_int_values, "
                                  "sym_float_values and sym_bool_values");
  }

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
      if (!has_tensor_entry(&n)) continue;
      if (const TensorMeta* meta = n.meta().val.tensor()) {
        entry(n.name(), *meta);
      } else if (token_nodes_.count(&n) != 0) {
        entry(n.name(), token_tensor_meta());
      }
    }
    for (const auto& [name, meta] : unused_outputs_) entry(name, meta);
  }

  // Whether the record of a node (NodeMeta::serialized, `text`) may say something value_kind or
  // the symbolic / custom-object tables read. A key is dumped as its plain quoted text, so the
  // absence of these substrings proves the absence of the keys; most records are skipped
  // without being parsed.
  static bool may_be_special(const std::string& text, bool placeholder) {
    // record_key::sym, custom_obj, class_fqn and graph, quoted.
    for (const char* key : {"\"sym\"", "\"custom_obj\"", "\"class_fqn\"", "\"graph\""}) {
      if (text.find(key) != std::string::npos) return true;
    }
    return placeholder && text.find("\"as_sym_") != std::string::npos;
  }

  // First pass: the records of the nodes whose value is not a plain tensor (kept in special_),
  // the nodes that get a `tensor_values` entry, and the symbolic and custom-object tables.
  void prepare(const Graph& g) {
    for (const Node& n : g.nodes()) {
      const std::string name(n.name());
      const bool placeholder = n.op() == OpCode::placeholder;
      const bool custom_input =
          placeholder && !n.meta().val.tensor() && sig_.custom_objs.count(name) != 0;
      if (custom_input || may_be_special(n.meta().serialized, placeholder)) {
        ojson node_json = node_info(n);
        JsonDisposer dispose_node_json(node_json);
        // A CUSTOM_OBJ input placeholder without metadata (made in C++) is written as torch's
        // serializer writes one (handle_placeholder): as_custom_obj plus a custom_obj_values
        // entry.
        if (custom_input && !node_json.contains(record_key::custom_obj) &&
            !node_json.contains(record_key::class_fqn)) {
          // A record with a new member: rebuilt at its size (growing it would copy members).
          MemberList grown;
          for (auto& m : node_json.get_ref<ojson::object_t&>())
            grown.add(m.first, std::move(m.second));
          grown.add(record_key::class_fqn, sig_.custom_objs.at(name));
          ojson rebuilt = grown.take();
          dismantle(node_json);  // its values were moved out; emptied before it is replaced
          node_json = std::move(rebuilt);
        }
        const ojson& info = special_.emplace(&n, std::move(node_json)).first->second;
        if (auto s = info.find(record_key::sym); s != info.end()) {
          sym_table((*s)[record_key::table].get<std::string>(), name)
              .add(name, (*s)[record_key::value]);
        }
        auto c = info.find(record_key::class_fqn);
        if (c == info.end()) c = info.find(record_key::custom_obj);
        if (c != info.end()) objs_.add(name, object_of("name", name, "class_fqn", *c));
      }
      if (n.meta().serialized.empty() && n.meta().val.is_symbolic_scalar()) {
        add_sym_value(name, n.meta().val);
      }
      if (!n.meta().val.tensor() && sig_.tokens.count(name) != 0 &&
          value_kind(&n) == ValueKind::tensor) {
        // A TOKEN input/output without metadata: torch writes a token as the tensor it is.
        token_nodes_.insert(&n);
      }
    }
  }

  // The record of `n` (NodeMeta::serialized parsed). The records of plain nodes are parsed on
  // demand and kept until forget().
  const ojson& info(const Node* n) {
    if (!special_.empty()) {
      if (auto it = special_.find(n); it != special_.end()) return it->second;
    }
    auto it = plain_.find(n);
    if (it == plain_.end()) {
      const std::string& s = n->meta().serialized;
      Tree record(s.empty() ? schema_record(*n) : parse_ordered(s, builder_));
      it = plain_.emplace(n, record.take()).first;
    }
    return it->second;
  }

  // --- nodes made in C++ (no record from a file): the record torch's serializer would have
  // written, derived from the operator's schema (torch/_export/serde/serialize.py
  // serialize_inputs / serialize_outputs). An empty object for other nodes.

  // The union member torch writes for `a` passed where `t` is expected, when the value alone
  // does not tell it (an empty list takes its element type; a complex Scalar is as_complex);
  // empty otherwise (the writer then infers it from the value, as torch does).
  static std::string schema_hint(const SchemaType& type, const Argument& a) {
    using K = SchemaType::Kind;
    const SchemaType& t = type.unwrap_optional();
    if (const ArgumentList* l = a.list()) {
      if ((t.kind == K::Scalar || t.kind == K::Complex) && l->size() == 2) return "as_complex";
      if (t.kind != K::List || !l->empty()) return {};
      switch (t.elements[0].unwrap_optional().kind) {
        case K::Bool: return "as_bools";
        case K::Int:
        case K::SymInt: return "as_ints";
        case K::Float:
        case K::SymFloat: return "as_floats";
        case K::String: return "as_strings";
        case K::Tensor: return "as_tensors";
        default: return {};
      }
    }
    return {};
  }

  // The output layout of a node made in C++ with schema `s` (what `out` holds for a node read
  // from a file): one entry per return, as torch's serialize_outputs writes them.
  static ojson schema_outputs(const Node& n, const FunctionSchema& s) {
    using K = SchemaType::Kind;
    const NodeValue& val = n.meta().val;
    auto fail = [&](const std::string& why) {
      throw serialization_error("graph_module.graph.nodes", "node '" + std::string(n.name()) +
                                                                "' (" + std::string(n.target()) +
                                                                ") cannot be written: " + why);
    };
    auto tensor_list = [&](const NodeValue* v, std::size_t idx) {
      if (v == nullptr || v->elements() == nullptr) {
        fail("return " + std::to_string(idx) + " is " + s.returns[idx].type.str() +
             ", so meta().val must give a list of tensors there");
      }
      Tree items(ojson::array());
      for (std::size_t k = 0; k < v->elements()->size(); ++k)
        items->push_back(object_of("name", ""));
      return object_of("as_tensors", items.take());
    };
    auto scalar = [&](K kind) -> ojson {
      if (kind == K::Int || kind == K::SymInt)
        return object_of("as_sym_int", object_of("as_name", ""));
      if (kind == K::Float || kind == K::SymFloat)
        return object_of("as_sym_float", object_of("as_name", ""));
      return object_of("as_sym_bool", object_of("as_name", ""));
    };
    Tree out(ojson::array());
    if (s.is_varret) fail("its schema returns '...', which torch's format cannot describe");
    if (s.returns.size() == 1) {
      const SchemaType& t = s.returns[0].type;
      if (t.kind == K::List && t.elements[0].kind == K::Tensor) {
        out->push_back(tensor_list(&val, 0));
      } else if (t.is_tensor_like()) {
        if (val.has_value() && !val.tensor()) {
          fail("its schema returns " + t.str() + " but meta().val is " + val.describe());
        }
        out->push_back(object_of("as_tensor", object_of("name", "")));
      } else if (t.kind == K::Int || t.kind == K::SymInt || t.kind == K::Float ||
                 t.kind == K::SymFloat || t.kind == K::Bool || t.kind == K::SymBool) {
        if (!val.is_symbolic_scalar()) {
          fail("its schema returns " + t.str() + " but meta().val is " + val.describe() +
               " (set a SymIntValue, SymFloatValue or SymBoolValue)");
        }
        out->push_back(scalar(t.kind));
      } else {
        fail("its schema returns " + t.str() + ", which torch's format cannot describe");
      }
      return out.take();
    }
    const NodeValue::List* items = val.elements();
    if (!s.returns.empty() && (items == nullptr || items->size() != s.returns.size())) {
      fail("its schema returns " + std::to_string(s.returns.size()) +
           " values, so meta().val must be a tuple of as many (it is " + val.describe() + ")");
    }
    for (std::size_t i = 0; i < s.returns.size(); ++i) {
      const SchemaType& t = s.returns[i].type;
      const NodeValue& v = (*items)[i];
      if (t.kind == K::List && t.elements[0].kind == K::Tensor) {
        out->push_back(tensor_list(&v, i));
      } else if (t.is_tensor_like()) {
        if (v.is_none()) {
          out->push_back(object_of("as_none", true));
        } else if (v.tensor() != nullptr) {
          out->push_back(object_of("as_tensor", object_of("name", "")));
        } else {
          fail("return " + std::to_string(i) + " is " + t.str() + " but its meta().val is " +
               v.describe());
        }
      } else {
        fail("return " + std::to_string(i) + " is " + t.str() +
             ", which epgraph writes only as a single return");
      }
    }
    return out.take();
  }

  // The record of a node made in C++: argument names, positional/keyword kinds and union hints
  // from its schema, and its output layout. An empty object when it has no registered schema.
  static ojson schema_record(const Node& n) {
    if (n.op() != OpCode::call_function) return ojson::object();
    const FunctionSchema* s = global_registry().find_target(n.target());
    if (s == nullptr) return ojson::object();
    std::vector<ArgumentBinding> bindings;
    const std::string why = epgraph::detail::bind_call<Node>(*s, n.args(), n.kwargs(), &bindings);
    if (!why.empty()) {
      throw serialization_error("graph_module.graph.nodes",
                                "node '" + std::string(n.name()) + "' (" + std::string(n.target()) +
                                    ") does not match its schema: " + why +
                                    "; schema: " + s->str());
    }
    Tree args(ojson::array());
    Tree kwargs(ojson::array());
    for (std::size_t i = 0; i < bindings.size(); ++i) {
      const SchemaArgument& sa = s->arguments[i];
      if (bindings[i].source == BindingSource::positional) {
        args->push_back(object_of(record_key::name, sa.name, record_key::as,
                                  schema_hint(sa.type, n.args()[bindings[i].index]),
                                  record_key::kind, kPositional));
      } else if (bindings[i].source == BindingSource::keyword) {
        kwargs->push_back(object_of(record_key::name, sa.name, record_key::as,
                                    schema_hint(sa.type, n.kwargs()[bindings[i].index].second),
                                    record_key::kind, kKeyword));
      }
    }
    for (std::size_t i = s->arguments.size(); i < n.args().size(); ++i) {  // after `...`
      args->push_back(
          object_of(record_key::name, "", record_key::as, "", record_key::kind, kPositional));
    }
    // Made in C++ (record_key::schema): unused outputs take their metadata from meta().val.
    Tree out(schema_outputs(n, *s));
    return object_of(record_key::args, args.take(), record_key::kwargs, kwargs.take(),
                     record_key::out, out.take(), record_key::hop, nullptr, record_key::has_name,
                     true, record_key::schema, true);
  }

  // The sym_*_values entry of a node made in C++ whose meta().val is a SymInt/SymFloat/SymBool.
  void add_sym_value(const std::string& name, const NodeValue& v) {
    auto expr = [](const SymExpr& e) {
      Tree x(object_of("expr_str", e.expr, "hint", nullptr));
      if (e.hint) (*x)["hint"] = object_of("as_int", *e.hint);
      return object_of("as_expr", x.take());
    };
    const char* table = nullptr;
    Tree value(nullptr);
    if (const SymIntValue* i = v.sym_int()) {
      table = "sym_int_values";
      *value = std::holds_alternative<std::int64_t>(i->value)
                   ? object_of("as_int", std::get<std::int64_t>(i->value))
                   : expr(std::get<SymExpr>(i->value));
    } else if (const SymFloatValue* f = v.sym_float()) {
      table = "sym_float_values";
      *value = std::holds_alternative<double>(f->value)
                   ? object_of("as_float", float_to_json(std::get<double>(f->value)))
                   : expr(std::get<SymExpr>(f->value));
    } else if (const SymBoolValue* b = v.sym_bool()) {
      table = "sym_bool_values";
      *value = std::holds_alternative<bool>(b->value)
                   ? object_of("as_bool", std::get<bool>(b->value))
                   : expr(std::get<SymExpr>(b->value));
    } else {
      return;
    }
    sym_table(table, name).add(name, value.take());
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

  // Whether `n` gets a `tensor_values` entry: its NodeMeta::val or a token's tensor. A node
  // written as a tuple (read through getitem nodes, see last_getitem_index) has none even with a
  // val: its values are the getitem nodes'.
  bool has_tensor_entry(const Node* n) {
    if (n->meta().val.tensor()) {
      return n->op() != OpCode::call_function || n->users().empty() ||
             !is_getitem(*n->users()[0]) || last_getitem_index(*n) < 0;
    }
    return !token_nodes_.empty() && token_nodes_.count(n) != 0;
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

  // Frees the records of plain nodes parsed so far (no reference to one may be held).
  void forget() {
    for (auto& [node, record] : plain_) dismantle(record);
    plain_.clear();
  }

  // The kind of a symbolic value kept in the graph table `table` ("sym_int_values", ...).
  static ValueKind sym_table_kind(const std::string& table) {
    if (table == "sym_int_values") return ValueKind::sym_int;
    if (table == "sym_float_values") return ValueKind::sym_float;
    return ValueKind::sym_bool;
  }

  // The nested graph of the program that the get_attr node `n` reads, when `n` has no record of
  // its own (a graph a pass built, such as outline_partition's); nullptr otherwise.
  const Graph* owned_nested_graph(const Node* n) const {
    if (nested_ == nullptr || n->op() != OpCode::get_attr || !n->meta().serialized.empty()) {
      return nullptr;
    }
    const auto it = nested_->find(n->target());
    return it == nested_->end() ? nullptr : it->second.get();
  }

  // The JSON object of the nested graph `g` (torch's `Graph`, as in an `as_graph` argument),
  // written by a writer of its own: its names and value tables are its own, as torch's
  // deserializer reads a nested graph in a namespace of its own (save_graph_module).
  ojson nested_graph_json(const Graph& g) const {
    std::string text;
    JsonText out(text);
    GraphWriter(SignatureValues{}, nested_).write_text(g, out, true, true);
    return parse_ordered(text);
  }

  // What a node's value is: its meta().val for a node made in C++, else its record's word.
  ValueKind value_kind(const Node* n) {
    if (owned_nested_graph(n) != nullptr) return ValueKind::graph;
    if (n->meta().serialized.empty()) {  // made in C++: its meta().val says
      const NodeValue& v = n->meta().val;
      if (v.sym_int()) return ValueKind::sym_int;
      if (v.sym_float()) return ValueKind::sym_float;
      if (v.sym_bool()) return ValueKind::sym_bool;
    }
    if (special_.empty()) return ValueKind::tensor;
    const auto it = special_.find(n);
    if (it == special_.end()) return ValueKind::tensor;
    const ojson& i = it->second;
    if (auto s = i.find(record_key::sym); s != i.end()) {
      return sym_table_kind((*s)[record_key::table].get_ref<const std::string&>());
    }
    if (i.contains(record_key::custom_obj) || i.contains(record_key::class_fqn)) {
      return ValueKind::custom_obj;
    }
    if (i.contains(record_key::graph)) return ValueKind::graph;
    if (auto a = i.find(record_key::as); a != i.end() && n->op() == OpCode::placeholder) {
      switch (arg_tag(a->get_ref<const std::string&>())) {
        case ArgTag::as_sym_int: return ValueKind::sym_int;
        case ArgTag::as_sym_float: return ValueKind::sym_float;
        case ArgTag::as_sym_bool: return ValueKind::sym_bool;
        default: break;
      }
    }
    return ValueKind::tensor;
  }

  ojson node_ref(const Node* n) {
    const ValueKind k = value_kind(n);
    const std::string name(n->name());
    switch (k) {
      case ValueKind::sym_int: return object_of("as_sym_int", object_of("as_name", name));
      case ValueKind::sym_float: return object_of("as_sym_float", object_of("as_name", name));
      case ValueKind::sym_bool: return object_of("as_sym_bool", object_of("as_name", name));
      case ValueKind::custom_obj: {
        const ojson& i = info(n);
        const ojson fqn = i.contains(record_key::custom_obj) ? i[record_key::custom_obj]
                                                             : i[record_key::class_fqn];
        return object_of("as_custom_obj", object_of("name", name, "class_fqn", fqn));
      }
      case ValueKind::graph:
        // Named after the get_attr's target, as torch's serialize_input names it: a graph
        // called again reads it through a node named `<target>_1`.
        if (const Graph* g = owned_nested_graph(n)) {
          return object_of("as_graph", object_of("name", std::string(n->target()), "graph",
                                                 nested_graph_json(*g)));
        }
        return object_of("as_graph", object_of("name", std::string(n->target()), "graph",
                                               info(n)[record_key::graph]));
      case ValueKind::tensor: break;
    }
    if (!has_tensor_entry(n)) {
      // torch.export.load (and epgraph's loader) need the metadata of every tensor value.
      throw serialization_error("graph_module.graph.tensor_values",
                                "node '" + name +
                                    "' produces a tensor but has no tensor metadata "
                                    "(NodeMeta::val); set it before saving");
    }
    return object_of("as_tensor", object_of("name", name));
  }

  ojson input(const Node& n) {
    const ojson& i = info(&n);
    if (auto v = i.find(record_key::value); v != i.end())
      return object_of(i[record_key::as].get<std::string>(), *v);
    return node_ref(&n);
  }

  ojson graph_output(const Argument& a) {
    if (Node* n = a.node()) {
      if (value_kind(n) == ValueKind::custom_obj) {
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

  static bool all_of(const ArgumentList& l, bool (*pred)(const Argument&)) {
    return std::all_of(l.begin(), l.end(), pred);
  }

  // Whether every element of `l` is a node whose value is `kind`, or (when allowed) None or a
  // plain value.
  bool nodes_of(const ArgumentList& l, ValueKind kind, bool allow_none, bool allow_plain) {
    for (const Argument& x : l) {
      if (Node* n = x.node()) {
        if (value_kind(n) != kind) return false;
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
        return a.is_none() || (a.node() && value_kind(a.node()) == ValueKind::tensor);
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
      if (Node* n = x.node()) {
        has_node = true;
        node_kind = value_kind(n);
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
    if (Node* n = x.node()) return object_of("as_name", n->name());
    if (x.is<double>()) return object_of(value_key, float_to_json(x.as<double>()));
    if (x.is<bool>()) return object_of(value_key, x.as<bool>());
    return object_of(value_key, x.as<std::int64_t>());
  }

  static ojson number_item(const Argument& x) {
    return float_to_json(x.is<double>() ? x.as<double>()
                                        : static_cast<double>(x.as<std::int64_t>()));
  }

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
    if (Node* n = a.node()) return node_ref(n);
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

  // One node input, typed like the input read from the file (`rec`, null for a new input).
  ojson input_arg(const Argument& a, const ojson* rec) {
    const ArgTag hint = input_record_tag(rec);
    if (hint == ArgTag::as_operator && a.is<std::string>()) {
      const std::string original = rec->value(record_key::op, std::string());
      return object_of("as_operator", operator_arg_to_json(a.as<std::string>(), original));
    }
    return arg(a, hint);
  }

  // The getitem user of `n` reading index `idx`, or nullptr.
  static const Node* getitem_at(const Node& n, std::int64_t idx) {
    for (const Node* u : n.users()) {
      if (is_getitem(*u) && u->args().size() == 2 && u->args()[0].node() == &n &&
          u->args()[1].is<std::int64_t>() && u->args()[1].as<std::int64_t>() == idx) {
        return u;
      }
    }
    return nullptr;
  }

  // The highest index a getitem user of `n` reads when `n` has no layout from a file and every
  // user is such a getitem with an index of at most max_tuple_index (one output is written per
  // index up to it); -1 otherwise. A `val` on `n` does not change this: in an exported graph
  // operator.getitem only reads tuple results (tensors are indexed by aten ops), and a tuple's
  // values are described by the getitem nodes' own `val`s.
  static constexpr std::int64_t max_tuple_index = 65535;
  std::int64_t last_getitem_index(const Node& n) {
    if (!info(&n).empty() || n.users().empty()) return -1;
    std::int64_t last = -1;
    for (const Node* u : n.users()) {
      if (!is_getitem(*u) || u->args().size() != 2 || u->args()[0].node() != &n ||
          !u->args()[1].is<std::int64_t>() || u->args()[1].as<std::int64_t>() < 0 ||
          u->args()[1].as<std::int64_t>() > max_tuple_index) {
        return -1;
      }
      last = std::max(last, u->args()[1].as<std::int64_t>());
    }
    return last;
  }

  // The outputs of a node made in C++ (no layout from a file): the node's own value, or, read
  // through getitem nodes (a tuple result, e.g. with_effects), one output per index up to the
  // last one read, named after its getitem node.
  ojson fresh_outputs(const Node& n) {
    const std::int64_t last = last_getitem_index(n);
    if (last < 0) return array_of(node_ref(&n));
    const std::string name(n.name());
    Tree out(ojson::array());
    for (std::int64_t i = 0; i <= last; ++i) {
      const Node* gi = getitem_at(n, i);
      if (gi) written_getitems_.insert(gi);
      out->push_back(
          gi ? node_ref(gi)
             : object_of("as_tensor", object_of("name", name + "_unused_" + std::to_string(i))));
    }
    if (last == 0 && !is_hop_target(n.target())) {
      return array_of(object_of("as_tensors", array_of(std::move((*out)[0]["as_tensor"]))));
    }
    return out.take();
  }

  // The node's `outputs`: its layout from the file (`info`'s out) with the names of the getitem
  // nodes reading each output, or fresh_outputs().
  ojson outputs(const Node& n, const ojson& info) {
    if (!info.contains(record_key::out)) return fresh_outputs(n);
    const std::string name(n.name());
    const ojson& layout = info[record_key::out];
    Tree out(ojson::array());
    auto item_name = [&](const Node& parent, std::int64_t idx, const std::string& fallback) {
      const Node* gi = getitem_at(parent, idx);
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
      if (const Node* gi = getitem_at(n, 0)) written_getitems_.insert(gi);  // reads the None
      out->push_back(layout[0]);
    } else if (layout.size() == 1) {
      out->push_back(object_of(m0, list_items(&n, layout[0][m0], name + "_unused")));
    } else {
      for (std::size_t i = 0; i < layout.size(); ++i) {
        const std::string m = layout[i].begin().key();
        const auto idx = static_cast<std::int64_t>(i);
        if (m == "as_none") {
          // The loader makes a getitem node for a None output too, as torch's does.
          if (const Node* gi = getitem_at(n, idx)) written_getitems_.insert(gi);
          out->push_back(layout[i]);
        } else if (m == "as_tensor" || m == "as_sym_int" || m == "as_sym_float") {
          out->push_back(
              renamed(layout[i], item_name(n, idx, name + "_unused_" + std::to_string(i))));
        } else {
          const Node* gi = getitem_at(n, idx);  // a list, read through its own getitem users
          if (gi) written_getitems_.insert(gi);
          out->push_back(
              object_of(m, list_items(gi, layout[i][m], name + "_unused_" + std::to_string(i))));
        }
      }
    }
    if (info.contains(record_key::schema)) note_unused_outputs(n, *out);
    return out.take();
  }

  // input(n) as text. A record without "value" (a substring of its text when present) is not a
  // constant input: the placeholder is written as node_ref, without parsing the record.
  void input_text(const Node& n, JsonText& out) {
    if (n.meta().serialized.find("\"value\"") == std::string::npos &&
        (special_.empty() || special_.count(&n) == 0)) {
      node_ref_text(&n, out);
      return;
    }
    write_tree(out, input(n));
  }

  // A node reference as an argument (node_ref(n)): a tensor with metadata, the common case, is
  // written here; anything else as node_ref's tree (which throws node_ref's errors).
  void node_ref_text(const Node* n, JsonText& out) {
    if ((special_.empty() || special_.count(n) == 0) && has_tensor_entry(n)) {
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

  // A serialized node (torch's serialize_node): target, inputs, outputs and metadata written
  // here, with the small parts (outputs, most arguments) built as trees; the optional fields as
  // the file had them (a node made in C++ gets the current form).
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

  void node_text(const Node& n, JsonText& out) {
    const ojson& info = this->info(&n);
    out.raw('{');
    out.key(node_key::target);
    out.string(target_to_json(n.target()));
    out.raw(',');
    out.key(node_key::inputs);
    node_inputs_text(n, info, out);
    out.raw(',');
    out.key(node_key::outputs);
    node_outputs_text(n, info, out);
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
      if (const std::string why = refused_argument_value(a); !why.empty()) {
        throw serialization_error("graph_module.graph.nodes", "node '" + std::string(n.name()) +
                                                                  "' (" + std::string(n.target()) +
                                                                  ") cannot be written: " + which +
                                                                  ": " + why);
      }
      try {
        input_arg_text(a, rec, out);
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

  // The node's `outputs` (outputs(), with the two common layouts written here).
  void node_outputs_text(const Node& n, const ojson& info, JsonText& out) {
    const ojson* layout = info.contains(record_key::out) ? &info[record_key::out] : nullptr;
    if (!layout && last_getitem_index(n) < 0) {
      out.raw('[');  // outputs(): the node's own value
      node_ref_text(&n, out);
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
      const bool tuple = is_hop_target(n.target()) && last_getitem_index(n) >= 0;
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

  SignatureValues sig_;
  const NestedGraphs* nested_ = nullptr;              // the program's nested graphs, if any
  std::unordered_map<const Node*, ojson> special_;    // records of the non-tensor values
  std::unordered_map<const Node*, ojson> plain_;      // records parsed on demand
  OrderedDomBuilder builder_;                         // scratch space of the parses
  std::unordered_set<const Node*> written_getitems_;  // getitem nodes written as outputs
  std::vector<std::pair<std::string, TensorMeta>> unused_outputs_;  // see note_unused_outputs
  std::unordered_set<const Node*> token_nodes_;  // token values written without NodeMeta::val
  MemberList sym_ints_;                          // sym_int_values
  MemberList sym_floats_;                        // sym_float_values
  MemberList sym_bools_;                         // sym_bool_values
  MemberList objs_;                              // custom_obj_values
};

inline ojson write_argument_spec(const ArgumentSpec& a) {
  return std::visit(
      [](const auto& x) -> ojson {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, TensorArgument>)
          return object_of("as_tensor", object_of("name", x.name));
        if constexpr (std::is_same_v<X, SymIntArgument>)
          return object_of("as_sym_int", object_of("as_name", x.name));
        if constexpr (std::is_same_v<X, SymFloatArgument>)
          return object_of("as_sym_float", object_of("as_name", x.name));
        if constexpr (std::is_same_v<X, SymBoolArgument>)
          return object_of("as_sym_bool", object_of("as_name", x.name));
        if constexpr (std::is_same_v<X, CustomObjArgument>) {
          return object_of("as_custom_obj", object_of("name", x.name, "class_fqn", x.class_fqn));
        }
        if constexpr (std::is_same_v<X, TokenArgument>)
          return object_of("as_tensor", object_of("name", x.name));
        if constexpr (std::is_same_v<X, ConstantArgument>) return object_of("as_none", true);
      },
      a);
}

inline ojson constant_to_json(const ConstantValue& v) {
  return std::visit(
      [](const auto& x) -> ojson {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, None>) return object_of("as_none", true);
        if constexpr (std::is_same_v<X, std::int64_t>) return object_of("as_int", x);
        if constexpr (std::is_same_v<X, double>) return object_of("as_float", float_to_json(x));
        if constexpr (std::is_same_v<X, bool>) return object_of("as_bool", x);
        if constexpr (std::is_same_v<X, std::string>) return object_of("as_string", x);
      },
      v);
}

inline ojson write_input_spec(const InputSpec& s) {
  auto tensor = [&] { return object_of("name", s.name()); };
  switch (s.kind()) {
    case InputKind::USER_INPUT:
      if (const auto* c = std::get_if<ConstantArgument>(&s.arg())) {
        return object_of("constant_input",
                         object_of("name", c->name, "value", constant_to_json(c->value)));
      }
      return object_of("user_input", object_of("arg", write_argument_spec(s.arg())));
    case InputKind::PARAMETER:
      return object_of("parameter", object_of("arg", tensor(), "parameter_name", *s.target()));
    case InputKind::BUFFER:
      return object_of("buffer", object_of("arg", tensor(), "buffer_name", *s.target(),
                                           "persistent", s.persistent().value_or(true)));
    case InputKind::CONSTANT_TENSOR:
      return object_of("tensor_constant",
                       object_of("arg", tensor(), "tensor_constant_name", *s.target()));
    case InputKind::CUSTOM_OBJ: {
      const auto& c = std::get<CustomObjArgument>(s.arg());
      return object_of("custom_obj",
                       object_of("arg", object_of("name", c.name, "class_fqn", c.class_fqn),
                                 "custom_obj_name", *s.target()));
    }
    case InputKind::TOKEN: return object_of("token", object_of("arg", tensor()));
  }
  return {};
}

inline ojson write_output_spec(const OutputSpec& s) {
  auto tensor = [&] { return object_of("name", s.name()); };
  switch (s.kind()) {
    case OutputKind::USER_OUTPUT: {
      if (const auto* c = std::get_if<ConstantArgument>(&s.arg())) {
        ojson v = constant_to_json(c->value);
        return object_of("user_output", object_of("arg", std::move(v)));
      }
      return object_of("user_output", object_of("arg", write_argument_spec(s.arg())));
    }
    case OutputKind::LOSS_OUTPUT: return object_of("loss_output", object_of("arg", tensor()));
    case OutputKind::BUFFER_MUTATION:
      return object_of("buffer_mutation", object_of("arg", tensor(), "buffer_name", *s.target()));
    case OutputKind::PARAMETER_MUTATION:
      return object_of("parameter_mutation",
                       object_of("arg", tensor(), "parameter_name", *s.target()));
    case OutputKind::GRADIENT_TO_PARAMETER:
      return object_of("gradient_to_parameter",
                       object_of("arg", tensor(), "parameter_name", *s.target()));
    case OutputKind::GRADIENT_TO_USER_INPUT:
      return object_of("gradient_to_user_input",
                       object_of("arg", tensor(), "user_input_name", *s.target()));
    case OutputKind::USER_INPUT_MUTATION:
      return object_of("user_input_mutation",
                       object_of("arg", tensor(), "user_input_name", *s.target()));
    case OutputKind::TOKEN: return object_of("token", object_of("arg", tensor()));
  }
  return {};
}

}  // namespace detail

namespace detail {

// The opaque fields of a program's metadata (ProgramMetadata::opaque: JSON text kept from the
// file it was loaded from) and the list of optional fields that file omitted (`json.absent`).
class OpaqueFields {
 public:
  // Throws nlohmann::json::parse_error when `json.absent` is malformed.
  explicit OpaqueFields(const ProgramMetadata& md) : md_(md) {
    for (const auto& [k, v] : md_.opaque) {
      if (k == "json.absent") {
        ojson list = parse_ordered(v);
        JsonDisposer dispose_list(list);
        absent_ = list.get<std::vector<std::string>>();
      }
    }
  }

  // Whether the file omitted the field at `key` (a dotted path).
  [[nodiscard]] bool absent(const std::string& key) const {
    return std::find(absent_.begin(), absent_.end(), key) != absent_.end();
  }

  // The kept value at `key`, null when there is none. Throws serialization_error "malformed
  // opaque JSON: ..." at `key` when its text is not JSON.
  [[nodiscard]] ojson get(const std::string& key) const {
    for (const auto& [k, v] : md_.opaque) {
      if (k != key) continue;
      try {
        return parse_ordered(v);
      } catch (const nlohmann::json::exception& e) {  // parse_error or out_of_range
        throw serialization_error(key, std::string("malformed opaque JSON: ") + e.what());
      }
    }
    return nullptr;
  }

  // get(key), or `fallback` when there is no kept value.
  [[nodiscard]] ojson get_or(const std::string& key, ojson fallback) const {
    ojson v = get(key);
    if (v.is_null()) return fallback;
    return v;
  }

  // Every kept key.
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& all() const {
    return md_.opaque;
  }

 private:
  const ProgramMetadata& md_;
  std::vector<std::string> absent_;
};

// What the signature of `ep` says about values a program built in C++ may give no metadata.
template <class Tensor>
SignatureValues signature_values(const ExportedProgram<Tensor>& ep) {
  SignatureValues values;
  for (const auto& s : ep.graph_signature().input_specs) {
    if (s.kind() == InputKind::TOKEN) values.tokens.insert(s.name());
    if (s.kind() != InputKind::CUSTOM_OBJ) continue;
    std::string fqn = std::get<CustomObjArgument>(s.arg()).class_fqn;
    if (fqn.empty() && s.target()) {  // the constant's own class, as torch's _type()
      if (const auto* c = ep.constants().find(*s.target())) {
        if (const auto* o = std::get_if<ScriptObject>(c)) fqn = o->class_fqn;
      }
    }
    values.custom_objs.emplace(s.name(), std::move(fqn));
  }
  for (const auto& s : ep.graph_signature().output_specs) {
    if (s.kind() == OutputKind::TOKEN) values.tokens.insert(s.name());
  }
  return values;
}

// Appends `,"signature":{"input_specs":[...],"output_specs":[...]}`, one spec at a time.
inline void write_signature(const ExportGraphSignature& sig, JsonText& out) {
  out.raw(std::string_view(",\"signature\":{\"input_specs\":["));
  for (std::size_t i = 0; i < sig.input_specs.size(); ++i) {
    if (i != 0) out.raw(',');
    write_tree(out, write_input_spec(sig.input_specs[i]));
  }
  out.raw(std::string_view("],\"output_specs\":["));
  for (std::size_t i = 0; i < sig.output_specs.size(); ++i) {
    if (i != 0) out.raw(',');
    write_tree(out, write_output_spec(sig.output_specs[i]));
  }
  out.raw(std::string_view("]}"));
}

// The members of graph_module after `graph` and `signature`: module_call_graph, metadata,
// treespec_namedtuple_fields (unless the file omitted them), then the unknown fields kept.
inline ojson graph_module_rest(const OpaqueFields& opaque) {
  Tree tree(object_with_room(16 + opaque.all().size()));  // known fields + unknown ones
  ojson& gm = *tree;
  gm["module_call_graph"] = opaque.get_or("graph_module.module_call_graph", ojson::array());
  for (const char* key : {"metadata", "treespec_namedtuple_fields"}) {
    const std::string full = std::string("graph_module.") + key;
    if (!opaque.absent(full)) gm[key] = opaque.get_or(full, ojson::object());
  }
  for (const auto& kv : opaque.all()) {  // unknown graph_module fields
    const std::string& k = kv.first;
    if (k.rfind("graph_module.", 0) != 0 || k.find('.', 13) != std::string::npos) continue;
    const std::string key = k.substr(13);
    if (key != "graph" && key != "signature" && !gm.contains(key)) gm[key] = opaque.get(k);
  }
  return tree.take();
}

// The members of the document after `graph_module`: opset_version, range_constraints,
// schema_version, verifiers, torch_version, guards_code (the last three unless the file omitted
// them), then the unknown top-level fields kept (legacy `dialect`, ...).
inline ojson document_rest(const ProgramMetadata& md, const OpaqueFields& opaque) {
  ojson doc = object_with_room(16 + md.opaque.size());
  JsonDisposer dispose_doc(doc);
  doc["opset_version"] = ojson::object();
  for (const auto& [k, v] : md.opset_version) doc["opset_version"][k] = v;  // copies numbers
  // A repeated symbol keeps its first place and takes the last bounds (rc[symbol] = ...).
  MemberList constraints;
  for (const auto& r : md.range_constraints) {
    Tree rc(object_of("min_val", nullptr, "max_val", nullptr));
    if (r.min_val) (*rc)["min_val"] = *r.min_val;
    if (r.max_val) (*rc)["max_val"] = *r.max_val;
    constraints.set(r.symbol, rc.take());
  }
  doc["range_constraints"] = constraints.take();
  // A file of a newer minor version keeps it (what it has beyond 8.20 was kept or refused on
  // load); anything else is written as 8.20.
  Tree version(opaque.get(std::string(kKeptSchemaVersion)));
  if (version->is_null()) *version = object_of("major", schema_major, "minor", schema_minor);
  doc["schema_version"] = version.take();
  if (!opaque.absent("verifiers")) doc["verifiers"] = md.verifiers;
  if (!opaque.absent("torch_version")) {
    doc["torch_version"] = md.torch_version.empty() ? std::string("<=2.4") : md.torch_version;
  }
  if (!opaque.absent("guards_code"))
    doc["guards_code"] = opaque.get_or("guards_code", ojson::array());
  for (const auto& kv : md.opaque) {
    const std::string& k = kv.first;
    if (k.find('.') == std::string::npos && k != "graph_module" && !doc.contains(k)) {
      doc[k] = opaque.get(k);
    }
  }
  dispose_doc.release();
  return doc;
}

// Appends the members of `obj` and the closing brace of an object whose first members are
// already in `out` (`}` alone when `obj` is empty).
inline void append_rest_of(const ojson& obj, JsonText& out) {
  if (obj.empty()) {
    out.raw('}');
    return;
  }
  std::string& text = out.buffer();
  const std::size_t brace = text.size();
  out.value(obj);
  text[brace] = ',';
}

// save_exported_program_to_string: the graph (nearly all of the text) and the signature are
// written straight to the text; the rest of graph_module and of the document are small
// ordered_json trees appended after them. Errors are thrown in the order of the document.
template <class Tensor>
std::string save_program(const ExportedProgram<Tensor>& ep) {
  // Two nested graphs under one target: torch's loader would register the last one read and
  // call it from both nodes (epgraph's loader refuses the file). Refused before writing.
  const std::vector<NestedGraphClash> clashes = nested_graph_clashes(ep.graph());
  if (!clashes.empty()) {
    throw serialization_error(
        "graph_module.graph.nodes",
        clashes.front().message() + ": torch's loader would call the last one read from both");
  }
  const OpaqueFields opaque(ep.metadata());
  std::string text;
  text.reserve(1024 * (ep.graph().size() + 1));
  JsonText out(text);
  // The document's first member is graph_module, whose first member is the graph.
  out.raw(std::string_view("{\"graph_module\":{\"graph\":"));
  GraphWriter(signature_values(ep), &ep.nested_graphs())
      .write_text(ep.graph(), out, !opaque.absent("graph_module.graph.custom_obj_values"),
                  !opaque.absent("graph_module.graph.sym_float_values"));
  write_signature(ep.graph_signature(), out);
  ojson gm = graph_module_rest(opaque);
  JsonDisposer dispose_gm(gm);
  ojson doc = document_rest(ep.metadata(), opaque);
  JsonDisposer dispose_doc(doc);
  append_rest_of(gm, out);
  append_rest_of(doc, out);
  return text;
}

}  // namespace detail

template <class Tensor>
std::string save_exported_program_to_string(const ExportedProgram<Tensor>& ep) {
  return detail::save_program(ep);
}

namespace detail {

// Writes `text` to `file` (a regular file or a new one) all or nothing: to a new temporary file
// in the same directory (".<name>.epgraph-tmp-<n>"), given the permissions of the file it
// replaces, then renamed over `file` (a symlink is followed: the file it points to is replaced,
// the link stays; a device or pipe such as /dev/stdout is written in place). On any
// failure the temporary file is removed and `file` is as it was: a full disk, a file size limit
// (RLIMIT_FSIZE) or `file` being the program's own source cannot leave half a record behind
// (torch's writer and a plain truncating write both can). Throws serialization_error "cannot
// write 'f.json'" (empty path), with the reason when the system gives one. O(text size).
inline void write_file_atomically(const std::filesystem::path& file, std::string_view text) {
  namespace fs = std::filesystem;
  const std::string shown = "cannot write '" + file.string() + "'";
  std::error_code ec;
  // A device, a pipe or a socket (e.g. /dev/stdout) cannot be replaced: written in place.
  const fs::file_status st = fs::status(file, ec);
  if (fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st)) {
    std::ofstream out(file, std::ios::binary);
    if (!out) throw serialization_error("", shown);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out.flush()) throw serialization_error("", shown + ": the write failed");
    return;
  }
  fs::path target = file;
  if (fs::is_symlink(file, ec)) {
    const fs::path resolved = fs::weakly_canonical(file, ec);
    if (!ec) target = resolved;
  }
  if (fs::is_directory(target, ec)) throw serialization_error("", shown + ": a directory");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) {
    throw serialization_error("", shown + ": directory '" + dir.string() + "' does not exist");
  }
  static std::atomic<unsigned> counter{0};
  const auto stamp =
      static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
  fs::path tmp;
  for (int attempt = 0;; ++attempt) {
    tmp = dir / ("." + target.filename().string() + ".epgraph-tmp-" + std::to_string(stamp) + "-" +
                 std::to_string(counter++));
    if (!fs::exists(tmp, ec)) break;
    if (attempt > 100) throw serialization_error("", shown + ": no temporary file name is free");
  }
  struct Remove {
    const fs::path* path;
    bool armed = true;
    ~Remove() {
      std::error_code ignored;
      if (armed) fs::remove(*path, ignored);
    }
  } remove_tmp{&tmp};
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw serialization_error("", shown);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out)
      throw serialization_error("", shown + ": the write failed (disk full or file too large?)");
  }
  const fs::file_status old = fs::status(target, ec);
  if (!ec && fs::exists(old)) fs::permissions(tmp, old.permissions(), ec);
  fs::rename(tmp, target, ec);
  if (ec) throw serialization_error("", shown + ": " + ec.message());
  remove_tmp.armed = false;
}

}  // namespace detail

template <class Tensor>
void save_exported_program(const ExportedProgram<Tensor>& ep,
                           const std::filesystem::path& json_file) {
  detail::write_file_atomically(json_file, save_exported_program_to_string(ep));
}

}  // namespace epgraph::json
