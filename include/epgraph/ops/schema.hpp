// Operator schemas: PyTorch's FunctionSchema text parsed into types, arguments and returns.
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

namespace epgraph {

/// A type in an operator schema, as FunctionSchema text spells it (`Tensor`, `int[]`,
/// `Tensor(a!)?`, `SymInt[2]`, `Dict(str, t)`, `(str, t)[]`): c10's `TypePtr` as far as epgraph
/// needs it. Composite kinds keep their element types in `elements`.
struct SchemaType {
  /// What the type is. `Scalar` is the schema's `Scalar` (Python `number`); `Other` is any named
  /// type epgraph does not interpret (`t`, `Any`, `Storage`, `Stream`, `QScheme`, a TorchBind
  /// class `__torch__.torch.classes...`), spelled in `name`.
  // GCC 12's -Wshadow takes the enumerators SymInt/SymFloat/SymBool for shadows of the types
  // epgraph::SymInt, ... although a scoped enumerator is only ever named as Kind::SymInt.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#endif
  enum class Kind : std::uint8_t {
    Tensor,
    Int,
    SymInt,
    Float,
    SymFloat,
    Bool,
    SymBool,
    Scalar,
    ScalarType,
    Layout,
    MemoryFormat,
    Device,
    String,
    Generator,
    Dimname,
    Complex,
    Optional,  // elements[0]?
    List,      // elements[0][] or elements[0][N] (fixed_size)
    Tuple,     // (elements...)
    Dict,      // Dict(elements[0], elements[1])
    Future,    // Future(elements[0])
    RRef,      // RRef(elements[0])
    Await,     // Await(elements[0])
    Other,
  };
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  Kind kind = Kind::Other;
  /// The spelling of a named type (`Tensor`, `SymInt`, `t`, ...); empty for composite kinds.
  std::string name;
  /// Element types of composite kinds (see Kind).
  std::vector<SchemaType> elements;
  /// The N of `int[N]` (List only); -1 when absent.
  std::int64_t fixed_size = -1;
  /// The alias annotation written after the type, without parentheses (`a!`, `a -> *`, `b|a`);
  /// empty when there is none.
  std::string alias;

  /// True when the alias annotation marks a write (`Tensor(a!)`), here or in an element type.
  [[nodiscard]] bool is_write() const noexcept {
    if (alias.find('!') != std::string::npos) return true;
    for (const SchemaType& e : elements) {
      if (e.is_write()) return true;
    }
    return false;
  }
  /// The type without Optional around it (`Tensor?` -> `Tensor`).
  [[nodiscard]] const SchemaType& unwrap_optional() const noexcept {
    return kind == Kind::Optional ? elements[0] : *this;
  }
  /// True for Tensor, Tensor? (optionally with an alias annotation).
  [[nodiscard]] bool is_tensor_like() const noexcept {
    return unwrap_optional().kind == Kind::Tensor;
  }
  /// The type as FunctionSchema text (what c10 prints): `Tensor(a!)?`, `SymInt[2]`.
  /// O(size of the type).
  [[nodiscard]] std::string str() const {
    std::string out;
    switch (kind) {
      case Kind::Optional: out = elements[0].str() + "?"; break;
      case Kind::List:
        out = elements[0].str() + "[" + (fixed_size >= 0 ? std::to_string(fixed_size) : "") + "]";
        break;
      case Kind::Tuple:
        out = "(";
        for (std::size_t i = 0; i < elements.size(); ++i) {
          out += (i ? ", " : "") + elements[i].str();
        }
        out += ")";
        break;
      case Kind::Dict: out = "Dict(" + elements[0].str() + ", " + elements[1].str() + ")"; break;
      case Kind::Future: out = "Future(" + elements[0].str() + ")"; break;
      case Kind::RRef: out = "RRef(" + elements[0].str() + ")"; break;
      case Kind::Await: out = "Await(" + elements[0].str() + ")"; break;
      default: out = name; break;
    }
    // `Tensor(a!)[]` keeps the annotation on the element, `Tensor[](a!)` on the list.
    if (!alias.empty()) out += "(" + alias + ")";
    return out;
  }
  friend bool operator==(const SchemaType& a, const SchemaType& b) {
    return a.kind == b.kind && a.name == b.name && a.elements == b.elements &&
           a.fixed_size == b.fixed_size && a.alias == b.alias;
  }
  friend bool operator!=(const SchemaType& a, const SchemaType& b) { return !(a == b); }
};

/// One argument or return of a schema (c10 `Argument`): `Tensor(a!) self`, `int dim=0`,
/// `ScalarType? dtype=None` after `*` (keyword-only).
struct SchemaArgument {
  /// The argument's name; may be empty for a return.
  std::string name;
  SchemaType type;
  /// The default as written in the schema (`None`, `1`, `[0, 0]`, `"mean"`,
  /// `1.0000000000000001e-05`); absent when the argument has none.
  std::optional<std::string> default_value;
  /// True for arguments after `*` (FX: must be passed by keyword).
  bool kwarg_only = false;

