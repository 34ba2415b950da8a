// epgraph::infer_meta against torch 2.13: every case of tests/data/infer_meta_cases.json (written
// by tools/gen_infer_meta_cases.py from torch's FakeTensorMode) is built as a node in a Graph and
// its inferred metadata compared with torch's: dtype and sizes always, strides and storage offset
// exactly when the case says "exact", else checked to be contiguous (what infer_meta documents).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cstdint>
#include <epgraph/epgraph.hpp>
#include <epgraph/passes/infer_meta.hpp>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#ifndef EPGRAPH_SOURCE_DIR
#define EPGRAPH_SOURCE_DIR "."
#endif

namespace {

using epgraph::Argument;
using epgraph::ArgumentList;
using epgraph::NodeValue;
using epgraph::SymInt;
using epgraph::TensorMeta;
using nlohmann::json;

const std::string kCases = std::string(EPGRAPH_SOURCE_DIR) + "/tests/data/infer_meta_cases.json";

json load_cases() {
  std::ifstream in(kCases);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

std::vector<SymInt> ints(const json& a) {
  std::vector<SymInt> out;
  for (const json& v : a) out.emplace_back(v.get<std::int64_t>());
  return out;
}

TensorMeta meta_from(const json& j) {
  TensorMeta m;
  m.dtype = static_cast<epgraph::dtype>(j.at("dtype").get<int>());
  m.sizes = ints(j.at("sizes"));
  m.strides = ints(j.at("strides"));
  m.storage_offset = j.at("storage_offset").get<std::int64_t>();
  return m;
}

// Decodes one argument of the case format (see tools/gen_infer_meta_cases.py); tensors become
// placeholders carrying their metadata.
Argument decode(epgraph::Graph& g, const json& a) {
  // (Not `*a.items().begin()`: the proxy it dereferences is a temporary; ASan caught it.)
  const auto first = a.begin();
  const std::string kind = first.key();
  const json& v = first.value();
  if (kind == "tensor") {
    epgraph::Node* p = g.placeholder("x");
    p->mutable_meta().val = meta_from(v);
    return Argument(p);
  }
  if (kind == "none") return epgraph::none;
  if (kind == "bool") return Argument(v.get<bool>());
  if (kind == "int") return Argument(v.get<std::int64_t>());
  if (kind == "float") {
    if (v.is_string()) {
      const double inf = std::numeric_limits<double>::infinity();
      return Argument(v.get<std::string>() == "inf" ? inf : -inf);
    }
    return Argument(v.get<double>());
  }
  if (kind == "dtype") return Argument(static_cast<epgraph::dtype>(v.get<int>()));
  if (kind == "device") return Argument(epgraph::Device{v.get<std::string>(), std::nullopt});
  if (kind == "layout") return Argument(static_cast<epgraph::Layout>(v.get<int>()));
  if (kind == "memory_format") {
    return Argument(static_cast<epgraph::MemoryFormat>(v.get<int>()));
  }
  if (kind == "str") return Argument(v.get<std::string>());
  if (kind == "list") {
    ArgumentList l;
    for (const json& e : v) l.push_back(decode(g, e));
    return Argument(std::move(l));
  }
  FAIL("unknown argument kind " << kind);
  return epgraph::none;
}

std::string str(const std::vector<SymInt>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    out += (i ? ", " : "");
    out += v[i].index() == 0 ? std::to_string(std::get<std::int64_t>(v[i]))
                             : std::get<epgraph::SymExpr>(v[i]).expr;
  }
  return out + "]";
}

std::vector<SymInt> contiguous_of(const std::vector<SymInt>& sizes) {
  std::vector<std::int64_t> s;
  for (const SymInt& v : sizes) s.push_back(std::get<std::int64_t>(v));
  std::vector<SymInt> out;
  for (std::int64_t v : epgraph::contiguous_strides(s)) out.emplace_back(v);
  return out;
}

// Compares epgraph's value with torch's; returns the differences (empty when equal).
std::string compare(const NodeValue& got, const json& want, bool exact, const std::string& at) {
  if (want.contains("tuple")) {
    const NodeValue::List* l = got.elements();
    if (l == nullptr) return at + ": expected a tuple, got " + got.describe() + "\n";
    if (l->size() != want["tuple"].size()) {
      return at + ": expected " + std::to_string(want["tuple"].size()) + " values, got " +
             std::to_string(l->size()) + "\n";
    }
    std::string out;
    for (std::size_t i = 0; i < l->size(); ++i) {
      out += compare((*l)[i], want["tuple"][i], exact, at + "[" + std::to_string(i) + "]");
    }
    return out;
  }
  if (want.contains("none")) {
    return got.is_none() ? "" : at + ": expected None, got " + got.describe() + "\n";
  }
  const TensorMeta* t = got.tensor();
  if (t == nullptr) return at + ": expected a tensor, got " + got.describe() + "\n";
  const TensorMeta w = meta_from(want);
  std::string out;
  if (t->dtype != w.dtype) {
    out += at + ": dtype " + std::string(epgraph::dtype_name(t->dtype)) + ", torch " +
           std::string(epgraph::dtype_name(w.dtype)) + "\n";
  }
  if (!(t->sizes == w.sizes))
    out += at + ": sizes " + str(t->sizes) + ", torch " + str(w.sizes) + "\n";
  if (exact) {
    if (!(t->strides == w.strides)) {
      out += at + ": strides " + str(t->strides) + ", torch " + str(w.strides) + "\n";
    }
    if (!(t->storage_offset == w.storage_offset)) {
      out += at + ": storage offset " + str({t->storage_offset}) + ", torch " +
             str({w.storage_offset}) + "\n";
    }
  } else if (t->sizes == w.sizes) {
    if (!(t->strides == contiguous_of(t->sizes))) {
      out += at + ": strides " + str(t->strides) + " are not the documented contiguous ones\n";
    }
    if (!(t->storage_offset == SymInt{std::int64_t{0}})) out += at + ": storage offset is not 0\n";
  }
  if (t->layout != epgraph::Layout::Strided || t->requires_grad || t->device != epgraph::Device{}) {
    out += at + ": layout/requires_grad/device differ from strided/false/cpu\n";
  }
  return out;
}

}  // namespace

