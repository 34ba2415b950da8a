// Symbolic integers: the sympy expressions torch.export writes for dynamic sizes (`s0`,
// `2*s0 + 1`, `((s0 + 1)//2)`, `Max(1, s0)`, `s0 > 2`), in a canonical form with the integer
// arithmetic torch's shape functions use, evaluation, bounds, and both of torch's printed forms.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../detail/strings.hpp"
#include "../error.hpp"

namespace epgraph::sym {

// ------------------------------------------------------------------------------------------------
// Rational coefficients
// ------------------------------------------------------------------------------------------------

/// A rational number num/den with den > 0 and gcd(num, den) == 1: the coefficients of an
/// expression (sympy's Integer and Rational). Every operation is checked: a result outside int64
/// throws value_error "integer overflow in a symbolic expression". O(log) per operation.
class Rational {
 public:
  /// Zero. O(1).
  constexpr Rational() noexcept = default;
  /// The integer `n`. O(1).
  constexpr Rational(std::int64_t n) noexcept : num_(n) {}  // NOLINT: implicit, like sympy's
  /// num/den in lowest terms. Throws value_error "division by zero in a symbolic expression" when
  /// den is 0, and on overflow. O(log).
  static Rational of(std::int64_t num, std::int64_t den);

  /// The numerator (sign of the number). O(1).
  [[nodiscard]] constexpr std::int64_t num() const noexcept { return num_; }
  /// The denominator (> 0). O(1).
  [[nodiscard]] constexpr std::int64_t den() const noexcept { return den_; }
  /// True when the denominator is 1. O(1).
  [[nodiscard]] constexpr bool is_integer() const noexcept { return den_ == 1; }
  /// -1, 0 or 1. O(1).
  [[nodiscard]] constexpr int sign() const noexcept { return num_ < 0 ? -1 : (num_ > 0 ? 1 : 0); }
  /// The largest integer <= this (Python's math.floor). O(1).
  [[nodiscard]] std::int64_t floor() const noexcept;
  /// The smallest integer >= this (Python's math.ceil). O(1).
  [[nodiscard]] std::int64_t ceil() const noexcept;

  friend Rational operator+(const Rational& a, const Rational& b);
  friend Rational operator-(const Rational& a, const Rational& b);
  friend Rational operator*(const Rational& a, const Rational& b);
  /// Throws value_error "division by zero in a symbolic expression" when b is 0.
  friend Rational operator/(const Rational& a, const Rational& b);
  friend Rational operator-(const Rational& a);
  friend bool operator==(const Rational& a, const Rational& b) noexcept {
    return a.num_ == b.num_ && a.den_ == b.den_;
  }
  friend bool operator!=(const Rational& a, const Rational& b) noexcept { return !(a == b); }
  friend bool operator<(const Rational& a, const Rational& b);

 private:
  std::int64_t num_ = 0;
  std::int64_t den_ = 1;
};

// ------------------------------------------------------------------------------------------------
// Expressions
// ------------------------------------------------------------------------------------------------

namespace detail {
struct AtomNode;
}  // namespace detail

/// What sympy knows of a symbol (its assumptions), as torch creates them: a size symbol `s0` is
/// `Symbol('s0', positive=True, integer=True)`, an unbacked one `u0` is
/// `Symbol('u0', integer=True)`.
struct Assumptions {
  bool integer = true;
  bool positive = false;
  bool nonnegative = false;
  friend bool operator==(const Assumptions& a, const Assumptions& b) noexcept {
    return a.integer == b.integer && a.positive == b.positive && a.nonnegative == b.nonnegative;
  }
  friend bool operator!=(const Assumptions& a, const Assumptions& b) noexcept { return !(a == b); }
};

/// The assumptions torch gives a symbol of that name when a file's older `str` form does not
/// spell them: `s…` (a backed size) positive integer, anything else (`u…`, unbacked) integer.
/// O(1).
[[nodiscard]] inline Assumptions assumptions_of_name(std::string_view name) noexcept {
  Assumptions a;
  a.positive = !name.empty() && name[0] == 's';
  return a;
}

/// A symbolic expression over a program's symbols (sympy's `Expr`/`Boolean` as torch uses them
/// for SymInt and SymBool values), immutable, in a canonical form: a sum of terms, each a rational
/// coefficient times a product of powers of atoms (symbols, and applications of torch's sympy
/// functions: FloorDiv, Mod, PythonMod, Max, Min, CeilToInt, relations, ...), with like terms
/// combined, products expanded, and terms and factors in one order. So expressions that sympy
/// would make equal compare equal (`2*s0 == s0 + s0`, `(2*s0)//2 == s0`) and so do some that
/// sympy keeps apart (`(s0 + 1)*(s0 - 1) == s0**2 - 1`). A relation or boolean is one atom.
///
/// Built by parse() from either printed form, or from integer() / symbol() with the operators
/// and functions below, which simplify as torch's sympy functions do (torch/utils/_sympy/
/// functions.py). Copying shares the atoms. Equality is structural on the canonical form.
class Expr {
 public:
  /// One atom to a power (>= 1).
  struct Factor {
    std::shared_ptr<const detail::AtomNode> atom;
    std::uint32_t exp = 1;
  };
  /// A coefficient times a product of factors (none: the constant term).
  struct Term {
    Rational coeff;
    std::vector<Factor> factors;
  };

  /// Zero. O(1).
  Expr() noexcept = default;
  /// The integer `n` (sympy's Integer(n)). O(1); no allocation for 0.
  Expr(std::int64_t n);  // NOLINT: implicit, as sympy sympifies ints
  /// The rational `r`. O(1).
  Expr(Rational r);  // NOLINT

  /// The integer constant `n`. O(1).
  static Expr integer(std::int64_t n) { return Expr(n); }
  /// The symbol `name` with `assumptions` (default: what torch gives that name). Throws
  /// value_error "a symbol needs a name" for an empty name. O(length).
  static Expr symbol(std::string name, std::optional<Assumptions> assumptions = std::nullopt);
  /// sympy's `true` / `false` (a SymBool that is known). O(1).
  static Expr boolean(bool value);

  /// The terms, in canonical order (highest degree first, the constant last). O(1).
  [[nodiscard]] const std::vector<Term>& terms() const noexcept { return terms_; }
  /// True when the expression is a number (no symbol, no function). O(1).
  [[nodiscard]] bool is_constant() const noexcept {
    return terms_.empty() || (terms_.size() == 1 && terms_[0].factors.empty());
  }
  /// The number, when is_constant(). O(1).
  [[nodiscard]] std::optional<Rational> constant() const noexcept;
  /// The integer, when the expression is an integer constant. O(1).
  [[nodiscard]] std::optional<std::int64_t> as_integer() const noexcept;
  /// True for sympy's `true`/`false`, a relation (`Eq`, `Ne`, `<`, `<=`) or `And`/`Or`/`Not`: a
  /// SymBool expression. O(1).
  [[nodiscard]] bool is_boolean() const noexcept;
  /// sympy's truth value when the expression is `true` or `false`. O(1).
  [[nodiscard]] std::optional<bool> as_boolean() const noexcept;
  /// The atom when the expression is exactly one atom (coefficient 1, power 1), else nullptr.
  [[nodiscard]] const detail::AtomNode* as_atom() const noexcept;
  /// The names of the symbols it contains, sorted, each once. O(size).
  [[nodiscard]] std::vector<std::string> free_symbols() const;

  /// Total order on canonical forms (-1, 0, 1); equal forms compare 0. O(size).
  friend int compare(const Expr& a, const Expr& b) noexcept;
  friend bool operator==(const Expr& a, const Expr& b) noexcept { return compare(a, b) == 0; }
  friend bool operator!=(const Expr& a, const Expr& b) noexcept { return compare(a, b) != 0; }
  friend bool operator<(const Expr& a, const Expr& b) noexcept { return compare(a, b) < 0; }

  /// Sum, difference, product (expanded) and negation; each throws value_error on coefficient
  /// overflow, and "a symbolic expression with more than 4096 terms" when an expansion grows
  /// past that. O(terms of a * terms of b * factors) for the product, O(terms) otherwise.
  friend Expr operator+(const Expr& a, const Expr& b);
  friend Expr operator-(const Expr& a, const Expr& b);
  friend Expr operator*(const Expr& a, const Expr& b);
  friend Expr operator-(const Expr& a);