  /// `type name=default` as c10 prints it. O(size).
  [[nodiscard]] std::string str() const {
    std::string out = type.str();
    if (!name.empty()) out += " " + name;
    if (default_value) out += "=" + *default_value;
    return out;
  }
  friend bool operator==(const SchemaArgument& a, const SchemaArgument& b) {
    return a.name == b.name && a.type == b.type && a.default_value == b.default_value &&
           a.kwarg_only == b.kwarg_only;
  }
  friend bool operator!=(const SchemaArgument& a, const SchemaArgument& b) { return !(a == b); }
};

/// A parsed operator schema (c10 `FunctionSchema`), e.g.
/// `aten::index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor`.
struct FunctionSchema {
  /// `ns::op` (`aten::index_copy`).
  std::string name;
  /// The overload (`Tensor` in `aten::add.Tensor`); empty for the default overload.
  std::string overload_name;
  std::vector<SchemaArgument> arguments;
  std::vector<SchemaArgument> returns;
  /// The argument list ends with `...` (any further positional arguments).
  bool is_vararg = false;
  /// The return list ends with `...`.
  bool is_varret = false;

  /// `ns::op.overload` (`aten::add.Tensor`), or `ns::op` for the default overload: the key of
  /// the registry. O(size).
  [[nodiscard]] std::string qualified_name() const {
    return overload_name.empty() ? name : name + "." + overload_name;
  }
  /// The namespace (`aten`). O(size).
  [[nodiscard]] std::string_view op_namespace() const noexcept {
    const std::string_view n = name;
    return n.substr(0, n.find("::"));
  }
  /// The operator's name without namespace (`index_copy`). O(size).
  [[nodiscard]] std::string_view op_name() const noexcept {
    const std::string_view n = name;
    const auto sep = n.find("::");
    return sep == std::string_view::npos ? n : n.substr(sep + 2);
  }
  /// The FX target of this overload: `torch.ops.aten.add.Tensor`,
  /// `torch.ops.aten.index_copy.default`. O(size).
  [[nodiscard]] std::string target() const {
    return "torch.ops." + std::string(op_namespace()) + "." + std::string(op_name()) + "." +
           (overload_name.empty() ? std::string("default") : overload_name);
  }
  /// True when the operator writes one of its arguments (an alias annotation with `!`, as in
  /// `Tensor(a!) self`): FX's `_is_impure` test for OpOverloads (`schema.is_mutable`).
  [[nodiscard]] bool is_mutable() const noexcept {
    for (const SchemaArgument& a : arguments) {
      if (a.type.is_write()) return true;
    }
    return false;
  }
  /// The position of argument `arg_name`, or -1. O(arguments).
  [[nodiscard]] std::ptrdiff_t argument_index(std::string_view arg_name) const noexcept {
    for (std::size_t i = 0; i < arguments.size(); ++i) {
      if (arguments[i].name == arg_name) return static_cast<std::ptrdiff_t>(i);
    }
    return -1;
  }
  /// The schema as text, exactly as c10 prints it (`str(op._schema)` in Python), so that
  /// `parse_schema(s).str() == s` for every schema torch prints. O(size).
  [[nodiscard]] std::string str() const {
    std::string out = qualified_name() + "(";
    bool first = true;
    bool kw_marked = false;
    for (const SchemaArgument& a : arguments) {
      if (!first) out += ", ";
      first = false;
      if (a.kwarg_only && !kw_marked) {
        out += "*, ";
        kw_marked = true;
      }
      out += a.str();
    }
    if (is_vararg) out += first ? "..." : ", ...";
    out += ") -> ";
    // c10: parentheses unless there is exactly one return and no `...`, or only `...`; a
    // single return whose text starts with '(' (`(str, t)[]`) gets them too, so that the text
    // parses back.
    bool paren = !((returns.size() == 1 && !is_varret) || (returns.empty() && is_varret));
    if (returns.size() == 1 && !paren && returns[0].str().front() == '(') paren = true;
    if (paren) out += "(";
    for (std::size_t i = 0; i < returns.size(); ++i) {
      out += (i ? ", " : "") + returns[i].str();
    }
    if (is_varret) out += returns.empty() ? "..." : ", ...";
    if (paren) out += ")";
    return out;
  }
  friend bool operator==(const FunctionSchema& a, const FunctionSchema& b) {
    return a.name == b.name && a.overload_name == b.overload_name && a.arguments == b.arguments &&
           a.returns == b.returns && a.is_vararg == b.is_vararg && a.is_varret == b.is_varret;
  }
  friend bool operator!=(const FunctionSchema& a, const FunctionSchema& b) { return !(a == b); }
};

namespace detail {

// A recursive-descent reader of FunctionSchema text (torch/csrc/jit/frontend/
// function_schema_parser.cpp and schema_type_parser.cpp define the grammar; this is an
// independent implementation of the subset every aten/prims schema of torch 2.13 uses).
class SchemaReader {
 public:
  explicit SchemaReader(std::string_view text) : text_(text) {}

