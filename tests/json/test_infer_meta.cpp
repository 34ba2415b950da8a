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
    p->meta().val = meta_from(v);
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