 private:
  friend struct detail_access;
  std::vector<Term> terms_;
};

/// The range a symbol may take: torch's `range_constraints[s]` (`ValueRanges(lower, upper)`),
/// an absent bound unbounded (`int_oo`).
struct SymbolRange {
  std::optional<std::int64_t> min_val;
  std::optional<std::int64_t> max_val;
};
/// What is known about a program's symbols: their ranges by symbol name (a program's
/// `range_constraints`; symbols not listed have the range of their assumptions, [1, oo) for a
/// positive one), and the relations between them that runtime assertions established (torch's
/// `ShapeEnv` axioms: `torch._check(n <= x.shape[0])` becomes `_assert_scalar(u0 <= s77)`, after
/// which `Min(s77, u0)` is `u0`). Added with add_axiom(); every function below that takes ranges
/// uses both. A map (a `std::map` by symbol name) with the axioms beside it.
struct Ranges : std::map<std::string, SymbolRange, std::less<>> {
  using std::map<std::string, SymbolRange, std::less<>>::map;
  /// Integer expressions known to be >= 0, each canonical and listed once (`s77 - u0` for
  /// `u0 <= s77`). Filled by add_axiom().
  std::vector<Expr> axioms;
  /// Unbacked symbols an asserted equality solved for, by name, with their value: `u0 -> s77`
  /// after `Eq(u0, s77)` (torch's `ShapeEnv.replacements`, which every SymInt torch prints goes
  /// through, so torch writes `s77` for the value of `item` and every size made from it). Each
  /// value is free of unbacked symbols. Filled by add_axiom(); applied by substitute() when
  /// the caller passes them (simplify() and bounds() do not need them: the equality is among
  /// the axioms both ways).
  std::map<std::string, Expr, std::less<>> replacements;
};

/// Whether `name` is the name torch gives an unbacked symbol: `u<k>` (an unbacked SymInt, from
/// `item` or `nonzero`) or `zuf<k>` (an unbacked SymFloat), k decimal digits (torch's
/// `free_unbacked_symbols`, torch/fx/experimental/symbolic_shapes.py; SymT.UNBACKED_INT and
/// UNBACKED_FLOAT in torch/utils/_sympy/symbol.py). O(length).
[[nodiscard]] inline bool is_unbacked_name(std::string_view name) noexcept {
  std::size_t digits = 0;
  if (name.size() >= 2 && name[0] == 'u') {
    digits = 1;
  } else if (name.size() >= 4 && name.substr(0, 3) == "zuf") {
    digits = 3;
  } else {
    return false;
  }
  for (std::size_t i = digits; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
  }
  return true;
}
/// Values by symbol name, for evaluate().
using Bindings = std::map<std::string, std::int64_t, std::less<>>;

/// Closed bounds of an expression's value, as doubles (±infinity when unbounded). A bound at or
/// beyond 2^53 in magnitude (where doubles stop holding every integer) is weakened: to infinity
/// away from zero, to 2^52 towards it; below that the integer bounds are exact.
struct Interval {
  double lo;
  double hi;
};

// --- torch's sympy functions (torch/utils/_sympy/functions.py) ----------------------------------
// Each simplifies as torch's `eval` does, using the symbols' assumptions, and with `ranges`
// (optional; a pointer that must stay valid during the call) the program's range constraints.
// Each throws value_error "division by zero in a symbolic expression" where torch raises
// ZeroDivisionError, and on overflow. O(size of the arguments) unless noted.

/// Python's `a ** n` for an integer n >= 0 (expanded). Throws value_error for n > 64 with a
/// non-constant base, and as operator* does.
[[nodiscard]] Expr pow(const Expr& base, std::uint32_t n);
/// Python's `a // b` on SymInts: torch's FloorDiv (round towards -inf). Simplifies `b == 1`,
/// `a == b`, constants, nested FloorDiv, terms of `a` divisible by an integer `b`
/// (`(2*s0 + 1)//2 == s0 + 1//2 == s0`), and common factors (`(s0*s1)//s1 == s0`).
[[nodiscard]] Expr floordiv(const Expr& a, const Expr& b, const Ranges* ranges = nullptr);
/// Python's `-(-a // b)`: ceiling division as torch's shape functions write it.
[[nodiscard]] Expr ceildiv(const Expr& a, const Expr& b, const Ranges* ranges = nullptr);
/// torch's `Mod(p, q)` (non-negative arguments: sizes). Simplifies `q == 1`, `p == ±q`, constants,
/// parity (`Mod(2*s0, 2) == 0`), multiples (`Mod(4*s0, 2) == 0`) and `0 <= p < q` (then p).
[[nodiscard]] Expr mod(const Expr& p, const Expr& q, const Ranges* ranges = nullptr);
/// torch's `PythonMod(p, q)`: Python's `p % q` on SymInts, the same simplifications as mod().
[[nodiscard]] Expr python_mod(const Expr& p, const Expr& q, const Ranges* ranges = nullptr);
/// torch's `Max(...)` / `Min(...)`: flattened, constants folded, duplicates removed, and an
/// argument dropped when another is known to be at least (at most) it: `Max(1, s0) == s0` for a
/// positive `s0`, `Max(2, s0) == s0` when `ranges` say `s0 >= 2`. Throws value_error for no
/// arguments. O(arguments^2 * size).
[[nodiscard]] Expr max(std::vector<Expr> args, const Ranges* ranges = nullptr);
[[nodiscard]] Expr min(std::vector<Expr> args, const Ranges* ranges = nullptr);
/// Relations, SymBool expressions: `Eq(a, b)`, `Ne(a, b)`, `a < b`, `a <= b`, `a > b`, `a >= b`.
/// Folded to true/false when `a - b` is a constant or its bounds decide (`s0 > 0` is true for a
/// positive s0); `a > b` is kept as `b < a` (sympy prints both as `a > b`).
[[nodiscard]] Expr eq(const Expr& a, const Expr& b, const Ranges* ranges = nullptr);
[[nodiscard]] Expr ne(const Expr& a, const Expr& b, const Ranges* ranges = nullptr);
[[nodiscard]] Expr lt(const Expr& a, const Expr& b, const Ranges* ranges = nullptr);
[[nodiscard]] Expr le(const Expr& a, const Expr& b, const Ranges* ranges = nullptr);
[[nodiscard]] Expr gt(const Expr& a, const Expr& b, const Ranges* ranges = nullptr);
[[nodiscard]] Expr ge(const Expr& a, const Expr& b, const Ranges* ranges = nullptr);
/// sympy's `And`, `Or`, `Not` of SymBool expressions (flattened, folded, duplicates removed; the
/// `Not` of a relation is its complement, `Not(s0 >= 3)` is `s0 < 3`, as sympy makes it).
/// Throws value_error when an argument is not boolean.
[[nodiscard]] Expr logical_and(std::vector<Expr> args);
[[nodiscard]] Expr logical_or(std::vector<Expr> args);
[[nodiscard]] Expr logical_not(const Expr& a);

/// Records what the SymBool `condition` asserts (an `_assert_scalar` of it passed), as torch's
/// `ShapeEnv.defer_runtime_assert` adds it to its axioms: `a <= b` and `a >= b` as `b - a >= 0`;
/// `a < b` and `a > b` between integers as `b - a - 1 >= 0`; `Eq(a, b)` both ways, and, when
/// `a - b` has exactly one unbacked symbol u (is_unbacked_name), alone in a term of coefficient
/// +-1 and nowhere else, and the rest is a polynomial of backed symbols, the replacement
/// `u -> ` its solution in `ranges.replacements` (torch's
/// `ShapeEnv._maybe_guard_rel`, which solves for the unbacked symbol and keeps the solution
/// only when it has no unbacked symbol: `Eq(u0, s77)` gives `u0 -> s77`, `Eq(u0, u1)` none); each
/// conjunct of an `And`. Other conditions (`Ne`, `Or`, `Not`, a constant) teach nothing and are
/// left out: the result says whether anything was added. From then on bounds() and every
/// simplification given `ranges` use the axioms alongside the ranges: `e` is at least
/// `bounds(e - a).lo` for an axiom `a` (so `Min(s77, u0)` is `u0` after `u0 <= s77`). Throws
/// std::bad_alloc. O(size of condition * axioms) (duplicates are not added twice).
bool add_axiom(Ranges& ranges, const Expr& condition);

/// Rebuilds `e` bottom-up with `ranges`, so that range-dependent simplifications apply
/// (`Max(2, s0)` -> `s0` when s0 >= 2; `s0 >= 2` -> true). O(size * arguments).
[[nodiscard]] Expr simplify(const Expr& e, const Ranges& ranges);
/// The bounds of `e` under `ranges` (or the assumptions alone): interval arithmetic, exact on
/// sums and products of intervals, conservative on the rest. O(size).
[[nodiscard]] Interval bounds(const Expr& e, const Ranges* ranges = nullptr);
/// Replaces symbols by expressions (torch's `expr.xreplace` / `subs`), re-simplifying. Symbols
/// not in `values` stay. O(size * substituted size).
[[nodiscard]] Expr substitute(const Expr& e, const std::map<std::string, Expr, std::less<>>& values,
                              const Ranges* ranges = nullptr);

/// The value of `e` with every symbol bound (`bindings`; e.g. the hints of the export), exactly
/// (torch's `ShapeEnv.evaluate_expr` on concrete values). For a boolean, 1 or 0. Throws
/// value_error "the symbol 's0' has no value" for an unbound symbol, "… is not an integer" when
/// the value of a SymInt expression is a fraction, "cannot evaluate <fn>" for a function epgraph
/// only carries (FloatPow, OpaqueUnaryFn_*, ...), division by zero and overflow. The SymFloat
/// functions (ToFloat, IntTrueDiv, FloatTrueDiv, TruncToFloat, and the argument of TruncToInt /
/// FloorToInt / CeilToInt) are computed in float64, each result rounded to a double, as
/// torch/utils/_sympy/functions.py evaluates them (TruncToInt(0.7*ToFloat(10)) is 7). O(size).
[[nodiscard]] std::int64_t evaluate(const Expr& e, const Bindings& bindings);
/// The same as a rational (for `IntTrueDiv` and rational coefficients). O(size).
[[nodiscard]] Rational evaluate_rational(const Expr& e, const Bindings& bindings);

/// Reads an expression as torch writes `SymExpr.expr_str`: sympy's `srepr` form of torch 2.13
/// (`Mul(Integer(2), Symbol('s70', positive=True, integer=True))`) or the `str` form of older
/// files (`2*s0`, `((s0 + 1)//2)`, `Max(1, s0)`, `Eq(s0, 2)`, `(s0 > 2) & (s1 < 4)`), with
/// Python's operator precedence. Symbols without spelled assumptions get assumptions_of_name.
/// A float64 constant (`Float('1.5', precision=53)`, `1.5` in the str form) is read as its exact
/// value, a fraction with a power-of-2 denominator; srepr() writes such a fraction back as that
/// Float, str() as a fraction.
/// Throws value_error "cannot read the symbolic expression '<text>': <what> at offset <n>" for
/// text that is not such an expression: a syntax error, an unknown function, a Float that is not
/// finite or whose value is no fraction of 64-bit integers, a fractional or symbolic power, a
/// division by a symbolic expression. O(length * simplification).
[[nodiscard]] Expr parse(std::string_view text);
/// sympy's `srepr`: the form torch 2.13 writes and its loader reads back with `sympy.sympify`
/// to an expression equal to `e`. O(size).
[[nodiscard]] std::string srepr(const Expr& e);
/// sympy's `str`: `2*s0 + 1`, `((s0 + 1)//2)`, `s0 > 2` (older files, messages, and the keys of
/// `range_constraints`). O(size).
[[nodiscard]] std::string str(const Expr& e);

// ------------------------------------------------------------------------------------------------
// Implementation
// ------------------------------------------------------------------------------------------------

namespace detail {

enum class AtomKind : std::uint8_t { symbol, function };

// An atom: a symbol, or a function application (sympy class name and canonical arguments).
struct AtomNode {
  AtomKind kind = AtomKind::symbol;
  std::string name;
  Assumptions assumptions;  // symbols only
  std::vector<Expr> args;   // functions only
};

[[noreturn]] inline void overflow() {
  throw value_error("integer overflow in a symbolic expression");
}
[[noreturn]] inline void division_by_zero() {
  throw value_error("division by zero in a symbolic expression");
}

inline std::int64_t add_checked(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) overflow();
  return r;
}
inline std::int64_t sub_checked(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) overflow();
  return r;
}
inline std::int64_t mul_checked(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) overflow();
  return r;
}
inline std::int64_t gcd64(std::int64_t a, std::int64_t b) noexcept {
  // Magnitudes as unsigned, so INT64_MIN does not overflow.
  std::uint64_t x = a < 0 ? 0 - static_cast<std::uint64_t>(a) : static_cast<std::uint64_t>(a);
  std::uint64_t y = b < 0 ? 0 - static_cast<std::uint64_t>(b) : static_cast<std::uint64_t>(b);
  while (y != 0) {
    const std::uint64_t t = x % y;
    x = y;
    y = t;
  }
  // Only gcd(INT64_MIN, INT64_MIN or 0) is 2^63, which is no int64: 2^62 divides both too.
  return x > static_cast<std::uint64_t>(INT64_MAX) ? (std::int64_t{1} << 62)
                                                   : static_cast<std::int64_t>(x);
}
// Python's a // b and a % b on integers (b != 0).
inline std::int64_t py_floordiv(std::int64_t a, std::int64_t b) {
  if (b == 0) division_by_zero();
  if (a == INT64_MIN && b == -1) overflow();
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
inline std::int64_t py_mod(std::int64_t a, std::int64_t b) {
  if (b == 0) division_by_zero();
  if (b == -1) return 0;
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace detail

inline Rational Rational::of(std::int64_t num, std::int64_t den) {
  if (den == 0) detail::division_by_zero();
  if (den < 0) {
    num = detail::sub_checked(0, num);
    den = detail::sub_checked(0, den);
  }
  const std::int64_t g = detail::gcd64(num, den);
  Rational r;
  r.num_ = g > 1 ? num / g : num;
  r.den_ = g > 1 ? den / g : den;
  return r;
}
inline std::int64_t Rational::floor() const noexcept {
  return den_ == 1 ? num_ : detail::py_floordiv(num_, den_);
}
inline std::int64_t Rational::ceil() const noexcept {
  if (den_ == 1) return num_;
  return detail::py_floordiv(num_, den_) + 1;
}
inline Rational operator+(const Rational& a, const Rational& b) {
  if (a.den_ == 1 && b.den_ == 1) return Rational(detail::add_checked(a.num_, b.num_));
  const std::int64_t g = detail::gcd64(a.den_, b.den_);
  const std::int64_t da = a.den_ / g;
  const std::int64_t db = b.den_ / g;
  return Rational::of(
      detail::add_checked(detail::mul_checked(a.num_, db), detail::mul_checked(b.num_, da)),
      detail::mul_checked(a.den_, db));
}
inline Rational operator-(const Rational& a) {
  Rational r = a;
  r.num_ = detail::sub_checked(0, a.num_);
  return r;
}
inline Rational operator-(const Rational& a, const Rational& b) { return a + (-b); }
inline Rational operator*(const Rational& a, const Rational& b) {
  if (a.den_ == 1 && b.den_ == 1) return Rational(detail::mul_checked(a.num_, b.num_));
  const std::int64_t g1 = detail::gcd64(a.num_, b.den_);
  const std::int64_t g2 = detail::gcd64(b.num_, a.den_);
  const std::int64_t n1 = g1 > 1 ? a.num_ / g1 : a.num_;
  const std::int64_t d2 = g1 > 1 ? b.den_ / g1 : b.den_;
  const std::int64_t n2 = g2 > 1 ? b.num_ / g2 : b.num_;
  const std::int64_t d1 = g2 > 1 ? a.den_ / g2 : a.den_;
  return Rational::of(detail::mul_checked(n1, n2), detail::mul_checked(d1, d2));
}
inline Rational operator/(const Rational& a, const Rational& b) {
  if (b.num_ == 0) detail::division_by_zero();
  return a * Rational::of(b.den_, b.num_);
}
inline bool operator<(const Rational& a, const Rational& b) { return (a - b).sign() < 0; }

namespace detail {
// base**e by squaring: O(log e) checked products (an overflow throws at once); 0, 1 and -1 in
// O(1), so PowByNatural(1, 10**18) costs nothing.
inline Rational rational_pow(Rational base, std::uint64_t e) {
  if (e == 0) return Rational(1);
  if (base.sign() == 0 || base == Rational(1)) return base;
  if (base == Rational(-1)) return (e % 2 == 0) ? Rational(1) : base;
  Rational r(1);
  while (true) {
    if ((e & 1u) != 0) r = r * base;
    e >>= 1u;
    if (e == 0) return r;
    base = base * base;
  }
}
}  // namespace detail

namespace detail {

inline int compare_atoms(const AtomNode& a, const AtomNode& b) noexcept;

inline int compare_factors(const std::vector<Expr::Factor>& a,
                           const std::vector<Expr::Factor>& b) noexcept {
  const std::size_t n = a.size() < b.size() ? a.size() : b.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i].atom != b[i].atom) {
      if (int c = compare_atoms(*a[i].atom, *b[i].atom)) return c;
    }
    if (a[i].exp != b[i].exp) return a[i].exp < b[i].exp ? -1 : 1;
  }
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return 0;
}