  FunctionSchema read_schema() {
    FunctionSchema s;
    skip_space();
    s.name = read_qualified_name();
    if (s.name.find("::") == std::string::npos) fail("the name has no namespace ('ns::op')");
    if (peek() == '.') {
      ++pos_;
      s.overload_name = read_identifier("an overload name");
    }
    expect('(');
    read_arguments(s);
    skip_space();
    if (!consume("->")) fail("expected '->' after the argument list");
    read_returns(s);
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the returns");
    return s;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw value_error("Cannot parse operator schema '" + std::string(text_) + "' at offset " +
                      std::to_string(pos_) + ": " + why);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool consume(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) == token) {
      pos_ += token.size();
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  static bool ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  std::string read_identifier(const char* what) {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && ident_char(text_[pos_])) ++pos_;
    if (pos_ == start) fail(std::string("expected ") + what);
    return std::string(text_.substr(start, pos_ - start));
  }
  std::string read_qualified_name() {
    std::string n = read_identifier("an operator name");
    if (text_.substr(pos_, 2) == "::") {
      pos_ += 2;
      n += "::" + read_identifier("an operator name after '::'");
    }
    return n;
  }

  // The text of a parenthesized alias annotation after a type, when one follows.
  void read_alias(SchemaType& t) {
    if (pos_ >= text_.size() || text_[pos_] != '(') return;  // must follow the type directly
    const std::size_t close = text_.find(')', pos_);
    if (close == std::string_view::npos) fail("unterminated alias annotation");
    t.alias = std::string(text_.substr(pos_ + 1, close - pos_ - 1));
    pos_ = close + 1;
  }

  static SchemaType::Kind named_kind(std::string_view n) {
    using K = SchemaType::Kind;
    if (n == "Tensor") return K::Tensor;
    if (n == "int") return K::Int;
    if (n == "SymInt") return K::SymInt;
    if (n == "float") return K::Float;
    if (n == "SymFloat") return K::SymFloat;
    if (n == "bool") return K::Bool;
    if (n == "SymBool") return K::SymBool;
    if (n == "Scalar") return K::Scalar;
    if (n == "ScalarType") return K::ScalarType;
    if (n == "Layout") return K::Layout;
    if (n == "MemoryFormat") return K::MemoryFormat;
    if (n == "Device") return K::Device;
    if (n == "str") return K::String;
    if (n == "Generator") return K::Generator;
    if (n == "Dimname") return K::Dimname;
    if (n == "complex") return K::Complex;
    return K::Other;
  }

