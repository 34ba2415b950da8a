// Metadata for new nodes: the FX `meta["val"]` (dtype, sizes, strides, device) of the ops graph
// passes commonly insert, computed from the node's arguments like torch's meta functions do.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "../detail/strings.hpp"
#include "../error.hpp"
#include "../ir/argument.hpp"
#include "../ir/bind.hpp"
#include "../ir/graph.hpp"
#include "../ir/node.hpp"
#include "../ir/symbolic.hpp"
#include "../ir/tensor.hpp"
#include "../ir/value.hpp"
#include "../ops/aten_schemas.hpp"
#include "../ops/registry.hpp"
#include "../ops/schema.hpp"

namespace epgraph {

namespace detail {
// The schemas of torch.ops.quantized_decomposed.{quantize,dequantize}_per_tensor in torch 2.13,
// as `print(op._schema)` prints them (torch/ao/quantization/fx/_decomposed.py defines them).
inline constexpr const char* quantized_decomposed_schema_texts[] = {
    "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int "
    "quant_min, int quant_max, ScalarType dtype) -> Tensor",
    "quantized_decomposed::quantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor "
    "zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor",
    "quantized_decomposed::quantize_per_tensor.tensor2(Tensor input, Tensor scale, Tensor "
    "zero_point, Tensor quant_min, Tensor quant_max, ScalarType dtype) -> Tensor",
    "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int "
    "quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
    "quantized_decomposed::dequantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor "
    "zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? "
    "out_dtype=None) -> Tensor",
    "quantized_decomposed::dequantize_per_tensor.tensor2(Tensor input, Tensor scale, Tensor "
    "zero_point, Tensor quant_min, Tensor quant_max, ScalarType dtype, *, ScalarType? "
    "out_dtype=None) -> Tensor",
};
}  // namespace detail

/// Registers the six schemas of `quantized_decomposed::quantize_per_tensor` and
/// `quantized_decomposed::dequantize_per_tensor` (overloads `default`, `tensor`, `tensor2`) of
/// torch 2.13 in `registry`, so that Graph::check_call, normalized_arguments, verify and the JSON
/// writer know them (in Python they exist once `torch.ao.quantization.fx._decomposed` is
/// imported). infer_meta does not need them registered. Calling it again does nothing.
///
/// Arguments: `registry`, the registry to add them to (default: global_registry()).
/// Returns nothing.
/// Errors: value_error "Operator 'quantized_decomposed::quantize_per_tensor' is already
/// registered with schema '<old>', not '<new>'" when one of the names is taken by another
/// schema; nothing is registered then (strong guarantee, short of another thread registering the
/// same names at the same time). std::bad_alloc.
/// Complexity: O(total schema length + log registry size).
/// Mirrors: the `quantized_decomposed` torch.library definitions in
/// torch/ao/quantization/fx/_decomposed.py.
inline void register_quantized_decomposed_schemas(OperatorRegistry& registry = global_registry()) {
  for (const char* text : detail::quantized_decomposed_schema_texts) {
    const FunctionSchema parsed = parse_schema(text);
    const FunctionSchema* old = registry.find(parsed.qualified_name());
    if (old != nullptr && *old != parsed) {
      throw value_error("Operator '" + parsed.qualified_name() +
                        "' is already registered with schema '" + old->str() + "', not '" +
                        parsed.str() + "'");
    }
  }
  for (const char* text : detail::quantized_decomposed_schema_texts) {
    (void)registry.register_schema(text);
  }
}

/// What infer_meta knows about a program's symbols besides a node's arguments: the bounds of its
/// `range_constraints` (used where torch uses them: broadcasting a symbol whose lower bound is
/// >= 2 against 1, `Max(1, s0)`, slice clamping), the export-time value of each symbol (a
/// "hint", learnt from the SymExpr hints of the values infer_meta reads, or set here), and the
/// printed form of new expressions (torch 2.13's `srepr` form, `Mul(Integer(2), Symbol('s0',
/// positive=True, integer=True))`, unless the expressions read so far are in the `str` form of
/// older files, `2*s0`). It also caches parsed expressions, so one context used for every node
/// of a program parses each distinct expression once.
///
/// Not thread-safe: infer_meta updates the hints and the cache of the context it is given
/// (through a const reference; they are caches, not program state). Copyable.
class MetaContext {
 public:
  /// The printed form new expressions are written in.
  enum class Form { srepr, str };

  /// No range constraints, no hints; expressions in the srepr form until a str one is read.
  MetaContext() = default;
  /// The bounds `ranges` (symbol name -> [min, max]). O(1) besides the move.
  explicit MetaContext(sym::Ranges ranges) : ranges_(std::move(ranges)) {}

  /// The symbols' bounds. O(1).
  [[nodiscard]] const sym::Ranges& ranges() const noexcept { return ranges_; }
  /// The symbols' export-time values known so far. O(1).
  [[nodiscard]] const sym::Bindings& hints() const noexcept { return hints_; }
  /// Sets the export-time value of `symbol` (what evaluates new expressions' hints). Throws
  /// std::bad_alloc. O(log symbols).
  void set_hint(const std::string& symbol, std::int64_t value) { hints_[symbol] = value; }
  /// The form new expressions are written in: srepr unless the last expression read was in the
  /// str form. O(1).
  [[nodiscard]] Form form() const noexcept { return form_; }
  /// Fixes the form new expressions are written in (reading expressions no longer changes it).
  void set_form(Form f) noexcept {
    form_ = f;
    form_fixed_ = true;
  }

  /// The expression `text` (either printed form), parsed once and cached; a SymExpr hint of a
  /// linear expression of one symbol (`2*s0 + 1` with hint 9) teaches that symbol's value.
  /// Throws value_error as sym::parse does. O(length) the first time, O(length) hashing after.
  [[nodiscard]] sym::Expr parse(const std::string& text, std::optional<std::int64_t> hint) const {
    auto it = cache_.find(text);
    if (it == cache_.end()) {
      sym::Expr e = sym::parse(text);
      it = cache_.emplace(text, std::move(e)).first;
    }
    if (!form_fixed_) form_ = text.find("Symbol(") != std::string::npos ? Form::srepr : Form::str;
    if (hint) learn(it->second, *hint);
    return it->second;
  }
  /// `e` written in form(), with its value under hints() as the hint when every symbol of it
  /// has one; a constant becomes a plain int64. Throws std::bad_alloc. O(size of e).
  [[nodiscard]] SymInt render(const sym::Expr& e) const {
    if (const auto v = e.as_integer()) return *v;
    SymExpr out;
    out.expr = text(e);
    out.hint = hint_of(e);
    return out;
  }
  /// `e` printed in form(). Throws std::bad_alloc. O(size of e).
  [[nodiscard]] std::string text(const sym::Expr& e) const {
    return form_ == Form::srepr ? sym::srepr(e) : sym::str(e);
  }
  /// The value of `e` under hints(), or nullopt when a symbol has no hint or the value is not
  /// an integer. O(size of e).
  [[nodiscard]] std::optional<std::int64_t> hint_of(const sym::Expr& e) const {
    if (const auto v = e.as_integer()) return *v;
    for (const std::string& s : e.free_symbols()) {
      if (hints_.find(s) == hints_.end()) return std::nullopt;
    }
    try {
      return sym::evaluate(e, hints_);
    } catch (const value_error&) {
      return std::nullopt;
    }
  }

 private:
  // a*s + b == hint with integers a != 0 and b: s = (hint - b) / a when that divides.
  void learn(const sym::Expr& e, std::int64_t hint) const {
    const auto& terms = e.terms();
    if (terms.empty() || terms.size() > 2) return;
    const auto& t = terms[0];
    if (t.factors.size() != 1 || t.factors[0].exp != 1 || !t.coeff.is_integer() ||
        t.factors[0].atom->kind != sym::detail::AtomKind::symbol) {
      return;
    }
    std::int64_t b = 0;
    if (terms.size() == 2) {
      if (!terms[1].factors.empty() || !terms[1].coeff.is_integer()) return;
      b = terms[1].coeff.num();
    }
    const std::int64_t a = t.coeff.num();
    std::int64_t diff = 0;
    if (__builtin_sub_overflow(hint, b, &diff) || a == 0 || diff % a != 0) return;
    hints_.emplace(t.factors[0].atom->name, diff / a);
  }

