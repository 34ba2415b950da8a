// Fidelity with torch 2.13 for archives (issue 13): names fixed by the file, bare non-finite
// floats of torch <= 2.6 in both layouts, broken archives reported as such. Archives are made
// here by save_archive / zip_writer; the torch-made cases in ../shared/cases/fidelity are used
// when present (skipped otherwise).
// SPDX-License-Identifier: BSD-3-Clause
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <epgraph/archive/archive.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/json/json.hpp>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../support/archive_files.hpp"

#ifndef EPGRAPH_SOURCE_DIR
#define EPGRAPH_SOURCE_DIR "."
#endif

namespace {

using namespace epgraph;           // NOLINT: test file
using namespace epgraph::archive;  // NOLINT: test file
namespace fs = std::filesystem;
using Program = ExportedProgram<HostTensor>;
using epgraph_test::Bytes;
using epgraph_test::bytes_of;
using epgraph_test::read_zip;
using epgraph_test::shared_case;
using epgraph_test::TempDir;
using epgraph_test::text_of;
using epgraph_test::write_zip;

std::string model_json(const std::string& file) {
  for (const auto& [name, data] : read_zip(file)) {
    const std::string suffix = "models/model.json";
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return text_of(data);
    }
  }
  FAIL("no models/model.json in " << file);
  return "";
}
void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// y = clamp(x, -inf, 3.0), saved by epgraph (torch 2.13's layout and strings).
Program clamp_program() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* c = g->call_function("torch.ops.aten.clamp.default",
                             {x, -std::numeric_limits<double>::infinity(), 3.0});
  g->output({c});
  TensorMeta m;
  m.sizes = {std::int64_t{3}};
  m.strides = {std::int64_t{1}};
  x->mutable_meta().val = m;
  c->mutable_meta().val = m;
  ExportGraphSignature sig;
  sig.input_specs = {InputSpec(InputKind::USER_INPUT, TensorArgument{"x"})};
  sig.output_specs = {OutputSpec(OutputKind::USER_OUTPUT, TensorArgument{"clamp"})};
  ProgramMetadata md;
  md.opset_version = {{"aten", 10}};
  md.verifiers = {"ATEN"};
  return Program(std::move(g), std::move(sig), {}, {}, std::move(md));
}

}  // namespace

TEST_CASE("bare -Infinity loads from both archive layouts, saving writes torch 2.13's string",
          "[archive][fidelity]") {
  TempDir dir;
  save_archive(clamp_program(), dir / "clean.pt2");
  REQUIRE(model_json(dir / "clean.pt2").find("\"as_float\":\"-Infinity\"") != std::string::npos);

  // Current layout, as torch <= 2.6 wrote the float (make_cases.py does the same edit).
  auto entries = read_zip(dir / "clean.pt2");
  for (auto& [name, data] : entries) {
    if (name.find("models/model.json") == std::string::npos) continue;
    std::string text = text_of(data);
    replace_all(text, "\"as_float\":\"-Infinity\"", "\"as_float\": -Infinity");
    data = bytes_of(text);
  }
  write_zip(dir / "bare.pt2", entries);
  const Program ep = load_archive(dir / "bare.pt2");
  CHECK(ep.graph().find_node("clamp")->args()[1].as<double>() ==
        -std::numeric_limits<double>::infinity());
  save_archive(ep, dir / "copy.pt2");
  CHECK(model_json(dir / "copy.pt2").find("\"as_float\":\"-Infinity\"") != std::string::npos);

  // Legacy layout (serialized_exported_program.json).
  std::string legacy_json = json::save_exported_program_to_string(clamp_program());
  replace_all(legacy_json, "\"as_float\":\"-Infinity\"", "\"as_float\":-Infinity");
  write_zip(dir / "legacy.pt2", {{"serialized_exported_program.json", bytes_of(legacy_json)},
                                 {"serialized_state_dict.pt", bytes_of("STATE")},
                                 {"serialized_constants.pt", bytes_of("CONSTANTS")},
                                 {"serialized_example_inputs.pt", {}},
                                 {"version", bytes_of("8.20")}});
  const Program legacy = load_archive(dir / "legacy.pt2");
  CHECK(to_string(legacy.graph()) == to_string(ep.graph()));
  save_archive(legacy, dir / "legacy_copy.pt2");
  CHECK(text_of(read_zip(dir / "legacy_copy.pt2")[0].second).find("\"as_float\":\"-Infinity\"") !=
        std::string::npos);
}

