// The lookups the graph edits run (create_mutable_buffer, create_constant_placeholder, ...) must
// not allocate (issue 15 item 4): find_requested_placeholder, Graph::find_node / contains /
// names().is_used, metadata reads through a `Node*`, and the signature lookups of lookup.hpp.
// This executable replaces the global operator new with one that counts calls, which is why it
// is not part of epgraph_tests (whose operator new is tests/support/alloc_failure.hpp's).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cstdlib>
#include <epgraph/epgraph.hpp>
#include <new>
#include <string>
#include <utility>

#include "../support/program_builders.hpp"

namespace {
long g_allocations = 0;  // operator new calls so far

void* counted_malloc(std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

// The number of operator new calls made by `f()`.
template <class F>
long allocations_of(F&& f) {
  const long before = g_allocations;
  f();
  return g_allocations - before;
}
}  // namespace

#include "../support/replace_operator_new.hpp"
void* epgraph_test::replaced_operator_new(std::size_t size) { return counted_malloc(size); }

TEST_CASE("the counting operator new sees allocations", "[alloc]") {
  CHECK(allocations_of([] { std::string s(100, 'x'); }) == 1);
}

TEST_CASE("the lookups used by the graph edits do not allocate", "[alloc][edit]") {
  using epgraph::Node;
  auto ep = epgraph_test::params_and_buffers_program();
  // 1,000 placeholders without metadata (the case issue 15 measured: one allocation each), a
  // buffer made by create_mutable_buffer (with meta().requested_name) and names given up by
  // erased and renamed nodes.
  epgraph::Graph& g = ep.graph();
  Node* cache = epgraph::create_mutable_buffer(ep, "kv_cache", epgraph_test::tensor({2, 2}));
  for (int i = 0; i < 1000; ++i) (void)g.placeholder("extra_" + std::to_string(i));
  Node* gone = g.call_function("torch.ops.aten.neg.default", {cache});
  g.erase_node(gone);
  Node* renamed = g.call_function("torch.ops.aten.neg.default", {cache});
  (void)g.rename_node(renamed, "renamed");
  const epgraph::Graph& cg = g;
  const auto& cep = ep;

  long found = 0;
  CHECK(allocations_of([&] {
          found += epgraph::find_requested_placeholder(cg, "kv_cache") == cache;
          found += epgraph::find_requested_placeholder(cg, "missing") == nullptr;
        }) == 0);
  CHECK(found == 2);
  CHECK(allocations_of([&] {
          found += cg.find_node("kv_cache") == cache;
          found += cg.find_node("extra_999") != nullptr;
          found += cg.find_node("nothing") == nullptr;
          found += cg.contains(cache);
          found += !cg.contains(nullptr);
          found += cg.names().is_used("neg");    // given up by an erased node
          found += cg.names().is_used("neg_1");  // given up by a renamed node
          found += !cg.names().is_used("neg_2");
          found += cg.names().is_used("renamed");  // held by a live node
        }) == 0);
  CHECK(found == 11);
  // Metadata reads: a const graph hands out const nodes, whose meta() is the non-allocating
  // reader; through a plain Node*, read_meta() and the const meta() never create storage.
  long tensors = 0;
  for (const Node& n : cg.nodes()) tensors += n.meta().val.tensor() != nullptr;
  CHECK(tensors >= 3);  // p_weight, b_scale, kv_cache
  CHECK(allocations_of([&] {
          for (const Node* n = cg.first_node(); n != nullptr; n = n->next()) {
            found += !n->meta().requested_name.empty();
            found += n->meta().val.tensor() != nullptr;
          }
          for (const Node& n : cg.placeholders()) found += static_cast<long>(n.meta().other.size());
        }) == 0);
  CHECK(found == 12 + tensors);
  found -= tensors;
  CHECK(allocations_of([&] {
          for (Node* n = g.first_node(); n != nullptr; n = n->next()) {
            found += !n->read_meta().requested_name.empty();
            found += std::as_const(*n).meta().val.tensor() != nullptr;
          }
        }) == 0);
  CHECK(found == 13 + tensors);
  found -= tensors;
  // The signature lookups of lookup.hpp.
  CHECK(allocations_of([&] {
          found += epgraph::is_buffer(cep, cache);
          found += epgraph::is_mutable_buffer(cep, cache);
          found += !epgraph::is_parameter(cep, cache);
          found += epgraph::input_spec_for(cep, cache) != nullptr;
        }) == 0);
  CHECK(found == 17);
  // The writer allocates on first use, once.
  Node* bare = g.find_node("extra_0");
  CHECK(allocations_of([&] { bare->mutable_meta().requested_name = "r"; }) == 1);
  CHECK(allocations_of([&] { found += bare->read_meta().requested_name == "r"; }) == 0);
}