  sym::Ranges ranges_;
  mutable sym::Bindings hints_;
  mutable std::unordered_map<std::string, sym::Expr> cache_;
  mutable Form form_ = Form::srepr;
  bool form_fixed_ = false;
};

namespace detail {
namespace infer {

// int64 products that wrap around modulo 2^64 as torch's C++ does in practice (signed overflow
// is undefined behaviour in C++, so epgraph computes them unsigned): for stride arithmetic whose
// result torch also computes without a check, on values from a file.
inline std::int64_t wrap_mul(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

using Sizes = std::vector<SymInt>;
using Ints = std::vector<std::int64_t>;

// --- dtype categories and torch's type promotion (c10/core/ScalarType.h, TypeProperties.cpp) --

inline bool is_complex(dtype d) noexcept {
  return d == dtype::complex32 || d == dtype::complex64 || d == dtype::complex128;
}
inline bool is_floating(dtype d) noexcept {
  switch (d) {
    case dtype::float16:
    case dtype::bfloat16:
    case dtype::float32:
    case dtype::float64:
    case dtype::float8_e4m3fn:
    case dtype::float8_e5m2:
    case dtype::float8_e4m3fnuz:
    case dtype::float8_e5m2fnuz:
    case dtype::float8_e8m0fnu: return true;
    default: return false;
  }
}
inline bool is_float8(dtype d) noexcept { return is_floating(d) && element_size(d) == 1; }
// Integral including bool (torch's isIntegralType(t, /*includeBool=*/true)).
inline bool is_integral(dtype d) noexcept { return !is_floating(d) && !is_complex(d); }
inline bool is_barebones_unsigned(dtype d) noexcept {
  return d == dtype::uint16 || d == dtype::uint32 || d == dtype::uint64;
}
inline dtype complex_to_real(dtype d) noexcept {
  switch (d) {
    case dtype::complex32: return dtype::float16;
    case dtype::complex64: return dtype::float32;
    case dtype::complex128: return dtype::float64;
    default: return d;
  }
}
inline dtype real_to_complex(dtype d) noexcept {
  switch (d) {
    case dtype::float16: return dtype::complex32;
    case dtype::float64: return dtype::complex128;
    case dtype::complex32:
    case dtype::complex64:
    case dtype::complex128: return d;
    default: return dtype::complex64;
  }
}
// The rank of a signed integer dtype by width (uint8 handled separately).
inline int int_bits(dtype d) noexcept { return static_cast<int>(element_size(d)) * 8; }

// promoteTypes(a, b), or unknown when torch refuses the pair.
inline dtype promote_types(dtype a, dtype b) noexcept {
  if (a == b) return a;
  if (a == dtype::unknown || b == dtype::unknown) return dtype::unknown;
  if (a == dtype::bool_) return b;
  if (b == dtype::bool_) return a;
  if (is_barebones_unsigned(a) || is_barebones_unsigned(b)) return dtype::unknown;
  if (is_float8(a) || is_float8(b)) return dtype::unknown;
  if (is_complex(a) || is_complex(b)) {
    const dtype ra = is_complex(a) ? complex_to_real(a) : a;
    const dtype rb = is_complex(b) ? complex_to_real(b) : b;
    dtype real = ra;
    if (is_floating(ra) && is_floating(rb)) {
      real = promote_types(ra, rb);
    } else if (is_floating(rb)) {
      real = rb;
    }
    // an integral partner leaves the complex side's precision
    if (!is_floating(real)) real = dtype::float32;
    return real_to_complex(real);
  }
  if (is_floating(a) && is_floating(b)) {
    if ((a == dtype::float16 && b == dtype::bfloat16) ||
        (a == dtype::bfloat16 && b == dtype::float16)) {
      return dtype::float32;
    }
    return element_size(a) >= element_size(b) ? a : b;
  }
  if (is_floating(a)) return a;
  if (is_floating(b)) return b;
  // both integral, not bool
  if (a == dtype::uint8 || b == dtype::uint8) {
    const dtype other = a == dtype::uint8 ? b : a;
    return other == dtype::int8 ? dtype::int16 : other;
  }
  return int_bits(a) >= int_bits(b) ? a : b;
}

// One operand of torch's result_type: a tensor (dimensioned or zero-dim) or a wrapped number.
struct Operand {
  enum class Kind { tensor, zero_dim, wrapped } kind;
  dtype type;
};

// The dtype of a Python number as a wrapped-number tensor: bool, int64, or the default float
// dtype (float32) for float.
inline dtype wrapped_dtype_of(const Argument& a) {
  if (a.is<bool>()) return dtype::bool_;
  if (a.is<std::int64_t>()) return dtype::int64;
  return dtype::float32;
}

// --- the rule context: argument access and error messages ------------------------------------

class Context {
 public:
  Context(const Node& node, const NormalizedArguments* args, const MetaContext& symbols)
      : node_(node), args_(args), sym_(symbols) {}

  [[nodiscard]] std::string where() const {
    return "Cannot infer the metadata of node '" + std::string(node_.name()) + "' (" +
           std::string(node_.target()) + ")";
  }
  [[noreturn]] void fail(const std::string& why) const { throw value_error(where() + ": " + why); }
  [[nodiscard]] const Node& node() const noexcept { return node_; }
  [[nodiscard]] const FunctionSchema& schema() const { return args_->schema(); }
  // The argument `name` when the call has it and it is not None, else nullptr.
  [[nodiscard]] const Argument* given_arg(std::string_view name) const {
    if (!has(name)) return nullptr;
    const Argument& a = arg(name);
    return a.is_none() ? nullptr : &a;
  }
  [[nodiscard]] bool has(std::string_view name) const {
    return args_ != nullptr && args_->schema().argument_index(name) >= 0;
  }
  [[nodiscard]] const Argument& arg(std::string_view name) const { return (*args_)[name]; }

  // The tensor metadata of tensor argument `name`.
  [[nodiscard]] const TensorMeta& tensor(std::string_view name) const {
    return tensor_of(arg(name), "argument '" + std::string(name) + "'");
  }
  [[nodiscard]] const TensorMeta* opt_tensor(std::string_view name) const {
    const Argument& a = arg(name);
    if (a.is_none()) return nullptr;
    return &tensor_of(a, "argument '" + std::string(name) + "'");
  }
  [[nodiscard]] const TensorMeta& tensor_of(const Argument& a, const std::string& what) const {
    const Node* n = a.node();
    if (n == nullptr) fail(what + " is not a node");
    const NodeValue& v = n->meta().val;
    const TensorMeta* t = v.tensor();
    if (t == nullptr) {
      fail(what + " (node '" + std::string(n->name()) + "') has no tensor metadata: its " +
           "meta().val is " + v.describe());
    }
    return *t;
  }
  // The tensors of a `Tensor[]` argument.
  [[nodiscard]] std::vector<const TensorMeta*> tensor_list(std::string_view name) const {
    const ArgumentList* l = arg(name).list();
    if (l == nullptr) fail("argument '" + std::string(name) + "' is not a list of tensors");
    std::vector<const TensorMeta*> out;
    for (std::size_t i = 0; i < l->size(); ++i) {
      out.push_back(&tensor_of(
          (*l)[i], "element " + std::to_string(i) + " of argument '" + std::string(name) + "'"));
    }
    return out;
  }

  // An int (or SymInt node with a concrete value) argument value.
  [[nodiscard]] std::int64_t integer_of(const Argument& a, const std::string& what) const {
    if (a.is<std::int64_t>()) return a.as<std::int64_t>();
    if (a.is<bool>()) return a.as<bool>() ? 1 : 0;
    if (const Node* n = a.node()) {
      if (const SymIntValue* s = n->meta().val.sym_int()) {
        if (const auto* v = std::get_if<std::int64_t>(&s->value)) return *v;
        fail(what + " is the symbolic value " + std::get<SymExpr>(s->value).expr +
             ", which this op must compute with; epgraph only computes with concrete integers");
      }
      fail(what + " (node '" + std::string(n->name()) + "') is not an integer: its meta().val is " +
           n->meta().val.describe());
    }
    fail(what + " is not an integer");
  }
  [[nodiscard]] std::int64_t integer(std::string_view name) const {
    return integer_of(arg(name), "argument '" + std::string(name) + "'");
  }
  [[nodiscard]] std::optional<std::int64_t> opt_integer(std::string_view name) const {
    const Argument& a = arg(name);
    if (a.is_none()) return std::nullopt;
    return integer(name);
  }
  // A SymInt (concrete or symbolic) from an argument element.
  [[nodiscard]] SymInt sym_of(const Argument& a, const std::string& what) const {
    if (const Node* n = a.node()) {
      if (const SymIntValue* s = n->meta().val.sym_int()) return s->value;
    }
    return integer_of(a, what);
  }
  // A list argument read element by element with `element(arg, what)` (a single value counts as a
  // one-element list); `what` names the element in errors.
  template <class Out, class Element>
  [[nodiscard]] Out list_of(std::string_view name, Element element) const {
    const Argument& a = arg(name);
    const std::string what = "argument '" + std::string(name) + "'";
    Out out;
    if (const ArgumentList* l = a.list()) {
      for (std::size_t i = 0; i < l->size(); ++i) {
        out.push_back(element((*l)[i], "element " + std::to_string(i) + " of " + what));
      }
    } else {
      out.push_back(element(a, what));
    }
    return out;
  }
  // An `int[]` argument (a single int counts as a one-element list).
  [[nodiscard]] Ints int_list(std::string_view name) const {
    return list_of<Ints>(
        name, [this](const Argument& a, const std::string& what) { return integer_of(a, what); });
  }
  [[nodiscard]] std::optional<Ints> opt_int_list(std::string_view name) const {
    if (arg(name).is_none()) return std::nullopt;
    return int_list(name);
  }
  // A `SymInt[]` argument whose elements may be symbolic.
  [[nodiscard]] Sizes sym_list(std::string_view name) const {
    return list_of<Sizes>(
        name, [this](const Argument& a, const std::string& what) { return sym_of(a, what); });
  }
  [[nodiscard]] bool boolean(std::string_view name) const {
    const Argument& a = arg(name);
    if (a.is<bool>()) return a.as<bool>();
    if (a.is<std::int64_t>()) return a.as<std::int64_t>() != 0;
    fail("argument '" + std::string(name) + "' is not a bool");
  }
  [[nodiscard]] std::optional<dtype> opt_dtype(std::string_view name) const {
    const Argument* given = given_arg(name);
    if (!given) return std::nullopt;
    const Argument& a = *given;
    if (a.is<dtype>()) return a.as<dtype>();
    if (a.is<std::int64_t>()) {
      // a schema default such as `ScalarType? dtype=4` counts in c10's ScalarType numbering
      static constexpr dtype c10_order[] = {dtype::uint8,     dtype::int8,       dtype::int16,
                                            dtype::int32,     dtype::int64,      dtype::float16,
                                            dtype::float32,   dtype::float64,    dtype::complex32,
                                            dtype::complex64, dtype::complex128, dtype::bool_};
      const std::int64_t v = a.as<std::int64_t>();
      if (v >= 0 && v < 12) return c10_order[v];
      if (v == 15) return dtype::bfloat16;
    }
    fail("argument '" + std::string(name) + "' is not a dtype");
  }
  [[nodiscard]] std::optional<Device> opt_device(std::string_view name) const {
    const Argument* given = given_arg(name);
    if (!given) return std::nullopt;
    const Argument& a = *given;
    if (a.is<Device>()) return a.as<Device>();
    if (a.is<std::string>()) {
      const std::string& s = a.as<std::string>();
      const auto colon = s.find(':');
      Device d;
      d.type = s.substr(0, colon);
      if (colon != std::string::npos) d.index = std::stoll(s.substr(colon + 1));
      return d;
    }
    fail("argument '" + std::string(name) + "' is not a device");
  }
  [[nodiscard]] std::optional<MemoryFormat> opt_memory_format(std::string_view name) const {
    const Argument* given = given_arg(name);
    if (!given) return std::nullopt;
    const Argument& a = *given;
    if (a.is<MemoryFormat>()) return a.as<MemoryFormat>();
    if (a.is<std::int64_t>()) {
      // a schema default such as `MemoryFormat memory_format=0` counts in c10's numbering
      switch (a.as<std::int64_t>()) {
        case 0: return MemoryFormat::ContiguousFormat;
        case 1: return MemoryFormat::PreserveFormat;
        case 2: return MemoryFormat::ChannelsLast;
        case 3: return MemoryFormat::ChannelsLast3d;
        default: break;
      }
    }
    fail("argument '" + std::string(name) + "' is not a memory format");
  }
  // A Scalar argument as a result_type operand (a Python number or a SymInt/SymFloat/SymBool
  // node); nullopt for None.
  [[nodiscard]] std::optional<Operand> scalar_operand(std::string_view name) const {
    const Argument& a = arg(name);
    if (a.is_none()) return std::nullopt;
    if (a.is<bool>() || a.is<std::int64_t>() || a.is<double>()) {
      return Operand{Operand::Kind::wrapped, wrapped_dtype_of(a)};
    }
    if (const Node* n = a.node()) {
      const NodeValue& v = n->meta().val;
      if (v.sym_int() != nullptr) return Operand{Operand::Kind::wrapped, dtype::int64};
      if (v.sym_float() != nullptr) return Operand{Operand::Kind::wrapped, dtype::float32};
      if (v.sym_bool() != nullptr) return Operand{Operand::Kind::wrapped, dtype::bool_};
      if (const TensorMeta* t = v.tensor()) return tensor_operand(*t);
      fail("argument '" + std::string(name) + "' (node '" + std::string(n->name()) +
           "') is not a number: its meta().val is " + v.describe());
    }
    fail("argument '" + std::string(name) + "' is not a number");
  }
  // A floating-point value of a Scalar argument (for arange).
  [[nodiscard]] double number(std::string_view name) const {
    const Argument& a = arg(name);
    if (a.is<double>()) return a.as<double>();
    if (a.is<std::int64_t>()) return static_cast<double>(a.as<std::int64_t>());
    if (a.is<bool>()) return a.as<bool>() ? 1.0 : 0.0;
    if (const Node* n = a.node()) {
      if (const SymFloatValue* f = n->meta().val.sym_float()) {
        if (const auto* d = std::get_if<double>(&f->value)) return *d;
      }
      if (n->meta().val.sym_int() != nullptr) return static_cast<double>(integer(name));
    }
    fail("argument '" + std::string(name) + "' is not a concrete number");
  }
  static Operand tensor_operand(const TensorMeta& t) {
    return Operand{t.sizes.empty() ? Operand::Kind::zero_dim : Operand::Kind::tensor, t.dtype};
  }

  // --- symbolic sizes ---
  [[nodiscard]] const MetaContext& symbols() const noexcept { return sym_; }
  [[nodiscard]] const sym::Ranges* ranges() const noexcept { return &sym_.ranges(); }
  // The expression of a size (parse errors name the node).
  [[nodiscard]] sym::Expr ex(const SymInt& s) const {
    if (const auto* v = std::get_if<std::int64_t>(&s)) return sym::Expr(*v);
    const SymExpr& e = std::get<SymExpr>(s);
    try {
      return sym_.parse(e.expr, e.hint);
    } catch (const value_error& err) {
      fail(err.what());
    }
  }
  // An expression as a size in the file's form (a constant as an int64).
  [[nodiscard]] SymInt out(const sym::Expr& e) const { return sym_.render(e); }
  // torch's statically_known_true on a folded relation.
  [[nodiscard]] static bool known(const sym::Expr& b) noexcept {
    const auto v = b.as_boolean();
    return v && *v;
  }
  // torch's guard on a backed relation: the bounds decide, else the hints; nullopt when neither
  // does (an unbacked symbol).
  [[nodiscard]] std::optional<bool> decide(const sym::Expr& b) const {
    if (const auto v = b.as_boolean()) return *v;
    if (const auto h = sym_.hint_of(b)) return *h != 0;
    return std::nullopt;
  }
  // guard_or_false / guard_or_true.
  [[nodiscard]] bool guard_or_false(const sym::Expr& b) const { return decide(b).value_or(false); }
  [[nodiscard]] bool guard_or_true(const sym::Expr& b) const { return decide(b).value_or(true); }
  // Sizes known equal (the same canonical expression, or equal under the bounds).
  [[nodiscard]] bool equal(const SymInt& a, const SymInt& b) const {
    const auto* x = std::get_if<std::int64_t>(&a);
    const auto* y = std::get_if<std::int64_t>(&b);
    if (x != nullptr && y != nullptr) return *x == *y;
    const sym::Expr ea = ex(a), eb = ex(b);
    return ea == eb || known(sym::eq(ea, eb, ranges()));
  }
  // A size known to be 1.
  [[nodiscard]] bool is_one(const SymInt& s) const {
    if (const auto* v = std::get_if<std::int64_t>(&s)) return *v == 1;
    return known(sym::eq(ex(s), sym::Expr(1), ranges()));
  }
  // Sum and product of sizes, concrete when they can be (checked int64 arithmetic).
  [[nodiscard]] SymInt add(const SymInt& a, const SymInt& b, const std::string& what) const;
  [[nodiscard]] SymInt mul(const SymInt& a, const SymInt& b, const std::string& what) const;

  // A concrete size, or an error naming the symbolic one.
  [[nodiscard]] std::int64_t concrete(const SymInt& s, const std::string& what) const {
    if (const auto* v = std::get_if<std::int64_t>(&s)) return *v;
    fail(what + " is the symbolic size " + std::get<SymExpr>(s).expr +
         ", which this op must compute with; epgraph only computes with concrete sizes");
  }
  [[nodiscard]] Ints concrete_all(const Sizes& sizes, const std::string& what) const {
    Ints out;
    out.reserve(sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      out.push_back(concrete(sizes[i], what + " dimension " + std::to_string(i)));
    }
    return out;
  }

  // torch's maybe_wrap_dim: a dim in [-rank, rank) (a zero-dim tensor counts as rank 1).
  [[nodiscard]] std::int64_t wrap_dim(std::int64_t dim, std::size_t rank_in) const {
    const auto rank = std::max<std::int64_t>(static_cast<std::int64_t>(rank_in), 1);
    if (dim < -rank || dim >= rank) {
      fail("Dimension out of range (expected to be in range of [" + std::to_string(-rank) + ", " +
           std::to_string(rank - 1) + "], but got " + std::to_string(dim) + ")");
    }
    return dim < 0 ? dim + rank : dim;
  }

  // result_type over operands (c10 ResultTypeState / at::native::result_type).
  [[nodiscard]] dtype result_type(const std::vector<Operand>& ops) const {
    dtype dim = dtype::unknown, zero = dtype::unknown, wrapped = dtype::unknown;
    auto add = [&](dtype& slot, dtype t) {
      if (slot == dtype::unknown) {
        slot = t;
        return;
      }
      const dtype p = promote_types(slot, t);
      if (p == dtype::unknown) {
        fail("torch does not promote " + std::string(dtype_name(slot)) + " with " +
             std::string(dtype_name(t)));
      }
      slot = p;
    };
    for (const Operand& o : ops) {
      switch (o.kind) {
        case Operand::Kind::tensor: add(dim, o.type); break;
        case Operand::Kind::zero_dim: add(zero, o.type); break;
        case Operand::Kind::wrapped: add(wrapped, o.type); break;
      }
    }
    const dtype r = combine(dim, combine(zero, wrapped));
    if (r == dtype::unknown) fail("there is no tensor or number operand to take a dtype from");
    return r;
  }

  [[nodiscard]] dtype combine(dtype higher, dtype lower) const {
    if (is_complex(higher)) return higher;
    if (is_complex(lower)) {
      if (is_floating(higher)) return real_to_complex(higher);
      return lower;
    }
    if (is_floating(higher)) return higher;
    if (higher == dtype::bool_ || is_floating(lower)) {
      if (higher == dtype::unknown) return lower;
      if (lower == dtype::unknown) return higher;
      const dtype p = promote_types(higher, lower);
      if (p == dtype::unknown) {
        fail("torch does not promote " + std::string(dtype_name(higher)) + " with " +
             std::string(dtype_name(lower)));
      }
      return p;
    }
    if (higher != dtype::unknown) return higher;
    return lower;
  }

 private:
  const Node& node_;
  const NormalizedArguments* args_;
  const MetaContext& sym_;
};

// Checked int64 arithmetic on sizes, strides and offsets that come from a file or from a
// pass's arguments: a result beyond int64 is an error naming the node ("... overflows int64
// (2 * 9223372036854775807)"), not undefined behaviour (torch's C++ wraps around silently).
inline std::int64_t checked_mul(const Context& ctx, std::int64_t a, std::int64_t b,
                                const std::string& what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    ctx.fail(what + " overflows int64 (" + std::to_string(a) + " * " + std::to_string(b) + ")");
  }
  return r;
}
inline std::int64_t checked_add(const Context& ctx, std::int64_t a, std::int64_t b,
                                const std::string& what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    ctx.fail(what + " overflows int64 (" + std::to_string(a) + " + " + std::to_string(b) + ")");
  }
  return r;
}

inline SymInt Context::add(const SymInt& a, const SymInt& b, const std::string& what) const {
  const auto* x = std::get_if<std::int64_t>(&a);
  const auto* y = std::get_if<std::int64_t>(&b);
  if (x != nullptr && y != nullptr) return checked_add(*this, *x, *y, what);
  const sym::Expr ea = ex(a), eb = ex(b);
  try {
    return out(ea + eb);
  } catch (const value_error& e) {
    fail(what + ": " + e.what());
  }
}
inline SymInt Context::mul(const SymInt& a, const SymInt& b, const std::string& what) const {
  const auto* x = std::get_if<std::int64_t>(&a);
  const auto* y = std::get_if<std::int64_t>(&b);
  if (x != nullptr && y != nullptr) return checked_mul(*this, *x, *y, what);
  const sym::Expr ea = ex(a), eb = ex(b);
  try {
    return out(ea * eb);
  } catch (const value_error& e) {
    fail(what + ": " + e.what());
  }
}

// --- shapes and strides ------------------------------------------------------------------------

inline std::string sym_str(const SymInt& s) {
  if (const auto* v = std::get_if<std::int64_t>(&s)) return std::to_string(*v);
  return std::get<SymExpr>(s).expr;
}
inline std::string shape_str(const Sizes& sizes) {
  std::string out = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + sym_str(sizes[i]);
  return out + "]";
}
inline Sizes to_sym(const Ints& v) { return Sizes(v.begin(), v.end()); }
inline bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

// Concrete sizes/strides of a tensor, when all are concrete.
inline std::optional<Ints> all_concrete(const Sizes& v) {
  Ints out;
  out.reserve(v.size());
  for (const SymInt& s : v) {
    const auto* i = std::get_if<std::int64_t>(&s);
    if (i == nullptr) return std::nullopt;
    out.push_back(*i);
  }
  return out;
}

// Row-major strides for sizes that may be symbolic, as torch writes them
// (torch._prims_common.make_contiguous_strides_for): each stride the product of the later sizes,
// each taken as Max(size, 1) (`s0` for a positive symbol, kept as `Max(1, u0)` for an unbacked
// one), simplified under the range constraints.
inline Sizes contiguous_sym_strides(const Context& ctx, const Sizes& sizes) {
  if (auto c = all_concrete(sizes)) return to_sym(contiguous_strides(*c));
  Sizes out(sizes.size(), std::int64_t{1});
  sym::Expr multiplier(1);
  for (std::size_t i = sizes.size(); i-- > 0;) {
    out[i] = ctx.out(multiplier);
    if (i == 0) break;
    const sym::Expr size = ctx.ex(sizes[i]);
    try {
      multiplier = multiplier * sym::max({size, sym::Expr(1)}, ctx.ranges());
    } catch (const value_error& e) {
      ctx.fail("cannot write the contiguous strides of the symbolic shape " + shape_str(sizes) +
               ": " + e.what());
    }
  }
  return out;
}

inline Ints channels_last_strides(const Ints& sizes) {
  Ints s(sizes.size(), 1);
  auto m = [](std::int64_t v) { return std::max<std::int64_t>(v, 1); };
  if (sizes.size() == 4) {
    s[1] = 1;
    s[3] = m(sizes[1]);
    s[2] = wrap_mul(s[3], m(sizes[3]));
    s[0] = wrap_mul(s[2], m(sizes[2]));
  } else if (sizes.size() == 5) {
    s[1] = 1;
    s[4] = m(sizes[1]);
    s[3] = wrap_mul(s[4], m(sizes[4]));
    s[2] = wrap_mul(s[3], m(sizes[3]));
    s[0] = wrap_mul(s[2], m(sizes[2]));
  }
  return s;
}

// c10's is_contiguous (size-1 dimensions ignored; empty tensors are contiguous).
inline bool is_contiguous(const Ints& sizes, const Ints& strides) {
  std::int64_t expected = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
  }
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] != 1) {
      if (strides[i] != expected) return false;
      expected = wrap_mul(expected, sizes[i]);
    }
  }
  return true;
}
// c10's channels-last contiguity (4-D and 5-D).
inline bool is_channels_last(const Ints& sizes, const Ints& strides) {
  if (sizes.size() != 4 && sizes.size() != 5) return false;
  for (std::int64_t s : sizes) {
    if (s == 0) return true;
  }
  const std::vector<std::size_t> order = sizes.size() == 4
                                             ? std::vector<std::size_t>{1, 3, 2, 0}
                                             : std::vector<std::size_t>{1, 4, 3, 2, 0};
  std::int64_t expected = 1;
  for (std::size_t d : order) {
    if (sizes[d] != 1) {
      if (strides[d] != expected) return false;
      expected = wrap_mul(expected, sizes[d]);
    }
  }
  return true;
}
// c10's _compute_non_overlapping_and_dense.
inline bool is_non_overlapping_and_dense(const Ints& sizes, const Ints& strides) {
  if (sizes.size() == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<std::size_t> perm(sizes.size());
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::stable_sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  std::int64_t require = 1;
  for (std::size_t i : perm) {
    if (sizes[i] < 2) return true;
    if (strides[i] != require) return false;
    require = wrap_mul(require, sizes[i]);
  }
  return true;
}

// TensorIteratorBase::reorder_dimensions' insertion sort (in torch's Python meta functions
// compute_elementwise_output_logical_to_physical_perm): the dimensions ordered innermost first,
// starting from [ndim - 1, ..., 0]; should_swap(d0, d1) for d0 before d1 in the order so far
// gives 1 to put d1 before d0, -1 to keep the order and stop, 0 to look further. O(ndim^2 calls).
template <class ShouldSwap>
std::vector<std::size_t> reorder_dimensions(std::size_t ndim, const ShouldSwap& should_swap) {
  std::vector<std::size_t> perm(ndim);
  for (std::size_t i = 0; i < ndim; ++i) perm[i] = ndim - 1 - i;
  for (std::size_t i = 1; i < ndim; ++i) {
    std::size_t dim1 = i;
    for (std::size_t dim0 = i; dim0-- > 0;) {
      const int c = should_swap(perm[dim0], perm[dim1]);
      if (c > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (c < 0) {
        break;
      }
    }
  }
  return perm;
}

// The output strides TensorIterator gives an elementwise op of `shape` over `inputs` (each
// already checked to broadcast to `shape`): the fast paths for inputs of the output's shape that
// are all contiguous / all channels-last / all dense with equal strides, else the stride order of
// the inputs (TensorIteratorBase::reorder_dimensions + compatible_stride). nullopt when a size or
// stride is symbolic.
inline std::optional<Ints> elementwise_strides(const Ints& shape,
                                               const std::vector<const TensorMeta*>& inputs) {
  const std::size_t ndim = shape.size();
  std::vector<Ints> in_sizes, in_strides;
  for (const TensorMeta* t : inputs) {
    auto s = all_concrete(t->sizes);
    auto st = all_concrete(t->strides);
    if (!s || !st) return std::nullopt;
    in_sizes.push_back(*s);
    in_strides.push_back(*st);
  }
  if (ndim == 0) return Ints{};
  bool same_shape = !inputs.empty();
  for (const Ints& s : in_sizes) same_shape = same_shape && s == shape;
  if (same_shape) {
    bool contiguous = true, channels_last = true, dense = true;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      contiguous = contiguous && is_contiguous(in_sizes[i], in_strides[i]);
      channels_last = channels_last && is_channels_last(in_sizes[i], in_strides[i]);
      dense = dense && is_non_overlapping_and_dense(in_sizes[i], in_strides[i]);
    }
    if (contiguous) return contiguous_strides(shape);
    if (channels_last) return channels_last_strides(shape);
    if (dense) {
      bool equal = true;
      for (const Ints& st : in_strides) equal = equal && st == in_strides.back();
      if (equal) return in_strides.back();
    }
  }
  // broadcast strides of each input over `shape`
  std::vector<Ints> bs;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    Ints s(ndim, 0);
    const std::size_t off = ndim - in_sizes[k].size();
    for (std::size_t i = 0; i < in_sizes[k].size(); ++i) {
      s[off + i] = (in_sizes[k][i] == 1 && shape[off + i] != 1) ? 0 : in_strides[k][i];
    }
    bs.push_back(std::move(s));
  }
  if (ndim == 1) return Ints{1};
  auto should_swap = [&](std::size_t d0, std::size_t d1) {
    for (const Ints& s : bs) {
      const std::int64_t s0 = s[d0], s1 = s[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  // perm[0] is the innermost dimension
  const std::vector<std::size_t> perm = reorder_dimensions(ndim, should_swap);
  bool inverted = true;
  for (std::size_t j = 0; j < ndim; ++j) inverted = inverted && perm[j] == ndim - j - 1;
  if (inverted) return contiguous_strides(shape);
  Ints out(ndim, 0);
  std::int64_t next = 1;
  for (std::size_t j = 0; j < ndim; ++j) {
    out[perm[j]] = next;
    next = wrap_mul(next, shape[perm[j]]);
  }
  return out;
}

inline TensorMeta make_meta(dtype type, Sizes sizes, Sizes strides, const Device& device) {
  TensorMeta m;
  m.dtype = type;
  m.sizes = std::move(sizes);
  m.strides = std::move(strides);
  m.storage_offset = std::int64_t{0};
  m.device = device;
  m.layout = Layout::Strided;
  m.requires_grad = false;
  return m;
}
inline TensorMeta contiguous_meta(const Context& ctx, dtype type, Sizes sizes,
                                  const Device& device) {
  Sizes strides = contiguous_sym_strides(ctx, sizes);
  return make_meta(type, std::move(sizes), std::move(strides), device);
}
inline Sizes elementwise_strides_sym(const Context& ctx, const Sizes& shape_in,
                                     const std::vector<const TensorMeta*>& inputs);

// Strides for a new tensor of `memory_format` (contiguous, channels-last or preserve of `like`).
inline TensorMeta formatted_meta(const Context& ctx, dtype type, const Sizes& sizes,
                                 const Device& device, std::optional<MemoryFormat> format,
                                 const TensorMeta* like) {
  const MemoryFormat f =
      format.value_or(like ? MemoryFormat::PreserveFormat : MemoryFormat::ContiguousFormat);
  if (f == MemoryFormat::ChannelsLast || f == MemoryFormat::ChannelsLast3d) {
    const Ints s = ctx.concrete_all(sizes, "the shape's");
    if ((f == MemoryFormat::ChannelsLast && s.size() != 4) ||
        (f == MemoryFormat::ChannelsLast3d && s.size() != 5)) {
      ctx.fail("memory format " + std::string(memory_format_name(f)) + " needs a " +
               (f == MemoryFormat::ChannelsLast ? "4" : "5") + "-D shape, not " + shape_str(sizes));
    }
    return make_meta(type, sizes, to_sym(channels_last_strides(s)), device);
  }
  if (f == MemoryFormat::PreserveFormat && like != nullptr) {
    // empty_like(preserve_format): dense inputs keep their strides, others get the dense
    // strides of the same dimension order.
    auto s = all_concrete(like->sizes);
    auto st = all_concrete(like->strides);
    if (s && st) {
      if (is_non_overlapping_and_dense(*s, *st))
        return make_meta(type, sizes, like->strides, device);
      if (auto out = elementwise_strides(*s, {like})) {
        return make_meta(type, sizes, to_sym(*out), device);
      }
    } else if (like->sizes.size() == sizes.size()) {
      // symbolic: torch._prims_common's rule for one operand (dense: its strides)
      return make_meta(type, sizes, elementwise_strides_sym(ctx, like->sizes, {like}), device);
    }
  }
  return contiguous_meta(ctx, type, sizes, device);
}

// Broadcasts shapes (torch's infer_size). Fails naming both shapes.
inline Sizes broadcast(const Context& ctx, const std::vector<const Sizes*>& shapes) {
  Sizes out;
  for (const Sizes* sp : shapes) {
    const Sizes& s = *sp;
    Sizes next(std::max(out.size(), s.size()), std::int64_t{1});
    for (std::size_t i = 0; i < next.size(); ++i) {
      const std::size_t ia = next.size() - 1 - i;
      const SymInt* a = i < out.size() ? &out[out.size() - 1 - i] : nullptr;
      const SymInt* b = i < s.size() ? &s[s.size() - 1 - i] : nullptr;
      if (a == nullptr) {
        next[ia] = *b;
      } else if (b == nullptr) {
        next[ia] = *a;
      } else if (ctx.is_one(*a)) {
        next[ia] = *b;
      } else if (ctx.is_one(*b) || ctx.equal(*a, *b)) {
        next[ia] = *a;
      } else if (a->index() == 0 && b->index() == 0) {
        ctx.fail("shapes " + shape_str(out) + " and " + shape_str(s) + " do not broadcast");
      } else if (ctx.guard_or_true(sym::eq(ctx.ex(*a), ctx.ex(*b), ctx.ranges()))) {
        // torch's infer_size: neither is known to be 1, so they must be equal (torch._check);
        // the first one is kept
        next[ia] = *a;
      } else {
        ctx.fail("shapes " + shape_str(out) + " and " + shape_str(s) +
                 " do not broadcast (their sizes " + sym_str(*a) + " and " + sym_str(*b) +
                 " differ under the symbols' ranges or hints)");
      }
    }
    out = std::move(next);
  }
  return out;
}

using Exprs = std::vector<sym::Expr>;

inline sym::Expr product(const Exprs& v) {
  sym::Expr p(1);
  for (const sym::Expr& e : v) p = p * e;
  return p;
}

inline Exprs exprs_of(const Context& ctx, const Sizes& v) {
  Exprs out;
  out.reserve(v.size());
  for (const SymInt& s : v) out.push_back(ctx.ex(s));
  return out;
}
inline Sizes sizes_of(const Context& ctx, const Exprs& v) {
  Sizes out;
  out.reserve(v.size());
  for (const sym::Expr& e : v) out.push_back(ctx.out(e));
  return out;
}

// --- elementwise strides of symbolic shapes (torch._prims_common, which FakeTensor runs for
// them: the refs broadcast every operand to the result's shape, then
// compute_elementwise_output_strides) ------------------------------------------------------------

struct SymOperand {
  std::vector<sym::Expr> sizes, strides;
};

// check_contiguous_sizes_strides (false on what the guards cannot decide).
inline bool contiguous_sym(const Context& ctx, const SymOperand& t) {
  const sym::Ranges* r = ctx.ranges();
  sym::Expr numel(1);
  for (const sym::Expr& e : t.sizes) numel = numel * e;
  if (ctx.guard_or_false(sym::lt(numel, sym::Expr(2), r))) return true;
  sym::Expr expected(1);
  for (std::size_t i = t.sizes.size(); i-- > 0;) {
    if (ctx.guard_or_false(sym::eq(t.sizes[i], sym::Expr(1), r))) continue;
    if (ctx.guard_or_true(sym::ne(t.strides[i], expected, r))) return false;
    expected = expected * t.sizes[i];
  }
  return true;
}
// is_channels_last_contiguous_2d/3d (false on what the guards cannot decide).
inline bool channels_last_sym(const Context& ctx, const SymOperand& t) {
  const std::size_t n = t.sizes.size();
  if (n != 4 && n != 5) return false;
  const sym::Ranges* r = ctx.ranges();
  const std::vector<std::size_t> order =
      n == 4 ? std::vector<std::size_t>{1, 3, 2, 0} : std::vector<std::size_t>{1, 4, 3, 2, 0};
  sym::Expr expected(1);
  for (std::size_t d : order) {
    if (ctx.guard_or_false(sym::eq(t.sizes[d], sym::Expr(1), r))) continue;
    if (ctx.guard_or_true(sym::ne(t.strides[d], expected, r))) return false;
    expected = expected * t.sizes[d];
  }
  return true;
}
// is_non_overlapping_and_dense: the strides sorted (stably) are the nested products.
inline bool dense_sym(const Context& ctx, const SymOperand& t) {
  const sym::Ranges* r = ctx.ranges();
  if (contiguous_sym(ctx, t)) return true;
  std::vector<std::size_t> order(t.sizes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return ctx.guard_or_false(sym::lt(t.strides[a], t.strides[b], r));
  });
  sym::Expr expected(1);
  for (std::size_t d : order) {
    if (ctx.guard_or_false(sym::eq(t.sizes[d], sym::Expr(1), r))) continue;
    if (ctx.guard_or_true(sym::ne(t.strides[d], expected, r))) return false;
    expected = expected * t.sizes[d];
  }
  return true;
}

// The strides compute_elementwise_output_strides gives operands broadcast to `shape`.
inline Sizes elementwise_strides_sym(const Context& ctx, const Sizes& shape_in,
                                     const std::vector<const TensorMeta*>& inputs) {
  const sym::Ranges* r = ctx.ranges();
  const Exprs shape = exprs_of(ctx, shape_in);
  const std::size_t ndim = shape.size();
  std::vector<SymOperand> ops;
  for (const TensorMeta* t : inputs) {
    if (t->sizes.empty() && t->device.type == "cpu") continue;  // a CPU scalar tensor
    SymOperand op;
    op.sizes = shape;
    op.strides.assign(ndim, sym::Expr(0));
    const std::size_t off = ndim - t->sizes.size();
    for (std::size_t i = 0; i < t->sizes.size(); ++i) {
      // expand: a size-1 dimension broadcast to another size gets stride 0
      if (ctx.equal(t->sizes[i], shape_in[off + i])) op.strides[off + i] = ctx.ex(t->strides[i]);
    }
    ops.push_back(std::move(op));
  }
  if (ndim == 0) return {};
  if (ndim == 1) return {std::int64_t{1}};
  if (ops.empty()) return contiguous_sym_strides(ctx, shape_in);
  if (ops.size() == 1) {
    if (dense_sym(ctx, ops[0])) return sizes_of(ctx, ops[0].strides);
  } else {
    bool contiguous = true, channels_last = true;
    for (const SymOperand& op : ops) {
      contiguous = contiguous && contiguous_sym(ctx, op);
      channels_last = channels_last && channels_last_sym(ctx, op);
    }
    if (contiguous && !channels_last) return contiguous_sym_strides(ctx, shape_in);
    if (channels_last && !contiguous) {
      std::vector<std::size_t> perm{0};  // logical to physical: [0, 2, ..., 1]
      for (std::size_t i = 2; i < ndim; ++i) perm.push_back(i);
      perm.push_back(1);
      Sizes physical;
      for (std::size_t d : perm) physical.push_back(shape_in[d]);
      const Sizes st = contiguous_sym_strides(ctx, physical);
      Sizes out(ndim);
      for (std::size_t i = 0; i < ndim; ++i) out[perm[i]] = st[i];
      return out;
    }
  }
  // compute_elementwise_output_logical_to_physical_perm's insertion sort
  const sym::Expr zero(0);
  auto ge = [&](const sym::Expr& a, const sym::Expr& b) {
    if (ctx.guard_or_false(sym::eq(b, zero, r))) return true;
    if (ctx.guard_or_false(sym::eq(a, zero, r))) return false;
    return ctx.guard_or_false(sym::ge(a, b, r)) ||
           ctx.guard_or_false(sym::eq(sym::mod(a, b, r), zero, r));
  };
  auto should_swap = [&](std::size_t a, std::size_t b) {
    for (const SymOperand& op : ops) {
      const sym::Expr& sa = op.strides[a];
      const sym::Expr& sb = op.strides[b];
      if (ctx.guard_or_false(sym::eq(sa, zero, r)) || ctx.guard_or_false(sym::eq(sb, zero, r))) {
        continue;
      }
      if (ctx.guard_or_false(sym::eq(sa, sb, r))) {
        if (ge(shape[b], shape[a])) continue;
        return 1;
      }
      if (ge(sb, sa)) return -1;
      if (ge(sa, sb)) return 1;
    }
    return 0;
  };
  std::vector<std::size_t> perm = reorder_dimensions(ndim, should_swap);
  std::reverse(perm.begin(), perm.end());  // logical to physical
  Sizes physical;
  for (std::size_t d : perm) physical.push_back(shape_in[d]);
  const Sizes st = contiguous_sym_strides(ctx, physical);
  Sizes out(ndim);
  for (std::size_t i = 0; i < ndim; ++i) out[perm[i]] = st[i];
  return out;
}

// An elementwise result: broadcast shape, TensorIterator strides (contiguous when symbolic).
inline TensorMeta elementwise_meta(const Context& ctx, dtype type,
                                   const std::vector<const TensorMeta*>& tensors) {
  std::vector<const Sizes*> shapes;
  for (const TensorMeta* t : tensors) shapes.push_back(&t->sizes);
  Sizes shape = broadcast(ctx, shapes);
  const Device device = tensors.empty() ? Device{} : tensors.front()->device;
  if (auto concrete = all_concrete(shape)) {
    if (auto strides = elementwise_strides(*concrete, tensors)) {
      return make_meta(type, std::move(shape), to_sym(*strides), device);
    }
  }
  Sizes strides = elementwise_strides_sym(ctx, shape, tensors);
  return make_meta(type, std::move(shape), std::move(strides), device);
}

// torch's computeStride: the strides of a view of (sizes, strides) as `shape`, if one exists.
inline std::optional<Ints> view_strides(const Ints& oldshape, const Ints& oldstride,
                                        const Ints& newshape) {
  if (oldshape.empty()) return Ints(newshape.size(), 1);
  std::int64_t numel = 1;
  for (std::int64_t s : oldshape) numel = wrap_mul(numel, s);
  if (numel == 0 && oldshape == newshape) return oldstride;
  Ints newstride(newshape.size(), 0);
  if (numel == 0) {
    for (std::size_t d = newshape.size(); d-- > 0;) {
      newstride[d] = d + 1 == newshape.size()
                         ? 1
                         : wrap_mul(std::max<std::int64_t>(newshape[d + 1], 1), newstride[d + 1]);
    }
    return newstride;
  }
  auto view_d = static_cast<std::ptrdiff_t>(newshape.size()) - 1;
  std::int64_t chunk_base_stride = oldstride.back();
  std::int64_t tensor_numel = 1;
  std::int64_t view_numel = 1;
  for (auto tensor_d = static_cast<std::ptrdiff_t>(oldshape.size()) - 1; tensor_d >= 0;
       --tensor_d) {
    const auto td = static_cast<std::size_t>(tensor_d);
    tensor_numel = wrap_mul(tensor_numel, oldshape[td]);
    if (tensor_d == 0 ||
        (oldshape[td - 1] != 1 && oldstride[td - 1] != wrap_mul(tensor_numel, chunk_base_stride))) {
      while (view_d >= 0 &&
             (view_numel < tensor_numel || newshape[static_cast<std::size_t>(view_d)] == 1)) {
        newstride[static_cast<std::size_t>(view_d)] = wrap_mul(view_numel, chunk_base_stride);
        view_numel = wrap_mul(view_numel, newshape[static_cast<std::size_t>(view_d)]);
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

// --- the rules ---------------------------------------------------------------------------------

// The variant of a rule family a rule function takes (an elementwise op's dtype rule, a
// reduction, a softmax, a factory); the table below binds each op to its function and variant.
enum class Rule {
  unary_same,       // dtype of the input
  unary_float,      // integral -> float32
  unary_abs,        // complex -> real
  unary_bool,       // -> bool
  binary,           // result_type of the operands
  binary_float,     // result_type, integral -> float32
  binary_pow,       // result_type, bool -> int64
  div,              // true division unless rounding_mode is given
  compare,          // -> bool
  where,            // condition/self/other
  clamp,            // self/min/max
  pointwise3,       // addcmul, addcdiv: self/tensor1/tensor2 (value does not promote)
  sum,              // integral -> int64
  mean,             // integral is an error
  amax,             // amax, amin: the input's dtype
  softmax,          // softmax, log_softmax: optional dtype
  private_softmax,  // _softmax, _log_softmax: half_to_float
  full,             // dtype of fill_value
  zeros,            // zeros, ones, empty
  scalar_tensor,    // the default float dtype
};

// The quantized_decomposed schema of `qualified_name` when it is not in the global registry.
inline const FunctionSchema* builtin_schema(std::string_view qualified_name) {
  static const std::vector<FunctionSchema> schemas = [] {
    std::vector<FunctionSchema> v;
    for (const char* text : quantized_decomposed_schema_texts) v.push_back(parse_schema(text));
    return v;
  }();
  for (const FunctionSchema& s : schemas) {
    if (s.qualified_name() == qualified_name) return &s;
  }
  return nullptr;
}

// --- rule implementations ----------------------------------------------------------------------

// The operands of an elementwise op: every Tensor/Scalar argument among `names` (present in the
// schema), tensors for the shape, all for the dtype.
struct Operands {
  std::vector<const TensorMeta*> tensors;
  std::vector<Operand> ops;
};
inline Operands collect(const Context& ctx, std::initializer_list<const char*> names) {
  Operands out;
  for (const char* name : names) {
    if (!ctx.has(name)) continue;
    const std::ptrdiff_t i = ctx.schema().argument_index(name);
    const SchemaType& type = ctx.schema().arguments[static_cast<std::size_t>(i)].type;
    const Argument& a = ctx.arg(name);
    if (type.is_tensor_like() && (a.is<bool>() || a.is<std::int64_t>() || a.is<double>())) {
      // a Python number given for a Tensor argument is a wrapped number
      out.ops.push_back(Operand{Operand::Kind::wrapped, wrapped_dtype_of(a)});
    } else if (type.is_tensor_like()) {
      if (const TensorMeta* t = ctx.opt_tensor(name)) {
        out.tensors.push_back(t);
        out.ops.push_back(Context::tensor_operand(*t));
      }
    } else if (auto o = ctx.scalar_operand(name)) {
      out.ops.push_back(*o);
    }
  }
  return out;
}

inline TensorMeta rule_elementwise(const Context& ctx, Rule rule) {
  Operands o;
  switch (rule) {
    case Rule::where: o = collect(ctx, {"self", "other"}); break;
    case Rule::clamp: o = collect(ctx, {"self", "min", "max"}); break;
    case Rule::pointwise3: o = collect(ctx, {"self", "tensor1", "tensor2"}); break;
    case Rule::binary_pow: o = collect(ctx, {"self", "exponent"}); break;
    case Rule::unary_same:
    case Rule::unary_float:
    case Rule::unary_abs:
    case Rule::unary_bool: o = collect(ctx, {"self"}); break;
    default: o = collect(ctx, {"self", "other"}); break;
  }
  std::vector<const TensorMeta*> shape_tensors = o.tensors;
  if (rule == Rule::where) {
    shape_tensors.insert(shape_tensors.begin(), &ctx.tensor("condition"));
  }
  if (shape_tensors.empty()) ctx.fail("the op has no tensor operand");
  dtype type = ctx.result_type(o.ops);
  switch (rule) {
    case Rule::unary_float:
    case Rule::binary_float:
      if (is_integral(type)) type = dtype::float32;
      break;
    case Rule::unary_abs: type = complex_to_real(type); break;
    case Rule::unary_bool:
    case Rule::compare: type = dtype::bool_; break;
    case Rule::binary_pow:
      if (type == dtype::bool_) type = dtype::int64;
      break;
    case Rule::div: {
      const bool rounding = ctx.has("rounding_mode") && !ctx.arg("rounding_mode").is_none();
      if (!rounding && is_integral(type)) type = dtype::float32;
      break;
    }
    default: break;
  }
  TensorMeta out = elementwise_meta(ctx, type, shape_tensors);
  // where's condition does not decide the device or the stride order's first operand
  if (rule == Rule::where && !o.tensors.empty()) out.device = o.tensors.front()->device;
  return out;
}

// torch's computeStride (aten/src/ATen/TensorUtils.cpp) on symbolic sizes and strides: the
// decisions torch makes with guard_or_true / guard_or_false are made by the range constraints,
// else by the hints (a backed symbol's guard), else as torch's default. nullopt when no view
// exists.
inline std::optional<Exprs> view_strides_sym(const Context& ctx, const Exprs& oldshape,
                                             const Exprs& oldstride, const Exprs& newshape) {
  const sym::Ranges* r = ctx.ranges();
  const sym::Expr one(1);
  if (oldshape.empty()) return Exprs(newshape.size(), one);
  const sym::Expr numel = product(oldshape);
  const bool zero = ctx.guard_or_false(sym::eq(numel, sym::Expr(0), r));
  if (zero && oldshape == newshape) return oldstride;
  Exprs newstride(newshape.size());
  if (zero) {
    for (std::size_t d = newshape.size(); d-- > 0;) {
      newstride[d] =
          d + 1 == newshape.size() ? one : sym::max({newshape[d + 1], one}, r) * newstride[d + 1];
    }
    return newstride;
  }
  auto view_d = static_cast<std::ptrdiff_t>(newshape.size()) - 1;
  sym::Expr chunk_base_stride = oldstride.back();
  sym::Expr tensor_numel = one;
  sym::Expr view_numel = one;
  for (auto tensor_d = static_cast<std::ptrdiff_t>(oldshape.size()) - 1; tensor_d >= 0;
       --tensor_d) {
    const auto td = static_cast<std::size_t>(tensor_d);
    tensor_numel = tensor_numel * oldshape[td];
    if (tensor_d == 0 ||
        (ctx.guard_or_true(sym::ne(oldshape[td - 1], one, r)) &&
         ctx.guard_or_true(sym::ne(oldstride[td - 1], tensor_numel * chunk_base_stride, r)))) {
      while (view_d >= 0) {
        const auto vd = static_cast<std::size_t>(view_d);
        if (!ctx.guard_or_true(sym::lt(view_numel, tensor_numel, r)) &&
            !ctx.guard_or_false(sym::eq(newshape[vd], one, r))) {
          break;
        }
        newstride[vd] = view_numel * chunk_base_stride;
        view_numel = view_numel * newshape[vd];
        --view_d;
      }
      if (ctx.guard_or_true(sym::ne(view_numel, tensor_numel, r))) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[td - 1];
        tensor_numel = one;
        view_numel = one;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

// view / reshape when a size or stride is symbolic: torch's infer_size (the -1 is
// numel // the other sizes' product, which must divide it) and computeStride; reshape falls back
// to a contiguous copy where no view exists.
inline TensorMeta rule_view_symbolic(const Context& ctx, const TensorMeta& self,
                                     const Sizes& shape_arg, std::ptrdiff_t infer,
                                     std::string_view op) {
  const sym::Ranges* r = ctx.ranges();
  const Exprs old_sizes = exprs_of(ctx, self.sizes);
  const Exprs old_strides = exprs_of(ctx, self.strides);
  Exprs shape = exprs_of(ctx, shape_arg);
  const sym::Expr numel = product(old_sizes);
  auto invalid = [&]() {
    ctx.fail("shape '" + shape_str(shape_arg) + "' is invalid for input of size " +
             sym::str(numel));
  };
  if (infer >= 0) {
    sym::Expr known(1);
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (static_cast<std::ptrdiff_t>(i) != infer) known = known * shape[i];
    }
    if (known.as_integer() == std::int64_t{0}) {
      ctx.fail("cannot reshape tensor of " + sym::str(numel) + " elements into shape " +
               shape_str(shape_arg) +
               " because the unspecified dimension size -1 can be any value and is ambiguous");
    }
    if (!ctx.guard_or_true(sym::eq(sym::mod(numel, known, r), sym::Expr(0), r))) invalid();
    shape[static_cast<std::size_t>(infer)] = sym::floordiv(numel, known, r);
  }
  const sym::Expr new_numel = product(shape);
  if (new_numel != numel && !ctx.guard_or_true(sym::eq(new_numel, numel, r))) invalid();
  if (auto strides = view_strides_sym(ctx, old_sizes, old_strides, shape)) {
    TensorMeta out =
        make_meta(self.dtype, sizes_of(ctx, shape), sizes_of(ctx, *strides), self.device);
    out.storage_offset = self.storage_offset;
    return out;
  }
  if (op == "reshape" || op == "flatten") {
    return contiguous_meta(ctx, self.dtype, sizes_of(ctx, shape), self.device);
  }
  ctx.fail(
      "view size is not compatible with input tensor's size and stride (at least one dimension "
      "spans across two contiguous subspaces). Use .reshape(...) instead.");
}

inline TensorMeta rule_view(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  const Sizes shape_arg = ctx.has("size") ? ctx.sym_list("size") : ctx.sym_list("shape");
  // infer -1
  std::ptrdiff_t infer = -1;
  for (std::size_t i = 0; i < shape_arg.size(); ++i) {
    if (const auto* v = std::get_if<std::int64_t>(&shape_arg[i])) {
      if (*v == -1) {
        if (infer >= 0) ctx.fail("only one dimension can be inferred");
        infer = static_cast<std::ptrdiff_t>(i);
      } else if (*v < 0) {
        ctx.fail("invalid shape dimension " + std::to_string(*v));
      }
    }
  }
  auto in_sizes = all_concrete(self.sizes);
  auto in_strides = all_concrete(self.strides);
  auto out_concrete = all_concrete(shape_arg);
  if (!in_sizes || !out_concrete || !in_strides) {
    return rule_view_symbolic(ctx, self, shape_arg, infer, op);
  }
  std::int64_t numel = 1;
  for (std::int64_t s : *in_sizes) numel = wrap_mul(numel, s);
  Ints shape = *out_concrete;
  if (infer >= 0) {
    std::int64_t known = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (static_cast<std::ptrdiff_t>(i) != infer) {
        known =
            checked_mul(ctx, known, shape[i], "the element count of shape " + shape_str(shape_arg));
      }
    }
    if (known == 0 || numel % known != 0) {
      ctx.fail("shape '" + shape_str(shape_arg) + "' is invalid for input of size " +
               std::to_string(numel));
    }
    shape[static_cast<std::size_t>(infer)] = numel / known;
  }
  std::int64_t new_numel = 1;
  for (std::int64_t s : shape) {
    new_numel =
        checked_mul(ctx, new_numel, s, "the element count of shape " + shape_str(shape_arg));
  }
  if (new_numel != numel) {
    ctx.fail("shape '" + shape_str(shape_arg) + "' is invalid for input of size " +
             std::to_string(numel));
  }
  std::optional<Ints> strides;
  if (in_strides) strides = view_strides(*in_sizes, *in_strides, shape);
  if (strides) {
    TensorMeta out = make_meta(self.dtype, to_sym(shape), to_sym(*strides), self.device);
    out.storage_offset = self.storage_offset;
    return out;
  }
  if (op == "reshape" || op == "flatten") {
    return make_meta(self.dtype, to_sym(shape), to_sym(contiguous_strides(shape)), self.device);
  }
  ctx.fail(
      "view size is not compatible with input tensor's size and stride (at least one dimension "
      "spans across two contiguous subspaces). Use .reshape(...) instead.");
}

inline TensorMeta rule_permute(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const Ints dims = ctx.int_list("dims");
  if (dims.size() != self.sizes.size()) {
    ctx.fail(
        "permute(sparse_coo): number of dimensions in the tensor input does not match the "
        "length of the desired ordering of dimensions i.e. input.dim() = " +
        std::to_string(self.sizes.size()) +
        " is not equal to len(dims) = " + std::to_string(dims.size()));
  }
  TensorMeta out = self;
  std::vector<bool> seen(dims.size(), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const auto d = static_cast<std::size_t>(ctx.wrap_dim(dims[i], self.sizes.size()));
    if (seen[d]) ctx.fail("permute(): duplicate dims are not allowed.");
    seen[d] = true;
    out.sizes[i] = self.sizes[d];
    out.strides[i] = self.strides[d];
  }
  out.requires_grad = false;
  return out;
}

inline TensorMeta transpose_meta(const Context& ctx, const TensorMeta& self, std::int64_t d0,
                                 std::int64_t d1) {
  TensorMeta out = self;
  out.requires_grad = false;
  if (self.sizes.empty()) {
    (void)ctx.wrap_dim(d0, 0);
    (void)ctx.wrap_dim(d1, 0);
    return out;
  }
  const auto a = static_cast<std::size_t>(ctx.wrap_dim(d0, self.sizes.size()));
  const auto b = static_cast<std::size_t>(ctx.wrap_dim(d1, self.sizes.size()));
  std::swap(out.sizes[a], out.sizes[b]);
  std::swap(out.strides[a], out.strides[b]);
  return out;
}

inline TensorMeta rule_unsqueeze(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  const std::int64_t dim = ctx.integer("dim");
  const auto r = static_cast<std::int64_t>(rank) + 1;
  if (dim < -r || dim >= r) {
    ctx.fail("Dimension out of range (expected to be in range of [" + std::to_string(-r) + ", " +
             std::to_string(r - 1) + "], but got " + std::to_string(dim) + ")");
  }
  const auto d = static_cast<std::size_t>(dim < 0 ? dim + r : dim);
  TensorMeta out = self;
  out.requires_grad = false;
  const SymInt stride = d >= rank ? SymInt{std::int64_t{1}}
                                  : ctx.mul(self.sizes[d], self.strides[d], "the new stride");
  out.sizes.insert(out.sizes.begin() + static_cast<std::ptrdiff_t>(d), std::int64_t{1});
  out.strides.insert(out.strides.begin() + static_cast<std::ptrdiff_t>(d), stride);
  return out;
}

inline TensorMeta rule_squeeze(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  std::vector<bool> drop(rank, false);
  if (ctx.has("dim") || ctx.has("dims")) {
    const Ints dims = ctx.int_list(ctx.has("dim") ? "dim" : "dims");
    for (std::int64_t dim : dims) {
      const auto d = static_cast<std::size_t>(ctx.wrap_dim(dim, rank));
      if (rank > 0 && ctx.is_one(self.sizes[d])) drop[d] = true;
    }
  } else {
    for (std::size_t d = 0; d < rank; ++d) drop[d] = ctx.is_one(self.sizes[d]);
  }
  TensorMeta out = self;
  out.requires_grad = false;
  out.sizes.clear();
  out.strides.clear();
  for (std::size_t d = 0; d < rank; ++d) {
    if (drop[d]) continue;
    out.sizes.push_back(self.sizes[d]);
    out.strides.push_back(self.strides[d]);
  }
  return out;
}

inline TensorMeta rule_expand(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const Sizes target = ctx.sym_list("size");
  if (target.size() < self.sizes.size()) {
    ctx.fail("the number of sizes provided (" + std::to_string(target.size()) +
             ") must be greater or equal to the number of dimensions in the tensor (" +
             std::to_string(self.sizes.size()) + ")");
  }
  TensorMeta out = self;
  out.requires_grad = false;
  out.sizes.assign(target.size(), std::int64_t{1});
  out.strides.assign(target.size(), std::int64_t{0});
  const std::size_t off = target.size() - self.sizes.size();
  for (std::size_t i = 0; i < target.size(); ++i) {
    const SymInt& t = target[i];
    const bool keep = t.index() == 0 && std::get<std::int64_t>(t) == -1;
    if (i < off) {
      if (keep) {
        ctx.fail(
            "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
            "dimension " +
            std::to_string(i));
      }
      out.sizes[i] = t;
      out.strides[i] = std::int64_t{0};
      continue;
    }
    const SymInt& s = self.sizes[i - off];
    if (keep || ctx.equal(t, s)) {
      out.sizes[i] = s;
      out.strides[i] = self.strides[i - off];
    } else if (ctx.is_one(s)) {
      out.sizes[i] = t;
      out.strides[i] = std::int64_t{0};
    } else {
      ctx.fail("The expanded size of the tensor (" + sym_str(t) +
               ") must match the existing size (" + sym_str(s) + ") at non-singleton dimension " +
               std::to_string(i) + ".  Target sizes: " + shape_str(target) +
               ".  Tensor sizes: " + shape_str(self.sizes));
    }
  }
  return out;
}

// torch's _compute_slice_index (torch/_subclasses/fake_impls.py): `index` wrapped and clamped
// into [0, size], or nullopt when the guards cannot decide (torch then makes an unbacked symbol).
inline std::optional<sym::Expr> slice_index(const Context& ctx, const sym::Expr& size,
                                            const sym::Expr& index) {
  const sym::Ranges* r = ctx.ranges();
  const sym::Expr zero(0);
  if (ctx.guard_or_false(sym::logical_and({sym::ge(index, zero, r), sym::le(index, size, r)}))) {
    return index;
  }
  if (ctx.guard_or_false(sym::logical_and({sym::lt(index, zero, r), sym::ge(index, -size, r)}))) {
    return index + size;
  }
  if (ctx.guard_or_false(sym::lt(index, -size, r))) return zero;
  if (ctx.guard_or_false(sym::gt(index, size, r))) return size;
  if (ctx.guard_or_false(sym::ge(index, zero, r))) return sym::min({index, size}, r);
  if (ctx.guard_or_false(sym::lt(index, zero, r))) return sym::max({index + size, zero}, r);
  return std::nullopt;
}

// slice.Tensor as torch's FakeTensor implementation computes it (fake_impls.py slice_forward):
// start and end wrapped and clamped, the size ceil((end - start) / step) (0 when end <= start),
// the stride times step, the offset plus start * stride. Concrete inputs take int64 arithmetic.
inline TensorMeta rule_slice(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  if (rank == 0) ctx.fail("slice() cannot be applied to a 0-dim tensor.");
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank));
  auto opt_sym = [&](const char* name) -> std::optional<SymInt> {
    const Argument& a = ctx.arg(name);
    if (a.is_none()) return std::nullopt;
    return ctx.sym_of(a, "argument '" + std::string(name) + "'");
  };
  const std::optional<SymInt> start_arg = opt_sym("start");
  const std::optional<SymInt> end_arg = opt_sym("end");
  const std::int64_t step = ctx.integer("step");
  if (step <= 0) ctx.fail("slice step must be positive");
  constexpr std::int64_t maxsize = std::numeric_limits<std::int64_t>::max();
  auto is_int = [](const std::optional<SymInt>& v, std::int64_t n) {
    return v && v->index() == 0 && std::get<std::int64_t>(*v) == n;
  };
  TensorMeta out = self;
  out.requires_grad = false;
  if ((!start_arg || is_int(start_arg, 0)) && (!end_arg || is_int(end_arg, maxsize)) && step == 1) {
    return out;  // the whole dimension, symbolic or not
  }
  const bool concrete_case = self.sizes[d].index() == 0 && self.strides[d].index() == 0 &&
                             (!start_arg || start_arg->index() == 0) &&
                             (!end_arg || end_arg->index() == 0) &&
                             self.storage_offset.index() == 0;
  if (concrete_case) {
    const std::int64_t size = std::get<std::int64_t>(self.sizes[d]);
    std::int64_t start = start_arg ? std::get<std::int64_t>(*start_arg) : 0;
    std::int64_t end = end_arg ? std::get<std::int64_t>(*end_arg) : maxsize;
    if (start < 0) start += size;
    if (end < 0) end += size;
    if (start < 0) {
      start = 0;
    } else if (start >= size) {
      start = size;
    }
    if (end < start) {
      end = start;
    } else if (end >= size) {
      end = size;
    }
    const std::int64_t stride = std::get<std::int64_t>(self.strides[d]);
    // end - start is in [0, size]; (n + step - 1) / step without overflow for any step >= 1.
    const std::int64_t n = end - start;
    out.sizes[d] = n / step + (n % step != 0 ? 1 : 0);
    out.strides[d] = checked_mul(ctx, stride, step, "the stride of the slice");
    out.storage_offset =
        checked_add(ctx, std::get<std::int64_t>(self.storage_offset),
                    checked_mul(ctx, start, stride, "the slice's offset"), "the storage offset");
    return out;
  }
  const sym::Ranges* r = ctx.ranges();
  const sym::Expr size = ctx.ex(self.sizes[d]);
  const sym::Expr stride = ctx.ex(self.strides[d]);
  const std::optional<sym::Expr> start =
      start_arg ? slice_index(ctx, size, ctx.ex(*start_arg)) : sym::Expr(0);
  const std::optional<sym::Expr> end =
      !end_arg || is_int(end_arg, maxsize) ? size : slice_index(ctx, size, ctx.ex(*end_arg));
  if (!start || !end) {
    ctx.fail("the slice bounds of dimension " + std::to_string(d) +
             " cannot be decided under the symbols' ranges and hints (torch makes an unbacked "
             "symbol for the size)");
  }
  const sym::Expr step_e(step);
  sym::Expr new_size;
  if (ctx.guard_or_false(sym::ge(*end, *start, r))) {
    new_size = sym::floordiv(*end - *start + step_e - sym::Expr(1), step_e, r);
  } else if (ctx.guard_or_false(sym::ge(*start, *end, r))) {
    new_size = sym::Expr(0);
  } else {
    const sym::Expr diff = sym::max({*end - *start, sym::Expr(0)}, r);
    new_size = sym::floordiv(diff + step_e - sym::Expr(1), step_e, r);
  }
  out.sizes[d] = ctx.out(new_size);
  out.strides[d] = ctx.out(stride * step_e);
  out.storage_offset = ctx.out(ctx.ex(self.storage_offset) + *start * stride);
  return out;
}

// select.int (torch's select meta: the index must be in [-size, size), a negative one counts
// from the end; the offset grows by index * stride).
inline TensorMeta rule_select(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  if (rank == 0) ctx.fail("select() cannot be applied to a 0-dim tensor.");
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank));
  const SymInt index_arg = ctx.sym_of(ctx.arg("index"), "argument 'index'");
  TensorMeta out = self;
  out.requires_grad = false;
  out.sizes.erase(out.sizes.begin() + static_cast<std::ptrdiff_t>(d));
  out.strides.erase(out.strides.begin() + static_cast<std::ptrdiff_t>(d));
  const auto out_of_range = [&]() {
    ctx.fail("select(): index " + sym_str(index_arg) + " out of range for tensor of size " +
             shape_str(self.sizes) + " at dimension " + std::to_string(d));
  };
  if (index_arg.index() == 0 && self.sizes[d].index() == 0 && self.strides[d].index() == 0 &&
      self.storage_offset.index() == 0) {
    std::int64_t index = std::get<std::int64_t>(index_arg);
    const std::int64_t size = std::get<std::int64_t>(self.sizes[d]);
    if (index < -size || index >= size) out_of_range();
    if (index < 0) index += size;
    out.storage_offset = checked_add(
        ctx, std::get<std::int64_t>(self.storage_offset),
        checked_mul(ctx, index, std::get<std::int64_t>(self.strides[d]), "the selected offset"),
        "the storage offset");
    return out;
  }
  const sym::Ranges* r = ctx.ranges();
  const sym::Expr size = ctx.ex(self.sizes[d]);
  sym::Expr index = ctx.ex(index_arg);
  if (ctx.guard_or_false(sym::lt(index, -size, r)) || ctx.guard_or_false(sym::ge(index, size, r))) {
    out_of_range();
  }
  if (ctx.guard_or_false(sym::lt(index, sym::Expr(0), r))) index = index + size;
  out.storage_offset = ctx.out(ctx.ex(self.storage_offset) + index * ctx.ex(self.strides[d]));
  return out;
}

inline TensorMeta rule_flatten(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  if (rank == 0) {
    TensorMeta out = make_meta(self.dtype, {std::int64_t{1}}, {std::int64_t{1}}, self.device);
    out.storage_offset = self.storage_offset;
    return out;
  }
  const auto s = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("start_dim"), rank));
  const auto e = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("end_dim"), rank));
  if (s > e) ctx.fail("flatten() has invalid args: start_dim cannot come after end_dim");
  if (s == e) {
    TensorMeta out = self;
    out.requires_grad = false;
    return out;
  }
  if (!all_concrete(self.sizes) || !all_concrete(self.strides)) {
    sym::Expr prod(1);
    for (std::size_t i = s; i <= e; ++i) prod = prod * ctx.ex(self.sizes[i]);
    Sizes shape(self.sizes.begin(), self.sizes.begin() + static_cast<std::ptrdiff_t>(s));
    shape.push_back(ctx.out(prod));
    shape.insert(shape.end(), self.sizes.begin() + static_cast<std::ptrdiff_t>(e) + 1,
                 self.sizes.end());
    return rule_view_symbolic(ctx, self, shape, -1, "flatten");
  }
  std::int64_t prod = 1;
  for (std::size_t i = s; i <= e; ++i) {
    prod = checked_mul(
        ctx, prod, ctx.concrete(self.sizes[i], "argument 'self' dimension " + std::to_string(i)),
        "the flattened size");
  }
  Sizes shape(self.sizes.begin(), self.sizes.begin() + static_cast<std::ptrdiff_t>(s));
  shape.push_back(prod);
  shape.insert(shape.end(), self.sizes.begin() + static_cast<std::ptrdiff_t>(e) + 1,
               self.sizes.end());
  auto in_sizes = ctx.concrete_all(self.sizes, "argument 'self'");
  auto in_strides = all_concrete(self.strides);
  const Ints out_shape = ctx.concrete_all(shape, "the result's");
  if (in_strides) {
    if (auto st = view_strides(in_sizes, *in_strides, out_shape)) {
      TensorMeta out = make_meta(self.dtype, shape, to_sym(*st), self.device);
      out.storage_offset = self.storage_offset;
      return out;
    }
  }
  return make_meta(self.dtype, shape, to_sym(contiguous_strides(out_shape)), self.device);
}

