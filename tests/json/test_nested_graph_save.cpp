// Nested graphs copied between programs, through the JSON writer and reader (issue 31 item 5):
// a cond grafted onto another program with a cond saves each pair of branches under its own
// targets and loads back; a program with two different nested graphs under one target (what
// torch.fx's graph_copy makes) is refused by the saver before anything is written, naming both
// get_attr nodes. The documents are written here in torch 2.13's form (the cond node of
// ../shared/cases/passes/d09_copy_nested_graphs/cond.pt2); tests/interop/test_passes.py
// (test_graft_cond_into_cond) runs the same graft on files torch exported and runs them.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/json/json.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../support/cond_documents.hpp"
#include "../support/snapshot.hpp"

namespace {

using epgraph::HostTensor;
using epgraph::json::load_exported_program_from_string;
using epgraph::json::save_exported_program;
using epgraph::json::save_exported_program_to_string;
using epgraph::json::serialization_error;
using nlohmann::json;
using Program = epgraph::ExportedProgram<HostTensor>;
using epgraph_test::cond_documents::cond_program;
using epgraph_test::cond_documents::graft;
using epgraph_test::cond_documents::kCosMinus1;
using epgraph_test::cond_documents::kExp;
using epgraph_test::cond_documents::kSinPlus1;
using epgraph_test::cond_documents::kTanh;

// The nested graphs the saved document's cond nodes name, "name" -> graph, in node order.
std::vector<std::pair<std::string, json>> saved_branches(const json& doc) {
  std::vector<std::pair<std::string, json>> out;
  for (const json& n : doc["graph_module"]["graph"]["nodes"]) {
    for (const json& in : n["inputs"]) {
      if (in["arg"].contains("as_graph")) {
        out.emplace_back(in["arg"]["as_graph"]["name"].get<std::string>(),
                         in["arg"]["as_graph"]["graph"]);
      }
    }
  }
  return out;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("a cond grafted onto a cond saves each pair of branches under its own targets",
          "[json][nested][copy]") {
  Program dst = load_exported_program_from_string(cond_program(kExp, kTanh).dump());
  const Program src = load_exported_program_from_string(cond_program(kSinPlus1, kCosMinus1).dump());
  graft(dst, src);
  epgraph::verify(dst);
  const std::string text = save_exported_program_to_string(dst);
  const auto branches = saved_branches(json::parse(text));
  REQUIRE(branches.size() == 4);
  CHECK(branches[0] == std::make_pair(std::string("true_graph_0"), kExp));
  CHECK(branches[1] == std::make_pair(std::string("false_graph_0"), kTanh));
  CHECK(branches[2] == std::make_pair(std::string("true_graph_1"), kSinPlus1));
  CHECK(branches[3] == std::make_pair(std::string("false_graph_1"), kCosMinus1));
  // epgraph's loader reads it back (it refused the file FX's graft gives), as torch would.
  const Program back = load_exported_program_from_string(text);
  CHECK(epgraph::to_string(back.graph()) == epgraph::to_string(dst.graph()));
  CHECK(epgraph::to_string(back.graph())
            .find("%true_graph_1 : [num_users=1] = get_attr[target=true_graph_1]") !=
        std::string::npos);

  // The same graft of a program with the same branches shares them: one target each.
  Program same = load_exported_program_from_string(cond_program(kSinPlus1, kCosMinus1).dump());
  graft(same, src);
  const auto shared = saved_branches(json::parse(save_exported_program_to_string(same)));
  REQUIRE(shared.size() == 4);
  CHECK(shared[2] == std::make_pair(std::string("true_graph_0"), kSinPlus1));
  CHECK(shared[3] == std::make_pair(std::string("false_graph_0"), kCosMinus1));
  CHECK_NOTHROW(load_exported_program_from_string(save_exported_program_to_string(same)));
}

TEST_CASE("the saver refuses two different nested graphs under one target before writing",
          "[json][nested][errors]") {
  // torch.fx's graft: the copied get_attr nodes keep the targets true_graph_0 / false_graph_0.
  Program ep = load_exported_program_from_string(cond_program(kExp, kTanh).dump());
  const Program src = load_exported_program_from_string(cond_program(kSinPlus1, kCosMinus1).dump());
  graft(ep, src);
  epgraph_test::cond_documents::keep_targets_as_fx_does(ep);
  const epgraph::Graph& g = ep.graph();
  CHECK(epgraph::to_string(g).find(
            "%true_graph_2 : [num_users=1] = get_attr[target=true_graph_0]") != std::string::npos);
  const std::string message =
      "graph_module.graph.nodes: get_attr nodes 'true_graph_0' and 'true_graph_2' both name "
      "target 'true_graph_0' for different nested graphs: torch's loader would call the last one "
      "read from both";
  CHECK_THROWS_AS(save_exported_program_to_string(ep), serialization_error);
  CHECK_THROWS_WITH(save_exported_program_to_string(ep), message);

  // To a file: the file keeps its old content and no temporary file is left.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "epgraph_nested_graph_save_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "model.json";
  { std::ofstream(file) << "old content"; }
  const epgraph_test::Snapshot before = epgraph_test::snapshot(ep);
  CHECK_THROWS_WITH(save_exported_program(ep, file), message);
  CHECK(read_text(file) == "old content");
  CHECK(std::distance(std::filesystem::directory_iterator(dir),
                      std::filesystem::directory_iterator()) == 1);
  CHECK(epgraph_test::snapshot(ep) == before);  // saving changes nothing either
  std::filesystem::remove_all(dir);

  // verify names every pair.
  try {
    epgraph::verify(ep);
    FAIL("verify accepted the program");
  } catch (const epgraph::verification_error& e) {
    CHECK(e.violations() ==
          std::vector<std::string>{"get_attr nodes 'true_graph_0' and 'true_graph_2' both name "
                                   "target 'true_graph_0' for different nested graphs",
                                   "get_attr nodes 'false_graph_0' and 'false_graph_2' both name "
                                   "target 'false_graph_0' for different nested graphs"});
  }
}

}  // namespace
