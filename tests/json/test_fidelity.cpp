// Fidelity with torch 2.13 (issue 13): every file torch reads, epgraph reads the same way, and
// no edit writes a program torch cannot run. Each expected value below is what torch 2.13 does
// (checked against torch itself by tests/interop/test_fidelity.py where torch can be run).
// SPDX-License-Identifier: BSD-3-Clause
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <epgraph/epgraph.hpp>
#include <epgraph/json/json.hpp>
#include <epgraph/program/edit.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "../support/json_documents.hpp"
#include "../support/snapshot.hpp"

namespace {

using epgraph::dtype;
using epgraph::HostTensor;
using epgraph::json::load_exported_program;
using epgraph::json::load_exported_program_from_string;
using epgraph::json::save_exported_program_to_string;
using epgraph::json::serialization_error;
using nlohmann::json;
using Program = epgraph::ExportedProgram<HostTensor>;
namespace fs = std::filesystem;

json meta(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides,
          std::int64_t offset = 0) {
  json s = json::array();
  for (auto v : sizes) s.push_back({{"as_int", v}});
  json st = json::array();
  for (auto v : strides) st.push_back({{"as_int", v}});
  return {{"dtype", 7},
          {"sizes", s},
          {"requires_grad", false},
          {"device", {{"type", "cpu"}, {"index", nullptr}}},
          {"strides", st},
          {"storage_offset", {{"as_int", offset}}},
          {"layout", 7}};
}

json tensor_arg(const std::string& name) { return {{"as_tensor", {{"name", name}}}}; }
json named(const std::string& name, json arg, int kind = 1) {
  return {{"name", name}, {"arg", std::move(arg)}, {"kind", kind}};
}
json node(const std::string& target, json inputs, json outputs, const std::string& name) {
  return {{"target", target},
          {"inputs", std::move(inputs)},
          {"outputs", std::move(outputs)},
          {"metadata", json::object()},
          {"is_hop_single_tensor_return", nullptr},
          {"name", name}};
}
json graph_of(json inputs, json nodes, json outputs, json tensor_values) {
  return {{"inputs", std::move(inputs)},       {"outputs", std::move(outputs)},
          {"nodes", std::move(nodes)},         {"tensor_values", std::move(tensor_values)},
          {"sym_int_values", json::object()},  {"sym_bool_values", json::object()},
          {"is_single_tensor_return", false},  {"custom_obj_values", json::object()},
          {"sym_float_values", json::object()}};
}

// forward(self, input, min, list=3): names FX reserves, as torch.export writes them.
//   sum = clamp.Tensor(input, min); max = relu(sum); pow = var_mean(max) -> (abs, all)
// The value names are the file's; the var_mean node's own name `pow` is not a value name.
json reserved_names_program(bool constant_input = true) {
  const json m = meta({2}, {1});
  json nodes = json::array();
  nodes.push_back(node("torch.ops.aten.clamp.Tensor",
                       {named("self", tensor_arg("input")), named("min", tensor_arg("min"))},
                       json::array({tensor_arg("sum")}), "sum"));
  nodes.push_back(node("torch.ops.aten.relu.default",
                       json::array({named("self", tensor_arg("sum"))}),
                       json::array({tensor_arg("max")}), "max"));
  nodes.push_back(node("torch.ops.aten.var_mean.correction",
                       json::array({named("self", tensor_arg("max"))}),
                       {tensor_arg("abs"), tensor_arg("all")}, "pow"));
  json graph = graph_of({tensor_arg("input"), tensor_arg("min"), {{"as_int", 3}}}, nodes,
                        {tensor_arg("max"), tensor_arg("abs"), tensor_arg("all")},
                        {{"input", m},
                         {"min", m},
                         {"sum", m},
                         {"max", m},
                         {"abs", meta({}, {})},
                         {"all", meta({}, {})}});
  json sig = {{"input_specs",
               {{{"user_input", {{"arg", tensor_arg("input")}}}},
                {{"user_input", {{"arg", tensor_arg("min")}}}},
                {{"constant_input", {{"name", "list"}, {"value", {{"as_int", 3}}}}}}}},
              {"output_specs",
               {{{"user_output", {{"arg", tensor_arg("max")}}}},
                {{"user_output", {{"arg", tensor_arg("abs")}}}},
                {{"user_output", {{"arg", tensor_arg("all")}}}}}}};
  if (!constant_input) {
    graph["inputs"].erase(2);
    sig["input_specs"].erase(2);
  }
  return epgraph_test::program_document(graph, sig);
}

// torch 2.13 prints this for reserved_names_program() after torch.export.load: value names are
// the file's (sync_fx_node); the constant input and the multi-output node get FX's names.
const char* const kReservedNamesGraph =
    "graph():\n"
    "    %input : [num_users=1] = placeholder[target=input]\n"
    "    %min : [num_users=1] = placeholder[target=min]\n"
    "    %list_1 : [num_users=0] = placeholder[target=list]\n"
    "    %sum : [num_users=1] = call_function[target=torch.ops.aten.clamp.Tensor](args = "
    "(%input, %min), kwargs = {})\n"
    "    %max : [num_users=2] = call_function[target=torch.ops.aten.relu.default](args = "
    "(%sum,), kwargs = {})\n"
    "    %pow_1 : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args "
    "= (%max,), kwargs = {})\n"
    "    %abs : [num_users=1] = call_function[target=operator.getitem](args = (%pow_1, 0), "
    "kwargs = {})\n"
    "    %all : [num_users=1] = call_function[target=operator.getitem](args = (%pow_1, 1), "
    "kwargs = {})\n"
    "    return (max, abs, all)";

std::vector<std::string> names_of(const epgraph::Graph& g) {
  std::vector<std::string> out;
  for (const epgraph::Node& n : g.nodes()) out.emplace_back(n.name());
  return out;
}

// A fresh file path, removed at the end of the test.
struct TempFile {
  fs::path path;
  explicit TempFile(const std::string& name) {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() / ("epgraph_fidelity_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(counter++) + "_" + name);
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  void write(const std::string& text) const { std::ofstream(path, std::ios::binary) << text; }
  [[nodiscard]] std::string str() const { return path.string(); }
};

// y = clamp(x, min, max) with the two floats given as raw JSON text (e.g. `-Infinity`).
std::string clamp_program_text(const std::string& min_text, const std::string& max_text) {
  json n = node("torch.ops.aten.clamp.default",
                {named("self", tensor_arg("x")), named("min", {{"as_float", 0.0}}),
                 named("max", {{"as_float", 0.0}})},
                json::array({tensor_arg("clamp")}), "clamp");
  const json m = meta({3}, {1});
  json graph = graph_of(json::array({tensor_arg("x")}), json::array({n}),
                        json::array({tensor_arg("clamp")}), {{"x", m}, {"clamp", m}});
  json sig = {{"input_specs", json::array({{{"user_input", {{"arg", tensor_arg("x")}}}}})},
              {"output_specs", json::array({{{"user_output", {{"arg", tensor_arg("clamp")}}}}})}};
  std::string text = epgraph_test::program_document(graph, sig).dump();
  const std::string placeholder = "\"as_float\":0.0";
  auto at = text.find(placeholder);
  text.replace(at, placeholder.size(), "\"as_float\": " + min_text);
  at = text.find(placeholder);
  text.replace(at, placeholder.size(), "\"as_float\": " + max_text);
  return text;
}

double arg_double(const Program& ep, const char* node_name, std::size_t i) {
  return ep.graph().find_node(node_name)->args()[i].as<double>();
}

std::vector<float> floats_of(const HostTensor& t) {
  std::vector<float> v(t.nbytes() / sizeof(float));
  std::memcpy(v.data(), t.bytes().data(), t.nbytes());
  return v;
}
template <class V>
V first_element(const HostTensor& t) {
  V v{};
  std::memcpy(&v, t.bytes().data(), sizeof(V));
  return v;
}

}  // namespace

// --- 1. names fixed by the file --------------------------------------------------------------

TEST_CASE("names a file fixes survive load, print and save unchanged", "[json][fidelity]") {
  const json in = reserved_names_program();
  const Program ep = load_exported_program_from_string(in.dump());
  CHECK(epgraph::to_string(ep.graph()) == kReservedNamesGraph);
  CHECK(epgraph::to_string(ep.graph_signature()) ==
        "\n# inputs\ninput: USER_INPUT\nmin: USER_INPUT\nlist: USER_INPUT\n\n# outputs\n"
        "max: USER_OUTPUT\nabs: USER_OUTPUT\nall: USER_OUTPUT\n");
  CHECK(ep.graph().find_node("input")->target() == "input");

  // Saved: every value keeps the file's name.
  const json out = json::parse(save_exported_program_to_string(ep));
  const json& g = out["graph_module"]["graph"];
  CHECK(g["inputs"] == in["graph_module"]["graph"]["inputs"]);
  CHECK(g["outputs"] == in["graph_module"]["graph"]["outputs"]);
  CHECK(g["nodes"][0]["outputs"] == json::array({tensor_arg("sum")}));
  CHECK(g["nodes"][1]["outputs"] == json::array({tensor_arg("max")}));
  CHECK(g["nodes"][2]["outputs"] == json::array({tensor_arg("abs"), tensor_arg("all")}));
  CHECK(g["nodes"][0]["inputs"][0]["arg"] == tensor_arg("input"));
  CHECK(g["nodes"][0]["inputs"][1]["arg"] == tensor_arg("min"));
  CHECK(out["graph_module"]["signature"] == in["graph_module"]["signature"]);
  const auto ordered = nlohmann::ordered_json::parse(save_exported_program_to_string(ep));
  const auto& values = ordered["graph_module"]["graph"]["tensor_values"];
  json keys = json::array();
  for (auto it = values.begin(); it != values.end(); ++it) keys.push_back(it.key());
  CHECK(keys == json::array({"input", "min", "sum", "max", "abs", "all"}));

  // And the copy loads as the same program (load -> print -> save -> load).
  const Program back = load_exported_program_from_string(out.dump());
  CHECK(epgraph::to_string(back.graph()) == kReservedNamesGraph);
}

TEST_CASE("names a pass requests still follow FX's rule after a load", "[json][fidelity]") {
  Program ep = load_exported_program_from_string(reserved_names_program().dump());
  // torch: the namespace took `input_1` / `sum_1` when the loader created the nodes (then
  // renamed them to the file's names), so a request for `input` gets `input_2`.
  CHECK(ep.graph().propose_name("input") == "input_2");
  CHECK(ep.graph().propose_name("sum") == "sum_2");
  CHECK(ep.graph().propose_name("list") == "list_2");
  CHECK(ep.graph().propose_name("min") == "min_2");
  CHECK(ep.graph().propose_name("class") == "class_1");
  epgraph::Node* relu = ep.graph().call_function("torch.ops.aten.relu.default",
                                                 {ep.graph().find_node("max")}, {}, "input");
  CHECK(relu->name() == "input_2");
  CHECK(ep.graph().find_node("input_1") == nullptr);
  CHECK(ep.graph().names().is_used("input_1"));
}

TEST_CASE("VerbatimNames keeps a requested name only for its namespace and scope",
          "[names][fidelity]") {
  epgraph::Graph g;
  {
    epgraph::VerbatimNames keep(g.names());
    CHECK(g.placeholder("input")->name() == "input");
    CHECK(g.placeholder("a.b")->name() == "a.b");        // torch keeps any serialized name
    CHECK(g.placeholder("input")->name() == "input_2");  // taken: never duplicated
    epgraph::Graph other;
    CHECK(other.placeholder("input")->name() == "input_1");  // another namespace: FX's rule
  }
  CHECK(g.placeholder("min")->name() == "min_1");  // scope ended: FX's rule
  CHECK(names_of(g) == std::vector<std::string>{"input", "a.b", "input_2", "min_1"});
  CHECK(g.names().is_used("input_1"));
  CHECK(g.names().is_used("a_b"));
  g.output({});
  CHECK_NOTHROW(g.lint());
}

// --- 2. non-finite floats as torch <= 2.6 wrote them -----------------------------------------

TEST_CASE("bare Infinity, -Infinity and NaN load as floats and save as torch 2.13 writes",
          "[json][fidelity]") {
  const std::string text = clamp_program_text("-Infinity", "NaN");
  CHECK_FALSE(json::accept(text));  // not JSON: nlohmann refuses it
  const Program ep = load_exported_program_from_string(text);
  CHECK(arg_double(ep, "clamp", 1) == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(arg_double(ep, "clamp", 2)));
  CHECK(epgraph::to_string(ep.graph()).find("args = (%x, -inf, nan)") != std::string::npos);
  const json out = json::parse(save_exported_program_to_string(ep));
  const json& inputs = out["graph_module"]["graph"]["nodes"][0]["inputs"];
  CHECK(inputs[1]["arg"] == json{{"as_float", "-Infinity"}});
  CHECK(inputs[2]["arg"] == json{{"as_float", "NaN"}});

  const Program pos = load_exported_program_from_string(clamp_program_text("0.5", "Infinity"));
  CHECK(arg_double(pos, "clamp", 2) == std::numeric_limits<double>::infinity());
  // Whitespace and layout around the token do not matter.
  const Program spaced =
      load_exported_program_from_string(clamp_program_text("\n  -Infinity\n", "1.0"));
  CHECK(arg_double(spaced, "clamp", 1) == -std::numeric_limits<double>::infinity());
  // torch 2.13's own strings still load.
  const Program strings =
      load_exported_program_from_string(clamp_program_text("\"-Infinity\"", "\"NaN\""));
  CHECK(arg_double(strings, "clamp", 1) == -std::numeric_limits<double>::infinity());
}

TEST_CASE("bare tokens inside strings are left alone", "[json][fidelity]") {
  std::string text = clamp_program_text("-Infinity", "1.0");
  // A metadata string that contains the token text, quotes and an escaped quote.
  const std::string from = "\"metadata\":{}";
  text.replace(text.find(from), from.size(),
               R"("metadata":{"stack_trace":"x = -Infinity, \"NaN\": Infinity"})");
  const Program ep = load_exported_program_from_string(text);
  REQUIRE(ep.graph().find_node("clamp")->meta().other.size() == 1);
  CHECK(ep.graph().find_node("clamp")->meta().other[0].second ==
        R"(x = -Infinity, "NaN": Infinity)");
}

TEST_CASE("an unbounded range constraint written as Infinity reads as unbounded",
          "[json][fidelity]") {
  std::string text = clamp_program_text("1.0", "2.0");
  const std::string from = "\"range_constraints\":{}";
  text.replace(text.find(from), from.size(),
               R"("range_constraints":{"s0":{"min_val":2,"max_val":Infinity},)"
               R"("s1":{"min_val":-Infinity,"max_val":7}})");
  const Program ep = load_exported_program_from_string(text);
  REQUIRE(ep.metadata().range_constraints.size() == 2);
  CHECK(ep.metadata().range_constraints[0].min_val == 2);
  CHECK_FALSE(ep.metadata().range_constraints[0].max_val.has_value());
  CHECK_FALSE(ep.metadata().range_constraints[1].min_val.has_value());
  CHECK(ep.metadata().range_constraints[1].max_val == 7);
  // torch 2.13 writes an unbounded end as null.
  const json out = json::parse(save_exported_program_to_string(ep));
  CHECK(out["range_constraints"]["s0"] == json{{"min_val", 2}, {"max_val", nullptr}});
  CHECK(out["range_constraints"]["s1"] == json{{"min_val", nullptr}, {"max_val", 7}});
}

TEST_CASE("malformed JSON keeps its parser message", "[json][fidelity][errors]") {
  auto nlohmann_message = [](const std::string& text) {
    try {
      const json parsed = json::parse(text);
      FAIL("parsed: " << parsed.dump());
    } catch (const json::parse_error& e) {
      return std::string("malformed JSON: ") + e.what();
    }
    return std::string();
  };
  // No bare non-finite token: the message is the parser's, unchanged.
  for (const std::string text : {R"({"a": 1,})", R"({"a": Infinityx})", R"({"a": Inf})",
                                 R"({"a": nan})", R"({"a": +Infinity})", R"(["Infinity)"}) {
    CHECK_THROWS_WITH(load_exported_program_from_string(text), nlohmann_message(text));
  }
  // A bare token and a real error elsewhere: the real error is reported (positions count the
  // quotes added around the token).
  CHECK_THROWS_WITH(load_exported_program_from_string(R"({"a": NaN, "b": ])"),
                    nlohmann_message(R"({"a": "NaN", "b": ])"));
}

// --- 9. messages name the file ---------------------------------------------------------------

TEST_CASE("errors of a JSON file name the file", "[json][fidelity][errors]") {
  TempFile bad("bad.json");
  bad.write("{");
  try {
    (void)load_exported_program(bad.path);
    FAIL("loaded");
  } catch (const serialization_error& e) {
    CHECK(std::string(e.what()) ==
          bad.str() +
              ": malformed JSON: [json.exception.parse_error.101] parse error at line 1, column "
              "2: syntax error while parsing object key - unexpected end of input; expected "
              "string literal");
    CHECK(e.file() == bad.str());
    CHECK(e.path().empty());
  }

  TempFile wrong("wrong.json");
  json doc = reserved_names_program();
  doc["graph_module"]["graph"]["nodes"][1]["inputs"][0]["arg"] = tensor_arg("nowhere");
  wrong.write(doc.dump());
  try {
    (void)load_exported_program(wrong.path);
    FAIL("loaded");
  } catch (const serialization_error& e) {
    CHECK(std::string(e.what()) ==
          wrong.str() +
              ": graph_module.graph.nodes[1].inputs[0].arg.as_tensor: value 'nowhere' is not "
              "produced by any graph input or node");
    CHECK(e.path() == "graph_module.graph.nodes[1].inputs[0].arg.as_tensor");
  }

  TempFile zip("model.pt2");
  zip.write(std::string("PK\x05\x06", 4) + std::string(18, '\0'));  // an empty zip file
  CHECK_THROWS_WITH(load_exported_program(zip.path),
                    zip.str() +
                        ": a zip archive (a .pt2/.ep file), not an exported-program JSON "
                        "record: read it with epgraph::archive::load_archive");
  CHECK_THROWS_WITH(load_exported_program("/nonexistent/m.json"),
                    "cannot open '/nonexistent/m.json'");
  // A directory (it opens as a stream and reads as an empty text: was "malformed JSON").
  const fs::path dir = fs::path(bad.str()).parent_path();
  REQUIRE(fs::is_directory(dir));
  CHECK_THROWS_WITH(load_exported_program(dir), "cannot open '" + dir.string() + "': a directory");
  CHECK_THROWS_AS(load_exported_program(dir), serialization_error);
}

TEST_CASE("save_exported_program writes all or nothing, over its own source too",
          "[json][fidelity][errors]") {
  // Was a truncating write: `pt2_edit copy in.json -o in.json` under a file size limit cut the
  // source to the limit (a malformed record, the program lost).
  TempFile dir_holder("atomic_dir");
  const fs::path dir = dir_holder.path;
  fs::create_directory(dir);
  struct RemoveAll {
    fs::path p;
    ~RemoveAll() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{dir};
  auto files = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  auto read = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const Program ep = load_exported_program_from_string(reserved_names_program().dump());
  const std::string text = save_exported_program_to_string(ep);
  const fs::path file = dir / "m.json";
  { std::ofstream(file) << "old"; }
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  epgraph::json::save_exported_program(ep, file);
  CHECK(read(file) == text);
  CHECK(fs::status(file).permissions() ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  CHECK(files() == std::vector<std::string>{"m.json"});  // no temporary file left

  // A write that fails part-way (a file size limit, SIGXFSZ ignored so write() returns EFBIG):
  // the file keeps its old contents and no temporary file is left.
  { std::ofstream(file) << "old"; }
  struct rlimit saved {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  void (*const old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::string error;
  try {
    epgraph::json::save_exported_program(ep, file);
  } catch (const serialization_error& e) {
    error = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  REQUIRE(text.size() > 1024);
  CHECK(error ==
        "cannot write '" + file.string() + "': the write failed (disk full or file too large?)");
  CHECK(read(file) == "old");
  CHECK(files() == std::vector<std::string>{"m.json"});

  // Through a symlink: the file it points to is replaced, the link stays a link.
  const fs::path link = dir / "link.json";
  fs::create_symlink("m.json", link);
  epgraph::json::save_exported_program(ep, link);
  CHECK(fs::is_symlink(link));
  CHECK(read(file) == text);
  CHECK(files() == std::vector<std::string>{"link.json", "m.json"});

  // A device is written in place, not replaced by a regular file.
  if (fs::exists("/dev/null")) {
    CHECK_NOTHROW(epgraph::json::save_exported_program(ep, "/dev/null"));
    CHECK(fs::is_character_file("/dev/null"));
  }
  // Where nothing can be written.
  CHECK_THROWS_WITH(epgraph::json::save_exported_program(ep, dir),
                    "cannot write '" + dir.string() + "': a directory");
  const fs::path nowhere = dir / "no" / "m.json";
  CHECK_THROWS_WITH(epgraph::json::save_exported_program(ep, nowhere),
                    "cannot write '" + nowhere.string() + "': directory '" + (dir / "no").string() +
                        "' does not exist");
  CHECK(files() == std::vector<std::string>{"link.json", "m.json"});
}

// --- 10. tensor metadata torch cannot build a fake tensor from -------------------------------

TEST_CASE("tensor values whose metadata no tensor can have are refused with torch's message",
          "[json][fidelity][errors]") {
  auto load_with = [](const char* value, json m) {
    json doc = reserved_names_program();
    doc["graph_module"]["graph"]["tensor_values"][value] = std::move(m);
    (void)load_exported_program_from_string(doc.dump());
  };
  // torch.empty_strided(sizes, strides) in deserialize_tensor_meta:
  CHECK_THROWS_WITH(load_with("sum", meta({2}, {2, 1})),
                    "graph_module.graph.tensor_values.sum: dimensionality of sizes (1) must match "
                    "dimensionality of strides (2)");
  CHECK_THROWS_WITH(load_with("input", meta({1, 2}, {1})),
                    "graph_module.graph.tensor_values.input: dimensionality of sizes (2) must "
                    "match dimensionality of strides (1)");
  // A negative storage offset (torch's as_strided message; torch's deserializer drops offsets).
  CHECK_THROWS_WITH(load_with("abs", meta({}, {}, -1)),
                    "graph_module.graph.tensor_values.abs.storage_offset: Tensor: invalid storage "
                    "offset -1");
  CHECK_THROWS_AS(load_with("abs", meta({}, {}, -1)), serialization_error);
  // Fine: an empty dimension, a non-zero offset, a stride of 0 (expanded), a negative stride
  // (torch's fake tensor accepts it).
  CHECK_NOTHROW(load_with("sum", meta({0}, {1}, 3)));
  CHECK_NOTHROW(load_with("sum", meta({2}, {0})));
  CHECK_NOTHROW(load_with("sum", meta({2}, {-1})));
  // A negative size (torch.empty_strided's message, with every size), dtype 0 (UNKNOWN: torch's
  // deserializer has no dtype for it, "KeyError: 0") and a negative device index (torch.device's
  // message), each at its field, on both read paths (simdjson's leaves them to the tree).
  for (const auto backend : {epgraph::json::detail::parser_backend::simdjson,
                             epgraph::json::detail::parser_backend::nlohmann}) {
    auto refused = [&](const char* value, json m) {
      json d = reserved_names_program();
      d["graph_module"]["graph"]["tensor_values"][value] = std::move(m);
      try {
        (void)epgraph::json::detail::load_program<HostTensor>(d.dump(), backend);
      } catch (const serialization_error& e) {
        return std::string(e.what());
      }
      return std::string("loaded");
    };
    CHECK(refused("sum", meta({2, -3}, {3, 1})) ==
          "graph_module.graph.tensor_values.sum.sizes[1]: Trying to create tensor with negative "
          "dimension -3: [2, -3]");
    // An element count beyond int64 (torch's numel check, c10::safe_compute_numel: sizes
    // multiplied in order as uint64; a leading 0 keeps the product 0, a late one does not).
    constexpr std::int64_t p40 = std::int64_t{1} << 40, p61 = std::int64_t{1} << 61,
                           p62 = std::int64_t{1} << 62;
    CHECK(refused("sum", meta({p40, p40}, {p40, 1})) ==
          "graph_module.graph.tensor_values.sum.sizes: numel: integer multiplication overflow "
          "(sizes [1099511627776, 1099511627776])");
    CHECK(refused("sum", meta({p61, 4}, {4, 1})) ==
          "graph_module.graph.tensor_values.sum.sizes: numel: integer multiplication overflow "
          "(sizes [2305843009213693952, 4])");
    CHECK(refused("sum", meta({p62, p62, 0}, {1, 1, 1})) ==
          "graph_module.graph.tensor_values.sum.sizes: numel: integer multiplication overflow "
          "(sizes [4611686018427387904, 4611686018427387904, 0])");
    CHECK(refused("sum", meta({0, p62, p62}, {1, 1, 1})) == "loaded");
    CHECK(refused("sum", meta({p62, 1}, {1, 1})) == "loaded");
    json symbolic = meta({-1, 2}, {2, 1});
    symbolic["sizes"][1] = {{"as_expr", {{"expr_str", "s0"}, {"hint", nullptr}}}};
    CHECK(refused("input", symbolic) ==
          "graph_module.graph.tensor_values.input.sizes[0]: Trying to create tensor with negative "
          "dimension -1: [-1, s0]");
    json unknown = meta({2}, {1});
    unknown["dtype"] = 0;
    CHECK(refused("max", unknown) ==
          "graph_module.graph.tensor_values.max.dtype: unknown ScalarType 0");
    json device = meta({2}, {1});
    device["device"]["index"] = -5;
    CHECK(refused("max", device) ==
          "graph_module.graph.tensor_values.max.device.index: Device index must not be negative");
    device["device"]["index"] = 0;
    CHECK(refused("max", device) == "loaded");
  }
  // The same values as arguments: a ScalarType 0 and a device of negative index.
  for (const json& arg :
       {json{{"as_scalar_type", 0}}, json{{"as_device", {{"type", "cpu"}, {"index", -1}}}}}) {
    json d = reserved_names_program();
    d["graph_module"]["graph"]["nodes"][1]["inputs"].push_back(named("extra", arg, 2));
    const bool dtype_arg = arg.contains("as_scalar_type");
    CHECK_THROWS_WITH(
        load_exported_program_from_string(d.dump()),
        dtype_arg ? "graph_module.graph.nodes[1].inputs[1].arg.as_scalar_type: unknown ScalarType 0"
                  : "graph_module.graph.nodes[1].inputs[1].arg.as_device.index: Device index must "
                    "not be negative");
  }
  // Nested graphs' tensor values go through the same check (both read paths).
  json doc = reserved_names_program();
  json streamed_off = doc;
  streamed_off["graph_module"]["graph"]["tensor_values"]["sum"] = meta({2}, {});
  // A duplicate key makes the loader parse the tree again without streaming.
  std::string text = streamed_off.dump();
  const std::string key = "\"tensor_values\":{";
  const std::string dup = "\"dup\":" + meta({1}, {1}).dump() + ",";
  text.insert(text.find(key) + key.size(), dup + dup);
  CHECK_THROWS_WITH(load_exported_program_from_string(text),
                    "graph_module.graph.tensor_values.sum: dimensionality of sizes (1) must match "
                    "dimensionality of strides (0)");
}

TEST_CASE("saving refuses tensor metadata torch's loader refuses, with the loader's message",
          "[json][fidelity][errors]") {
  // A C++ pass can set any NodeMeta::val; what torch's deserializer (and epgraph's reader)
  // refuses is refused by the writer rather than written.
  Program ep = load_exported_program_from_string(reserved_names_program().dump());
  epgraph::Node* sum = ep.graph().find_node("sum");
  REQUIRE(sum != nullptr);
  REQUIRE(sum->meta().val.tensor() != nullptr);
  const epgraph::TensorMeta good = *sum->meta().val.tensor();
  const std::string before = save_exported_program_to_string(ep);
  auto saved_with = [&](const std::function<void(epgraph::TensorMeta&)>& change) {
    epgraph::TensorMeta m = good;
    change(m);
    sum->mutable_meta().val = m;
    std::string out;
    try {
      out = "saved:" + save_exported_program_to_string(ep);
    } catch (const serialization_error& e) {
      out = e.what();
    }
    sum->mutable_meta().val = good;
    return out;
  };
  CHECK(saved_with([](epgraph::TensorMeta& m) {
          m.sizes = {epgraph::SymInt{std::int64_t{2}}, epgraph::SymInt{std::int64_t{-3}}};
          m.strides = {epgraph::SymInt{std::int64_t{3}}, epgraph::SymInt{std::int64_t{1}}};
        }) ==
        "graph_module.graph.tensor_values.sum.sizes[1]: Trying to create tensor with negative "
        "dimension -3: [2, -3]");
  CHECK(saved_with([](epgraph::TensorMeta& m) { m.dtype = static_cast<dtype>(0); }) ==
        "graph_module.graph.tensor_values.sum.dtype: unknown ScalarType 0");
  CHECK(saved_with([](epgraph::TensorMeta& m) { m.layout = static_cast<epgraph::Layout>(99); }) ==
        "graph_module.graph.tensor_values.sum.layout: unknown Layout 99");
  // The dtype is named before the layout, and the layout before the strides, as a load of the
  // written text would name them.
  CHECK(saved_with([](epgraph::TensorMeta& m) {
          m.dtype = static_cast<dtype>(99);
          m.layout = static_cast<epgraph::Layout>(-1);
        }) == "graph_module.graph.tensor_values.sum.dtype: unknown ScalarType 99");
  CHECK(saved_with([](epgraph::TensorMeta& m) {
          m.layout = static_cast<epgraph::Layout>(8);
          m.strides.clear();
        }) == "graph_module.graph.tensor_values.sum.layout: unknown Layout 8");
  CHECK(saved_with([](epgraph::TensorMeta& m) { m.device.index = -1; }) ==
        "graph_module.graph.tensor_values.sum.device.index: Device index must not be negative");
  CHECK(saved_with([](epgraph::TensorMeta& m) { m.strides.clear(); }) ==
        "graph_module.graph.tensor_values.sum: dimensionality of sizes (" +
            std::to_string(good.sizes.size()) + ") must match dimensionality of strides (0)");
  CHECK(saved_with(
            [](epgraph::TensorMeta& m) { m.storage_offset = epgraph::SymInt{std::int64_t{-2}}; }) ==
        "graph_module.graph.tensor_values.sum.storage_offset: Tensor: invalid storage "
        "offset -2");
  // Values torch accepts are written, and the refusals changed nothing.
  const std::string index0 = saved_with([](epgraph::TensorMeta& m) { m.device.index = 0; });
  CHECK(index0.rfind("saved:", 0) == 0);
  CHECK(save_exported_program_to_string(ep) == before);
}

TEST_CASE("saving refuses node arguments torch's loader refuses, naming the node and input",
          "[json][fidelity][errors]") {
  // A ScalarType, Layout or MemoryFormat outside torch's enums, or a device of negative index,
  // set on a node by a C++ pass: written, the file would not load (the reader says "unknown
  // ScalarType 0" at the argument); the writer refuses it instead.
  Program ep = load_exported_program_from_string(reserved_names_program().dump());
  epgraph::Node* sum = ep.graph().find_node("sum");
  REQUIRE(sum != nullptr);
  // An unused call of an operator epgraph has no schema for (any keyword is accepted).
  epgraph::Node* probe = nullptr;
  {
    const auto at = ep.graph().inserting_after(sum);
    probe = ep.graph().call_function("torch.ops.my_lib.probe.default", {sum},
                                     {{"extra", epgraph::none}}, "probe");
  }
  probe->mutable_meta().val = *sum->meta().val.tensor();
  const epgraph::Kwargs kwargs = probe->kwargs();
  const std::string before = save_exported_program_to_string(ep);
  auto saved_with = [&](epgraph::Argument extra) {
    probe->update_kwarg("extra", std::move(extra));
    std::string out;
    try {
      out = "saved:" + save_exported_program_to_string(ep);
    } catch (const serialization_error& e) {
      out = e.what();
    }
    probe->set_kwargs(kwargs);
    return out;
  };
  const std::string head =
      "graph_module.graph.nodes: node 'probe' (torch.ops.my_lib.probe.default) cannot be "
      "written: "
      "input 'extra': ";
  CHECK(saved_with(static_cast<dtype>(0)) == head + "unknown ScalarType 0");
  CHECK(saved_with(static_cast<dtype>(99)) == head + "unknown ScalarType 99");
  CHECK(saved_with(static_cast<epgraph::Layout>(8)) == head + "unknown Layout 8");
  CHECK(saved_with(static_cast<epgraph::MemoryFormat>(5)) == head + "unknown MemoryFormat 5");
  CHECK(saved_with(static_cast<epgraph::MemoryFormat>(-1)) == head + "unknown MemoryFormat -1");
  CHECK(saved_with(epgraph::Device{"cpu", -1}) == head + "Device index must not be negative");
  // The largest values torch knows are written and read back as they were.
  for (const epgraph::Argument& good :
       {epgraph::Argument(static_cast<epgraph::Layout>(7)),
        epgraph::Argument(static_cast<epgraph::MemoryFormat>(4)),
        epgraph::Argument(epgraph::Device{"cpu", 0}), epgraph::Argument(dtype::bfloat16)}) {
    const std::string text = saved_with(good);
    REQUIRE(text.rfind("saved:", 0) == 0);
    const Program back = load_exported_program_from_string(text.substr(6));
    const epgraph::Node* read = back.graph().find_node("probe");
    REQUIRE(read != nullptr);
    REQUIRE(read->kwargs().size() == 1);
    CHECK(read->kwargs()[0].first == "extra");
    CHECK(read->kwargs()[0].second == good);
  }
  // The refusals changed nothing.
  CHECK(save_exported_program_to_string(ep) == before);
}

// --- 5. fill values as torch.full converts them ----------------------------------------------

TEST_CASE("HostTensor::full converts a Python float as torch.full does", "[tensor][fidelity]") {
  // torch.full((2,), v, dtype=d) in torch 2.13.
  auto refused = [](dtype d, double v, const char* type) {
    CHECK_THROWS_AS(HostTensor::full(d, {2}, v), epgraph::value_error);
    CHECK_THROWS_WITH(HostTensor::full(d, {2}, v), std::string("value cannot be converted to "
                                                               "type ") +
                                                       type + " without overflow");
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  refused(dtype::uint8, 300.0, "uint8_t");
  refused(dtype::uint8, 255.9, "uint8_t");
  refused(dtype::uint8, -0.5, "uint8_t");
  refused(dtype::uint8, -1.0, "uint8_t");
  refused(dtype::int8, 128.0, "int8_t");
  refused(dtype::int16, 1e300, "int16_t");
  refused(dtype::int32, nan, "int");
  refused(dtype::int32, inf, "int");
  refused(dtype::int32, 2147483647.5, "int");
  refused(dtype::int64, 1e19, "int64_t");
  refused(dtype::uint16, 65536.0, "uint16_t");
  refused(dtype::uint32, -1.0, "uint32_t");
  refused(dtype::uint64, 1e20, "uint64_t");
  refused(dtype::float16, 65519.0, "c10::Half");
  refused(dtype::float16, 1e6, "c10::Half");
  refused(dtype::bfloat16, 1e40, "c10::BFloat16");
  refused(dtype::float32, 1e40, "float");
  refused(dtype::float32, -1e300, "float");

  CHECK(first_element<std::int32_t>(HostTensor::full(dtype::int32, {2}, 3.7)) == 3);
  CHECK(first_element<std::int32_t>(HostTensor::full(dtype::int32, {2}, -3.7)) == -3);
  CHECK(first_element<std::int32_t>(HostTensor::full(dtype::int32, {2}, -0.5)) == 0);
  CHECK(first_element<std::uint8_t>(HostTensor::full(dtype::uint8, {2}, 255.0)) == 255);
  CHECK(first_element<std::int64_t>(HostTensor::full(dtype::int64, {2}, 9223372036854775808.0)) ==
        std::numeric_limits<std::int64_t>::min());
  CHECK(first_element<std::uint64_t>(
            HostTensor::full(dtype::uint64, {2}, 18446744073709551616.0)) == 0);
  CHECK(first_element<std::uint8_t>(HostTensor::full(dtype::bool_, {2}, nan)) == 1);
  CHECK(first_element<std::uint8_t>(HostTensor::full(dtype::bool_, {2}, 2.5)) == 1);
  CHECK(first_element<std::uint8_t>(HostTensor::full(dtype::bool_, {2}, 0.0)) == 0);
  CHECK(std::isnan(first_element<float>(HostTensor::full(dtype::float32, {2}, nan))));
  CHECK(first_element<float>(HostTensor::full(dtype::float32, {2}, -inf)) ==
        -std::numeric_limits<float>::infinity());
  CHECK(first_element<std::uint16_t>(HostTensor::full(dtype::float16, {2}, inf)) == 0x7c00);
  CHECK(first_element<std::uint16_t>(HostTensor::full(dtype::float16, {2}, 65504.0)) == 0x7bff);
  CHECK(std::signbit(first_element<double>(HostTensor::full(dtype::float64, {2}, -0.0))));
  CHECK(std::signbit(first_element<float>(HostTensor::full(dtype::float32, {2}, -0.0))));
  // torch fills a one-element float16 / bfloat16 tensor without the range check.
  CHECK(first_element<std::uint16_t>(HostTensor::full(dtype::float16, {1}, 65519.0)) == 0x7bff);
  CHECK(first_element<std::uint16_t>(HostTensor::full(dtype::float16, {}, 1e6)) == 0x7c00);
  CHECK(first_element<std::uint16_t>(HostTensor::full(dtype::bfloat16, {1, 1}, 1e40)) == 0x7f80);
  refused(dtype::float32, 1e40, "float");  // float32 is checked at any size
  CHECK_THROWS_WITH(HostTensor::full(dtype::float32, {1}, 1e40),
                    "value cannot be converted to type float without overflow");
  // An empty tensor still checks the value.
  CHECK_THROWS_WITH(HostTensor::full(dtype::uint8, {0}, 300.0),
                    "value cannot be converted to type uint8_t without overflow");
  CHECK_THROWS_WITH(HostTensor::full(dtype::complex64, {2}, 1.0),
                    "Cannot fill a tensor of dtype complex64");
}

TEST_CASE("HostTensor::full converts a Python int as torch.full does", "[tensor][fidelity]") {
  auto refused = [](dtype d, auto v, const char* type) {
    CHECK_THROWS_WITH(HostTensor::full(d, {2}, v), std::string("value cannot be converted to "
                                                               "type ") +
                                                       type + " without overflow");
  };
  refused(dtype::uint8, 300, "uint8_t");
  refused(dtype::uint8, -256, "uint8_t");
  refused(dtype::int8, -129, "int8_t");
  refused(dtype::int32, std::int64_t{2147483648}, "int");
  refused(dtype::uint32, std::int64_t{-4294967296}, "uint32_t");
  refused(dtype::int64, std::uint64_t{9223372036854775808u}, "int64_t");  // torch: 2**63
  refused(dtype::float16, 70000, "c10::Half");
  // Negative values whose magnitude fits wrap (torch's two's-complement rule).
  CHECK(first_element<std::uint8_t>(HostTensor::full(dtype::uint8, {2}, -1)) == 255);
  CHECK(first_element<std::uint8_t>(HostTensor::full(dtype::uint8, {2}, -255)) == 1);
  CHECK(first_element<std::uint32_t>(HostTensor::full(dtype::uint32, {2}, -1)) == 4294967295u);
  CHECK(first_element<std::uint64_t>(HostTensor::full(dtype::uint64, {2}, -1)) ==
        std::numeric_limits<std::uint64_t>::max());
  CHECK(first_element<std::uint64_t>(
            HostTensor::full(dtype::uint64, {2}, std::uint64_t{18446744073709551615u})) ==
        std::numeric_limits<std::uint64_t>::max());
  CHECK(first_element<std::int32_t>(HostTensor::full(dtype::int32, {2}, -2147483648LL)) ==
        std::numeric_limits<std::int32_t>::min());
  CHECK(first_element<std::uint8_t>(HostTensor::full(dtype::bool_, {2}, 7)) == 1);
  CHECK(first_element<std::uint8_t>(HostTensor::full(dtype::uint8, {2}, true)) == 1);
  CHECK(floats_of(HostTensor::full(dtype::float32, {2}, 3)) == std::vector<float>{3.0f, 3.0f});
  CHECK(first_element<double>(HostTensor::full(dtype::float64, {2}, -7)) == -7.0);
  CHECK(first_element<std::uint16_t>(HostTensor::full(dtype::float16, {1}, 70000)) == 0x7c00);
}

// --- 6. names Python cannot bind -------------------------------------------------------------

TEST_CASE("edits refuse placeholder names the generated module cannot bind", "[edit][fidelity]") {
  // (Without the constant input: validate_graph_signature, which the edits run first, compares
  // its spec name `list` with the placeholder `list_1`, as ExecuTorch's helper does.)
  Program ep = load_exported_program_from_string(reserved_names_program(false).dump());
  const auto before = epgraph_test::snapshot(ep);
  const std::string self_reason =
      "ep.module() binds placeholders as parameters of forward(self, ...), so a placeholder "
      "named 'self' makes its code a SyntaxError (duplicate argument 'self')";
  const std::string none_reason =
      "'None' is a Python keyword that torch.fx's namespace does not rename, so ep.module()'s "
      "generated code would be a SyntaxError";
  CHECK_THROWS_AS(
      epgraph::create_mutable_buffer(ep, "self", HostTensor::zeros(dtype::float32, {2})),
      epgraph::value_error);
  CHECK_THROWS_WITH(
      epgraph::create_mutable_buffer(ep, "self", HostTensor::zeros(dtype::float32, {2})),
      "Buffer name 'self' cannot be used: " + self_reason);
  CHECK_THROWS_WITH(
      epgraph::create_mutable_buffer(ep, "None", HostTensor::zeros(dtype::float32, {2})),
      "Buffer name 'None' cannot be used: " + none_reason);
  {
    auto at = ep.graph().inserting_before(ep.graph().find_node("input"));
    CHECK_THROWS_WITH(
        epgraph::create_constant_placeholder(ep, "self", epgraph::InputKind::PARAMETER,
                                             HostTensor::zeros(dtype::float32, {2})),
        "Placeholder name 'self' cannot be used: " + self_reason);
    CHECK_THROWS_WITH(
        epgraph::create_constant_placeholder(ep, "None", epgraph::InputKind::CONSTANT_TENSOR,
                                             HostTensor::zeros(dtype::float32, {2})),
        "Placeholder name 'None' cannot be used: " + none_reason);
  }
  CHECK(epgraph_test::snapshot(ep) == before);  // strong guarantee

  // Names FX renames are fine (torch's own naming): keywords and builtins get a suffix, other
  // strings are sanitized.
  epgraph::Node* cls =
      epgraph::create_mutable_buffer(ep, "class", HostTensor::zeros(dtype::float32, {2}));
  CHECK(cls->name() == "class_1");
  epgraph::Node* t =
      epgraph::create_mutable_buffer(ep, "True", HostTensor::zeros(dtype::float32, {2}));
  CHECK(t->name() == "True_1");
  epgraph::Node* b =
      epgraph::create_mutable_buffer(ep, "b_self", HostTensor::zeros(dtype::float32, {2}));
  CHECK(b->name() == "b_self");
  CHECK(ep.state_dict().contains("self"));
  epgraph::Node* dashed =
      epgraph::create_mutable_buffer(ep, "self-cache", HostTensor::zeros(dtype::float32, {2}));
  CHECK(dashed->name() == "self_cache");
  CHECK_NOTHROW(epgraph::validate_graph_signature(ep));
}