inline TensorMeta rule_contiguous(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const MemoryFormat f =
      ctx.opt_memory_format("memory_format").value_or(MemoryFormat::ContiguousFormat);
  auto s = all_concrete(self.sizes);
  auto st = all_concrete(self.strides);
  if (s && st) {
    const bool already = f == MemoryFormat::ChannelsLast || f == MemoryFormat::ChannelsLast3d
                             ? is_channels_last(*s, *st)
                             : is_contiguous(*s, *st);
    if (already) {
      TensorMeta out = self;
      out.requires_grad = false;
      return out;
    }
  }
  return formatted_meta(ctx, self.dtype, self.sizes, self.device,
                        f == MemoryFormat::PreserveFormat ? MemoryFormat::ContiguousFormat : f,
                        nullptr);
}

inline TensorMeta rule_cat(const Context& ctx) {
  const std::vector<const TensorMeta*> ts = ctx.tensor_list("tensors");
  if (ts.empty()) ctx.fail("torch.cat(): expected a non-empty list of Tensors");
  std::vector<Operand> ops;
  std::vector<const TensorMeta*> kept;
  for (const TensorMeta* t : ts) {
    ops.push_back(Operand{Operand::Kind::tensor, t->dtype});
    // legacy: 1-D tensors of size 0 are skipped
    if (t->sizes.size() == 1 && t->sizes[0].index() == 0 &&
        std::get<std::int64_t>(t->sizes[0]) == 0) {
      continue;
    }
    kept.push_back(t);
  }
  const dtype type = ctx.result_type(ops);
  const Device device = ts.front()->device;
  if (kept.empty()) return contiguous_meta(ctx, type, ts.front()->sizes, device);
  const std::size_t rank = kept.front()->sizes.size();
  if (rank == 0) ctx.fail("zero-dimensional tensor (at position 0) cannot be concatenated");
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank));
  Sizes shape = kept.front()->sizes;
  SymInt total = std::int64_t{0};
  for (std::size_t k = 0; k < kept.size(); ++k) {
    const Sizes& s = kept[k]->sizes;
    if (s.size() != rank) {
      ctx.fail("Tensors must have same number of dimensions: got " + std::to_string(rank) +
               " and " + std::to_string(s.size()));
    }
    for (std::size_t i = 0; i < rank; ++i) {
      if (i == d) continue;
      if (!ctx.equal(s[i], shape[i])) {
        ctx.fail("Sizes of tensors must match except in dimension " + std::to_string(d) +
                 ". Expected size " + sym_str(shape[i]) + " but got size " + sym_str(s[i]) +
                 " for tensor number " + std::to_string(k) + " in the list.");
      }
    }
    total = ctx.add(total, s[d], "the concatenated size");
  }
  shape[d] = total;
  return contiguous_meta(ctx, type, std::move(shape), device);
}