  SchemaType read_base_type() {
    using K = SchemaType::Kind;
    SchemaType t;
    if (peek() == '(') {  // a tuple type
      ++pos_;
      t.kind = K::Tuple;
      if (peek() != ')') {
        t.elements.push_back(read_type());
        while (peek() == ',') {
          ++pos_;
          t.elements.push_back(read_type());
        }
      }
      expect(')');
      read_alias(t);
      return t;
    }
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (ident_char(text_[pos_]) || text_[pos_] == '.')) ++pos_;
    if (pos_ == start) fail("expected a type");
    const std::string_view n = text_.substr(start, pos_ - start);
    auto composite = [&](K kind, std::size_t count) {
      t.kind = kind;
      expect('(');
      for (std::size_t i = 0; i < count; ++i) {
        if (i) expect(',');
        t.elements.push_back(read_type());
      }
      expect(')');
      read_alias(t);  // `Dict(str, t)(a!)`
    };
    if (n == "Dict") {
      composite(K::Dict, 2);
    } else if (n == "Future") {
      composite(K::Future, 1);
    } else if (n == "RRef") {
      composite(K::RRef, 1);
    } else if (n == "Await") {
      composite(K::Await, 1);
    } else {
      t.kind = named_kind(n);
      t.name = std::string(n);
      read_alias(t);
    }
    return t;
  }

  SchemaType read_type() {
    SchemaType t = read_base_type();
    for (;;) {
      if (pos_ < text_.size() && text_[pos_] == '?') {
        ++pos_;
        SchemaType o;
        o.kind = SchemaType::Kind::Optional;
        o.elements.push_back(std::move(t));
        t = std::move(o);
      } else if (pos_ < text_.size() && text_[pos_] == '[') {
        ++pos_;
        SchemaType l;
        l.kind = SchemaType::Kind::List;
        skip_space();
        if (peek() != ']') {
          const std::size_t start = pos_;
          while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
          if (pos_ == start || pos_ - start > 9) fail("expected a list size");
          l.fixed_size = std::stoll(std::string(text_.substr(start, pos_ - start)));
        }
        expect(']');
        l.elements.push_back(std::move(t));
        t = std::move(l);
        read_alias(t);  // `Tensor[](a!)`
      } else {
        return t;
      }
    }
  }

