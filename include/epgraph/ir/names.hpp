// Node names as torch.fx gives them: Namespace, reserved names, sanitizing.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "../detail/string_set.hpp"

namespace epgraph {

namespace detail {
// The names FX refuses, sorted (for std::binary_search): see is_reserved_name.
// clang-format off
inline constexpr std::array<std::string_view, 195> python_reserved_names = {
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
    "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
    "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
    "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError",
    "Exception", "ExceptionGroup", "False", "FileExistsError", "FileNotFoundError",
    "FloatingPointError", "FutureWarning", "GeneratorExit", "IOError", "ImportError",
    "ImportWarning", "IndentationError", "IndexError", "InterruptedError", "IsADirectoryError",
    "KeyError", "KeyboardInterrupt", "LookupError", "MemoryError", "ModuleNotFoundError",
    "NameError", "NoneType", "NotADirectoryError", "NotImplemented", "NotImplementedError",
    "OSError", "OverflowError", "PendingDeprecationWarning", "PermissionError",
    "ProcessLookupError", "RecursionError", "ReferenceError", "ResourceWarning", "RuntimeError",
    "RuntimeWarning", "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning",
    "SystemError", "SystemExit", "TabError", "TimeoutError", "True", "TypeError",
    "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError",
    "UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError", "Warning",
    "ZeroDivisionError", "__build_class__", "__debug__", "__doc__", "__import__", "__loader__",
    "__name__", "__package__", "__spec__", "abs", "aiter", "all", "and", "anext", "any", "as",
    "ascii", "assert", "async", "await", "bin", "bool", "break", "breakpoint", "bytearray", "bytes",
    "callable", "chr", "class", "classmethod", "compile", "complex", "continue", "copyright",
    "credits", "def", "del", "delattr", "device", "dict", "dir", "divmod", "elif", "else",
    "enumerate", "eval", "except", "exec", "exit", "filter", "finally", "float", "for", "format",
    "from", "frozenset", "fx_pytree", "getattr", "global", "globals", "hasattr", "hash", "help",
    "hex", "id", "if", "import", "in", "inf", "input", "int", "is", "isinstance", "issubclass",
    "iter", "lambda", "len", "license", "list", "locals", "map", "max", "memoryview", "min", "nan",
    "next", "nonlocal", "not", "object", "oct", "open", "or", "ord", "pass", "pow", "print",
    "property", "pytree", "quit", "raise", "range", "repr", "return", "reversed", "round", "set",
    "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "torch", "try", "tuple",
    "type", "vars", "while", "with", "yield", "zip",
};
// clang-format on
}  // namespace detail

/// True when FX refuses `name` as a node name because it would shadow a Python keyword, a Python
/// builtin (as of CPython 3.11) or one of FX's custom builtins (`inf`, `nan`, `NoneType`, `torch`,
/// `device`, `fx_pytree`, `pytree`). `None` is not in the list: FX's table maps it to the value
/// None, which its check reads as "not reserved". Mirrors `_illegal_names` in torch/fx/graph.py.
/// O(log 195).
[[nodiscard]] inline bool is_reserved_name(std::string_view name) noexcept {
  return std::binary_search(detail::python_reserved_names.begin(),
                            detail::python_reserved_names.end(), name);
}

namespace detail {

inline bool is_ident_char(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool is_ascii_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// Decimal string + 1 ("9" -> "10"); digits only, no sign.
inline std::string increment_decimal(std::string digits) {
  std::size_t i = digits.size();
  while (i > 0) {
    --i;
    if (digits[i] != '9') {
      ++digits[i];
      return digits;
    }
    digits[i] = '0';
  }
  digits.insert(digits.begin(), '1');
  return digits;
}

// Python int(s) for a run of ASCII digits, printed back: strips leading zeros.
inline std::string normalize_decimal(std::string_view digits) {
  std::size_t i = 0;
  while (i + 1 < digits.size() && digits[i] == '0') ++i;
  return std::string(digits.substr(i));
}

}  // namespace detail

/// Turns any string into a valid Python identifier the way FX does before naming a node: every
/// run of characters outside [0-9a-zA-Z_] becomes one `_`, an empty result becomes `_unnamed`,
/// a leading digit gets a `_` prefix. A string that is already an identifier is returned as is.
/// Non-ASCII characters count as invalid. O(length).
/// Example: `block1-0_weight` -> `block1_0_weight`, `0_cache` -> `_0_cache`, `a--b` -> `a_b`.
/// Mirrors the first half of `_Namespace.create_name` (torch/fx/graph.py).
[[nodiscard]] inline std::string sanitize_name(std::string_view candidate) {
  std::string out;
  out.reserve(candidate.size() + 1);
  bool in_bad_run = false;
  for (char c : candidate) {
    if (detail::is_ident_char(c)) {
      out.push_back(c);
      in_bad_run = false;
    } else if (!in_bad_run) {
      out.push_back('_');
      in_bad_run = true;
    }
  }
  if (out.empty()) out = "_unnamed";
  if (detail::is_ascii_digit(out.front())) out.insert(out.begin(), '_');
  return out;
}

/// A valid identifier split like FX's `_name_regex` `^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$`:
/// `add_12` -> {base "add", number "12"}, `x__3` -> {"x_", "3"}, `_1` -> {"_1", ""}.
struct NameParts {
  std::string_view base;
  std::string_view number;  ///< digits after the last `_`, empty when there is none
};

/// Splits a valid identifier into base and numeric suffix (see NameParts). O(length).
[[nodiscard]] inline NameParts split_name(std::string_view name) noexcept {
  const auto pos = name.rfind('_');
  if (pos == std::string_view::npos || pos == 0 || pos + 1 == name.size()) return {name, {}};
  for (std::size_t i = pos + 1; i < name.size(); ++i) {
    if (!detail::is_ascii_digit(name[i])) return {name, {}};
  }
  return {name.substr(0, pos), name.substr(pos + 1)};
}

class Graph;
class Namespace;

/// While alive, makes `propose` on one namespace, on this thread, take a requested name as given
/// when FX's rule would change it and no node holds it: a Python builtin or keyword (`input`,
/// `min`, `sum`, `list`, `class`), or a string that is not an identifier. Everything else about
/// the request is FX's: the counters move as FX's `create_name` moves them, and the name FX would
/// have handed out instead (`input_1`) is taken too, as it is in torch. A name already taken is
/// never duplicated: it gets FX's unique name.
///
/// This is how torch's deserializer treats the names a file fixes: it creates each node with
/// FX's rule, then overwrites the node's name with the serialized one (`sync_fx_node`), so a
/// loaded program keeps every serialized value name. epgraph's loaders hold one of these around
/// exactly the nodes torch renames that way (graph inputs, single-output nodes, getitem nodes of
/// named outputs). Names a C++ pass requests go through FX's rule (`input` -> `input_1`): Python
/// code generated for the graph (`ep.module()`) must be able to bind them.
///
/// Scopes nest (also for different namespaces) and must be destroyed in reverse order of
/// creation, as block-scoped objects are. O(1); no allocation.
class VerbatimNames {
 public:
  /// Starts taking requested names as given in `names` on this thread.
  explicit VerbatimNames(const Namespace& names) noexcept : names_(&names), prev_(top()) {
    top() = this;
  }
  VerbatimNames(const VerbatimNames&) = delete;
  VerbatimNames& operator=(const VerbatimNames&) = delete;
  /// Ends this scope.
  ~VerbatimNames() { top() = prev_; }