TEST_CASE("infer_meta: the metadata torch 2.13 computes, case by case", "[infer_meta][torch]") {
  epgraph::register_quantized_decomposed_schemas();
  const json doc = load_cases();
  REQUIRE(doc.at("torch_version") == "2.13.0");
  const json& cases = doc.at("cases");
  REQUIRE(cases.size() >= 150);
  std::set<std::string> targets;
  std::size_t passed = 0, exact = 0;
  for (const json& c : cases) {
    const std::string name = c.at("name");
    const std::string target = c.at("target");
    INFO("case " << name << " (" << target << ")");
    epgraph::Graph g;
    ArgumentList args;
    for (const json& a : c.at("args")) args.push_back(decode(g, a));
    epgraph::Kwargs kwargs;
    for (const auto& [k, v] : c.at("kwargs").items()) kwargs.emplace_back(k, decode(g, v));
    epgraph::Node* n = g.call_function(target, std::move(args), std::move(kwargs), "n");
    const bool is_exact = c.at("strides") == "exact";
    std::string diff;
    try {
      diff = compare(epgraph::infer_meta(*n), c.at("out"), is_exact, name);
    } catch (const std::exception& e) {
      diff = name + ": threw " + e.what() + "\n";
    }
    CHECK(diff == "");
    if (diff.empty()) {
      ++passed;
      exact += is_exact ? 1 : 0;
    }
    targets.insert(target);
  }
  CHECK(passed == cases.size());
  WARN("infer_meta: " << passed << " of " << cases.size() << " torch cases agree (" << exact
                      << " with exact strides) over " << targets.size() << " op overloads");
}

