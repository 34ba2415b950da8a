// Limits of the JSON loader: absurd inputs are refused with a clear serialization_error instead
// of exhausting the stack or memory.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/json/json.hpp>
#include <string>

#include "../support/program_builders.hpp"

namespace {

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

}  // namespace

TEST_CASE("limits: JSON nesting deeper than max_json_depth is refused before parsing",
          "[json][limits]") {
  CHECK(epgraph::json::max_json_depth == 512);
  const std::string text =
      epgraph::json::save_exported_program_to_string(epgraph_test::plain_program());
  // 513 levels inside an opaque field (module_call_graph is kept verbatim and re-dumped on save,
  // recursively): refused with the byte offset of the 513th bracket.
  const std::string key = "\"module_call_graph\":[]";
  const std::size_t at = text.find(key);
  REQUIRE(at != std::string::npos);
  const std::size_t value_at = at + key.size() - 2;
  auto with_value = [&](const std::string& value) {
    std::string out = text;
    out.replace(value_at, 2, value);
    return out;
  };
  // The document object and graph_module are levels 1 and 2, so 511 more arrays reach 513.
  const std::string deep = with_value("[" + nested_arrays(510) + "]");
  const std::size_t offending = value_at + 510;
  CHECK_THROWS_AS(epgraph::json::load_exported_program_from_string(deep),
                  epgraph::json::serialization_error);
  CHECK_THROWS_WITH(
      epgraph::json::load_exported_program_from_string(deep),
      "JSON nesting deeper than 512 levels (at byte " + std::to_string(offending) + ")");
  // Exactly 512 levels load, and save back.
  const auto ep =
      epgraph::json::load_exported_program_from_string(with_value("[" + nested_arrays(509) + "]"));
  CHECK(epgraph::json::save_exported_program_to_string(ep).find(nested_arrays(509)) !=
        std::string::npos);
  // A million levels: refused at once (no deep recursion, no large allocation).
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(nested_arrays(1000000)),
                    "JSON nesting deeper than 512 levels (at byte 512)");
  // Brackets inside strings do not count.
  CHECK_NOTHROW(epgraph::json::load_exported_program_from_string(
      with_value("[\"" + std::string(2000, '[') + "\\\"" + std::string(2000, '{') + "\"]")));
}

TEST_CASE("limits: truncated strings and arrays are malformed JSON", "[json][limits]") {
  CHECK_THROWS_AS(epgraph::json::load_exported_program_from_string("{\"schema_version\": \"abc"),
                  epgraph::json::serialization_error);
  CHECK_THROWS_AS(epgraph::json::load_exported_program_from_string("[1, 2, 3"),
                  epgraph::json::serialization_error);
}

// Found by a break test: a model.json starting with a UTF-8 byte order mark loaded (nlohmann
// skips it), `pt2_edit validate` said OK and `copy` passed it on, while torch.export.load refuses
// it (json.loads: "Unexpected UTF-8 BOM"). Refused, with both parsers.
TEST_CASE("limits: a byte order mark before the JSON text is refused, as torch refuses it",
          "[json][limits]") {
  const std::string text =
      epgraph::json::save_exported_program_to_string(epgraph_test::plain_program());
  CHECK_NOTHROW(epgraph::json::load_exported_program_from_string(text));
  const std::string message =
      "the text starts with a UTF-8 byte order mark, which torch.export.load refuses (json.loads: "
      "\"Unexpected UTF-8 BOM\"); JSON text must not start with one (RFC 8259)";
  CHECK_THROWS_MATCHES(epgraph::json::load_exported_program_from_string("\xEF\xBB\xBF" + text),
                       epgraph::json::serialization_error, Catch::Message(message));
  using epgraph::json::detail::parser_backend;
  for (parser_backend b : {parser_backend::nlohmann, parser_backend::simdjson}) {
    CHECK_THROWS_MATCHES(
        epgraph::json::detail::load_program<epgraph::HostTensor>("\xEF\xBB\xBF" + text, b),
        epgraph::json::serialization_error, Catch::Message(message));
  }
}

