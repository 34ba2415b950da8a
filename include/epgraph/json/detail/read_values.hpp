// The values of a serialized graph as the reader meets them: the graph's tables (tensor_values,
// the symbolic values, custom objects) and the node producing each value name.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the reader).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../../ir/detail/name_index.hpp"
#include "../../ir/graph.hpp"
#include "../../ir/tensor.hpp"
#include "../../ir/value.hpp"
#include "../error.hpp"
#include "../format.hpp"
#include "../tensor_meta.hpp"
#include "checked_access.hpp"
#include "dispose.hpp"
#include "dom.hpp"
#include "node_record.hpp"
#include "text.hpp"
#include "tree.hpp"
#if EPGRAPH_JSON_HAS_SIMDJSON
#include "simdjson_feed.hpp"
#endif

namespace epgraph::json::detail {

// Reads one serialized graph into an epgraph Graph, the way
// GraphModuleDeserializer.deserialize_graph builds an FX graph.
// Values by name, in insertion order, with a flat index (NameIndex: 4 bytes per slot, no
// allocation per entry): a graph's tensor_values and its values by serialized name (the
// std::unordered_map<std::string, ...> these were cost more: bench/README.md, json_load).
template <class T>
class NamedTable {
  using Index = epgraph::detail::NameIndex;
  struct NameOf {
    const NamedTable* table;
    std::string_view operator()(std::uint32_t id) const { return table->entries_[id].first; }
  };

 public:
  // Adds `name` -> `value` unless `name` is present (then returns false and adds nothing).
  // Throws serialization_error beyond NameIndex::id_limit entries (a text of gigabytes), and
  // std::bad_alloc (then nothing is added). O(1) amortized.
  bool add(std::string name, T value) {
    if (entries_.size() >= Index::id_limit) {
      throw serialization_error("graph_module.graph",
                                "more than " + std::to_string(Index::id_limit) + " named values");
    }
    if (contains(name)) return false;
    if (entries_.size() == entries_.capacity()) {
      entries_.reserve(entries_.empty() ? 64 : entries_.size() * 2);
    }
    index_.reserve_more(1, NameOf{this}, [this](const auto& visit) {
      for (std::size_t i = 0; i < entries_.size(); ++i) {
        visit(static_cast<std::uint32_t>(i), std::string_view(entries_[i].first));
      }
      return entries_.size();
    });
    // No allocation from here on: the name's and the value's storage is moved in.
    entries_.emplace_back(std::move(name), std::move(value));
    index_.insert(static_cast<std::uint32_t>(entries_.size() - 1), entries_.back().first);
    return true;
  }
  // The number of entries. O(1).
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  // Whether `name` is present. O(1) on average.
  [[nodiscard]] bool contains(std::string_view name) const {
    return index_.find(name, NameOf{this}) != Index::no_id;
  }
  // The value under `name`, or nullptr. O(1) on average.
  [[nodiscard]] T* find(std::string_view name) {
    const std::uint32_t id = index_.find(name, NameOf{this});
    return id == Index::no_id ? nullptr : &entries_[id].second;
  }
  [[nodiscard]] const T* find(std::string_view name) const {
    const std::uint32_t id = index_.find(name, NameOf{this});
    return id == Index::no_id ? nullptr : &entries_[id].second;
  }

