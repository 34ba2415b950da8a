// ExportGraphSignature: InputKind/OutputKind, InputSpec/OutputSpec and their derived views.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "../error.hpp"
#include "../ir/argument.hpp"

namespace epgraph {

/// What a graph input is (torch.export.graph_signature.InputKind; same order and values).
enum class InputKind { USER_INPUT = 1, PARAMETER, BUFFER, CONSTANT_TENSOR, CUSTOM_OBJ, TOKEN };

/// What a graph output is (torch.export.graph_signature.OutputKind; same order and values).
enum class OutputKind {
  USER_OUTPUT = 1,
  LOSS_OUTPUT,
  BUFFER_MUTATION,
  PARAMETER_MUTATION,
  GRADIENT_TO_PARAMETER,
  GRADIENT_TO_USER_INPUT,
  USER_INPUT_MUTATION,
  TOKEN,
};

/// Torch's name of an input kind ("USER_INPUT", "BUFFER", ...). O(1).
[[nodiscard]] inline std::string_view kind_name(InputKind k) noexcept {
  switch (k) {
    case InputKind::USER_INPUT: return "USER_INPUT";
    case InputKind::PARAMETER: return "PARAMETER";
    case InputKind::BUFFER: return "BUFFER";
    case InputKind::CONSTANT_TENSOR: return "CONSTANT_TENSOR";
    case InputKind::CUSTOM_OBJ: return "CUSTOM_OBJ";
    case InputKind::TOKEN: return "TOKEN";
  }
  return "";
}

/// Torch's name of an output kind ("USER_OUTPUT", "BUFFER_MUTATION", ...). O(1).
[[nodiscard]] inline std::string_view kind_name(OutputKind k) noexcept {
  switch (k) {
    case OutputKind::USER_OUTPUT: return "USER_OUTPUT";
    case OutputKind::LOSS_OUTPUT: return "LOSS_OUTPUT";
    case OutputKind::BUFFER_MUTATION: return "BUFFER_MUTATION";
    case OutputKind::PARAMETER_MUTATION: return "PARAMETER_MUTATION";
    case OutputKind::GRADIENT_TO_PARAMETER: return "GRADIENT_TO_PARAMETER";
    case OutputKind::GRADIENT_TO_USER_INPUT: return "GRADIENT_TO_USER_INPUT";
    case OutputKind::USER_INPUT_MUTATION: return "USER_INPUT_MUTATION";
    case OutputKind::TOKEN: return "TOKEN";
  }
  return "";
}

/// A tensor value named by its graph node (torch `TensorArgument`).
struct TensorArgument {
  std::string name;
  friend bool operator==(const TensorArgument& a, const TensorArgument& b) {
    return a.name == b.name;
  }
};
/// An effect token (torch `TokenArgument`).
struct TokenArgument {
  std::string name;
  friend bool operator==(const TokenArgument& a, const TokenArgument& b) {
    return a.name == b.name;
  }
};
/// A symbolic int (torch `SymIntArgument`).
struct SymIntArgument {
  std::string name;
  friend bool operator==(const SymIntArgument& a, const SymIntArgument& b) {
    return a.name == b.name;
  }
};
/// A symbolic float (torch `SymFloatArgument`).
struct SymFloatArgument {
  std::string name;
  friend bool operator==(const SymFloatArgument& a, const SymFloatArgument& b) {
    return a.name == b.name;
  }
};
/// A symbolic bool (torch `SymBoolArgument`).
struct SymBoolArgument {
  std::string name;
  friend bool operator==(const SymBoolArgument& a, const SymBoolArgument& b) {
    return a.name == b.name;
  }
};
/// A custom (TorchBind) object (torch `CustomObjArgument`).
struct CustomObjArgument {
  std::string name;
  std::string class_fqn;
  friend bool operator==(const CustomObjArgument& a, const CustomObjArgument& b) {
    return a.name == b.name && a.class_fqn == b.class_fqn;
  }
};
/// A constant value in a signature: None, int, float, bool or string.
using ConstantValue = std::variant<None, std::int64_t, double, bool, std::string>;
/// A constant input or output (torch `ConstantArgument`), e.g. an int or None output.
struct ConstantArgument {
  std::string name;
  ConstantValue value;
  friend bool operator==(const ConstantArgument& a, const ConstantArgument& b) {
    return a.name == b.name && a.value == b.value;
  }
};

/// What a spec refers to (torch `ArgumentSpec`). The kind is the held alternative.
using ArgumentSpec = std::variant<TensorArgument, SymIntArgument, SymFloatArgument, SymBoolArgument,
                                  ConstantArgument, CustomObjArgument, TokenArgument>;

/// The `name` field of any ArgumentSpec. O(1).
[[nodiscard]] inline const std::string& arg_name(const ArgumentSpec& arg) noexcept {
  return std::visit([](const auto& a) -> const std::string& { return a.name; }, arg);
}

/// True when the argument names a graph value (every alternative except ConstantArgument).
[[nodiscard]] inline bool names_graph_value(const ArgumentSpec& arg) noexcept {
  return !std::holds_alternative<ConstantArgument>(arg);
}

/// One graph input's meaning (torch `InputSpec`). Built only through its checking constructor.
class InputSpec {
 public:
  /// Builds a spec and checks torch's construction rules. Throws value_error:
  /// - "Failed to specify persistent flag on BUFFER." (torch's message) for a BUFFER without
  ///   `persistent`;
  /// - "Input spec 'x' of kind PARAMETER cannot have a persistent flag" for a non-BUFFER with one;
  /// - "Input spec 'x' of kind BUFFER needs a TensorArgument" (PARAMETER, BUFFER,
  ///   CONSTANT_TENSOR), "... needs a CustomObjArgument" (CUSTOM_OBJ), "... needs a
  ///   TokenArgument" (TOKEN);
  /// - "Input spec 'x' of kind PARAMETER needs a target" (all but USER_INPUT and TOKEN).
  /// Mirrors `InputSpec.__post_init__` (torch/export/graph_signature.py) plus the verifier's
  /// per-kind argument rules (torch/_export/verifier.py).
  InputSpec(InputKind kind, ArgumentSpec arg, std::optional<std::string> target = {},
            std::optional<bool> persistent = {})
      : kind_(kind), arg_(std::move(arg)), target_(std::move(target)), persistent_(persistent) {
    const std::string who =
        "Input spec '" + arg_name(arg_) + "' of kind " + std::string(kind_name(kind_));
    if (kind_ == InputKind::BUFFER && !persistent_) {
      throw value_error("Failed to specify persistent flag on BUFFER.");
    }
    if (kind_ != InputKind::BUFFER && persistent_) {
      throw value_error(who + " cannot have a persistent flag");
    }
    switch (kind_) {
      case InputKind::PARAMETER:
      case InputKind::BUFFER:
      case InputKind::CONSTANT_TENSOR:
        if (!std::holds_alternative<TensorArgument>(arg_)) {
          throw value_error(who + " needs a TensorArgument");
        }
        break;
      case InputKind::CUSTOM_OBJ:
        if (!std::holds_alternative<CustomObjArgument>(arg_)) {
          throw value_error(who + " needs a CustomObjArgument");
        }
        break;
      case InputKind::TOKEN:
        if (!std::holds_alternative<TokenArgument>(arg_)) {
          throw value_error(who + " needs a TokenArgument");
        }
        break;
      case InputKind::USER_INPUT: break;
    }
    if (kind_ != InputKind::USER_INPUT && kind_ != InputKind::TOKEN && !target_) {
      throw value_error(who + " needs a target");
    }
  }

