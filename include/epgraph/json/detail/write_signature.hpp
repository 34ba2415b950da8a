// Writing a graph signature (input and output specs) as torch's serialized GraphSignature.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the writer).

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "../../program/exported_program.hpp"
#include "../../program/graph_signature.hpp"
#include "checked_access.hpp"
#include "text.hpp"
#include "tree.hpp"
#include "write_values.hpp"

namespace epgraph::json::detail {

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

}  // namespace epgraph::json::detail
