// The record torch's serializer would write for a node made in C++, derived from its operator's
// schema (the writer's side; a node read from a file has the record the reader kept).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the writer).

#include <cstddef>
#include <string>
#include <vector>

#include "../../ir/argument.hpp"
#include "../../ir/detail/call_check.hpp"
#include "../../ir/graph.hpp"
#include "../../ops/registry.hpp"
#include "../../ops/schema.hpp"
#include "../error.hpp"
#include "node_record.hpp"
#include "tree.hpp"

namespace epgraph::json::detail {

// --- nodes made in C++ (no record from a file): the record torch's serializer would have
// written, derived from the operator's schema (torch/_export/serde/serialize.py
// serialize_inputs / serialize_outputs). An empty object for other nodes.

// The union member torch writes for `a` passed where `t` is expected, when the value alone
// does not tell it (an empty list takes its element type; a complex Scalar is as_complex);
// empty otherwise (the writer then infers it from the value, as torch does).
inline std::string schema_hint(const SchemaType& type, const Argument& a) {
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
inline ojson schema_outputs(const Node& n, const FunctionSchema& s) {
  using K = SchemaType::Kind;
  const NodeValue& val = n.meta().val;
  auto fail = [&](const std::string& why) {
    throw serialization_error("graph_module.graph.nodes", "node '" + std::string(n.name()) + "' (" +
                                                              std::string(n.target()) +
                                                              ") cannot be written: " + why);
  };
  auto tensor_list = [&](const NodeValue* v, std::size_t idx) {
    if (v == nullptr || v->elements() == nullptr) {
      fail("return " + std::to_string(idx) + " is " + s.returns[idx].type.str() +
           ", so meta().val must give a list of tensors there");
    }
    Tree items(ojson::array());
    for (std::size_t k = 0; k < v->elements()->size(); ++k) items->push_back(object_of("name", ""));
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
inline ojson schema_record(const Node& n) {
  if (n.op() != OpCode::call_function) return ojson::object();
  const FunctionSchema* s = global_registry().find_target(n.target());
  if (s == nullptr) return ojson::object();
  std::vector<ArgumentBinding> bindings;
  const std::string why = epgraph::detail::bind_call<Node>(*s, n.args(), n.kwargs(), &bindings);
  if (!why.empty()) {
    throw serialization_error("graph_module.graph.nodes",
                              "node '" + std::string(n.name()) + "' (" + std::string(n.target()) +
                                  ") does not match its schema: " + why + "; schema: " + s->str());
  }
  Tree args(ojson::array());
  Tree kwargs(ojson::array());
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    const SchemaArgument& sa = s->arguments[i];
    if (bindings[i].source == BindingSource::positional) {
      args->push_back(object_of(record_key::name, sa.name, record_key::as,
                                schema_hint(sa.type, n.args()[bindings[i].index]), record_key::kind,
                                kPositional));
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

}  // namespace epgraph::json::detail