  /// Whether a scope for `names` is alive on this thread. O(number of live scopes).
  [[nodiscard]] static bool active(const Namespace* names) noexcept {
    for (const VerbatimNames* s = top(); s != nullptr; s = s->prev_) {
      if (s->names_ == names) return true;
    }
    return false;
  }

 private:
  static const VerbatimNames*& top() noexcept {
    static thread_local const VerbatimNames* scope = nullptr;
    return scope;
  }
  const Namespace* names_;
  const VerbatimNames* prev_;
};

/// FX's `_Namespace`: hands out unique node names. Every name ever created stays taken, so a name
/// freed by erasing a node is never handed out again (FX's `_used_names` never shrinks).
///
/// Numbers are kept as decimal strings, so suffixes of any length behave exactly as in Python.
///
/// A Graph's own namespace does not store the names of its live nodes a second time: it asks the
/// graph's name index whether a name is held by a node, and stores only the names given up by
/// erased or renamed nodes. A copy of a graph's namespace (`Namespace ns = graph.names();`) is a
/// namespace of its own for the names it creates, and still asks the graph about live node names
/// (so the graph must outlive the copy's `propose`/`create_name`/`is_used`/`size` calls).
/// Mirrors `torch.fx.graph._Namespace` (torch 2.13).
class Namespace {
 public:
  /// The outcome of `propose`: the name to take and the counter update that goes with it.
  struct Proposal {
    std::string name;
    std::string base;
    std::string number;  ///< new value of the base's counter