inline std::uint64_t degree(const Expr::Term& t) noexcept {
  std::uint64_t d = 0;
  for (const auto& f : t.factors) d += f.exp;
  return d;
}

// The canonical order of terms: higher degree first, then by factors; the constant last.
inline int compare_monomials(const Expr::Term& a, const Expr::Term& b) noexcept {
  const std::uint64_t da = degree(a);
  const std::uint64_t db = degree(b);
  if (da != db) return da > db ? -1 : 1;
  return compare_factors(a.factors, b.factors);
}

inline int compare_rationals(const Rational& a, const Rational& b) noexcept {
  if (a == b) return 0;
  // Compare without overflow: by numerator, then denominator (a total order, not numeric).
  if (a.num() != b.num()) return a.num() < b.num() ? -1 : 1;
  return a.den() < b.den() ? -1 : 1;
}

inline int compare_exprs(const Expr& a, const Expr& b) noexcept {
  const auto& ta = a.terms();
  const auto& tb = b.terms();
  const std::size_t n = ta.size() < tb.size() ? ta.size() : tb.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (int c = compare_monomials(ta[i], tb[i])) return c;
    if (int c = compare_rationals(ta[i].coeff, tb[i].coeff)) return c;
  }
  if (ta.size() != tb.size()) return ta.size() < tb.size() ? -1 : 1;
  return 0;
}

inline int compare_atoms(const AtomNode& a, const AtomNode& b) noexcept {
  if (&a == &b) return 0;
  if (a.kind != b.kind) return a.kind == AtomKind::symbol ? -1 : 1;
  if (int c = a.name.compare(b.name)) return c < 0 ? -1 : 1;
  if (a.kind == AtomKind::symbol) {
    auto key = [](const Assumptions& s) {
      return (s.integer ? 4 : 0) + (s.positive ? 2 : 0) + (s.nonnegative ? 1 : 0);
    };
    const int ka = key(a.assumptions);
    const int kb = key(b.assumptions);
    return ka == kb ? 0 : (ka < kb ? -1 : 1);
  }
  const std::size_t n = a.args.size() < b.args.size() ? a.args.size() : b.args.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (int c = compare_exprs(a.args[i], b.args[i])) return c;
  }
  if (a.args.size() != b.args.size()) return a.args.size() < b.args.size() ? -1 : 1;
  return 0;
}

inline constexpr std::size_t max_terms = 4096;
// The largest power of an atom an expression holds (s0**65 is what sympy writes for s0**64*s0;
// nothing torch computes comes near this bound, which keeps powers and their values in range).
inline constexpr std::uint32_t max_power = 1u << 20;

// Boolean-valued function atoms.
inline bool is_boolean_function(std::string_view n) noexcept {
  return n == "Equality" || n == "Unequality" || n == "StrictLessThan" || n == "LessThan" ||
         n == "And" || n == "Or" || n == "Not" || n == "true" || n == "false";
}

// Functions whose value is an integer whenever their arguments are (torch marks them
// is_integer = True), so that an integer coefficient times them stays an integer.
inline bool is_integer_function(std::string_view n) noexcept {
  return n == "FloorDiv" || n == "Mod" || n == "PythonMod" || n == "CeilToInt" ||
         n == "FloorToInt" || n == "TruncToInt" || n == "RoundToInt" || n == "Max" || n == "Min" ||
         n == "ModularIndexing" || n == "CleanDiv" || n == "PowByNatural" || n == "LShift" ||
         n == "RShift" || n == "Where" || n == "Identity";
}

// Functions that parse() accepts and carries (evaluated where evaluate() knows them).
inline bool is_known_function(std::string_view n) noexcept {
  return is_boolean_function(n) || is_integer_function(n) || n == "IntTrueDiv" ||
         n == "FloatTrueDiv" || n == "ToFloat" || n == "TruncToFloat" || n == "FloatPow" ||
         n == "IsNonOverlappingAndDenseIndicator" || n == "RoundDecimal" || n == "Piecewise" ||
         n == "ExprCondPair" || n.substr(0, 14) == "OpaqueUnaryFn_" ||
         n.substr(0, 10) == "BitwiseFn_";
}

}  // namespace detail

struct detail_access {
  static std::vector<Expr::Term>& terms(Expr& e) noexcept { return e.terms_; }
};

namespace detail {

// Sorts terms, merges like ones and drops zero coefficients: the canonical form.
inline Expr normalize(std::vector<Expr::Term> terms) {
  std::sort(terms.begin(), terms.end(),
            [](const Expr::Term& a, const Expr::Term& b) { return compare_monomials(a, b) < 0; });
  std::vector<Expr::Term> out;
  out.reserve(terms.size());
  for (auto& t : terms) {
    if (!out.empty() && compare_monomials(out.back(), t) == 0) {
      out.back().coeff = out.back().coeff + t.coeff;
      if (out.back().coeff.sign() == 0) out.pop_back();
      continue;
    }
    if (t.coeff.sign() != 0) out.push_back(std::move(t));
  }
  if (out.size() > max_terms) {
    throw value_error("a symbolic expression with more than 4096 terms");
  }
  Expr e;
  detail_access::terms(e) = std::move(out);
  return e;
}

inline Expr from_atom(std::shared_ptr<const AtomNode> atom) {
  Expr::Term t;
  t.coeff = Rational(1);
  t.factors.push_back(Expr::Factor{std::move(atom), 1});
  std::vector<Expr::Term> ts;
  ts.push_back(std::move(t));
  Expr e;
  detail_access::terms(e) = std::move(ts);
  return e;
}

inline Expr make_function(std::string name, std::vector<Expr> args) {
  auto node = std::make_shared<AtomNode>();
  node->kind = AtomKind::function;
  node->name = std::move(name);
  node->args = std::move(args);
  return from_atom(std::move(node));
}

inline const AtomNode* function_atom(const Expr& e, std::string_view name) noexcept {
  const AtomNode* a = e.as_atom();
  return a != nullptr && a->kind == AtomKind::function && a->name == name ? a : nullptr;
}

// Multiplies two factor lists (each sorted), adding the powers of a shared atom.
inline std::vector<Expr::Factor> multiply_factors(const std::vector<Expr::Factor>& a,
                                                  const std::vector<Expr::Factor>& b) {
  std::vector<Expr::Factor> out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() || j < b.size()) {
    int c = 0;
    if (i == a.size()) {
      c = 1;
    } else if (j == b.size()) {
      c = -1;
    } else if (a[i].atom != b[j].atom) {
      c = compare_atoms(*a[i].atom, *b[j].atom);
    }
    if (c < 0) {
      out.push_back(a[i++]);
    } else if (c > 0) {
      out.push_back(b[j++]);
    } else {
      Expr::Factor f = a[i++];
      const std::uint32_t e = b[j++].exp;
      if (f.exp > max_power - e) {
        throw value_error("a power above " + std::to_string(max_power) +
                          " in a symbolic expression");
      }
      f.exp += e;
      out.push_back(std::move(f));
    }
  }
  return out;
}

// Whether every value the atom takes is an integer (it may then carry an integer coefficient).
inline bool integer_valued(const AtomNode& a) noexcept {
  if (a.kind == AtomKind::symbol) return a.assumptions.integer;
  return is_integer_function(a.name);
}
inline bool integer_valued(const Expr::Term& t) noexcept {
  if (!t.coeff.is_integer()) return false;
  for (const auto& f : t.factors) {
    if (!integer_valued(*f.atom)) return false;
  }
  return true;
}
inline bool integer_valued(const Expr& e) noexcept {
  for (const auto& t : e.terms()) {
    if (!integer_valued(t)) return false;
  }
  return true;
}

}  // namespace detail

inline Expr::Expr(std::int64_t n) {
  if (n != 0) terms_.push_back(Term{Rational(n), {}});
}
inline Expr::Expr(Rational r) {
  if (r.sign() != 0) terms_.push_back(Term{r, {}});
}

inline Expr Expr::symbol(std::string name, std::optional<Assumptions> assumptions) {
  if (name.empty()) throw value_error("a symbol needs a name");
  auto node = std::make_shared<detail::AtomNode>();
  node->kind = detail::AtomKind::symbol;
  node->assumptions = assumptions ? *assumptions : assumptions_of_name(name);
  node->name = std::move(name);
  return detail::from_atom(std::move(node));
}

inline Expr Expr::boolean(bool value) {
  return detail::make_function(value ? "true" : "false", {});
}

inline std::optional<Rational> Expr::constant() const noexcept {
  if (terms_.empty()) return Rational(0);
  if (terms_.size() == 1 && terms_[0].factors.empty()) return terms_[0].coeff;
  return std::nullopt;
}
inline std::optional<std::int64_t> Expr::as_integer() const noexcept {
  const auto c = constant();
  if (c && c->is_integer()) return c->num();
  return std::nullopt;
}
inline const detail::AtomNode* Expr::as_atom() const noexcept {
  if (terms_.size() != 1 || terms_[0].factors.size() != 1) return nullptr;
  if (terms_[0].coeff != Rational(1) || terms_[0].factors[0].exp != 1) return nullptr;
  return terms_[0].factors[0].atom.get();
}
inline bool Expr::is_boolean() const noexcept {
  const detail::AtomNode* a = as_atom();
  return a != nullptr && a->kind == detail::AtomKind::function &&
         detail::is_boolean_function(a->name);
}
inline std::optional<bool> Expr::as_boolean() const noexcept {
  if (detail::function_atom(*this, "true")) return true;
  if (detail::function_atom(*this, "false")) return false;
  return std::nullopt;
}

inline std::vector<std::string> Expr::free_symbols() const {
  std::vector<std::string> out;
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    for (const auto& t : e.terms()) {
      for (const auto& f : t.factors) {
        if (f.atom->kind == detail::AtomKind::symbol) {
          out.push_back(f.atom->name);
        } else {
          for (const auto& a : f.atom->args) walk(a);
        }
      }
    }
  };
  walk(*this);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

inline int compare(const Expr& a, const Expr& b) noexcept { return detail::compare_exprs(a, b); }

namespace detail {
// sympy refuses `True + 1` and `Max(s0 > 2, 1)`; so does epgraph (a SymBool is no integer).
inline void require_integer_operands(const Expr& a, const Expr& b) {
  if (a.is_boolean() || b.is_boolean()) {
    throw value_error("a SymBool ('" + str(a.is_boolean() ? a : b) + "') in integer arithmetic");
  }
}
}  // namespace detail

inline Expr operator+(const Expr& a, const Expr& b) {
  detail::require_integer_operands(a, b);
  if (a.terms_.empty()) return b;
  if (b.terms_.empty()) return a;
  std::vector<Expr::Term> ts;
  ts.reserve(a.terms_.size() + b.terms_.size());
  ts.insert(ts.end(), a.terms_.begin(), a.terms_.end());
  ts.insert(ts.end(), b.terms_.begin(), b.terms_.end());
  return detail::normalize(std::move(ts));
}
inline Expr operator-(const Expr& a) {
  detail::require_integer_operands(a, Expr());
  Expr r = a;
  for (auto& t : r.terms_) t.coeff = -t.coeff;
  return r;
}
inline Expr operator-(const Expr& a, const Expr& b) { return a + (-b); }
inline Expr operator*(const Expr& a, const Expr& b) {
  detail::require_integer_operands(a, b);
  if (a.terms_.empty() || b.terms_.empty()) return Expr();
  if (a.terms_.size() * b.terms_.size() > detail::max_terms) {
    throw value_error("a symbolic expression with more than 4096 terms");
  }
  std::vector<Expr::Term> ts;
  ts.reserve(a.terms_.size() * b.terms_.size());
  for (const auto& x : a.terms_) {
    for (const auto& y : b.terms_) {
      ts.push_back(Expr::Term{x.coeff * y.coeff, detail::multiply_factors(x.factors, y.factors)});
    }
  }
  return detail::normalize(std::move(ts));
}

