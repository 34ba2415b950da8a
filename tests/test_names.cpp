// Tests for FX's _Namespace rules (names.hpp). Expected values were produced by
// torch.fx.graph._Namespace in torch 2.13 for the same sequence of requests.
#include <catch2/catch.hpp>
#include <epgraph/ir/names.hpp>
#include <string>
#include <utility>
#include <vector>

TEST_CASE("sanitize_name mirrors FX's identifier repair", "[names]") {
  CHECK(epgraph::sanitize_name("block1-0_weight") == "block1_0_weight");
  CHECK(epgraph::sanitize_name("0_cache") == "_0_cache");
  CHECK(epgraph::sanitize_name("a--b") == "a_b");
  CHECK(epgraph::sanitize_name("") == "_unnamed");
  CHECK(epgraph::sanitize_name("linear.weight") == "linear_weight");
  CHECK(epgraph::sanitize_name("caf\xc3\xa9") == "caf_");
  CHECK(epgraph::sanitize_name("9") == "_9");
}

TEST_CASE("split_name follows FX's _name_regex", "[names]") {
  auto parts = epgraph::split_name("add_12");
  CHECK(parts.base == "add");
  CHECK(parts.number == "12");
  parts = epgraph::split_name("x__3");
  CHECK(parts.base == "x_");
  CHECK(parts.number == "3");
  parts = epgraph::split_name("_1");
  CHECK(parts.base == "_1");
  CHECK(parts.number.empty());
  parts = epgraph::split_name("print_");
  CHECK(parts.base == "print_");
  CHECK(parts.number.empty());
  parts = epgraph::split_name("a_1_2");
  CHECK(parts.base == "a_1");
  CHECK(parts.number == "2");
}

TEST_CASE("reserved names are Python keywords, builtins and FX's custom builtins", "[names]") {
  CHECK(epgraph::is_reserved_name("input"));
  CHECK(epgraph::is_reserved_name("list"));
  CHECK(epgraph::is_reserved_name("class"));
  CHECK(epgraph::is_reserved_name("torch"));
  CHECK(epgraph::is_reserved_name("inf"));
  CHECK(epgraph::is_reserved_name("__doc__"));
  CHECK_FALSE(epgraph::is_reserved_name("None"));  // FX maps it to None: not treated as reserved
  CHECK_FALSE(epgraph::is_reserved_name("x"));
  CHECK_FALSE(epgraph::is_reserved_name("__class__"));
  CHECK_FALSE(epgraph::is_reserved_name("_"));
}

TEST_CASE("Namespace hands out the names torch 2.13 hands out", "[names]") {
  epgraph::Namespace ns;
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"x", "x"},
      {"x", "x_1"},
      {"x", "x_2"},
      {"0_cache", "_0_cache"},
      {"block1-0_weight", "block1_0_weight"},
      {"input", "input_1"},
      {"add_1", "add_1"},
      {"add", "add"},
      {"add", "add_2"},
      {"add_1", "add_3"},
      {"a--b", "a_b"},
      {"", "_unnamed"},
      {"list", "list_1"},
      {"print_", "print_"},
      {"x_01", "x_01"},
      {"x_1", "x_3"},
      {"foo_2_3", "foo_2_3"},
      {"__class__", "__class__"},
      {"_", "_"},
      {"None", "None"},
      {"None", "None_1"},
      {"__doc__", "__doc___1"},
      {"__2", "__2"},
      {"_1", "_1"},
      {"a__1", "a__1"},
  };
  for (const auto& [request, name] : expected) {
    INFO("request '" << request << "'");
    CHECK(ns.create_name(request) == name);
  }
  CHECK(ns.size() == expected.size());
}

TEST_CASE("Namespace counts suffixes of any length like Python ints", "[names]") {
  epgraph::Namespace ns;
  CHECK(ns.create_name("x_99999999999999999999999") == "x_99999999999999999999999");
  CHECK(ns.create_name("x") == "x");
  CHECK(ns.create_name("x") == "x_100000000000000000000000");
}

TEST_CASE("propose does not take the name, uncommit undoes a commit", "[names]") {
  epgraph::Namespace ns;
  ns.create_name("x");
  const epgraph::Namespace before = ns;
  auto p = ns.propose("x");
  CHECK(p.name == "x_1");
  CHECK(ns == before);
  ns.commit(p);
  CHECK(ns.is_used("x_1"));
  CHECK_FALSE(ns == before);
  ns.uncommit(p);
  CHECK(ns == before);
  CHECK(ns.create_name("x") == "x_1");

  auto fresh = ns.propose("brand_new");
  ns.commit(fresh);
  ns.uncommit(fresh);
  CHECK_FALSE(ns.is_used("brand_new"));
  CHECK(ns.propose("brand_new").name == "brand_new");
}