   private:
    friend class Namespace;
    bool new_base_ = false;
    std::string shadow_;  // under VerbatimNames: the name FX would have given, also taken
  };

  /// An empty namespace.
  Namespace() = default;
  /// A copy: same names taken, same counters (see the class comment for a graph's namespace).
  Namespace(const Namespace& other)
      : used_(other.used_),
        base_count_(other.base_count_),
        owner_(other.owner_),
        owner_holds_(other.owner_holds_),
        owner_count_(other.owner_count_) {}
  /// Copies names and counters (see the copy constructor). Strong guarantee.
  Namespace& operator=(const Namespace& other) {
    Namespace copy(other);
    swap(copy);
    return *this;
  }
  ~Namespace() = default;

  /// Computes the unique name FX would give `candidate` now, without taking it. O(length + k)
  /// where k is the number of taken names skipped (usually 0 or 1). Under a VerbatimNames scope
  /// for this namespace, a non-empty `candidate` that is not taken is the name proposed, even
  /// when FX would change it (see VerbatimNames).
  [[nodiscard]] Proposal propose(std::string_view candidate) const {
    Proposal p = propose_fx(candidate);
    if (p.name != candidate && !candidate.empty() && VerbatimNames::active(this) &&
        !is_used(candidate)) {
      p.shadow_ = std::move(p.name);
      p.name = std::string(candidate);
    }
    return p;
  }

  /// Takes the proposed name. Strong guarantee: on failure (allocation) nothing changes. The
  /// proposal must come from `propose` on this namespace with no other change in between; commit
  /// keeps in it what `uncommit` needs to undo the step. (A graph's own namespace records the
  /// name in the graph's index instead, which the graph does right after.)
  void commit(Proposal& p) {
    const bool record = !owned_;
    const bool shadow = !p.shadow_.empty();
    used_.reserve_more(std::size_t{record} + std::size_t{shadow},
                       (record ? p.name.size() : 0) + p.shadow_.size());
    auto counter = base_count_.try_emplace(p.base);
    // No-throw from here on.
    if (record) used_.insert_reserved(p.name);
    if (shadow) used_.insert_reserved(p.shadow_);
    p.new_base_ = counter.second;
    counter.first->second.swap(p.number);  // p.number now holds the previous counter
  }

  /// Undoes the last `commit(p)` (nothing else may have been committed since). No-throw.
  void uncommit(Proposal& p) noexcept {
    if (!p.shadow_.empty()) used_.erase(p.shadow_);  // the reverse order of commit
    if (!owned_) used_.erase(p.name);
    auto it = base_count_.find(p.base);
    if (it == base_count_.end()) return;
    if (p.new_base_) {
      base_count_.erase(it);
    } else {
      it->second.swap(p.number);
    }
  }

 private:
  // FX's create_name without taking the name.
  [[nodiscard]] Proposal propose_fx(std::string_view candidate) const {
    std::string name = is_identifier(candidate) ? std::string(candidate) : sanitize_name(candidate);
    const NameParts parts = split_name(name);
    std::string base(parts.base);
    std::string number;
    if (!parts.number.empty() && !is_used(name)) {
      // A free numbered name is the answer (FX's loop would find it free again: not probed).
      number = detail::normalize_decimal(parts.number);
    } else {
      auto it = base_count_.find(base);
      number = it == base_count_.end() ? "0" : it->second;
      if (is_reserved_name(name)) {
        number = detail::increment_decimal(number);
        name = base + "_" + number;
      }
      while (is_used(name)) {
        number = detail::increment_decimal(number);
        name = base + "_" + number;
      }
    }
    Proposal p;
    p.name = std::move(name);
    p.base = std::move(base);
    p.number = std::move(number);
    return p;
  }