inline TensorMeta rule_stack(const Context& ctx) {
  const std::vector<const TensorMeta*> ts = ctx.tensor_list("tensors");
  if (ts.empty()) ctx.fail("stack expects a non-empty TensorList");
  std::vector<Operand> ops;
  for (std::size_t k = 0; k < ts.size(); ++k) {
    ops.push_back(Operand{Operand::Kind::tensor, ts[k]->dtype});
    bool same = ts[k]->sizes.size() == ts[0]->sizes.size();
    for (std::size_t i = 0; same && i < ts[0]->sizes.size(); ++i) {
      same = ctx.equal(ts[k]->sizes[i], ts[0]->sizes[i]);
    }
    if (!same) {
      ctx.fail("stack expects each tensor to be equal size, but got " + shape_str(ts[0]->sizes) +
               " at entry 0 and " + shape_str(ts[k]->sizes) + " at entry " + std::to_string(k));
    }
  }
  const std::size_t rank = ts[0]->sizes.size();
  const std::int64_t dim = ctx.integer("dim");
  const auto r = static_cast<std::int64_t>(rank) + 1;
  if (dim < -r || dim >= r) {
    ctx.fail("Dimension out of range (expected to be in range of [" + std::to_string(-r) + ", " +
             std::to_string(r - 1) + "], but got " + std::to_string(dim) + ")");
  }
  const auto d = static_cast<std::size_t>(dim < 0 ? dim + r : dim);
  Sizes shape = ts[0]->sizes;
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(d),
               static_cast<std::int64_t>(ts.size()));
  return contiguous_meta(ctx, ctx.result_type(ops), std::move(shape), ts[0]->device);
}

inline TensorMeta rule_index_select(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const TensorMeta& index = ctx.tensor("index");
  if (index.sizes.size() > 1) ctx.fail("index_select(): Index is supposed to be a vector");
  const SymInt n = index.sizes.empty() ? SymInt{std::int64_t{1}} : index.sizes[0];
  const std::size_t rank = self.sizes.size();
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank));
  Sizes shape = self.sizes;
  if (rank > 0) shape[d] = n;
  return contiguous_meta(ctx, self.dtype, std::move(shape), self.device);
}

inline TensorMeta rule_embedding(const Context& ctx) {
  const TensorMeta& weight = ctx.tensor("weight");
  const TensorMeta& indices = ctx.tensor("indices");
  if (weight.sizes.size() != 2) ctx.fail("'weight' must be 2-D");
  Sizes shape = indices.sizes;
  shape.push_back(weight.sizes[1]);
  return contiguous_meta(ctx, weight.dtype, std::move(shape), weight.device);
}

inline void check_inner(const Context& ctx, const SymInt& a, const SymInt& b, const Sizes& sa,
                        const Sizes& sb) {
  if (!ctx.equal(a, b)) {
    auto flat = [](const Sizes& s) {
      std::string out;
      for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + sym_str(s[i]);
      return out;
    };
    ctx.fail("mat1 and mat2 shapes cannot be multiplied (" + flat(sa) + " and " + flat(sb) + ")");
  }
}

inline TensorMeta rule_linear(const Context& ctx) {
  const TensorMeta& input = ctx.tensor("input");
  const TensorMeta& weight = ctx.tensor("weight");
  if (weight.sizes.size() != 2 || input.sizes.empty()) {
    ctx.fail("linear needs a 2-D weight and an input of at least 1 dimension, got " +
             shape_str(input.sizes) + " and " + shape_str(weight.sizes));
  }
  // torch folds the leading dimensions of the input into mat1's rows
  const Sizes leading(input.sizes.begin(), input.sizes.end() - 1);
  SymInt rows = std::int64_t{1};
  if (auto c = all_concrete(leading)) {
    std::int64_t n = 1;
    for (std::int64_t v : *c) n *= v;
    rows = n;
  } else {
    rows = leading.front();
  }
  check_inner(ctx, input.sizes.back(), weight.sizes[1], Sizes{rows, input.sizes.back()},
              Sizes{weight.sizes[1], weight.sizes[0]});
  Sizes shape(input.sizes.begin(), input.sizes.end() - 1);
  shape.push_back(weight.sizes[0]);
  return contiguous_meta(ctx, input.dtype, std::move(shape), input.device);
}

inline TensorMeta rule_mm(const Context& ctx, std::string_view a_name, std::string_view b_name,
                          std::size_t rank) {
  const TensorMeta& a = ctx.tensor(a_name);
  const TensorMeta& b = ctx.tensor(b_name);
  if (a.sizes.size() != rank || b.sizes.size() != rank) {
    ctx.fail("expected " + std::to_string(rank) + "-D tensors, got " + shape_str(a.sizes) +
             " and " + shape_str(b.sizes));
  }
  if (rank == 3 && !ctx.equal(a.sizes[0], b.sizes[0])) {
    ctx.fail("batch1 and batch2 must have same number of batches, got " + sym_str(a.sizes[0]) +
             " and " + sym_str(b.sizes[0]));
  }
  check_inner(ctx, a.sizes[rank - 1], b.sizes[rank - 2], a.sizes, b.sizes);
  Sizes shape(a.sizes.begin(), a.sizes.end() - 1);
  shape.push_back(b.sizes[rank - 1]);
  return contiguous_meta(ctx, a.dtype, std::move(shape), a.device);
}

inline TensorMeta rule_matmul(const Context& ctx) {
  const TensorMeta& a = ctx.tensor("self");
  const TensorMeta& b = ctx.tensor("other");
  const std::size_t ra = a.sizes.size(), rb = b.sizes.size();
  if (ra == 0 || rb == 0) {
    ctx.fail("both arguments to matmul need to be at least 1D, but they are " + std::to_string(ra) +
             "D and " + std::to_string(rb) + "D");
  }
  const SymInt& ka = a.sizes.back();
  const SymInt& kb = rb == 1 ? b.sizes[0] : b.sizes[rb - 2];
  if (!ctx.equal(ka, kb)) {
    if (ra == 1 && rb == 1) {
      ctx.fail("inconsistent tensor size, expected tensor [" + sym_str(ka) + "] and src [" +
               sym_str(kb) + "] to have the same number of elements, but got " + sym_str(ka) +
               " and " + sym_str(kb) + " elements respectively");
    }
    check_inner(ctx, ka, kb, a.sizes, b.sizes);
  }
  Sizes shape;
  if (ra == 1 && rb == 1) {
    // dot: a scalar
  } else if (rb == 1) {
    shape.assign(a.sizes.begin(), a.sizes.end() - 1);
  } else if (ra == 1) {
    shape.assign(b.sizes.begin(), b.sizes.end() - 2);
    shape.push_back(b.sizes.back());
  } else {
    const Sizes ba(a.sizes.begin(), a.sizes.end() - 2);
    const Sizes bb(b.sizes.begin(), b.sizes.end() - 2);
    shape = broadcast(ctx, {&ba, &bb});
    shape.push_back(a.sizes[ra - 2]);
    shape.push_back(b.sizes.back());
  }
  return contiguous_meta(ctx, a.dtype, std::move(shape), a.device);
}

