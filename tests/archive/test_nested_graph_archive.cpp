// save_archive of a program with two different nested graphs under one target (what torch.fx's
// graph_copy makes of a cond grafted onto a cond) is refused before anything is written: an
// archive already at the path keeps its bytes and no temporary file is left (issue 31 item 5).
// After graph_copy's renaming the same program saves and loads back with both pairs of branches.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/archive/archive.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/json/json.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../support/archive_files.hpp"
#include "../support/cond_documents.hpp"
#include "../support/snapshot.hpp"

namespace {

using epgraph::HostTensor;
using epgraph::archive::load_archive;
using epgraph::archive::save_archive;
using epgraph::json::load_exported_program_from_string;
using epgraph_test::TempDir;
using epgraph_test::cond_documents::cond_program;
using epgraph_test::cond_documents::graft;
using epgraph_test::cond_documents::kCosMinus1;
using epgraph_test::cond_documents::kExp;
using epgraph_test::cond_documents::kSinPlus1;
using epgraph_test::cond_documents::kTanh;
using Program = epgraph::ExportedProgram<HostTensor>;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// "name:target" of every get_attr node, in order.
std::vector<std::string> get_attrs(const epgraph::Graph& g) {
  std::vector<std::string> out;
  for (const epgraph::Node& n : g.nodes()) {
    if (n.op() == epgraph::OpCode::get_attr) {
      out.push_back(std::string(n.name()) + ":" + std::string(n.target()));
    }
  }
  return out;
}

TEST_CASE("save_archive refuses two different nested graphs under one target, file untouched",
          "[archive][nested][errors]") {
  TempDir dir;
  const std::string path = dir / "graft.pt2";
  Program dst = load_exported_program_from_string(cond_program(kExp, kTanh).dump());
  const Program src = load_exported_program_from_string(cond_program(kSinPlus1, kCosMinus1).dump());
  graft(dst, src);
  save_archive(dst, path);  // graph_copy's fresh targets: saved and read back
  const Program back = load_archive<HostTensor>(path);
  CHECK(get_attrs(back.graph()) ==
        std::vector<std::string>{"true_graph_0:true_graph_0", "false_graph_0:false_graph_0",
                                 "true_graph_1:true_graph_1", "false_graph_1:false_graph_1"});
  CHECK(epgraph::to_string(back.graph()) == epgraph::to_string(dst.graph()));

  epgraph_test::cond_documents::keep_targets_as_fx_does(dst);
  const std::string before_bytes = read_bytes(path);
  const epgraph_test::Snapshot before = epgraph_test::snapshot(dst);
  CHECK_THROWS_AS(save_archive(dst, path), epgraph::json::serialization_error);
  CHECK_THROWS_WITH(save_archive(dst, path),
                    "graph_module.graph.nodes: get_attr nodes 'true_graph_0' and 'true_graph_2' "
                    "both name target 'true_graph_0' for different nested graphs: torch's loader "
                    "would call the last one read from both");
  CHECK(read_bytes(path) == before_bytes);
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path),
                      std::filesystem::directory_iterator()) == 1);
  CHECK(epgraph_test::snapshot(dst) == before);
}

}  // namespace
