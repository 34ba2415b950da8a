// epgraph::sym (include/epgraph/ir/symbolic.hpp) against sympy with torch's functions: every case
// of tests/data/sym_cases.txt (tools/gen_sym_cases.py) is read in both printed forms, evaluated at
// the generator's points and printed back; and the rules torch's shape functions rely on.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/ir/symbolic.hpp>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace sym = epgraph::sym;

namespace {

struct SymCase {
  std::string name, srepr, str;
  std::vector<std::string> values;  // at sym_points(), "Z" for a division by zero
};

const std::vector<sym::Bindings>& sym_points() {
  static const std::vector<sym::Bindings> points = [] {
    // The POINTS of tools/gen_sym_cases.py, read from the file's second header line.
    std::ifstream in(std::string(EPGRAPH_SOURCE_DIR) + "/tests/data/sym_cases.txt");
    std::string header;
    std::getline(in, header);
    std::getline(in, header);
    std::vector<sym::Bindings> out;
    std::istringstream words(header.substr(header.find('=') + 1));
    std::string p;
    while (words >> p) {
      long a = 0, b = 0, c = 0;
      char comma1 = 0, comma2 = 0;
      std::istringstream one(p);
      one >> a >> comma1 >> b >> comma2 >> c;
      out.push_back({{"s0", a}, {"s1", b}, {"u0", c}});
    }
    return out;
  }();
  return points;
}

const std::vector<SymCase>& sym_cases() {
  static const std::vector<SymCase> cases = [] {
    std::ifstream in(std::string(EPGRAPH_SOURCE_DIR) + "/tests/data/sym_cases.txt");
    if (!in) throw std::runtime_error("cannot read tests/data/sym_cases.txt");
    std::vector<SymCase> out;
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::vector<std::string> fields;
      std::size_t start = 0;
      while (true) {
        std::size_t tab = line.find('\t', start);
        fields.push_back(line.substr(start, tab - start));
        if (tab == std::string::npos) break;
        start = tab + 1;
      }
      REQUIRE(fields.size() == 4);
      SymCase c{fields[0], fields[1], fields[2], {}};
      std::istringstream values(fields[3]);
      std::string v;
      while (values >> v) c.values.push_back(v);
      out.push_back(std::move(c));
    }
    return out;
  }();
  return cases;
}

std::string value_or_error(const sym::Expr& e, const sym::Bindings& b) {
  try {
    return std::to_string(sym::evaluate(e, b));
  } catch (const epgraph::value_error& err) {
    if (std::string(err.what()).find("division by zero") != std::string::npos) return "Z";
    return std::string("error: ") + err.what();
  }
}

