// infer_meta's rule context: dtype categories and torch's type promotion, the Context a rule
// reads its node's arguments through (and fails with the node's name), checked arithmetic,
// and the Rule variants the rule families take.
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

#include "../../../detail/strings.hpp"
#include "../../../error.hpp"
#include "../../../ir/argument.hpp"
#include "../../../ir/bind.hpp"
#include "../../../ir/graph.hpp"
#include "../../../ir/node.hpp"
#include "../../../ir/symbolic.hpp"
#include "../../../ir/tensor.hpp"
#include "../../../ir/value.hpp"
#include "../../../ops/aten_schemas.hpp"
#include "../../../ops/registry.hpp"
#include "../../../ops/schema.hpp"
#include "meta_context.hpp"

namespace epgraph {
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

// A Python complex given as an argument: the loader keeps torch's `as_complex` as the list
// [real, imag] of two floats (json/detail/read_arguments.hpp), which no Tensor or Scalar
// argument can otherwise hold.
inline bool is_complex_literal(const Argument& a) {
  const ArgumentList* l = a.list();
  return l != nullptr && l->size() == 2 && (*l)[0].is<double>() && (*l)[1].is<double>();
}

// A Python number (bool, int, float or complex) given for a Tensor or Scalar argument.
inline bool is_number_literal(const Argument& a) {
  return a.is<bool>() || a.is<std::int64_t>() || a.is<double>() || is_complex_literal(a);
}

// The dtype of a Python number as a wrapped-number tensor: bool, int64, the default float
// dtype (float32) for float, the default complex dtype (complex64) for complex.
inline dtype wrapped_dtype_of(const Argument& a) {
  if (a.is<bool>()) return dtype::bool_;
  if (a.is<std::int64_t>()) return dtype::int64;
  if (is_complex_literal(a)) return dtype::complex64;
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
  // The op refuses its arguments (torch's meta function would raise): the node is wrong.
  [[noreturn]] void fail(const std::string& why) const { throw value_error(where() + ": " + why); }
  // epgraph cannot compute the value (no rule, an input without a value, a symbolic size the
  // rule needs concrete): the node may be right.
  [[noreturn]] void cannot(const std::string& why) const {
    throw unsupported_meta_error(where() + ": " + why);
  }
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
      const std::string why = what + " (node '" + std::string(n->name()) +
                              "') has no tensor metadata: its meta().val is " + v.describe();
      if (!v.has_value()) cannot(why);
      fail(why);
    }
    check_readable(*n, what);
    return *t;
  }
  // Refuses the input `n` (`what` names the argument) when its value has an expression
  // sym::parse cannot read, naming the field.
  void check_readable(const Node& n, const std::string& what) const {
    if (const std::string why = sym_.unreadable(n.meta().val); !why.empty()) {
      fail(what + " (node '" + std::string(n.name()) +
           "') has a value epgraph cannot read: " + why);
    }
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
        cannot(what + " is the symbolic value " + std::get<SymExpr>(s->value).expr +
               ", which this op must compute with; epgraph only computes with concrete integers");
      }
      const std::string why = what + " (node '" + std::string(n->name()) +
                              "') is not an integer: its meta().val is " + n->meta().val.describe();
      if (!n->meta().val.has_value()) cannot(why);
      fail(why);
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
      if (const SymIntValue* s = n->meta().val.sym_int()) {
        check_readable(*n, what);
        return s->value;
      }
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
  [[nodiscard]] const std::string& string(std::string_view name) const {
    const Argument& a = arg(name);
    if (!a.is<std::string>()) fail("argument '" + std::string(name) + "' is not a string");
    return a.as<std::string>();
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
    if (is_number_literal(a)) return Operand{Operand::Kind::wrapped, wrapped_dtype_of(a)};
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
      if (n->meta().val.sym_float() != nullptr) {
        cannot("argument '" + std::string(name) +
               "' is a symbolic float, which this op must compute with");
      }
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
      cannot(err.what());
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
    cannot(what + " is the symbolic size " + std::get<SymExpr>(s).expr +
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
    cannot(what + ": " + e.what());
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
    cannot(what + ": " + e.what());
  }
}

// The variant of a rule family a rule function takes (an elementwise op's dtype rule, a
// reduction, a softmax, a factory); the table below binds each op to its function and variant.
enum class Rule {
  unary_same,       // dtype of the input
  unary_float,      // integral -> float32
  unary_abs,        // complex -> real
  unary_angle,      // complex -> real, integral -> float32
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

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
