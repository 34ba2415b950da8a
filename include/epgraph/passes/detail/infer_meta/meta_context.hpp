// infer_meta's symbol context (MetaContext, public through epgraph/passes/infer_meta.hpp) and
// the quantized_decomposed schema texts infer_meta knows without a registry.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "../../../error.hpp"
#include "../../../ir/symbolic.hpp"
#include "../../../ir/value.hpp"

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
    "quantized_decomposed::quantize_per_channel(Tensor input, Tensor scales, Tensor "
    "zero_points, int axis, int quant_min, int quant_max, ScalarType dtype) -> Tensor",
    "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? "
    "zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? "
    "out_dtype=None) -> Tensor",
};
}  // namespace detail

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
  /// Records what the SymBool expression `condition` asserts among the axioms of ranges() (see
  /// sym::add_axiom): infer_meta calls it for each `_assert_scalar` whose condition is symbolic,
  /// as torch's ShapeEnv learns a `torch._check` (after `_assert_scalar(u0 <= s77)`, slicing
  /// `x[:u0]` of an `[s77]` tensor gives `[u0]`, not `[Min(s77, u0)]`). Returns whether
  /// anything was added. Throws std::bad_alloc. O(size * axioms).
  bool assume(const sym::Expr& condition) const { return sym::add_axiom(ranges_, condition); }
  /// Records that the unbacked symbol `symbol` is `value` (an expression of backed symbols, or a
  /// constant) in ranges().replacements, unless it has a replacement already: what a node's
  /// stored value shows when torch replaced the symbol it made (torch writes `s77 + 1` for the
  /// `item` of `torch._check(n - 1 == x.shape[0])`, and keeps a vacuous `Eq(item, item)` in the
  /// graph, so the stored value is all that is left of the equality). Returns whether it was
  /// added. Throws std::bad_alloc. O(log symbols).
  bool replace(const std::string& symbol, sym::Expr value) const {
    return ranges_.replacements.emplace(symbol, std::move(value)).second;
  }
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
      note_symbols(e);
      it = cache_.emplace(text, std::move(e)).first;
    }
    if (!form_fixed_) form_ = text.find("Symbol(") != std::string::npos ? Form::srepr : Form::str;
    if (hint) learn(it->second, *hint);
    return it->second;
  }
  /// Why a symbolic expression of `v` cannot be read ("sizes[0]: cannot read the symbolic
  /// expression 's0 +* 2': ... at offset 4", naming the field: sizes, strides, storage_offset,
  /// an element `[i]` of a list, the value of a SymInt/SymBool), or "" when sym::parse reads
  /// every one; each text is parsed once and cached. Throws std::bad_alloc. O(size of v) after the
  /// first parse.
  [[nodiscard]] std::string unreadable(const NodeValue& v) const {
    return find_in_sym_exprs(v, [&](const SymExpr& e, const std::string& field) -> std::string {
      if (cache_.count(e.expr) != 0) return {};
      try {
        sym::Expr parsed = sym::parse(e.expr);
        note_symbols(parsed);
        cache_.emplace(e.expr, std::move(parsed));
      } catch (const value_error& error) {
        return field + ": " + error.what();
      }
      return {};
    });
  }
  /// The unbacked symbol of the data-dependent value `key` (e.g. the number of elements nonzero
  /// finds in a node's value): the one given to `key` before, else `reuse` when set (the symbol
  /// a node's stored value already has) and no other key (nor, for a null key, any other
  /// value) took it, else a new one, `<prefix><k>` with the least k no
  /// expression read so far uses (torch's ShapeEnv names them u0, u1, ... for SymInts and zuf0,
  /// ... for SymFloats; so a program whose values were unset gets torch's names back). A new
  /// symbol without bounds in ranges() gets `range` there and is listed by new_symbols(). A null
  /// `key` is never remembered. Mirrors ShapeEnv.create_unbacked_symint / create_unbacked_symfloat
  /// and FakeTensor's nonzero_memo. Throws std::bad_alloc. O(log symbols) besides the search for a
  /// free name.
  [[nodiscard]] sym::Expr unbacked_symbol(const void* key, std::string_view prefix, bool integer,
                                          const std::optional<std::string>& reuse,
                                          sym::SymbolRange range) const {
    if (key != nullptr) {
      const auto it = unbacked_of_.find(key);
      if (it != unbacked_of_.end()) return symbol_named(it->second, integer);
    }
    std::string name;
    // a stored symbol another value already took is not reused: two nonzero counts of
    // different inputs (or two items) are different symbols
    const auto owner = reuse ? unbacked_owner_.find(*reuse) : unbacked_owner_.end();
    if (reuse && (owner == unbacked_owner_.end() || (key != nullptr && owner->second == key))) {
      name = *reuse;
    } else {
      for (std::size_t k = 0;; ++k) {
        name = std::string(prefix) + std::to_string(k);
        if (used_.count(name) == 0) break;
      }
      // a name with bounds but no value using it is the symbol of a value that was unset (a
      // recomputation): it keeps its bounds
      if (ranges_.emplace(name, range).second) new_symbols_.emplace_back(name, range);
    }
    used_.insert(name);
    unbacked_owner_.emplace(name, key);
    if (key != nullptr) unbacked_of_.emplace(key, name);
    return symbol_named(name, integer);
  }
  /// The symbols unbacked_symbol() made (not reused), in order, with their bounds: what a
  /// program's range_constraints gains when their values are stored. O(1).
  [[nodiscard]] const std::vector<std::pair<std::string, sym::SymbolRange>>& new_symbols()
      const noexcept {
    return new_symbols_;
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

  static sym::Expr symbol_named(const std::string& name, bool integer) {
    sym::Assumptions a;
    a.integer = integer;
    return sym::Expr::symbol(name, a);
  }
  void note_symbols(const sym::Expr& e) const {
    for (const std::string& s : e.free_symbols()) used_.insert(s);
  }

  mutable sym::Ranges ranges_;                       // grows by unbacked_symbol() and assume()
  mutable std::set<std::string, std::less<>> used_;  // symbol names of the expressions read
  mutable std::map<const void*, std::string> unbacked_of_;
  mutable std::map<std::string, const void*, std::less<>> unbacked_owner_;  // name -> its key
  mutable std::vector<std::pair<std::string, sym::SymbolRange>> new_symbols_;
  mutable sym::Bindings hints_;
  mutable std::unordered_map<std::string, sym::Expr> cache_;
  mutable Form form_ = Form::srepr;
  bool form_fixed_ = false;
};

}  // namespace epgraph
