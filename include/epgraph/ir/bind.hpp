// Normalized arguments: which value feeds which schema argument of a call, defaults included
// (FX's Node.normalized_arguments).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../ops/registry.hpp"
#include "../ops/schema.hpp"
#include "argument.hpp"
#include "detail/call_check.hpp"
#include "graph.hpp"
#include "node.hpp"

namespace epgraph {

namespace detail {

inline Argument parse_default_scalar(std::string_view t, const SchemaType& type,
                                     std::string_view context) {
  using K = SchemaType::Kind;
  const K k = type.unwrap_optional().kind;
  if (t == "None") return none;
  if (t == "True") return true;
  if (t == "False") return false;
  if (!t.empty() && (t.front() == '"' || t.front() == '\'')) {
    std::string out;
    for (std::size_t i = 1; i + 1 < t.size(); ++i) {
      char c = t[i];
      if (c == '\\' && i + 2 < t.size()) {
        c = t[++i];
        switch (c) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'f': c = '\f'; break;
          case 'v': c = '\v'; break;
          case 'r': c = '\r'; break;
          default: break;  // \\, \", \' stand for themselves
        }
      }
      out.push_back(c);
    }
    return Argument(std::move(out));
  }
  if (t == "contiguous_format") return MemoryFormat::ContiguousFormat;
  if (t == "preserve_format") return MemoryFormat::PreserveFormat;
  if (t == "channels_last") return MemoryFormat::ChannelsLast;
  if (t == "strided") return Layout::Strided;
  const bool is_float = t.find_first_of(".eE") != std::string_view::npos &&
                        t.find_first_not_of("+-0123456789.eE") == std::string_view::npos;
  try {
    std::size_t used = 0;
    const std::string s(t);
    if (is_float || k == K::Float || k == K::SymFloat) {
      const double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } else {
      const long long v = std::stoll(s, &used);
      if (used == s.size()) return static_cast<std::int64_t>(v);
    }
  } catch (const std::exception&) {
  }
  if (k == K::ScalarType) return parse_dtype(t);
  throw value_error("Cannot read the default value '" + std::string(t) + "' of " +
                    std::string(context));
}

}  // namespace detail

/// The value a schema argument's default stands for (`None` -> None, `1` -> int 1, `1.` ->
/// float 1.0, `[0, 0]` -> a list, `"mean"` -> str, `int[2] stride=1` -> [1, 1], `float eps=1`
/// -> 1.0). Returns None when the argument has no default. Throws value_error naming the
/// argument for a default it cannot read. O(length of the default). Mirrors c10's default value
/// parsing (`torch._C.Argument.default_value`).
[[nodiscard]] inline Argument default_argument(const SchemaArgument& a) {
  if (!a.default_value) return none;
  const std::string& t = *a.default_value;
  const std::string context = "argument '" + a.name + "'";
  const SchemaType& type = a.type.unwrap_optional();
  const SchemaType* elem = type.kind == SchemaType::Kind::List
                               ? &type.elements[0]
                               : static_cast<const SchemaType*>(nullptr);
  if (!t.empty() && t.front() == '[') {
    ArgumentList items;
    std::string_view body(t);
    body = body.substr(1, body.size() - 2);
    while (!body.empty()) {
      const auto comma = body.find(',');
      std::string_view item = body.substr(0, comma);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      if (!item.empty())
        items.push_back(detail::parse_default_scalar(item, elem ? *elem : type, context));
      if (comma == std::string_view::npos) break;
      body = body.substr(comma + 1);
    }
    return Argument(std::move(items));
  }
  Argument scalar = detail::parse_default_scalar(t, elem ? *elem : type, context);
  if (elem != nullptr && !scalar.is_none()) {  // `int[2] stride=1` means [1, 1]
    const std::size_t n = type.fixed_size > 0 ? static_cast<std::size_t>(type.fixed_size) : 1;
    return Argument(ArgumentList(n, scalar));
  }
  return scalar;
}