inline Expr pow(const Expr& base, std::uint32_t n) {
  if (n == 0) return Expr(1);
  if (base.terms().empty()) return Expr(0);
  if (n > detail::max_power) {
    throw value_error("a power above " + std::to_string(detail::max_power) +
                      " in a symbolic expression");
  }
  if (base.terms().size() == 1) {
    // A monomial: the coefficient to the n-th, every atom's power times n (no expansion).
    const Expr::Term& t = base.terms()[0];
    Expr::Term out{detail::rational_pow(t.coeff, n), {}};
    for (const auto& f : t.factors) {
      if (f.exp > detail::max_power / n) {
        throw value_error("a power above " + std::to_string(detail::max_power) +
                          " in a symbolic expression");
      }
      out.factors.push_back(Expr::Factor{f.atom, f.exp * n});
    }
    std::vector<Expr::Term> terms;
    terms.push_back(std::move(out));
    return detail::normalize(std::move(terms));
  }
  if (n == 0) return Expr(1);
  if (n > 64) throw value_error("a power above 64 of a sum in a symbolic expression");
  Expr r(1);
  Expr b = base;
  std::uint32_t k = n;
  while (true) {
    if ((k & 1u) != 0) r = r * b;
    k >>= 1u;
    if (k == 0) break;
    b = b * b;
  }
  return r;
}