TEST_CASE("empty and truncated archives are broken archives", "[archive][fidelity][errors]") {
  TempDir dir;
  const std::string empty = dir / "empty.pt2";
  std::ofstream(empty, std::ios::binary).flush();
  CHECK_THROWS_AS(load_archive(empty), archive_error);
  CHECK_THROWS_WITH(load_archive(empty),
                    empty + ": not a zip file (no end of central directory record)");
  // Only the first bytes of a zip file ("PK\3\4..."): still a broken archive.
  save_archive(clamp_program(), dir / "whole.pt2");
  std::ifstream in(dir / "whole.pt2", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = dir / "cut.pt2";
  std::ofstream(cut, std::ios::binary) << all.substr(0, 10);
  CHECK_THROWS_WITH(load_archive(cut),
                    cut + ": not a zip file (no end of central directory record)");
}

TEST_CASE("tensor metadata no tensor can have is refused in the program of an archive",
          "[archive][fidelity][errors]") {
  TempDir dir;
  save_archive(clamp_program(), dir / "clean.pt2");
  auto entries = read_zip(dir / "clean.pt2");
  std::string program_entry;
  for (auto& [name, data] : entries) {
    if (name.find("models/model.json") == std::string::npos) continue;
    program_entry = name;
    std::string text = text_of(data);
    const std::string from = "\"strides\":[{\"as_int\":1}]";
    text.replace(text.find(from), from.size(), "\"strides\":[]");
    data = bytes_of(text);
  }
  write_zip(dir / "bad.pt2", entries);
  CHECK_THROWS_WITH(load_archive(dir / "bad.pt2"),
                    dir / "bad.pt2" + ": " + program_entry +
                        ": graph_module.graph.tensor_values.x: dimensionality of sizes (1) must "
                        "match dimensionality of strides (0)");
}

TEST_CASE("torch-made fidelity cases load as torch loads them", "[archive][fidelity][shared]") {
  const std::string sequential = shared_case("sequential_input.pt2");
  const std::string bare = shared_case("bare_neg_inf.pt2");
  if (sequential.empty() || bare.empty()) {
    WARN("../shared/cases/fidelity is absent: skipped");
    return;
  }
  TempDir dir;
  // What torch 2.13 prints for sequential_input.pt2.
  const std::string expected =
      "graph():\n"
      "    %p_0_weight : [num_users=1] = placeholder[target=p_0_weight]\n"
      "    %p_0_bias : [num_users=1] = placeholder[target=p_0_bias]\n"
      "    %input : [num_users=1] = placeholder[target=input]\n"
      "    %linear : [num_users=1] = call_function[target=torch.ops.aten.linear.default](args = "
      "(%input, %p_0_weight, %p_0_bias), kwargs = {})\n"
      "    %relu : [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = "
      "(%linear,), kwargs = {})\n"
      "    return (relu,)";
  const Program ep = load_archive(sequential);
  CHECK(to_string(ep.graph()) == expected);
  CHECK(to_string(ep.graph_signature()).find("\ninput: USER_INPUT\n") != std::string::npos);
  save_archive(ep, dir / "copy.pt2");
  CHECK(to_string(load_archive(dir / "copy.pt2").graph()) == expected);
  CHECK(model_json(dir / "copy.pt2").find("{\"as_tensor\":{\"name\":\"input\"}}") !=
        std::string::npos);

  const Program inf = load_archive(bare);
  CHECK(inf.graph().find_node("clamp")->args()[1].as<double>() ==
        -std::numeric_limits<double>::infinity());
}
