// Byte-for-byte checks of the JSON saver: the text it writes for programs full of awkward values,
// for the example file and for the test programs equals golden files (tests/data/json_golden/,
// first written by the tree-building writer the library used to carry, rewritten by
// tools/update_json_golden.sh after a deliberate change of the format); the text is dump()'s
// spelling; a string that is not valid UTF-8 throws nlohmann's type_error 316 as dump() does.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <epgraph/json/json.hpp>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../support/program_builders.hpp"

#ifndef EPGRAPH_SOURCE_DIR
#define EPGRAPH_SOURCE_DIR "."
#endif

namespace {

using epgraph::Argument;
using epgraph::ArgumentList;
using epgraph::Node;
using epgraph_test::Program;

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The saved text of `ep` equals the golden file tests/data/json_golden/<name>.json. With the
// environment variable EPGRAPH_UPDATE_JSON_GOLDEN set (tools/update_json_golden.sh), the file is
// written instead.
void check_golden(const std::string& name, const Program& ep) {
  INFO("golden file " << name);
  const std::filesystem::path file =
      std::filesystem::path(EPGRAPH_SOURCE_DIR) / "tests/data/json_golden" / (name + ".json");
  const std::string text = epgraph::json::save_exported_program_to_string(ep);
  if (std::getenv("EPGRAPH_UPDATE_JSON_GOLDEN") != nullptr) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
  }
  const std::string golden = read_file(file);
  REQUIRE(!golden.empty());
  CHECK(text == golden);
  CHECK(nlohmann::ordered_json::parse(text).dump() == text);  // dump()'s spelling
}

// A string with every kind of character the escaping handles.
const std::string awkward = std::string("q\"uote b\\ackslash /slash \b\f\n\r\t ctl") + '\0' +
                            "\x01\x1f\x7f" + " caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 end";

epgraph::TensorMeta meta_with_symbols() {
  epgraph::TensorMeta m;
  m.dtype = epgraph::dtype::bfloat16;
  // expressions torch's sympify reads (the loader refuses others), with a quote, a backslash
  // and a non-ASCII character in symbol names
  m.sizes = {epgraph::SymInt{epgraph::SymExpr{"s0 + Symbol('q\"\\\\')", 7}},
             epgraph::SymInt{epgraph::SymExpr{"Symbol('s\xc3\xa9')", std::nullopt}},
             epgraph::SymInt{std::int64_t{0}}};
  m.strides = {epgraph::SymInt{std::numeric_limits<std::int64_t>::min()},
               epgraph::SymInt{std::numeric_limits<std::int64_t>::max()},
               epgraph::SymInt{std::int64_t{0}}};
  m.storage_offset = epgraph::SymExpr{"Integer(0)", 0};
  m.device = epgraph::Device{"cu\"da\n", 3};
  m.requires_grad = true;
  return m;
}

