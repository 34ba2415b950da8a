// A consumer that uses the I/O entry points: builds `relu(x)`, writes it as JSON (and as a .pt2
// archive when epgraph::archive is there), reads it back, verifies it. Built header-only (linking
// epgraph::json / epgraph::archive) or in compiled mode (linking epgraph::compiled); it prints
// which, so that the packaging tests check that the mode asked for is the mode built.
// SPDX-License-Identifier: BSD-3-Clause
#include <cstdio>
#include <epgraph/epgraph.hpp>
#include <epgraph/json/load.hpp>
#include <epgraph/json/save.hpp>
#include <memory>
#include <string>
#include <utility>
#if defined(EPGRAPH_CONSUMER_ARCHIVE)
#include <cstdlib>
#include <epgraph/archive/load.hpp>
#include <epgraph/archive/save.hpp>
#include <filesystem>
#endif

int main() {
  using epgraph::HostTensor;
  auto graph = std::make_unique<epgraph::Graph>();
  epgraph::Node* x = graph->placeholder("x");
  x->mutable_meta().val =
      epgraph::tensor_meta_of(HostTensor::zeros(epgraph::dtype::float32, {2, 3}));
  epgraph::Node* r = graph->call_function("torch.ops.aten.relu.default", {x});
  r->mutable_meta().val = x->meta().val;
  graph->output({r});
  epgraph::ExportGraphSignature sig;
  sig.input_specs.emplace_back(epgraph::InputKind::USER_INPUT, epgraph::TensorArgument{"x"});
  sig.output_specs.emplace_back(epgraph::OutputKind::USER_OUTPUT, epgraph::TensorArgument{"relu"});
  epgraph::ExportedProgram<HostTensor> ep(std::move(graph), std::move(sig));
  epgraph::verify(ep);
  const std::string text = epgraph::json::save_exported_program_to_string(ep);
  auto back = epgraph::json::load_exported_program_from_string(text);
  epgraph::verify(back);
  if (back.graph().size() != 3 || epgraph::json::save_exported_program_to_string(back) != text) {
    std::printf("round trip changed the program\n");
    return 1;
  }
#if defined(EPGRAPH_CONSUMER_ARCHIVE)
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "epgraph_io_main.pt2";
  epgraph::archive::save_archive(back, file);
  auto from_archive = epgraph::archive::load_archive(file);
  std::filesystem::remove(file);
  epgraph::verify(from_archive);
  if (epgraph::json::save_exported_program_to_string(from_archive) != text) {
    std::printf("archive round trip changed the program\n");
    return 1;
  }
#endif
#if defined(EPGRAPH_COMPILED) && EPGRAPH_COMPILED
  std::printf("compiled mode: round trip ok\n");
#else
  std::printf("header-only: round trip ok\n");
#endif
  return 0;
}