 public:
  /// `propose` then `commit`: FX's `create_name(candidate, None)`. Returns the name taken.
  std::string create_name(std::string_view candidate) {
    Proposal p = propose(candidate);
    commit(p);
    return std::move(p.name);
  }

  /// True when `name` was handed out (or marked used) before. O(1) on average; does not
  /// allocate.
  [[nodiscard]] bool is_used(std::string_view name) const {
    if (owner_ != nullptr && owner_holds_(owner_, name)) return true;
    return used_.contains(name);
  }

  /// Exchanges contents (names, counters, and the graph consulted for live names; which
  /// namespace belongs to a graph does not move). No-throw.
  void swap(Namespace& other) noexcept {
    used_.swap(other.used_);
    base_count_.swap(other.base_count_);
    std::swap(owner_, other.owner_);
    std::swap(owner_holds_, other.owner_holds_);
    std::swap(owner_count_, other.owner_count_);
  }

  /// Number of names taken so far. O(1).
  [[nodiscard]] std::size_t size() const noexcept {
    return used_.size() + (owner_ != nullptr ? owner_count_(owner_) : 0);
  }

  /// Equal when the same names are taken and the same counters are kept. For namespaces that
  /// consult a graph (a graph's own namespace and its copies), the names held by live nodes are
  /// the graph's node names and are not compared; the names given up by erased or renamed nodes
  /// and the counters are.
  friend bool operator==(const Namespace& a, const Namespace& b) {
    return a.used_ == b.used_ && a.base_count_ == b.base_count_;
  }

 private:
  friend class Graph;

  using holds_fn = bool (*)(const void*, std::string_view);
  using count_fn = std::size_t (*)(const void*) noexcept;

  // Makes this the namespace of `owner`, which holds the names of its live nodes. Graph only.
  void attach(const void* owner, holds_fn holds, count_fn count) noexcept {
    owner_ = owner;
    owner_holds_ = holds;
    owner_count_ = count;
    owned_ = true;
  }
  // Takes names and counters of `other` (a graph's clone). Strong guarantee.
  void assign_names(const Namespace& other) {
    detail::StringSet used = other.used_;
    std::unordered_map<std::string, std::string> counts = other.base_count_;
    used_.swap(used);
    base_count_.swap(counts);
  }
  // Records a name a live node gives up (erase, rename): it stays taken. Returns whether it was
  // new. Strong guarantee. O(length) on average.
  bool retire(std::string_view name) { return used_.insert(name); }
  // Phase 1 of retiring many names at once (dead-code elimination): room for `count` names of
  // `bytes` characters in total. Strong guarantee.
  void reserve_retired(std::size_t count, std::size_t bytes) { used_.reserve_more(count, bytes); }
  // Phase 2: records `name_of(*it)` for every `it` in [first, last) without allocating. No-throw
  // when `name_of` is.
  template <class It, class NameOf>
  void retire_reserved(It first, It last, const NameOf& name_of) noexcept {
    used_.insert_many_reserved(first, last, name_of);
  }
  // Undoes a retire(name) that returned true, the last change of the given-up names. No-throw.
  void unretire(std::string_view name) noexcept { (void)used_.erase(name); }

  static bool is_identifier(std::string_view s) noexcept {
    if (s.empty() || detail::is_ascii_digit(s.front())) return false;
    return std::all_of(s.begin(), s.end(), detail::is_ident_char);
  }

  detail::StringSet used_;  // every name, or for a graph: names given up
  std::unordered_map<std::string, std::string> base_count_;
  const void* owner_ = nullptr;  // the graph whose live node names count as used
  holds_fn owner_holds_ = nullptr;
  count_fn owner_count_ = nullptr;
  bool owned_ = false;  // this is owner_'s own namespace: live names are not stored here
};

}  // namespace epgraph
