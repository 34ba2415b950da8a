// Reading torch.export's serialized JSON (schema 8.x, 7.x, 2.x) into an ExportedProgram.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../detail/strings.hpp"
#include "../ir/detail/name_index.hpp"
#include "../ir/graph.hpp"
#include "../ir/names.hpp"
#include "../ir/tensor.hpp"
#include "../program/exported_program.hpp"
#include "../program/graph_signature.hpp"
#include "../version.hpp"
#include "detail/checked_access.hpp"
#include "detail/dispose.hpp"
#include "detail/dom.hpp"
#include "detail/node_record.hpp"
#include "error.hpp"
#include "load.hpp"
// 1 when epgraph::json links simdjson (defined on the target's interface by CMakeLists.txt).
#ifndef EPGRAPH_JSON_HAS_SIMDJSON
#define EPGRAPH_JSON_HAS_SIMDJSON 0
#endif
#if EPGRAPH_JSON_HAS_SIMDJSON
#include "detail/simdjson_feed.hpp"
#endif
#include "detail/text.hpp"
#include "detail/tree.hpp"
#include "tensor_meta.hpp"

namespace epgraph::json {

/// Newest schema major version this reader and writer implement (torch 2.13 writes 8.20).
inline constexpr std::int64_t schema_major = schema_version_major;
/// Schema minor version written by save.
inline constexpr std::int64_t schema_minor = schema_version_minor;

/// Deepest nesting of JSON arrays and objects the loader accepts. Real exported programs nest
/// about 10 levels (each nested control-flow graph adds about 7); the limit keeps the recursive
/// parts of loading and saving (nested graphs, arguments, opaque fields) far from the stack's end.
inline constexpr std::size_t max_json_depth = 512;

namespace detail {

// Throws serialization_error "JSON nesting deeper than 512 levels (at byte N)" when arrays and
// objects nest deeper than max_json_depth. Brackets inside strings do not count; malformed text
// is left to the parser. O(size of the text), no allocation.
inline void check_nesting(std::string_view text) {
  std::size_t depth = 0;
  StringScanner strings;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (strings.inside(ch)) continue;
    if (ch == '[' || ch == '{') {
      if (++depth > max_json_depth) {
        throw serialization_error("", "JSON nesting deeper than " + std::to_string(max_json_depth) +
                                          " levels (at byte " + std::to_string(i) + ")");
      }
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
}

// Throws serialization_error "malformed JSON: NUL byte at byte N" for the first raw NUL in `text`.
// JSON text never holds one (control characters in strings must be escaped), but nlohmann's lexer
// reads it as the end of input: "{...}\0garbage" would load as "{...}" with the garbage dropped
// without a word. Every JSON entry point (program text, archive configs) calls this first, so
// both parsers refuse the same texts with the same message. O(size of the text) (one memchr), no
// allocation unless it throws.
inline void check_no_nul(std::string_view text) {
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    throw serialization_error("", "malformed JSON: NUL byte at byte " + std::to_string(nul));
  }
}

inline bool is_hop_target(std::string_view t) {
  return t.find("torch.ops.higher_order.") != std::string_view::npos;
}

// Reads one serialized graph into an epgraph Graph, the way
// GraphModuleDeserializer.deserialize_graph builds an FX graph.
// Values by name, in insertion order, with a flat index (NameIndex: 4 bytes per slot, no
// allocation per entry): a graph's tensor_values and its values by serialized name. The
// std::unordered_map<std::string, ...> these were cost a fifth of a large file's load time.
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
// is freed as soon as it is read, instead of all at the end: a third of a large file's tree).
// The first bad entry's error is kept and thrown where the tree's reading would have thrown it
// (GraphReader::read_tables); a duplicate name makes the loader parse again without a sink, so
// that ordered_json's rule for duplicates (the last value, at the first position) holds.
// With simdjson, entries in the usual form are read straight from simdjson's document
// (simdjson_tensor_meta) without building their tree; the others go through the tree as before.
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
      TensorMeta m = tensor_meta_from_json_at(value, at_key(tp, key));
      (void)tensors_.add(std::move(key), std::move(m));
    } catch (const serialization_error& e) {
      error_ = e;
      seen_after_error_.insert(key);
    }
  }

#if EPGRAPH_JSON_HAS_SIMDJSON
  // member() for an entry read straight from simdjson's document: takes it when no earlier entry
  // was bad and simdjson_tensor_meta reads it (the same TensorMeta member() would give, no error
  // possible), else returns false (the entry then comes to member() as a tree). Throws
  // std::bad_alloc and serialization_error beyond NamedTable's limit. O(size of `value`).
  bool member(std::string_view key, const simdjson::dom::element& value) override {
    if (error_) return false;
    if (tensors_.contains(key)) {
      duplicates_ = true;
      return true;
    }
    TensorMeta m;
    if (!simdjson_tensor_meta(value, m)) return false;
    (void)tensors_.add(std::string(key), std::move(m));
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
  std::optional<serialization_error> error_;
  std::unordered_set<std::string> seen_after_error_;
  bool duplicates_ = false;
};

class GraphReader {
 public:
  // Nodes are built as the file has them: torch's deserializer does not check calls against
  // their schemas either (verify reports those that do not bind), so the graph's schema checks
  // are off while the reader lives.
  GraphReader(Graph& graph, bool legacy)
      : g_(graph), schema_checks_(graph.schema_checks()), legacy_(legacy) {
    g_.set_schema_checks(false);
  }
  GraphReader(const GraphReader&) = delete;
  GraphReader& operator=(const GraphReader&) = delete;
  // The symbolic values' JSON is dismantled: nlohmann's destructor allocates for a non-empty
  // container (dispose.hpp).
  ~GraphReader() {
    g_.set_schema_checks(schema_checks_);
    for (auto& s : syms_) dismantle(s.second.raw);
#if EPGRAPH_JSON_HAS_SIMDJSON
    for (auto& t : kept_) dismantle(t);
#endif
  }

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
  // and the graph's own allocations reuse its memory, where freeing the whole tree at the end
  // took about a fifth of a large file's load time. On an exception `jg` is left partly freed
  // (the caller discards it). Same errors and complexity as read().
  void read_consuming(ojson& jg, const Path& path, const std::vector<std::string>& input_spec_names,
                      TensorValuesSink* streamed = nullptr) {
    read_graph(jg, path, input_spec_names, streamed);
  }
#if EPGRAPH_JSON_HAS_SIMDJSON
  // Makes the next read_consuming take the graph's nodes from `nodes` (simdjson's document,
  // parsed by `feeder`: ParsedDocument::nodes) instead of the tree's `nodes`, which must be
  // empty; both must outlive that call. Each node in a form read_node_direct reads is read from
  // the document; any other is built as the tree it would have been and read by read_node, so
  // the graph and the errors are the same as from the tree.
  void take_nodes_from(SimdjsonFeeder& feeder, const simdjson::dom::array& nodes) noexcept {
    feeder_ = &feeder;
    direct_nodes_ = &nodes;
  }
  // How many nodes read_node_direct read (tests tell the two routes apart with it).
  [[nodiscard]] std::size_t nodes_read_direct() const noexcept { return direct_read_; }
#endif

  // Serialized value name -> node.
  const ValueTable& values() const { return by_name_; }