// One user input `x` and nodes using every kind of argument, with awkward strings and doubles.
Program awkward_program() {
  const double inf = std::numeric_limits<double>::infinity();
  auto g = std::make_unique<epgraph::Graph>();
  Node* x = epgraph_test::add_placeholder(*g, "x", epgraph_test::tensor({2, 3}));
  x->mutable_meta().other = {{"stack_trace", awkward}, {"", ""}, {"nn_module_stack", "{\"a\": 1}"}};
  Node* a = g->call_function("torch.ops.my\"lib\\.op" + awkward,
                             {x,
                              awkward,
                              std::string(),
                              1.0,
                              0.1,
                              1e300,
                              -0.0,
                              inf,
                              -inf,
                              std::numeric_limits<double>::quiet_NaN(),
                              5e-324,
                              std::numeric_limits<std::int64_t>::min(),
                              std::numeric_limits<std::int64_t>::max(),
                              true,
                              false,
                              epgraph::none,
                              epgraph::dtype::float16,
                              epgraph::Layout::Strided,
                              epgraph::MemoryFormat::ChannelsLast,
                              epgraph::Device{"cuda", 1},
                              epgraph::Device{awkward, std::nullopt}},
                             {{"k\"ey\\" + awkward, awkward}, {"", 2.5}, {"tensor", x}});
  a->mutable_meta().val = meta_with_symbols();
  a->mutable_meta().other = {{"dup", "first"}, {"k", awkward}, {"dup", "second"}};
  Node* b = g->call_function(
      "torch.ops.aten.lists.default",
      {ArgumentList{1, 2, -3}, ArgumentList{1.0, 0.1, -0.0, inf}, ArgumentList{true, false},
       ArgumentList{awkward, "", "plain"}, ArgumentList{x, a}, ArgumentList{x, epgraph::none, a},
       ArgumentList{ArgumentList{1, 2}, ArgumentList{}, ArgumentList{3}},
       ArgumentList{ArgumentList{1.5, 2}, ArgumentList{1e-300}},
       ArgumentList{ArgumentList{x, a}, ArgumentList{a}}, ArgumentList{}},
      {{"lists", ArgumentList{ArgumentList{x}, ArgumentList{a}}}});
  b->mutable_meta().val = epgraph::tensor_meta_of(epgraph_test::tensor({}));
  g->output({b, a});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("x")};
  sig.output_specs = {epgraph_test::user_output(std::string(b->name())),
                      epgraph_test::user_output(std::string(a->name()))};
  Program ep(std::move(g), std::move(sig));
  ep.metadata().opset_version = {{"aten", 10}, {awkward, 1}};
  ep.metadata().torch_version = awkward;
  return ep;
}

}  // namespace

TEST_CASE("json save: golden bytes of a program of awkward values", "[json][streaming]") {
  const Program ep = awkward_program();
  check_golden("awkward", ep);
  // The awkward values really are in the text, escaped as dump() escapes them.
  const std::string text = epgraph::json::save_exported_program_to_string(ep);
  CHECK(text.find("q\\\"uote b\\\\ackslash /slash \\b\\f\\n\\r\\t ctl\\u0000\\u0001\\u001f\x7f"
                  " caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 end") != std::string::npos);
  CHECK(text.find("{\"as_float\":1.0}") != std::string::npos);
  CHECK(text.find("{\"as_float\":0.1}") != std::string::npos);
  CHECK(text.find("{\"as_float\":1e+300}") != std::string::npos);
  CHECK(text.find("{\"as_float\":-0.0}") != std::string::npos);
  CHECK(text.find("{\"as_float\":\"Infinity\"}") != std::string::npos);
  CHECK(text.find("{\"as_float\":\"-Infinity\"}") != std::string::npos);
  CHECK(text.find("{\"as_float\":\"NaN\"}") != std::string::npos);
  CHECK(text.find("{\"as_int\":-9223372036854775808}") != std::string::npos);
  CHECK(text.find("\"metadata\":{\"dup\":\"second\",\"k\":") != std::string::npos);
  // Loading the text back and saving it again gives the same bytes both ways.
  const Program back = epgraph::json::load_exported_program_from_string(text);
  CHECK(nlohmann::ordered_json::parse(text).dump() == text);
  CHECK(epgraph::json::save_exported_program_to_string(back) == text);
}

TEST_CASE("json save: golden bytes of the test programs", "[json][streaming]") {
  using epgraph_test::with_tensor_meta;
  check_golden("plain", with_tensor_meta(epgraph_test::plain_program()));
  check_golden("params_and_buffers", with_tensor_meta(epgraph_test::params_and_buffers_program()));
  check_golden("linear_batchnorm", with_tensor_meta(epgraph_test::linear_batchnorm_program()));
  check_golden("user_input_mutation",
               with_tensor_meta(epgraph_test::user_input_mutation_program()));
  // Tokens without metadata; with_effects read through getitem nodes (a tuple, of one value
  // without the user output).
  Program tokens = epgraph_test::token_program(true);
  tokens.graph().find_node("getitem_1")->mutable_meta().val =
      epgraph::tensor_meta_of(epgraph_test::tensor({3}));
  check_golden("tokens_with_user_output", tokens);
  check_golden("tokens", epgraph_test::token_program(false));
  check_golden("constants",
               with_tensor_meta(epgraph_test::constants_program()));  // a custom object
  // An empty graph.
  Program empty(std::make_unique<epgraph::Graph>(), epgraph::ExportGraphSignature{});
  empty.graph().output({});
  check_golden("empty", empty);
}

