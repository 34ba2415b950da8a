// The two parser backends of the JSON reader (nlohmann, simdjson) give the same programs and
// errors. SPDX-License-Identifier: BSD-3-Clause
//
// load_exported_program_from_string parses with simdjson when epgraph::json links it
// (EPGRAPH_JSON_HAS_SIMDJSON) and with nlohmann's parser otherwise; the reader above the parser is
// one. Every program file the json tests read (the golden files, the example, the fuzz_json
// regressions, the real corpus ../shared/corpus/real when present), every document obtained by
// removing or retyping one member of them, and a table of malformed and edge-case texts are
// loaded through both backends: the saved text (or the error message) must be byte-identical.
// Without simdjson both backends are nlohmann's and the comparisons are skipped with a warning.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <epgraph/json/json.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "../support/json_backend_outcome.hpp"

namespace {

using epgraph::json::detail::parser_backend;
using ojson = nlohmann::ordered_json;

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// "ok:" + the saved text of the program loaded from `text`, or the error (json_backend_outcome).
std::string load_outcome(std::string_view text, parser_backend backend) {
  return epgraph_test::json_backend_outcome(text, backend);
}

// The kinds of every value of `j` in document order ('i'nteger, 'f'loat, 's'tring, ...), which
// dump() does not tell apart for every value (1 and 1.0 differ, but the kinds make it explicit).
void kinds(const ojson& j, std::string& out) {
  if (j.is_object()) {
    out.push_back('{');
    for (auto it = j.begin(); it != j.end(); ++it) kinds(it.value(), out);
    out.push_back('}');
  } else if (j.is_array()) {
    out.push_back('[');
    for (const auto& x : j) kinds(x, out);
    out.push_back(']');
  } else if (j.is_number_integer()) {
    out.push_back('i');
  } else if (j.is_number_float()) {
    out.push_back('f');
  } else if (j.is_string()) {
    out.push_back('s');
  } else if (j.is_boolean()) {
    out.push_back('b');
  } else {
    out.push_back('n');
  }
}

// The tree parse_document makes of `text` (its dump and value kinds), or "error:" + the message.
std::string parse_outcome(std::string_view text, parser_backend backend) {
  epgraph::json::detail::ParsedDocument parsed;
  try {
    epgraph::json::detail::parse_document(text, parsed, backend);
  } catch (const epgraph::json::serialization_error& e) {
    return std::string("error:") + e.what();
  }
#if EPGRAPH_JSON_HAS_SIMDJSON
  // The nodes simdjson's document keeps (the tree holds an empty array there), as trees.
  if (parsed.nodes != nullptr) {
    ojson& nodes = parsed.doc["graph_module"]["graph"]["nodes"];
    REQUIRE(nodes == ojson::array());
    epgraph::json::detail::OrderedDomBuilder builder;
    for (const simdjson::dom::element e : *parsed.nodes) {
      nodes.push_back(parsed.feeder->tree(e, builder));
    }
  }
#endif
  std::string out = "ok:" + parsed.doc.dump() + " kinds:";
  kinds(parsed.doc, out);
  return out;
}

bool have_simdjson() {
  if (EPGRAPH_JSON_HAS_SIMDJSON) return true;
  WARN("epgraph::json was built without simdjson: both backends are nlohmann's");
  return false;
}

// Every program file the json tests read.
std::vector<std::filesystem::path> program_files() {
  namespace fs = std::filesystem;
  const fs::path src(EPGRAPH_SOURCE_DIR);
  std::vector<fs::path> out{src / "examples/data/decoder_block.json"};
  for (const fs::path& dir :
       {src / "tests/data/json_golden", src / "tests/fuzz/regressions/fuzz_json",
        src / "../shared/corpus/real"}) {
    if (!fs::is_directory(dir)) continue;  // the corpus is optional
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

// Documents derived from `doc`, each with one member removed or its value replaced by a value of
// another kind, at every object of the first `max_depth` levels (the reader's error paths).
void mutations(const ojson& doc, std::vector<std::string>& out, std::size_t max_depth) {
  std::vector<std::vector<std::string>> paths;  // JSON pointers' tokens of the objects visited
  std::vector<std::pair<std::vector<std::string>, const ojson*>> todo{{{}, &doc}};
  while (!todo.empty()) {
    auto [path, j] = todo.back();
    todo.pop_back();
    if (path.size() >= max_depth) continue;
    if (j->is_object()) {
      for (auto it = j->begin(); it != j->end(); ++it) {
        auto child = path;
        child.push_back(it.key());
        paths.push_back(child);
        todo.emplace_back(child, &it.value());
      }
    } else if (j->is_array()) {
      for (std::size_t i = 0; i < j->size() && i < 3; ++i) {
        auto child = path;
        child.push_back(std::to_string(i));
        paths.push_back(child);
        todo.emplace_back(child, &(*j)[i]);
      }
    }
  }
  for (const auto& p : paths) {
    std::string pointer;
    for (const auto& t : p) {
      pointer += '/';
      for (const char c : t)
        pointer += c == '~' ? std::string("~0") : c == '/' ? "~1" : std::string(1, c);
    }
    const ojson::json_pointer ptr(pointer);
    for (int kind = 0; kind < 4; ++kind) {
      ojson m = doc;
      ojson& parent = m[ptr.parent_pointer()];
      if (kind == 0) {
        if (parent.is_object()) parent.erase(p.back());
        if (parent.is_array()) parent.erase(std::stoul(p.back()));
      } else {
        m[ptr] = kind == 1 ? ojson("x") : kind == 2 ? ojson(-7) : ojson(nullptr);
      }
      out.push_back(m.dump());
    }
  }
}

}  // namespace

TEST_CASE("json backends: the simdjson feeder reads what nlohmann reads and refuses the rest",
          "[json][backends]") {
#if EPGRAPH_JSON_HAS_SIMDJSON
  using epgraph::json::detail::OrderedDomBuilder;
  using epgraph::json::detail::SimdjsonFeeder;
  SimdjsonFeeder feeder;
  auto fed = [&](std::string_view text) {
    OrderedDomBuilder builder;
    builder.limit_depth(epgraph::json::max_json_depth);
    if (!feeder.feed(text, builder)) return std::string("refused");
    return builder.take().dump();
  };
  // Read like nlohmann: the last of duplicate keys wins at the first key's position.
  CHECK(fed(R"({"a":1,"b":[true,null,-2,2.5,"s"],"a":3})") ==
        R"({"a":3,"b":[true,null,-2,2.5,"s"]})");
  CHECK(fed(R"("\u00e9\ud83d\ude00")") == "\"\u00e9\U0001F600\"");
  CHECK(fed("18446744073709551615") == "18446744073709551615");
  CHECK(fed("-9223372036854775808") == "-9223372036854775808");
  CHECK(fed("1E2") == "100.0");
  // Left to nlohmann: what simdjson refuses or would read differently.
  CHECK(fed("18446744073709551616") == "refused");  // nlohmann: a float
  CHECK(fed(R"(["\udc00"])") == "refused");         // a lone surrogate: nlohmann refuses it
  CHECK(fed("[1,]") == "refused");
  CHECK(fed("\xEF\xBB\xBF{}") == "refused");  // a byte order mark, which nlohmann skips
  CHECK(fed(std::string(600, '[') + std::string(600, ']')) == "refused");
#else
  WARN("epgraph::json was built without simdjson");
#endif
}

TEST_CASE("json backends: every program file loads to the same saved text", "[json][backends]") {
  if (!have_simdjson()) return;
  const auto files = program_files();
  CHECK(files.size() >= 14);  // the example, 10 golden files, 3 fuzz regressions
  for (const auto& file : files) {
    INFO(file.string());
    const std::string text = read_text(file);
    const std::string simd = load_outcome(text, parser_backend::simdjson);
    CHECK(simd == load_outcome(text, parser_backend::nlohmann));
    CHECK(parse_outcome(text, parser_backend::simdjson) ==
          parse_outcome(text, parser_backend::nlohmann));
  }
}

TEST_CASE("json backends: documents with a member removed or retyped give the same errors",
          "[json][backends]") {
  if (!have_simdjson()) return;
  const std::filesystem::path src(EPGRAPH_SOURCE_DIR);
  std::size_t errors = 0;
  std::size_t variants = 0;
  for (const char* name : {"tests/data/json_golden/awkward.json",
                           "tests/data/json_golden/tokens_with_user_output.json",
                           "tests/data/json_golden/constants.json"}) {
    std::vector<std::string> docs;
    mutations(ojson::parse(read_text(src / name)), docs, 5);
    for (const auto& d : docs) {
      INFO(name << ": " << d.substr(0, 300));
      const std::string simd = load_outcome(d, parser_backend::simdjson);
      REQUIRE(simd == load_outcome(d, parser_backend::nlohmann));
      errors += simd.rfind("error:", 0) == 0 ? 1 : 0;
      ++variants;
    }
  }
  // Most variants are refused (the comparison covers the reader's error paths).
  CHECK(variants > 300);
  CHECK(errors > variants / 2);
}

TEST_CASE("json backends: malformed and edge-case texts give the same values and errors",
          "[json][backends]") {
  if (!have_simdjson()) return;
  const std::string program =
      read_text(std::filesystem::path(EPGRAPH_SOURCE_DIR) / "tests/data/json_golden/plain.json");
  const std::vector<std::string> texts = {
      "",
      " ",
      "{",
      "[1]",
      "{} x",
      "{\"a\":1,}",
      "{\"a\" 1}",
      "nul",
      "\xEF\xBB\xBF{\"a\":1}",
      "{\"a\":\"\x01\"}",
      "{\"a\":\"\\x\"}",
      "{\"a\":\"\\ud800\"}",
      "{\"a\":\"\\udc00\"}",
      "{\"a\":\"\\ud800\\u0041\"}",
      "{\"a\":\"\xC3\"}",
      "{\"a\":\"\xED\xA0\x80\"}",
      "{\"a\":01}",
      "{\"a\":-}",
      "{\"a\":1.}",
      "{\"a\":1e400}",
      "{\"a\":-1e400}",
      "{\"a\":1e-400}",
      "{\"a\":-0}",
      "{\"a\":-0.0}",
      "{\"a\":5e-324}",
      "{\"a\":0.1,\"b\":1E5,\"c\":123456789012345678901234567890}",
      "{\"a\":9223372036854775807,\"b\":9223372036854775808,\"c\":18446744073709551615}",
      "{\"a\":18446744073709551616,\"b\":-9223372036854775809}",
      "{\"a\":NaN}",
      "{\"a\":[Infinity,-Infinity]}",
      "{\"a\":1,\"a\":2,\"b\":{\"c\":1,\"c\":[2]}}",
      "{\"\\u00e9\\n\\\"\\/\":\"\\ud83d\\ude00\"}",
      std::string(511, '[') + std::string(511, ']'),
      std::string(512, '[') + std::string(512, ']'),
      std::string(513, '[') + std::string(513, ']'),
      std::string(2000, '[') + std::string(2000, ']'),
      std::string(600, '[') + "x" + std::string(600, ']'),
      program,
      program.substr(0, program.size() / 2),
      program + "x",
  };
  // The program with duplicate keys in its streamed tensor_values and elsewhere.
  ojson doc = ojson::parse(program);
  const std::string tv = "\"tensor_values\":{";
  std::string dup = doc.dump();
  const std::size_t at = dup.find(tv);
  REQUIRE(at != std::string::npos);
  for (const std::string& member : {std::string("\"x\":{},"), std::string("\"x\":1,\"x\":{},")}) {
    std::string d = dup;
    d.insert(at + tv.size(), member);
    std::vector<std::string> more = {d, "{\"schema_version\":1," + d.substr(1)};
    for (const auto& text : more) {
      INFO(text.substr(0, 200));
      CHECK(load_outcome(text, parser_backend::simdjson) ==
            load_outcome(text, parser_backend::nlohmann));
    }
  }
  std::size_t refused = 0;
  for (const auto& text : texts) {
    INFO(text.substr(0, 200));
    const std::string simd = parse_outcome(text, parser_backend::simdjson);
    CHECK(simd == parse_outcome(text, parser_backend::nlohmann));
    CHECK(load_outcome(text, parser_backend::simdjson) ==
          load_outcome(text, parser_backend::nlohmann));
    refused += simd.rfind("error:", 0) == 0 ? 1 : 0;
  }
  CHECK(refused >= 20);
}

TEST_CASE("json backends: tensor_values entries in every form give the same program or error",
          "[json][backends]") {
  // simdjson's backend reads the entries straight from its document (tensor_meta_from_json_at on
  // a SimdValue) and leaves to the tree only what needs_tree sends back: every form below must
  // load (or fail) as nlohmann's backend loads it.
  if (!have_simdjson()) return;
  const std::string program =
      read_text(std::filesystem::path(EPGRAPH_SOURCE_DIR) / "tests/data/json_golden/plain.json");
  const std::string plain = ojson::parse(program).dump();
  const std::string entry =
      R"({"dtype":7,"sizes":[{"as_int":2},{"as_int":3}],"requires_grad":false,)"
      R"("device":{"type":"cpu","index":null},"strides":[{"as_int":3},{"as_int":1}],)"
      R"("storage_offset":{"as_int":0},"layout":7})";
  const std::size_t at = plain.find(entry);
  REQUIRE(at != std::string::npos);
  const std::vector<std::string> entries = {
      // loaded
      entry,
      R"({"layout":7,"storage_offset":{"as_int":0},"strides":[{"as_int":3},{"as_int":1}],)"
      R"("device":{"index":null,"type":"cpu"},"requires_grad":false,)"
      R"("sizes":[{"as_int":2},{"as_int":3}],"dtype":7})",
      R"({"dtype":7,"sizes":[2,3],"requires_grad":true,"device":{"type":"cuda","index":1},)"
      R"("strides":[3,1],"storage_offset":0,"layout":7})",
      R"({"dtype":7,"sizes":[{"as_int":2},{"as_int":3}],"requires_grad":false,)"
      R"("device":{"type":"cpu"},"strides":[{"as_int":3},{"as_int":1}],)"
      R"("storage_offset":{"as_int":0},"layout":0})",
      R"({"dtype":7,"sizes":[{"as_int":2},{"as_int":3,"as_expr":null}],"requires_grad":false,)"
      R"("device":{"type":"cpu","index":null},"strides":[{"as_int":3},{"as_int":1}],)"
      R"("storage_offset":{"as_int":0},"layout":7})",
      R"({"dtype":1,"dtype":7,"sizes":[{"as_int":2},{"as_int":3}],"requires_grad":false,)"
      R"("device":{"type":"cpu","index":null,"index":0},"strides":[{"as_int":3},{"as_int":1}],)"
      R"("storage_offset":{"as_int":0},"layout":7})",
      R"({"dtype":7,"sizes":[{"as_int":2},{"as_int":3}],"requires_grad":false,)"
      R"("device":{"type":"cpu","index":null},"strides":[{"as_int":3},{"as_int":1}],)"
      R"("storage_offset":{"as_int":0},"layout":7,"extra":1})",
      // symbolic, read straight from the document (as torch 2.13 writes them, one text twice)
      R"j({"dtype":7,"sizes":[{"as_expr":{"expr_str":"Symbol('s0', positive=True, integer=True)",)j"
      R"("hint":{"as_int":4}}},{"as_int":3}],"requires_grad":false,)"
      R"("device":{"type":"cpu","index":null},"strides":[{"as_int":3},{"as_int":1}],)"
      R"("storage_offset":{"as_expr":{"expr_str":)"
      R"j("Mul(Integer(3), Symbol('s0', positive=True, integer=True))","hint":null}},"layout":7})j",
      R"({"dtype":7,"sizes":[{"as_expr":{"hint":{"as_int":4},"expr_str":"s0"}},{"as_int":3}],)"
      R"("requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[{"as_int":3},{"as_expr":{"expr_str":"s0"}}],"storage_offset":0,"layout":7})",
      // symbolic forms left to the tree: a repeated key, a hint union with a null member
      R"({"dtype":7,"sizes":[{"as_expr":{"expr_str":"s0 +* 2","expr_str":"s1"}},{"as_int":3}],)"
      R"("requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[{"as_int":3},{"as_int":1}],"storage_offset":0,"layout":7})",
      R"({"dtype":7,"sizes":[{"as_expr":{"expr_str":"s0","hint":{"as_int":4,"as_float":null}}},)"
      R"({"as_int":3}],"requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[{"as_int":3},{"as_int":1}],"storage_offset":0,"layout":7})",
      // refused: a bare-integer hint (torch never wrote one; its loader fails on it), also beside
      // another key
      R"({"dtype":7,"sizes":[{"as_expr":{"expr_str":"s0","hint":4}},{"as_int":3}],)"
      R"("requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[{"as_int":3},{"as_int":1}],"storage_offset":{"as_int":0},"layout":7})",
      R"({"dtype":7,"sizes":[{"as_expr":{"expr_str":"s0","hint":4,"extra":1}},{"as_int":3}],)"
      R"("requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[{"as_int":3},{"as_int":1}],"storage_offset":0,"layout":7})",
      R"({"dtype":7,"sizes":[{"as_expr":{"expr_str":"s0","hint":{"as_float":4.0}}},)"
      R"({"as_int":3}],"requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[{"as_int":3},{"as_int":1}],"storage_offset":0,"layout":7})",
      R"({"dtype":7,"sizes":[{"as_expr":{"expr_str":"s0","hint":"4"}},{"as_int":3}],)"
      R"("requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[{"as_int":3},{"as_int":1}],"storage_offset":0,"layout":7})",
      R"({"dtype":7,"sizes":[{"as_expr":{"expr_str":5}},{"as_int":3}],)"
      R"("requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[{"as_int":3},{"as_int":1}],"storage_offset":0,"layout":7})",
      R"({"dtype":7,"sizes":[{"as_expr":{"hint":4}},{"as_int":3}],)"
      R"("requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[{"as_int":3},{"as_int":1}],"storage_offset":0,"layout":7})",
      R"({"dtype":7,"sizes":[{"as_expr":{"expr_str":"s0"},"as_int":2},{"as_int":3}],)"
      R"("requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[{"as_int":3},{"as_int":1}],"storage_offset":0,"layout":7})",
      R"({"dtype":0,"sizes":[],"requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[],"storage_offset":{"as_int":0},"layout":7})",
      R"({"dtype":7,"sizes":[{"as_int":-2},{"as_int":3}],"requires_grad":false,)"
      R"("device":{"type":"cpu","index":null},"strides":[{"as_int":3},{"as_int":1}],)"
      R"("storage_offset":{"as_int":0},"layout":7})",
      R"({"dtype":7,"sizes":[],"requires_grad":false,"device":{"type":"cpu","index":-5},)"
      R"("strides":[],"storage_offset":{"as_int":0},"layout":7})",
      R"({"dtype":99,"sizes":[],"requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[],"storage_offset":{"as_int":0},"layout":7})",
      R"({"dtype":7,"sizes":[],"requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[],"storage_offset":{"as_int":0},"layout":8})",
      R"({"dtype":7,"sizes":[{"as_int":2}],"requires_grad":false,)"
      R"("device":{"type":"cpu","index":null},"strides":[],"storage_offset":0,"layout":7})",
      R"({"dtype":7,"sizes":[],"requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[],"storage_offset":{"as_int":-1},"layout":7})",
      R"({"dtype":7,"sizes":[],"requires_grad":0,"device":{"type":"cpu","index":null},)"
      R"("strides":[],"storage_offset":0,"layout":7})",
      R"({"dtype":7.0,"sizes":[],"requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[],"storage_offset":0,"layout":7})",
      R"({"dtype":18446744073709551615,"sizes":[],"requires_grad":false,)"
      R"("device":{"type":"cpu","index":null},"strides":[],"storage_offset":0,"layout":7})",
      R"({"dtype":7,"sizes":[],"requires_grad":false,"device":{"type":1,"index":null},)"
      R"("strides":[],"storage_offset":0,"layout":7})",
      R"({"dtype":7,"sizes":[],"requires_grad":false,"device":{"type":"cpu","index":"0"},)"
      R"("strides":[],"storage_offset":0,"layout":7})",
      R"({"dtype":7,"sizes":[{"as_int":1.5}],"requires_grad":false,)"
      R"("device":{"type":"cpu","index":null},"strides":[1],"storage_offset":0,"layout":7})",
      R"({"dtype":7,"sizes":[],"requires_grad":false,"strides":[],"storage_offset":0,)"
      R"("layout":7})",
      R"({"dtype":7,"sizes":{},"requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[],"storage_offset":0,"layout":7})",
      R"([])",
      // a text torch's sympify refuses, in a size, a stride and the offset
      R"({"dtype":7,"sizes":[{"as_expr":{"expr_str":"s0 +* 2","hint":4}},{"as_int":3}],)"
      R"("requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[{"as_int":3},{"as_int":1}],"storage_offset":{"as_int":0},"layout":7})",
      R"({"dtype":7,"sizes":[{"as_int":2},{"as_int":3}],"requires_grad":false,)"
      R"("device":{"type":"cpu","index":null},"strides":[{"as_expr":{"expr_str":"((s0",)"
      R"("hint":null}},{"as_int":1}],"storage_offset":{"as_int":0},"layout":7})",
      R"({"dtype":7,"sizes":[],"requires_grad":false,"device":{"type":"cpu","index":null},)"
      R"("strides":[],"storage_offset":{"as_expr":{"expr_str":""}},"layout":7})",
      // 2**64: beyond uint64, so JSON readers see a float
      R"({"dtype":7,"sizes":[{"as_int":18446744073709551616}],"requires_grad":false,)"
      R"("device":{"type":"cpu","index":null},"strides":[1],"storage_offset":0,"layout":7})",
  };
  std::size_t loaded = 0;
  for (const std::string& e : entries) {
    std::string text = plain;
    text.replace(at, entry.size(), e);
    INFO(e);
    const std::string simd = load_outcome(text, parser_backend::simdjson);
    CHECK(simd == load_outcome(text, parser_backend::nlohmann));
    loaded += simd.rfind("ok:", 0) == 0 ? 1 : 0;
    if (e.find(R"("expr_str":"s0","hint":4)") != std::string::npos) {
      // the loader accepted it as a "pre-schema-8" form that never existed
      CHECK_THAT(simd, Catch::Matchers::Contains(
                           R"(sizes[0].as_expr.hint: expected a SymExprHint union such as )"
                           R"({"as_int": 4}, got a bare integer)"));
    }
  }
  CHECK(loaded == 11);
}