namespace detail {

inline constexpr double inf = std::numeric_limits<double>::infinity();

inline double mul_bound(double a, double b) noexcept {
  if (a == 0.0 || b == 0.0) return 0.0;  // 0 * inf is 0 for bounds
  return a * b;
}
inline Interval mul_interval(Interval a, Interval b) noexcept {
  const double p[4] = {mul_bound(a.lo, b.lo), mul_bound(a.lo, b.hi), mul_bound(a.hi, b.lo),
                       mul_bound(a.hi, b.hi)};
  Interval r{p[0], p[0]};
  for (double v : p) {
    if (v < r.lo) r.lo = v;
    if (v > r.hi) r.hi = v;
  }
  return r;
}
inline double floor_div_bound(double a, double c) noexcept {
  if (a == inf || a == -inf) return a / c;
  return std::floor(a / c);
}

inline Interval bounds_of(const Expr& e, const Ranges* ranges);

inline Interval atom_bounds(const AtomNode& a, const Ranges* ranges) {
  if (a.kind == AtomKind::symbol) {
    Interval r{-inf, inf};
    if (a.assumptions.positive) r.lo = 1;
    if (a.assumptions.nonnegative) r.lo = 0;
    if (ranges != nullptr) {
      if (auto it = ranges->find(a.name); it != ranges->end()) {
        if (it->second.min_val && static_cast<double>(*it->second.min_val) > r.lo) {
          r.lo = static_cast<double>(*it->second.min_val);
        }
        if (it->second.max_val) r.hi = static_cast<double>(*it->second.max_val);
      }
    }
    return r;
  }
  const std::string& n = a.name;
  if ((n == "FloorDiv" || n == "CleanDiv") && a.args.size() == 2) {
    const auto c = a.args[1].as_integer();
    if (c && *c > 0) {
      const Interval x = bounds_of(a.args[0], ranges);
      const double d = static_cast<double>(*c);
      return {floor_div_bound(x.lo, d), floor_div_bound(x.hi, d)};
    }
  } else if ((n == "Mod" || n == "PythonMod") && a.args.size() == 2) {
    const Interval q = bounds_of(a.args[1], ranges);
    if (q.lo > 0) return {0, q.hi - 1};
  } else if ((n == "Max" || n == "Min") && !a.args.empty()) {
    Interval r = bounds_of(a.args[0], ranges);
    for (std::size_t i = 1; i < a.args.size(); ++i) {
      const Interval x = bounds_of(a.args[i], ranges);
      if (n == "Max") {
        r = {std::max(r.lo, x.lo), std::max(r.hi, x.hi)};
      } else {
        r = {std::min(r.lo, x.lo), std::min(r.hi, x.hi)};
      }
    }
    return r;
  } else if (n == "Piecewise" && !a.args.empty()) {
    // the hull of its branches' values (torch's value ranges give sym_ite's Piecewise them)
    Interval r{inf, -inf};
    for (const Expr& pair : a.args) {
      const AtomNode* p = function_atom(pair, "ExprCondPair");
      if (p == nullptr || p->args.size() != 2) return {-inf, inf};
      const Interval x = bounds_of(p->args[0], ranges);
      r = {std::min(r.lo, x.lo), std::max(r.hi, x.hi)};
    }
    return r;
  } else if (is_boolean_function(n)) {
    return {0, 1};
  }
  return {-inf, inf};
}

// The bounds of x**n for x in `b`, n >= 1: monotone for an odd power; an even one is
// non-negative, smallest at the value nearest 0. O(1).
inline Interval pow_interval(Interval b, std::uint32_t n) noexcept {
  const auto p = [n](double x) { return std::pow(x, static_cast<double>(n)); };
  if (n % 2 == 1) return {p(b.lo), p(b.hi)};
  if (b.lo >= 0) return {p(b.lo), p(b.hi)};
  if (b.hi <= 0) return {p(b.hi), p(b.lo)};
  return {0, std::max(p(b.lo), p(b.hi))};
}

// Doubles hold integers exactly below 2^53 only: a bound at or past it is weakened (to 2^52
// towards zero, or to infinity away from it), so that no rounding decides a comparison (with
// s0 <= 2^53 + 1, `s0 <= 2^53` stays undecided). O(1).
inline Interval exact_part(Interval i) noexcept {
  constexpr double big = 9007199254740992.0;   // 2^53
  constexpr double safe = 4503599627370496.0;  // 2^52
  if (i.lo <= -big) i.lo = -inf;
  if (i.lo >= big) i.lo = safe;
  if (i.hi >= big) i.hi = inf;
  if (i.hi <= -big) i.hi = -safe;
  return i;
}

inline Interval bounds_of(const Expr& e, const Ranges* ranges) {
  Interval sum{0, 0};
  for (const auto& t : e.terms()) {
    const double c = static_cast<double>(t.coeff.num()) / static_cast<double>(t.coeff.den());
    Interval term = t.coeff.is_integer() ? exact_part({c, c}) : Interval{c, c};
    for (const auto& f : t.factors) {
      term = exact_part(
          mul_interval(term, exact_part(pow_interval(atom_bounds(*f.atom, ranges), f.exp))));
    }
    sum.lo = (sum.lo == -inf || term.lo == -inf) ? -inf : sum.lo + term.lo;
    sum.hi = (sum.hi == inf || term.hi == inf) ? inf : sum.hi + term.hi;
    sum = exact_part(sum);
  }
  return sum;
}

// bounds_of(e) tightened by the axioms of `ranges`: for an axiom a >= 0, e = a + (e - a) is at
// least the lower bound of e - a, and -e at least that of -e - a. An axiom whose difference
// overflows is skipped. O(size * axioms).
inline Interval axiom_bounds(const Expr& e, const Ranges* ranges) {
  Interval i = bounds_of(e, ranges);
  if (ranges == nullptr || ranges->axioms.empty() || e.constant()) return i;
  for (const Expr& a : ranges->axioms) {
    try {
      i.lo = std::max(i.lo, bounds_of(e - a, ranges).lo);
      i.hi = std::min(i.hi, -bounds_of(-e - a, ranges).lo);
    } catch (const value_error&) {
      // an axiom whose difference with e leaves int64 tells nothing about e
    }
  }
  return i;
}
inline Expr rebuild(const Expr& e, const Ranges* r,
                    const std::map<std::string, Expr, std::less<>>* values);
// The bounds of e under the ranges and their axioms, e's unbacked symbols that an equality
// solved replaced first (3*u0 - 3*s77 is 0 after Eq(u0, s77), which the axioms, used one at a
// time, do not see past a coefficient).
inline Interval bounds_with_axioms(const Expr& e, const Ranges* ranges) {
  if (ranges != nullptr && !ranges->replacements.empty() && !e.constant()) {
    try {
      return axiom_bounds(rebuild(e, nullptr, &ranges->replacements), ranges);
    } catch (const value_error&) {
      // a replaced form outside int64: the bounds of e as it is
    }
  }
  return axiom_bounds(e, ranges);
}

inline bool known_nonnegative(const Expr& e, const Ranges* r) {
  return bounds_with_axioms(e, r).lo >= 0;
}
inline bool known_positive(const Expr& e, const Ranges* r) {
  return bounds_with_axioms(e, r).lo > 0;
}

// The integer content of an expression's terms (gcd of its integer coefficients), or 0 when a
// coefficient is a fraction or a factor is not integer-valued.
inline std::int64_t integer_content(const Expr& e) noexcept {
  std::int64_t g = 0;
  for (const auto& t : e.terms()) {
    if (!integer_valued(t)) return 0;
    g = gcd64(g, t.coeff.num());
  }
  return g;
}

// The factors every term of `e` contains (with the smallest power).
inline std::vector<Expr::Factor> common_factors(const Expr& e) {
  if (e.terms().empty()) return {};
  std::vector<Expr::Factor> common = e.terms()[0].factors;
  for (std::size_t i = 1; i < e.terms().size() && !common.empty(); ++i) {
    std::vector<Expr::Factor> next;
    for (const auto& f : common) {
      for (const auto& g : e.terms()[i].factors) {
        if (g.atom == f.atom || compare_atoms(*g.atom, *f.atom) == 0) {
          next.push_back(Expr::Factor{f.atom, std::min(f.exp, g.exp)});
          break;
        }
      }
    }
    common = std::move(next);
  }
  return common;
}

// `e` divided by `k * factors` (each of which divides every term of e).
inline Expr divide_exactly(const Expr& e, std::int64_t k, const std::vector<Expr::Factor>& fs) {
  std::vector<Expr::Term> out;
  for (const auto& t : e.terms()) {
    Expr::Term nt;
    nt.coeff = t.coeff / Rational(k);
    for (const auto& f : t.factors) {
      std::uint32_t exp = f.exp;
      for (const auto& g : fs) {
        if (g.atom == f.atom || compare_atoms(*g.atom, *f.atom) == 0) exp -= g.exp;
      }
      if (exp > 0) nt.factors.push_back(Expr::Factor{f.atom, exp});
    }
    out.push_back(std::move(nt));
  }
  return normalize(std::move(out));
}

// Whether q (one term, integer coefficient, integer-valued) divides every term of p exactly.
inline bool divides(const Expr& q, const Expr& p) {
  if (q.terms().size() != 1 || !integer_valued(q) || !integer_valued(p)) return false;
  const Expr::Term& qt = q.terms()[0];
  if (qt.coeff.num() == 0) return false;
  for (const auto& t : p.terms()) {
    // (a % -1 is 0; INT64_MIN % -1 is undefined behaviour in C++.)
    if (qt.coeff.num() != -1 && t.coeff.num() % qt.coeff.num() != 0) return false;
    for (const auto& f : qt.factors) {
      bool found = false;
      for (const auto& g : t.factors) {
        if ((g.atom == f.atom || compare_atoms(*g.atom, *f.atom) == 0) && g.exp >= f.exp) {
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
  }
  return true;
}

inline Expr mod_like(const char* name, const Expr& p, const Expr& q, const Ranges* ranges) {
  if (q.terms().empty()) division_by_zero();
  if (p.terms().empty() || p == q || p == -q) return Expr();
  if (q == Expr(1) && integer_valued(p)) return Expr();  // Mod(u0/2, 1) is not 0
  const auto pc = p.as_integer();
  const auto qc = q.as_integer();
  if (pc && qc) return Expr(py_mod(*pc, *qc));
  if (qc && *qc == 2 && integer_valued(p)) {
    // Parity: the terms with an even coefficient are even.
    std::int64_t odd_constant = -1;
    bool rest_even = true;
    for (const auto& t : p.terms()) {
      if (t.factors.empty()) {
        odd_constant = py_mod(t.coeff.num(), 2);
      } else if (t.coeff.num() % 2 != 0) {
        rest_even = false;
      }
    }
    if (rest_even) return Expr(odd_constant < 0 ? 0 : odd_constant);
  }
  if (divides(q, p)) return Expr();
  if (known_nonnegative(p, ranges) && known_positive(q - p, ranges)) return p;
  return make_function(name, {p, q});
}

inline Expr relation(const char* name, Expr a, Expr b, const Ranges* ranges) {
  const std::string_view n = name;
  if (a.is_boolean() || b.is_boolean()) {
    // Eq/Ne of SymBools compare them as truth values (sympy: Eq(True, False) is False).
    if (n != "Equality" && n != "Unequality") {
      throw value_error("cannot order the SymBool '" + str(a.is_boolean() ? a : b) + "'");
    }
    const auto x = a.as_boolean();
    const auto y = b.as_boolean();
    if (a == b || (x && y)) return Expr::boolean((a == b || *x == *y) == (n == "Equality"));
    if (!a.is_boolean() || !b.is_boolean()) {
      throw value_error("cannot compare the SymBool '" + str(a.is_boolean() ? a : b) +
                        "' with the integer '" + str(a.is_boolean() ? b : a) + "'");
    }
    if (compare(b, a) < 0) std::swap(a, b);
    return make_function(name, {std::move(a), std::move(b)});
  }
  const Expr d = a - b;
  if (const auto c = d.constant()) {
    const int s = c->sign();
    if (n == "Equality") return Expr::boolean(s == 0);
    if (n == "Unequality") return Expr::boolean(s != 0);
    if (n == "StrictLessThan") return Expr::boolean(s < 0);
    return Expr::boolean(s <= 0);  // LessThan
  }
  const Interval i = bounds_with_axioms(d, ranges);
  if (n == "StrictLessThan") {
    if (i.hi < 0) return Expr::boolean(true);
    if (i.lo >= 0) return Expr::boolean(false);
  } else if (n == "LessThan") {
    if (i.hi <= 0) return Expr::boolean(true);
    if (i.lo > 0) return Expr::boolean(false);
  } else if (i.lo > 0 || i.hi < 0) {
    return Expr::boolean(n == "Unequality");
  } else if (i.lo == 0 && i.hi == 0) {
    return Expr::boolean(n == "Equality");  // e.g. under the axiom Eq(a, b)
  }
  if ((n == "Equality" || n == "Unequality") && compare(b, a) < 0) std::swap(a, b);
  return make_function(name, {std::move(a), std::move(b)});
}

inline Expr min_max(bool is_max, std::vector<Expr> args, const Ranges* ranges) {
  const char* name = is_max ? "Max" : "Min";
  if (args.empty()) throw value_error(std::string(name) + "() needs at least one argument");
  std::vector<Expr> flat;
  std::optional<Rational> folded;
  for (auto& a : args) {
    if (const AtomNode* at = function_atom(a, name)) {
      for (const auto& x : at->args) flat.push_back(x);
    } else {
      flat.push_back(std::move(a));
    }
  }
  std::vector<Expr> rest;
  for (auto& a : flat) {
    if (const auto c = a.constant()) {
      if (!folded || (is_max ? *folded < *c : *c < *folded)) folded = *c;
    } else {
      rest.push_back(std::move(a));
    }
  }
  if (folded) rest.push_back(Expr(*folded));
  std::sort(rest.begin(), rest.end());
  rest.erase(std::unique(rest.begin(), rest.end()), rest.end());
  // Drop an argument another one dominates (for Max: x with y - x >= 0).
  std::vector<bool> dropped(rest.size(), false);
  for (std::size_t i = 0; i < rest.size(); ++i) {
    for (std::size_t j = 0; j < rest.size() && !dropped[i]; ++j) {
      if (i == j || dropped[j]) continue;
      const Expr diff = is_max ? rest[j] - rest[i] : rest[i] - rest[j];
      if (known_nonnegative(diff, ranges)) dropped[i] = true;
    }
  }
  std::vector<Expr> kept;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (!dropped[i]) kept.push_back(std::move(rest[i]));
  }
  if (kept.size() == 1) return kept[0];
  return make_function(name, std::move(kept));
}

inline Expr logical(bool is_and, std::vector<Expr> args) {
  const char* name = is_and ? "And" : "Or";
  std::vector<Expr> flat;
  for (auto& a : args) {
    if (!a.is_boolean()) {
      throw value_error(std::string(name) + "() of '" + str(a) + "', which is not a SymBool");
    }
    if (const AtomNode* at = function_atom(a, name)) {
      for (const auto& x : at->args) flat.push_back(x);
      continue;
    }
    if (const auto b = a.as_boolean()) {
      if (*b != is_and) return Expr::boolean(*b);  // And(false, ...) / Or(true, ...)
      continue;
    }
    flat.push_back(std::move(a));
  }
  std::sort(flat.begin(), flat.end());
  flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
  if (flat.empty()) return Expr::boolean(is_and);
  if (flat.size() == 1) return flat[0];
  return make_function(name, std::move(flat));
}

}  // namespace detail

inline Expr floordiv(const Expr& a, const Expr& b, const Ranges* ranges) {
  if (b.terms().empty()) detail::division_by_zero();
  if (a.terms().empty()) return Expr();
  // x // 1 is x only for an integer x (torch's FloorDiv keeps `FloorDiv(u0/2, 1)`).
  if (b == Expr(1) && detail::integer_valued(a)) return a;
  if (b == Expr(-1) && detail::integer_valued(a)) return -a;
  if (a == b) return Expr(1);
  const auto ac = a.constant();
  const auto bc = b.constant();
  if (ac && bc) return Expr((*ac / *bc).floor());
  if (const detail::AtomNode* inner = detail::function_atom(a, "FloorDiv")) {
    return floordiv(inner->args[0], inner->args[1] * b, ranges);
  }
  const auto c = b.as_integer();
  if (c && detail::integer_valued(a)) {
    // (x + y) // c == x // c + y / c for the terms y that c divides.
    Expr quotients;
    std::vector<Expr::Term> rest;
    for (const auto& t : a.terms()) {
      if (t.coeff.num() % *c == 0) {
        quotients = quotients + detail::normalize({Expr::Term{t.coeff / Rational(*c), t.factors}});
      } else {
        rest.push_back(t);
      }
    }
    if (!quotients.terms().empty()) {
      return floordiv(detail::normalize(std::move(rest)), b, ranges) + quotients;
    }
  }
  // Common integer and syntactic factors (torch's simple_floordiv_gcd), when b is one term.
  if (b.terms().size() == 1 && detail::integer_valued(a) && detail::integer_valued(b)) {
    const std::int64_t g = detail::gcd64(detail::integer_content(a), detail::integer_content(b));
    const std::vector<Expr::Factor> fa = detail::common_factors(a);
    std::vector<Expr::Factor> shared;
    for (const auto& f : b.terms()[0].factors) {
      for (const auto& h : fa) {
        if (h.atom == f.atom || detail::compare_atoms(*h.atom, *f.atom) == 0) {
          shared.push_back(Expr::Factor{f.atom, std::min(f.exp, h.exp)});
        }
      }
    }
    if (g > 1 || !shared.empty()) {
      const std::int64_t k = g > 1 ? g : 1;
      return floordiv(detail::divide_exactly(a, k, shared), detail::divide_exactly(b, k, shared),
                      ranges);
    }
  }
  return detail::make_function("FloorDiv", {a, b});
}

inline Expr ceildiv(const Expr& a, const Expr& b, const Ranges* ranges) {
  return -floordiv(-a, b, ranges);
}
inline Expr mod(const Expr& p, const Expr& q, const Ranges* ranges) {
  return detail::mod_like("Mod", p, q, ranges);
}
inline Expr python_mod(const Expr& p, const Expr& q, const Ranges* ranges) {
  return detail::mod_like("PythonMod", p, q, ranges);
}
inline Expr max(std::vector<Expr> args, const Ranges* ranges) {
  return detail::min_max(true, std::move(args), ranges);
}
inline Expr min(std::vector<Expr> args, const Ranges* ranges) {
  return detail::min_max(false, std::move(args), ranges);
}
inline Expr eq(const Expr& a, const Expr& b, const Ranges* r) {
  return detail::relation("Equality", a, b, r);
}
inline Expr ne(const Expr& a, const Expr& b, const Ranges* r) {
  return detail::relation("Unequality", a, b, r);
}
inline Expr lt(const Expr& a, const Expr& b, const Ranges* r) {
  return detail::relation("StrictLessThan", a, b, r);
}
inline Expr le(const Expr& a, const Expr& b, const Ranges* r) {
  return detail::relation("LessThan", a, b, r);
}
inline Expr gt(const Expr& a, const Expr& b, const Ranges* r) { return lt(b, a, r); }
inline Expr ge(const Expr& a, const Expr& b, const Ranges* r) { return le(b, a, r); }
inline Expr logical_and(std::vector<Expr> args) { return detail::logical(true, std::move(args)); }
inline Expr logical_or(std::vector<Expr> args) { return detail::logical(false, std::move(args)); }
inline Expr logical_not(const Expr& a) {
  if (!a.is_boolean()) throw value_error("Not() of '" + str(a) + "', which is not a SymBool");
  if (const auto b = a.as_boolean()) return Expr::boolean(!*b);
  if (const detail::AtomNode* inner = detail::function_atom(a, "Not")) return inner->args[0];
  // sympy negates a relation into its complement: Not(a <= b) is b < a, Not(Eq) is Ne
  if (const detail::AtomNode* f = a.as_atom();
      f != nullptr && f->kind == detail::AtomKind::function && f->args.size() == 2) {
    const Expr& x = f->args[0];
    const Expr& y = f->args[1];
    if (f->name == "LessThan") return lt(y, x);
    if (f->name == "StrictLessThan") return le(y, x);
    if (f->name == "Equality") return ne(x, y);
    if (f->name == "Unequality") return eq(x, y);
  }
  return detail::make_function("Not", {a});
}

namespace detail {

// The exact value of the finite double `d` (a sympy Float of precision 53 is one): m * 2**e with
// an integer mantissa, as a Rational when numerator and denominator fit in 64 bits, otherwise
// nullopt. O(1).
inline std::optional<Rational> exact_double(double d) {
  if (!std::isfinite(d)) return std::nullopt;
  if (d == 0) return Rational(0);
  int e = 0;
  const double m = std::frexp(d, &e);  // d = m * 2**e, 0.5 <= |m| < 1
  auto mant = static_cast<std::int64_t>(std::ldexp(m, 53));
  e -= 53;
  while (e < 0 && mant % 2 == 0) {
    mant /= 2;
    ++e;
  }
  if (e >= 0) {
    if (e > 62 || std::abs(mant) > (std::numeric_limits<std::int64_t>::max() >> e)) {
      return std::nullopt;
    }
    return Rational(mant * (std::int64_t{1} << e));
  }
  if (e < -62) return std::nullopt;
  return Rational::of(mant, std::int64_t{1} << -e);
}

// `r` rounded to a double and back, as torch computes a SymFloat (ToFloat, true division, a Float
// constant's product) in float64: one IEEE operation is its exact result rounded, which this
// reproduces (1/Float(0.1) is 10.0, not 9.99...). Throws value_error when the double is no
// 64-bit fraction. O(1).
inline Rational round_to_double(const Rational& r) {
  const double d = static_cast<double>(r.num()) / static_cast<double>(r.den());
  if (const auto x = exact_double(d)) return *x;
  throw value_error("the float value " + std::to_string(d) + " is no fraction of 64-bit integers");
}

// Applies function `name` to canonical `args`, simplifying as its constructor does.
inline Expr apply(const std::string& name, std::vector<Expr> args, const Ranges* r) {
  auto need = [&](std::size_t n) {
    if (args.size() != n) {
      throw value_error(name + "() takes " + std::to_string(n) + " arguments, not " +
                        std::to_string(args.size()));
    }
  };
  if (name == "FloorDiv" || name == "CleanDiv") {
    need(2);
    return floordiv(args[0], args[1], r);
  }
  if (name == "Mod") {
    need(2);
    return mod(args[0], args[1], r);
  }
  if (name == "PythonMod") {
    need(2);
    return python_mod(args[0], args[1], r);
  }
  if (name == "Max") return max(std::move(args), r);
  if (name == "Min") return min(std::move(args), r);
  if (name == "Equality") {
    need(2);
    return eq(args[0], args[1], r);
  }
  if (name == "Unequality") {
    need(2);
    return ne(args[0], args[1], r);
  }
  if (name == "StrictLessThan") {
    need(2);
    return lt(args[0], args[1], r);
  }
  if (name == "LessThan") {
    need(2);
    return le(args[0], args[1], r);
  }
  if (name == "And") return logical_and(std::move(args));
  if (name == "Or") return logical_or(std::move(args));
  if (name == "Not") {
    need(1);
    return logical_not(args[0]);
  }
  if (name == "true" || name == "false") return Expr::boolean(name == "true");
  if (name == "CeilToInt" || name == "FloorToInt" || name == "TruncToInt") {
    need(1);
    if (const auto exact = args[0].constant()) {
      // The argument is a float64 in torch (rounded once, as its last operation rounds it).
      const Rational c0 = exact->is_integer() ? *exact : round_to_double(*exact);
      const Rational* c = &c0;
      if (name == "CeilToInt") return Expr(c->ceil());
      if (name == "FloorToInt") return Expr(c->floor());
      return Expr(c->sign() < 0 ? c->ceil() : c->floor());
    }
    if (integer_valued(args[0])) return args[0];
  }
  if (name == "IntTrueDiv" || name == "FloatTrueDiv") {
    need(2);
    if (args[1].terms().empty()) division_by_zero();
    const auto a = args[0].constant();
    const auto b = args[1].constant();
    if (a && b) return Expr(round_to_double(*a / *b));  // a float64 division, as torch's eval
  }
  if (name == "ToFloat") {
    need(1);
    if (const auto c = args[0].constant()) return Expr(round_to_double(*c));
  }
  if (name == "TruncToFloat") {
    need(1);
    if (const auto c = args[0].constant()) {
      const Rational v = round_to_double(*c);
      return Expr(v.sign() < 0 ? v.ceil() : v.floor());
    }
  }
  if (name == "PowByNatural") {
    need(2);
    if (const auto n = args[1].as_integer(); n && *n >= 0 && *n <= 64) {
      return pow(args[0], static_cast<std::uint32_t>(*n));
    }
  }
  if (name == "Identity") {
    need(1);
    return args[0];
  }
  return make_function(name, std::move(args));
}

// `e` rebuilt bottom-up through the arithmetic: each factor's atom replaced by `base_of(atom)`
// (which rebuilds a function's arguments itself), then the terms multiplied and summed again. A
// lone atom is the result itself (it may be a SymBool, which takes no arithmetic). The one walk
// behind simplify/substitute (rebuild) and floordiv_normal_form.
template <class BaseOf>
Expr rebuild_with(const Expr& e, const BaseOf& base_of) {
  Expr sum;
  for (const auto& t : e.terms()) {
    Expr term(t.coeff);
    for (const auto& f : t.factors) {
      Expr base = base_of(f.atom);
      if (e.terms().size() == 1 && t.coeff == Rational(1) && t.factors.size() == 1 && f.exp == 1) {
        return base;
      }
      term = term * pow(base, f.exp);
    }
    sum = sum + term;
  }
  return sum;
}

inline Expr rebuild(const Expr& e, const Ranges* r,
                    const std::map<std::string, Expr, std::less<>>* values) {
  return rebuild_with(e, [&](const auto& atom) -> Expr {
    if (atom->kind == AtomKind::symbol) {
      if (values != nullptr) {
        if (auto it = values->find(atom->name); it != values->end()) return it->second;
      }
      return from_atom(atom);
    }
    std::vector<Expr> args;
    args.reserve(atom->args.size());
    for (const auto& a : atom->args) args.push_back(rebuild(a, r, values));
    return apply(atom->name, std::move(args), r);
  });
}

}  // namespace detail

inline Expr simplify(const Expr& e, const Ranges& ranges) {
  return detail::rebuild(e, &ranges, nullptr);
}

namespace detail {
// floordiv_normal_form's rewrite of one expression, bottom-up.
inline Expr floordiv_normal(const Expr& e) {
  return rebuild_with(e, [](const auto& atom) -> Expr {
    if (atom->kind != AtomKind::function) return from_atom(atom);
    std::vector<Expr> args;
    args.reserve(atom->args.size());
    for (const auto& a : atom->args) args.push_back(floordiv_normal(a));
    Expr base = apply(atom->name, args, nullptr);
    const auto m =
        args.size() == 2 && atom->name == "FloorDiv" ? args[1].as_integer() : std::nullopt;
    if (!m || *m <= 1 || !integer_valued(args[0])) return base;
    // (g*q + b) // m == (q + b//g) // (m/g) for g dividing m and every non-constant coefficient
    // of the numerator (floor(p/m) == floor(floor(p/g)/(m/g)))
    std::int64_t g = *m;
    Rational b(0);
    for (const auto& nt : args[0].terms()) {
      if (nt.factors.empty()) {
        b = nt.coeff;
      } else {
        g = nt.coeff.den() == 1 ? gcd64(g, nt.coeff.num()) : 1;
      }
      if (g == 1) break;
    }
    if (g <= 1 || b.den() != 1) return base;
    std::vector<Expr::Term> q;
    for (const auto& nt : args[0].terms()) {
      if (!nt.factors.empty()) q.push_back(Expr::Term{nt.coeff / Rational(g), nt.factors});
    }
    const Expr rest = normalize(std::move(q));
    if (!integer_valued(rest)) return base;
    return floordiv(rest + Expr((b / Rational(g)).floor()), Expr(*m / g), nullptr);
  });
}
}  // namespace detail

/// `e` with every `FloorDiv(g*q + b, m)` whose divisor m and non-constant coefficients share a
/// factor g > 1 written `FloorDiv(q + b//g, m/g)`: the two are equal for every integer q, but
/// torch's FloorDiv (and epgraph's, which follows it) keeps `(2*s0 + 1)//4` where the same size
/// computed another way is `s0//2`. For comparing values (validate --meta), not for writing
/// them: torch writes the unrewritten form. Throws value_error on overflow. O(size of e).
[[nodiscard]] inline Expr floordiv_normal_form(const Expr& e) { return detail::floordiv_normal(e); }
inline Interval bounds(const Expr& e, const Ranges* ranges) {
  return detail::bounds_with_axioms(e, ranges);
}

namespace detail {

// Adds `x >= 0` to the axioms unless it is constant or already there. O(axioms * size).
inline bool add_nonnegative(Ranges& ranges, Expr x) {
  if (x.constant() || !integer_valued(x)) return false;
  for (const Expr& a : ranges.axioms) {
    if (a == x) return false;
  }
  ranges.axioms.push_back(std::move(x));
  return true;
}

// Records `u -> solution` for `d == 0` when d has exactly one unbacked symbol u, alone (power 1)
// in one term of coefficient +-1 and in no other term or function argument, the solution is a
// polynomial (no FloorDiv, Max, ...: torch keeps u0 for `Eq(u0, s77//2)`), and u has no
// replacement yet. The solution has the earlier replacements applied (torch's `_find`).
// O(size of d * replacements).
inline bool add_replacement(Ranges& ranges, const Expr& d) {
  std::vector<std::string> unbacked;
  for (const std::string& s : d.free_symbols()) {
    if (is_unbacked_name(s)) unbacked.push_back(s);
  }
  if (unbacked.size() != 1 || ranges.replacements.count(unbacked[0]) != 0) return false;
  const std::string& u = unbacked[0];
  const Expr::Term* linear = nullptr;
  for (const Expr::Term& t : d.terms()) {
    if (t.factors.size() == 1 && t.factors[0].exp == 1 &&
        t.factors[0].atom->kind == AtomKind::symbol && t.factors[0].atom->name == u) {
      linear = &t;
    }
  }
  if (linear == nullptr || (linear->coeff != Rational(1) && linear->coeff != Rational(-1))) {
    return false;
  }
  const Expr symbol = Expr::symbol(u, linear->factors[0].atom->assumptions);
  const Expr rest = d - Expr(linear->coeff) * symbol;
  const std::vector<std::string> others = rest.free_symbols();
  if (std::find(others.begin(), others.end(), u) != others.end()) return false;  // u in a function
  // torch keeps u0 when the solution is not a polynomial (`Eq(u0, s77//2)` stays an assert)
  for (const Expr::Term& t : rest.terms()) {
    for (const Expr::Factor& f : t.factors) {
      if (f.atom->kind != AtomKind::symbol) return false;
    }
  }
  // c*u + rest == 0: u == -rest / c, and c is +-1
  Expr solution = linear->coeff == Rational(1) ? -rest : rest;
  if (!ranges.replacements.empty()) solution = rebuild(solution, nullptr, &ranges.replacements);
  ranges.replacements.emplace(u, std::move(solution));
  return true;
}

}  // namespace detail

inline bool add_axiom(Ranges& ranges, const Expr& condition) {
  const detail::AtomNode* f = condition.as_atom();
  if (f == nullptr || f->kind != detail::AtomKind::function) return false;
  const std::string& n = f->name;
  if (n == "And") {
    bool added = false;
    for (const Expr& c : f->args) added = add_axiom(ranges, c) || added;
    return added;
  }
  if (f->args.size() != 2) return false;
  const Expr& a = f->args[0];
  const Expr& b = f->args[1];
  if (a.is_boolean() || b.is_boolean()) return false;
  try {
    if (n == "LessThan") return detail::add_nonnegative(ranges, b - a);
    if (n == "StrictLessThan") return detail::add_nonnegative(ranges, b - a - Expr(1));
    if (n == "Equality") {
      const bool one = detail::add_nonnegative(ranges, b - a);
      const bool other = detail::add_nonnegative(ranges, a - b);
      const bool replaced = detail::add_replacement(ranges, a - b);
      return one || other || replaced;
    }
  } catch (const value_error&) {
    // a difference outside int64: nothing usable
  }
  return false;
}
inline Expr substitute(const Expr& e, const std::map<std::string, Expr, std::less<>>& values,
                       const Ranges* ranges) {
  return detail::rebuild(e, ranges, &values);
}

// --- evaluation ---------------------------------------------------------------------------------

namespace detail {

inline Rational eval_atom(const AtomNode& a, const Bindings& b);

inline Rational eval_expr(const Expr& e, const Bindings& b) {
  Rational sum;
  for (const auto& t : e.terms()) {
    Rational term = t.coeff;
    for (const auto& f : t.factors) {
      term = term * rational_pow(eval_atom(*f.atom, b), f.exp);
    }
    sum = sum + term;
  }
  return sum;
}

inline std::int64_t eval_integer(const Expr& e, const Bindings& b) {
  const Rational v = eval_expr(e, b);
  if (!v.is_integer()) {
    throw value_error("the value of '" + str(e) + "' is " + std::to_string(v.num()) + "/" +
                      std::to_string(v.den()) + ", not an integer");
  }
  return v.num();
}

inline Rational eval_atom(const AtomNode& a, const Bindings& b) {
  if (a.kind == AtomKind::symbol) {
    auto it = b.find(a.name);
    if (it == b.end()) throw value_error("the symbol '" + a.name + "' has no value");
    return Rational(it->second);
  }
  const std::string& n = a.name;
  const auto& x = a.args;
  if (n == "true") return Rational(1);
  if (n == "false") return Rational(0);
  if ((n == "FloorDiv" || n == "CleanDiv") && x.size() == 2) {
    return Rational((eval_expr(x[0], b) / eval_expr(x[1], b)).floor());
  }
  if ((n == "Mod" || n == "PythonMod") && x.size() == 2) {
    return Rational(py_mod(eval_integer(x[0], b), eval_integer(x[1], b)));
  }
  if ((n == "Max" || n == "Min") && !x.empty()) {
    Rational r = eval_expr(x[0], b);
    for (std::size_t i = 1; i < x.size(); ++i) {
      const Rational v = eval_expr(x[i], b);
      if (n == "Max" ? r < v : v < r) r = v;
    }
    return r;
  }
  // torch computes these in float64: each result (and a ToInt's argument) rounded to a double.
  if ((n == "IntTrueDiv" || n == "FloatTrueDiv") && x.size() == 2) {
    return round_to_double(eval_expr(x[0], b) / eval_expr(x[1], b));
  }
  if (n == "ToFloat" && x.size() == 1) return round_to_double(eval_expr(x[0], b));
  if ((n == "CeilToInt" || n == "FloorToInt" || n == "TruncToInt" || n == "TruncToFloat") &&
      x.size() == 1) {
    const Rational v = round_to_double(eval_expr(x[0], b));
    if (n == "CeilToInt") return Rational(v.ceil());
    if (n == "FloorToInt") return Rational(v.floor());
    return Rational(v.sign() < 0 ? v.ceil() : v.floor());
  }
  if (n == "ModularIndexing" && x.size() == 3) {
    const Rational q = eval_expr(x[0], b) / eval_expr(x[1], b);
    return Rational(py_mod(q.floor(), eval_integer(x[2], b)));
  }
  if (n == "PowByNatural" && x.size() == 2) {
    const std::int64_t e = eval_integer(x[1], b);
    if (e < 0) throw value_error("PowByNatural with the negative exponent " + std::to_string(e));
    return rational_pow(eval_expr(x[0], b), static_cast<std::uint64_t>(e));
  }
  if (n == "Where" && x.size() == 3) {
    return eval_expr(x[0], b).sign() != 0 ? eval_expr(x[1], b) : eval_expr(x[2], b);
  }
  if (n == "Identity" && x.size() == 1) return eval_expr(x[0], b);
  if (n == "Equality" || n == "Unequality" || n == "StrictLessThan" || n == "LessThan") {
    const int s = (eval_expr(x[0], b) - eval_expr(x[1], b)).sign();
    const bool v = n == "Equality"         ? s == 0
                   : n == "Unequality"     ? s != 0
                   : n == "StrictLessThan" ? s < 0
                                           : s <= 0;
    return Rational(v ? 1 : 0);
  }
  if (n == "And" || n == "Or") {
    for (const auto& y : x) {
      const bool v = eval_expr(y, b).sign() != 0;
      if (v != (n == "And")) return Rational(v ? 1 : 0);
    }
    return Rational(n == "And" ? 1 : 0);
  }
  if (n == "Not" && x.size() == 1) return Rational(eval_expr(x[0], b).sign() == 0 ? 1 : 0);
  std::string text = n + "(";
  for (std::size_t i = 0; i < x.size(); ++i) text += (i ? ", " : "") + str(x[i]);
  throw value_error("cannot evaluate " + text + ")");
}

}  // namespace detail

inline std::int64_t evaluate(const Expr& e, const Bindings& bindings) {
  return detail::eval_integer(e, bindings);
}
inline Rational evaluate_rational(const Expr& e, const Bindings& bindings) {
  return detail::eval_expr(e, bindings);
}

// --- printing -----------------------------------------------------------------------------------

namespace detail {

// The order sympy prints the arguments of Max and Min in (sympy's `ordered`): numbers first.
inline std::vector<const Expr*> print_order(const AtomNode& a) {
  std::vector<const Expr*> order;
  for (const auto& x : a.args) order.push_back(&x);
  if (a.name == "Max" || a.name == "Min") {
    std::stable_partition(order.begin(), order.end(),
                          [](const Expr* x) { return x->is_constant(); });
  }
  return order;
}

inline void srepr_to(const Expr& e, std::string& out);

// A fraction that is exactly a double as sympy's srepr of that Float (torch's constant of a
// SymFloat expression: `Float('1.5', precision=53)`, `Float('0.69999999999999996', ...)`),
// Python's 17-digit repr with its exponent form (`1.0000000000000001e-5`); nullopt otherwise.
inline std::optional<std::string> float_text(const Rational& r) {
  const double d = static_cast<double>(r.num()) / static_cast<double>(r.den());
  const auto exact = exact_double(d);
  if (!exact || !(*exact == r)) return std::nullopt;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  std::string text = buf;
  const std::size_t e = text.find('e');
  if (e != std::string::npos) {
    // printf writes e-05, sympy e-5: drop the exponent's leading zeros
    std::size_t digits = e + 2;
    while (digits + 1 < text.size() && text[digits] == '0') text.erase(digits, 1);
  }
  return text;
}

inline void srepr_number(const Rational& r, std::string& out) {
  if (r.is_integer()) {
    out += "Integer(" + std::to_string(r.num()) + ")";
  } else if (const auto f = float_text(r)) {
    // torch's expressions hold fractions only as Floats (a float scale, a true division's
    // value): written back as the Float they were read from
    out += "Float('" + *f + "', precision=53)";
  } else {
    out += "Rational(" + std::to_string(r.num()) + ", " + std::to_string(r.den()) + ")";
  }
}

inline void srepr_atom(const AtomNode& a, std::string& out) {
  if (a.kind == AtomKind::symbol) {
    // Python's repr quotes with " a name holding ' (sympy's srepr of Symbol("a'b")).
    const char q = a.name.find('\'') == std::string::npos ? '\'' : '"';
    out += "Symbol(" + std::string(1, q) + a.name + std::string(1, q);
    if (a.assumptions.positive) out += ", positive=True";
    if (a.assumptions.nonnegative) out += ", nonnegative=True";
    if (a.assumptions.integer) out += ", integer=True";
    out += ")";
    return;
  }
  if (a.name == "true" || a.name == "false") {
    out += a.name;
    return;
  }
  std::string name = a.name;
  bool swap = false;
  // sympy prints `2 < s0` as `s0 > 2`: a number on the left turns the relation around.
  if ((name == "StrictLessThan" || name == "LessThan") && a.args[0].is_constant() &&
      !a.args[1].is_constant()) {
    name = name == "StrictLessThan" ? "StrictGreaterThan" : "GreaterThan";
    swap = true;
  }
  out += name + "(";
  const auto order = print_order(a);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i) out += ", ";
    srepr_to(*order[swap ? order.size() - 1 - i : i], out);
  }
  out += ")";
}

inline void srepr_term(const Expr::Term& t, std::string& out) {
  if (t.factors.empty()) {
    srepr_number(t.coeff, out);
    return;
  }
  const bool unit = t.coeff == Rational(1);
  const std::size_t parts = t.factors.size() + (unit ? 0 : 1);
  if (parts > 1) out += "Mul(";
  if (!unit) {
    srepr_number(t.coeff, out);
    out += ", ";
  }
  for (std::size_t i = 0; i < t.factors.size(); ++i) {
    if (i) out += ", ";
    if (t.factors[i].exp != 1) out += "Pow(";
    srepr_atom(*t.factors[i].atom, out);
    if (t.factors[i].exp != 1) out += ", Integer(" + std::to_string(t.factors[i].exp) + "))";
  }
  if (parts > 1) out += ")";
}

inline void srepr_to(const Expr& e, std::string& out) {
  const auto& ts = e.terms();
  if (ts.empty()) {
    out += "Integer(0)";
    return;
  }
  if (ts.size() == 1) {
    srepr_term(ts[0], out);
    return;
  }
  out += "Add(";
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (i) out += ", ";
    srepr_term(ts[i], out);
  }
  out += ")";
}