/// A call's arguments bound to its operator schema: for every schema argument, in schema
/// order, the value the call gives it (positionally or by keyword) or its default. FX's
/// `Node.normalized_arguments` / `torch.fx.operator_schemas.normalize_function`. Holds copies
/// of the values (nodes as non-owning pointers): valid while the nodes it names live.
class NormalizedArguments {
 public:
  /// Binds `args`/`kwargs` to `schema` (which must outlive the result). Throws value_error
  /// "<reason>; schema: <schema>" with the reasons of Graph::check_call when they do not bind.
  /// O(schema arguments * kwargs + size of the values).
  NormalizedArguments(const FunctionSchema& schema, ArgumentView args, const Kwargs& kwargs)
      : schema_(&schema) {
    const std::string why = detail::bind_call<Node>(schema, args, kwargs, &bindings_);
    if (!why.empty()) throw value_error(why + "; schema: " + schema.str());
    values_.reserve(bindings_.size());
    for (std::size_t i = 0; i < bindings_.size(); ++i) {
      const ArgumentBinding& b = bindings_[i];
      switch (b.source) {
        case BindingSource::positional: values_.push_back(args[b.index]); break;
        case BindingSource::keyword: values_.push_back(kwargs[b.index].second); break;
        case BindingSource::default_value:
          values_.push_back(default_argument(schema.arguments[i]));
          break;
      }
    }
    for (std::size_t i = positional_count(schema); i < args.size(); ++i) {
      extra_.push_back(args[i]);  // after `...`
    }
  }

  /// The schema bound to. O(1).
  [[nodiscard]] const FunctionSchema& schema() const noexcept { return *schema_; }
  /// Number of schema arguments. O(1).
  [[nodiscard]] std::size_t size() const noexcept { return values_.size(); }
  /// The value of schema argument `i` (given or default). Throws std::out_of_range. O(1).
  [[nodiscard]] const Argument& at(std::size_t i) const { return values_.at(i); }
  /// Where schema argument `i` got its value. Throws std::out_of_range. O(1).
  [[nodiscard]] ArgumentBinding binding(std::size_t i) const { return bindings_.at(i); }
  /// True when the call gives argument `i` itself (not its default). Throws std::out_of_range.
  [[nodiscard]] bool given(std::size_t i) const {
    return bindings_.at(i).source != BindingSource::default_value;
  }
  /// The value of the argument named `name`. Throws value_error "aten::add.Tensor has no
  /// argument 'x'". O(schema arguments).
  [[nodiscard]] const Argument& operator[](std::string_view name) const {
    const std::ptrdiff_t i = schema_->argument_index(name);
    if (i < 0) {
      throw value_error(schema_->qualified_name() + " has no argument '" + std::string(name) + "'");
    }
    return values_[static_cast<std::size_t>(i)];
  }
  /// Positional arguments past the schema's own (`...` schemas only). O(1).
  [[nodiscard]] const ArgumentList& varargs() const noexcept { return extra_; }

  /// FX's normalized (args, kwargs) pair: every argument that is not keyword-only as a
  /// positional argument, the keyword-only ones as kwargs, defaults filled in (FX
  /// `normalize_function(..., normalize_to_only_use_kwargs=False)`). O(size).
  [[nodiscard]] std::pair<ArgumentList, Kwargs> args_kwargs() const {
    std::pair<ArgumentList, Kwargs> out;
    for (std::size_t i = 0; i < values_.size(); ++i) {
      if (schema_->arguments[i].kwarg_only) {
        out.second.emplace_back(schema_->arguments[i].name, values_[i]);
      } else {
        out.first.push_back(values_[i]);
      }
    }
    for (const Argument& a : extra_) out.first.push_back(a);
    return out;
  }

 private:
  static std::size_t positional_count(const FunctionSchema& s) {
    std::size_t n = 0;
    for (const SchemaArgument& a : s.arguments) n += a.kwarg_only ? 0 : 1;
    return n;
  }
  const FunctionSchema* schema_;
  std::vector<ArgumentBinding> bindings_;
  ArgumentList values_;
  ArgumentList extra_;
};

/// The schema of a call_function node's target in `registry` (nullptr for other ops, other
/// target forms and unregistered operators). O(log registry).
[[nodiscard]] inline const FunctionSchema* schema_of(
    const Node& node, const OperatorRegistry& registry = global_registry()) {
  if (node.op() != OpCode::call_function) return nullptr;
  return registry.find_target(node.target());
}

/// The node's arguments bound to its operator's schema (FX `Node.normalized_arguments`), or
/// nothing when `schema_of(node)` is null. Throws value_error "Node 'add'
/// (torch.ops.aten.add.Tensor) does not match its schema: <reason>; schema: <schema>" when they
/// do not bind (possible for nodes loaded from a file or built with schema checks off).
/// O(size of the arguments).
[[nodiscard]] inline std::optional<NormalizedArguments> normalized_arguments(
    const Node& node, const OperatorRegistry& registry = global_registry()) {
  const FunctionSchema* s = schema_of(node, registry);
  if (s == nullptr) return std::nullopt;
  try {
    return NormalizedArguments(*s, node.args(), node.kwargs());
  } catch (const value_error& e) {
    throw value_error("Node '" + std::string(node.name()) + "' (" + std::string(node.target()) +
                      ") does not match its schema: " + e.what());
  }
}

}  // namespace epgraph