#if EPGRAPH_JSON_HAS_SIMDJSON
// Symbolic sizes went through nlohmann's tree, and each text was parsed at each occurrence: a
// dynamic decoder torch wrote loaded 42% slower than it does now (bench/README.md).
TEST_CASE(
    "json backends: symbolic sizes are read from simdjson's document, each text parsed "
    "once",
    "[json][backends]") {
  namespace d = epgraph::json::detail;
  const std::string s0 = "Symbol('s0', positive=True, integer=True)";
  const std::string text =
      R"({"dtype":7,"sizes":[{"as_expr":{"expr_str":")" + s0 +
      R"(","hint":{"as_int":4}}},{"as_int":3}],"requires_grad":false,)"
      R"("device":{"type":"cpu","index":null},"strides":[{"as_int":3},{"as_int":1}],)"
      R"("storage_offset":{"as_expr":{"expr_str":")" +
      s0 + R"("}},"layout":7})";
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(text);
  simdjson::dom::element e;
  REQUIRE(parser.parse(padded).get(e) == simdjson::SUCCESS);
  d::CheckedExprs checked;
  const d::Path path = "tensor_values.x";
  const epgraph::TensorMeta m = d::tensor_meta_from_json_at(d::SimdValue(e), path, &checked);
  CHECK(checked.size() == 1);
  CHECK(checked.contains(s0));
  REQUIRE(m.sizes.size() == 2);
  CHECK(std::get<epgraph::SymExpr>(m.sizes[0]) == epgraph::SymExpr{s0, 4});
  CHECK(std::get<std::int64_t>(m.sizes[1]) == 3);
  CHECK(std::get<epgraph::SymExpr>(m.storage_offset) == epgraph::SymExpr{s0, std::nullopt});
  CHECK(m.dtype == epgraph::dtype::float32);

  // a text sym::parse refuses is named, and not remembered
  const std::string bad = R"({"dtype":7,"sizes":[{"as_expr":{"expr_str":"s0 +* 2"}}],)"
                          R"("requires_grad":false,"device":{"type":"cpu","index":null},)"
                          R"("strides":[1],"storage_offset":0,"layout":7})";
  const simdjson::padded_string padded_bad(bad);
  REQUIRE(parser.parse(padded_bad).get(e) == simdjson::SUCCESS);
  CHECK_THROWS_WITH(d::tensor_meta_from_json_at(d::SimdValue(e), path, &checked),
                    "tensor_values.x.sizes[0].as_expr.expr_str: cannot read the symbolic "
                    "expression 's0 +* 2': unexpected '*' at offset 4");
  // a repeated key is the tree's to read (it keeps the last value)
  const simdjson::padded_string padded_tree(
      std::string(R"({"dtype":7,"dtype":7,"sizes":[],"requires_grad":false,)"
                  R"("device":{"type":"cpu","index":null},"strides":[],"storage_offset":0,)"
                  R"("layout":7})"));
  REQUIRE(parser.parse(padded_tree).get(e) == simdjson::SUCCESS);
  CHECK_THROWS_AS(d::tensor_meta_from_json_at(d::SimdValue(e), path, &checked), d::needs_tree);
  CHECK(checked.size() == 1);
}
#endif