 private:
  std::vector<std::pair<std::string, T>> entries_;
  Index index_;
};

using TensorTable = NamedTable<TensorMeta>;
using ValueTable = NamedTable<Node*>;

// The top-level graph's tensor_values, converted while the text is parsed (each entry's JSON
// is freed as soon as it is read, instead of all at the end; see bench/README.md, json_load).
// The first bad entry's error is kept and thrown where the tree's reading would have thrown it
// (GraphReader::read_tables); a duplicate name makes the loader parse again without a sink, so
// that ordered_json's rule for duplicates (the last value, at the first position) holds.
// With simdjson, entries are read straight from simdjson's document by the same reader, without
// building their tree; only those needs_tree sends back go through the tree.
#if EPGRAPH_JSON_HAS_SIMDJSON
using TensorValuesDirect = SimdjsonMemberSink;
#else
struct TensorValuesDirect {};
#endif
class TensorValuesSink final : public MemberSink, public TensorValuesDirect {
 public:
  // One entry `key`: `value` of tensor_values, converted (or its error kept). Throws
  // std::bad_alloc and serialization_error beyond NamedTable's limit. O(size of `value`).
  void member(std::string& key, ojson& value) override {
    const Path tp = "graph_module.graph.tensor_values";
    if (error_) {  // only duplicate names still matter
      if (!seen_after_error_.insert(key).second || tensors_.contains(key)) duplicates_ = true;
      return;
    }
    if (tensors_.contains(key)) {
      duplicates_ = true;
      return;
    }
    try {
      TensorMeta m = tensor_meta_from_json_at(value, at_key(tp, key), &checked_);
      (void)tensors_.add(std::move(key), std::move(m));
    } catch (const serialization_error& e) {
      error_ = e;
      seen_after_error_.insert(key);
    }
  }

#if EPGRAPH_JSON_HAS_SIMDJSON
  // member() for an entry read straight from simdjson's document by the same reader
  // (tensor_meta_from_json_at on a SimdValue: the same value or error): returns false, having
  // changed nothing, when an earlier entry was bad (member() then counts duplicate names) or
  // when only the tree gives the entry its meaning (needs_tree: a repeated key, a text with a
  // surrogate); the entry then comes to member() as a tree. Throws std::bad_alloc and
  // serialization_error beyond NamedTable's limit. O(size of `value`).
  bool member(std::string_view key, const simdjson::dom::element& value) override {
    if (error_) return false;
    if (tensors_.contains(key)) {
      duplicates_ = true;
      return true;
    }
    const Path tp = "graph_module.graph.tensor_values";
    try {
      TensorMeta m = tensor_meta_from_json_at(SimdValue(value), at_key(tp, key), &checked_);
      (void)tensors_.add(std::string(key), std::move(m));
    } catch (const needs_tree&) {
      return false;
    } catch (const serialization_error& e) {
      error_ = e;
      seen_after_error_.insert(std::string(key));
    }
    return true;
  }
#endif

  [[nodiscard]] bool duplicates() const noexcept { return duplicates_; }
  // The entries read; throws the first bad entry's error.
  TensorTable take() {
    if (error_) throw *error_;
    return std::move(tensors_);
  }

 private:
  TensorTable tensors_;
  CheckedExprs checked_;  // the expression texts these entries have, each parsed once
  std::optional<serialization_error> error_;
  std::unordered_set<std::string> seen_after_error_;
  bool duplicates_ = false;
};

// The values of one graph being read (GraphReader): each value name's node, and the graph's
// tables, from which a value's node takes its NodeMeta::val (torch's sync_fx_node).
class GraphValues {
 public:
  struct SymValue {
    std::string table;
    ojson raw;      // the entry as read, kept in the node's record (a save writes it back)
    NodeValue val;  // what it is, for the node's meta().val
  };

  // What a value's record says beyond NodeMeta::val: its symbolic value or custom object class.
  struct ValueExtra {
    const SymValue* sym = nullptr;
    const std::string* custom_obj = nullptr;
  };

  GraphValues() = default;
  GraphValues(const GraphValues&) = delete;
  GraphValues& operator=(const GraphValues&) = delete;
  // The symbolic values' JSON is dismantled: nlohmann's destructor allocates for a non-empty
  // container (dispose.hpp).
  ~GraphValues() {
    for (auto& s : syms_) dismantle(s.second.raw);
  }