  /// The kind.
  [[nodiscard]] InputKind kind() const noexcept { return kind_; }
  /// The graph value (placeholder) this input binds.
  [[nodiscard]] const ArgumentSpec& arg() const noexcept { return arg_; }
  /// Shortcut for `arg_name(arg())`: the placeholder's name.
  [[nodiscard]] const std::string& name() const noexcept { return arg_name(arg_); }
  /// Fully qualified name in state_dict / constants (`linear.weight`), absent for user inputs.
  [[nodiscard]] const std::optional<std::string>& target() const noexcept { return target_; }
  /// For BUFFER: whether it lives in state_dict (true) or constants (false); absent otherwise.
  [[nodiscard]] std::optional<bool> persistent() const noexcept { return persistent_; }
  /// Renames the placeholder this spec binds (the argument keeps its kind). O(length).
  void set_name(std::string name) {
    std::visit([&](auto& a) { a.name = std::move(name); }, arg_);
  }

  friend bool operator==(const InputSpec& a, const InputSpec& b) {
    return a.kind_ == b.kind_ && a.arg_ == b.arg_ && a.target_ == b.target_ &&
           a.persistent_ == b.persistent_;
  }
  friend bool operator!=(const InputSpec& a, const InputSpec& b) { return !(a == b); }

 private:
  InputKind kind_;
  ArgumentSpec arg_;
  std::optional<std::string> target_;
  std::optional<bool> persistent_;
};

/// One graph output's meaning (torch `OutputSpec`). Built only through its checking constructor.
class OutputSpec {
 public:
  /// Builds a spec and checks the per-kind rules of torch's verifier. Throws value_error:
  /// - "Output spec 'x' of kind BUFFER_MUTATION needs a TensorArgument" (all mutation and
  ///   gradient kinds and LOSS_OUTPUT), "... needs a TokenArgument" (TOKEN);
  /// - "Output spec 'x' of kind BUFFER_MUTATION needs a target" (mutation and gradient kinds).
  OutputSpec(OutputKind kind, ArgumentSpec arg, std::optional<std::string> target = {})
      : kind_(kind), arg_(std::move(arg)), target_(std::move(target)) {
    const std::string who =
        "Output spec '" + arg_name(arg_) + "' of kind " + std::string(kind_name(kind_));
    const bool needs_target =
        kind_ == OutputKind::BUFFER_MUTATION || kind_ == OutputKind::PARAMETER_MUTATION ||
        kind_ == OutputKind::USER_INPUT_MUTATION || kind_ == OutputKind::GRADIENT_TO_PARAMETER ||
        kind_ == OutputKind::GRADIENT_TO_USER_INPUT;
    if ((needs_target || kind_ == OutputKind::LOSS_OUTPUT) &&
        !std::holds_alternative<TensorArgument>(arg_)) {
      throw value_error(who + " needs a TensorArgument");
    }
    if (kind_ == OutputKind::TOKEN && !std::holds_alternative<TokenArgument>(arg_)) {
      throw value_error(who + " needs a TokenArgument");
    }
    if (needs_target && !target_) throw value_error(who + " needs a target");
  }