  // A default value's text: up to the ',' or ')' that ends the argument, outside brackets and
  // string literals.
  std::string read_default() {
    skip_space();
    const std::size_t start = pos_;
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"' || c == '\'') {
        ++pos_;
        while (pos_ < text_.size() && text_[pos_] != c) pos_ += text_[pos_] == '\\' ? 2 : 1;
        if (pos_ >= text_.size()) fail("unterminated string in a default value");
        ++pos_;
        continue;
      }
      if (c == '[' || c == '(') ++depth;
      if ((c == ']' || c == ')') && depth > 0) {
        --depth;
      } else if ((c == ',' || c == ')') && depth == 0) {
        break;
      }
      ++pos_;
    }
    std::size_t end = pos_;
    while (end > start && text_[end - 1] == ' ') --end;
    if (end == start) fail("expected a default value");
    return std::string(text_.substr(start, end - start));
  }

  SchemaArgument read_argument(bool is_return) {
    SchemaArgument a;
    a.type = read_type();
    skip_space();
    if (pos_ < text_.size() && ident_char(text_[pos_])) a.name = read_identifier("a name");
    if (!is_return && a.name.empty()) fail("expected an argument name");
    if (!is_return && peek() == '=') {
      ++pos_;
      a.default_value = read_default();
    }
    return a;
  }

  void read_arguments(FunctionSchema& s) {
    bool kwarg_only = false;
    if (peek() == ')') {
      ++pos_;
      return;
    }
    for (;;) {
      if (consume("...")) {
        s.is_vararg = true;
      } else if (peek() == '*') {
        ++pos_;
        if (kwarg_only) fail("a second '*'");
        kwarg_only = true;
      } else {
        if (s.is_vararg) fail("an argument after '...'");
        SchemaArgument a = read_argument(false);
        a.kwarg_only = kwarg_only;
        for (const SchemaArgument& b : s.arguments) {
          if (b.name == a.name) fail("argument '" + a.name + "' is declared twice");
        }
        s.arguments.push_back(std::move(a));
      }
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(')');
      return;
    }
  }

  void read_returns(FunctionSchema& s) {
    skip_space();
    if (peek() == '(') {
      // A parenthesized return list, unless it is a single tuple type followed by more type
      // syntax (`(str, t)[]`): try the list first and fall back.
      const std::size_t save = pos_;
      ++pos_;
      if (peek() == ')') {
        ++pos_;
        return;
      }
      try {
        std::vector<SchemaArgument> rets;
        bool varret = false;
        for (;;) {
          if (consume("...")) {
            varret = true;
          } else {
            rets.push_back(read_argument(true));
          }
          if (peek() == ',') {
            ++pos_;
            continue;
          }
          expect(')');
          break;
        }
        skip_space();
        if (pos_ == text_.size()) {
          s.returns = std::move(rets);
          s.is_varret = varret;
          return;
        }
      } catch (const value_error&) {
      }
      pos_ = save;
    }
    if (consume("...")) {
      s.is_varret = true;
      return;
    }
    s.returns.push_back(read_argument(true));
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace detail

/// Parses FunctionSchema text such as
/// `aten::index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor`
/// (c10's `parseSchema`): overload names, defaults, keyword-only `*`, alias annotations
/// (`Tensor(a!)`, `Tensor(a -> *)`), optionals `?`, lists (`int[]`, `SymInt[2]`, `Tensor?[]`),
/// tuple, `Dict(...)` and named types, tuple and `Tensor[]` returns, named returns, varargs `...`.
/// Arguments: `text` is read only during the call. Returns the schema; `str()` of the result
/// prints `text` back as c10 does. Throws value_error "Cannot parse operator schema '<text>' at
/// offset N: <why>" for malformed text, a missing namespace or an argument declared twice.
/// O(length of text). Mirrors `torch._C.parse_schema` (torch/csrc/jit/frontend/
/// function_schema_parser.cpp).
[[nodiscard]] inline FunctionSchema parse_schema(std::string_view text) {
  return detail::SchemaReader(text).read_schema();
}

/// The registry key (`aten::add.Tensor`, `aten::index_copy` for `.default`) of an FX
/// call_function target spelled `torch.ops.<ns>.<op>.<overload>`; empty when `target` has
/// another form (`operator.getitem`, `torch.ops.higher_order.cond`: no overload part). O(length).
/// Mirrors `OpOverload.name()` / `torch._export.serde.serialize`'s target spelling.
[[nodiscard]] inline std::string schema_name_of_target(std::string_view target) {
  constexpr std::string_view prefix = "torch.ops.";
  if (target.substr(0, prefix.size()) != prefix) return {};
  std::string_view rest = target.substr(prefix.size());
  const auto d1 = rest.find('.');
  if (d1 == std::string_view::npos) return {};
  const auto d2 = rest.find('.', d1 + 1);
  if (d2 == std::string_view::npos) return {};
  const std::string_view ns = rest.substr(0, d1);
  const std::string_view op = rest.substr(d1 + 1, d2 - d1 - 1);
  const std::string_view overload = rest.substr(d2 + 1);
  if (ns.empty() || op.empty() || overload.empty() || overload.find('.') != std::string::npos) {
    return {};
  }
  std::string out = std::string(ns) + "::" + std::string(op);
  if (overload != "default") out += "." + std::string(overload);
  return out;
}

}  // namespace epgraph
