// The envelope of a torch 2.13 serialized program (schema 8.20), for tests that write program
// JSON by hand in the form torch/_export/serde/serialize.py writes it.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <nlohmann/json.hpp>
#include <utility>

namespace epgraph_test {

/// A whole program document around `graph` (the `graph_module.graph` object) and `signature`
/// (`{"input_specs": [...], "output_specs": [...]}`), with torch 2.13's other top-level fields.
inline nlohmann::json program_document(nlohmann::json graph, nlohmann::json signature) {
  using nlohmann::json;
  return {{"graph_module",
           {{"graph", std::move(graph)},
            {"signature", std::move(signature)},
            {"module_call_graph", json::array()},
            {"metadata", json::object()},
            {"treespec_namedtuple_fields", json::object()}}},
          {"opset_version", {{"aten", 10}}},
          {"range_constraints", json::object()},
          {"schema_version", {{"major", 8}, {"minor", 20}}},
          {"verifiers", {"ATEN"}},
          {"torch_version", "2.13.0+cpu"},
          {"guards_code", json::array()}};
}

}  // namespace epgraph_test
