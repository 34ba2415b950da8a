// Reading a serialized graph signature (input and output specs) into an ExportGraphSignature.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the reader).

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../../program/graph_signature.hpp"
#include "../error.hpp"
#include "checked_access.hpp"
#include "read_values.hpp"
#include "tree.hpp"

namespace epgraph::json::detail {

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

// One spec union (InputSpec or OutputSpec, `j` at `path`): its member, the member's value at its
// path, and the reads the spec kinds share (a target name, the spec's tensor).
class SpecUnion {
 public:
  SpecUnion(const ojson& j, const Path& path, const ValueTable& values)
      : member_(union_member(j, path)), path_(at_key(path, member_.first)), values_(values) {}
  // The member's name ("parameter", "buffer_mutation", ...).
  [[nodiscard]] const std::string& kind() const noexcept { return member_.first; }
  // The member's value and its path.
  [[nodiscard]] const ojson& body() const noexcept { return *member_.second; }
  [[nodiscard]] const Path& path() const noexcept { return path_; }
  // The string field `key` of the value (a target: "parameter_name", "buffer_name", ...).
  [[nodiscard]] std::string target(const char* key) const {
    return get_string(field(body(), path_, key), at_key(path_, key));
  }
  // The name of the value's tensor `arg`, resolved against the graph's values.
  [[nodiscard]] std::string tensor_name() const { return spec_tensor_name(body(), path_, values_); }

 private:
  std::pair<std::string, const ojson*> member_;
  Path path_;
  const ValueTable& values_;
};

inline InputSpec input_spec(const ojson& j, const Path& path, const ValueTable& values,
                            bool legacy) {
  const SpecUnion u(j, path, values);
  const std::string& m = u.kind();
  const ojson& s = u.body();
  const Path& p = u.path();
  auto target = [&](const char* key) { return u.target(key); };
  return make_spec<InputSpec>(path, [&]() -> InputSpec {
    if (m == "user_input") {
      return InputSpec(InputKind::USER_INPUT,
                       argument_spec(field(s, p, "arg"), at_key(p, "arg"), values));
    }
    if (m == "parameter") {
      return InputSpec(InputKind::PARAMETER, TensorArgument{u.tensor_name()},
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
      return InputSpec(InputKind::BUFFER, TensorArgument{u.tensor_name()}, target("buffer_name"),
                       persistent);
    }
    if (m == "tensor_constant") {
      return InputSpec(InputKind::CONSTANT_TENSOR, TensorArgument{u.tensor_name()},
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
      return InputSpec(InputKind::TOKEN, TokenArgument{u.tensor_name()});
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
  const SpecUnion u(j, path, values);
  const std::string& m = u.kind();
  auto target = [&](const char* key) { return u.target(key); };
  auto tensor = [&]() { return TensorArgument{u.tensor_name()}; };
  return make_spec<OutputSpec>(path, [&]() -> OutputSpec {
    if (m == "user_output") {
      return OutputSpec(OutputKind::USER_OUTPUT, argument_spec(field(u.body(), u.path(), "arg"),
                                                               at_key(u.path(), "arg"), values));
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
    if (m == "token") return OutputSpec(OutputKind::TOKEN, TokenArgument{u.tensor_name()});
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

}  // namespace epgraph::json::detail
