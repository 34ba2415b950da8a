// The JSON loader and saver under allocation failure: each is run with its 1st, 2nd, 3rd, ...
// allocation failing (std::bad_alloc). Every run either completes with the same result as an
// undisturbed run or throws std::bad_alloc (no other exception, nothing half-built returned); the
// sanitizer build (LeakSanitizer) proves that nothing leaks on any of these paths, and a failure
// inside a destructor would end the test executable in std::terminate.
//
// The executable's global operator new/delete are replaced (support/alloc_failure_replacement.cpp);
// the replacement only differs from the default while a test arms it.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/json/json.hpp>
#include <fstream>
#include <new>
#include <optional>
#include <sstream>
#include <string>

#include "../support/alloc_failure.hpp"
#include "../support/program_builders.hpp"
#include "../support/snapshot.hpp"

#ifndef EPGRAPH_SOURCE_DIR
#define EPGRAPH_SOURCE_DIR "."
#endif

namespace {

using epgraph_test::Program;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Everything a load produces, as text: the snapshot (printed graph, users, node meta, names,
// signature, dict keys), what each node keeps for save (NodeMeta::serialized and `other`) and the
// program metadata (opaque fields, versions, range constraints, verifiers, torch version).
std::string loaded_state(const Program& ep) {
  std::ostringstream out;
  out << epgraph_test::snapshot(ep) << "\n";
  for (const epgraph::Node& n : ep.graph().nodes()) {
    out << n.name() << " serialized=" << n.meta().serialized << " other=";
    for (const auto& [k, v] : n.meta().other) out << k << ":" << v << ";";
    out << "\n";
  }
  const epgraph::ProgramMetadata& md = ep.metadata();
  for (const auto& [k, v] : md.opaque) out << "opaque " << k << "=" << v << "\n";
  for (const auto& [k, v] : md.opset_version) out << "opset " << k << "=" << v << "\n";
  for (const auto& r : md.range_constraints) {
    out << "range " << r.symbol << " " << (r.min_val ? std::to_string(*r.min_val) : "-") << " "
        << (r.max_val ? std::to_string(*r.max_val) : "-") << "\n";
  }
  for (const auto& v : md.verifiers) out << "verifier " << v << "\n";
  out << "torch " << md.torch_version << "\n";
  return out.str();
}

// Loads `text` with each allocation failing in turn; returns the number of injected failures.
// Every injected run must throw std::bad_alloc and return nothing (another exception propagates
// and fails the test; std::terminate ends it); the run after the last allocation loads the same
// program as an undisturbed load. The state is compared with injection off (ostream output
// swallows bad_alloc into badbit).
long check_load_under_allocation_failure(const std::string& text) {
  const std::string expected = loaded_state(epgraph::json::load_exported_program_from_string(text));
  std::optional<Program> loaded;
  bool nothing_returned = true;
  const long failures = epgraph_test::for_each_allocation_failure(
      [&] {
        loaded.reset();
        loaded.emplace(epgraph::json::load_exported_program_from_string(text));
      },
      [&](long) {
        nothing_returned = !loaded.has_value();
        return nothing_returned;
      });
  CHECK(nothing_returned);
  REQUIRE(loaded.has_value());
  CHECK(loaded_state(*loaded) == expected);
  return failures;
}

// Saves `ep` with each allocation failing in turn: the program is never changed.
long check_save_under_allocation_failure(const Program& ep) {
  const std::string expected = epgraph::json::save_exported_program_to_string(ep);
  const auto before = epgraph_test::snapshot(ep);
  std::string result;
  bool unchanged = true;
  const long failures = epgraph_test::for_each_allocation_failure(
      [&] { result = epgraph::json::save_exported_program_to_string(ep); },
      [&](long) {
        unchanged = epgraph_test::snapshot(ep) == before;
        return unchanged && result.empty();
      });
  CHECK(unchanged);
  CHECK(result == expected);
  return failures;
}

// A program whose save is refused: every injected run throws std::bad_alloc or the refusal
// itself (the same message), never ends in std::terminate (a tree destroyed while the refusal
// left the writer used to allocate), and the program is unchanged. Returns the injected failures.
long check_refused_save_under_allocation_failure(const Program& ep, const std::string& refusal) {
  try {
    (void)epgraph::json::save_exported_program_to_string(ep);
    FAIL("the save was expected to be refused");
  } catch (const epgraph::json::serialization_error& e) {
    CHECK(std::string(e.what()) == refusal);
  }
  const auto before = epgraph_test::snapshot(ep);
  bool same_refusal = true;
  long failures = 0;
  for (long n = 0;; ++n) {
    epgraph_test::fail_allocation_after(n);
    bool injected = false;
    try {
      (void)epgraph::json::save_exported_program_to_string(ep);
    } catch (const std::bad_alloc&) {
      injected = true;
    } catch (const epgraph::json::serialization_error& e) {
      epgraph_test::stop_failing_allocations();
      same_refusal = same_refusal && std::string(e.what()) == refusal;
    }
    epgraph_test::stop_failing_allocations();
    if (!injected) break;
    ++failures;
  }
  CHECK(same_refusal);
  CHECK(epgraph_test::snapshot(ep) == before);
  return failures;
}

// One float32 user input `x` [6], returned.
Program identity_program() {
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::Node* x = g->placeholder("x");
  x->mutable_meta().val =
      epgraph::tensor_meta_of(epgraph::HostTensor::zeros(epgraph::dtype::float32, {6}));
  g->output({x});
  epgraph::ExportGraphSignature sig;
  sig.input_specs.push_back({epgraph::InputKind::USER_INPUT, epgraph::TensorArgument{"x"}});
  sig.output_specs.push_back({epgraph::OutputKind::USER_OUTPUT, epgraph::TensorArgument{"x"}});
  return Program(std::move(g), std::move(sig));
}

}  // namespace

// The loader runs every allocation: each tree it owns (the parsed document, the per-node records
// kept in NodeMeta::serialized, the symbolic values' JSON) is dismantled bottom-up before it is
// destroyed (include/epgraph/json/detail/dispose.hpp), because nlohmann::json 3.11.2's destructor
// is noexcept but allocates for a non-empty array or object (json_value::destroy reserves a heap
// stack for the children); the loader also never lets an ordered_json object grow after it holds
// non-empty members (growing copies the members and destroys the old ones) and builds no value
// from an initializer list (its temporaries are non-empty arrays).
TEST_CASE("allocation failure: load_exported_program_from_string", "[alloc-load][json]") {
  SECTION("builder programs") {
    for (const Program& ep :
         {epgraph_test::plain_program(),
          epgraph_test::with_tensor_meta(epgraph_test::params_and_buffers_program()),
          epgraph_test::with_tensor_meta(epgraph_test::constants_program()),
          epgraph_test::with_tensor_meta(epgraph_test::user_input_mutation_program())}) {
      const std::string text = epgraph::json::save_exported_program_to_string(ep);
      INFO(text);
      CHECK(check_load_under_allocation_failure(text) > 100);
    }
  }
  SECTION("examples/data/decoder_block.json") {
    const std::string text =
        read_text(std::string(EPGRAPH_SOURCE_DIR) + "/examples/data/decoder_block.json");
    CHECK(check_load_under_allocation_failure(text) > 1000);
  }
}

// The saver under allocation failure. Root causes of the aborts it had (found with ASan + gdb,
// nlohmann::json 3.11.2), now regression-tested here:
//  1. it destroyed non-empty JSON values (initializer-list temporaries such as {{"as_int", v}},
//     trees written out then dropped, ordered_json objects that grew and destroyed the copies of
//     their members), and nlohmann's noexcept destructor allocates for them: a failure there
//     called std::terminate. The writer now builds every tree at its size from moved values
//     (json/detail/tree.hpp: object_of, array_of, MemberList) and dismantles each tree whose life
//     ends in it (write_tree, JsonDisposer).
//  2. basic_json::operator[](key) on a null value sets the type to object BEFORE allocating the
//     container; when that allocation failed the value was an object with a null pointer, and
//     its destructor dereferenced it (the SIGSEGV seen in tensor_meta_to_json's `ordered_json j;`
//     then j["dtype"]). Every tree indexed now starts as ojson::object().
// Each program is saved with its 1st, 2nd, ... allocation failing: every run throws
// std::bad_alloc and returns nothing, the program is unchanged, and the last run writes the text
// an undisturbed save writes.
TEST_CASE("allocation failure: save_exported_program_to_string", "[alloc-save][json]") {
  SECTION("programs built in C++ (records derived from the schemas)") {
    CHECK(check_save_under_allocation_failure(
              epgraph_test::with_tensor_meta(epgraph_test::params_and_buffers_program())) > 50);
    CHECK(check_save_under_allocation_failure(
              epgraph_test::with_tensor_meta(epgraph_test::linear_batchnorm_program())) > 100);
    CHECK(check_save_under_allocation_failure(
              epgraph_test::with_tensor_meta(epgraph_test::constants_program())) > 50);
  }
  SECTION("documents loaded from files (records, symbols, custom objects, tokens kept)") {
    for (const char* name : {"awkward", "constants", "linear_batchnorm", "params_and_buffers",
                             "tokens", "tokens_with_user_output", "user_input_mutation"}) {
      INFO(name);
      const Program ep = epgraph::json::load_exported_program_from_string(
          read_text(std::string(EPGRAPH_SOURCE_DIR) + "/tests/data/json_golden/" + name + ".json"));
      CHECK(check_save_under_allocation_failure(ep) > 50);
    }
  }
  SECTION("examples/data/decoder_block.json") {
    const Program ep = epgraph::json::load_exported_program_from_string(
        read_text(std::string(EPGRAPH_SOURCE_DIR) + "/examples/data/decoder_block.json"));
    CHECK(check_save_under_allocation_failure(ep) > 1000);
  }
}

// Found by a breaker after the writers were made safe: a save REFUSED while a tree was being
// built (the schema record of a node made in C++, an opaque field that is not JSON) destroyed the
// non-empty trees on its way out, and one failed allocation there ended in std::terminate
// (allocation 37 and 62 of these two programs). The writers' local trees are now dismantled on
// every exit (json/detail/tree.hpp: Tree, and object_of/array_of dismantle what they were handed
// when they fail).
TEST_CASE("allocation failure: a refused save throws its refusal or bad_alloc",
          "[alloc-save][json]") {
  SECTION("a split made in C++ whose meta().val is one tensor") {
    Program ep = identity_program();
    epgraph::Node* sp =
        ep.graph().call_function("torch.ops.aten.split.Tensor", {ep.graph().find_node("x"), 2});
    sp->mutable_meta().val =
        epgraph::tensor_meta_of(epgraph::HostTensor::zeros(epgraph::dtype::float32, {2}));
    CHECK(check_refused_save_under_allocation_failure(
              ep,
              "graph_module.graph.nodes: node 'split' (torch.ops.aten.split.Tensor) cannot be "
              "written: return 0 is Tensor(a)[], so meta().val must give a list of tensors "
              "there") > 30);
  }
  SECTION("a malformed opaque field") {
    Program ep = identity_program();
    ep.metadata().opaque.push_back({"graph_module.metadata", "{"});
    const long failures = check_refused_save_under_allocation_failure(
        ep,
        "graph_module.metadata: malformed opaque JSON: [json.exception.parse_error.101] parse "
        "error at line 1, column 2: syntax error while parsing object key - unexpected end of "
        "input; expected string literal");
    CHECK(failures > 50);
  }
}