// sympy's str: precedence of what is printed, for parentheses (sympy's PRECEDENCE table:
// Add 40, Mul 50, Pow 60, Atom 1000; relations 35 and And/Or lower).
inline void str_to(const Expr& e, std::string& out, int context);

inline bool str_is_atomic(const Expr& e) {
  if (e.terms().size() != 1) return e.terms().empty();
  const auto& t = e.terms()[0];
  if (t.factors.empty()) return t.coeff.is_integer() && t.coeff.sign() >= 0;
  // sympy parenthesizes below its Atom precedence: everything but a symbol and a non-negative
  // integer (a function call too: `((Max(1, s0))//2)`).
  return t.coeff == Rational(1) && t.factors.size() == 1 && t.factors[0].exp == 1 &&
         t.factors[0].atom->kind == AtomKind::symbol;
}

inline bool atom_needs_parens_in_product(const AtomNode& a) {
  // Relations print with operators of low precedence, and torch gives FloorDiv, Mod and
  // PythonMod precedence 35, below Add: `(((s0 - 1)//2)) + 1`, `2*(Mod(s0, 3))`.
  return a.kind == AtomKind::function &&
         (a.name == "StrictLessThan" || a.name == "LessThan" || a.name == "And" || a.name == "Or" ||
          a.name == "Not" || a.name == "FloorDiv" || a.name == "Mod" || a.name == "PythonMod");
}

