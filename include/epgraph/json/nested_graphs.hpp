// materialize_nested_graphs: the nested graphs a program read from a file keeps as records
// (the branches of cond, the body of map or while_loop, invoke_subgraph's subgraph) made into
// Graphs the program owns, so that passes (propagate_meta, specialize) can enter them.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../ir/graph.hpp"
#include "../program/exported_program.hpp"
#include "detail/dom.hpp"
#include "detail/node_record.hpp"
#include "detail/read_graph.hpp"
#include "error.hpp"

namespace epgraph::json {

/// Makes the nested graphs of `program`'s graph that are kept as records into Graphs the program
/// owns. A program read by load_exported_program / load_archive keeps each nested graph (an
/// `as_graph` argument: cond's branches, map's and while_loop's bodies, invoke_subgraph's
/// subgraph) verbatim in the record of the get_attr node that reads it (NodeMeta::serialized),
/// which the core cannot run. For each such node this reads the graph into a Graph, adds it as
/// `program.nested_graphs()[<node's target>]` (one graph for the several nodes reading one
/// target, as `repeated_subgraph0` and `repeated_subgraph0_1` do) and clears the node's record:
/// the node then reads the owned graph, and epgraph::json's saver writes that graph (values
/// included, so a pass's changes to them are saved) as the node's `as_graph` argument, as it
/// writes the graphs outline_partition makes.
///
/// Only the program's own graph is looked at: a nested graph inside a nested graph (a cond in a
/// cond's branch) stays a record of its get_attr node inside the owned graph (torch names those
/// targets in the nested graph's own namespace, so they may repeat the outer ones:
/// `true_graph_0` inside `true_graph_0`), and propagate_meta reports the op calling it as
/// unsupported.
///
/// Arguments: `program`, changed in place. Returns the number of nested graphs added (0 when there
/// is no record to make into one, e.g. on a second call).
///
/// Errors (nothing changed): serialization_error for a record that is not JSON, or whose graph
/// epgraph's reader refuses (the message names the node: "node 'true_graph_0' (record).graph:
/// ..."); value_error "Node 'true_graph_0_1' reads nested graph 'true_graph_0' with a record
/// that differs from the one node 'true_graph_0' holds" (a hand-made record: torch would call
/// the last graph registered from every node) and "Node 'true_graph_0' reads nested graph
/// 'true_graph_0' from its record, and the program already owns a nested graph of that name";
/// std::bad_alloc. Strong guarantee: the graphs are read first, then added and the records
/// cleared; a failure to add removes the ones added.
///
/// Complexity: O(size of the records), one parse and one graph read per nested graph.
///
/// Mirrors: torch.export.load, which makes every nested graph a submodule of
/// `ep.graph_module` (GraphModuleDeserializer.deserialize_graph on an `as_graph` argument,
/// torch/_export/serde/serialize.py).
template <class Tensor>
std::size_t materialize_nested_graphs(ExportedProgram<Tensor>& program) {
  struct Found {
    Node* node;
    std::string target;
  };
  std::vector<Found> found;
  std::map<std::string, std::pair<const Node*, std::unique_ptr<Graph>>, std::less<>> made;
  for (Node& n : program.graph().nodes()) {
    const std::string& text = std::as_const(n).meta().serialized;
    if (n.op() != OpCode::get_attr || text.empty()) continue;
    const std::string where = "node '" + std::string(n.name()) + "' (record)";
    detail::ojson record;
    try {
      record = detail::parse_ordered(text);
    } catch (const detail::ojson::exception& e) {
      throw serialization_error(where, std::string("is not JSON: ") + e.what());
    }
    const auto graph = record.find(detail::record_key::graph);
    if (graph == record.end()) continue;
    std::string target(n.target());
    if (program.nested_graph(target) != nullptr) {
      throw value_error("Node '" + std::string(n.name()) + "' reads nested graph '" + target +
                        "' from its record, and the program already owns a nested graph of "
                        "that name");
    }
    if (const auto first = made.find(target); first != made.end()) {
      if (first->second.first->meta().serialized != text) {
        throw value_error("Node '" + std::string(n.name()) + "' reads nested graph '" + target +
                          "' with a record that differs from the one node '" +
                          std::string(first->second.first->name()) + "' holds");
      }
    } else {
      auto g = std::make_unique<Graph>();
      detail::GraphReader(*g, false).read(*graph, where + ".graph", {});
      made.emplace(target, std::make_pair(&n, std::move(g)));
    }
    found.push_back(Found{&n, std::move(target)});
  }
  std::vector<NodeMeta*> metas;  // taken before the commit: mutable_meta() may allocate
  metas.reserve(found.size());
  for (const Found& f : found) metas.push_back(&f.node->mutable_meta());
  std::vector<std::string> added;
  added.reserve(made.size());
  try {
    for (auto& [target, entry] : made) {
      added.push_back(target);
      (void)program.add_nested_graph(target, std::move(entry.second));
    }
  } catch (...) {
    for (const std::string& target : added) (void)program.remove_nested_graph(target);
    throw;
  }
  for (NodeMeta* m : metas) m->serialized.clear();  // no-throw
  return made.size();
}

}  // namespace epgraph::json