  /// The kind.
  [[nodiscard]] OutputKind kind() const noexcept { return kind_; }
  /// The graph value returned at this position.
  [[nodiscard]] const ArgumentSpec& arg() const noexcept { return arg_; }
  /// Shortcut for `arg_name(arg())`.
  [[nodiscard]] const std::string& name() const noexcept { return arg_name(arg_); }
  /// What is mutated or differentiated: a state_dict key (BUFFER_MUTATION, PARAMETER_MUTATION,
  /// GRADIENT_TO_PARAMETER) or a user input's placeholder name (USER_INPUT_MUTATION,
  /// GRADIENT_TO_USER_INPUT); absent for other kinds.
  [[nodiscard]] const std::optional<std::string>& target() const noexcept { return target_; }
  /// Renames the graph value this spec returns. O(length).
  void set_name(std::string name) {
    std::visit([&](auto& a) { a.name = std::move(name); }, arg_);
  }
  /// Changes the target (e.g. a USER_INPUT_MUTATION following its input's rename). O(length).
  void set_target(std::optional<std::string> target) { target_ = std::move(target); }

  friend bool operator==(const OutputSpec& a, const OutputSpec& b) {
    return a.kind_ == b.kind_ && a.arg_ == b.arg_ && a.target_ == b.target_;
  }
  friend bool operator!=(const OutputSpec& a, const OutputSpec& b) { return !(a == b); }

 private:
  OutputKind kind_;
  ArgumentSpec arg_;
  std::optional<std::string> target_;
};

/// Ordered (graph name, target) pairs, in spec order: torch's read-only Mapping views.
using NameMap = std::vector<std::pair<std::string, std::string>>;

/// torch.export's `ExportGraphSignature`: the meaning of each graph input and output. It stores
/// only the two spec lists; every view below is computed from them on each call (O(specs)).
/// Mirrors torch/export/graph_signature.py.
struct ExportGraphSignature {
  std::vector<InputSpec> input_specs;
  std::vector<OutputSpec> output_specs;

