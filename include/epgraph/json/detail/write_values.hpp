// What the writer knows about a graph's values before writing its nodes: each node's record
// (NodeMeta::serialized parsed), each value's kind, and the symbolic and custom-object tables.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the writer).

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>

#include "../../ir/graph.hpp"
#include "../../ir/tensor.hpp"
#include "../../ir/value.hpp"
#include "../../program/exported_program.hpp"
#include "../error.hpp"
#include "checked_access.hpp"
#include "dispose.hpp"
#include "dom.hpp"
#include "node_record.hpp"
#include "schema_record.hpp"
#include "text.hpp"
#include "tree.hpp"

namespace epgraph::json::detail {

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

// The records and kinds of a graph's values, and its sym_*_values and custom_obj_values tables
// (GraphWriter's first pass, prepare()).
class WrittenValues {
 public:
  // Writes a nested graph of the program as torch's `Graph` object (set by GraphWriter, which
  // this header cannot include).
  using NestedWriter = ojson (*)(const Graph&, const ::epgraph::NestedGraphs*);

  // `nested`: the program's nested graphs (ExportedProgram::nested_graphs), or nullptr; a
  // get_attr node without a record whose target is one of them is written as that graph.
  explicit WrittenValues(SignatureValues sig, const ::epgraph::NestedGraphs* nested = nullptr,
                         NestedWriter write_nested = nullptr)
      : sig_(std::move(sig)), nested_(nested), write_nested_(write_nested) {}
  WrittenValues(const WrittenValues&) = delete;
  WrittenValues& operator=(const WrittenValues&) = delete;
  // The records are dismantled (see detail/tree.hpp): destroying them allocates nothing.
  ~WrittenValues() {
    for (auto& [node, record] : special_) dismantle(record);
    for (auto& [node, record] : plain_) dismantle(record);
  }

  // Whether prepare() kept the record of `n` (a value that is not a plain tensor).
  [[nodiscard]] bool is_special(const Node* n) const {
    return !special_.empty() && special_.count(n) != 0;
  }
  // Whether `n` is a token value written without NodeMeta::val.
  [[nodiscard]] bool is_token(const Node* n) const {
    return !token_nodes_.empty() && token_nodes_.count(n) != 0;
  }
  // The graph's tables, filled by prepare().
  [[nodiscard]] const MemberList& sym_ints() const noexcept { return sym_ints_; }
  [[nodiscard]] const MemberList& sym_floats() const noexcept { return sym_floats_; }
  [[nodiscard]] const MemberList& sym_bools() const noexcept { return sym_bools_; }
  [[nodiscard]] const MemberList& custom_objs() const noexcept { return objs_; }

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
          if (raw_sym_matches((*s)[record_key::value], n.meta().val)) {
            sym_table((*s)[record_key::table].get<std::string>(), name)
                .add(name, (*s)[record_key::value]);
          } else {
            // A pass changed the value (specialize substituted a symbol): the loaded entry is
            // stale, the value is written as for a node made in C++.
            add_sym_value(name, n.meta().val);
          }
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

  // Frees the records of plain nodes parsed so far (no reference to one may be held).
  void forget() {
    for (auto& [node, record] : plain_) dismantle(record);
    plain_.clear();
  }

  // The nested graph of the program that the get_attr node `n` reads, when `n` has no record of
  // its own (a graph a pass built, such as outline_partition's); nullptr otherwise.
  [[nodiscard]] const Graph* owned_nested_graph(const Node* n) const {
    if (nested_ == nullptr || n->op() != OpCode::get_attr || !n->meta().serialized.empty()) {
      return nullptr;
    }
    const auto it = nested_->find(n->target());
    return it == nested_->end() ? nullptr : it->second.get();
  }

  // The JSON object of the nested graph `g` (torch's `Graph`, as in an `as_graph` argument),
  // written by a writer of its own: its names and value tables are its own, as torch's
  // deserializer reads a nested graph in a namespace of its own (save_graph_module).
  [[nodiscard]] ojson nested_graph_json(const Graph& g) const { return write_nested_(g, nested_); }

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

  // Whether the loaded sym_*_values entry `raw` ({"as_expr": {"expr_str": ...}}, {"as_int": n},
  // ...) still holds `v`, the node's meta().val (a hint is not compared: the entry keeps it).
  static bool raw_sym_matches(const ojson& raw, const NodeValue& v) {
    if (!raw.is_object() || raw.size() != 1) return true;  // not understood: kept as loaded
    const auto first = raw.begin();
    const std::string& member = first.key();
    const ojson& value = first.value();
    auto same = [&](const auto& held) {
      using T = std::decay_t<decltype(held)>;
      if (const auto* e = std::get_if<SymExpr>(&held)) {
        const auto text = value.is_object() ? value.find("expr_str") : value.end();
        return member == "as_expr" && text != value.end() && text->is_string() &&
               text->template get<std::string>() == e->expr;
      }
      if constexpr (std::is_same_v<T, std::variant<std::int64_t, SymExpr>>) {
        return member == "as_int" && value.is_number_integer() &&
               value.template get<std::int64_t>() == std::get<std::int64_t>(held);
      } else if constexpr (std::is_same_v<T, std::variant<double, SymExpr>>) {
        return member == "as_float" && value.is_number() &&
               value.template get<double>() == std::get<double>(held);
      } else {
        return member == "as_bool" && value.is_boolean() &&
               value.template get<bool>() == std::get<bool>(held);
      }
    };
    if (const SymIntValue* i = v.sym_int()) return same(i->value);
    if (const SymFloatValue* f = v.sym_float()) return same(f->value);
    if (const SymBoolValue* b = v.sym_bool()) return same(b->value);
    return true;
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

  // The kind of a symbolic value kept in the graph table `table` ("sym_int_values", ...).
  static ValueKind sym_table_kind(const std::string& table) {
    if (table == "sym_int_values") return ValueKind::sym_int;
    if (table == "sym_float_values") return ValueKind::sym_float;
    return ValueKind::sym_bool;
  }

  SignatureValues sig_;
  const ::epgraph::NestedGraphs* nested_ = nullptr;  // the program's nested graphs, if any
  NestedWriter write_nested_ = nullptr;              // writes one of them
  std::unordered_map<const Node*, ojson> special_;   // records of the non-tensor values
  std::unordered_map<const Node*, ojson> plain_;     // records parsed on demand
  OrderedDomBuilder builder_;                        // scratch space of the parses
  std::unordered_set<const Node*> token_nodes_;      // token values written without NodeMeta::val
  MemberList sym_ints_;                              // sym_int_values
  MemberList sym_floats_;                            // sym_float_values
  MemberList sym_bools_;                             // sym_bool_values
  MemberList objs_;                                  // custom_obj_values
};

}  // namespace epgraph::json::detail