TEST_CASE("infer_meta: set_inferred_meta stores the value on torch's cases", "[infer_meta]") {
  const json doc = load_cases();
  // the first case: a unary op
  const json& c = doc.at("cases").at(0);
  epgraph::Graph g;
  ArgumentList args;
  for (const json& a : c.at("args")) args.push_back(decode(g, a));
  epgraph::Node* n = g.call_function(c.at("target").get<std::string>(), std::move(args));
  NodeValue& v = epgraph::set_inferred_meta(*n);
  CHECK(&v == &n->meta().val);
  CHECK(compare(v, c.at("out"), true, "stored") == "");
}

// --- symbolic sizes: tests/data/infer_meta_sym_cases.json (torch's FakeTensorMode with a ShapeEnv;
// see tools/gen_infer_meta_cases.py) --------------------------------------------------------------

namespace {

const std::string kSymCases =
    std::string(EPGRAPH_SOURCE_DIR) + "/tests/data/infer_meta_sym_cases.json";

SymInt sym_case_size(const json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  epgraph::SymExpr e;
  e.expr = v.at("expr").get<std::string>();
  if (!v.at("hint").is_null()) e.hint = v.at("hint").get<std::int64_t>();
  return e;
}

std::vector<SymInt> sym_case_sizes(const json& a) {
  std::vector<SymInt> out;
  for (const json& v : a) out.push_back(sym_case_size(v));
  return out;
}

TensorMeta sym_case_meta(const json& j) {
  TensorMeta m;
  m.dtype = static_cast<epgraph::dtype>(j.at("dtype").get<int>());
  m.sizes = sym_case_sizes(j.at("sizes"));
  m.strides = sym_case_sizes(j.at("strides"));
  m.storage_offset = sym_case_size(j.at("storage_offset"));
  return m;
}

Argument sym_case_decode(epgraph::Graph& g, const json& a) {
  const auto first = a.begin();
  const std::string kind = first.key();
  const json& v = first.value();
  if (kind == "tensor") {
    epgraph::Node* p = g.placeholder("x");
    p->mutable_meta().val = sym_case_meta(v);
    return Argument(p);
  }
  if (kind == "symint") {
    epgraph::Node* p = g.placeholder("n");
    p->mutable_meta().val = epgraph::SymIntValue{sym_case_size(v)};
    return Argument(p);
  }
  if (kind == "list") {
    ArgumentList l;
    for (const json& e : v) l.push_back(sym_case_decode(g, e));
    return Argument(std::move(l));
  }
  return decode(g, a);
}

// Sizes compared as torch's sympy compares them: the same expression (canonical form) and hint.
bool sym_case_same(const SymInt& got, const SymInt& want) {
  if (got.index() != want.index()) return false;
  if (got.index() == 0) return got == want;
  const auto& g = std::get<epgraph::SymExpr>(got);
  const auto& w = std::get<epgraph::SymExpr>(want);
  return epgraph::sym::parse(g.expr) == epgraph::sym::parse(w.expr) && g.hint == w.hint;
}

std::string sym_case_str(const SymInt& s) {
  if (s.index() == 0) return std::to_string(std::get<std::int64_t>(s));
  const auto& e = std::get<epgraph::SymExpr>(s);
  return epgraph::sym::str(epgraph::sym::parse(e.expr)) +
         (e.hint ? " (hint " + std::to_string(*e.hint) + ")" : " (no hint)");
}

std::string sym_case_compare_sizes(const std::vector<SymInt>& got, const std::vector<SymInt>& want,
                                   const std::string& what) {
  bool same = got.size() == want.size();
  for (std::size_t i = 0; same && i < got.size(); ++i) same = sym_case_same(got[i], want[i]);
  if (same) return "";
  std::string g, w;
  for (const SymInt& s : got) g += (g.empty() ? "" : ", ") + sym_case_str(s);
  for (const SymInt& s : want) w += (w.empty() ? "" : ", ") + sym_case_str(s);
  return what + " [" + g + "], torch [" + w + "]\n";
}

std::string sym_case_compare(const NodeValue& got, const json& want, const std::string& at) {
  if (want.contains("tuple")) {
    const NodeValue::List* l = got.elements();
    if (l == nullptr || l->size() != want["tuple"].size()) {
      return at + ": expected a tuple of " + std::to_string(want["tuple"].size()) + ", got " +
             got.describe() + "\n";
    }
    std::string out;
    for (std::size_t i = 0; i < l->size(); ++i) {
      out += sym_case_compare((*l)[i], want["tuple"][i], at + "[" + std::to_string(i) + "]");
    }
    return out;
  }
  if (want.contains("symint")) {
    const epgraph::SymIntValue* s = got.sym_int();
    if (s == nullptr) return at + ": expected a SymInt, got " + got.describe() + "\n";
    return sym_case_compare_sizes({s->value}, {sym_case_size(want["symint"])}, at + ": value");
  }
  if (want.contains("symbool")) {
    const epgraph::SymBoolValue* s = got.sym_bool();
    if (s == nullptr) return at + ": expected a SymBool, got " + got.describe() + "\n";
    const json& w = want["symbool"];
    if (w.is_boolean()) {
      const bool* b = std::get_if<bool>(&s->value);
      return b != nullptr && *b == w.get<bool>() ? "" : at + ": SymBool differs\n";
    }
    const auto* e = std::get_if<epgraph::SymExpr>(&s->value);
    if (e == nullptr) return at + ": SymBool folded, torch " + w.get<std::string>() + "\n";
    return epgraph::sym::parse(e->expr) == epgraph::sym::parse(w.get<std::string>())
               ? ""
               : at + ": SymBool " + e->expr + ", torch " + w.get<std::string>() + "\n";
  }
  const TensorMeta* t = got.tensor();
  if (t == nullptr) return at + ": expected a tensor, got " + got.describe() + "\n";
  const TensorMeta w = sym_case_meta(want);
  std::string out;
  if (t->dtype != w.dtype) out += at + ": dtype differs\n";
  out += sym_case_compare_sizes(t->sizes, w.sizes, at + ": sizes");
  out += sym_case_compare_sizes(t->strides, w.strides, at + ": strides");
  out += sym_case_compare_sizes({t->storage_offset}, {w.storage_offset}, at + ": storage offset");
  return out;
}

}  // namespace