  /// Targets of PARAMETER inputs, in order.
  [[nodiscard]] std::vector<std::string> parameters() const {
    return input_targets([](const InputSpec& s) { return s.kind() == InputKind::PARAMETER; });
  }
  /// Targets of BUFFER inputs (persistent or not), in order.
  [[nodiscard]] std::vector<std::string> buffers() const {
    return input_targets([](const InputSpec& s) { return s.kind() == InputKind::BUFFER; });
  }
  /// Targets of BUFFER inputs with persistent == false, in order.
  [[nodiscard]] std::vector<std::string> non_persistent_buffers() const {
    return input_targets([](const InputSpec& s) {
      return s.kind() == InputKind::BUFFER && s.persistent() == false;
    });
  }
  /// Targets of CONSTANT_TENSOR inputs, in order.
  [[nodiscard]] std::vector<std::string> lifted_tensor_constants() const {
    return input_targets([](const InputSpec& s) { return s.kind() == InputKind::CONSTANT_TENSOR; });
  }
  /// Targets of CUSTOM_OBJ inputs, in order.
  [[nodiscard]] std::vector<std::string> lifted_custom_objs() const {
    return input_targets([](const InputSpec& s) { return s.kind() == InputKind::CUSTOM_OBJ; });
  }
  /// USER_INPUT values: the placeholder name, or the value of a ConstantArgument.
  [[nodiscard]] std::vector<ConstantValue> user_inputs() const {
    std::vector<ConstantValue> out;
    for (const auto& s : input_specs) {
      if (s.kind() == InputKind::USER_INPUT) out.push_back(user_value(s.arg()));
    }
    return out;
  }
  /// USER_OUTPUT and LOSS_OUTPUT values: the node name, or the value of a ConstantArgument.
  [[nodiscard]] std::vector<ConstantValue> user_outputs() const {
    std::vector<ConstantValue> out;
    for (const auto& s : output_specs) {
      if (s.kind() == OutputKind::USER_OUTPUT || s.kind() == OutputKind::LOSS_OUTPUT) {
        out.push_back(user_value(s.arg()));
      }
    }
    return out;
  }
  /// Placeholder name -> parameter target.
  [[nodiscard]] NameMap inputs_to_parameters() const { return input_map(InputKind::PARAMETER); }
  /// Placeholder name -> buffer target.
  [[nodiscard]] NameMap inputs_to_buffers() const { return input_map(InputKind::BUFFER); }
  /// Placeholder name -> lifted tensor constant target.
  [[nodiscard]] NameMap inputs_to_lifted_tensor_constants() const {
    return input_map(InputKind::CONSTANT_TENSOR);
  }
  /// Placeholder name -> lifted custom object target.
  [[nodiscard]] NameMap inputs_to_lifted_custom_objs() const {
    return input_map(InputKind::CUSTOM_OBJ);
  }
  /// Output node name -> buffer target, for BUFFER_MUTATION outputs.
  [[nodiscard]] NameMap buffers_to_mutate() const {
    return output_map(OutputKind::BUFFER_MUTATION);
  }
  /// Output node name -> parameter target, for PARAMETER_MUTATION outputs.
  [[nodiscard]] NameMap parameters_to_mutate() const {
    return output_map(OutputKind::PARAMETER_MUTATION);
  }
  /// Output node name -> user input name, for USER_INPUT_MUTATION outputs.
  [[nodiscard]] NameMap user_inputs_to_mutate() const {
    return output_map(OutputKind::USER_INPUT_MUTATION);
  }
  /// Names of TOKEN inputs, in order.
  [[nodiscard]] std::vector<std::string> input_tokens() const {
    std::vector<std::string> out;
    for (const auto& s : input_specs) {
      if (s.kind() == InputKind::TOKEN) out.push_back(s.name());
    }
    return out;
  }
  /// Names of TOKEN outputs, in order.
  [[nodiscard]] std::vector<std::string> output_tokens() const {
    std::vector<std::string> out;
    for (const auto& s : output_specs) {
      if (s.kind() == OutputKind::TOKEN) out.push_back(s.name());
    }
    return out;
  }