#if EPGRAPH_JSON_HAS_SIMDJSON
namespace {

// How many of the nodes of `text` (a program whose graph has no constant inputs) the reader
// takes straight from simdjson's document; the others go through their tree.
std::size_t nodes_read_direct(const std::string& text) {
  namespace d = epgraph::json::detail;
  d::ParsedDocument parsed;
  d::parse_document(text, parsed, parser_backend::simdjson);
  REQUIRE(parsed.nodes != nullptr);
  epgraph::Graph g;
  d::GraphReader reader(g, false);
  reader.take_nodes_from(*parsed.feeder, *parsed.nodes);
  reader.read_consuming(parsed.doc["graph_module"]["graph"], "graph_module.graph", {},
                        parsed.tensor_values ? &*parsed.tensor_values : nullptr);
  return reader.nodes_read_direct();
}

}  // namespace

TEST_CASE("json backends: nodes are read from simdjson's document, a repeated key from a tree",
          "[json][backends]") {
  const std::string example =
      read_text(std::filesystem::path(EPGRAPH_SOURCE_DIR) / "examples/data/decoder_block.json");
  const ojson doc = ojson::parse(example);
  const ojson& nodes = doc["graph_module"]["graph"]["nodes"];
  REQUIRE(nodes.size() == 18);
  // One NodeReader on both documents: split (a list of outputs) and the 5-output batch norm,
  // which the former direct reader left to their trees, are read from the document as well.
  REQUIRE(nodes[2]["outputs"][0].contains("as_tensors"));
  REQUIRE(nodes[2]["target"] == "torch.ops.aten.split.Tensor");
  CHECK(nodes_read_direct(example) == 18);

  // {description, edit of node 0 (layer_norm), nodes read directly after it}
  struct Variant {
    const char* what;
    std::function<void(ojson&)> edit;
    std::size_t direct;
  };
  const std::vector<Variant> variants = {
      {"unchanged", [](ojson&) {}, 18},
      {"a field of a newer schema", [](ojson& n) { n["future"] = 1; }, 18},
      {"a null name", [](ojson& n) { n["name"] = nullptr; }, 18},
      {"a given name", [](ojson& n) { n["name"] = "ln"; }, 18},
      {"a null kind", [](ojson& n) { n["inputs"][0]["kind"] = nullptr; }, 18},
      {"no kind", [](ojson& n) { n["inputs"][0].erase("kind"); }, 18},
      {"a keyword input", [](ojson& n) { n["inputs"][5]["kind"] = 2; }, 18},
      {"an integer float", [](ojson& n) { n["inputs"][4]["arg"]["as_float"] = 1; }, 18},
      {"a legacy union", [](ojson& n) { n["inputs"][4]["arg"]["as_int"] = nullptr; }, 18},
      {"null metadata", [](ojson& n) { n["metadata"] = nullptr; }, 18},
      {"no is_hop_single_tensor_return", [](ojson& n) { n.erase("is_hop_single_tensor_return"); },
       18},
      {"is_hop_single_tensor_return true",
       [](ojson& n) { n["is_hop_single_tensor_return"] = true; }, 18},

      {"a sym int",
       [](ojson& n) {
         n["inputs"][1]["arg"] = {{"as_sym_ints", {{{"as_int", 16}}}}};
       },
       18},
      {"a device",
       [](ojson& n) {
         n["inputs"][1]["arg"] = {{"as_device", {{"type", "cpu"}}}};
       },
       18},
  };
  for (const Variant& v : variants) {
    INFO(v.what);
    ojson d = doc;
    v.edit(d["graph_module"]["graph"]["nodes"][0]);
    const std::string text = d.dump();
    CHECK(nodes_read_direct(text) == v.direct);
    const std::string simd = load_outcome(text, parser_backend::simdjson);
    CHECK(simd.rfind("ok:", 0) == 0);
    CHECK(simd == load_outcome(text, parser_backend::nlohmann));
  }

  // A repeated key (the tree keeps the last value at the first position) and a name that is
  // taken: through the tree, with its value or its error.
  const std::string dumped = doc.dump();
  const std::string md = "\"metadata\":{";
  const std::size_t at = dumped.find(md);
  REQUIRE(at != std::string::npos);
  std::string repeated = dumped;
  repeated.insert(at + md.size(), "\"zz\":\"first\",\"zz\":\"second\",");
  CHECK(nodes_read_direct(repeated) == 17);
  const std::string simd = load_outcome(repeated, parser_backend::simdjson);
  CHECK(simd.find("\"zz\":\"second\"") != std::string::npos);
  CHECK(simd == load_outcome(repeated, parser_backend::nlohmann));

  // A repeated key anywhere in a node (a field, an argument's union, a tensor reference, an
  // output, a field of a newer schema) sends that node, and only it, to its tree: the last value
  // wins there, as in torch's json.loads. {text in node 0, its replacement, expected outcome}
  const std::vector<std::tuple<std::string, std::string, std::string>> repeats = {
      {R"("target":"torch.ops.aten.layer_norm.default")",
       R"("target":"torch.ops.aten.relu.default","target":"torch.ops.aten.layer_norm.default")",
       "ok"},
      {R"({"as_float":1e-05})", R"({"as_float":"x","as_float":1e-05})", "ok"},
      {R"({"as_tensor":{"name":"x"}})", R"({"as_tensor":{"name":"nowhere","name":"x"}})", "ok"},
      {R"([{"as_tensor":{"name":"layer_norm"}}])",
       R"([{"as_tensor":{"name":"ln0","name":"layer_norm"}}])", "ok"},
      {R"("target":"torch.ops.aten.layer_norm.default")",
       R"("target":"torch.ops.aten.layer_norm.default","future":{"a":1,"a":2})", "ok"},
      {R"({"as_tensor":{"name":"x"}})", R"({"as_tensor":{"name":"x","name":"nowhere"}})",
       "error:graph_module.graph.nodes[0].inputs[0].arg.as_tensor: value 'nowhere' is not "
       "produced by any graph input or node"},
  };
  for (const auto& [from, to, outcome] : repeats) {
    INFO(to);
    std::string text = dumped;
    const std::size_t pos = text.find(from, text.find("\"nodes\":[{"));  // in node 0
    REQUIRE(pos < text.find("},{\"target\"", text.find("\"nodes\":[{")));
    text.replace(pos, from.size(), to);
    const std::string got = load_outcome(text, parser_backend::simdjson);
    CHECK(got.substr(0, outcome.size()) == outcome);
    CHECK(got == load_outcome(text, parser_backend::nlohmann));
    if (outcome == "ok") CHECK(nodes_read_direct(text) == 17);
  }

  // Nodes read_node refuses: the same error from both backends.
  const std::vector<std::pair<std::function<void(ojson&)>, std::string>> refused = {
      {[](ojson& n) { n["outputs"][0]["as_tensor"]["name"] = "x"; },
       "error:graph_module.graph.nodes[0]: duplicate value name 'x'"},
      {[](ojson& n) { n["metadata"]["k"] = 1; },
       "error:graph_module.graph.nodes[0].metadata.k: expected a string, got integer"},
      {[](ojson& n) { n["is_hop_single_tensor_return"] = 0; },
       "error:graph_module.graph.nodes[0].is_hop_single_tensor_return: expected a boolean, got "
       "integer"},
      {[](ojson& n) { n["inputs"][0]["arg"]["as_tensor"]["name"] = "nowhere"; },
       "error:graph_module.graph.nodes[0].inputs[0].arg.as_tensor: value 'nowhere' is not "
       "produced by any graph input or node"},
  };
  for (const auto& r : refused) {
    ojson d = doc;
    r.first(d["graph_module"]["graph"]["nodes"][0]);
    const std::string error = load_outcome(d.dump(), parser_backend::simdjson);
    CHECK(error == r.second);
    CHECK(error == load_outcome(d.dump(), parser_backend::nlohmann));
  }
}
#endif