inline TensorMeta rule_addmm(const Context& ctx, bool batched) {
  TensorMeta out = batched ? rule_mm(ctx, "batch1", "batch2", 3) : rule_mm(ctx, "mat1", "mat2", 2);
  const TensorMeta& self = ctx.tensor("self");
  const Sizes b = broadcast(ctx, {&self.sizes, &out.sizes});
  if (b.size() != out.sizes.size()) {
    ctx.fail("self of shape " + shape_str(self.sizes) + " does not broadcast to the result's " +
             shape_str(out.sizes));
  }
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!ctx.equal(b[i], out.sizes[i])) {
      ctx.fail("self of shape " + shape_str(self.sizes) + " does not broadcast to the result's " +
               shape_str(out.sizes));
    }
  }
  return out;
}

inline TensorMeta rule_convolution(const Context& ctx) {
  const TensorMeta& input = ctx.tensor("input");
  const TensorMeta& weight = ctx.tensor("weight");
  const std::size_t rank = weight.sizes.size();
  if (rank < 3) ctx.fail("weight should have at least three dimensions");
  if (input.sizes.size() != rank) {
    ctx.fail("Expected " + std::to_string(rank) + "-dimensional input for " + std::to_string(rank) +
             "-dimensional weight " + shape_str(weight.sizes) + ", but got " +
             std::to_string(input.sizes.size()) + "-dimensional input of size " +
             shape_str(input.sizes) + " instead");
  }
  const std::size_t nsp = rank - 2;
  auto expand_param = [&](const char* name) {
    Ints v = ctx.int_list(name);
    if (v.size() == 1 && nsp > 1) v.assign(nsp, v[0]);
    if (v.size() != nsp) {
      ctx.fail("expected " + std::string(name) + " to be a single integer value or a list of " +
               std::to_string(nsp) + " values to match the convolution dimensions, but got " +
               std::string(name) + "=" + shape_str(to_sym(v)));
    }
    return v;
  };
  const Ints stride = expand_param("stride");
  const Ints padding = expand_param("padding");
  const Ints dilation = expand_param("dilation");
  const bool transposed = ctx.has("transposed") && ctx.boolean("transposed");  // conv2d: false
  const Ints output_padding = transposed ? expand_param("output_padding") : Ints(nsp, 0);
  const std::int64_t groups = ctx.integer("groups");
  if (groups <= 0) ctx.fail("non-positive groups is not supported");
  Sizes shape;
  shape.push_back(input.sizes[0]);
  if (transposed) {
    shape.push_back(ctx.concrete(weight.sizes[1], "argument 'weight' dimension 1") * groups);
  } else {
    shape.push_back(weight.sizes[0]);
  }
  for (std::size_t i = 0; i < nsp; ++i) {
    const std::int64_t in =
        ctx.concrete(input.sizes[i + 2], "argument 'input' dimension " + std::to_string(i + 2));
    const std::int64_t k =
        ctx.concrete(weight.sizes[i + 2], "argument 'weight' dimension " + std::to_string(i + 2));
    std::int64_t o = 0;
    if (transposed) {
      o = (in - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k - 1) + output_padding[i] + 1;
    } else {
      o = (in + 2 * padding[i] - dilation[i] * (k - 1) - 1) / stride[i] + 1;
    }
    if (o <= 0) {
      ctx.fail("the computed output size of spatial dimension " + std::to_string(i) + " is " +
               std::to_string(o) + ", which is too small");
    }
    shape.push_back(o);
  }
  return contiguous_meta(ctx, input.dtype, std::move(shape), input.device);
}

inline NodeValue rule_batch_norm(const Context& ctx) {
  const TensorMeta& input = ctx.tensor("input");
  TensorMeta out = formatted_meta(ctx, input.dtype, input.sizes, input.device,
                                  MemoryFormat::PreserveFormat, &input);
  const TensorMeta empty =
      make_meta(input.dtype, {std::int64_t{0}}, {std::int64_t{1}}, input.device);
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(empty), NodeValue(empty)});
}

// The normalized_shape check of layer_norm and native_layer_norm (torch's
// _check_layer_norm_inputs).
inline void check_normalized_shape(const Context& ctx, const TensorMeta& input,
                                   const Sizes& normalized) {
  const std::size_t rank = input.sizes.size();
  bool ok = normalized.size() <= rank && !normalized.empty();
  for (std::size_t i = 0; ok && i < normalized.size(); ++i) {
    ok = ctx.equal(normalized[i], input.sizes[rank - normalized.size() + i]);
  }
  if (!ok) {
    ctx.fail("Given normalized_shape=" + shape_str(normalized) +
             ", expected input with shape [*, " + shape_str(normalized).substr(1) +
             ", but got input of size" + shape_str(input.sizes));
  }
}

inline NodeValue rule_layer_norm(const Context& ctx) {
  const TensorMeta& input = ctx.tensor("input");
  const Sizes normalized = ctx.sym_list("normalized_shape");
  check_normalized_shape(ctx, input, normalized);
  const std::size_t rank = input.sizes.size();
  TensorMeta out = contiguous_meta(ctx, input.dtype, input.sizes, input.device);
  Sizes stat(input.sizes.begin(),
             input.sizes.end() - static_cast<std::ptrdiff_t>(normalized.size()));
  stat.resize(rank, std::int64_t{1});
  TensorMeta mean = contiguous_meta(ctx, input.dtype, stat, input.device);
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(mean), NodeValue(mean)});
}

inline TensorMeta reduce_meta(const Context& ctx, const TensorMeta& self, dtype type,
                              const std::optional<Ints>& dims, bool keepdim) {
  const std::size_t rank = self.sizes.size();
  std::vector<bool> reduce(rank, false);
  if (!dims || dims->empty()) {
    reduce.assign(rank, true);
  } else {
    for (std::int64_t dim : *dims) {
      const auto d = static_cast<std::size_t>(ctx.wrap_dim(dim, rank));
      if (rank == 0) continue;
      if (reduce[d]) {
        ctx.fail("dim " + std::to_string(d) + " appears multiple times in the list of dims");
      }
      reduce[d] = true;
    }
  }
  Sizes shape;
  for (std::size_t d = 0; d < rank; ++d) {
    if (!reduce[d]) {
      shape.push_back(self.sizes[d]);
    } else if (keepdim) {
      shape.push_back(std::int64_t{1});
    }
  }
  return contiguous_meta(ctx, type, std::move(shape), self.device);
}

inline TensorMeta rule_reduction(const Context& ctx, Rule rule) {
  const TensorMeta& self = ctx.tensor("self");
  const std::optional<Ints> dims = ctx.has("dim") ? ctx.opt_int_list("dim") : std::nullopt;
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  dtype type = self.dtype;
  if (auto d = ctx.opt_dtype("dtype")) {
    type = *d;
  } else if (rule == Rule::sum && is_integral(self.dtype)) {
    type = dtype::int64;
  } else if (rule == Rule::mean && is_integral(self.dtype)) {
    ctx.fail(
        "mean(): could not infer output dtype. Input dtype must be either a floating point "
        "or complex dtype. Got: " +
        std::string(dtype_name(self.dtype)));
  }
  return reduce_meta(ctx, self, type, dims, keepdim);
}

inline TensorMeta rule_softmax(const Context& ctx, Rule rule) {
  const TensorMeta& self = ctx.tensor("self");
  (void)ctx.wrap_dim(ctx.integer("dim"), self.sizes.size());
  dtype type = self.dtype;
  if (rule == Rule::softmax) {
    if (auto d = ctx.opt_dtype("dtype")) type = *d;
  } else if (ctx.boolean("half_to_float") &&
             (self.dtype == dtype::float16 || self.dtype == dtype::bfloat16)) {
    type = dtype::float32;
  }
  return contiguous_meta(ctx, type, self.sizes, self.device);
}

inline TensorMeta rule_to(const Context& ctx, bool always_copy) {
  const TensorMeta& self = ctx.tensor("self");
  const dtype type = ctx.opt_dtype("dtype").value_or(self.dtype);
  const Device device = ctx.opt_device("device").value_or(self.device);
  const std::optional<MemoryFormat> format = ctx.opt_memory_format("memory_format");
  const bool copy = always_copy || (ctx.has("copy") && ctx.boolean("copy"));
  if (!copy && type == self.dtype && device == self.device &&
      (!format || *format == MemoryFormat::PreserveFormat)) {
    TensorMeta out = self;  // `to` returns self unchanged
    out.requires_grad = false;
    return out;
  }
  return formatted_meta(ctx, type, self.sizes, device, format, &self);
}

inline TensorMeta rule_factory(const Context& ctx, Rule rule) {
  Sizes size;
  dtype type = dtype::float32;
  if (rule == Rule::full) {
    size = ctx.sym_list("size");
    if (auto o = ctx.scalar_operand("fill_value")) type = o->type;
  } else if (rule == Rule::scalar_tensor) {
    // scalar_tensor's dtype defaults to the default float dtype, whatever the number
  } else {
    size = ctx.sym_list("size");
  }
  for (std::size_t i = 0; i < size.size(); ++i) {
    if (const auto* v = std::get_if<std::int64_t>(&size[i]); v != nullptr && *v < 0) {
      ctx.fail("Trying to create tensor with negative dimension " + std::to_string(*v) + ": " +
               shape_str(size));
    }
  }
  if (auto d = ctx.opt_dtype("dtype")) type = *d;
  const Device device = ctx.opt_device("device").value_or(Device{});
  return formatted_meta(ctx, type, size, device, ctx.opt_memory_format("memory_format"), nullptr);
}

inline TensorMeta rule_like(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const dtype type = ctx.opt_dtype("dtype").value_or(self.dtype);
  const Device device = ctx.opt_device("device").value_or(self.device);
  return formatted_meta(ctx, type, self.sizes, device, ctx.opt_memory_format("memory_format"),
                        &self);
}

inline TensorMeta rule_arange(const Context& ctx) {
  const bool has_start = ctx.has("start");
  const bool has_step = ctx.has("step");
  bool floating = false;
  for (const char* name : {"start", "end", "step"}) {
    if (!ctx.has(name)) continue;
    if (auto o = ctx.scalar_operand(name); o && is_floating(o->type)) floating = true;
  }
  auto symbolic = [&](const char* name) {
    if (!ctx.has(name)) return false;
    const Node* n = ctx.arg(name).node();
    const SymIntValue* v = n != nullptr ? n->meta().val.sym_int() : nullptr;
    return v != nullptr && v->value.index() == 1;
  };
  if (!floating && (symbolic("start") || symbolic("end") || symbolic("step"))) {
    // torch._refs.arange on integer arguments: (end - start + step - sgn(step)) // step
    auto bound = [&](const char* name, std::int64_t dflt) {
      return ctx.has(name)
                 ? ctx.ex(ctx.sym_of(ctx.arg(name), "argument '" + std::string(name) + "'"))
                 : sym::Expr(dflt);
    };
    const sym::Expr start = bound("start", 0), end = bound("end", 0), step = bound("step", 1);
    const sym::Ranges* r = ctx.ranges();
    const sym::Expr zero(0);
    if (!ctx.guard_or_true(sym::ne(step, zero, r))) ctx.fail("step must be nonzero");
    const std::int64_t sgn = (ctx.guard_or_false(sym::gt(step, zero, r)) ? 1 : 0) -
                             (ctx.guard_or_false(sym::lt(step, zero, r)) ? 1 : 0);
    const sym::Expr len = sym::floordiv(end - start + step - sym::Expr(sgn), step, r);
    if (!ctx.guard_or_true(sym::ge(len, zero, r))) {
      ctx.fail("upper bound and larger bound inconsistent with step sign");
    }
    const dtype type = ctx.opt_dtype("dtype").value_or(dtype::int64);
    const Device device = ctx.opt_device("device").value_or(Device{});
    return make_meta(type, {ctx.out(len)}, {std::int64_t{1}}, device);
  }
  const double start = has_start ? ctx.number("start") : 0.0;
  const double end = ctx.number("end");
  const double step = has_step ? ctx.number("step") : 1.0;
  if (step == 0) ctx.fail("step must be nonzero");
  if (!std::isfinite(start) || !std::isfinite(end)) {
    ctx.fail("unsupported range: " + std::to_string(start) + " -> " + std::to_string(end));
  }
  if ((step > 0 && end < start) || (step < 0 && end > start)) {
    ctx.fail("upper bound and larger bound inconsistent with step sign");
  }
  const double n = std::ceil((end - start) / step);
  const dtype type = ctx.opt_dtype("dtype").value_or(floating ? dtype::float32 : dtype::int64);
  const Device device = ctx.opt_device("device").value_or(Device{});
  const auto len = static_cast<std::int64_t>(n);
  return make_meta(type, {len}, {std::int64_t{1}}, device);
}

inline TensorMeta rule_quantize(const Context& ctx, bool quantize) {
  const TensorMeta& input = ctx.tensor("input");
  dtype type = dtype::float32;
  if (quantize) {
    const std::optional<dtype> d = ctx.opt_dtype("dtype");
    if (!d) ctx.fail("argument 'dtype' is None");
    type = *d;
  } else if (auto d = ctx.opt_dtype("out_dtype")) {
    type = *d;
  }
  return elementwise_meta(ctx, type, {&input});
}

inline NodeValue rule_getitem(const Context& ctx) {
  const ArgumentView args = ctx.node().args();
  if (args.size() != 2 || args[0].node() == nullptr || !args[1].is<std::int64_t>()) {
    ctx.fail("expected the arguments (node, int index)");
  }
  const Node* parent = args[0].node();
  const NodeValue& v = parent->meta().val;
  const NodeValue::List* list = v.elements();
  if (list == nullptr) {
    ctx.fail("node '" + std::string(parent->name()) +
             "' has no tuple metadata: its meta().val is " + v.describe());
  }
  std::int64_t i = args[1].as<std::int64_t>();
  const auto n = static_cast<std::int64_t>(list->size());
  if (i < -n || i >= n) {
    ctx.fail("index " + std::to_string(i) + " is out of range for the " + std::to_string(n) +
             " values of node '" + std::string(parent->name()) + "'");
  }
  if (i < 0) i += n;
  return (*list)[static_cast<std::size_t>(i)];
}

// Runs `f`, giving an error of the symbolic arithmetic (an overflow, a division by zero) the
// node's prefix.
template <class F>
NodeValue guarded(const Context& ctx, F f) {
  try {
    return f();
  } catch (const value_error& e) {
    const std::string what = e.what();
    if (::epgraph::detail::starts_with(what, "Cannot infer the metadata of node")) throw;
    ctx.fail(what);
  }
}

// The Python operator (`operator.add`, ...) a SymInt node applies, or "" for another target.
inline std::string_view python_operator(std::string_view target) noexcept {
  for (std::string_view prefix : {std::string_view("operator."), std::string_view("_operator.")}) {
    if (target.substr(0, prefix.size()) == prefix) {
      const std::string_view fn = target.substr(prefix.size());
      for (std::string_view known :
           {"add", "sub", "mul", "floordiv", "mod", "neg", "eq", "ne", "lt", "le", "gt", "ge"}) {
        if (fn == known) return fn;
      }
    }
  }
  return {};
}

// operator.add/sub/mul/floordiv/mod/neg and the comparisons on SymInts and ints, as torch's
// SymNode methods compute them (torch/fx/experimental/sym_node.py: `//` is FloorDiv, `%` is Mod
// when both sides are known non-negative and PythonMod otherwise): a SymInt (a concrete int when
// the result folds), or a SymBool for a comparison (folded only by the symbols' assumptions).
inline NodeValue rule_operator(const Context& ctx, std::string_view fn) {
  const ArgumentView args = ctx.node().args();
  const bool unary = fn == "neg";
  if (args.size() != (unary ? 1u : 2u) || !ctx.node().kwargs().empty()) {
    ctx.fail(std::string("expected ") + (unary ? "one argument" : "two arguments"));
  }
  const sym::Expr a = ctx.ex(ctx.sym_of(args[0], "argument 0"));
  if (unary) return SymIntValue{ctx.out(-a)};
  const sym::Expr b = ctx.ex(ctx.sym_of(args[1], "argument 1"));
  const sym::Ranges* r = ctx.ranges();
  auto sym_bool = [&](const sym::Expr& e) {
    if (const auto v = e.as_boolean()) return SymBoolValue{*v};
    SymExpr x;
    x.expr = ctx.symbols().text(e);
    return SymBoolValue{std::move(x)};
  };
  if (fn == "add") return SymIntValue{ctx.out(a + b)};
  if (fn == "sub") return SymIntValue{ctx.out(a - b)};
  if (fn == "mul") return SymIntValue{ctx.out(a * b)};
  if (fn == "floordiv" || fn == "mod") {
    if (b.as_integer() == std::int64_t{0}) ctx.fail("division by zero");
    if (fn == "floordiv") return SymIntValue{ctx.out(sym::floordiv(a, b, r))};
    const bool nonnegative = sym::bounds(a, r).lo >= 0 && sym::bounds(b, r).lo >= 0;
    return SymIntValue{ctx.out(nonnegative ? sym::mod(a, b, r) : sym::python_mod(a, b, r))};
  }
  // torch folds a comparison by the symbols' assumptions only (`s0 >= 2` stays a SymBool
  // although the range constraints say s0 >= 2; `s0 > 0` is true)
  if (fn == "eq") return sym_bool(sym::eq(a, b));
  if (fn == "ne") return sym_bool(sym::ne(a, b));
  if (fn == "lt") return sym_bool(sym::lt(a, b));
  if (fn == "le") return sym_bool(sym::le(a, b));
  if (fn == "gt") return sym_bool(sym::gt(a, b));
  return sym_bool(sym::ge(a, b));
}

// `torch.ops.<ns>.<op>.<overload>` -> ("<ns>.<op>", "<overload>"), or empty.
inline std::pair<std::string, std::string> split_target(std::string_view target) {
  constexpr std::string_view prefix = "torch.ops.";
  if (target.substr(0, prefix.size()) != prefix) return {};
  target.remove_prefix(prefix.size());
  const auto dot1 = target.find('.');
  if (dot1 == std::string_view::npos) return {};
  const auto dot2 = target.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) return {};
  return {std::string(target.substr(0, dot2)), std::string(target.substr(dot2 + 1))};
}

// --- attention, normalization, pooling (torch.export's default IR) ------------------------------

// Whether CPU's fused kernel (_scaled_dot_product_flash_attention_for_cpu) takes this call, as
// torch's use_flash_attention_cpp decides (aten/src/ATen/native/transformers/sdp_utils_cpp.cpp):
// no dropout; 4-D query, key and value of one batch size; equal head counts, or grouped-query
// attention (enable_gqa, query's heads a multiple of key's, key's equal to value's); one head
// dimension; no empty sequence; last dimensions of stride 1 (or a head dimension of 1); a mask
// of rank 2, or of rank 4 whose batch and head dimensions are 1 or query's.
inline bool sdpa_takes_flash_cpu(const Context& ctx, const TensorMeta& q, const TensorMeta& k,
                                 const TensorMeta& v) {
  if (ctx.has("dropout_p") && ctx.number("dropout_p") != 0.0) return false;
  if (q.sizes.size() != 4 || k.sizes.size() != 4 || v.sizes.size() != 4) return false;
  if (!ctx.equal(q.sizes[0], k.sizes[0]) || !ctx.equal(q.sizes[0], v.sizes[0])) return false;
  const bool gqa = ctx.has("enable_gqa") && ctx.boolean("enable_gqa");
  if (!ctx.equal(k.sizes[1], v.sizes[1])) return false;
  if (!ctx.equal(q.sizes[1], k.sizes[1])) {
    const auto* hq = std::get_if<std::int64_t>(&q.sizes[1]);
    const auto* hk = std::get_if<std::int64_t>(&k.sizes[1]);
    if (!gqa || hq == nullptr || hk == nullptr || *hk == 0 || *hq % *hk != 0) return false;
  }
  if (!ctx.equal(q.sizes[3], k.sizes[3]) || !ctx.equal(q.sizes[3], v.sizes[3])) return false;
  for (const TensorMeta* t : {&q, &k, &v}) {
    if (ctx.guard_or_false(sym::eq(ctx.ex(t->sizes[2]), sym::Expr(0), ctx.ranges()))) {
      return false;
    }
    if (!ctx.is_one(t->strides[3]) && !ctx.is_one(q.sizes[3])) return false;
  }
  if (const TensorMeta* mask = ctx.opt_tensor("attn_mask")) {
    const Sizes& m = mask->sizes;
    if (m.size() < 2) {
      ctx.fail("attn_mask must have at least 2 dimensions, got " + shape_str(m));
    }
    const SymInt& rows = m[m.size() - 2];
    const SymInt& cols = m.back();
    if (!(ctx.equal(rows, q.sizes[2]) || ctx.is_one(rows))) return false;
    if (!(ctx.equal(cols, k.sizes[2]) || ctx.is_one(cols))) return false;
    if (m.size() == 2) return true;
    return m.size() == 4 && (ctx.is_one(m[0]) || ctx.equal(m[0], q.sizes[0])) &&
           (ctx.is_one(m[1]) || ctx.equal(m[1], q.sizes[1]));
  }
  return true;
}