  /// Renames every spec argument named `old_name` to `new_name`, inputs and outputs (torch's
  /// `ExportGraphSignature.replace_all_uses`). Targets are not touched. O(specs).
  void replace_all_uses(std::string_view old_name, const std::string& new_name) {
    for (auto& s : output_specs) {
      if (names_graph_value(s.arg()) && s.name() == old_name) s.set_name(new_name);
    }
    for (auto& s : input_specs) {
      if (names_graph_value(s.arg()) && s.name() == old_name) s.set_name(new_name);
    }
  }

  friend bool operator==(const ExportGraphSignature& a, const ExportGraphSignature& b) {
    return a.input_specs == b.input_specs && a.output_specs == b.output_specs;
  }
  friend bool operator!=(const ExportGraphSignature& a, const ExportGraphSignature& b) {
    return !(a == b);
  }

 private:
  static ConstantValue user_value(const ArgumentSpec& arg) {
    if (const auto* c = std::get_if<ConstantArgument>(&arg)) return c->value;
    return arg_name(arg);
  }
  template <class Pred>
  std::vector<std::string> input_targets(Pred pred) const {
    std::vector<std::string> out;
    for (const auto& s : input_specs) {
      if (pred(s) && s.target()) out.push_back(*s.target());
    }
    return out;
  }
  NameMap input_map(InputKind kind) const {
    NameMap out;
    for (const auto& s : input_specs) {
      if (s.kind() == kind && s.target()) out.emplace_back(s.name(), *s.target());
    }
    return out;
  }
  NameMap output_map(OutputKind kind) const {
    NameMap out;
    for (const auto& s : output_specs) {
      if (s.kind() == kind && s.target() && std::holds_alternative<TensorArgument>(s.arg())) {
        out.emplace_back(s.name(), *s.target());
      }
    }
    return out;
  }
};

/// One input spec as torch prints it: `b_bn_running_mean: BUFFER target='bn.running_mean'
/// persistent=True`.
[[nodiscard]] inline std::string to_string(const InputSpec& s) {
  std::string out = s.name() + ": " + std::string(kind_name(s.kind()));
  if (s.target()) out += " target='" + *s.target() + "'";
  if (s.persistent()) out += *s.persistent() ? " persistent=True" : " persistent=False";
  return out;
}

/// One output spec as torch prints it: `add_2: BUFFER_MUTATION target='my_buffer2'`.
[[nodiscard]] inline std::string to_string(const OutputSpec& s) {
  std::string out = s.name() + ": " + std::string(kind_name(s.kind()));
  if (s.target()) out += " target='" + *s.target() + "'";
  return out;
}

/// The signature as torch's `str(ep.graph_signature)` writes it:
/// "\n# inputs\n<one spec per line>\n\n# outputs\n<one spec per line>\n". O(specs).
[[nodiscard]] inline std::string to_string(const ExportGraphSignature& sig) {
  std::string out = "\n# inputs\n";
  for (std::size_t i = 0; i < sig.input_specs.size(); ++i) {
    out += (i ? "\n" : "") + to_string(sig.input_specs[i]);
  }
  out += "\n\n# outputs\n";
  for (std::size_t i = 0; i < sig.output_specs.size(); ++i) {
    out += (i ? "\n" : "") + to_string(sig.output_specs[i]);
  }
  out += "\n";
  return out;
}

/// Writes `to_string(spec)`: one line of torch's signature printout, without a newline. O(size).
inline std::ostream& operator<<(std::ostream& os, const InputSpec& s) { return os << to_string(s); }
/// Writes `to_string(spec)`: one line of torch's signature printout, without a newline. O(size).
inline std::ostream& operator<<(std::ostream& os, const OutputSpec& s) {
  return os << to_string(s);
}
/// Writes `to_string(sig)` followed by a newline, like Python's `print(ep.graph_signature)`
/// (as operator<< of a Graph follows `print(graph)`). O(specs).
inline std::ostream& operator<<(std::ostream& os, const ExportGraphSignature& sig) {
  return os << to_string(sig) << '\n';
}

}  // namespace epgraph