TEST_CASE("json save: golden bytes of the example file, fixed point on the corpus",
          "[json][streaming]") {
  const std::filesystem::path example =
      std::filesystem::path(EPGRAPH_SOURCE_DIR) / "examples/data/decoder_block.json";
  check_golden("decoder_block",
               epgraph::json::load_exported_program_from_string(read_file(example)));
  const std::filesystem::path corpus =
      std::filesystem::path(EPGRAPH_SOURCE_DIR) / "../shared/corpus/real";
  if (!std::filesystem::is_directory(corpus)) return;
  for (const auto& e : std::filesystem::directory_iterator(corpus)) {
    if (e.path().extension() != ".json") continue;
    INFO(e.path().string());
    const std::string text = read_file(e.path());
    REQUIRE(!text.empty());
    Program ep = [&] {
      try {
        return epgraph::json::load_exported_program_from_string(text);
      } catch (const std::exception&) {
        return Program(std::make_unique<epgraph::Graph>(), epgraph::ExportGraphSignature{});
      }
    }();
    if (ep.graph().size() == 0) continue;  // not an exported-program record
    const std::string saved = epgraph::json::save_exported_program_to_string(ep);
    CHECK(nlohmann::ordered_json::parse(saved).dump() == saved);  // dump()'s spelling
    // Saving what was saved gives the same bytes.
    CHECK(epgraph::json::save_exported_program_to_string(
              epgraph::json::load_exported_program_from_string(saved)) == saved);
  }
}

TEST_CASE("json save: invalid UTF-8 throws nlohmann's type_error 316 as dump() does",
          "[json][streaming]") {
  const std::string bad = "aten.\xff\xfe.default";
  auto program_with = [&](int where) {
    auto g = std::make_unique<epgraph::Graph>();
    Node* x = epgraph_test::add_placeholder(*g, "x", epgraph_test::tensor({2}));
    Node* y = g->call_function(where == 0 ? bad : std::string("torch.ops.epgraph_test.neg.default"),
                               {x, where == 1 ? Argument(bad) : Argument(1)},
                               {{where == 2 ? bad : std::string("k"), 1}});
    y->mutable_meta().val = x->meta().val;
    if (where == 3) y->mutable_meta().other = {{"stack_trace", "\xc3"}};  // truncated sequence
    if (where == 4) y->mutable_meta().val.tensor()->device.type = "c\x80pu";
    g->output({y});
    epgraph::ExportGraphSignature sig;
    sig.input_specs = {epgraph_test::user_input("x")};
    sig.output_specs = {epgraph_test::user_output(std::string(y->name()))};
    return Program(std::move(g), std::move(sig));
  };
  // What dump() says of each string (nlohmann::json 3.11's messages).
  const char* const expected[] = {
      "[json.exception.type_error.316] invalid UTF-8 byte at index 5: 0xFF",
      "[json.exception.type_error.316] invalid UTF-8 byte at index 5: 0xFF",
      "[json.exception.type_error.316] invalid UTF-8 byte at index 5: 0xFF",
      "[json.exception.type_error.316] incomplete UTF-8 string; last byte: 0xC3",
      "[json.exception.type_error.316] invalid UTF-8 byte at index 1: 0x80"};
  for (int where = 0; where < 5; ++where) {
    INFO("where " << where);
    const Program ep = program_with(where);
    CHECK_THROWS_AS(epgraph::json::save_exported_program_to_string(ep), nlohmann::json::type_error);
    CHECK_THROWS_WITH(epgraph::json::save_exported_program_to_string(ep),
                      expected[static_cast<std::size_t>(where)]);
    // dump() itself says the same of the offending string.
    const std::string offending = where == 3   ? std::string("\xc3")
                                  : where == 4 ? std::string("c\x80pu")
                                               : bad;
    CHECK_THROWS_WITH(nlohmann::ordered_json(offending).dump(),
                      expected[static_cast<std::size_t>(where)]);
  }
}