// aten.scaled_dot_product_attention: query [*, L, E], key [*, S, E], value [*, S, Ev] -> [*, L, Ev]
// in query's dtype. On the fused CPU path (sdpa_takes_flash_cpu) the result is empty_like(query)
// (query's dimension order, so a [b, s, h, d] tensor viewed as [b, h, s, d] gives the same view);
// on the math path it is attn @ value, contiguous, its batch dimensions broadcast.
inline NodeValue rule_sdpa(const Context& ctx, std::string_view) {
  const TensorMeta& q = ctx.tensor("query");
  const TensorMeta& k = ctx.tensor("key");
  const TensorMeta& v = ctx.tensor("value");
  if (q.dtype != k.dtype || q.dtype != v.dtype) {
    ctx.fail("Expected query, key, and value to have the same dtype, but got query.dtype: " +
             std::string(dtype_name(q.dtype)) + " key.dtype: " + std::string(dtype_name(k.dtype)) +
             " and value.dtype: " + std::string(dtype_name(v.dtype)) + " instead.");
  }
  if (q.sizes.size() < 2 || k.sizes.size() < 2 || v.sizes.size() < 2) {
    ctx.fail("query, key and value need at least 2 dimensions, got " + shape_str(q.sizes) + ", " +
             shape_str(k.sizes) + " and " + shape_str(v.sizes));
  }
  if (!ctx.equal(q.sizes.back(), k.sizes.back())) {
    ctx.fail("query's last dimension " + shape_str(q.sizes) + " and key's " + shape_str(k.sizes) +
             " differ");
  }
  if (sdpa_takes_flash_cpu(ctx, q, k, v)) {
    return formatted_meta(ctx, q.dtype, q.sizes, q.device, MemoryFormat::PreserveFormat, &q);
  }
  Sizes shape(q.sizes.begin(), q.sizes.end() - 1);
  const bool gqa = ctx.has("enable_gqa") && ctx.boolean("enable_gqa");
  if (!gqa && q.sizes.size() == k.sizes.size() && q.sizes.size() == v.sizes.size() &&
      q.sizes.size() > 2) {
    // the batch dimensions of q @ k^T, then of that @ v (grouped-query attention repeats key's
    // and value's heads to query's)
    const Sizes qb(q.sizes.begin(), q.sizes.end() - 2);
    const Sizes kb(k.sizes.begin(), k.sizes.end() - 2);
    const Sizes vb(v.sizes.begin(), v.sizes.end() - 2);
    Sizes batch = broadcast(ctx, {&qb, &kb, &vb});
    std::copy(batch.begin(), batch.end(), shape.begin());
  }
  shape.push_back(v.sizes.back());
  return contiguous_meta(ctx, q.dtype, std::move(shape), q.device);
}

// aten.layer_norm: input's shape, contiguous.
inline NodeValue rule_layer_norm_op(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("input");
  check_normalized_shape(ctx, input, ctx.sym_list("normalized_shape"));
  return contiguous_meta(ctx, input.dtype, input.sizes, input.device);
}

// empty_like(argument `name`): its shape and dtype, its strides when dense (preserve_format).
inline TensorMeta preserved_like(const Context& ctx, std::string_view name) {
  const TensorMeta& t = ctx.tensor(name);
  return formatted_meta(ctx, t.dtype, t.sizes, t.device, MemoryFormat::PreserveFormat, &t);
}

// aten.batch_norm: input's shape and memory format (preserve).
inline NodeValue rule_batch_norm_op(const Context& ctx, std::string_view) {
  return preserved_like(ctx, "input");
}

// aten.dropout: with train=False the input itself (its strides and offset); with train=True
// input * mask, an elementwise result.
inline NodeValue rule_dropout(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("input");
  if (!ctx.boolean("train")) {
    TensorMeta out = input;
    out.requires_grad = false;
    return out;
  }
  return elementwise_meta(ctx, input.dtype, {&input});
}

// aten.cumsum / aten.cumprod: self's shape, contiguous; dtype given, else integral and bool ->
// int64.
inline NodeValue rule_cumulative(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  (void)ctx.wrap_dim(ctx.integer("dim"), self.sizes.size());
  dtype type = self.dtype;
  if (auto d = ctx.opt_dtype("dtype")) {
    type = *d;
  } else if (is_integral(self.dtype)) {
    type = dtype::int64;
  }
  return contiguous_meta(ctx, type, self.sizes, self.device);
}

// aten.gather: index's shape in self's dtype, contiguous (index of rank other than self's refused).
inline NodeValue rule_gather(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const TensorMeta& index = ctx.tensor("index");
  (void)ctx.wrap_dim(ctx.integer("dim"), self.sizes.size());
  if (index.dtype != dtype::int64) ctx.fail("gather(): Expected dtype int64 for index");
  if (index.sizes.size() != self.sizes.size() && !(index.sizes.empty() || self.sizes.empty())) {
    ctx.fail("Index tensor must have the same number of dimensions as input tensor");
  }
  return contiguous_meta(ctx, self.dtype, index.sizes, self.device);
}

// c10's suggest_memory_format for a pooling input: channels-last when its strides are (and not
// also contiguous), else contiguous; pooling outputs of `sizes` get those strides.
inline TensorMeta pooled_meta(const Context& ctx, const TensorMeta& input, dtype type,
                              Sizes sizes) {
  const auto s = all_concrete(input.sizes);
  const auto st = all_concrete(input.strides);
  if (s && st && s->size() == 4 && is_channels_last(*s, *st) && !is_contiguous(*s, *st)) {
    return formatted_meta(ctx, type, sizes, input.device, MemoryFormat::ChannelsLast, nullptr);
  }
  return contiguous_meta(ctx, type, std::move(sizes), input.device);
}

// Refuses a 2-D pooling input that is not 3-D (C, H, W) or 4-D (N, C, H, W).
inline void check_pool_input(const Context& ctx, const TensorMeta& input, const char* op) {
  if (input.sizes.size() != 3 && input.sizes.size() != 4) {
    ctx.fail(std::string(op) + ": Expected 3D or 4D (batch mode) tensor for input, got " +
             shape_str(input.sizes));
  }
}

// aten.adaptive_avg_pool2d: [N,] C, output_size.
inline NodeValue rule_adaptive_avg_pool2d(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("self");
  check_pool_input(ctx, input, "adaptive_avg_pool2d");
  const Sizes out_size = ctx.sym_list("output_size");
  if (out_size.size() != 2) ctx.fail("adaptive_avg_pool2d: output_size must be 2");
  Sizes shape(input.sizes.begin(), input.sizes.end() - 2);
  shape.insert(shape.end(), out_size.begin(), out_size.end());
  return pooled_meta(ctx, input, input.dtype, std::move(shape));
}

// A 2-D pooling parameter given as one or two ints (`fallback` when empty, for stride).
inline Ints pool_param(const Context& ctx, const char* name, const Ints& fallback) {
  Ints v = ctx.has(name) ? ctx.int_list(name) : Ints{};
  if (v.empty()) v = fallback;
  if (v.size() == 1) v.assign(2, v[0]);
  if (v.size() != 2) {
    ctx.fail(std::string(name) + " must either be a single int, or a tuple of two ints");
  }
  return v;
}

// torch's pooling_output_shape (aten/src/ATen/native/Pool.h) for each spatial dimension.
inline NodeValue pool2d_meta(const Context& ctx, bool with_dilation, bool with_indices) {
  const TensorMeta& input = ctx.tensor("self");
  check_pool_input(ctx, input, with_dilation ? "max_pool2d" : "avg_pool2d");
  const Ints kernel = pool_param(ctx, "kernel_size", {});
  const Ints stride = pool_param(ctx, "stride", kernel);
  const Ints padding = pool_param(ctx, "padding", {0});
  const Ints dilation = with_dilation ? pool_param(ctx, "dilation", {1}) : Ints{1, 1};
  const bool ceil_mode = ctx.has("ceil_mode") && ctx.boolean("ceil_mode");
  Sizes shape(input.sizes.begin(), input.sizes.end() - 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const std::size_t d = input.sizes.size() - 2 + i;
    const std::int64_t in =
        ctx.concrete(input.sizes[d], "argument 'self' dimension " + std::to_string(d));
    if (kernel[i] <= 0 || stride[i] <= 0 || dilation[i] <= 0) {
      ctx.fail("kernel_size, stride and dilation must be greater than zero");
    }
    if (padding[i] < 0 || padding[i] > kernel[i] / 2) {
      ctx.fail("pad should be at most half of effective kernel size, but got pad=" +
               std::to_string(padding[i]) + ", kernel_size=" + std::to_string(kernel[i]));
    }
    const std::int64_t span =
        in + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1 + (ceil_mode ? stride[i] - 1 : 0);
    std::int64_t o = (span >= 0 ? span / stride[i] : -((-span + stride[i] - 1) / stride[i])) + 1;
    if (ceil_mode && (o - 1) * stride[i] >= in + padding[i]) --o;
    if (o <= 0) {
      ctx.fail("Given input size " + shape_str(input.sizes) + ", the calculated output size of " +
               "spatial dimension " + std::to_string(i) + " is " + std::to_string(o) +
               ", which is too small");
    }
    shape.push_back(o);
  }
  TensorMeta out = pooled_meta(ctx, input, input.dtype, shape);
  if (!with_indices) return out;
  TensorMeta indices = pooled_meta(ctx, input, dtype::int64, std::move(shape));
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(std::move(indices))});
}
inline NodeValue rule_max_pool2d(const Context& ctx, std::string_view op) {
  return pool2d_meta(ctx, true, op == "max_pool2d_with_indices");
}
inline NodeValue rule_avg_pool2d(const Context& ctx, std::string_view) {
  return pool2d_meta(ctx, false, false);
}

// --- splits, shape ops, padding, resampling (issue 28) -----------------------------------------

// A view of `self` narrowed to [start, start + length) along dimension `d`.
inline TensorMeta narrow_meta(const Context& ctx, const TensorMeta& self, std::size_t d,
                              const sym::Expr& start, const sym::Expr& length) {
  TensorMeta out = self;
  out.requires_grad = false;
  out.sizes[d] = ctx.out(length);
  out.storage_offset = ctx.out(ctx.ex(self.storage_offset) + start * ctx.ex(self.strides[d]));
  return out;
}

// The dimension argument `name` of self, wrapped; a 0-dim self is refused naming `op`.
inline std::size_t split_dim(const Context& ctx, const TensorMeta& self, const char* op,
                             const char* name = "dim") {
  if (self.sizes.empty()) ctx.fail(std::string(op) + " expects at least a 1-dimensional tensor");
  return static_cast<std::size_t>(
      ctx.wrap_dim(ctx.has(name) ? ctx.integer(name) : 0, self.sizes.size()));
}

// split.Tensor / chunk: pieces of `split_size` along dim, the last one shorter (torch's
// split_symint: max(ceil(size / split_size), 1) pieces); chunk's split size is
// ceil(size / chunks). The dimension's size must be concrete (the number of outputs is).
inline NodeValue rule_split(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t d = split_dim(ctx, self, op == "chunk" ? "chunk" : "split");
  const std::int64_t size = ctx.concrete(self.sizes[d], "the split dimension " + std::to_string(d));
  std::int64_t split_size = 0;
  if (op == "chunk") {
    const std::int64_t chunks = ctx.integer("chunks");
    if (chunks <= 0)
      ctx.fail("chunk expects `chunks` to be greater than 0, got: " + std::to_string(chunks));
    split_size = (size + chunks - 1) / chunks;
  } else {
    split_size = ctx.concrete(ctx.sym_of(ctx.arg("split_size"), "argument 'split_size'"),
                              "argument 'split_size'");
    if (split_size < 0) {
      ctx.fail("split expects split_size be non-negative, but got split_size=" +
               std::to_string(split_size));
    }
  }
  if (split_size == 0 && size != 0) {
    ctx.fail("split_size can only be 0 if dimension size is 0, but got dimension size of " +
             std::to_string(size));
  }
  const std::int64_t pieces =
      split_size == 0 ? 1 : std::max<std::int64_t>((size + split_size - 1) / split_size, 1);
  NodeValue::List out;
  for (std::int64_t i = 0; i < pieces; ++i) {
    const std::int64_t start = i * split_size;
    const std::int64_t length = std::min(split_size, size - start);
    out.emplace_back(narrow_meta(ctx, self, d, sym::Expr(start), sym::Expr(length)));
  }
  return NodeValue(std::move(out));
}

// split_with_sizes: pieces of the given (possibly symbolic) sizes, which must add up to the
// dimension's size.
inline NodeValue rule_split_with_sizes(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t d = split_dim(ctx, self, "split_with_sizes");
  const Sizes sizes = ctx.sym_list("split_sizes");
  sym::Expr start(0);
  NodeValue::List out;
  for (const SymInt& s : sizes) {
    const sym::Expr length = ctx.ex(s);
    if (ctx.guard_or_false(sym::lt(length, sym::Expr(0), ctx.ranges()))) {
      ctx.fail(
          "split_with_sizes expects split_sizes have only non-negative entries, but got "
          "split_sizes=" +
          shape_str(sizes));
    }
    out.emplace_back(narrow_meta(ctx, self, d, start, length));
    start = start + length;
  }
  if (!ctx.guard_or_true(sym::eq(start, ctx.ex(self.sizes[d]), ctx.ranges()))) {
    ctx.fail("split_with_sizes expects split_sizes to sum exactly to " + sym_str(self.sizes[d]) +
             " (input tensor's size at dimension " + std::to_string(d) +
             "), but got split_sizes=" + shape_str(sizes));
  }
  return NodeValue(std::move(out));
}

// unbind.int: one select per index of the (concrete) dimension.
inline NodeValue rule_unbind(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t d = split_dim(ctx, self, "unbind");
  const std::int64_t size =
      ctx.concrete(self.sizes[d], "the unbound dimension " + std::to_string(d));
  const auto at = static_cast<std::ptrdiff_t>(d);
  NodeValue::List out;
  for (std::int64_t i = 0; i < size; ++i) {
    TensorMeta piece = narrow_meta(ctx, self, d, sym::Expr(i), sym::Expr(1));
    piece.sizes.erase(piece.sizes.begin() + at);
    piece.strides.erase(piece.strides.begin() + at);
    out.emplace_back(std::move(piece));
  }
  return NodeValue(std::move(out));
}

// unflatten.int: a view splitting dimension `dim` into `sizes` (one -1 inferred).
inline NodeValue rule_unflatten(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t d = split_dim(ctx, self, "unflatten");
  const Sizes parts = ctx.sym_list("sizes");
  if (parts.empty()) ctx.fail("unflatten: sizes must be non-empty");
  Sizes shape(self.sizes.begin(), self.sizes.begin() + static_cast<std::ptrdiff_t>(d));
  std::ptrdiff_t infer = -1;
  for (const SymInt& s : parts) {
    if (const auto* v = std::get_if<std::int64_t>(&s); v != nullptr && *v == -1) {
      if (infer >= 0) ctx.fail("unflatten: only one dimension can be inferred");
      infer = static_cast<std::ptrdiff_t>(shape.size());
    }
    shape.push_back(s);
  }
  shape.insert(shape.end(), self.sizes.begin() + static_cast<std::ptrdiff_t>(d) + 1,
               self.sizes.end());
  return rule_view_symbolic(ctx, self, shape, infer, "view");
}

// expand_as: expand to other's shape.
inline NodeValue rule_expand_as(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const TensorMeta& other = ctx.tensor("other");
  const std::size_t off = other.sizes.size() - std::min(other.sizes.size(), self.sizes.size());
  if (self.sizes.size() > other.sizes.size()) {
    ctx.fail("expand_as: the number of sizes provided (" + std::to_string(other.sizes.size()) +
             ") must be greater or equal to the number of dimensions in the tensor (" +
             std::to_string(self.sizes.size()) + ")");
  }
  TensorMeta out = self;
  out.requires_grad = false;
  out.sizes = other.sizes;
  out.strides.assign(other.sizes.size(), std::int64_t{0});
  for (std::size_t i = off; i < other.sizes.size(); ++i) {
    const SymInt& s = self.sizes[i - off];
    if (ctx.equal(s, other.sizes[i])) {
      out.strides[i] = self.strides[i - off];
    } else if (!ctx.is_one(s)) {
      ctx.fail("The expanded size of the tensor (" + sym_str(other.sizes[i]) +
               ") must match the existing size (" + sym_str(s) + ") at non-singleton dimension " +
               std::to_string(i));
    }
  }
  return out;
}

// type_as: self itself when other has self's dtype, else to(other.dtype) (preserve format).
inline NodeValue rule_type_as(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const TensorMeta& other = ctx.tensor("other");
  if (other.dtype == self.dtype) {
    TensorMeta out = self;
    out.requires_grad = false;
    return out;
  }
  return formatted_meta(ctx, other.dtype, self.sizes, self.device, MemoryFormat::PreserveFormat,
                        &self);
}

// copy, slice_scatter, select_scatter: a new tensor with self's sizes and strides exactly
// (empty_strided(self.sizes(), self.strides())), storage offset 0.
inline NodeValue rule_self_strided(const Context& ctx, std::string_view) {
  TensorMeta out = ctx.tensor("self");
  out.requires_grad = false;
  out.storage_offset = std::int64_t{0};
  return out;
}

// Ops whose result has self's shape and dtype, contiguous (roll, tril, triu, scatter*,
// index_add, masked_fill).
inline NodeValue rule_self_contiguous(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  return contiguous_meta(ctx, self.dtype, self.sizes, self.device);
}

// new_ones, new_zeros, new_empty, new_full: `size`, contiguous, in self's dtype and device
// unless dtype / device are given.
inline NodeValue rule_new_factory(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const dtype type = ctx.opt_dtype("dtype").value_or(self.dtype);
  const Device device = ctx.opt_device("device").value_or(self.device);
  return contiguous_meta(ctx, type, ctx.sym_list("size"), device);
}

// as_strided: the given sizes and strides over self's storage, at storage_offset (default:
// self's).
inline NodeValue rule_as_strided(const Context& ctx, std::string_view) {
  TensorMeta out = ctx.tensor("self");
  out.requires_grad = false;
  out.sizes = ctx.sym_list("size");
  out.strides = ctx.sym_list("stride");
  if (out.sizes.size() != out.strides.size()) {
    ctx.fail("mismatch in length of strides and shape");
  }
  const Argument* offset = ctx.given_arg("storage_offset");
  if (offset != nullptr && !offset->is_none()) {
    out.storage_offset = ctx.sym_of(*offset, "argument 'storage_offset'");
  }
  return out;
}

// empty_strided: the given sizes and strides, float32 on the CPU unless dtype / device say.
inline NodeValue rule_empty_strided(const Context& ctx, std::string_view) {
  return make_meta(ctx.opt_dtype("dtype").value_or(dtype::float32), ctx.sym_list("size"),
                   ctx.sym_list("stride"), ctx.opt_device("device").value_or(Device{}));
}

// max, min: .dim gives (values, int64 indices) reduced over dim; .default the single extreme
// value (a 0-dim tensor); .other is elementwise maximum / minimum.
inline NodeValue rule_max(const Context& ctx, std::string_view) {
  if (ctx.has("other")) return rule_elementwise(ctx, Rule::binary);
  const TensorMeta& self = ctx.tensor("self");
  if (!ctx.has("dim")) return reduce_meta(ctx, self, self.dtype, std::nullopt, false);
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  const Ints dims{ctx.integer("dim")};
  TensorMeta values = reduce_meta(ctx, self, self.dtype, dims, keepdim);
  TensorMeta indices = values;
  indices.dtype = dtype::int64;
  return NodeValue(NodeValue::List{NodeValue(std::move(values)), NodeValue(std::move(indices))});
}

// diagonal: a view of the diagonal of dimensions dim1 and dim2 (offset above or below it),
// appended as the last dimension with stride stride(dim1) + stride(dim2).
inline NodeValue rule_diagonal(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  if (rank < 2) ctx.fail("diagonal expects a tensor of at least 2 dimensions");
  const std::int64_t offset = ctx.has("offset") ? ctx.integer("offset") : 0;
  const auto d1 =
      static_cast<std::size_t>(ctx.wrap_dim(ctx.has("dim1") ? ctx.integer("dim1") : 0, rank));
  const auto d2 =
      static_cast<std::size_t>(ctx.wrap_dim(ctx.has("dim2") ? ctx.integer("dim2") : 1, rank));
  if (d1 == d2) {
    ctx.fail("diagonal dimensions cannot be identical " + std::to_string(d1) + ", " +
             std::to_string(d2));
  }
  const std::int64_t s1 =
      ctx.concrete(self.sizes[d1], "argument 'self' dimension " + std::to_string(d1));
  const std::int64_t s2 =
      ctx.concrete(self.sizes[d2], "argument 'self' dimension " + std::to_string(d2));
  const std::int64_t n = offset >= 0 ? std::max<std::int64_t>(std::min(s1, s2 - offset), 0)
                                     : std::max<std::int64_t>(std::min(s1 + offset, s2), 0);
  TensorMeta out = self;
  out.requires_grad = false;
  const sym::Expr st1 = ctx.ex(self.strides[d1]);
  const sym::Expr st2 = ctx.ex(self.strides[d2]);
  if (n != 0) {
    const sym::Expr shift = offset >= 0 ? sym::Expr(offset) * st2 : sym::Expr(-offset) * st1;
    out.storage_offset = ctx.out(ctx.ex(self.storage_offset) + shift);
  }
  for (const std::size_t d : {std::max(d1, d2), std::min(d1, d2)}) {
    out.sizes.erase(out.sizes.begin() + static_cast<std::ptrdiff_t>(d));
    out.strides.erase(out.strides.begin() + static_cast<std::ptrdiff_t>(d));
  }
  out.sizes.push_back(SymInt{n});
  out.strides.push_back(ctx.out(st1 + st2));
  return out;
}

// square: pow(self, 2): bool -> int64.
inline NodeValue rule_square(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  return elementwise_meta(ctx, self.dtype == dtype::bool_ ? dtype::int64 : self.dtype, {&self});
}

// repeat: self's shape (left-padded with 1s) times repeats, contiguous.
inline NodeValue rule_repeat(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const Sizes repeats = ctx.sym_list("repeats");
  if (repeats.size() < self.sizes.size()) {
    ctx.fail(
        "Number of dimensions of repeat dims can not be smaller than number of dimensions "
        "of tensor");
  }
  const std::size_t off = repeats.size() - self.sizes.size();
  Sizes shape;
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    const SymInt one{std::int64_t{1}};
    shape.push_back(ctx.mul(i < off ? one : self.sizes[i - off], repeats[i], "the repeated size"));
  }
  return contiguous_meta(ctx, self.dtype, std::move(shape), self.device);
}