  // Reads the graph `jg`'s tables (tensor_values, sym_*_values, custom_obj_values) at `path`;
  // `streamed`: the top-level graph's tensor_values as a TensorValuesSink read them, or nullptr.
  // Throws serialization_error for a bad entry (the first bad streamed entry's error first).
  void read_tables(const ojson& jg, const Path& path, TensorValuesSink* streamed) {
    const Path tp = at_key(path, "tensor_values");
    const auto& tv = expect_object(field(jg, path, "tensor_values"), tp);
    if (streamed != nullptr) tensors_ = streamed->take();
    for (auto it = tv.begin(); it != tv.end(); ++it) {
      // The keys of a parsed object are unique.
      (void)tensors_.add(it.key(),
                         tensor_meta_from_json_at(it.value(), at_key(tp, it.key()), &checked_));
    }
    for (const char* table : {"sym_int_values", "sym_bool_values", "sym_float_values"}) {
      const ojson* t = opt_field(jg, path, table);
      if (t == nullptr) continue;
      const Path p = at_key(path, table);
      expect_object(*t, p);
      for (auto it = t->begin(); it != t->end(); ++it) {
        const Path ep = at_key(p, it.key());
        const auto m_v = union_member(it.value(), ep);
        const auto& m = m_v.first;
        const auto& v = m_v.second;
        if (m != "as_expr" && m != "as_int" && m != "as_bool" && m != "as_float") {
          unknown_member(ep, m);
        }
        NodeValue val = sym_node_value(table, m, *v, ep);
        ojson raw = ojson::object();
        JsonDisposer raw_guard(raw);
        raw[m] = *v;
        syms_[it.key()] = SymValue{table, std::move(raw), std::move(val)};
      }
    }
    if (const ojson* c = opt_field(jg, path, "custom_obj_values")) {
      const Path p = at_key(path, "custom_obj_values");
      expect_object(*c, p);
      for (auto it = c->begin(); it != c->end(); ++it) {
        const Path ep = at_key(p, it.key());
        objs_[it.key()] = get_string(field(it.value(), ep, "class_fqn"), at_key(ep, "class_fqn"));
      }
    }
  }

  // The meta().val of a node whose value is the entry {m: v} of the symbolic table `table`, as
  // torch.export.load gives it (deserialize_sym_int / _sym_float / _sym_bool, serialize.py):
  // a concrete int/float/bool, or a SymExpr with its integer hint (a float or bool hint is not
  // kept in the SymExpr; the record keeps it for saving). `ep` is the entry's path. Throws
  // serialization_error naming the entry for a member the table's kind does not have (torch:
  // "SymInt has invalid field type as_bool"), a value of the wrong JSON type, or an expression
  // text sym::parse cannot read (naming its expr_str; torch's sympify refuses it too).
  NodeValue sym_node_value(std::string_view table, std::string_view m, const ojson& v,
                           const Path& ep) {
    const Path mp = at_key(ep, m);
    auto expr = [&]() { return sym_expr_from_json_at(v, mp, false, &checked_); };
    const char* kind = "SymBool";
    if (table == "sym_int_values") {
      kind = "SymInt";
      if (m == "as_int") return SymIntValue{get_int(v, mp)};
      if (m == "as_expr") return SymIntValue{expr()};
    } else if (table == "sym_float_values") {
      kind = "SymFloat";
      if (m == "as_float") return SymFloatValue{get_float(v, mp)};
      if (m == "as_expr") return SymFloatValue{expr()};
    } else {
      if (m == "as_bool") return SymBoolValue{get_bool(v, mp)};
      if (m == "as_expr") return SymBoolValue{expr()};
    }
    const std::string member(m);
    throw serialization_error(ep, std::string("a ") + kind + " has no member '" + member +
                                      "' (torch: " + kind + " has invalid field type " + member +
                                      ")");
  }

  // The node producing the value `name`; throws serialization_error at `path` when none does.
  Node* lookup(std::string_view name, const Path& path) const {
    Node* const* it = by_name_.find(name);
    if (it == nullptr) {
      throw serialization_error(
          path, "value '" + std::string(name) + "' is not produced by any graph input or node");
    }
    return *it;
  }