std::string refusal(std::string_view text) {
  try {
    (void)sym::parse(text);
  } catch (const epgraph::value_error& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("every generated case: both printed forms read to one expression with sympy's values",
          "[symbolic]") {
  const auto& cases = sym_cases();
  const auto& points = sym_points();
  REQUIRE(points.size() == 8);
  REQUIRE(cases.size() > 300);
  std::size_t from_export = 0;
  for (const auto& c : cases) {
    INFO(c.name << ": " << c.str);
    REQUIRE(c.values.size() == points.size());
    if (c.name.rfind("export_", 0) == 0) ++from_export;
    const sym::Expr a = sym::parse(c.srepr);
    const sym::Expr b = sym::parse(c.str);
    CHECK(sym::str(a) == sym::str(b));
    CHECK(a == b);
    for (std::size_t i = 0; i < points.size(); ++i) {
      INFO("point " << i);
      CHECK(value_or_error(a, points[i]) == c.values[i]);
    }
    // What epgraph prints, it reads back to the same expression.
    CHECK(sym::parse(sym::srepr(a)) == a);
    CHECK(sym::parse(sym::str(a)) == a);
  }
  CHECK(from_export >= 10);
}

TEST_CASE("canonical form: equal expressions compare equal", "[symbolic]") {
  const auto s0 = sym::Expr::symbol("s0");
  const auto s1 = sym::Expr::symbol("s1");
  CHECK(2 * s0 == s0 + s0);
  CHECK(sym::floordiv(2 * s0, 2) == s0);
  CHECK(sym::floordiv(2 * s0 + 1, 2) == s0);
  CHECK(sym::floordiv(s0 * s1, s1) == s0);
  CHECK((s0 + 1) * (s0 - 1) == sym::pow(s0, 2) - 1);
  CHECK(s0 - s0 == sym::Expr(0));
  CHECK(sym::str(s1 * 3 + s0 * s1 + 2) == "s0*s1 + 3*s1 + 2");
  CHECK(sym::mod(4 * s0, 2) == sym::Expr(0));
  CHECK(sym::ceildiv(s0, 1) == s0);
  CHECK(sym::parse("s0*2") ==
        sym::parse("Mul(Integer(2), Symbol('s0', positive=True, integer=True))"));
  CHECK(s0 != s1);
  CHECK(sym::parse("s0") != sym::parse("Symbol('s0', integer=True)"));  // other assumptions
}

TEST_CASE("broadcasting and Max use the symbols' assumptions and the range constraints",
          "[symbolic]") {
  const auto s0 = sym::Expr::symbol("s0");
  CHECK(sym::max({1, s0}) == s0);  // positive
  CHECK(sym::str(sym::max({s0, 2})) == "Max(2, s0)");
  const sym::Ranges ranges{{"s0", {2, 64}}};
  CHECK(sym::max({2, s0}, &ranges) == s0);
  CHECK(sym::min({64, s0}, &ranges) == s0);
  CHECK(sym::simplify(sym::parse("Max(2, s0)"), ranges) == s0);
  CHECK(sym::simplify(sym::parse("s0 >= 2"), ranges).as_boolean() == std::optional<bool>(true));
  CHECK(sym::simplify(sym::parse("Eq(s0, 1)"), ranges).as_boolean() == std::optional<bool>(false));
  CHECK(sym::gt(s0, 0).as_boolean() == std::optional<bool>(true));
  CHECK(!sym::gt(s0, 1).as_boolean().has_value());
  const auto b = sym::bounds(sym::parse("2*s0 + 1"), &ranges);
  CHECK(b.lo == 5.0);
  CHECK(b.hi == 129.0);
  const auto u = sym::bounds(sym::parse("u0"));
  CHECK(u.lo == -std::numeric_limits<double>::infinity());
  CHECK(u.hi == std::numeric_limits<double>::infinity());
}

TEST_CASE("both printed forms of torch's functions", "[symbolic]") {
  const auto e = sym::parse("((s0 + 1)//2)");
  CHECK(sym::srepr(e) ==
        "FloorDiv(Add(Symbol('s0', positive=True, integer=True), Integer(1)), Integer(2))");
  CHECK(sym::str(e) == "((s0 + 1)//2)");
  CHECK(sym::str(sym::parse("PythonMod(u0, 3)")) == "PythonMod(u0, 3)");
  // The same expression as sympy's, with the arguments of And in epgraph's order.
  CHECK(sym::str(sym::parse("(s0 > 2) & (s1 < 4)")) == "(s1 < 4) & (s0 > 2)");
  CHECK(sym::str(sym::parse("Eq(s0, 1) | Eq(s1, 1)")) == "Eq(s0, 1) | Eq(s1, 1)");
  CHECK(sym::str(sym::parse("Max(s0, 1 + s1, 3)")) == "Max(3, s0, s1 + 1)");
  CHECK(sym::str(sym::parse("2*((s0 - 1)//2) + 1")) == "2*(((s0 - 1)//2)) + 1");
  CHECK(sym::str(sym::parse("((Max(2, s0))//2)")) == "((Max(2, s0))//2)");
  CHECK(sym::str(sym::parse("Mod(s0, 3) + 1")) == "(Mod(s0, 3)) + 1");
  CHECK(sym::str(sym::parse("-s0")) == "-s0");
  CHECK(sym::str(sym::parse("3*u0 - 1")) == "3*u0 - 1");
  CHECK(sym::srepr(sym::parse("3*u0 - 1")) ==
        "Add(Mul(Integer(3), Symbol('u0', integer=True)), Integer(-1))");
  CHECK(sym::parse("Max(s1, s0*u0)").free_symbols() == std::vector<std::string>{"s0", "s1", "u0"});
}

TEST_CASE("substitute and evaluate", "[symbolic]") {
  const auto e = sym::parse("((s0 - 1)//2) + 1");
  std::map<std::string, sym::Expr, std::less<>> values{{"s0", sym::Expr(17)}};
  CHECK(sym::substitute(e, values).as_integer() == std::optional<std::int64_t>(9));
  values = {{"s0", 2 * sym::Expr::symbol("s1") + 1}};
  CHECK(sym::substitute(e, values) == sym::Expr::symbol("s1") + 1);
  CHECK(sym::evaluate(sym::parse("s0 > 2"), {{"s0", 3}}) == 1);
  CHECK(sym::evaluate_rational(sym::parse("IntTrueDiv(s0, 2)"), {{"s0", 3}}) ==
        sym::Rational::of(3, 2));
}

// torch writes SymFloat expressions for a float scale or a true division of a dynamic size
// (F.interpolate(scale_factor=1.5), x.size(1) / 2); torch/utils/_sympy/functions.py evaluates
// them in float64, so 0.7*10 truncates to 7 (the exact value of Float(0.7)*10 is below 7).
TEST_CASE("SymFloat expressions: Float, ToFloat, true division and the ToInt functions",
          "[symbolic]") {
  const std::string s53 = "Symbol('s53', positive=True, integer=True)";
  const sym::Expr up =
      sym::parse("TruncToInt(Mul(Float('1.5', precision=53), ToFloat(" + s53 + ")))");
  CHECK(sym::parse("TruncToInt(1.5*ToFloat(s53))") == up);  // the str form
  CHECK(sym::str(up) == "TruncToInt(3*ToFloat(s53)/2)");
  // written back as torch wrote it, so sympy finds the saved expression equal to torch's (a
  // Rational(3, 2) would load, but sympy keeps it apart from Float(1.5))
  CHECK(sym::srepr(up) == "TruncToInt(Mul(Float('1.5', precision=53), ToFloat(" + s53 + ")))");
  CHECK(sym::srepr(sym::parse("0.7*ToFloat(s0)")) ==
        "Mul(Float('0.69999999999999996', precision=53), ToFloat(Symbol('s0', positive=True, "
        "integer=True)))");
  CHECK(sym::srepr(sym::parse("9.5367431640625e-7*ToFloat(s0) + 0.5")) ==
        "Add(Mul(Float('9.5367431640625e-7', precision=53), ToFloat(Symbol('s0', positive=True, "
        "integer=True))), Float('0.5', precision=53))");  // sympy's text of 2**-20 + 1/2
  CHECK(sym::srepr(sym::Expr(sym::Rational::of(1, 3))) == "Rational(1, 3)");  // no double
  CHECK(sym::evaluate(up, {{"s53", 5}}) == 7);
  CHECK(sym::evaluate(up, {{"s53", 13}}) == 19);
  const std::map<std::string, sym::Expr, std::less<>> five{{"s53", sym::Expr(5)}};
  CHECK(sym::substitute(up, five).as_integer() == std::optional<std::int64_t>(7));
  const sym::Expr stride = sym::parse(
      "Mul(Integer(12), Max(Integer(1), TruncToInt(Mul(Float('1.5', "
      "precision=53), ToFloat(" +
      s53 + ")))))");
  CHECK(sym::substitute(stride, five).as_integer() == std::optional<std::int64_t>(84));
  // float64 arithmetic, not exact arithmetic
  CHECK(sym::evaluate(sym::parse("TruncToInt(0.7*ToFloat(s0))"), {{"s0", 10}}) == 7);
  CHECK(sym::evaluate(sym::parse("FloorToInt(FloatTrueDiv(ToFloat(s0), 0.1))"), {{"s0", 1}}) == 10);
  CHECK(sym::evaluate(sym::parse("CeilToInt(0.1*ToFloat(s0))"), {{"s0", 10}}) == 1);
  CHECK(sym::evaluate(sym::parse("CeilToInt(IntTrueDiv(s0, 3))"), {{"s0", 5}}) == 2);
  CHECK(sym::evaluate(sym::parse("TruncToInt(IntTrueDiv(s0, 3))"), {{"s0", 5}}) == 1);
  CHECK(sym::evaluate(sym::parse("FloorToInt(TruncToFloat(IntTrueDiv(s0, 2)))"), {{"s0", 5}}) == 2);
  // a SymFloat value: 7/3 as torch's float64 7/3 (a power-of-2 denominator), 5/2 exactly
  CHECK(sym::evaluate_rational(sym::parse("IntTrueDiv(s0, 3)"), {{"s0", 7}}) ==
        sym::Rational::of(5254199565265579, 2251799813685248));
  CHECK(sym::substitute(sym::parse("IntTrueDiv(" + s53 + ", Integer(2))"), five).constant() ==
        std::optional<sym::Rational>(sym::Rational::of(5, 2)));
  CHECK(sym::parse("Float('2.0', precision=53)") == sym::Expr(2));
  CHECK(sym::parse("0.10000000000000001") ==
        sym::Expr(sym::Rational::of(3602879701896397, 36028797018963968)));
  // what stays symbolic prints and reads back
  const sym::Expr half = sym::parse("FloatTrueDiv(ToFloat(s0), 2.0)");
  CHECK(sym::srepr(half) ==
        "FloatTrueDiv(ToFloat(Symbol('s0', positive=True, integer=True)), "
        "Integer(2))");
  CHECK(sym::parse(sym::srepr(half)) == half);
}

// Min/Max drop an argument another one dominates under the symbols' assumptions and bounds, as
// torch's value-range analysis decides them (torch writes the stride Min(16, 16*s27)).
TEST_CASE("Min and Max simplify with the symbols' bounds where decidable", "[symbolic]") {
  const sym::Ranges ranges{{"s0", {2, 64}}, {"s1", {1, 8}}};
  CHECK(sym::simplify(sym::parse("Max(1, s0)"), ranges) == sym::parse("s0"));
  CHECK(sym::simplify(sym::parse("Min(16, 16*s1)"), ranges) == sym::Expr(16));
  CHECK(sym::parse("Min(16, 16*Symbol('s27', positive=True, integer=True))") == sym::Expr(16));
  CHECK(sym::simplify(sym::parse("Max(16, 16*s1)"), ranges) == sym::parse("16*s1"));
  // undecidable: kept
  CHECK(sym::str(sym::simplify(sym::parse("Max(3, s0)"), ranges)) == "Max(3, s0)");
  CHECK(sym::str(sym::simplify(sym::parse("Min(s0, s1)"), ranges)) == "Min(s0, s1)");
  CHECK(sym::str(sym::parse("Min(16, 16*u0)")) == "Min(16, 16*u0)");
  // no bound known (a str-form s27 is torch's positive size symbol: decided)
  const std::string z = "Min(16, 16*Symbol('z', integer=True))";
  CHECK(sym::str(sym::parse(z)) == "Min(16, 16*z)");
  CHECK(sym::simplify(sym::parse(z), {{"z", {1, std::nullopt}}}) == sym::Expr(16));
  CHECK(sym::parse("Min(16, 16*s27)") == sym::Expr(16));
}

// torch._check(n <= x.shape[0]) puts `u0 <= s77` among torch's ShapeEnv axioms, and slicing
// x[:n] then gives u0 where epgraph gave Min(s77, u0): the relation was not used.
TEST_CASE("axioms: the relations runtime assertions establish decide Min, Max and comparisons",
          "[symbolic]") {
  sym::Ranges ranges{{"s77", {2, 64}}, {"u0", {0, 64}}};
  const sym::Expr min = sym::parse("Min(s77, u0)");
  CHECK(sym::str(sym::simplify(min, ranges)) == "Min(s77, u0)");
  CHECK(sym::str(sym::le(sym::parse("u0"), sym::parse("s77"), &ranges)) == "u0 <= s77");

  CHECK(sym::add_axiom(ranges, sym::parse("u0 <= s77")));
  REQUIRE(ranges.axioms.size() == 1);
  CHECK(sym::str(ranges.axioms[0]) == "s77 - u0");
  CHECK(!sym::add_axiom(ranges, sym::parse("s77 >= u0")));  // the same axiom: not added twice
  CHECK(ranges.axioms.size() == 1);
  CHECK(sym::simplify(min, ranges) == sym::parse("u0"));
  CHECK(sym::simplify(sym::parse("Max(s77, u0)"), ranges) == sym::parse("s77"));
  CHECK(sym::simplify(sym::parse("Min(s77 + 1, u0)"), ranges) == sym::parse("u0"));
  CHECK(sym::le(sym::parse("u0"), sym::parse("s77"), &ranges).as_boolean() == true);
  CHECK(sym::gt(sym::parse("u0"), sym::parse("s77"), &ranges).as_boolean() == false);
  // u0 == s77 is still possible: neither u0 < s77 nor Min(s77 - 1, u0) is decided
  CHECK(sym::str(sym::lt(sym::parse("u0"), sym::parse("s77"), &ranges)) == "u0 < s77");
  CHECK(sym::str(sym::simplify(sym::parse("Min(s77 - 1, u0)"), ranges)) == "Min(s77 - 1, u0)");
  CHECK(sym::bounds(sym::parse("s77 - u0"), &ranges).lo == 0);
  CHECK(sym::bounds(sym::parse("u0 - s77"), &ranges).hi == 0);
  // nothing else changed: the ranges of the symbols stay
  CHECK(ranges.size() == 2);

  // a strict relation between integers: b - a - 1 >= 0
  sym::Ranges strict{{"s0", {2, 64}}, {"s1", {2, 64}}};
  CHECK(sym::add_axiom(strict, sym::parse("s0 > s1")));
  CHECK(sym::str(strict.axioms[0]) == "s0 - s1 - 1");
  CHECK(sym::simplify(sym::parse("Min(s0, s1 + 1)"), strict) == sym::parse("s1 + 1"));
  CHECK(sym::ne(sym::parse("s0"), sym::parse("s1"), &strict).as_boolean() == true);

  // Eq both ways, and each conjunct of an And
  sym::Ranges eq{{"s0", {2, 64}}, {"s1", {2, 64}}, {"s2", {1, 64}}};
  CHECK(sym::add_axiom(eq, sym::parse("Eq(s0, 2*s1) & (s2 <= s1)")));
  CHECK(eq.axioms.size() == 3);
  CHECK(sym::eq(sym::parse("s0"), sym::parse("2*s1"), &eq).as_boolean() == true);
  CHECK(sym::ne(sym::parse("2*s1"), sym::parse("s0"), &eq).as_boolean() == false);
  CHECK(sym::str(sym::simplify(sym::parse("Max(s0, 2*s1)"), eq)) == "2*s1");
  CHECK(sym::simplify(sym::parse("Min(s2, s1)"), eq) == sym::parse("s2"));

  // what teaches nothing: Ne, Or, Not, constants, SymFloat relations
  sym::Ranges unlearned{{"s0", {2, 64}}, {"s1", {2, 64}}};
  for (const char* c : {"Ne(s0, s1)", "(s0 <= s1) | (s1 <= s0)", "True", "s0 >= 1"}) {
    INFO(c);
    CHECK(!sym::add_axiom(unlearned, sym::parse(c)));
  }
  CHECK(!sym::add_axiom(unlearned, sym::parse("ToFloat(s0) <= 2.5")));
  CHECK(unlearned.axioms.empty());
  CHECK(eq.replacements.empty());  // Eq(s0, 2*s1) has no unbacked symbol to solve for
}

TEST_CASE("axioms: an equality solved for its one unbacked symbol becomes a replacement",
          "[symbolic]") {
  // torch's ShapeEnv._maybe_guard_rel: solve for the unbacked symbol; keep the solution when it
  // has no unbacked symbol
  auto replacements = [](const char* condition) {
    sym::Ranges r{{"s0", {2, 64}}, {"s1", {2, 64}}};
    (void)sym::add_axiom(r, sym::parse(condition));
    std::string out;
    for (const auto& [name, value] : r.replacements) out += name + " -> " + sym::str(value) + ";";
    return out;
  };
  CHECK(replacements("Eq(u0, s0)") == "u0 -> s0;");
  CHECK(replacements("Eq(s0, u0)") == "u0 -> s0;");
  CHECK(replacements("Eq(u0 + 1, s0)") == "u0 -> s0 - 1;");
  CHECK(replacements("Eq(2*s1 - u3, s0)") == "u3 -> -s0 + 2*s1;");
  CHECK(replacements("Eq(u0, s0) & (s1 <= s0)") == "u0 -> s0;");
  // what is not solved: two unbacked symbols, a coefficient other than +-1 (u0 = s0/2 is not
  // an integer expression), the symbol inside a function, no unbacked symbol, not an equality
  CHECK(replacements("Eq(u0, u1)") == "");
  CHECK(replacements("Eq(2*u0, s0)") == "");
  CHECK(replacements("Eq(u0 + Max(u0, 2), s0)") == "");
  CHECK(replacements("Eq(Max(u0, 2), s0)") == "");
  CHECK(replacements("Eq(u0, s0//2)") == "");  // torch keeps u0 and the assert
  CHECK(replacements("Eq(u0, s0*s1)") == "u0 -> s0*s1;");
  CHECK(replacements("Eq(u0, s0**2 + 1)") == "u0 -> s0**2 + 1;");
  CHECK(replacements("Eq(s0, 2*s1)") == "");
  CHECK(replacements("u0 <= s0") == "");
  CHECK(replacements("Ne(u0, s0)") == "");
  // the first replacement stays; a later solution has the earlier ones applied
  sym::Ranges r{{"s0", {2, 64}}, {"s1", {2, 64}}};
  CHECK(sym::add_axiom(r, sym::parse("Eq(u0, s0)")));
  CHECK(sym::add_axiom(r, sym::parse("Eq(u0, s1)")));  // an axiom, not a second replacement
  REQUIRE(r.replacements.size() == 1);
  CHECK(sym::str(r.replacements.at("u0")) == "s0");
  CHECK(sym::is_unbacked_name("u12"));
  CHECK(sym::is_unbacked_name("zuf0"));
  CHECK(!sym::is_unbacked_name("u"));
  CHECK(!sym::is_unbacked_name("s0"));
  CHECK(!sym::is_unbacked_name("u0a"));
  CHECK(!sym::is_unbacked_name("zuf"));
}

TEST_CASE("what epgraph refuses to read or compute, by name", "[symbolic]") {
  CHECK(refusal("s0 +") ==
        "cannot read the symbolic expression 's0 +': unexpected end at offset 4");
  CHECK(refusal("Foo(s0)") ==
        "cannot read the symbolic expression 'Foo(s0)': the unknown function 'Foo' at offset 0");
  CHECK(refusal("s0 / s1") ==
        "cannot read the symbolic expression 's0 / s1': a division by the "
        "symbolic expression 's1' at offset 4");
  CHECK(refusal("Float('inf', precision=53)") ==
        "cannot read the symbolic expression 'Float('inf', precision=53)': the Float 'inf' (not a "
        "finite float64 that is a fraction of 64-bit integers) at offset 0");
  CHECK(refusal("Float('1e-300', precision=53)*s0") ==
        "cannot read the symbolic expression 'Float('1e-300', precision=53)*s0': the Float "
        "'1e-300' (not a finite float64 that is a fraction of 64-bit integers) at offset 0");
  CHECK(refusal("Float('1.5', precision=113)") ==
        "cannot read the symbolic expression 'Float('1.5', precision=113)': Float() takes a "
        "quoted number and precision=53 at offset 0");
  CHECK(refusal("") == "cannot read the symbolic expression '': unexpected end at offset 0");
  CHECK(refusal("s0**s1") ==
        "cannot read the symbolic expression 's0**s1': the power 's1' (only "
        "integer powers 0..1048576 are symbolic integers) at offset 4");
  CHECK(
      refusal("Symbol(s0)") ==
      "cannot read the symbolic expression 'Symbol(s0)': Symbol() needs a quoted name at offset 7");
  CHECK(refusal(")") == "cannot read the symbolic expression ')': unexpected ')' at offset 0");
  CHECK(refusal("Max()") ==
        "cannot read the symbolic expression 'Max()': Max() needs at least "
        "one argument at offset 0");
  CHECK(refusal("FloorDiv(s0)") ==
        "cannot read the symbolic expression 'FloorDiv(s0)': "
        "FloorDiv() takes 2 arguments, not 1 at offset 0");
  // Deep nesting is refused before it exhausts the stack; a long text is quoted in part.
  CHECK(refusal(std::string(300, '(')) == "cannot read the symbolic expression '" +
                                              std::string(200, '(') +
                                              "...': nesting deeper than 200 at offset 200");
  const std::string long_text = "s0 + " + std::string(250, 'a') + " +";
  CHECK(refusal(long_text) == "cannot read the symbolic expression '" + long_text.substr(0, 200) +
                                  "...': unexpected end at offset 257");
  CHECK(refusal("s0 s1") ==
        "cannot read the symbolic expression 's0 s1': unexpected 's1' at "
        "offset 3");
  try {
    (void)sym::evaluate(sym::parse("s0 + u0"), {{"s0", 1}});
    FAIL("evaluated with u0 unbound");
  } catch (const epgraph::value_error& e) {
    CHECK(std::string(e.what()) == "the symbol 'u0' has no value");
  }
  try {
    (void)sym::evaluate(sym::parse("((s0)//(s1))"), {{"s0", 1}, {"s1", 0}});
    FAIL("divided by zero");
  } catch (const epgraph::value_error& e) {
    CHECK(std::string(e.what()) == "division by zero in a symbolic expression");
  }
  try {
    (void)(sym::Expr(std::numeric_limits<std::int64_t>::max()) + 1);
    FAIL("overflowed");
  } catch (const epgraph::value_error& e) {
    CHECK(std::string(e.what()) == "integer overflow in a symbolic expression");
  }
}

// Found by trying to break the parser (each was a crash, a hang or a wrong value before).
TEST_CASE("hostile expressions: no crash, no hang, no wrong value", "[symbolic][errors]") {
  const std::string min_text = "-9223372036854775808";
  // INT64_MIN % -1 in a divisibility test stopped the process with SIGFPE.
  CHECK(sym::parse("Mod((-9223372036854775807-1)*s0, -1)") == sym::Expr(0));
  const sym::Expr fd =
      sym::parse("FloorDiv((-9223372036854775807-1)*s0, (-9223372036854775807-1)*s1)");
  CHECK(sym::str(fd) == "((-s0)//(-s1))");
  CHECK(sym::evaluate(fd, {{"s0", 7}, {"s1", 2}}) == 3);
  // The smallest int64 reads and prints in both forms.
  const sym::Expr m = sym::parse("-9223372036854775807-1");
  CHECK(sym::srepr(m) == "Integer(-9223372036854775808)");
  CHECK(sym::str(m) == min_text);
  CHECK(sym::parse(sym::srepr(m)) == m);
  CHECK(sym::parse(min_text) == m);
  CHECK(sym::str(sym::parse("-9223372036854775807*s0 - s0")) == "-9223372036854775808*s0");
  // Runs of unary operators overflowed the stack (the depth limit counted only parentheses).
  CHECK(refusal(std::string(100000, '-') + "s0")
            .find("more than 200 unary operators or powers in a row") != std::string::npos);
  CHECK(refusal(std::string(100000, '~') + "(s0 > 2)").find("more than 200 unary operators") !=
        std::string::npos);
  std::string chain = "1";
  for (int i = 0; i < 100000; ++i) chain += "**1";
  CHECK(refusal(chain).find("more than 200 unary operators") != std::string::npos);
  CHECK(sym::parse(std::string(198, '-') + "s0") == sym::Expr::symbol("s0"));
  // PowByNatural evaluated by repeated multiplication: 10^18 steps.
  CHECK(sym::evaluate(sym::parse("PowByNatural(1, 1000000000000000000)"), {}) == 1);
  CHECK(sym::evaluate(sym::parse("PowByNatural(s0, s1)"), {{"s0", -1}, {"s1", 1000000000001}}) ==
        -1);
  CHECK(sym::evaluate(sym::parse("PowByNatural(s0, s1)"), {{"s0", 3}, {"s1", 39}}) ==
        4052555153018976267);
  CHECK_THROWS_WITH(sym::evaluate(sym::parse("PowByNatural(s0, s1)"), {{"s0", 3}, {"s1", 40}}),
                    "integer overflow in a symbolic expression");
  // Powers of atoms wrapped around in 32 bits: s0**(64**5 * 4) became s0**0, evaluated to 1.
  CHECK(refusal("(((((s0**64)**64)**64)**64)**64)**4") ==
        "cannot read the symbolic expression '(((((s0**64)**64)**64)**64)**64)**4': a power above "
        "1048576 in a symbolic expression at offset 26");
  // sympy writes s0**65 for s0**64*s0: it reads back, and its value is exact.
  const sym::Expr p65 = sym::parse("s0**64*s0");
  CHECK(sym::srepr(p65) == "Pow(Symbol('s0', positive=True, integer=True), Integer(65))");
  CHECK(sym::parse(sym::srepr(p65)) == p65);
  CHECK(sym::parse(sym::str(p65)) == p65);
  CHECK(sym::evaluate(p65, {{"s0", 1}}) == 1);
  CHECK(sym::evaluate(sym::parse("s0**1048576"), {{"s0", -1}}) == 1);
  CHECK(sym::bounds(sym::parse("u0**1048576")).lo == 0.0);
  // FloorDiv by 1 of a fraction is no identity (torch keeps FloorDiv(u0/2 + 1/3, 1)).
  CHECK(sym::evaluate(sym::parse("FloorDiv(u0/2 + 1/3, 1)"), {{"u0", -7}}) == -4);
  CHECK(sym::evaluate(sym::parse("FloorDiv(u0/2, -1)"), {{"u0", -7}}) == 3);
  CHECK(sym::str(sym::parse("Mod(u0/2, 1)")) == "Mod(u0/2, 1)");  // was 0
  CHECK_THROWS_WITH(sym::evaluate(sym::parse("Mod(u0/2, 1)"), {{"u0", 1}}),
                    "the value of 'u0/2' is 1/2, not an integer");
  // A name holding ' is quoted with " as Python's repr does.
  const sym::Expr q = sym::parse("Symbol(\"a'b\", integer=True)");
  CHECK(sym::srepr(q) == "Symbol(\"a'b\", integer=True)");
  CHECK(sym::parse(sym::srepr(q)) == q);
  // SymBools take no arithmetic (sympy refuses True + 1); Eq compares truth values.
  CHECK(refusal("Max(s0 > 2, 1)") ==
        "cannot read the symbolic expression 'Max(s0 > 2, 1)': a "
        "SymBool ('s0 > 2') in integer arithmetic at offset 0");
  CHECK(refusal("(s0 > 2) + 1").find("a SymBool ('s0 > 2') in integer arithmetic") !=
        std::string::npos);
  CHECK(sym::parse("Eq(True, False)").as_boolean() == std::optional<bool>(false));
  CHECK(sym::parse("Ne(s0 > 2, s0 > 2)").as_boolean() == std::optional<bool>(false));
  // Errors of the arithmetic name the text.
  CHECK(refusal("s0 // 0") ==
        "cannot read the symbolic expression 's0 // 0': division by zero "
        "in a symbolic expression at offset 7");
  CHECK(refusal("2**64") ==
        "cannot read the symbolic expression '2**64': integer overflow in a "
        "symbolic expression at offset 5");
  // Bounds past 2^53 decide nothing that rounding could get wrong.
  const sym::Ranges big{{"s0", {1, 9007199254740993}}};
  CHECK(!sym::simplify(sym::parse("s0 <= 9007199254740992"), big).as_boolean().has_value());
  CHECK(sym::simplify(sym::parse("s0 <= 4503599627370496"), sym::Ranges{{"s0", {1, 64}}})
            .as_boolean() == std::optional<bool>(true));
}

TEST_CASE("sym: Piecewise as torch writes sym_ite's value, with the bounds of its branches",
          "[sym]") {
  // The loader's expression check refused this text, which torch 2.13 writes for
  // `x * b.item()` and loads; `Piecewise(...) >= 0` must fold to True as torch folds it.
  const std::string text =
      "Piecewise(ExprCondPair(Integer(1), Equality(Symbol('u0', integer=True), Integer(1))), "
      "ExprCondPair(Integer(0), true))";
  const epgraph::sym::Expr e = epgraph::sym::parse(text);
  CHECK(epgraph::sym::srepr(e) == text);
  CHECK(epgraph::sym::parse(epgraph::sym::srepr(e)) == e);
  const epgraph::sym::Interval b = epgraph::sym::bounds(e);
  CHECK(b.lo == 0);
  CHECK(b.hi == 1);
  CHECK(epgraph::sym::ge(e, epgraph::sym::Expr(0)).as_boolean() == std::optional<bool>(true));
  CHECK(epgraph::sym::le(e, epgraph::sym::Expr(1)).as_boolean() == std::optional<bool>(true));
}
