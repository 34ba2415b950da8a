// Corpus check of real serialized programs (ctest label corpus).
// SPDX-License-Identifier: BSD-3-Clause
//
// Corpus check (ctest label `corpus`): for every ../shared/corpus/real/*.json, load, verify
// (check_state=false: a JSON record has no weights), print, round-trip (load->save->load gives the
// same program; for schema 7.x/8.x load->save is JSON-equal to the input apart from
// schema_version), add a mutable buffer, save, reload and verify again. Exits 77 (skip) when the
// corpus folder is absent, 1 on any failure.

#include <epgraph/epgraph.hpp>
#include <epgraph/json/json.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/verify.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#ifndef EPGRAPH_SHARED_DIR
#define EPGRAPH_SHARED_DIR EPGRAPH_SOURCE_DIR "/../shared"
#endif

namespace fs = std::filesystem;

int main() {
  const fs::path dir = fs::path(EPGRAPH_SHARED_DIR) / "corpus" / "real";
  if (!fs::is_directory(dir)) {
    std::cout << "SKIP: corpus folder " << dir << " is absent\n";
    return 77;
  }
  int failures = 0, files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const std::string name = entry.path().filename().string();
    try {
      std::ifstream f(entry.path());
      const nlohmann::json input = nlohmann::json::parse(f);
      auto ep = epgraph::json::load_exported_program(entry.path());
      epgraph::verify(ep, epgraph::VerifyOptions{false});
      const std::string printed =
          epgraph::to_string(ep.graph()) + epgraph::to_string(ep.graph_signature());
      const std::string saved = epgraph::json::save_exported_program_to_string(ep);
      auto ep2 = epgraph::json::load_exported_program_from_string(saved);
      if (epgraph::to_string(ep2.graph()) + epgraph::to_string(ep2.graph_signature()) != printed ||
          !(ep2.metadata() == ep.metadata()) ||
          epgraph::json::save_exported_program_to_string(ep2) != saved) {
        throw std::runtime_error("load -> save -> load changed the program");
      }
      if (input["schema_version"].is_object()) {
        nlohmann::json a = input, b = nlohmann::json::parse(saved);
        a.erase("schema_version");
        b.erase("schema_version");
        if (a != b) throw std::runtime_error("load -> save is not JSON-equal to the input");
      }
      epgraph::create_mutable_buffer(
          ep, "b_kv_cache", epgraph::HostTensor::zeros(epgraph::dtype::float32, {1, 8, 128, 64}));
      auto ep3 = epgraph::json::load_exported_program_from_string(
          epgraph::json::save_exported_program_to_string(ep));
      epgraph::verify(ep3, epgraph::VerifyOptions{false});
      if (ep3.graph().find_node("b_kv_cache") == nullptr) throw std::runtime_error("buffer lost");
      std::cout << "ok   " << name << " (" << ep.graph().size() << " nodes)\n";
    } catch (const std::exception& e) {
      ++failures;
      std::cout << "FAIL " << name << ": " << e.what() << "\n";
    }
  }
  std::cout << files << " files, " << failures << " failures\n";
  return failures == 0 ? 0 : 1;
}
