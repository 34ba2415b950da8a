// Tests of edits whose cost does not grow with the program: the validated stamp (an edit after
// any outside change still validates), the lookups kept in step (a run of edits on a stamped
// program gives exactly what fresh validations give), Graph::version and Graph::insert_result.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/verify.hpp>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "support/program_builders.hpp"
#include "support/snapshot.hpp"

namespace {

using epgraph::InputKind;
using epgraph::Node;
using epgraph_test::Program;
using epgraph_test::snapshot;
using epgraph_test::tensor;

// One edit of a scripted sequence; returns normally or throws what the edit throws.
using Step = std::function<void(Program&)>;

// Runs `steps` on a program from `make`, each either on the program as the previous step left
// it (`fresh` false: the stamp and lookups of the previous edit are reused) or after a
// non-const graph_signature() call, which makes the edit validate and rebuild everything.
// Records after each step the error text (or "ok") and the snapshot.
template <class Make>
std::vector<std::pair<std::string, epgraph_test::Snapshot>> run_steps(
    Make make, const std::vector<Step>& steps, bool fresh) {
  Program ep = make();
  std::vector<std::pair<std::string, epgraph_test::Snapshot>> out;
  for (const Step& step : steps) {
    if (fresh) (void)ep.graph_signature();
    std::string result = "ok";
    try {
      step(ep);
      epgraph::verify(ep);
    } catch (const std::exception& e) {
      result = e.what();
    }
    out.emplace_back(result, snapshot(ep));
  }
  return out;
}

template <class Make>
void check_same_with_and_without_stamp(Make make, const std::vector<Step>& steps) {
  const auto reused = run_steps(make, steps, false);
  const auto fresh = run_steps(make, steps, true);
  REQUIRE(reused.size() == fresh.size());
  for (std::size_t i = 0; i < reused.size(); ++i) {
    INFO("step " << i);
    CHECK(reused[i].first == fresh[i].first);
    CHECK(reused[i].second == fresh[i].second);
  }
}

Node* node(Program& ep, const char* name) { return ep.graph().find_node(name); }

}  // namespace