TEST_CASE("limits: a number too large for a double is malformed JSON", "[json][limits]") {
  // nlohmann throws out_of_range (406), not parse_error, for such a number: it escaped the
  // loader as a non-epgraph exception (fuzz_json regression number_overflow.json).
  const std::string huge = std::string(50, '1') + ".1e1911";
  CHECK_THROWS_AS(epgraph::json::load_exported_program_from_string(huge),
                  epgraph::json::serialization_error);
  CHECK_THROWS_WITH(
      epgraph::json::load_exported_program_from_string(huge),
      "malformed JSON: [json.exception.out_of_range.406] number overflow parsing '" + huge + "'");
  // The same inside a program's metadata.
  std::string text = epgraph::json::save_exported_program_to_string(epgraph_test::plain_program());
  const std::string key = "\"storage_offset\":{\"as_int\":0}";
  const std::size_t at = text.find(key);
  REQUIRE(at != std::string::npos);
  text.replace(at, key.size(), "\"storage_offset\":{\"as_int\":1e400}");
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(text),
                    "malformed JSON: [json.exception.out_of_range.406] number overflow parsing "
                    "'1e400'");
}

TEST_CASE("limits: declared tensor sizes are metadata only when loading JSON", "[json][limits]") {
  // A JSON record carries no data: sizes whose byte count overflows int64 (2^62 float32
  // elements) load as metadata and allocate nothing, as torch's fake tensors do. An element
  // count beyond int64 is refused, as torch.empty_strided refuses it (this test loaded
  // [INT64_MAX, INT64_MAX] before, which torch.export.load refuses).
  const std::string plain =
      epgraph::json::save_exported_program_to_string(epgraph_test::plain_program());
  const std::string sizes = "\"sizes\":[{\"as_int\":2},{\"as_int\":3}]";
  const std::size_t at = plain.find(sizes);
  REQUIRE(at != std::string::npos);
  std::string text = plain;
  text.replace(at, sizes.size(), "\"sizes\":[{\"as_int\":4611686018427387904},{\"as_int\":1}]");
  const auto ep = epgraph::json::load_exported_program_from_string(text);
  const auto& meta = *ep.graph().find_node("x")->meta().val.tensor();
  CHECK(std::get<std::int64_t>(meta.sizes[0]) == 4611686018427387904);
  CHECK(std::get<std::int64_t>(meta.sizes[1]) == 1);
  text = plain;
  text.replace(at, sizes.size(),
               "\"sizes\":[{\"as_int\":9223372036854775807},{\"as_int\":9223372036854775807}]");
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(text),
                    "graph_module.graph.tensor_values.x.sizes: numel: integer multiplication "
                    "overflow (sizes [9223372036854775807, 9223372036854775807])");
}

TEST_CASE("limits: a name holding an escaped NUL does not cut the error message short",
          "[json][limits]") {
  // Regression: "\u0000" is a legal JSON escape, so a name may hold a NUL; what() is a C string,
  // and the message stopped at the name ("... value 'gh"), hiding the rest. Errors now write the
  // NUL as \u0000.
  std::string text = epgraph::json::save_exported_program_to_string(epgraph_test::plain_program());
  const std::string from = R"("outputs":[{"as_tensor":{"name":"x"}}])";
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), R"("outputs":[{"as_tensor":{"name":"gh\u0000st"}}])");
  const std::string expected =
      R"(graph_module.graph.outputs[0].as_tensor: value 'gh\u0000st' is not produced by any )"
      "graph input or node";
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(text), expected);
  CHECK(std::string(epgraph::value_error(std::string("a\0b\0", 4)).what()) == "a\\u0000b\\u0000");
}

TEST_CASE("limits: a NUL byte anywhere is malformed JSON, not the end of the text",
          "[json][limits]") {
  // Regression: nlohmann's lexer reads a raw NUL as the end of input, so a program followed by
  // "\0" and garbage loaded silently (garbage dropped), and "\0{}" was reported as an
  // unexpected end of input at column 1. torch's json.loads refuses both ("Extra data").
  const std::string text =
      epgraph::json::save_exported_program_to_string(epgraph_test::plain_program());
  const std::string trailing = text + std::string(1, '\0') + "this is garbage {{{{";
  CHECK_THROWS_AS(epgraph::json::load_exported_program_from_string(trailing),
                  epgraph::json::serialization_error);
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(trailing),
                    "malformed JSON: NUL byte at byte " + std::to_string(text.size()));
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(std::string("\0{}", 3)),
                    "malformed JSON: NUL byte at byte 0");
  // Inside a string (unescaped) it is refused too; the escaped form \u0000 is ordinary text.
  std::string in_string = text;
  const std::size_t quote = in_string.find("\"graph_module\"");
  REQUIRE(quote != std::string::npos);
  in_string.insert(quote + 1, 1, '\0');
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(in_string),
                    "malformed JSON: NUL byte at byte " + std::to_string(quote + 1));
  // Without the NUL the same text loads.
  CHECK_NOTHROW(epgraph::json::load_exported_program_from_string(text));
}
