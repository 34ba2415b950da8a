// The operator registry: schemas by qualified name, parsed on first use; the process-wide one.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "../detail/compiled_mode.hpp"
#include "../error.hpp"
#include "schema.hpp"

namespace epgraph {

/// Operator schemas by qualified name (`aten::add.Tensor`; `aten::index_copy` for the default
/// overload): c10's dispatcher registry as far as schemas go. Texts registered in bulk are parsed
/// on first lookup, so a table of thousands costs little until used. Lookups and registration
/// may run on any number of threads (one mutex); a returned `const FunctionSchema*` stays valid
/// as long as the registry. Not copyable or movable.
class OperatorRegistry {
 public:
  OperatorRegistry() = default;
  OperatorRegistry(const OperatorRegistry&) = delete;
  OperatorRegistry& operator=(const OperatorRegistry&) = delete;

  /// Parses `text` and registers it (torch.library's `define`, e.g.
  /// `my_ns::my_op(Tensor x, *, float alpha=1.0) -> Tensor`). Registering the same schema again
  /// returns the one registered. Returns the registered schema (valid as long as the registry).
  /// Throws value_error from parse_schema, and value_error "Operator 'my_ns::my_op' is already
  /// registered with schema '<old>', not '<new>'" when the name is taken by another schema;
  /// nothing changes then. Strong guarantee. O(length + log size).
  const FunctionSchema& register_schema(std::string_view text) {
    auto parsed = std::make_unique<FunctionSchema>(parse_schema(text));
    const std::string key = parsed->qualified_name();
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      const FunctionSchema& old = parse_locked(it->second);
      if (old != *parsed) {
        throw value_error("Operator '" + key + "' is already registered with schema '" + old.str() +
                          "', not '" + parsed->str() + "'");
      }
      return old;
    }
    Entry e;
    e.parsed = std::move(parsed);
    const FunctionSchema& out = *e.parsed;
    entries_.emplace(key, std::move(e));
    return out;
  }

  /// Registers schema texts for parsing on first lookup (how the generated aten/prims table is
  /// added): `n` NUL-terminated texts. Each must outlive the registry (string literals). A name
  /// already registered keeps its first schema. Throws std::bad_alloc (strong guarantee: none is
  /// added then). O(n log size); texts are not parsed here (a malformed one throws at its lookup).
  void register_static(const char* const* texts, std::size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<std::string, Entry, std::less<>> staged;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string_view t = texts[i];
      std::string key(t.substr(0, t.find('(')));
      while (!key.empty() && key.back() == ' ') key.pop_back();
      if (entries_.count(key) != 0 || staged.count(key) != 0) continue;
      Entry e;
      e.text = t;
      staged.emplace(std::move(key), std::move(e));
    }
    entries_.merge(staged);
  }

  /// The schema registered under `qualified_name` (`aten::add.Tensor`, `aten::index_copy`), or
  /// nullptr. Throws value_error when a lazily registered text does not parse. O(log size), plus
  /// the parse on first lookup.
  [[nodiscard]] const FunctionSchema* find(std::string_view qualified_name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(qualified_name);
    return it == entries_.end() ? nullptr : &parse_locked(it->second);
  }

  /// The schema of an FX call_function target `torch.ops.<ns>.<op>.<overload>`, or nullptr
  /// (another form of target, or an operator not registered). See find. O(length + log size).
  [[nodiscard]] const FunctionSchema* find_target(std::string_view target) const {
    const std::string key = schema_name_of_target(target);
    return key.empty() ? nullptr : find(key);
  }

  /// True when `qualified_name` is registered. O(log size).
  [[nodiscard]] bool contains(std::string_view qualified_name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.find(qualified_name) != entries_.end();
  }

  /// Number of registered schemas. O(1).
  [[nodiscard]] std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

  /// Every registered qualified name, sorted. O(size).
  [[nodiscard]] std::vector<std::string> qualified_names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const auto& kv : entries_) out.push_back(kv.first);
    return out;
  }

 private:
  struct Entry {
    std::string_view text;                           // static text, parsed on first lookup
    mutable std::unique_ptr<FunctionSchema> parsed;  // set once parsed (under the mutex)
  };
  const FunctionSchema& parse_locked(const Entry& e) const {
    if (!e.parsed) {
      FunctionSchema s = parse_schema(e.text);
      e.parsed = std::make_unique<FunctionSchema>(std::move(s));
    }
    return *e.parsed;
  }

  mutable std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> entries_;
};

/// The process-wide registry used by `Graph::create_node` checks, `Node::is_impure` (and so
/// `eliminate_dead_code`), `normalized_arguments`, `verify` and the JSON writer. From its first
/// use it holds every `aten::` and `prims::` overload of torch 2.13 (parsed on first lookup),
/// whatever headers the program includes: a translation unit that includes only
/// `epgraph/ir/graph.hpp` checks calls and judges purity exactly as one that includes
/// `epgraph/epgraph.hpp`. Users add their own schemas with `register_schema`.
/// Returns the registry (lives until the program exits). Created on first use (thread-safe).
/// Errors: std::bad_alloc on the first call, when the table cannot be registered (the next
/// call tries again). Complexity: O(1); the first call O(n log n) for the table's n entries.
/// Mirrors: the dispatcher's operator table (c10 `Dispatcher::singleton()`).
[[nodiscard]] EPGRAPH_DETAIL_CORE_INLINE OperatorRegistry& global_registry();

/// The torch version whose `aten::` and `prims::` schemas global_registry() holds ("2.13.0"), for
/// messages that name it. O(1). Errors: none.
[[nodiscard]] EPGRAPH_DETAIL_CORE_INLINE std::string_view global_registry_torch_version() noexcept;

}  // namespace epgraph

// The definitions and the schema table (3,900 lines of data) come with the header header-only; in
// compiled mode (detail/compiled_mode.hpp) they are compiled once in the library.
#if EPGRAPH_DETAIL_CORE_DEFINITIONS
#include "detail/aten_schema_table.hpp"

namespace epgraph {

EPGRAPH_DETAIL_CORE_INLINE OperatorRegistry& global_registry() {
  // Filled on first use rather than by a static initializer in the table's header: that made
  // checks and purity depend on whether a translation unit of the program included it (with
  // graph.hpp alone, relu(x, x, x) was accepted and copy_ counted as pure).
  static OperatorRegistry& registry = []() -> OperatorRegistry& {
    static OperatorRegistry r;
    r.register_static(detail::aten_schema_texts, detail::aten_schema_text_count);
    return r;
  }();
  return registry;
}

EPGRAPH_DETAIL_CORE_INLINE std::string_view global_registry_torch_version() noexcept {
  return detail::aten_schema_texts_torch_version;
}

}  // namespace epgraph
#endif  // EPGRAPH_DETAIL_CORE_DEFINITIONS
