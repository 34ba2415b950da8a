// The README's "A dozen lines" sample, run for real on an archive made here, so the README cannot
// drift from the API.
// SPDX-License-Identifier: BSD-3-Clause
#include <unistd.h>

#include <catch2/catch.hpp>
#include <epgraph/archive/archive.hpp>
#include <epgraph/epgraph.hpp>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {
namespace fs = std::filesystem;
using epgraph::HostTensor;
using epgraph::InputKind;
using epgraph::OutputKind;
using epgraph::TensorArgument;

// forward(k, input_pos) -> k * w, with parameter w: the shape the README sample edits.
fs::path write_model(const fs::path& dir) {
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::Node* w = g->placeholder("p_w");
  epgraph::Node* k = g->placeholder("k");
  g->placeholder("input_pos");
  epgraph::Node* mul = g->call_function("torch.ops.aten.mul.Tensor", {k, w});
  g->output({mul});
  for (epgraph::Node* n : {w, k, mul}) {
    n->mutable_meta().val =
        epgraph::tensor_meta_of(HostTensor::zeros(epgraph::dtype::float32, {1, 8, 1, 64}));
  }
  g->find_node("input_pos")->mutable_meta().val =
      epgraph::tensor_meta_of(HostTensor::zeros(epgraph::dtype::int64, {1}));
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph::InputSpec(InputKind::PARAMETER, TensorArgument{"p_w"}, "w"),
                     epgraph::InputSpec(InputKind::USER_INPUT, TensorArgument{"k"}),
                     epgraph::InputSpec(InputKind::USER_INPUT, TensorArgument{"input_pos"})};
  sig.output_specs = {epgraph::OutputSpec(OutputKind::USER_OUTPUT, TensorArgument{"mul"})};
  epgraph::ordered_dict<HostTensor> sd;
  sd.insert("w", HostTensor::full(epgraph::dtype::float32, {1, 8, 1, 64}, 2.0));
  epgraph::ExportedProgram<HostTensor> model(std::move(g), std::move(sig), std::move(sd));
  const fs::path file = dir / "model.pt2";
  epgraph::archive::save_archive(model, file);
  return file;
}
}  // namespace

TEST_CASE("the README sample runs as written", "[archive][readme]") {
  const fs::path dir = fs::temp_directory_path() / ("epgraph_readme_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path model = write_model(dir);
  std::ostringstream printed;
  {
    // --- README: begin (paths adapted) ---
    auto ep = epgraph::archive::load_archive<epgraph::HostTensor>(model);
    epgraph::Node* cache = epgraph::create_mutable_buffer(
        ep, "b_kv_cache", epgraph::HostTensor::zeros(epgraph::dtype::float32, {1, 8, 128, 64}));
    epgraph::Node* pos = ep.graph().find_node("input_pos");
    epgraph::Node* k = ep.graph().find_node("k");
    epgraph::Node* updated = ep.graph().call_function(  // inserted before the output node
        "torch.ops.aten.index_copy.default", {cache, 2, pos, k});
    epgraph::set_inferred_meta(*updated);                   // its val: shape, dtype, strides
    epgraph::set_buffer_mutation(ep, "kv_cache", updated);  // the mutation output returns it
    epgraph::verify(ep);                                    // throws, listing every violation
    printed << ep.graph();                                  // torch.fx's printed form
    epgraph::archive::save_archive(ep,
                                   dir / "model_kv.pt2");  // same layout and records as the input
    // --- README: end ---
  }
  CHECK(printed.str() ==
        "graph():\n"
        "    %p_w : [num_users=1] = placeholder[target=p_w]\n"
        "    %b_kv_cache : [num_users=1] = placeholder[target=b_kv_cache]\n"
        "    %k : [num_users=2] = placeholder[target=k]\n"
        "    %input_pos : [num_users=1] = placeholder[target=input_pos]\n"
        "    %mul : [num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%k, "
        "%p_w), kwargs = {})\n"
        "    %index_copy : [num_users=1] = "
        "call_function[target=torch.ops.aten.index_copy.default](args = (%b_kv_cache, 2, "
        "%input_pos, %k), kwargs = {})\n"
        "    return (index_copy, mul)\n");
  auto reloaded = epgraph::archive::load_archive<HostTensor>(dir / "model_kv.pt2");
  epgraph::verify(reloaded);
  CHECK(reloaded.graph_signature().buffers_to_mutate() ==
        epgraph::NameMap{{"index_copy", "kv_cache"}});
  REQUIRE(reloaded.state_dict().find("kv_cache") != nullptr);
  // The new node's val is the cache's (index_copy keeps self's metadata), and its arguments are
  // written with their schema names, as torch's serializer writes them.
  const epgraph::Node* ic = reloaded.graph().find_node("index_copy");
  REQUIRE(ic != nullptr);
  CHECK(ic->meta().val == reloaded.graph().find_node("b_kv_cache")->meta().val);
  CHECK(ic->meta().serialized.find("\"name\":\"source\"") != std::string::npos);
  CHECK(reloaded.state_dict().at("kv_cache") ==
        HostTensor::zeros(epgraph::dtype::float32, {1, 8, 128, 64}));
  CHECK(reloaded.state_dict().at("w") ==
        HostTensor::full(epgraph::dtype::float32, {1, 8, 1, 64}, 2.0));
  fs::remove_all(dir);
}