inline void str_atom(const AtomNode& a, std::string& out) {
  if (a.kind == AtomKind::symbol) {
    out += a.name;
    return;
  }
  const std::string& n = a.name;
  if (n == "true" || n == "false") {
    out += n == "true" ? "True" : "False";
    return;
  }
  if (n == "FloorDiv" && a.args.size() == 2) {
    out += "(";
    for (std::size_t i = 0; i < 2; ++i) {
      if (i) out += "//";
      const bool paren = !str_is_atomic(a.args[i]);
      if (paren) out += "(";
      str_to(a.args[i], out, 0);
      if (paren) out += ")";
    }
    out += ")";
    return;
  }
  if ((n == "StrictLessThan" || n == "LessThan") && a.args.size() == 2) {
    const bool swap = a.args[0].is_constant() && !a.args[1].is_constant();
    str_to(a.args[swap ? 1 : 0], out, 0);
    out +=
        swap ? (n == "StrictLessThan" ? " > " : " >= ") : (n == "StrictLessThan" ? " < " : " <= ");
    str_to(a.args[swap ? 0 : 1], out, 0);
    return;
  }
  if ((n == "And" || n == "Or") && !a.args.empty()) {
    for (std::size_t i = 0; i < a.args.size(); ++i) {
      if (i) out += n == "And" ? " & " : " | ";
      // Operators parenthesize (`(s0 > 2) & (s1 < 4)`), Eq and Ne print as calls.
      const AtomNode* arg = a.args[i].as_atom();
      const bool paren = arg == nullptr || atom_needs_parens_in_product(*arg);
      if (paren) out += "(";
      str_to(a.args[i], out, 0);
      if (paren) out += ")";
    }
    return;
  }
  if (n == "Not" && a.args.size() == 1) {
    out += "~(";
    str_to(a.args[0], out, 0);
    out += ")";
    return;
  }
  out += n == "Equality" ? "Eq" : n == "Unequality" ? "Ne" : n;
  out += "(";
  const auto order = print_order(a);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i) out += ", ";
    str_to(*order[i], out, 0);
  }
  out += ")";
}

// One term with a non-negative coefficient magnitude `c` (the sign is printed by the caller).
// `whole`: the term is the whole expression (and positive), so a lone atom needs no parentheses.
inline void str_term_magnitude(const Expr::Term& t, const Rational& c, bool whole,
                               std::string& out) {
  if (t.factors.empty()) {
    out += std::to_string(c.num());
    if (!c.is_integer()) out += "/" + std::to_string(c.den());
    return;
  }
  bool first = true;
  if (c.num() != 1) {
    out += std::to_string(c.num());
    first = false;
  }
  const bool alone = whole && c == Rational(1) && t.factors.size() == 1 && t.factors[0].exp == 1;
  for (const auto& f : t.factors) {
    if (!first) out += "*";
    first = false;
    const bool paren = !alone && atom_needs_parens_in_product(*f.atom);
    if (paren) out += "(";
    str_atom(*f.atom, out);
    if (paren) out += ")";
    if (f.exp != 1) out += "**" + std::to_string(f.exp);
  }
  if (!c.is_integer()) out += "/" + std::to_string(c.den());
}

inline void str_to(const Expr& e, std::string& out, int context) {
  const auto& ts = e.terms();
  if (ts.empty()) {
    out += "0";
    return;
  }
  const bool paren = context > 0 && ts.size() > 1;
  if (paren) out += "(";
  for (std::size_t i = 0; i < ts.size(); ++i) {
    const Rational c = ts[i].coeff;
    if (c.num() == std::numeric_limits<std::int64_t>::min()) {
      // Its magnitude is no int64: printed from the numerator's digits.
      const std::string digits = std::to_string(c.num()).substr(1);
      out += i == 0 ? "-" : " - ";
      out += digits;
      for (const auto& f : ts[i].factors) {
        out += "*";
        const bool wrap = atom_needs_parens_in_product(*f.atom);
        if (wrap) out += "(";
        str_atom(*f.atom, out);
        if (wrap) out += ")";
        if (f.exp != 1) out += "**" + std::to_string(f.exp);
      }
      if (!c.is_integer()) out += "/" + std::to_string(c.den());
      continue;
    }
    if (i == 0) {
      if (c.sign() < 0) out += "-";
    } else {
      out += c.sign() < 0 ? " - " : " + ";
    }
    str_term_magnitude(ts[i], c.sign() < 0 ? -c : c, ts.size() == 1 && c.sign() > 0, out);
  }
  if (paren) out += ")";
}

}  // namespace detail

inline std::string srepr(const Expr& e) {
  std::string out;
  detail::srepr_to(e, out);
  return out;
}
inline std::string str(const Expr& e) {
  std::string out;
  detail::str_to(e, out, 0);
  return out;
}

// --- parsing ------------------------------------------------------------------------------------

namespace detail {

class ExprParser {
 public:
  explicit ExprParser(std::string_view text) : text_(text) {}

  Expr parse_all() {
    try {
      Expr e = expr();
      skip_space();
      if (pos_ != text_.size()) fail("unexpected '" + token_at(pos_) + "'");
      return e;
    } catch (const value_error& e) {
      // What the arithmetic refuses (overflow, division by zero, a SymBool added) names the text.
      const std::string what = e.what();
      if (::epgraph::detail::starts_with(what, "cannot read the symbolic expression '")) throw;
      fail(what);
    }
  }

 private:
  // A parsed call argument: a keyword (name=value) or a positional value.
  struct Arg {
    std::string keyword;
    Expr value;
    std::optional<std::string> text;  // a quoted string
    std::optional<bool> flag;         // True/False given as a keyword value
  };

  // The message quotes the text (its first 200 characters, then "...").
  [[noreturn]] void fail(const std::string& what) const {
    const std::string shown =
        text_.size() <= 200 ? std::string(text_) : std::string(text_.substr(0, 200)) + "...";
    throw value_error("cannot read the symbolic expression '" + shown + "': " + what +
                      " at offset " + std::to_string(pos_));
  }
  // The token at `at`: a run of letters, digits and '_', or one character.
  [[nodiscard]] std::string token_at(std::size_t at) const {
    auto word = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    };
    std::size_t end = at;
    while (end < text_.size() && word(text_[end])) ++end;
    return std::string(text_.substr(at, end == at ? 1 : end - at));
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  void expect(std::string_view token) {
    if (!accept(token)) {
      fail("expected '" + std::string(token) + "'" +
           (pos_ < text_.size() ? ", found '" + std::string(1, text_[pos_]) + "'"
                                : ", found the end"));
    }
  }
  [[nodiscard]] char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  [[nodiscard]] char peek_at(std::size_t k) const {
    return pos_ + k < text_.size() ? text_[pos_ + k] : '\0';
  }
  void enter() {
    if (++depth_ > 200) fail("nesting deeper than 200");
  }