  // The node producing the value `name`, or nullptr. O(1) on average.
  [[nodiscard]] Node* const* find(std::string_view name) const { return by_name_.find(name); }
  // Whether a node produces the value `name`. O(1) on average.
  [[nodiscard]] bool contains(std::string_view name) const { return by_name_.contains(name); }
  // Records `node` as producing `name` without metadata (see register_value); false when the
  // name is taken. O(1) amortized.
  bool add(std::string name, Node* node) { return by_name_.add(std::move(name), node); }
  // Whether tensor_values has an entry `name` not yet taken by a value.
  [[nodiscard]] bool has_tensor_meta(std::string_view name) const {
    return tensors_.contains(name);
  }
  // The class of custom_obj_values' entry `name`, or nullptr.
  [[nodiscard]] const std::string* custom_obj_class(const std::string& name) const {
    const auto o = objs_.find(name);
    return o == objs_.end() ? nullptr : &o->second;
  }
  // Serialized value name -> node.
  [[nodiscard]] const ValueTable& table() const noexcept { return by_name_; }

  // Registers `node` as producing the value `name` and attaches its metadata (torch's
  // sync_fx_node).
  void sync(const std::string& name, Node* node, const Path& path, ojson& info) {
    const ValueExtra e = register_value(name, node, path);
    if (e.sym != nullptr) {
      // Built member by member: an initializer list's temporaries are non-empty arrays that
      // nlohmann's destructor would allocate for (dispose.hpp).
      ojson sym = object_with_room(2);
      JsonDisposer sym_guard(sym);
      sym[record_key::table] = e.sym->table;
      sym[record_key::value] = e.sym->raw;
      info[record_key::sym] = std::move(sym);
    } else if (e.custom_obj != nullptr) {
      info[record_key::custom_obj] = *e.custom_obj;
    }
  }

  // sync() without the record: registers the value, moves its tensor metadata into the node
  // and returns what the record must add.
  ValueExtra register_value(const std::string& name, Node* node, const Path& path) {
    if (by_name_.contains(name)) {
      throw serialization_error(path, "duplicate value name '" + name + "'");
    }
    (void)by_name_.add(name, node);
    ValueExtra e;
    if (TensorMeta* t = tensors_.find(name)) {
      // Moved: a value name is synced once (a second use is a duplicate, refused above).
      node->mutable_meta().val = std::move(*t);
    } else if (auto s = syms_.find(name); s != syms_.end()) {
      // Copied: the record keeps the raw entry, read by a later save.
      node->mutable_meta().val = s->second.val;
      e.sym = &s->second;
    } else if (auto o = objs_.find(name); o != objs_.end()) {
      e.custom_obj = &o->second;
    }
    return e;
  }

  // Appends sync()'s members for `e` to a record being written as text: `,"sym":{...}` or
  // `,"custom_obj":"..."` (the bytes ordered_json::dump() gives for them).
  static void append_extra(const ValueExtra& e, JsonText& out) {
    if (e.sym != nullptr) {
      out.raw(',');
      out.key(record_key::sym);
      out.raw('{');
      out.key(record_key::table);
      out.string(e.sym->table);
      out.raw(',');
      out.key(record_key::value);
      out.value(e.sym->raw);
      out.raw('}');
    } else if (e.custom_obj != nullptr) {
      out.raw(',');
      out.key(record_key::custom_obj);
      out.string(*e.custom_obj);
    }
  }

 private:
  ValueTable by_name_;
  TensorTable tensors_;
  CheckedExprs checked_;  // the expression texts of this graph's tables, each parsed once
  std::unordered_map<std::string, SymValue> syms_;
  std::unordered_map<std::string, std::string> objs_;
};

}  // namespace epgraph::json::detail