#if EPGRAPH_JSON_HAS_SIMDJSON
TEST_CASE("json backends: an empty value name that is taken gives the same error",
          "[json][backends]") {
  // The direct reader registers a single output's name even when it is empty, as read_node does
  // (it left the taken "" to register_value, which then threw at the node's path).
  ojson doc = ojson::parse(
      read_text(std::filesystem::path(EPGRAPH_SOURCE_DIR) / "examples/data/decoder_block.json"));
  ojson& nodes = doc["graph_module"]["graph"]["nodes"];
  nodes[0]["outputs"][0]["as_tensor"]["name"] = "";
  nodes[1]["inputs"][0]["arg"]["as_tensor"]["name"] = "";
  nodes[1]["outputs"][0]["as_tensor"]["name"] = "";
  const std::string simd = load_outcome(doc.dump(), parser_backend::simdjson);
  CHECK(simd == "error:graph_module.graph.nodes[1].outputs[0]: duplicate value name ''");
  CHECK(simd == load_outcome(doc.dump(), parser_backend::nlohmann));
}
#endif

TEST_CASE("json save: a list argument mixing tensors and other values is refused by name",
          "[json][backends]") {
  // `as_sym_ints` naming a tensor loads (torch's deserializer does not check the kind either),
  // but the list cannot be written: the saver dereferenced the integer as a node.
  ojson doc = ojson::parse(
      read_text(std::filesystem::path(EPGRAPH_SOURCE_DIR) / "examples/data/decoder_block.json"));
  doc["graph_module"]["graph"]["nodes"][0]["inputs"][5]["arg"] =
      ojson::parse(R"({"as_sym_ints":[{"as_name":"x"},{"as_int":3}]})");
  for (const auto backend : {parser_backend::simdjson, parser_backend::nlohmann}) {
    CHECK(load_outcome(doc.dump(), backend) ==
          "save error:graph_module.graph.nodes: node 'layer_norm' "
          "(torch.ops.aten.layer_norm.default) cannot be written: input 'cudnn_enable' is a list "
          "that mixes tensors with other values");
  }
}