 private:
  // read() (J = const ojson) and read_consuming() (J = ojson, its nodes freed as they are read).
  template <class J>
  void read_graph(J& jg, const Path& path, const std::vector<std::string>& input_spec_names,
                  TensorValuesSink* streamed) {
    expect_object(jg, path);
    streamed_ = streamed;
    read_tables(jg, path);
    const Path ip = at_key(path, "inputs");
    const auto& inputs = expect_array(field(jg, path, "inputs"), ip);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      read_input(inputs[i], at_index(ip, i), i < input_spec_names.size() ? input_spec_names[i] : "",
                 i);
    }
    const Path np = at_key(path, "nodes");
    const auto& nodes = expect_array(field(jg, path, "nodes"), np);
    if constexpr (std::is_const_v<J>) {
      for (std::size_t i = 0; i < nodes.size(); ++i) read_node(nodes[i], at_index(np, i));
    } else {
#if EPGRAPH_JSON_HAS_SIMDJSON
      if (direct_nodes_ != nullptr) read_direct_nodes(np);
#endif
      // The same array as `nodes` (found above: the key is present), reached without const.
      auto& entries = jg.find("nodes")->template get_ref<ojson::array_t&>();
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        const std::size_t graphs_before = graphs_.size();
        read_node(nodes[i], at_index(np, i));
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
  // constant_input_name, sym or custom_obj; read_node writes its record as text). Reserved up
  // front: an ordered_json object that grows copies its members and destroys the old, non-empty
  // ones (dispose.hpp).
  static constexpr std::size_t kInfoMembers = 8;

  struct SymValue {
    std::string table;
    ojson raw;      // the entry as read, kept in the node's record (a save writes it back)
    NodeValue val;  // what it is, for the node's meta().val
  };

  // The meta().val of a node whose value is the entry {m: v} of the symbolic table `table`, as
  // torch.export.load gives it (deserialize_sym_int / _sym_float / _sym_bool, serialize.py):
  // a concrete int/float/bool, or a SymExpr with its integer hint (a float or bool hint is not
  // kept in the SymExpr; the record keeps it for saving). `ep` is the entry's path. Throws
  // serialization_error naming the entry for a member the table's kind does not have (torch:
  // "SymInt has invalid field type as_bool") or a value of the wrong JSON type.
  static NodeValue sym_node_value(std::string_view table, const std::string& m, const ojson& v,
                                  const Path& ep) {
    const Path mp = at_key(ep, m);
    auto expr = [&]() {
      SymExpr e;
      e.expr = get_string(field(v, mp, "expr_str"), at_key(mp, "expr_str"));
      if (const ojson* h = opt_field(v, mp, "hint"); h != nullptr && !h->is_null()) {
        const Path hp = at_key(mp, "hint");
        if (h->is_number_integer()) {
          e.hint = get_int(*h, hp);  // pre-8.x: a bare integer
        } else if (const auto hm_hv = union_member(*h, hp); hm_hv.first == "as_int") {
          e.hint = get_int(*hm_hv.second, at_key(hp, hm_hv.first));
        }
      }
      return e;
    };
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
    throw serialization_error(ep, std::string("a ") + kind + " has no member '" + m +
                                      "' (torch: " + kind + " has invalid field type " + m + ")");
  }

  void read_tables(const ojson& jg, const Path& path) {
    const Path tp = at_key(path, "tensor_values");
    const auto& tv = expect_object(field(jg, path, "tensor_values"), tp);
    if (streamed_ != nullptr) tensors_ = streamed_->take();
    for (auto it = tv.begin(); it != tv.end(); ++it) {
      // The keys of a parsed object are unique.
      (void)tensors_.add(it.key(), tensor_meta_from_json_at(it.value(), at_key(tp, it.key())));
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

  Node* lookup(const std::string& name, const Path& path) const {
    Node* const* it = by_name_.find(name);
    if (it == nullptr) {
      throw serialization_error(path,
                                "value '" + name + "' is not produced by any graph input or node");
    }
    return *it;
  }

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

  // What a value's record says beyond NodeMeta::val: its symbolic value or custom object class.
  struct ValueExtra {
    const SymValue* sym = nullptr;
    const std::string* custom_obj = nullptr;
  };

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

  static void store(Node* node, const ojson& info) {
    if (!info.empty()) node->mutable_meta().serialized = info.dump();
  }

  Node* create(OpCode op, const std::string& target, ArgumentList args, Kwargs kwargs,
               const std::string& name, const Path& path) {
    if (!name.empty() && g_.find_node(name) != nullptr && by_name_.contains(name)) {
      throw serialization_error(path, "duplicate value name '" + name + "'");
    }
    return g_.create_node(op, target, std::move(args), std::move(kwargs), name);
  }

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
        if (auto o = objs_.find(name); o != objs_.end() && o->second != fqn) {
          throw serialization_error(at_key(p, "class_fqn"),
                                    "class_fqn '" + fqn + "' disagrees with custom_obj_values['" +
                                        name + "'].class_fqn '" + o->second + "'");
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
    if (by_name_.contains(name)) {
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
      if (m == "as_tensor" && !tensors_.contains(name)) {
        throw serialization_error(path, "graph input '" + name + "' has no entry in tensor_values");
      }
      sync(name, node, path, info);
    } else {
      (void)by_name_.add(name, node);
    }
    store(node, info);
  }

  // Argument union -> epgraph Argument (torch's deserialize_input). `member_out`, when given,
  // receives the union tag. `graph_arg` nodes (as_graph) are created on the way.
  Argument read_arg(const ojson& j, const Path& path, std::string* member_out) {
    const auto m_vp = union_member(j, path);
    const std::string& m = m_vp.first;
    const ojson& v = *m_vp.second;
    const Path p = at_key(path, m);
    if (member_out) *member_out = m;
    switch (const ArgTag tag = arg_tag(m)) {
      case ArgTag::as_none: return Argument(none);
      case ArgTag::as_tensor: return tensor_ref(v, p);
      case ArgTag::as_int: return Argument(get_int(v, p));
      case ArgTag::as_float: return Argument(get_float(v, p));
      case ArgTag::as_string:
      case ArgTag::as_operator: return Argument(get_string(v, p));
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
        return Argument(lookup(get_string(field(v, p, "name"), at_key(p, "name")), p));
      case ArgTag::as_complex:
        return Argument{get_float(field(v, p, "real"), at_key(p, "real")),
                        get_float(field(v, p, "imag"), at_key(p, "imag"))};
      case ArgTag::as_string_to_argument: return read_string_to_argument(v, p);
      case ArgTag::as_graph: return read_graph_arg(v, p);
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

  // A tensor argument ({"name": ...}): the node producing it.
  Argument tensor_ref(const ojson& t, const Path& tp) const {
    return Argument(lookup(get_string(field(t, tp, "name"), at_key(tp, "name")), tp));
  }

  // A SymInt/SymFloat/SymBool argument (`tag` is its as_sym_* tag): the node of a named symbol,
  // or the constant of the matching type.
  Argument sym_ref(const ojson& s, const Path& sp, ArgTag tag) const {
    if (s.is_null()) throw serialization_error(sp, "expected a symbolic value, got null");
    const auto sm_sv = union_member(s, sp);
    const std::string& sm = sm_sv.first;
    const ojson& sv = *sm_sv.second;
    const Path svp = at_key(sp, sm);
    if (sm == "as_name") return Argument(lookup(get_string(sv, svp), svp));
    const ArgTag constant = tag == ArgTag::as_sym_int     ? ArgTag::as_int
                            : tag == ArgTag::as_sym_float ? ArgTag::as_float
                                                          : ArgTag::as_bool;
    if (arg_tag(sm) != constant) unknown_member(sp, sm);
    if (constant == ArgTag::as_int) return Argument(get_int(sv, svp));
    if (constant == ArgTag::as_float) return Argument(get_float(sv, svp));
    return Argument(get_bool(sv, svp));
  }

  // An OptionalTensor union: None or a tensor.
  Argument optional_tensor(const ojson& x, const Path& xp) const {
    const auto om_ov = union_member(x, xp);
    const ArgTag tag = arg_tag(om_ov.first);
    if (tag == ArgTag::as_none) return Argument(none);
    if (tag == ArgTag::as_tensor) return tensor_ref(*om_ov.second, at_key(xp, om_ov.first));
    unknown_member(xp, om_ov.first);
  }

  // as_scalar_type / as_layout / as_memory_format (torch's enum values) and as_device.
  static Argument read_enum_arg(ArgTag tag, const ojson& v, const Path& p) {
    if (tag == ArgTag::as_device) {
      Device d;
      d.type = get_string(field(v, p, "type"), at_key(p, "type"));
      if (const ojson* idx = opt_field(v, p, "index"); idx && !idx->is_null()) {
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
  Argument read_list_arg(ArgTag tag, const ojson& v, const Path& p) {
    expect_array(v, p);
    ArgumentList out;
    for (std::size_t i = 0; i < v.size(); ++i)
      out.push_back(read_list_item(tag, v[i], at_index(p, i)));
    return Argument(std::move(out));
  }

  // One element of a list argument of tag `tag`.
  Argument read_list_item(ArgTag tag, const ojson& x, const Path& xp) {
    switch (tag) {
      case ArgTag::as_tensors: return tensor_ref(x, xp);
      case ArgTag::as_ints: return Argument(get_int(x, xp));
      case ArgTag::as_floats: return Argument(get_float(x, xp));
      case ArgTag::as_strings: return Argument(get_string(x, xp));
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
    for (std::size_t i = 0; i < x.size(); ++i) {
      const Path ip = at_index(xp, i);
      if (tag == ArgTag::as_int_lists) {
        inner.push_back(get_int(x[i], ip));
      } else if (tag == ArgTag::as_float_lists) {
        inner.push_back(get_float(x[i], ip));
      } else {
        inner.push_back(tensor_ref(x[i], ip));
      }
    }
    return Argument(std::move(inner));
  }

  // as_string_to_argument: a dict of str -> argument, kept as a list of [key, value] pairs.
  Argument read_string_to_argument(const ojson& v, const Path& p) {
    expect_object(v, p);
    ArgumentList out;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out.push_back(Argument{it.key(), read_arg(it.value(), at_key(p, it.key()), nullptr)});
    }
    return Argument(std::move(out));
  }

  // A nested graph argument (`as_graph`: the branch of a cond, the body of a map, the subgraph of
  // an invoke_subgraph) becomes a get_attr node whose target is the graph's name, its graph
  // checked and kept verbatim in the node's record. Like torch's deserialize_input, every use
  // makes its own get_attr node: a graph called again (several invoke_subgraph calls of one
  // nested_compile_region) gets a node named by FX's rule (`repeated_subgraph0_1`) reading the
  // same target. Throws serialization_error for a bad nested graph and for a second graph of
  // the same name that differs from the first (torch would register the last one and run it
  // from every call).
  Argument read_graph_arg(const ojson& v, const Path& p) {
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
      Graph scratch;  // validates the nested graph; it is kept verbatim
      GraphReader(scratch, legacy_).read(sub, gp, {});
      n = create(OpCode::get_attr, name, {}, {}, name, p);
      (void)graphs_.add(name, &sub);
    }
    ojson info = object_with_room(1);
    JsonDisposer info_guard(info);
    info[record_key::graph] = sub;
    store(n, info);
    (void)by_name_.add(std::string(n->name()), n);
    return Argument(n);
  }

  // One serialized output of a node: its union tag and value.
  using NodeOutput = std::pair<std::string, const ojson*>;

  // What read_node takes from a serialized node besides its inputs.
  struct NodeFields {
    std::optional<bool> hop_single;  // is_hop_single_tensor_return, when given and not null
    std::string given_name;          // `name`, when given and not null
    std::vector<NodeOutput> outs;    // `outputs`
    std::vector<std::pair<std::string, std::string>> meta;  // `metadata`
  };

  // A serialized node (torch's deserialize_node) -> a call_function node, plus one getitem node
  // per output of a multi-output node. The node's record (NodeMeta::serialized) is written as
  // text: the bytes dump() gives for {"args": [...], "kwargs": [...], "hop"?, "has_name"?,
  // "extra"?, "out": [...], "sym"/"custom_obj"?} without building that tree (a tenth of a large
  // file's load time).
  void read_node(const ojson& jn, const Path& path) {
    expect_object(jn, path);
    const std::string target = target_from_json(
        get_string(field(jn, path, node_key::target), at_key(path, node_key::target)));
    const Path ip = at_key(path, node_key::inputs);
    const auto& inputs = expect_array(field(jn, path, node_key::inputs), ip);
    const Path op = at_key(path, node_key::outputs);
    const auto& outputs = expect_array(field(jn, path, node_key::outputs), op);
    const bool hop = is_hop_target(target);
    ArgumentList args;
    Kwargs kwargs;
    read_node_inputs(inputs, ip, hop, args, kwargs);
    NodeFields f = read_node_fields(jn, path, outputs, op);
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
    if (!name.empty() && by_name_.contains(name)) {
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
      make_getitem(node, 0,
                   out_name.empty() ? output_value_name(f.outs[0], at_index(op, 0)) : out_name,
                   at_index(op, 0), true);
      (void)by_name_.add(std::string(node->name()), node);
    } else if (single_value) {
      append_extra(register_value(out_name, node, at_index(op, 0)), record_text_);
    } else if (f.outs.size() == 1 && f.outs[0].first == "as_none") {
      g_.rename_node(node, Graph::default_name(OpCode::call_function, target) + "_unused");
    } else {
      read_multiple_outputs(node, f.outs, op);
      (void)by_name_.add(std::string(node->name()), node);
    }
    record_text_.raw('}');
    node->mutable_meta().serialized = record_buf_;
  }

#if EPGRAPH_JSON_HAS_SIMDJSON
  // The nodes of direct_nodes_ at `np`, in order (see take_nodes_from). Throws what read_node
  // throws. O(size of the nodes).
  void read_direct_nodes(const Path& np) {
    const simdjson::dom::array& nodes = *direct_nodes_;
    direct_nodes_ = nullptr;
    OrderedDomBuilder builder;
    std::size_t i = 0;
    for (const simdjson::dom::element e : nodes) {
      const Path p = at_index(np, i++);
      if (read_node_direct(e, p)) {
        ++direct_read_;
        continue;
      }
      ojson tree = feeder_->tree(e, builder);
      JsonDisposer guard(tree);
      const std::size_t graphs_before = graphs_.size();
      read_node(tree, p);
      // graphs_ points into the tree when it held the first nested graph of a name.
      if (graphs_.size() != graphs_before) kept_.push_back(std::move(tree));
    }
  }

  // A tensor argument {"name": <string>} naming a value read before: its node; nullptr for any
  // other form or name (tensor_ref's errors). No allocation. O(length of the name).
  Node* direct_tensor(const simdjson::dom::element& e) const {
    using simdjson::dom::element_type;
    if (e.type() != element_type::OBJECT) return nullptr;
    const simdjson::dom::object obj = e.get_object().value_unsafe();
    auto it = obj.begin();
    if (it == obj.end()) return nullptr;
    const simdjson::dom::key_value_pair kv = *it;
    if (kv.key != "name" || kv.value.type() != element_type::STRING || ++it != obj.end()) {
      return nullptr;
    }
    Node* const* n = by_name_.find(kv.value.get_string().value_unsafe());
    return n == nullptr ? nullptr : *n;
  }

  // The one member of a union object whose value is not null, when the object has exactly one
  // member; false otherwise. No allocation. O(1).
  struct DirectMember {
    std::string_view key;
    simdjson::dom::element value;
  };
  static bool direct_union(const simdjson::dom::element& e, DirectMember& out) {
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
  bool direct_scalar(ArgTag tag, const simdjson::dom::element& v, Argument& out) const {
    using simdjson::dom::element_type;
    switch (tag) {
      case ArgTag::as_tensor: {
        Node* n = direct_tensor(v);
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
        Node* const* n = by_name_.find(kv.value.get_string().value_unsafe());
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
  bool direct_arg(const simdjson::dom::element& e, std::string_view& tag_out, Argument& out) const {
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
          if (!direct_scalar(item, x, a)) return false;
          list.push_back(std::move(a));
        }
        out = Argument(std::move(list));
        return true;
      }
      default: return direct_scalar(tag, v, out);
    }
  }

  // read_node_direct's outputs: none, or one new tensor value {"as_tensor": {"name": ...}}
  // (`single` and its `name`); false for any other form. No allocation. O(1).
  static bool direct_outputs(const simdjson::dom::element& outputs_e, bool& single,
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
  static bool direct_metadata(const simdjson::dom::element& meta_e,
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

  // read_node_direct's inputs into `args` / `kwargs`, their records into args_buf_ /
  // kwargs_buf_ (as read_node_inputs writes them); false for any input that is not {"name",
  // "arg", "kind"?} with an argument direct_arg reads, or a positional one after a keyword one.
  // Throws std::bad_alloc. O(size of the inputs).
  bool direct_inputs(const simdjson::dom::element& inputs_e, ArgumentList& args, Kwargs& kwargs) {
    using simdjson::dom::element_type;
    args_buf_.clear();
    kwargs_buf_.clear();
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
      if (!direct_arg(arg_e, tag, a)) return false;
      const bool has_kind = (in_seen & 4u) != 0;
      const bool positional = !has_kind || kind != kKeyword;
      if (positional && !kwargs.empty()) return false;
      JsonText& rec = positional ? args_text_ : kwargs_text_;
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
  void write_direct_record(const simdjson::dom::element* hop, bool has_name,
                           const std::string_view* out_name) {
    start_record();
    if (hop != nullptr) {
      record_text_.raw(',');
      record_text_.key(record_key::hop);
      if (hop->type() == simdjson::dom::element_type::NULL_VALUE) {
        record_text_.raw(std::string_view("null"));
      } else {
        record_text_.boolean(hop->get_bool().value_unsafe());
      }
    }
    if (has_name) {
      record_text_.raw(',');
      record_text_.key(record_key::has_name);
      record_text_.boolean(true);
    }
    record_text_.raw(',');
    record_text_.key(record_key::out);
    record_text_.raw('[');
    if (out_name != nullptr) {
      record_text_.raw('{');
      record_text_.key("as_tensor");
      record_text_.raw('{');
      record_text_.key(record_key::name);
      record_text_.string(*out_name);
      record_text_.raw(std::string_view("}}"));
    }
    record_text_.raw(']');
  }

  // read_node for a node of simdjson's document in the forms torch writes for most nodes: the
  // fields target, inputs, outputs, metadata and, optionally, name and a null or boolean
  // is_hop_single_tensor_return (each once, no other), not a higher-order operator; inputs {"name",
  // "arg", "kind"?} with the arguments direct_arg reads and values read before; no output or one
  // tensor output {"as_tensor": {"name": <new value>}}; metadata null or string -> string without a
  // repeated key. The node, its name, metadata and record are the ones read_node gives from the
  // tree. Returns false, having changed nothing, for any other node (also every node read_node
  // refuses); the caller then reads its tree. Throws std::bad_alloc and what Graph::call_function
  // throws (as read_node would). O(size of the node).
  bool read_node_direct(const simdjson::dom::element& e, const Path& path) {
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
    if ((single_value || !name.empty()) && by_name_.contains(name)) return false;
    std::vector<std::pair<std::string, std::string>> meta;
    if (!direct_metadata(meta_e, meta)) return false;
    ArgumentList args;
    Kwargs kwargs;
    if (!direct_inputs(inputs_e, args, kwargs)) return false;
    write_direct_record((seen & k_hop) != 0 ? &hop_e : nullptr, (seen & k_name) != 0,
                        single_value ? &out_name : nullptr);
    Node* node = nullptr;
    {
      std::optional<VerbatimNames> keep;
      if (single_value) keep.emplace(g_.names());
      node = g_.call_function(target, std::move(args), std::move(kwargs), std::string(name));
    }
    node->mutable_meta().other = std::move(meta);
    if (single_value) {
      append_extra(register_value(std::string(out_name), node, path), record_text_);
    }
    record_text_.raw('}');
    node->mutable_meta().serialized = record_buf_;
    return true;
  }
#endif

  // Reads a node's `inputs` into `args` / `kwargs` (positional or keyword by their ArgumentKind,
  // or, without one, keyword when a higher-order operator's input has a name) and writes their
  // records to args_text_ / kwargs_text_.
  void read_node_inputs(const ojson& inputs, const Path& ip, bool hop, ArgumentList& args,
                        Kwargs& kwargs) {
    args_buf_.clear();
    kwargs_buf_.clear();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const Path p = at_index(ip, i);
      const auto& in = expect_object(inputs[i], p);
      const std::string name =
          get_string(field(in, p, record_key::name), at_key(p, record_key::name));
      std::string member;
      Argument a = read_arg(field(in, p, "arg"), at_key(p, "arg"), &member);
      std::string operator_text;
      if (member == "as_operator") {  // kept as torch.fx prints it; the file's text is recorded
        std::string shown = operator_arg_from_json(a.as<std::string>());
        if (shown != a.as<std::string>()) {
          operator_text = a.as<std::string>();
          a = Argument(std::move(shown));
        }
      }
      std::optional<std::int64_t> kind;
      const ojson* k = opt_field(in, p, record_key::kind);
      if (k != nullptr && !k->is_null()) kind = get_int(*k, at_key(p, record_key::kind));
      const bool positional = kind ? *kind != kKeyword : (!hop || name.empty());
      if (positional && !kwargs.empty()) {
        throw serialization_error(p, "positional argument '" + name + "' after keyword arguments");
      }
      append_input_record(positional ? args_text_ : kwargs_text_, name, member, operator_text, k);
      if (positional) {
        args.push_back(std::move(a));
      } else {
        kwargs.emplace_back(name, std::move(a));
      }
    }
  }

  // Starts a node's record in record_buf_: `{"args":[<args_buf_>],"kwargs":[<kwargs_buf_>]`.
  void start_record() {
    record_buf_.clear();
    record_text_.raw('{');
    record_text_.key(record_key::args);
    record_text_.raw('[');
    record_text_.raw(args_buf_);
    record_text_.raw(std::string_view("],"));
    record_text_.key(record_key::kwargs);
    record_text_.raw('[');
    record_text_.raw(kwargs_buf_);
    record_text_.raw(']');
  }

  // Reads a node's other fields and writes the record up to its output layout ("out", with
  // legacy null members dropped); the value's members ("sym"/"custom_obj") and the closing brace
  // come after.
  NodeFields read_node_fields(const ojson& jn, const Path& path, const ojson& outputs,
                              const Path& op) {
    NodeFields f;
    start_record();
    if (const ojson* h = opt_field(jn, path, node_key::is_hop_single_tensor_return)) {
      record_text_.raw(',');
      record_text_.key(record_key::hop);
      record_text_.value(*h);
      if (!h->is_null()) {
        f.hop_single = get_bool(*h, at_key(path, node_key::is_hop_single_tensor_return));
      }
    }
    if (const ojson* n = opt_field(jn, path, node_key::name)) {
      record_text_.raw(',');
      record_text_.key(record_key::has_name);
      record_text_.boolean(true);
      if (!n->is_null()) f.given_name = get_string(*n, at_key(path, node_key::name));
    }
    append_unknown_node_fields(jn, record_text_);
    record_text_.raw(',');
    record_text_.key(record_key::out);
    record_text_.raw('[');
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      auto mv = union_member(outputs[i], at_index(op, i));
      if (i != 0) record_text_.raw(',');
      record_text_.raw('{');
      record_text_.key(mv.first);
      record_text_.value(*mv.second);
      record_text_.raw('}');
      f.outs.push_back(std::move(mv));
    }
    record_text_.raw(']');
    f.meta = read_node_metadata(jn, path);
    return f;
  }

  // A node's `metadata` (required, may be null): string -> string, in the file's order.
  static std::vector<std::pair<std::string, std::string>> read_node_metadata(const ojson& jn,
                                                                             const Path& path) {
    std::vector<std::pair<std::string, std::string>> meta;
    const ojson* md = opt_field(jn, path, node_key::metadata);
    if (md == nullptr) throw serialization_error(path, "missing required field 'metadata'");
    if (md->is_null()) return meta;
    const Path mp = at_key(path, node_key::metadata);
    expect_object(*md, mp);
    for (auto it = md->begin(); it != md->end(); ++it) {
      meta.emplace_back(it.key(), get_string(it.value(), at_key(mp, it.key())));
    }
    return meta;
  }

  // The name of a single-value output (as_tensor's `name`, a symbol's `as_name`).
  static std::string output_value_name(const NodeOutput& o, const Path& p) {
    if (o.first == "as_tensor") {
      return get_string(field(*o.second, p, record_key::name), at_key(p, record_key::name));
    }
    return output_item_name(*o.second, p);
  }

  // The name of a symbolic output ({"as_name": ...}); anything else is refused.
  static std::string output_item_name(const ojson& item, const Path& p) {
    const auto sm_sv = union_member(item, p);
    if (sm_sv.first != "as_name")
      throw serialization_error(p, "a node output must be a named value");
    return get_string(*sm_sv.second, at_key(p, sm_sv.first));
  }

  // The getitem node reading output `idx` of `parent`, named `gname` (the file's name when
  // `is_value`: it then produces a graph value, registered with its metadata).
  Node* make_getitem(Node* parent, std::int64_t idx, const std::string& gname, const Path& p,
                     bool is_value) {
    if (is_value && by_name_.contains(gname)) {
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
      const ValueExtra e = register_value(gname, gi, p);
      if (e.sym != nullptr || e.custom_obj != nullptr) {
        std::string text;
        JsonText extra(text);
        append_extra(e, extra);
        text[0] = '{';  // the record is the extra member alone
        text.push_back('}');
        gi->mutable_meta().serialized = std::move(text);
      }
    }
    return gi;
  }

  // One getitem node of `parent` per element of the list output `arr`.
  void read_output_items(Node* parent, const ojson& arr, const Path& p) {
    expect_array(arr, p);
    for (std::size_t k = 0; k < arr.size(); ++k) {
      const Path kp = at_index(p, k);
      std::string gname;
      if (arr[k].is_object() && arr[k].contains(record_key::name)) {
        gname = get_string(arr[k][record_key::name], at_key(kp, record_key::name));
      } else {
        gname = output_item_name(arr[k], kp);
      }
      (void)make_getitem(parent, static_cast<std::int64_t>(k), gname, kp, true);
    }
  }

  // The outputs of a node with several values (or one list): getitem nodes, as torch's
  // deserialize_multiple_outputs makes them.
  void read_multiple_outputs(Node* node, const std::vector<NodeOutput>& outs, const Path& op) {
    if (outs.size() == 1) {
      if (outs[0].first != "as_tensors") {
        throw serialization_error(at_index(op, 0),
                                  "unsupported node output '" + outs[0].first + "'");
      }
      read_output_items(node, *outs[0].second, at_key(at_index(op, 0), "as_tensors"));
      return;
    }
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const Path p = at_index(op, i);
      const NodeOutput& o = outs[i];
      const auto idx = static_cast<std::int64_t>(i);
      const ArgTag tag = arg_tag(o.first);
      if (tag == ArgTag::as_tensor || tag == ArgTag::as_sym_int || tag == ArgTag::as_sym_float) {
        const Path vp = at_key(p, o.first);
        (void)make_getitem(node, idx, output_value_name(o, vp), vp, true);
      } else if (tag == ArgTag::as_none) {
        (void)make_getitem(node, idx, "as_none", p, false);
      } else if (tag == ArgTag::as_tensors || tag == ArgTag::as_sym_ints ||
                 tag == ArgTag::as_sym_floats || tag == ArgTag::as_sym_bools) {
        Node* lst = make_getitem(node, idx, "", p, false);
        read_output_items(lst, *o.second, at_key(p, o.first));
      } else {
        throw serialization_error(p, "unsupported node output '" + o.first + "'");
      }
    }
  }

  // Fields of a serialized node that schema 8.20 does not define (a newer minor version's),
  // appended to the node's record as `,"extra":{...}` in the file's order; the writer puts them
  // back after the known fields. Nothing is appended for a node with only known fields.
  static void append_unknown_node_fields(const ojson& jn, JsonText& out) {
    bool any = false;
    for (auto it = jn.begin(); it != jn.end(); ++it) {
      const std::string& k = it.key();
      if (k == node_key::target || k == node_key::inputs || k == node_key::outputs ||
          k == node_key::metadata || k == node_key::is_hop_single_tensor_return ||
          k == node_key::name) {
        continue;
      }
      out.raw(',');
      if (!any) {
        out.key(record_key::extra);
        out.raw('{');
      }
      any = true;
      out.key(k);
      out.value(it.value());
    }
    if (any) out.raw('}');
  }

  Argument read_graph_output(const ojson& j, const Path& path) {
    const auto m_v = union_member(j, path);
    const auto& m = m_v.first;
    const auto& v = m_v.second;
    const Path p = at_key(path, m);
    if (m == "as_tensor")
      return Argument(lookup(get_string(field(*v, p, "name"), at_key(p, "name")), p));
    if (m == "as_sym_int" || m == "as_sym_bool" || m == "as_sym_float") {
      const auto sm_sv = union_member(*v, p);
      const auto& sm = sm_sv.first;
      const auto& sv = sm_sv.second;
      if (sm != "as_name") unknown_member(p, sm);
      return Argument(lookup(get_string(*sv, at_key(p, sm)), at_key(p, sm)));
    }
    if (m == "as_int") return Argument(get_int(*v, p));
    if (m == "as_float") return Argument(get_float(*v, p));
    if (m == "as_bool") return Argument(get_bool(*v, p));
    if (m == "as_none") return Argument(none);
    unknown_member(path, m);
  }

  Graph& g_;
  bool schema_checks_;  // the graph's setting before the reader turned it off
  bool legacy_;
  Node* last_input_ = nullptr;  // the placeholder read last
  TensorValuesSink* streamed_ = nullptr;
  // Scratch text of read_node's record (kept between nodes for their capacity).
  std::string args_buf_;
  std::string kwargs_buf_;
  std::string record_buf_;
  JsonText args_text_{args_buf_};
  JsonText kwargs_text_{kwargs_buf_};
  JsonText record_text_{record_buf_};
  ValueTable by_name_;
  NamedTable<const ojson*> graphs_;  // nested graphs by name, the first read of each
#if EPGRAPH_JSON_HAS_SIMDJSON
  SimdjsonFeeder* feeder_ = nullptr;
  const simdjson::dom::array* direct_nodes_ = nullptr;  // see take_nodes_from
  std::size_t direct_read_ = 0;
  // Trees of nodes read from simdjson's document that graphs_ points into.
  std::vector<ojson> kept_;
#endif
  TensorTable tensors_;
  std::unordered_map<std::string, SymValue> syms_;
  std::unordered_map<std::string, std::string> objs_;
};

// Graph value name as the graph has it (a name FX refuses, e.g. `input`, may have been changed).
inline std::string node_name_for(const ValueTable& values, const std::string& serialized,
                                 const Path& path) {
  Node* const* it = values.find(serialized);
  if (it == nullptr) {
    throw serialization_error(
        path, "value '" + serialized + "' is not produced by any graph input or node");
  }
  return std::string((*it)->name());
}

inline ConstantValue constant_value(const ojson& j, const Path& path) {
  const auto m_v = union_member(j, path);
  const auto& m = m_v.first;
  const auto& v = m_v.second;
  const Path p = at_key(path, m);
  if (m == "as_none") return None{};
  if (m == "as_int") return get_int(*v, p);
  if (m == "as_float") return get_float(*v, p);
  if (m == "as_string") return get_string(*v, p);
  if (m == "as_bool") return get_bool(*v, p);
  unknown_member(path, m);
}

// Argument union in a signature -> ArgumentSpec (torch's deserialize_argument_spec).
inline ArgumentSpec argument_spec(const ojson& j, const Path& path, const ValueTable& values) {
  const auto m_v = union_member(j, path);
  const auto& m = m_v.first;
  const auto& v = m_v.second;
  const Path p = at_key(path, m);
  auto sym_name = [&]() {
    const auto sm_sv = union_member(*v, p);
    const auto& sm = sm_sv.first;
    const auto& sv = sm_sv.second;
    if (sm != "as_name") unknown_member(p, sm);
    return node_name_for(values, get_string(*sv, at_key(p, sm)), at_key(p, sm));
  };
  if (m == "as_tensor") {
    return TensorArgument{
        node_name_for(values, get_string(field(*v, p, "name"), at_key(p, "name")), p)};
  }
  if (m == "as_sym_int") return SymIntArgument{sym_name()};
  if (m == "as_sym_float") return SymFloatArgument{sym_name()};
  if (m == "as_sym_bool") return SymBoolArgument{sym_name()};
  if (m == "as_custom_obj") {
    return CustomObjArgument{
        node_name_for(values, get_string(field(*v, p, "name"), at_key(p, "name")), p),
        get_string(field(*v, p, "class_fqn"), at_key(p, "class_fqn"))};
  }
  if (m == "as_none") return ConstantArgument{"", None{}};
  if (m == "as_int") return ConstantArgument{"", get_int(*v, p)};
  if (m == "as_float") return ConstantArgument{"", get_float(*v, p)};
  if (m == "as_bool") return ConstantArgument{"", get_bool(*v, p)};
  if (m == "as_string") return ConstantArgument{"", get_string(*v, p)};
  unknown_member(path, m);
}

inline std::string spec_tensor_name(const ojson& s, const Path& p, const ValueTable& values) {
  const Path ap = at_key(p, "arg");
  const ojson& a = field(s, p, "arg");
  return node_name_for(values, get_string(field(a, ap, "name"), at_key(ap, "name")), ap);
}

template <class Spec, class F>
Spec make_spec(const Path& path, F&& f) {
  try {
    return f();
  } catch (const value_error& e) {
    throw serialization_error(path, e.what());
  }
}

inline InputSpec input_spec(const ojson& j, const Path& path, const ValueTable& values,
                            bool legacy) {
  const auto m_vp = union_member(j, path);
  const auto& m = m_vp.first;
  const auto& vp = m_vp.second;
  const ojson& s = *vp;
  const Path p = at_key(path, m);
  auto target = [&](const char* key) { return get_string(field(s, p, key), at_key(p, key)); };
  return make_spec<InputSpec>(path, [&]() -> InputSpec {
    if (m == "user_input") {
      return InputSpec(InputKind::USER_INPUT,
                       argument_spec(field(s, p, "arg"), at_key(p, "arg"), values));
    }
    if (m == "parameter") {
      return InputSpec(InputKind::PARAMETER, TensorArgument{spec_tensor_name(s, p, values)},
                       target("parameter_name"));
    }
    if (m == "buffer") {
      bool persistent = true;  // legacy files have no flag; torch reads them as persistent
      const ojson* f = opt_field(s, p, "persistent");
      if (f != nullptr && !f->is_null()) {
        persistent = get_bool(*f, at_key(p, "persistent"));
      } else if (!legacy) {
        throw serialization_error(p, "missing required field 'persistent'");
      }
      return InputSpec(InputKind::BUFFER, TensorArgument{spec_tensor_name(s, p, values)},
                       target("buffer_name"), persistent);
    }
    if (m == "tensor_constant") {
      return InputSpec(InputKind::CONSTANT_TENSOR, TensorArgument{spec_tensor_name(s, p, values)},
                       target("tensor_constant_name"));
    }
    if (m == "custom_obj") {
      const Path ap = at_key(p, "arg");
      const ojson& a = field(s, p, "arg");
      return InputSpec(
          InputKind::CUSTOM_OBJ,
          CustomObjArgument{
              node_name_for(values, get_string(field(a, ap, "name"), at_key(ap, "name")), ap),
              get_string(field(a, ap, "class_fqn"), at_key(ap, "class_fqn"))},
          target("custom_obj_name"));
    }
    if (m == "token") {
      return InputSpec(InputKind::TOKEN, TokenArgument{spec_tensor_name(s, p, values)});
    }
    if (m == "constant_input") {
      return InputSpec(InputKind::USER_INPUT,
                       ConstantArgument{get_string(field(s, p, "name"), at_key(p, "name")),
                                        constant_value(field(s, p, "value"), at_key(p, "value"))});
    }
    unknown_member(path, m);
  });
}

inline OutputSpec output_spec(const ojson& j, const Path& path, const ValueTable& values) {
  const auto m_vp = union_member(j, path);
  const auto& m = m_vp.first;
  const auto& vp = m_vp.second;
  const ojson& s = *vp;
  const Path p = at_key(path, m);
  auto target = [&](const char* key) { return get_string(field(s, p, key), at_key(p, key)); };
  auto tensor = [&]() { return TensorArgument{spec_tensor_name(s, p, values)}; };
  return make_spec<OutputSpec>(path, [&]() -> OutputSpec {
    if (m == "user_output") {
      return OutputSpec(OutputKind::USER_OUTPUT,
                        argument_spec(field(s, p, "arg"), at_key(p, "arg"), values));
    }
    if (m == "loss_output") return OutputSpec(OutputKind::LOSS_OUTPUT, tensor());
    if (m == "buffer_mutation")
      return OutputSpec(OutputKind::BUFFER_MUTATION, tensor(), target("buffer_name"));
    if (m == "parameter_mutation") {
      return OutputSpec(OutputKind::PARAMETER_MUTATION, tensor(), target("parameter_name"));
    }
    if (m == "gradient_to_parameter") {
      return OutputSpec(OutputKind::GRADIENT_TO_PARAMETER, tensor(), target("parameter_name"));
    }
    if (m == "gradient_to_user_input") {
      return OutputSpec(OutputKind::GRADIENT_TO_USER_INPUT, tensor(), target("user_input_name"));
    }
    if (m == "user_input_mutation") {
      return OutputSpec(OutputKind::USER_INPUT_MUTATION, tensor(), target("user_input_name"));
    }
    if (m == "token")
      return OutputSpec(OutputKind::TOKEN, TokenArgument{spec_tensor_name(s, p, values)});
    unknown_member(path, m);
  });
}

// Name a constant graph input gets from its spec (torch: `input_specs[i].arg.name`).
inline std::vector<std::string> constant_input_names(const ojson& specs, const Path& path) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    std::string name;
    const Path p = at_index(path, i);
    const auto m_v = union_member(specs[i], p);
    const auto& m = m_v.first;
    const auto& v = m_v.second;
    if (m == "constant_input" && v->is_object() && v->contains("name") &&
        (*v)["name"].is_string()) {
      name = (*v)["name"].get<std::string>();
    }
    out.push_back(name);
  }
  return out;
}

// Legacy files write module_call_graph arguments with every union member; keep one. The result
// is the caller's to dismantle (dispose.hpp); on an exception the partial copy is dismantled.
inline ojson strip_null_members(const ojson& j) {
  if (j.is_object()) {
    ojson out = ojson::object();
    JsonDisposer guard(out);
    // Reserved: a growing ordered_json object would copy its members and destroy the old ones.
    out.get_ref<ojson::object_t&>().reserve(j.size());
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.value().is_null()) continue;
      ojson member = strip_null_members(it.value());
      JsonDisposer member_guard(member);
      out[it.key()] = std::move(member);
    }
    guard.release();
    return out;
  }
  if (j.is_array()) {
    ojson out = ojson::array();
    JsonDisposer guard(out);
    out.get_ref<ojson::array_t&>().reserve(j.size());
    for (const auto& x : j) {
      ojson element = strip_null_members(x);
      JsonDisposer element_guard(element);
      out.push_back(std::move(element));
    }
    guard.release();
    return out;
  }
  return j;
}

// ProgramMetadata::opaque key of the schema version of a file newer than 8.20 (its JSON text,
// `{"major":8,"minor":21}`): save writes that version back. Not a field of the document.
inline constexpr std::string_view kKeptSchemaVersion = "json.schema_version";

// A document's `schema_version`: {major, minor}, or the legacy integer form (then `legacy`).
struct SchemaVersion {
  std::int64_t major = 0;
  std::int64_t minor = 0;
  bool legacy = false;  // the integer form, or a major version below 7

  [[nodiscard]] bool newer_minor() const noexcept {
    return major == schema_major && minor > schema_minor;
  }
  [[nodiscard]] std::string text() const {
    return std::to_string(major) + "." + std::to_string(minor);
  }
};

// Reads and checks `schema_version`; a newer minor version is recorded in `md` under
// kKeptSchemaVersion (save writes it back). Throws serialization_error for a missing or mistyped
// version and "schema major version 9 is newer than the newest supported (8)".
inline SchemaVersion read_schema_version(const ojson& doc, ProgramMetadata& md) {
  const ojson& sv = field(doc, "", "schema_version");
  SchemaVersion v;
  if (sv.is_number_integer()) {
    v.legacy = true;
    v.major = get_int(sv, "schema_version");
  } else {
    v.major = get_int(field(sv, "schema_version", "major"), "schema_version.major");
    v.minor = get_int(field(sv, "schema_version", "minor"), "schema_version.minor");
  }
  if (v.major > schema_major) {
    throw serialization_error("schema_version", "schema major version " + std::to_string(v.major) +
                                                    " is newer than the newest supported (" +
                                                    std::to_string(schema_major) + ")");
  }
  v.legacy = v.legacy || v.major < 7;
  if (v.newer_minor()) md.opaque.emplace_back(kKeptSchemaVersion, sv.dump());
  return v;
}

template <class Tensor>
std::string save_program(const ExportedProgram<Tensor>& ep);  // serialize.hpp

// Throws serialization_error at the path of the first member of `in` that `out` lacks (`out` is
// what save writes for the program loaded from `in`). Entries of `tensor_values` are data, and
// save drops those naming no value: their absence is not reported. Arrays are compared
// element by element. `version` is the file's ("8.21"). O(size of `in`).
inline void check_fields_kept(const ojson& in, const ojson& out, const Path& path,
                              const std::string& version) {
  if (in.is_array() && out.is_array()) {
    for (std::size_t i = 0; i < in.size() && i < out.size(); ++i) {
      check_fields_kept(in[i], out[i], at_index(path, i), version);
    }
    return;
  }
  if (!in.is_object() || !out.is_object()) return;
  const bool data_keys = path.str().size() >= 13 &&
                         path.str().compare(path.str().size() - 13, 13, "tensor_values") == 0;
  for (auto it = in.begin(); it != in.end(); ++it) {
    const auto o = out.find(it.key());
    if (o != out.end()) {
      check_fields_kept(it.value(), *o, at_key(path, it.key()), version);
    } else if (!data_keys) {
      throw serialization_error(
          path, "field '" + it.key() + "' of schema " + version +
                    " is unknown to epgraph, which implements schema " +
                    std::to_string(schema_major) + "." + std::to_string(schema_minor) +
                    " and keeps unknown fields only on nodes, at the top level and in "
                    "graph_module: refusing the file rather than dropping the field");
    }
  }
}

// Forward compatibility (a file of schema 8.x, x > 20, which torch 2.13 loads ignoring what it
// does not know): checks that saving `ep`, loaded from `text`, keeps every field of the file;
// throws check_fields_kept's error otherwise. O(size of the text).
template <class Tensor>
void check_newer_minor_kept(const ExportedProgram<Tensor>& ep, std::string_view text,
                            const std::string& version) {
  ojson in = parse_ordered(text);
  JsonDisposer in_guard(in);
  ojson out = parse_ordered(save_program(ep));
  JsonDisposer out_guard(out);
  check_fields_kept(in, out, "", version);
}

}  // namespace detail

namespace detail {

// The parser that reads a document's text into the tree the reader walks (parse_document).
enum class parser_backend {
  nlohmann,  // nlohmann's SAX parser
  simdjson,  // simdjson's DOM parser (when epgraph::json links simdjson, else nlohmann's)
};

// simdjson when epgraph::json links it (EPGRAPH_JSON_HAS_SIMDJSON), else nlohmann.
inline constexpr parser_backend default_parser_backend =
    EPGRAPH_JSON_HAS_SIMDJSON ? parser_backend::simdjson : parser_backend::nlohmann;

// A parsed exported-program document and what was read on the way. Its tree is dismantled on
// destruction: nlohmann's destructor allocates for a non-empty array or object, and an
// allocation failure there would terminate (see dispose.hpp).
struct ParsedDocument {
  ParsedDocument() = default;
  ParsedDocument(const ParsedDocument&) = delete;
  ParsedDocument& operator=(const ParsedDocument&) = delete;
  ~ParsedDocument() { dismantle(doc); }

  ojson doc;
  // graph_module.graph.tensor_values, read while parsing (see TensorValuesSink); empty when the
  // tree holds them.
  std::optional<TensorValuesSink> tensor_values;
  // The text parsed: the caller's, or (second attempt) that text with the bare non-finite floats
  // of torch <= 2.6 quoted as torch 2.13 writes them (quote_bare_nonfinite), held in `quoted`.
  std::string_view text;
  std::optional<std::string> quoted;
#if EPGRAPH_JSON_HAS_SIMDJSON
  // The parser of the text when simdjson read it (`own_feeder`, or the caller's: see
  // load_program), and graph_module.graph.nodes as its document has them (the tree then holds an
  // empty array there; see SimdjsonFeeder::feed), or nullptr when the tree holds the nodes.
  SimdjsonFeeder* feeder = nullptr;
  std::unique_ptr<SimdjsonFeeder> own_feeder;
  const simdjson::dom::array* nodes = nullptr;
#endif
};

// What a parse leaves for the next one: simdjson's parser with its buffers (the copy of the
// text, the tape, the strings), so that a second load neither allocates nor first-touches them
// (see ExportedProgramDeserializer). Empty without simdjson.
struct ParserCache {
#if EPGRAPH_JSON_HAS_SIMDJSON
  std::unique_ptr<SimdjsonFeeder> feeder;
#endif
};

// Parses `json_text` into `out` (one pass, tensor_values streamed into out.tensor_values; a
// second, plain parse when that pass cannot be trusted) with `backend` (simdjson reads only the
// texts it reads as nlohmann does and leaves the others to nlohmann, see simdjson_feed.hpp: the
// document and the errors are the same with both). Throws serialization_error "JSON nesting
// deeper than 512 levels (at byte N)", "malformed JSON: NUL byte at byte N" and "malformed JSON:
// <nlohmann's message>".
inline void parse_document(std::string_view json_text, ParsedDocument& out,
                           parser_backend backend = default_parser_backend) {
  check_no_nul(json_text);  // the same refusal for both backends
  out.text = json_text;
  for (;;) {
    out.tensor_values.emplace();
    try {
      OrderedDomBuilder builder;
      builder.limit_depth(max_json_depth);
      builder.watch({"graph_module", "graph", "tensor_values"}, &*out.tensor_values);
      bool parsed = false;
#if EPGRAPH_JSON_HAS_SIMDJSON
      out.nodes = nullptr;
      if (backend == parser_backend::simdjson) {
        if (out.feeder == nullptr) {
          out.own_feeder = std::make_unique<SimdjsonFeeder>();
          out.feeder = out.own_feeder.get();
        }
        parsed = out.feeder->feed(out.text, builder, &*out.tensor_values, true);
        if (!parsed) {  // left to nlohmann: what was fed is forgotten
          builder.clear();
          out.tensor_values.emplace();
        } else {
          out.nodes = out.feeder->nodes();
        }
      }
#else
      (void)backend;
#endif
      if (!parsed) ojson::sax_parse(out.text.begin(), out.text.end(), &builder);
      out.doc = builder.take();
#if EPGRAPH_JSON_HAS_SIMDJSON
      // The graph had `nodes` twice: the tree holds empty arrays for both.
      const bool nodes_twice = parsed && out.feeder->nodes_twice();
#else
      const bool nodes_twice = false;
#endif
      if (!builder.watched_seen() && !nodes_twice) {
        out.tensor_values.reset();  // nothing was taken from the tree
      } else if (builder.watch_unreliable() || nodes_twice || out.tensor_values->duplicates()) {
        dismantle(out.doc);
        out.doc = nullptr;
        out.tensor_values.reset();
#if EPGRAPH_JSON_HAS_SIMDJSON
        out.nodes = nullptr;
#endif
        out.doc = parse_ordered(out.text);
      }

      return;
    } catch (const nesting_too_deep&) {
      check_nesting(out.text);  // throws, naming the byte
      throw serialization_error(
          "", "JSON nesting deeper than " + std::to_string(max_json_depth) + " levels");
    } catch (const nlohmann::json::parse_error& e) {
      if (!out.quoted && (out.quoted = quote_bare_nonfinite(json_text))) {
        out.text = *out.quoted;
        continue;
      }
      throw serialization_error("", std::string("malformed JSON: ") + e.what());
    } catch (const nlohmann::json::exception& e) {
      // out_of_range for a number too large for a double (fuzz_json).
      throw serialization_error("", std::string("malformed JSON: ") + e.what());
    }
  }
}

// The signature's specs (`in_specs` / `out_specs` at their paths), their names resolved
// against the graph's values.
inline ExportGraphSignature read_signature(const ojson& in_specs, const Path& isp,
                                           const ojson& out_specs, const Path& osp,
                                           const ValueTable& values, bool legacy) {
  ExportGraphSignature signature;
  for (std::size_t i = 0; i < in_specs.size(); ++i) {
    signature.input_specs.push_back(input_spec(in_specs[i], at_index(isp, i), values, legacy));
  }
  for (std::size_t i = 0; i < out_specs.size(); ++i) {
    signature.output_specs.push_back(output_spec(out_specs[i], at_index(osp, i), values));
  }
  return signature;
}

// Keeps graph_module's fields other than graph and signature as opaque JSON text (a legacy
// file's without their null members) and notes the optional ones the file omits in `absent`.
inline void read_graph_module_rest(const ojson& gm, bool legacy, ProgramMetadata& md,
                                   std::vector<std::string>& absent) {
  for (auto it = gm.begin(); it != gm.end(); ++it) {
    if (it.key() == "graph" || it.key() == "signature") continue;
    if (legacy) {
      ojson v = strip_null_members(it.value());
      JsonDisposer v_guard(v);
      md.opaque.emplace_back("graph_module." + it.key(), v.dump());
    } else {
      md.opaque.emplace_back("graph_module." + it.key(), it.value().dump());
    }
  }
  for (const char* key : {"metadata", "treespec_namedtuple_fields"}) {
    if (gm.contains(key)) continue;
    if (legacy) {
      md.opaque.emplace_back(std::string("graph_module.") + key, "{}");  // schema default
    } else {
      absent.push_back(std::string("graph_module.") + key);
    }
  }
  if (!gm.contains("module_call_graph")) {
    throw serialization_error("graph_module", "missing required field 'module_call_graph'");
  }
}

// The document's opset_version and range_constraints.
inline void read_opsets_and_ranges(const ojson& doc, ProgramMetadata& md) {
  const ojson& ov = expect_object(field(doc, "", "opset_version"), "opset_version");
  for (auto it = ov.begin(); it != ov.end(); ++it) {
    md.opset_version.emplace_back(it.key(), get_int(it.value(), at_key("opset_version", it.key())));
  }
  const ojson& rc = expect_object(field(doc, "", "range_constraints"), "range_constraints");
  for (auto it = rc.begin(); it != rc.end(); ++it) {
    const std::string p = at_key("range_constraints", it.key());
    RangeConstraint r;
    r.symbol = it.key();
    const ojson& lo = field(it.value(), p, "min_val");
    const ojson& hi = field(it.value(), p, "max_val");
    // torch <= 2.6 wrote an unbounded end as -Infinity / Infinity (a float; torch 2.13 reads it
    // as -int_oo / int_oo and writes null).
    auto unbounded = [](const ojson& v, const char* inf) { return v.is_string() && v == inf; };
    if (!lo.is_null() && !unbounded(lo, "-Infinity")) r.min_val = get_int(lo, at_key(p, "min_val"));
    if (!hi.is_null() && !unbounded(hi, "Infinity")) r.max_val = get_int(hi, at_key(p, "max_val"));
    md.range_constraints.push_back(std::move(r));
  }
}

// The document's verifiers, torch_version, guards_code and unknown top-level fields (kept as
// opaque JSON text); the optional ones the file omits are noted in `absent`, which is then
// stored as the opaque field `json.absent`.
inline void read_document_rest(const ojson& doc, bool legacy, ProgramMetadata& md,
                               std::vector<std::string>& absent) {
  if (const ojson* v = opt_field(doc, "", "verifiers")) {
    const auto& arr = expect_array(*v, "verifiers");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      md.verifiers.push_back(get_string(arr[i], at_index("verifiers", i)));
    }
  } else if (!legacy) {
    absent.emplace_back("verifiers");
  }
  if (const ojson* v = opt_field(doc, "", "torch_version")) {
    md.torch_version = get_string(*v, "torch_version");
  } else {
    md.torch_version = "<=2.4";  // schema default
    if (!legacy) absent.emplace_back("torch_version");
  }
  if (legacy && !doc.contains("guards_code")) md.opaque.emplace_back("guards_code", "[]");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& k = it.key();
    if (k == "graph_module" || k == "opset_version" || k == "range_constraints" ||
        k == "schema_version" || k == "verifiers" || k == "torch_version") {
      continue;
    }
    md.opaque.emplace_back(k, it.value().dump());
  }
  if (!legacy && !doc.contains("guards_code")) absent.emplace_back("guards_code");
  if (!absent.empty()) {
    ojson a(absent);
    JsonDisposer a_guard(a);
    md.opaque.emplace_back("json.absent", a.dump());
  }
}

}  // namespace detail

namespace detail {

// load_exported_program_from_string with the text parsed by `backend` (the same program and the
// same errors with both; tests compare them).
// With `cache`, the parse uses (and leaves in it) the cache's parser instead of a new one.
template <class Tensor>
[[nodiscard]] ExportedProgram<Tensor> load_program(std::string_view json_text,
                                                   parser_backend backend,
                                                   ParserCache* cache = nullptr) {
  detail::ParsedDocument parsed;
#if EPGRAPH_JSON_HAS_SIMDJSON
  if (cache != nullptr) {
    if (!cache->feeder) cache->feeder = std::make_unique<SimdjsonFeeder>();
    parsed.feeder = cache->feeder.get();
  }
#else
  (void)cache;
#endif
  detail::parse_document(json_text, parsed, backend);
  ojson& doc = parsed.doc;
  detail::expect_object(doc, "");
  ProgramMetadata md;
  std::vector<std::string> absent;
  const detail::SchemaVersion version = detail::read_schema_version(doc, md);
  const bool legacy = version.legacy;

  const ojson& gm = field(doc, "", "graph_module");
  detail::expect_object(gm, "graph_module");
  const ojson& sig = field(gm, "graph_module", "signature");
  const std::string isp = "graph_module.signature.input_specs";
  const std::string osp = "graph_module.signature.output_specs";
  const ojson& in_specs =
      detail::expect_array(field(sig, "graph_module.signature", "input_specs"), isp);
  const ojson& out_specs =
      detail::expect_array(field(sig, "graph_module.signature", "output_specs"), osp);

  auto graph = std::make_unique<Graph>();
  // Ended (schema checks back on) before the program takes the graph: a reader outliving the
  // program it filled would touch a freed graph when the last check below throws.
  std::optional<detail::GraphReader> reader(std::in_place, *graph, legacy);
  // The graph's node entries are freed as they are read (read_consuming); nothing below reads
  // them.
  (void)field(gm, "graph_module", "graph");              // throws when absent
  ojson& jg = *doc.find("graph_module")->find("graph");  // the value field() found
#if EPGRAPH_JSON_HAS_SIMDJSON
  if (parsed.nodes != nullptr) reader->take_nodes_from(*parsed.feeder, *parsed.nodes);
#endif
  reader->read_consuming(jg, "graph_module.graph", detail::constant_input_names(in_specs, isp),
                         parsed.tensor_values ? &*parsed.tensor_values : nullptr);
  for (const char* key : {"custom_obj_values", "sym_float_values"}) {
    if (!jg.contains(key) && !legacy) absent.push_back(std::string("graph_module.graph.") + key);
  }
  ExportGraphSignature signature =
      detail::read_signature(in_specs, isp, out_specs, osp, reader->values(), legacy);
  detail::read_graph_module_rest(gm, legacy, md, absent);
  detail::read_opsets_and_ranges(doc, md);
  detail::read_document_rest(doc, legacy, md, absent);
  reader.reset();
  ExportedProgram<Tensor> ep(std::move(graph), std::move(signature), {}, {}, std::move(md));
  if (version.newer_minor()) detail::check_newer_minor_kept(ep, parsed.text, version.text());
  return ep;
}

}  // namespace detail

template <class Tensor>
ExportedProgram<Tensor> load_exported_program_from_string(std::string_view json_text) {
  return detail::load_program<Tensor>(json_text, detail::default_parser_backend);
}

template <class Tensor>
ExportedProgram<Tensor> load_exported_program(const std::filesystem::path& json_file) {
  // A directory opens as a stream on Linux and reads as an empty text ("malformed JSON").
  std::error_code ec;
  if (std::filesystem::is_directory(json_file, ec)) {
    throw serialization_error("", "cannot open '" + json_file.string() + "': a directory");
  }
  std::ifstream in(json_file, std::ios::binary);
  if (!in) throw serialization_error("", "cannot open '" + json_file.string() + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::string file = json_file.string();
  // A zip file starts with a local file header ("PK\3\4") or, when empty, the end of its central
  // directory ("PK\5\6").
  if (text.size() >= 4 && text[0] == 'P' && text[1] == 'K' &&
      ((text[2] == 3 && text[3] == 4) || (text[2] == 5 && text[3] == 6))) {
    throw serialization_error(
        file, serialization_error("",
                                  "a zip archive (a .pt2/.ep file), not an exported-program "
                                  "JSON record: read it with epgraph::archive::load_archive"));
  }
  try {
    return load_exported_program_from_string<Tensor>(text);
  } catch (const serialization_error& e) {
    throw serialization_error(file, e);
  }
}

}  // namespace epgraph::json

// detail::save_program, which the forward-compatibility check of load_exported_program_from_string
// calls, is defined by the writer (which includes this header first).
#include "serialize.hpp"  // IWYU pragma: keep