// repeat_interleave.self_int: dimension `dim` times repeats (without dim: the flattened
// input), contiguous.
inline NodeValue rule_repeat_interleave(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const SymInt repeats = ctx.sym_of(ctx.arg("repeats"), "argument 'repeats'");
  const std::optional<std::int64_t> dim = ctx.opt_integer("dim");
  if (!dim) {
    SymInt n = std::int64_t{1};
    for (const SymInt& s : self.sizes) n = ctx.mul(n, s, "the element count");
    return contiguous_meta(ctx, self.dtype, {ctx.mul(n, repeats, "the repeated size")},
                           self.device);
  }
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(*dim, self.sizes.size()));
  Sizes shape = self.sizes;
  if (!shape.empty()) shape[d] = ctx.mul(shape[d], repeats, "the repeated size");
  return contiguous_meta(ctx, self.dtype, std::move(shape), self.device);
}

// The memory format torch's suggest_memory_format gives `input` for a new output of another
// shape (pooling, padding, resampling): channels-last when its strides are (and not also
// contiguous), else contiguous.
inline TensorMeta suggested_meta(const Context& ctx, const TensorMeta& input, dtype type,
                                 Sizes sizes) {
  return pooled_meta(ctx, input, type, std::move(sizes));
}

// constant_pad_nd / pad: pad holds (before, after) pairs from the last dimension backwards;
// negative amounts crop.
inline NodeValue rule_pad(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const Sizes pad = ctx.sym_list(ctx.has("pad") ? "pad" : "padding");
  if (pad.size() % 2 != 0)
    ctx.fail("Length of pad must be even but instead it equals " + std::to_string(pad.size()));
  if (pad.size() / 2 > self.sizes.size()) {
    ctx.fail(
        "Length of pad should be no more than twice the number of dimensions of the input. "
        "Pad length is " +
        std::to_string(pad.size()) + " while the input has " + std::to_string(self.sizes.size()) +
        " dimensions.");
  }
  Sizes shape = self.sizes;
  for (std::size_t i = 0; i < pad.size() / 2; ++i) {
    const std::size_t d = self.sizes.size() - 1 - i;
    const sym::Expr n = ctx.ex(self.sizes[d]) + ctx.ex(pad[2 * i]) + ctx.ex(pad[2 * i + 1]);
    if (ctx.guard_or_false(sym::lt(n, sym::Expr(0), ctx.ranges()))) {
      ctx.fail("The input size " + sym_str(self.sizes[d]) + ", plus negative padding " +
               sym_str(pad[2 * i]) + " and " + sym_str(pad[2 * i + 1]) +
               " resulted in a negative output size, which is invalid. Check dimension " +
               std::to_string(d) + " of your input.");
    }
    shape[d] = ctx.out(n);
  }
  return suggested_meta(ctx, self, self.dtype, std::move(shape));
}

// upsample_nearest2d / upsample_bilinear2d (.vec: output_size or scale_factors; .default:
// output_size): [N, C] + the output size (floor(size * scale)).
inline NodeValue rule_upsample2d(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor(ctx.has("input") ? "input" : "self");
  if (input.sizes.size() != 4) {
    ctx.fail("upsample2d expects a 4-D input, got " + shape_str(input.sizes));
  }
  Sizes shape(input.sizes.begin(), input.sizes.begin() + 2);
  const Argument* size_arg = ctx.given_arg("output_size");
  if (size_arg != nullptr && !size_arg->is_none()) {
    const Sizes out = ctx.sym_list("output_size");
    if (out.size() != 2) ctx.fail("upsample2d: output_size must have 2 elements");
    shape.insert(shape.end(), out.begin(), out.end());
  } else {
    const Argument* scales = ctx.given_arg("scale_factors");
    if (scales == nullptr || scales->is_none()) {
      ctx.fail("Must specify exactly one of output_size and scale_factors");
    }
    const ArgumentList* list = scales->list();
    if (list == nullptr || list->size() != 2) {
      ctx.fail("upsample2d: scale_factors must be a list of 2 floats");
    }
    for (std::size_t i = 0; i < 2; ++i) {
      const Argument& f = (*list)[i];
      if (!f.is<double>() && !f.is<std::int64_t>()) {
        ctx.fail("upsample2d: scale_factors must be a list of 2 floats");
      }
      const double scale =
          f.is<double>() ? f.as<double>() : static_cast<double>(f.as<std::int64_t>());
      const std::int64_t in =
          ctx.concrete(input.sizes[2 + i], "argument 'input' dimension " + std::to_string(2 + i));
      shape.push_back(static_cast<std::int64_t>(std::floor(static_cast<double>(in) * scale)));
    }
  }
  return suggested_meta(ctx, input, input.dtype, std::move(shape));
}

// --- normalization and dropout with statistics -------------------------------------------------

// native_batch_norm, _native_batch_norm_legit(.no_stats), _native_batch_norm_legit_functional:
// the output is empty_like(input); save_mean and save_invstd are [C] in the input's dtype when
// training, else [0]; the functional form also returns the new running_mean and running_var
// (shaped and typed like them).
inline NodeValue rule_batch_norm_stats(const Context& ctx, std::string_view op) {
  const TensorMeta& input = ctx.tensor("input");
  if (input.sizes.size() < 2) {
    ctx.fail("batch_norm expects an input of at least 2 dimensions, got " + shape_str(input.sizes));
  }
  const bool training = ctx.boolean("training");
  NodeValue::List out;
  out.emplace_back(formatted_meta(ctx, input.dtype, input.sizes, input.device,
                                  MemoryFormat::PreserveFormat, &input));
  const Sizes stat = training ? Sizes{input.sizes[1]} : Sizes{std::int64_t{0}};
  const TensorMeta save = contiguous_meta(ctx, input.dtype, stat, input.device);
  out.emplace_back(save);
  out.emplace_back(save);
  if (op == "_native_batch_norm_legit_functional") {
    for (const char* name : {"running_mean", "running_var"}) {
      const TensorMeta& r = ctx.tensor(name);
      out.emplace_back(contiguous_meta(ctx, r.dtype, r.sizes, r.device));
    }
  }
  return NodeValue(std::move(out));
}

// native_group_norm: (empty_like(input), mean [N, group], rstd [N, group]); group_norm: the
// first of these.
inline NodeValue rule_group_norm(const Context& ctx, std::string_view op) {
  const TensorMeta& input = ctx.tensor("input");
  if (input.sizes.size() < 2) {
    ctx.fail("group_norm expects an input of at least 2 dimensions, got " + shape_str(input.sizes));
  }
  TensorMeta out = formatted_meta(ctx, input.dtype, input.sizes, input.device,
                                  MemoryFormat::PreserveFormat, &input);
  const std::int64_t groups = ctx.integer(op == "group_norm" ? "num_groups" : "group");
  const auto* channels = std::get_if<std::int64_t>(&input.sizes[1]);
  if (groups <= 0 || (channels != nullptr && *channels % groups != 0)) {
    ctx.fail(
        "Expected number of channels in input to be divisible by num_groups, but got input "
        "of shape " +
        shape_str(input.sizes) + " and num_groups=" + std::to_string(groups));
  }
  if (op == "group_norm") return out;
  const TensorMeta stat =
      contiguous_meta(ctx, input.dtype, {input.sizes[0], SymInt{groups}}, input.device);
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(stat), NodeValue(stat)});
}

// native_dropout: (empty_like(input), a bool mask like it).
inline NodeValue rule_native_dropout(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("input");
  TensorMeta out = formatted_meta(ctx, input.dtype, input.sizes, input.device,
                                  MemoryFormat::PreserveFormat, &input);
  TensorMeta mask = out;
  mask.dtype = dtype::bool_;
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(std::move(mask))});
}

// --- reductions with a dtype of their own, sorting ----------------------------------------------

// The dims and keepdim of a reduction whose `dim` is an int or int list (absent or None: all).
inline std::optional<Ints> reduction_dims(const Context& ctx) {
  if (!ctx.has("dim")) return std::nullopt;
  const Argument& a = ctx.arg("dim");
  if (a.is_none()) return std::nullopt;
  if (a.is<std::int64_t>()) return Ints{ctx.integer("dim")};
  return ctx.opt_int_list("dim");
}

// var, std (.correction, .dim), var_mean/std_mean: float results (complex -> its real type).
inline NodeValue rule_variance(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  if (is_integral(self.dtype)) {
    ctx.fail(std::string(op) + "(): only support floating point and complex dtypes, got " +
             std::string(dtype_name(self.dtype)));
  }
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  TensorMeta out =
      reduce_meta(ctx, self, complex_to_real(self.dtype), reduction_dims(ctx), keepdim);
  if (op == "var_mean" || op == "std_mean") {
    TensorMeta mean = out;
    mean.dtype = self.dtype;
    return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(std::move(mean))});
  }
  return out;
}

// prod (.dim_int, .default): integral and bool -> int64 unless dtype is given.
inline NodeValue rule_prod(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  dtype type = is_integral(self.dtype) ? dtype::int64 : self.dtype;
  if (auto d = ctx.opt_dtype("dtype")) type = *d;
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  return reduce_meta(ctx, self, type, reduction_dims(ctx), keepdim);
}

// argmax, argmin: int64 indices; without dim the flattened input's (keepdim: all ones).
inline NodeValue rule_argmax(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  return reduce_meta(ctx, self, dtype::int64, reduction_dims(ctx), keepdim);
}

// linalg_vector_norm: float results (complex -> real), dtype if given.
inline NodeValue rule_vector_norm(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  if (is_integral(self.dtype)) {
    ctx.fail("linalg.vector_norm: Expected a floating point or complex tensor as input. Got " +
             std::string(dtype_name(self.dtype)));
  }
  dtype type = complex_to_real(self.dtype);
  if (auto d = ctx.opt_dtype("dtype")) type = complex_to_real(*d);
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  return reduce_meta(ctx, self, type, reduction_dims(ctx), keepdim);
}

// topk: (values, int64 indices), self's shape with k at dim, contiguous.
inline NodeValue rule_topk(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const std::int64_t dim = ctx.has("dim") ? ctx.integer("dim") : -1;
  Sizes shape = self.sizes;
  const SymInt k = ctx.sym_of(ctx.arg("k"), "argument 'k'");
  if (!shape.empty()) {
    const auto d = static_cast<std::size_t>(ctx.wrap_dim(dim, shape.size()));
    const sym::Expr ke = ctx.ex(k);
    if (ctx.guard_or_false(sym::lt(ke, sym::Expr(0), ctx.ranges())) ||
        ctx.guard_or_false(sym::gt(ke, ctx.ex(shape[d]), ctx.ranges()))) {
      ctx.fail("selected index k out of range");
    }
    shape[d] = k;
  }
  TensorMeta values = contiguous_meta(ctx, self.dtype, shape, self.device);
  TensorMeta indices = contiguous_meta(ctx, dtype::int64, std::move(shape), self.device);
  return NodeValue(NodeValue::List{NodeValue(std::move(values)), NodeValue(std::move(indices))});
}

// sort (.default, .stable): (values, int64 indices), both empty_like(self).
inline NodeValue rule_sort(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  if (ctx.has("dim")) (void)ctx.wrap_dim(ctx.integer("dim"), self.sizes.size());
  TensorMeta values =
      formatted_meta(ctx, self.dtype, self.sizes, self.device, MemoryFormat::PreserveFormat, &self);
  TensorMeta indices = values;
  indices.dtype = dtype::int64;
  return NodeValue(NodeValue::List{NodeValue(std::move(values)), NodeValue(std::move(indices))});
}

// --- advanced indexing ------------------------------------------------------------------------

// index.Tensor as torch's meta_index_Tensor computes it: the index tensors broadcast together
// replace the dimensions they index, in place when they are adjacent, else at the front; the
// result's strides follow the dimension order of self restrided with 0 strides for the indexed
// dimensions (TensorIterator's rule), contiguous when self is empty.
inline NodeValue rule_index(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const ArgumentList* list = ctx.arg("indices").list();
  if (list == nullptr) ctx.fail("argument 'indices' is not a list");
  std::vector<const TensorMeta*> indices;
  for (const Argument& a : *list) {
    indices.push_back(a.is_none() ? nullptr : &ctx.tensor_of(a, "an element of 'indices'"));
  }
  if (indices.size() > self.sizes.size()) {
    ctx.fail("too many indices for tensor of dimension " + std::to_string(self.sizes.size()) +
             " (got " + std::to_string(indices.size()) + ")");
  }
  std::vector<const Sizes*> index_shapes;
  for (const TensorMeta* t : indices) {
    if (t == nullptr) continue;
    if (t->dtype == dtype::bool_ || t->dtype == dtype::uint8) {
      ctx.fail(
          "indexing with a boolean or byte mask has a data-dependent shape; epgraph has no "
          "shape rule for it");
    }
    if (t->dtype != dtype::int64 && t->dtype != dtype::int32) {
      ctx.fail("tensors used as indices must be long, int, byte or bool tensors");
    }
    index_shapes.push_back(&t->sizes);
  }
  if (index_shapes.empty()) ctx.fail("index.Tensor needs at least one index tensor");
  const Sizes replacement = broadcast(ctx, index_shapes);
  indices.resize(self.sizes.size(), nullptr);
  // adjacent: the indexed dimensions form one run
  int state = 0;
  bool adjacent = true;
  for (const TensorMeta* t : indices) {
    if (t != nullptr) {
      if (state == 2) adjacent = false;
      state = 1;
    } else if (state == 1) {
      state = 2;
    }
  }
  std::vector<std::size_t> order;  // self's dimensions in the order the result uses them
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (adjacent || indices[i] != nullptr) order.push_back(i);
  }
  if (!adjacent) {
    for (std::size_t i = 0; i < indices.size(); ++i) {
      if (indices[i] == nullptr) order.push_back(i);
    }
  }
  Sizes before, after, before_st, after_st;
  bool seen = false;
  for (std::size_t i : order) {
    if (indices[i] != nullptr) {
      seen = true;
    } else {
      (seen ? after : before).push_back(self.sizes[i]);
      (seen ? after_st : before_st).push_back(self.strides[i]);
    }
  }
  Sizes shape = before;
  shape.insert(shape.end(), replacement.begin(), replacement.end());
  shape.insert(shape.end(), after.begin(), after.end());
  for (const SymInt& s : self.sizes) {
    if (const auto* v = std::get_if<std::int64_t>(&s); v != nullptr && *v == 0) {
      return contiguous_meta(ctx, self.dtype, std::move(shape), self.device);
    }
  }
  TensorMeta restrided = self;
  restrided.sizes = shape;
  restrided.strides = before_st;
  restrided.strides.insert(restrided.strides.end(), replacement.size(), SymInt{std::int64_t{0}});
  restrided.strides.insert(restrided.strides.end(), after_st.begin(), after_st.end());
  return elementwise_meta(ctx, self.dtype, {&restrided});
}

// --- the rule table ----------------------------------------------------------------------------
// One function per rule, `NodeValue (const Context&, std::string_view op)` (`op` is the
// operator's name without namespace or overload, "reshape"), and one table from the operator to
// it: adding an op is one line in a register_* function below, a new rule its function and that
// line.

using RuleFn = NodeValue (*)(const Context&, std::string_view);

template <Rule R>
NodeValue elementwise_rule(const Context& ctx, std::string_view) {
  return rule_elementwise(ctx, R);
}
template <Rule R>
NodeValue reduction_rule(const Context& ctx, std::string_view) {
  return rule_reduction(ctx, R);
}
template <Rule R>
NodeValue softmax_rule(const Context& ctx, std::string_view) {
  return rule_softmax(ctx, R);
}
template <Rule R>
NodeValue factory_rule(const Context& ctx, std::string_view) {
  return rule_factory(ctx, R);
}
// Adapts a rule function that does not need the op's name.
template <auto F>
NodeValue plain_rule(const Context& ctx, std::string_view) {
  return F(ctx);
}

inline NodeValue rule_clone(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  return formatted_meta(ctx, self.dtype, self.sizes, self.device,
                        ctx.opt_memory_format("memory_format"), &self);
}
inline NodeValue rule_view_op(const Context& ctx, std::string_view op) {
  return rule_view(ctx, op);
}
inline NodeValue rule_transpose(const Context& ctx, std::string_view) {
  return transpose_meta(ctx, ctx.tensor("self"), ctx.integer("dim0"), ctx.integer("dim1"));
}
inline NodeValue rule_t(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  if (self.sizes.size() > 2) {
    ctx.fail("t() expects a tensor with <= 2 dimensions, but self is " +
             std::to_string(self.sizes.size()) + "D");
  }
  return self.sizes.size() < 2 ? transpose_meta(ctx, self, 0, 0) : transpose_meta(ctx, self, 0, 1);
}
inline NodeValue rule_alias(const Context& ctx, std::string_view) {
  TensorMeta out = ctx.tensor("self");
  out.requires_grad = false;
  return out;
}
// index_copy, index_put, lift_fresh_copy, flip: empty_like(self).
inline NodeValue rule_self_like(const Context& ctx, std::string_view) {
  return preserved_like(ctx, "self");
}
inline NodeValue rule_mm_op(const Context& ctx, std::string_view op) {
  return rule_mm(ctx, "self", "mat2", op == "bmm" ? 3 : 2);
}
inline NodeValue rule_addmm_op(const Context& ctx, std::string_view op) {
  return rule_addmm(ctx, op == "baddbmm");
}
inline NodeValue rule_to_op(const Context& ctx, std::string_view op) {
  return rule_to(ctx, op == "_to_copy");
}
inline NodeValue rule_quantize_op(const Context& ctx, std::string_view op) {
  return rule_quantize(ctx, op == "quantize_per_tensor");
}
// aten.sym_size.int / aten.sym_stride.int: a SymInt of self.
inline NodeValue rule_sym_size(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  if (!ctx.has("dim")) ctx.fail("epgraph has no shape rule for the list overload");
  const std::size_t rank = self.sizes.size();
  if (rank == 0) ctx.fail("Dimension specified as 0 but tensor has no dimensions");
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank));
  return SymIntValue{op == "sym_size" ? self.sizes[d] : self.strides[d]};
}
inline NodeValue rule_sym_numel(const Context& ctx, std::string_view) {
  SymInt n = std::int64_t{1};
  for (const SymInt& s : ctx.tensor("self").sizes) n = ctx.mul(n, s, "the element count");
  return SymIntValue{n};
}
inline NodeValue rule_sym_storage_offset(const Context& ctx, std::string_view) {
  return SymIntValue{ctx.tensor("self").storage_offset};
}
inline NodeValue rule_none(const Context&, std::string_view) { return None{}; }
// any, all: bool (uint8 stays uint8).
inline NodeValue rule_any(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const std::optional<Ints> dims = ctx.has("dim") ? ctx.opt_int_list("dim") : std::nullopt;
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  const dtype type = self.dtype == dtype::uint8 ? dtype::uint8 : dtype::bool_;
  return reduce_meta(ctx, self, type, dims, keepdim);
}

using RuleTable = std::unordered_map<std::string, RuleFn>;

// Binds each `aten.<name>` of `names` to `fn`.
inline void add_aten(RuleTable& t, std::initializer_list<const char*> names, RuleFn fn) {
  for (const char* name : names) t.emplace(std::string("aten.") + name, fn);
}

