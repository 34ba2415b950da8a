// The loader reads graph_module.graph.tensor_values while it parses (TensorValuesSink in
// json/deserialize.hpp) instead of keeping that part of the tree. These tests pin that this
// changes nothing a caller can see: duplicate keys keep ordered_json's rule (the last value),
// a bad entry is reported where it was before (after a too-new schema version, for instance),
// duplicate keys above tensor_values take the value ordered_json takes, and nesting errors name
// the same byte.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/json/json.hpp>
#include <string>

#include "../support/program_builders.hpp"

namespace {

const std::string x_meta =
    R"({"dtype":7,"sizes":[{"as_int":2},{"as_int":3}],"requires_grad":false,)"
    R"("device":{"type":"cpu","index":null},"strides":[{"as_int":3},{"as_int":1}],)"
    R"("storage_offset":{"as_int":0},"layout":7})";

// plain_program() saved: one user input x (float32 [2, 3]) returned as is.
std::string plain_text() {
  return epgraph::json::save_exported_program_to_string(epgraph_test::plain_program());
}

// `text` with the first `from` replaced by `to` (which must be found).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string sizes_of(const epgraph::ExportedProgram<epgraph::HostTensor>& ep) {
  std::string out;
  for (const auto& s : ep.graph().find_node("x")->meta().val.tensor()->sizes) {
    out += std::to_string(std::get<std::int64_t>(s)) + " ";
  }
  return out;
}

}  // namespace

TEST_CASE("tensor_values read while parsing: same program as before", "[json]") {
  const std::string text = plain_text();
  REQUIRE(text.find("\"tensor_values\":{\"x\":" + x_meta + "}") != std::string::npos);
  const auto ep = epgraph::json::load_exported_program_from_string(text);
  CHECK(sizes_of(ep) == "2 3 ");
  CHECK(epgraph::json::save_exported_program_to_string(ep) == text);
}

TEST_CASE("tensor_values with a duplicate name: the last value, as ordered_json keeps it",
          "[json]") {
  const std::string other = replaced(x_meta, "{\"as_int\":2}", "{\"as_int\":5}");
  const std::string text =
      replaced(plain_text(), "\"x\":" + x_meta, "\"x\":" + x_meta + ",\"x\":" + other);
  const auto ep = epgraph::json::load_exported_program_from_string(text);
  CHECK(sizes_of(ep) == "5 3 ");
  // A bad first value is replaced by a good last one: no error, as with the whole tree.
  const std::string bad = replaced(x_meta, "\"dtype\":7", "\"dtype\":99");
  const auto ep2 = epgraph::json::load_exported_program_from_string(
      replaced(plain_text(), "\"x\":" + x_meta, "\"x\":" + bad + ",\"x\":" + other));
  CHECK(sizes_of(ep2) == "5 3 ");
  // And a bad last value is reported.
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(replaced(
                        plain_text(), "\"x\":" + x_meta, "\"x\":" + other + ",\"x\":" + bad)),
                    "graph_module.graph.tensor_values.x.dtype: unknown ScalarType 99");
}

TEST_CASE("a bad tensor_values entry is reported after the checks that come first", "[json]") {
  const std::string bad = replaced(x_meta, "\"dtype\":7", "\"dtype\":99");
  const std::string text = replaced(plain_text(), "\"x\":" + x_meta, "\"x\":" + bad);
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(text),
                    "graph_module.graph.tensor_values.x.dtype: unknown ScalarType 99");
  // schema_version comes after graph_module in the text but is checked first.
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(
                        replaced(text, "\"major\":8", "\"major\":99")),
                    "schema_version: schema major version 99 is newer than the newest supported "
                    "(8)");
  // The first bad entry in the text is the one reported.
  const std::string text2 = replaced(
      plain_text(), "\"x\":" + x_meta,
      "\"a\":" + replaced(x_meta, "\"layout\":7", "\"layout\":\"strided\"") + ",\"x\":" + bad);
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(text2),
                    "graph_module.graph.tensor_values.a.layout: expected an integer, got string");
}

TEST_CASE("a duplicate graph_module: the last one is loaded, as ordered_json keeps it", "[json]") {
  const std::string text = plain_text();
  const std::size_t gm = text.find("\"graph_module\":");
  const std::size_t end = text.find(",\"opset_version\"");
  REQUIRE(gm != std::string::npos);
  REQUIRE(end != std::string::npos);
  const std::string module = text.substr(gm, end - gm);
  // A first graph_module whose tensor_values entry is bad, then the good one.
  const std::string broken = replaced(module, "\"x\":" + x_meta,
                                      "\"x\":" + replaced(x_meta, "\"dtype\":7", "\"dtype\":99"));
  const std::string doubled = "{" + broken + "," + text.substr(1);
  const auto ep = epgraph::json::load_exported_program_from_string(doubled);
  CHECK(sizes_of(ep) == "2 3 ");
  // The other way round: the bad one is the last, and is reported.
  const std::string bad_last = "{" + text.substr(1, end - 1) + "," + broken + text.substr(end);
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(bad_last),
                    "graph_module.graph.tensor_values.x.dtype: unknown ScalarType 99");
}