  // expr := bitor [cmp bitor]
  Expr expr() {
    enter();
    Expr a = bit_or();
    skip_space();
    const char c = peek();
    const char d = peek_at(1);
    Expr r = a;
    if (c == '<' && d == '=') {
      pos_ += 2;
      r = le(a, bit_or());
    } else if (c == '>' && d == '=') {
      pos_ += 2;
      r = ge(a, bit_or());
    } else if (c == '=' && d == '=') {
      pos_ += 2;
      r = eq(a, bit_or());
    } else if (c == '!' && d == '=') {
      pos_ += 2;
      r = ne(a, bit_or());
    } else if (c == '<') {
      ++pos_;
      r = lt(a, bit_or());
    } else if (c == '>') {
      ++pos_;
      r = gt(a, bit_or());
    }
    --depth_;
    return r;
  }
  Expr bit_or() {
    Expr a = bit_and();
    while (peek() == '|') {
      ++pos_;
      a = logical_or({a, bit_and()});
    }
    return a;
  }
  Expr bit_and() {
    Expr a = arith();
    while (peek() == '&') {
      ++pos_;
      a = logical_and({a, arith()});
    }
    return a;
  }
  Expr arith() {
    Expr a = term();
    while (true) {
      const char c = peek();
      if (c == '+') {
        ++pos_;
        a = a + term();
      } else if (c == '-') {
        ++pos_;
        a = a - term();
      } else {
        return a;
      }
    }
  }
  Expr term() {
    Expr a = unary();
    while (true) {
      const char c = peek();
      if (c == '*' && peek_at(1) != '*') {
        ++pos_;
        a = a * unary();
      } else if (c == '/' && peek_at(1) == '/') {
        pos_ += 2;
        a = floordiv(a, unary());
      } else if (c == '/') {
        ++pos_;
        const std::size_t at = pos_;
        const Expr d = unary();
        const auto k = d.constant();
        if (!k) {
          pos_ = at;
          fail("a division by the symbolic expression '" + str(d) + "'");
        }
        if (k->sign() == 0) fail("a division by zero");
        a = a * Expr(Rational(1) / *k);
      } else if (c == '%') {
        ++pos_;
        a = mod(a, unary());
      } else {
        return a;
      }
    }
  }
  Expr unary() {
    // A run of unary operators (`----s0`, `~~~b`, `1**1**1...`) recurses here without passing
    // through expr(): counted on its own so that it cannot exhaust the stack.
    if (++unary_depth_ > 200) fail("more than 200 unary operators or powers in a row");
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{unary_depth_};
    const char c = peek();
    if (c == '-') {
      ++pos_;
      // -9223372036854775808 (sympy's str and srepr of the smallest int64): its magnitude is
      // no int64, so the literal is read with its sign unless a power binds tighter.
      constexpr std::string_view min_digits = "9223372036854775808";
      skip_space();
      if (text_.substr(pos_, min_digits.size()) == min_digits) {
        const std::size_t after = pos_ + min_digits.size();
        const char next = after < text_.size() ? text_[after] : '\0';
        const bool digit = next >= '0' && next <= '9';
        const bool power = next == '*' && after + 1 < text_.size() && text_[after + 1] == '*';
        if (!digit && !power) {
          pos_ = after;
          return Expr(std::numeric_limits<std::int64_t>::min());
        }
      }
      return -unary();
    }
    if (c == '+') {
      ++pos_;
      return unary();
    }
    if (c == '~') {
      ++pos_;
      return logical_not(unary());
    }
    return power();
  }
  Expr power() {
    Expr base = primary();
    if (peek() == '*' && peek_at(1) == '*') {
      pos_ += 2;
      const std::size_t at = pos_;
      const Expr e = unary();
      return raise(base, e, at);
    }
    return base;
  }
  Expr raise(const Expr& base, const Expr& e, std::size_t at) {
    const auto n = e.as_integer();
    if (!n || *n < 0 || *n > static_cast<std::int64_t>(max_power)) {
      pos_ = at;
      fail("the power '" + str(e) + "' (only integer powers 0.." + std::to_string(max_power) +
           " are symbolic integers)");
    }
    return pow(base, static_cast<std::uint32_t>(*n));
  }

  std::int64_t integer_literal() {
    skip_space();
    const std::size_t start = pos_;
    bool neg = false;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) {
      neg = text_[pos_] == '-';
      ++pos_;
    }
    std::int64_t v = 0;
    const std::size_t digits = pos_;
    // Accumulated with the literal's sign, so that Integer(-9223372036854775808) reads.
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_] - '0';
      v = neg ? sub_checked(mul_checked(v, 10), digit) : add_checked(mul_checked(v, 10), digit);
      ++pos_;
    }
    if (pos_ == digits) {
      pos_ = start;
      fail("expected an integer");
    }
    if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E')) {
      fail("a Float (symbolic integers have integer constants)");
    }
    return v;
  }

  std::string identifier() {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() &&
           ((text_[pos_] >= 'a' && text_[pos_] <= 'z') ||
            (text_[pos_] >= 'A' && text_[pos_] <= 'Z') || text_[pos_] == '_' ||
            (pos_ > start && text_[pos_] >= '0' && text_[pos_] <= '9'))) {
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  std::string quoted() {
    const char q = text_[pos_++];
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != q) ++pos_;
    if (pos_ == text_.size()) fail("an unterminated string");
    std::string s(text_.substr(start, pos_ - start));
    ++pos_;
    return s;
  }

  std::vector<Arg> call_args() {
    std::vector<Arg> args;
    if (accept(")")) return args;
    while (true) {
      Arg a;
      const char c = peek();
      if (c == '\'' || c == '"') {
        a.text = quoted();
      } else {
        // name=value?
        const std::size_t at = pos_;
        const std::string id = identifier();
        if (!id.empty() && peek() == '=' && peek_at(1) != '=') {
          ++pos_;
          a.keyword = id;
          const std::size_t vat = pos_;
          const std::string v = identifier();
          if (v == "True" || v == "False") {
            a.flag = v == "True";
          } else {
            pos_ = vat;
            a.value = expr();
          }
        } else {
          pos_ = at;
          a.value = expr();
        }
      }
      args.push_back(std::move(a));
      if (accept(")")) return args;
      expect(",");
    }
  }

  std::vector<Expr> positional(const std::string& fn, const std::vector<Arg>& args) {
    std::vector<Expr> out;
    for (const auto& a : args) {
      if (!a.keyword.empty() || a.text) fail(fn + "() takes expressions only");
      out.push_back(a.value);
    }
    return out;
  }

  Expr primary() {
    const char c = peek();
    if (c == '(') {
      ++pos_;
      Expr e = expr();
      expect(")");
      return e;
    }
    if (c >= '0' && c <= '9') {
      // sympy's str of a Float: digits with a '.' or an exponent (1.5, 0.10000000000000001).
      std::size_t end = pos_;
      bool is_float = false;
      while (end < text_.size()) {
        const char d = text_[end];
        if (d == '.' || d == 'e' || d == 'E') {
          is_float = true;
        } else if ((d == '+' || d == '-') && (text_[end - 1] == 'e' || text_[end - 1] == 'E')) {
        } else if (d < '0' || d > '9') {
          break;
        }
        ++end;
      }
      if (!is_float) return Expr(integer_literal());
      const std::size_t at = pos_;
      pos_ = end;
      return float_constant(std::string(text_.substr(at, end - at)), at);
    }
    const std::size_t at = pos_;
    const std::string id = identifier();
    if (id.empty()) {
      if (pos_ >= text_.size()) fail("unexpected end");
      fail("unexpected '" + token_at(pos_) + "'");
    }
    if (id == "True" || id == "true") return Expr::boolean(true);
    if (id == "False" || id == "false") return Expr::boolean(false);
    if (peek() != '(') {
      if (id == "oo" || id == "int_oo" || id == "zoo" || id == "nan") {
        pos_ = at;
        fail("'" + id + "' (an unbounded value)");
      }
      return Expr::symbol(id);
    }
    ++pos_;  // '('
    const std::size_t args_at = pos_;
    std::vector<Arg> args = call_args();
    return call(id, args, at, args_at);
  }

  // A float64 constant, held as its exact value (a fraction with a power-of-2 denominator).
  Expr float_constant(const std::string& digits, std::size_t at) {
    char* end = nullptr;
    const double d = std::strtod(digits.c_str(), &end);
    const bool whole = !digits.empty() && end == digits.c_str() + digits.size();
    const auto r = whole ? exact_double(d) : std::nullopt;
    if (!r) {
      pos_ = at;
      fail("the Float '" + digits + "' (not a finite float64 that is a fraction of 64-bit " +
           "integers)");
    }
    return Expr(*r);
  }

  Expr call(const std::string& fn, const std::vector<Arg>& args, std::size_t at,
            std::size_t args_at) {
    if (fn == "Symbol") {
      if (args.empty() || !args[0].text) {
        pos_ = args_at;
        fail("Symbol() needs a quoted name");
      }
      Assumptions s;
      s.integer = false;
      for (std::size_t i = 1; i < args.size(); ++i) {
        if (args[i].keyword.empty() || !args[i].flag) fail("Symbol() takes name=True/False flags");
        const bool v = *args[i].flag;
        if (args[i].keyword == "integer") {
          s.integer = v;
        } else if (args[i].keyword == "positive") {
          s.positive = v;
        } else if (args[i].keyword == "nonnegative") {
          s.nonnegative = v;
        } else if (args[i].keyword == "real" || args[i].keyword == "finite") {
          // implied by integer; kept implicit
        } else {
          fail("the symbol assumption '" + args[i].keyword + "'");
        }
      }
      return Expr::symbol(*args[0].text, s);
    }
    if (fn == "Integer") {
      if (args.size() != 1 || !args[0].keyword.empty() || args[0].text) {
        fail("Integer() takes one integer");
      }
      const auto n = args[0].value.as_integer();
      if (!n) fail("Integer() takes one integer");
      return Expr(*n);
    }
    if (fn == "Rational") {
      const std::vector<Expr> v = positional(fn, args);
      if (v.size() != 2 || !v[0].as_integer() || !v[1].as_integer()) {
        fail("Rational() takes two integers");
      }
      if (*v[1].as_integer() == 0) fail("a division by zero");
      return Expr(Rational::of(*v[0].as_integer(), *v[1].as_integer()));
    }
    if (fn == "Float") {
      // sympy's srepr of a float64 constant: Float('1.5', precision=53).
      const bool precision_ok =
          args.size() == 1 || (args.size() == 2 && args[1].keyword == "precision" &&
                               args[1].value.as_integer() == std::int64_t{53});
      if (args.empty() || !args[0].text || !precision_ok) {
        pos_ = at;
        fail("Float() takes a quoted number and precision=53");
      }
      return float_constant(*args[0].text, at);
    }
    std::vector<Expr> v = positional(fn, args);
    if (fn == "Add") {
      Expr s;
      for (auto& x : v) s = s + x;
      return s;
    }
    if (fn == "Mul") {
      Expr p(1);
      for (auto& x : v) p = p * x;
      return p;
    }
    if (fn == "Pow") {
      if (v.size() != 2) fail("Pow() takes two arguments");
      return raise(v[0], v[1], args_at);
    }
    static const std::map<std::string_view, std::string_view> aliases = {
        {"Eq", "Equality"}, {"Ne", "Unequality"},        {"Lt", "StrictLessThan"},
        {"Le", "LessThan"}, {"Gt", "StrictGreaterThan"}, {"Ge", "GreaterThan"}};
    std::string name = fn;
    if (auto it = aliases.find(fn); it != aliases.end()) name = std::string(it->second);
    auto two = [&]() {
      if (v.size() != 2) fail(fn + "() takes 2 arguments, not " + std::to_string(v.size()));
    };
    if (name == "StrictGreaterThan") {
      two();
      return gt(v[0], v[1]);
    }
    if (name == "GreaterThan") {
      two();
      return ge(v[0], v[1]);
    }
    if (!is_known_function(name) || name == "true" || name == "false") {
      pos_ = at;
      fail("the unknown function '" + fn + "'");
    }
    try {
      return apply(name, std::move(v), nullptr);
    } catch (const value_error& e) {
      pos_ = at;
      fail(e.what());
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  int unary_depth_ = 0;
};

}  // namespace detail

inline Expr parse(std::string_view text) { return detail::ExprParser(text).parse_all(); }

}  // namespace epgraph::sym