inline void register_pointwise_rules(RuleTable& t) {
  add_aten(t, {"neg",   "relu",  "gelu", "silu",     "sign",        "floor",       "ceil",
               "round", "trunc", "frac", "hardtanh", "hardswish",   "hardsigmoid", "leaky_relu",
               "elu",   "relu6", "mish", "softplus", "bitwise_not", "positive",    "sgn"},
           &elementwise_rule<Rule::unary_same>);
  add_aten(t, {"clone"}, &rule_clone);
  add_aten(t, {"exp",    "exp2",       "expm1",  "log",     "log1p", "log2",  "log10", "sqrt",
               "rsqrt",  "sigmoid",    "tanh",   "sin",     "cos",   "tan",   "asin",  "acos",
               "atan",   "sinh",       "cosh",   "asinh",   "acosh", "atanh", "erf",   "erfc",
               "erfinv", "reciprocal", "lgamma", "digamma", "sinc",  "logit"},
           &elementwise_rule<Rule::unary_float>);
  add_aten(t, {"abs"}, &elementwise_rule<Rule::unary_abs>);
  add_aten(t, {"logical_not", "isnan", "isinf", "isfinite", "isneginf", "isposinf"},
           &elementwise_rule<Rule::unary_bool>);
  add_aten(t,
           {"add", "sub", "rsub", "mul", "maximum", "minimum", "fmax", "fmin", "remainder", "fmod",
            "floor_divide", "bitwise_and", "bitwise_or", "bitwise_xor"},
           &elementwise_rule<Rule::binary>);
  add_aten(t, {"__and__", "__or__", "__xor__"}, &elementwise_rule<Rule::binary>);
  add_aten(t, {"square"}, &rule_square);
  add_aten(t, {"atan2"}, &elementwise_rule<Rule::binary_float>);
  add_aten(t, {"pow"}, &elementwise_rule<Rule::binary_pow>);
  add_aten(t, {"div"}, &elementwise_rule<Rule::div>);
  add_aten(t, {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"},
           &elementwise_rule<Rule::compare>);
  add_aten(t, {"where"}, &elementwise_rule<Rule::where>);
  add_aten(t, {"addcmul", "addcdiv"}, &elementwise_rule<Rule::pointwise3>);
  add_aten(t, {"clamp", "clamp_min", "clamp_max", "clip"}, &elementwise_rule<Rule::clamp>);
}

inline void register_view_rules(RuleTable& t) {
  add_aten(t, {"view", "_unsafe_view", "reshape"}, &rule_view_op);
  add_aten(t, {"permute"}, &plain_rule<rule_permute>);
  add_aten(t, {"transpose"}, &rule_transpose);
  add_aten(t, {"t"}, &rule_t);
  add_aten(t, {"unsqueeze"}, &plain_rule<rule_unsqueeze>);
  add_aten(t, {"squeeze"}, &plain_rule<rule_squeeze>);
  add_aten(t, {"expand"}, &plain_rule<rule_expand>);
  add_aten(t, {"slice"}, &plain_rule<rule_slice>);
  add_aten(t, {"select"}, &plain_rule<rule_select>);
  add_aten(t, {"flatten"}, &plain_rule<rule_flatten>);
  add_aten(t, {"contiguous"}, &plain_rule<rule_contiguous>);
  add_aten(t, {"alias", "detach", "lift_fresh"}, &rule_alias);
  add_aten(t, {"cat"}, &plain_rule<rule_cat>);
  add_aten(t, {"stack"}, &plain_rule<rule_stack>);
  add_aten(t, {"index_copy", "index_put", "lift_fresh_copy"}, &rule_self_like);
  add_aten(t, {"copy", "slice_scatter", "select_scatter"}, &rule_self_strided);
  add_aten(t, {"index_select"}, &plain_rule<rule_index_select>);
  add_aten(t, {"embedding"}, &plain_rule<rule_embedding>);
  add_aten(t, {"split", "chunk"}, &rule_split);
  add_aten(t, {"split_with_sizes"}, &rule_split_with_sizes);
  add_aten(t, {"unbind"}, &rule_unbind);
  add_aten(t, {"unflatten"}, &rule_unflatten);
  add_aten(t, {"expand_as"}, &rule_expand_as);
  add_aten(t, {"type_as"}, &rule_type_as);
  add_aten(t, {"repeat"}, &rule_repeat);
  add_aten(t, {"repeat_interleave"}, &rule_repeat_interleave);
  add_aten(t, {"flip", "fill"}, &rule_self_like);
  add_aten(t, {"as_strided"}, &rule_as_strided);
  add_aten(t, {"diagonal"}, &rule_diagonal);
  add_aten(t,
           {"roll", "tril", "triu", "scatter", "scatter_add", "scatter_reduce", "index_add",
            "masked_fill"},
           &rule_self_contiguous);
}

inline void register_compute_rules(RuleTable& t) {
  add_aten(t, {"linear"}, &plain_rule<rule_linear>);
  add_aten(t, {"mm", "bmm"}, &rule_mm_op);
  add_aten(t, {"matmul"}, &plain_rule<rule_matmul>);
  add_aten(t, {"addmm", "baddbmm"}, &rule_addmm_op);
  add_aten(t, {"convolution", "conv1d", "conv2d", "conv3d"}, &plain_rule<rule_convolution>);
  add_aten(t, {"_native_batch_norm_legit_no_training"}, &plain_rule<rule_batch_norm>);
  add_aten(t, {"native_layer_norm"}, &plain_rule<rule_layer_norm>);
  add_aten(t, {"layer_norm"}, &rule_layer_norm_op);
  add_aten(t, {"batch_norm"}, &rule_batch_norm_op);
  add_aten(t, {"scaled_dot_product_attention"}, &rule_sdpa);
  add_aten(t, {"dropout"}, &rule_dropout);
  add_aten(t, {"cumsum", "cumprod"}, &rule_cumulative);
  add_aten(t, {"gather"}, &rule_gather);
  add_aten(t, {"adaptive_avg_pool2d", "_adaptive_avg_pool2d"}, &rule_adaptive_avg_pool2d);
  add_aten(t, {"max_pool2d", "max_pool2d_with_indices"}, &rule_max_pool2d);
  add_aten(t, {"avg_pool2d"}, &rule_avg_pool2d);
  add_aten(t,
           {"native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_functional"},
           &rule_batch_norm_stats);
  add_aten(t, {"native_group_norm", "group_norm"}, &rule_group_norm);
  add_aten(t, {"native_dropout"}, &rule_native_dropout);
  add_aten(t, {"var", "std", "var_mean", "std_mean"}, &rule_variance);
  add_aten(t, {"prod"}, &rule_prod);
  add_aten(t, {"argmax", "argmin"}, &rule_argmax);
  add_aten(t, {"linalg_vector_norm"}, &rule_vector_norm);
  add_aten(t, {"topk"}, &rule_topk);
  add_aten(t, {"sort"}, &rule_sort);
  add_aten(t, {"index"}, &rule_index);
  add_aten(t,
           {"constant_pad_nd", "pad", "reflection_pad1d", "reflection_pad2d", "reflection_pad3d",
            "replication_pad1d", "replication_pad2d", "replication_pad3d"},
           &rule_pad);
  add_aten(t, {"max", "min"}, &rule_max);
  add_aten(t, {"upsample_nearest2d", "upsample_bilinear2d"}, &rule_upsample2d);
  add_aten(t, {"sum"}, &reduction_rule<Rule::sum>);
  add_aten(t, {"mean"}, &reduction_rule<Rule::mean>);
  add_aten(t, {"amax", "amin"}, &reduction_rule<Rule::amax>);
  add_aten(t, {"any", "all"}, &rule_any);
  add_aten(t, {"softmax", "log_softmax"}, &softmax_rule<Rule::softmax>);
  add_aten(t, {"_softmax", "_log_softmax"}, &softmax_rule<Rule::private_softmax>);
}

inline void register_factory_and_sym_rules(RuleTable& t) {
  add_aten(t, {"_to_copy", "to"}, &rule_to_op);
  add_aten(t, {"full"}, &factory_rule<Rule::full>);
  add_aten(t, {"zeros", "ones", "empty"}, &factory_rule<Rule::zeros>);
  add_aten(t, {"scalar_tensor"}, &factory_rule<Rule::scalar_tensor>);
  add_aten(t, {"zeros_like", "ones_like", "empty_like", "full_like"}, &plain_rule<rule_like>);
  add_aten(t, {"new_ones", "new_zeros", "new_empty", "new_full"}, &rule_new_factory);
  add_aten(t, {"empty_strided"}, &rule_empty_strided);
  add_aten(t, {"arange"}, &plain_rule<rule_arange>);
  t.emplace("quantized_decomposed.quantize_per_tensor", &rule_quantize_op);
  t.emplace("quantized_decomposed.dequantize_per_tensor", &rule_quantize_op);
  add_aten(t, {"sym_size", "sym_stride"}, &rule_sym_size);
  add_aten(t, {"sym_numel"}, &rule_sym_numel);
  add_aten(t, {"sym_storage_offset"}, &rule_sym_storage_offset);
  add_aten(t,
           {"_assert_tensor_metadata", "_assert_scalar", "sym_constrain_range",
            "sym_constrain_range_for_size", "_assert_async"},
           &rule_none);
}

// The rule of each operator, keyed "namespace.name" ("aten.add"), every overload alike.
inline const RuleTable& rule_table() {
  static const RuleTable table = [] {
    RuleTable t;
    register_pointwise_rules(t);
    register_view_rules(t);
    register_compute_rules(t);
    register_factory_and_sym_rules(t);
    return t;
  }();
  return table;
}

}  // namespace infer
}  // namespace detail

/// Computes the FX `meta["val"]` of `node` from its arguments' `meta().val` and its operator
/// schema, as torch's meta functions do when FakeTensor propagation fills it at export time: the
/// dtype, sizes, strides and device of the result (layout strided, requires_grad false, storage
/// offset 0 except for views), or a tuple of them for multi-output ops. Use it to give a node a
/// pass creates the metadata torch.export would have written.
///
/// Arguments: `node`, a call_function node whose target is `torch.ops.<ns>.<op>.<overload>` (or
/// `operator.getitem`, or a Python operator on SymInts) and whose tensor arguments have tensor
/// metadata; `symbols`, the program's range constraints and symbol hints (see MetaContext; the
/// overload without it uses an empty context, which learns the hints of this node's arguments).
///
/// Returns the value; the node is not changed (it reads only the node, its arguments'
/// `meta().val` and the schema; it updates only `symbols`' caches).
///
/// Covered ops (their Tensor/Scalar overloads and, for every op whose name ends in `_` and whose
/// schema writes and returns `self`, the in-place variant, which returns `self`'s metadata
/// unchanged; `out=` variants are not covered):
/// - elementwise unary: neg, abs (complex -> real), relu, gelu, silu, hardtanh, leaky_relu, elu,
///   sign, floor, ceil, round, trunc, clone (memory_format), ... keep the dtype; exp, log, sqrt,
///   rsqrt, sigmoid, tanh, sin, cos, reciprocal, erf, ... turn integral inputs into float32;
///   logical_not, isnan, isinf, isfinite give bool; alias, detach, lift_fresh give `self`;
/// - elementwise binary/ternary with broadcasting and torch's result_type (categories bool < int
///   < float < complex; dimensioned tensors before zero-dim tensors before Python numbers, the
///   lower groups counting only when of a higher category; a Python float is float32): add, sub,
///   rsub, mul, div (integral true division -> float32; rounding_mode keeps the type), pow (bool
///   -> int64), maximum, minimum, fmax, fmin, remainder, fmod, floor_divide, bitwise_and/or/xor,
///   atan2, clamp/clamp_min/clamp_max/clip, where (all overloads), addcmul, addcdiv (`value`
///   does not take part in promotion); eq, ne, lt, le, gt, ge,
///   logical_and/or/xor give bool;
/// - views: view, _unsafe_view, reshape (one -1), permute, transpose.int, t, unsqueeze,
///   squeeze.dim/.dims/.default (a symbolic size is assumed not to be 1, like torch's size
///   oblivious reasoning), expand (-1 keeps), slice.Tensor (start/end None, negative, clamped,
///   step), select.int, flatten.using_ints, contiguous;
/// - cat (legacy 1-D empty tensors skipped), stack, index_copy, index_put, copy, index_select,
///   slice_scatter, select_scatter, embedding, linear, mm, bmm, matmul (1-D, 2-D, batched with
///   broadcasting), addmm, baddbmm, convolution (stride, padding, dilation, groups, transposed
///   with output_padding; batched inputs, as aten.convolution requires);
/// - _native_batch_norm_legit_no_training (output, and empty save_mean/save_invstd of shape [0])
///   and native_layer_norm (output, mean, rstd of shape [*, 1, ...]), both tuples of 3 in the
///   input's dtype;
/// - the default IR's scaled_dot_product_attention (query's dimension order where torch's CPU
///   dispatch takes the fused kernel, contiguous on the math path), layer_norm, batch_norm,
///   dropout (train=False: `self` itself), cumsum/cumprod (integral -> int64; dtype), gather,
///   adaptive_avg_pool2d, max_pool2d, max_pool2d_with_indices, avg_pool2d (kernel, stride,
///   padding, dilation, ceil_mode; a channels-last input gives channels-last outputs);
/// - split.Tensor, split_with_sizes, chunk, unbind (lists of views with their offsets),
///   unflatten, expand_as, type_as, repeat, repeat_interleave.self_int, flip, roll, tril, triu,
///   square, __and__/__or__/__xor__, constant_pad_nd, pad, upsample_nearest2d and
///   upsample_bilinear2d (.vec and .default), scatter (.src/.value), scatter_add,
///   scatter_reduce, index_add, masked_fill, index.Tensor (integer indices, adjacent or not;
///   a boolean mask has a data-dependent shape and is refused);
/// - native_batch_norm, _native_batch_norm_legit (.default/.no_stats),
///   _native_batch_norm_legit_functional (save_mean/save_invstd [C] when training, else [0];
///   the new running statistics), native_group_norm, group_norm, native_dropout (output and
///   bool mask);
/// - var, std, var_mean, std_mean (complex -> real), prod (integral -> int64), argmax, argmin,
///   linalg_vector_norm, topk, sort, max/min (.dim: values and int64 indices; .default; .other);
/// - as_strided, diagonal (views), empty_strided, fill, _adaptive_avg_pool2d,
///   reflection_pad1d/2d/3d, replication_pad1d/2d/3d;
/// - _assert_scalar, _assert_async, sym_constrain_range(_for_size), _assert_tensor_metadata:
///   None;
/// - sum.dim_IntList/sum.default (bool and integer inputs -> int64), mean.dim/mean.default (an
///   integral input without dtype is an error, as in torch), amax, amin: dims negative, None or
///   empty (all), keepdim, dtype;
/// - softmax.int, log_softmax.int (dtype), _softmax, _log_softmax (half_to_float turns float16
///   and bfloat16 into float32);
/// - _to_copy, to.dtype, to.dtype_layout, to.device (dtype, device, memory_format; without a
///   change and copy=False `to` returns `self`'s metadata);
/// - full (dtype from the fill value: bool, int64 or float32), zeros, ones, empty.memory_format
///   (channels_last, channels_last_3d), zeros_like, ones_like, empty_like, full_like, arange
///   (.default/.start/.start_step; int64 unless a bound or the step is a float), scalar_tensor
///   (float32 by default), new_ones, new_zeros, new_empty, new_full (self's dtype and device
///   unless given);
/// - quantized_decomposed.quantize_per_tensor (.default/.tensor/.tensor2; `dtype`) and
///   quantized_decomposed.dequantize_per_tensor (`out_dtype`, default float32);
/// - operator.getitem of a node whose `meta().val` is a tuple: that element (negative indices
///   count from the end);
/// - SymInt producers: sym_size.int, sym_stride.int, sym_numel, sym_storage_offset (a SymInt
///   value); operator.add/sub/mul/floordiv/mod/neg on SymInts and ints (a SymInt: `//` is
///   FloorDiv, `%` Mod when both sides are known non-negative, else PythonMod) and
///   operator.eq/ne/lt/le/gt/ge (a SymBool, folded only when the symbols' assumptions decide it,
///   as torch does: `s0 >= 2` stays symbolic, `s0 > 0` is true).
///
/// Strides (all checked against torch 2.13 by tests/json/test_infer_meta.cpp):
/// - exact for views (permute, transpose, t, expand, squeeze, unsqueeze, select, slice, view,
///   _unsafe_view, alias, detach, and reshape/flatten when torch can view; their storage offset
///   is the input's plus the view's offset), for in-place ops (`self`'s), for elementwise ops
///   (TensorIterator's rule: the fast paths for same-shape contiguous / channels-last / dense
///   inputs, else the inputs' stride order), for clone/_to_copy/to/index_copy/index_put/copy/
///   slice_scatter/select_scatter/*_like/batch norm output (empty_like's preserve_format: a dense
///   input's strides, else the dense strides of its dimension order), for contiguous and
///   factories (contiguous or channels-last strides);
/// - contiguous strides for everything else (cat, stack, matmul family, convolution, reductions,
///   softmax, layer norm, index_select, embedding), which is what torch reports for contiguous
///   inputs; torch may report another layout for channels-last inputs of cat and convolution.
///
/// Symbolic sizes (SymExpr) are computed with as sym::Expr, in the printed form of the file
/// (MetaContext::form; torch 2.13's srepr) with the hint evaluated from the symbols' hints:
/// contiguous strides as torch writes them (products of Max(size, 1) under the range
/// constraints: `4*s0`), numel, broadcasting (equal expressions; a size known to be 1; two
/// sizes not known to be 1 must be equal, the first is kept, as torch's infer_size does),
/// view/reshape/flatten (-1 is numel // the other sizes; computeStride's decisions taken as
/// torch's guards take them: by the range constraints, else by the hints), cat, stack, expand,
/// slice and select (torch's FakeTensor clamping of start/end), the matmul family, reductions,
/// softmax, layer norm, and arange with a symbolic bound ((end - start + step - sgn) // step).
/// Elementwise ops, clone and the `*_like` factories of tensors with symbolic sizes get
/// contiguous strides. Convolution and channels-last formats still need concrete sizes.
///
/// Errors: value_error, always starting with "Cannot infer the metadata of node '<name>'
/// (<target>): " followed by the reason:
/// - "epgraph has no shape rule for it; set meta().val yourself" for any other op (also
///   call_method/call_module/placeholder/get_attr/output nodes, with the op code in
///   parentheses);
/// - "argument 'self' (node 'x') has no tensor metadata: its meta().val is unset" (or "None",
///   "a SymInt", ...) when a tensor argument has no tensor value; "argument 'self' is not a
///   node" when it is not a node;
/// - "shapes [2, 3] and [4] do not broadcast";
/// - "shapes [s0, 8] and [3, 8] do not broadcast (their sizes s0 and 3 differ under the symbols'
///   ranges or hints)";
/// - "argument 'input' dimension 2 is the symbolic size s0, which this op must compute with;
///   epgraph only computes with concrete sizes" for the ops above that still need concrete
///   sizes (and similar for symbolic integer arguments such as a dim);
/// - "cannot read the symbolic expression '<text>': ..." (sym::parse) for a size that is not an
///   expression torch writes; "integer overflow in a symbolic expression" and other errors of the
///   symbolic arithmetic;
/// - torch's own message for invalid arguments: "Dimension out of range (expected to be in
///   range of [-2, 1], but got 5)", "shape '[5, 5]' is invalid for input of size 24", "mat1 and
///   mat2 shapes cannot be multiplied (2x3 and 4x4)", "select(): index 5 out of range for tensor
///   of size [4, 10] at dimension 0", "The expanded size of the tensor (4) must match the
///   existing size (3) at non-singleton dimension 1.  Target sizes: [4].  Tensor sizes: [3]",
///   "torch does not promote uint16 with float32", ...;
/// - "Node 'add' (torch.ops.aten.add.Tensor) does not match its schema: ..." from
///   normalized_arguments when the arguments do not bind to the schema;
/// - for getitem: "node 'bn' has no tuple metadata: its meta().val is a tensor", "index 3 is out
///   of range for the 3 values of node 'bn'".
/// std::bad_alloc.
///
/// Complexity: O(size of the arguments + rank^2) (rank^2 only for the elementwise stride
/// order), plus a schema lookup O(log registry size); symbolic sizes add the size of their
/// expressions (each distinct expression text is parsed once per MetaContext).
///
/// Mirrors: the meta functions FakeTensor propagation runs when torch.export fills
/// `node.meta["val"]` (torch/_meta_registrations.py, torch/_refs, TensorIterator's
/// compute_types/compute_strides in aten/src/ATen/TensorIterator.cpp, at::native::result_type,
/// at::infer_size, computeStride in aten/src/ATen/TensorUtils.cpp, empty_like's
/// preserve_format).
[[nodiscard]] inline NodeValue infer_meta(const Node& node, const MetaContext& symbols) {
  using detail::infer::Context;
  if (node.op() != OpCode::call_function) {
    throw value_error("Cannot infer the metadata of node '" + std::string(node.name()) + "' (" +
                      std::string(op_name(node.op())) + " " + std::string(node.target()) +
                      "): epgraph has no shape rule for it; set meta().val yourself");
  }
  const std::string_view target = node.target();
  const Context bare(node, nullptr, symbols);
  if (target == "operator.getitem" || target == "_operator.getitem") {
    return detail::infer::rule_getitem(bare);
  }
  if (const std::string_view fn = detail::infer::python_operator(target); !fn.empty()) {
    return detail::infer::guarded(bare, [&] { return detail::infer::rule_operator(bare, fn); });
  }
  const auto [op_key, overload] = detail::infer::split_target(target);
  const std::string_view op = std::string_view(op_key).substr(op_key.find('.') + 1);
  // `add_`, `index_copy_`: in-place variants (not dunder names such as `__and__`)
  const bool in_place = op.size() > 1 && op.back() == '_' && op.substr(0, 2) != "__";
  const FunctionSchema* schema = schema_of(node);
  if (schema == nullptr && op_key.substr(0, 21) == "quantized_decomposed.") {
    schema = detail::infer::builtin_schema("quantized_decomposed::" + std::string(op) +
                                           (overload == "default" ? "" : "." + overload));
  }
  const auto& table = detail::infer::rule_table();
  const auto it = table.find(op_key);
  const bool writes_self = schema != nullptr && !schema->arguments.empty() &&
                           schema->arguments[0].type.is_write() && schema->returns.size() == 1 &&
                           schema->returns[0].type.alias == schema->arguments[0].type.alias;
  if (op_key.empty() || schema == nullptr || (in_place ? !writes_self : it == table.end())) {
    bare.fail("epgraph has no shape rule for it; set meta().val yourself");
  }
  if (schema->argument_index("out") >= 0) {
    bare.fail(
        "epgraph has no shape rule for it (out= variants are not covered); set meta().val "
        "yourself");
  }
  NormalizedArguments args = [&] {
    try {
      return NormalizedArguments(*schema, node.args(), node.kwargs());
    } catch (const value_error& e) {
      throw value_error("Node '" + std::string(node.name()) + "' (" + std::string(target) +
                        ") does not match its schema: " + e.what());
    }
  }();
  const Context ctx(node, &args, symbols);
  if (in_place) {
    TensorMeta out = ctx.tensor(schema->arguments[0].name);
    out.requires_grad = false;
    return out;
  }
  return detail::infer::guarded(ctx, [&] { return it->second(ctx, op); });
}

/// infer_meta(node, symbols) with a context that knows no range constraints and learns the
/// symbols' hints from this node's arguments only.
[[nodiscard]] inline NodeValue infer_meta(const Node& node) {
  const MetaContext symbols;
  return infer_meta(node, symbols);
}

/// Sets `node.meta().val` to infer_meta(node, symbols) and returns it.
///
/// Arguments: `node`, see infer_meta. Returns a reference to the node's `meta().val`.
/// Errors: what infer_meta throws, and std::bad_alloc; the node is unchanged then (strong
/// guarantee: the value is computed before anything is written).
/// Complexity: infer_meta's, plus O(size of the value) to store it.
/// Mirrors: what FakeTensor propagation does to `node.meta["val"]` in torch.export (e.g.
/// `node.meta["val"] = fake_result`) for a node a pass inserted.
inline NodeValue& set_inferred_meta(Node& node, const MetaContext& symbols) {
  NodeValue v = infer_meta(node, symbols);
  NodeMeta& meta = node.mutable_meta();  // may allocate; nothing is changed when it throws
  meta.val = std::move(v);               // noexcept move
  return meta.val;
}
/// set_inferred_meta(node, symbols) with infer_meta(node)'s context.
inline NodeValue& set_inferred_meta(Node& node) {
  NodeValue v = infer_meta(node);
  NodeMeta& meta = node.mutable_meta();  // may allocate; nothing is changed when it throws
  meta.val = std::move(v);               // noexcept move
  return meta.val;
}

}  // namespace epgraph
