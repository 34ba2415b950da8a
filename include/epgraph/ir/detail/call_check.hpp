// Binding a call's args/kwargs to an operator schema and checking each value against its type:
// the engine behind Graph::create_node's checks, normalized_arguments and verify.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../../ops/schema.hpp"
#include "../argument.hpp"
#include "../value.hpp"

namespace epgraph {

/// How one schema argument of a call got its value.
enum class BindingSource : std::uint8_t {
  positional,     ///< from args()[index]
  keyword,        ///< from kwargs()[index]
  default_value,  ///< not given: the schema's default applies
};

/// Where schema argument i of a call takes its value from (see bind_arguments).
struct ArgumentBinding {
  BindingSource source = BindingSource::default_value;
  std::size_t index = 0;  ///< position in args() or kwargs(); 0 for a default
};

namespace detail {

// What a node's value is, for type checks: N is Node (a template so that this header does not
// need Node's definition).
template <class N>
const NodeValue& value_of(const Node* n) {
  return static_cast<const N*>(n)->meta().val;
}

template <class N>
std::string describe_argument(const Argument& a) {
  if (const Node* n = a.node()) {
    const NodeValue& v = value_of<N>(n);
    return "node '" + std::string(static_cast<const N*>(n)->name()) + "'" +
           (v.has_value() ? " (" + v.describe() + ")" : std::string());
  }
  if (a.is_none()) return "None";
  if (a.is<bool>()) return std::string("bool ") + (a.as<bool>() ? "True" : "False");
  if (a.is<std::int64_t>()) return "int " + std::to_string(a.as<std::int64_t>());
  if (a.is<double>()) return "float " + std::to_string(a.as<double>());
  if (a.is<std::string>()) return "str '" + a.as<std::string>() + "'";
  if (a.is<dtype>()) return "dtype torch." + std::string(dtype_name(a.as<dtype>()));
  if (a.is<Layout>()) return "layout torch." + std::string(layout_name(a.as<Layout>()));
  if (a.is<MemoryFormat>()) return "memory format";
  if (a.is<Device>()) return "device '" + a.as<Device>().str() + "'";
  return "a list of " + std::to_string(a.list()->size()) + " values";
}

// Whether `a` may be passed where `t` is expected. Composite and unnamed types (`t`, `Any`,
// Dict, Tuple, classes) accept anything: epgraph checks what torch.export programs use.
//
// `sym_as_tensor`: whether a SymInt/SymFloat/SymBool node may stand where a Tensor is expected
// (see symbolic_scalar_as_tensor).
template <class N>
bool argument_fits(const SchemaType& t, const Argument& a, bool in_list = false,
                   bool sym_as_tensor = false) {
  using K = SchemaType::Kind;
  const Node* n = a.node();
  const NodeValue* v = n ? &value_of<N>(n) : nullptr;
  const bool unknown = v && (!v->has_value() || v->is_none());
  switch (t.kind) {
    case K::Tensor:  // a Python number is a wrapped-number tensor (`aten.add.Tensor(x, 1)`)
      if (v == nullptr) {
        if (in_list) return false;
        if (a.is<std::int64_t>() || a.is<double>() || a.is<bool>()) return true;
        const ArgumentList* l = a.list();  // a complex number as [real, imag]
        return l != nullptr && l->size() == 2 && (*l)[0].is<double>() && (*l)[1].is<double>();
      }
      return unknown || v->tensor() != nullptr ||
             (sym_as_tensor && !in_list && v->is_symbolic_scalar());
    case K::Optional:
      return a.is_none() || argument_fits<N>(t.elements[0], a, in_list, sym_as_tensor);
    case K::Int: return a.is<std::int64_t>() || (v && v->sym_int());
    case K::SymInt: return a.is<std::int64_t>() || (v && (unknown || v->sym_int()));
    case K::Float:
      return a.is<double>() || a.is<std::int64_t>() || (v && (v->sym_float() || v->sym_int()));
    case K::SymFloat:
      return a.is<double>() || a.is<std::int64_t>() ||
             (v && (unknown || v->sym_float() || v->sym_int()));
    case K::Bool: return a.is<bool>() || (v && v->sym_bool());
    case K::SymBool: return a.is<bool>() || (v && (unknown || v->sym_bool()));
    case K::Scalar:
      if (a.is<double>() || a.is<std::int64_t>() || a.is<bool>()) return true;
      if (const ArgumentList* l = a.list()) {  // a complex number as [real, imag]
        return l->size() == 2 && (*l)[0].is<double>() && (*l)[1].is<double>();
      }
      return v && (unknown || v->is_symbolic_scalar());
    case K::Complex:
      if (a.is<double>() || a.is<std::int64_t>()) return true;
      if (const ArgumentList* l = a.list()) {
        return l->size() == 2 && (*l)[0].is<double>() && (*l)[1].is<double>();
      }
      return false;
    case K::ScalarType: return a.is<dtype>();
    case K::Layout: return a.is<Layout>();
    case K::MemoryFormat: return a.is<MemoryFormat>();
    case K::Device: return a.is<Device>() || a.is<std::string>();
    case K::String:
    case K::Dimname: return a.is<std::string>();
    case K::Generator: return n != nullptr;
    case K::List: {
      const SchemaType& e = t.elements[0];
      if (const ArgumentList* l = a.list()) {
        // The N of `int[N]` is no length check: torch passes `dim=[1, 2]` to `int[1]? dim`.
        for (const Argument& x : *l) {
          if (!argument_fits<N>(e, x, true)) return false;
        }
        return true;
      }
      // A node whose value is unknown (no meta().val) may stand for the whole list, as it may
      // stand for a tensor or a SymInt: the placeholder of a pattern graph binds a list literal
      // (`expand(x, size)`, `cat(tensors)`), and torch.fx does not check patterns at all. A
      // node whose value is known (a tensor, a SymInt) is no list.
      if (v != nullptr && !v->has_value() && !in_list) return true;
      // `int[2] stride=1`: a lone int stands for the whole list (c10's IntArrayRef rule).
      const SchemaType::Kind ek = e.kind;
      return t.fixed_size >= 0 && (ek == K::Int || ek == K::SymInt) && argument_fits<N>(e, a);
    }
    default: return true;
  }
}

// Whether torch lets a SymInt/SymFloat (a node of the graph) stand for a Tensor argument of `s`:
// run_decompositions() on a dynamic program passes `mod` (a SymInt) to aten.add.Tensor
// (torch.roll), and torch runs and verifies it; a SymFloat goes the same way. Torch wraps the
// number for the arithmetic overloads below, the copies and conversions, and every prims operator;
// any other operator (`aten.index_copy(sym_size, ...)`) fails in torch, so it is refused here too
// (probed on torch 2.13 by calling each Core ATen operator with a SymInt in a dynamic export).
// O(1).
inline bool symbolic_scalar_as_tensor(const FunctionSchema& s) noexcept {
  if (s.op_namespace() == "prims") return true;
  if (s.op_namespace() != "aten") return false;
  static constexpr std::string_view wrapped[] = {
      "add",    "add_",    "sub",          "sub_",          "subtract", "subtract_",
      "mul",    "mul_",    "multiply",     "multiply_",     "div",      "div_",
      "divide", "divide_", "true_divide",  "true_divide_",  "to",       "_to_copy",
      "copy",   "copy_",   "floor_divide", "floor_divide_", "_conj"};
  const std::string_view name = s.op_name();
  for (std::string_view w : wrapped) {
    if (name == w) return true;
  }
  return false;
}

// Binds args/kwargs to `s` as torch does when it calls an OpOverload (FX: `normalize_function`,
// c10: `FunctionSchema::checkAndNormalizeInputs`). Fills `out` when given (one binding per schema
// argument; unspecified when the call does not bind) and returns an empty string, or returns why
// the call does not bind (no exception: the caller words the error). O(schema arguments * kwargs +
// size of the values).
template <class N>
std::string bind_call(const FunctionSchema& s, ArgumentView args, const Kwargs& kwargs,
                      std::vector<ArgumentBinding>* out) {
  std::size_t positional_capacity = 0;
  for (const SchemaArgument& a : s.arguments) {
    if (!a.kwarg_only) ++positional_capacity;
  }
  if (args.size() > positional_capacity && !s.is_vararg) {
    return std::to_string(args.size()) + " positional arguments given, but it takes " +
           (positional_capacity == s.arguments.size() ? "" : "at most ") +
           std::to_string(positional_capacity);
  }
  for (std::size_t k = 0; k < kwargs.size(); ++k) {
    const std::string& key = kwargs[k].first;
    const std::ptrdiff_t i = s.argument_index(key);
    if (i < 0) return "unknown keyword argument '" + key + "'";
    if (static_cast<std::size_t>(i) < args.size() &&
        !s.arguments[static_cast<std::size_t>(i)].kwarg_only) {
      return "argument '" + key + "' given both by position and by keyword";
    }
    for (std::size_t j = 0; j < k; ++j) {
      if (kwargs[j].first == key) return "keyword argument '" + key + "' given twice";
    }
  }
  // Bindings are recorded only when asked for: checking a call allocates nothing.
  if (out != nullptr) out->assign(s.arguments.size(), ArgumentBinding{});
  ArgumentBinding scratch;
  const bool sym_as_tensor = symbolic_scalar_as_tensor(s);
  std::size_t next_positional = 0;
  for (std::size_t i = 0; i < s.arguments.size(); ++i) {
    const SchemaArgument& sa = s.arguments[i];
    ArgumentBinding& b = out != nullptr ? (*out)[i] : scratch;
    const Argument* value = nullptr;
    if (!sa.kwarg_only && next_positional < args.size()) {
      b = {BindingSource::positional, next_positional};
      value = &args[next_positional++];
    } else {
      for (std::size_t k = 0; k < kwargs.size(); ++k) {
        if (kwargs[k].first == sa.name) {
          b = {BindingSource::keyword, k};
          value = &kwargs[k].second;
        }
      }
    }
    if (value == nullptr) {
      if (!sa.default_value) return "missing required argument '" + sa.name + "'";
      b = {BindingSource::default_value, 0};
      continue;
    }
    if (!argument_fits<N>(sa.type, *value, false, sym_as_tensor)) {
      return "argument '" + sa.name + "' expects " + sa.type.str() + ", got " +
             describe_argument<N>(*value);
    }
  }
  return {};
}

}  // namespace detail
}  // namespace epgraph