TEST_CASE("infer_meta: symbolic sizes as torch 2.13's ShapeEnv computes them, case by case",
          "[infer_meta][torch][symbolic]") {
  std::ifstream in(kSymCases);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const json doc = json::parse(text.str());
  REQUIRE(doc.at("torch_version") == "2.13.0");
  const json& cases = doc.at("cases");
  REQUIRE(cases.size() >= 60);
  std::size_t passed = 0;
  for (const json& c : cases) {
    const std::string name = c.at("name");
    INFO("case " << name);
    epgraph::Graph g;
    ArgumentList args;
    for (const json& a : c.at("args")) args.push_back(sym_case_decode(g, a));
    epgraph::Kwargs kwargs;
    for (const auto& [k, v] : c.at("kwargs").items()) kwargs.emplace_back(k, sym_case_decode(g, v));
    epgraph::Node* n =
        g.call_function(c.at("target").get<std::string>(), std::move(args), std::move(kwargs), "n");
    epgraph::sym::Ranges ranges;
    for (const auto& [s, r] : c.at("ranges").items()) {
      epgraph::sym::SymbolRange range;
      if (!r[0].is_null()) range.min_val = r[0].get<std::int64_t>();
      if (!r[1].is_null()) range.max_val = r[1].get<std::int64_t>();
      ranges.emplace(s, range);
    }
    const epgraph::MetaContext symbols(ranges);
    std::string diff;
    try {
      diff = sym_case_compare(epgraph::infer_meta(*n, symbols), c.at("out"), name);
    } catch (const std::exception& e) {
      diff = name + ": threw " + e.what() + "\n";
    }
    CHECK(diff == "");
    passed += diff.empty() ? 1 : 0;
  }
  CHECK(passed == cases.size());
  WARN("infer_meta: " << passed << " of " << cases.size() << " symbolic torch cases agree");
}