TEST_CASE("edit index: a run of edits gives what fresh validations give", "[edit][index]") {
  const epgraph::HostTensor t = tensor({2});
  const std::vector<Step> steps = {
      [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_k0", t); },
      [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_v0", t); },
      [&](Program& ep) {
        epgraph::create_constant_placeholder(ep, "p_new", InputKind::PARAMETER, t);
      },
      [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_k1", t); },
      [&](Program& ep) {
        epgraph::create_constant_placeholder(ep, "c_lift", InputKind::CONSTANT_TENSOR, t);
      },
      [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_v1", t); },
      [&](Program& ep) {
        epgraph::create_constant_placeholder(ep, "b_np", InputKind::BUFFER, t, false);
      },
      [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_k2", t); },
      // refused: same requested name, taken target, taken requested target
      [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_k0", t); },
      [&](Program& ep) { epgraph::create_mutable_buffer(ep, "k0", t); },
      [&](Program& ep) {
        epgraph::create_constant_placeholder(ep, "b_k1", InputKind::PARAMETER, t);
      },
      // the shared-weight answer: the same node, nothing changes
      [&](Program& ep) {
        epgraph::create_constant_placeholder(ep, "p_new", InputKind::PARAMETER, t);
      },
      [&](Program& ep) { epgraph::delete_constant_placeholder(ep, node(ep, "p_new")); },
      [&](Program& ep) { epgraph::delete_constant_placeholder(ep, node(ep, "c_lift")); },
      [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_k3", t); },
      [&](Program& ep) { epgraph::delete_constant_placeholder(ep, node(ep, "b_np")); },
      [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_v3", t); },
      [&](Program& ep) {
        epgraph::create_constant_placeholder(ep, "p_new", InputKind::PARAMETER, t);
      },
      [&](Program& ep) {
        Node* c = ep.graph().call_function("torch.ops.aten.clone.default", {node(ep, "b_k1")});
        epgraph::set_buffer_mutation(ep, "k1", c);
      },
      [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_k4", t); },
      [&](Program& ep) {
        epgraph::create_constant_placeholder(ep, "b_p2", InputKind::BUFFER, t, true);
      },
      [&](Program& ep) {
        Node* c = ep.graph().call_function("torch.ops.aten.clone.default", {node(ep, "b_p2")});
        epgraph::set_buffer_mutation(ep, "b_p2", c);
      },
      [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_k5", t); },
      [&](Program& ep) {
        auto at = ep.graph().inserting_before(ep.graph().first_node());
        epgraph::create_constant_placeholder(ep, "p_first", InputKind::PARAMETER, t);
      },
      [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_k6", t); },
  };
  SECTION("linear + batchnorm (buffer mutations, user input)") {
    check_same_with_and_without_stamp(epgraph_test::linear_batchnorm_program, steps);
  }
  SECTION("constants (non-persistent buffer, lifted constants, custom object)") {
    check_same_with_and_without_stamp(epgraph_test::constants_program, steps);
  }
  SECTION("effect tokens") {
    check_same_with_and_without_stamp([] { return epgraph_test::token_program(true); }, steps);
  }
  SECTION("user input mutation") {
    check_same_with_and_without_stamp(epgraph_test::user_input_mutation_program, steps);
  }
  SECTION("no state") { check_same_with_and_without_stamp(epgraph_test::plain_program, steps); }
}

TEST_CASE("edit index: an edit after a direct change still validates", "[edit][index]") {
  const epgraph::HostTensor t = tensor({2});
  Program ep = epgraph_test::params_and_buffers_program();
  epgraph::create_mutable_buffer(ep, "b_a", t);  // validated, stamped, lookups built
  REQUIRE(epgraph_test::output_spec_strings(ep.graph_signature()) ==
          std::vector<std::string>{"b_a: BUFFER_MUTATION target='a'", "mul: USER_OUTPUT"});

  SECTION("a spec replaced through graph_signature()") {
    ep.graph_signature().output_specs[1] = epgraph_test::user_output("p_weight");
    const auto before = snapshot(ep);
    CHECK_THROWS_AS(epgraph::create_mutable_buffer(ep, "b_b", t), epgraph::runtime_error);
    CHECK_THROWS_WITH(epgraph::create_mutable_buffer(ep, "b_b", t),
                      "Output node mul does not match output spec p_weight");
    CHECK_THROWS_WITH(epgraph::create_constant_placeholder(ep, "p_b", InputKind::PARAMETER, t),
                      "Output node mul does not match output spec p_weight");
    CHECK_THROWS_WITH(epgraph::set_buffer_mutation(ep, "a", node(ep, "mul")),
                      "Output node mul does not match output spec p_weight");
    CHECK(snapshot(ep) == before);
  }
  SECTION("a spec added through a reference kept from before the last edit") {
    epgraph::ExportGraphSignature& sig = ep.graph_signature();
    epgraph::create_mutable_buffer(ep, "b_b", t);  // re-stamps after `sig` was taken
    sig.input_specs.push_back(epgraph_test::user_input("ghost"));
    const auto before = snapshot(ep);
    CHECK_THROWS_WITH(epgraph::create_mutable_buffer(ep, "b_c", t),
                      "Graph has 4 placeholder nodes but signature has 5 input specs");
    CHECK(snapshot(ep) == before);
  }
  SECTION("a placeholder renamed through the graph") {
    // The program renames the specs along with the node: still valid, the edit goes on.
    ep.graph().rename_node(node(ep, "b_a"), "b_renamed");
    epgraph::create_mutable_buffer(ep, "b_b", t);
    CHECK(epgraph_test::placeholder_names(ep.graph()) ==
          std::vector<std::string>{"p_weight", "b_scale", "b_renamed", "b_b"});
    epgraph::verify(ep);
  }
  SECTION("a placeholder added through the graph") {
    (void)ep.graph().placeholder("stray");
    const auto before = snapshot(ep);
    CHECK_THROWS_WITH(epgraph::create_mutable_buffer(ep, "b_b", t),
                      "Graph has 4 placeholder nodes but signature has 3 input specs");
    CHECK(snapshot(ep) == before);
  }
  SECTION("the results changed through the output node") {
    Node* out = ep.graph().output_node();
    out->set_args({epgraph::Argument(epgraph::ArgumentList{node(ep, "mul"), node(ep, "mul")})});
    const auto before = snapshot(ep);
    CHECK_THROWS_WITH(epgraph::create_mutable_buffer(ep, "b_b", t),
                      "Output node mul does not match output spec b_a");
    CHECK(snapshot(ep) == before);
  }
  SECTION("a requested name written into a placeholder's metadata") {
    node(ep, "p_weight")->mutable_meta().requested_name = "b_zzz";
    const auto before = snapshot(ep);
    CHECK_THROWS_WITH(epgraph::create_mutable_buffer(ep, "b_zzz", t),
                      "Placeholder for 'b_zzz' already exists in the graph");
    CHECK(snapshot(ep) == before);
    CHECK(epgraph::create_constant_placeholder(ep, "b_zzz", InputKind::PARAMETER, t) ==
          node(ep, "p_weight"));
  }
  SECTION("a program moved into another keeps nothing stale") {
    Program other = epgraph_test::plain_program();
    std::swap(ep, other);
    (void)other.graph().placeholder("stray");
    CHECK_THROWS_WITH(epgraph::create_mutable_buffer(other, "b_b", t),
                      "Graph has 4 placeholder nodes but signature has 3 input specs");
    epgraph::create_mutable_buffer(ep, "b_b", t);
    CHECK(epgraph_test::placeholder_names(ep.graph()) == std::vector<std::string>{"b_b", "x"});
  }
}

TEST_CASE("Graph::version changes with every change validate_graph_signature can see",
          "[graph][index]") {
  Program ep = epgraph_test::params_and_buffers_program();
  epgraph::Graph& g = ep.graph();
  std::uint64_t v = g.version();
  auto changed = [&] {
    const bool c = g.version() != v;
    v = g.version();
    return c;
  };
  g.lint();
  (void)g.find_node("mul");
  (void)std::as_const(*g.find_node("b_scale")).meta();
  (void)g.find_node("b_scale")->read_meta();
  CHECK_FALSE(changed());
  Node* c = g.call_function("torch.ops.aten.clone.default", {g.find_node("mul")});
  CHECK(changed());
  g.rename_node(c, "copy");
  CHECK(changed());
  c->set_args({g.find_node("p_weight")});
  CHECK(changed());
  g.find_node("mul")->prepend(c);
  CHECK(changed());
  g.find_node("b_scale")->mutable_meta().requested_name = "r";
  CHECK(changed());
  g.insert_result(0, c);
  CHECK(changed());
  g.output_node()->set_args({epgraph::Argument(epgraph::ArgumentList{g.find_node("mul")})});
  CHECK(changed());
  g.erase_node(c);
  CHECK(changed());
}

TEST_CASE("Graph::insert_result", "[graph][index]") {
  Program ep = epgraph_test::params_and_buffers_program();
  epgraph::Graph& g = ep.graph();
  Node* out = g.output_node();
  Node* mul = g.find_node("mul");
  Node* w = g.find_node("p_weight");
  g.insert_result(0, w);
  CHECK(epgraph_test::output_names(g) == std::vector<std::string>{"p_weight", "mul"});
  REQUIRE(w->users().size() == 2);
  CHECK(w->users()[1] == out);
  g.insert_result(2, w);  // already a user: no second edge
  CHECK(epgraph_test::output_names(g) == std::vector<std::string>{"p_weight", "mul", "p_weight"});
  CHECK(w->users().size() == 2);
  g.insert_result(1, mul);
  CHECK(epgraph_test::output_names(g) ==
        std::vector<std::string>{"p_weight", "mul", "mul", "p_weight"});
  CHECK(mul->users().size() == 1);
  g.lint();

  const auto before = snapshot(ep);
  CHECK_THROWS_WITH(g.insert_result(5, mul),
                    "Result position 5 out of range for output node 'output' with 4 results");
  CHECK_THROWS_WITH(g.insert_result(0, nullptr), "Cannot return a null node");
  CHECK_THROWS_WITH(g.insert_result(0, out), "The output node cannot be its own result");
  epgraph::Graph other;
  Node* foreign = other.placeholder("mul");
  CHECK_THROWS_AS(g.insert_result(0, foreign), epgraph::value_error);
  CHECK(snapshot(ep) == before);

  epgraph::Graph bare;
  Node* x = bare.placeholder("x");
  CHECK_THROWS_WITH(bare.insert_result(0, x), "Graph has no output node");
  bare.create_node(epgraph::OpCode::output, "output", {x});
  CHECK_THROWS_WITH(bare.insert_result(0, x),
                    "Output node 'output' does not return a list of results");
}

TEST_CASE("HashCounts: counts, colliding runs, removal across the wrap, growth", "[edit][index]") {
  // Keys chosen to share home slots (multiples of 16 collide in the first 16-slot table) and to
  // form runs that wrap past the table's end (low bits 15), checked against a plain map after
  // every step of a deterministic pseudo-random sequence of adds and removes.
  epgraph::detail::HashCounts counts;
  std::map<std::uint64_t, std::size_t> model;
  std::vector<std::uint64_t> keys;
  for (std::uint64_t k = 0; k < 12; ++k) keys.push_back(k * 16 + 15);  // home 15 at 16 slots
  for (std::uint64_t k = 0; k < 12; ++k) keys.push_back(k * 64);       // home 0 at <= 64 slots
  for (std::uint64_t k = 0; k < 40; ++k) keys.push_back(k * 0x9e3779b97f4a7c15ULL);
  CHECK(counts.count(keys[0]) == 0);
  counts.remove(keys[0]);  // absent from an empty table: nothing
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int step = 0; step < 4000; ++step) {
    const std::uint64_t key = keys[next() % keys.size()];
    const bool add = next() % 3 != 0;
    if (add) {
      counts.add(key);
      ++model[key];
    } else {
      counts.remove(key);
      auto it = model.find(key);
      if (it != model.end() && --it->second == 0) model.erase(it);
    }
    INFO("step " << step << " key " << key << (add ? " added" : " removed"));
    REQUIRE(counts.size() == model.size());
    for (std::uint64_t k : keys) {
      const auto it = model.find(k);
      REQUIRE(counts.count(k) == (it == model.end() ? 0 : it->second));
    }
  }
  // Emptied, the table answers 0 for every key and takes new ones.
  for (const auto& [key, n] : model) {
    for (std::size_t i = 0; i < n; ++i) counts.remove(key);
  }
  CHECK(counts.size() == 0);
  for (std::uint64_t k : keys) CHECK(counts.count(k) == 0);
  counts.add(keys[3]);
  counts.add(keys[3]);
  CHECK(counts.count(keys[3]) == 2);
  counts.clear();
  CHECK(counts.count(keys[3]) == 0);
  CHECK(counts.size() == 0);
}

TEST_CASE("edit index: a target taken only in constants or only by a spec, on a stamped program",
          "[edit][index]") {
  const epgraph::HostTensor t = tensor({2});
  Program ep = epgraph_test::constants_program();
  epgraph::create_mutable_buffer(ep, "b_k", t);  // validated, stamped, lookups built
  const auto before = snapshot(ep);
  // The requested target is the assigned one and free in state_dict: constants is still probed.
  CHECK_THROWS_WITH(epgraph::create_mutable_buffer(ep, "b_lifted_tensor_0", t),
                    "Buffer target 'lifted_tensor_0' already exists in constants");
  CHECK(snapshot(ep) == before);
  // Only the input spec holds the target: found through the index's hash table.
  (void)ep.constants().erase("lifted_tensor_0");
  const auto without = snapshot(ep);
  CHECK_THROWS_WITH(epgraph::create_mutable_buffer(ep, "b_lifted_tensor_0", t),
                    "Buffer target 'lifted_tensor_0' already exists as the target of input spec "
                    "'c_lifted_tensor_0'");
  CHECK_THROWS_WITH(
      epgraph::create_constant_placeholder(ep, "lifted_tensor_0", InputKind::PARAMETER, t),
      "Constant target 'lifted_tensor_0' already exists as the target of input spec "
      "'c_lifted_tensor_0'");
  CHECK(snapshot(ep) == without);
  // A target freed by a deletion on the stamped program is free again for the next edit.
  ep.constants().insert("lifted_tensor_0", t);
  Node* extra = epgraph::create_constant_placeholder(ep, "extra", InputKind::PARAMETER, t);
  CHECK_THROWS_WITH(epgraph::create_mutable_buffer(ep, "b_extra", t),
                    "Buffer target 'extra' already exists in state_dict");
  epgraph::delete_constant_placeholder(ep, extra);
  Node* b = epgraph::create_mutable_buffer(ep, "b_extra", t);
  CHECK(b->name() == "b_extra");
  CHECK(ep.state_dict().contains("extra"));
  epgraph::verify(ep);
  CHECK_THROWS_WITH(epgraph::create_mutable_buffer(ep, "b_extra", t),
                    "Buffer target 'extra' already exists in state_dict");
  // The deleted node's name stays taken (FX's namespace): the next "extra" is extra_1.
  Node* again = epgraph::create_constant_placeholder(ep, "extra", InputKind::PARAMETER, t);
  CHECK(again->name() == "extra_1");
  CHECK(ep.state_dict().contains("extra_1"));
  epgraph::verify(ep);
}