TEST_CASE("json deserializer: one parser for many texts gives each text's own program or error",
          "[json][backends][deserializer]") {
  // ExportedProgramDeserializer keeps simdjson's parser (its buffers hold the last document)
  // between loads: nothing of one text may show in the next. Large, small, refused, malformed
  // and fallen-back-to-nlohmann texts in turn, each compared with a load by nlohmann's backend
  // (a new parser every time).
  const std::filesystem::path src(EPGRAPH_SOURCE_DIR);
  std::vector<std::string> texts;
  for (const auto& file : program_files()) texts.push_back(read_text(file));
  REQUIRE(texts.size() >= 14);
  const std::string plain = read_text(src / "tests/data/json_golden/plain.json");
  std::vector<std::string> variants;
  mutations(ojson::parse(plain), variants, 3);
  REQUIRE(variants.size() > 20);
  texts.insert(texts.begin() + 3, variants.begin(), variants.begin() + 20);
  texts.insert(texts.begin() + 1, "{\"a\":\"\\ud800\"}");  // simdjson refuses: nlohmann reads it
  texts.insert(texts.begin() + 2, plain.substr(0, plain.size() / 2));  // malformed
  texts.insert(texts.begin() + 4, "");
  texts.push_back(texts.front());  // the first text again, after all the others
  epgraph::json::ExportedProgramDeserializer d;
  std::size_t ok = 0;
  std::size_t errors = 0;
  for (int round = 0; round < 2; ++round) {
    for (const auto& text : texts) {
      INFO("round " << round << ": " << text.substr(0, 200));
      std::string got;
      try {
        const auto ep = d.deserialize(text);
        ++ok;
        try {
          got = "ok:" + epgraph::json::save_exported_program_to_string(ep);
        } catch (const epgraph::json::serialization_error& e) {
          got = std::string("save error:") + e.what();
        }
      } catch (const epgraph::json::serialization_error& e) {
        got = std::string("error:") + e.what();
        ++errors;
      }
      REQUIRE(got == load_outcome(text, parser_backend::nlohmann));
    }
    d.release();  // the second round starts from a new parser, then reuses it again
  }
  // Without ../shared, 14 texts load per round: since the numel check one of the mutations
  // (sizes whose element count overflows int64) is an error, as in torch.
  CHECK(ok >= 2 * 14);
  CHECK(errors >= 2 * 3);
  // A moved-from deserializer's successor keeps working.
  epgraph::json::ExportedProgramDeserializer moved(std::move(d));
  CHECK(epgraph::json::save_exported_program_to_string(moved.deserialize(plain)) ==
        epgraph::json::save_exported_program_to_string(
            epgraph::json::load_exported_program_from_string(plain)));
}
