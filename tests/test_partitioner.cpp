// CapabilityBasedPartitioner, operator support helpers, validate_partition and tag_partitions
// (epgraph/passes/partitioner.hpp). The expected partitions are torch 2.13's: each graph was
// built with torch.fx (same ops, same node names) and given to
// torch.fx.passes.infra.partitioner.CapabilityBasedPartitioner(...).propose_partitions() with
// the same support and options; tests/interop/test_partition.py compares whole exported programs.
// SPDX-License-Identifier: BSD-3-Clause
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <epgraph/epgraph.hpp>
#include <epgraph/passes/partitioner.hpp>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "support/sanitized.hpp"

// File-scope aliases (not in an anonymous namespace: unity batches, see tests/CMakeLists.txt).
using PartitionerLines = std::vector<std::pair<std::size_t, std::vector<std::string>>>;

namespace {

PartitionerLines partitioner_result(const std::vector<epgraph::Partition>& parts) {
  PartitionerLines out;
  for (const epgraph::Partition& p : parts) {
    std::vector<std::string> names;
    for (const epgraph::Node* n : p.nodes) names.emplace_back(n->name());
    out.emplace_back(p.id, std::move(names));
  }
  return out;
}

PartitionerLines partitioner_run(epgraph::Graph& g, const std::vector<std::string>& targets,
                                 epgraph::PartitionerOptions options = {}) {
  const epgraph::CapabilityBasedPartitioner p(g, epgraph::supports_targets(targets),
                                              std::move(options));
  return partitioner_result(p.propose_partitions());
}

epgraph::PartitionerOptions partitioner_singles() {
  epgraph::PartitionerOptions o;
  o.allows_single_node_partition = true;
  return o;
}

// x -> relu -> neg -> add(relu, neg): relu and add supported, neg not: merging them would close
// the cycle relu -> neg -> add.
std::unique_ptr<epgraph::Graph> partitioner_cycle_graph() {
  auto g = std::make_unique<epgraph::Graph>();
  g->set_schema_checks(false);
  epgraph::Node* x = g->placeholder("x");
  epgraph::Node* a = g->call_function("torch.ops.aten.relu.default", {x}, {}, "relu_default");
  epgraph::Node* b = g->call_function("torch.ops.aten.neg.default", {a}, {}, "neg_default");
  epgraph::Node* c = g->call_function("torch.ops.aten.add.Tensor", {a, b}, {}, "add_tensor");
  g->output({c});
  return g;
}

// x -> split -> getitem 0 -> relu; getitem 1; add(relu, getitem_1).
std::unique_ptr<epgraph::Graph> partitioner_split_graph() {
  auto g = std::make_unique<epgraph::Graph>();
  g->set_schema_checks(false);
  epgraph::Node* x = g->placeholder("x");
  epgraph::Node* s = g->call_function("torch.ops.aten.split.Tensor", {x, 2}, {}, "split_tensor");
  epgraph::Node* g0 = g->call_function("_operator.getitem", {s, 0}, {}, "getitem");
  epgraph::Node* g1 = g->call_function("operator.getitem", {s, 1}, {}, "getitem_1");
  epgraph::Node* r = g->call_function("torch.ops.aten.relu.default", {g0}, {}, "relu_default");
  epgraph::Node* c = g->call_function("torch.ops.aten.add.Tensor", {r, g1}, {}, "add_tensor");
  g->output({c});
  return g;
}

std::vector<std::vector<std::pair<std::string, std::string>>> partitioner_meta(
    const epgraph::Graph& g) {
  std::vector<std::vector<std::pair<std::string, std::string>>> out;
  for (const epgraph::Node& n : g.nodes()) out.push_back(n.meta().other);
  return out;
}

}  // namespace

TEST_CASE("partitioner: a merge that would close a cycle is refused", "[partitioner]") {
  auto g = partitioner_cycle_graph();
  const std::vector<std::string> ops{"torch.ops.aten.relu.default", "torch.ops.aten.add.Tensor"};
  CHECK(partitioner_run(*g, ops, partitioner_singles()) ==
        PartitionerLines{{0, {"add_tensor"}}, {1, {"relu_default"}}});
  CHECK(partitioner_run(*g, ops).empty());  // two single-node partitions, dropped
}

TEST_CASE("partitioner: horizontal fusion and skip_horizontal_fusion", "[partitioner]") {
  epgraph::Graph g;
  g.set_schema_checks(false);
  epgraph::Node* x = g.placeholder("x");
  epgraph::Node* a = g.call_function("torch.ops.aten.relu.default", {x}, {}, "relu_default");
  epgraph::Node* b = g.call_function("torch.ops.aten.relu.default", {x}, {}, "relu_default_1");
  g.output({a, b});
  // Created in reverse: relu_default_1 is partition 0, relu_default partition 1; on a tie of
  // sizes the merged partition keeps the new one's id.
  CHECK(partitioner_run(g, {"torch.ops.aten.relu"}, partitioner_singles()) ==
        PartitionerLines{{1, {"relu_default", "relu_default_1"}}});
  CHECK(partitioner_run(g, {"torch.ops.aten.relu"}) ==
        PartitionerLines{{1, {"relu_default", "relu_default_1"}}});
  epgraph::PartitionerOptions skip = partitioner_singles();
  skip.skip_horizontal_fusion = true;
  CHECK(partitioner_run(g, {"torch.ops.aten.relu"}, skip) ==
        PartitionerLines{{0, {"relu_default_1"}}, {1, {"relu_default"}}});
}

TEST_CASE("partitioner: a chain split by an unsupported node, ids in torch's order",
          "[partitioner]") {
  epgraph::Graph g;
  g.set_schema_checks(false);
  epgraph::Node* x = g.placeholder("x");
  epgraph::Node* w = g.placeholder("w");
  epgraph::Node* l1 =
      g.call_function("torch.ops.aten.linear.default", {x, w}, {}, "linear_default");
  epgraph::Node* r1 = g.call_function("torch.ops.aten.relu.default", {l1}, {}, "relu_default");
  epgraph::Node* s = g.call_function("torch.ops.aten.sigmoid.default", {r1}, {}, "sigmoid_default");
  epgraph::Node* l2 =
      g.call_function("torch.ops.aten.linear.default", {s, w}, {}, "linear_default_1");
  epgraph::Node* r2 = g.call_function("torch.ops.aten.relu.default", {l2}, {}, "relu_default_1");
  epgraph::Node* m = g.call_function("torch.ops.aten.mul.Tensor", {r2, r1}, {}, "mul_tensor");
  g.output({m});
  const PartitionerLines expected{{1, {"linear_default_1", "relu_default_1", "mul_tensor"}},
                                  {4, {"linear_default", "relu_default"}}};
  const std::vector<std::string> ops{"torch.ops.aten.linear.default", "torch.ops.aten.relu",
                                     "torch.ops.aten.mul.Tensor"};
  CHECK(partitioner_run(g, ops) == expected);
  CHECK(partitioner_run(g, ops, partitioner_singles()) == expected);
}

TEST_CASE("partitioner: getitems join their producer's partition", "[partitioner]") {
  auto g = partitioner_split_graph();
  const std::vector<std::string> ops{"torch.ops.aten.split.Tensor", "torch.ops.aten.relu.default"};
  CHECK(partitioner_run(*g, ops, partitioner_singles()) ==
        PartitionerLines{{0, {"relu_default"}}, {1, {"split_tensor", "getitem", "getitem_1"}}});
  // Without single-node partitions both go (a getitem is no compute), unless split counts twice.
  CHECK(partitioner_run(*g, ops).empty());
  epgraph::PartitionerOptions doubled;
  doubled.allowed_single_node_partition_ops = {"torch.ops.aten.split.Tensor"};
  CHECK(partitioner_run(*g, ops, doubled) ==
        PartitionerLines{{1, {"split_tensor", "getitem", "getitem_1"}}});
}

TEST_CASE("partitioner: getitems of an unsupported producer leave their partition",
          "[partitioner]") {
  auto g = partitioner_split_graph();
  // "_operator.getitem" also names the loader's spelling "operator.getitem" (getitem_1).
  const std::vector<std::string> ops{"_operator.getitem", "torch.ops.aten.relu.default",
                                     "torch.ops.aten.add.Tensor"};
  const PartitionerLines expected{{1, {"relu_default", "add_tensor"}}};
  CHECK(partitioner_run(*g, ops, partitioner_singles()) == expected);
  CHECK(partitioner_run(*g, ops) == expected);
  epgraph::PartitionerOptions relu_free;
  relu_free.non_compute_ops = {"torch.ops.aten.relu.default"};
  CHECK(partitioner_run(*g, ops, relu_free).empty());
}

TEST_CASE("partitioner: operator support helpers", "[partitioner]") {
  epgraph::Graph g;
  g.set_schema_checks(false);
  epgraph::Node* x = g.placeholder("x");
  epgraph::TensorMeta f32_meta;
  f32_meta.sizes = {2};
  f32_meta.strides = {1};
  epgraph::TensorMeta f16_meta = f32_meta;
  f16_meta.dtype = epgraph::dtype::float16;
  x->mutable_meta().val = f32_meta;
  epgraph::Node* add = g.call_function("torch.ops.aten.add.Tensor", {x, x});
  epgraph::Node* adds = g.call_function("torch.ops.aten.add.Scalar", {x, 1});
  epgraph::Node* addmm = g.call_function("torch.ops.aten.addmm.default", {x, x, x});
  epgraph::Node* lin = g.call_function("torch.ops.aten.linear.default", {x, x});
  epgraph::Node* gi = g.call_function("operator.getitem", {x, 0});
  epgraph::Node* cond = g.call_function("torch.ops.higher_order.cond", {x});
  lin->mutable_meta().val = f16_meta;
  g.output({add});
  const epgraph::OperatorSupport t =
      epgraph::supports_targets({"torch.ops.aten.add", "torch.ops.aten.linear.out",
                                 "_operator.getitem", "torch.ops.higher_order.cond"});
  CHECK(t.is_node_supported(*add));
  CHECK(t.is_node_supported(*adds));
  CHECK_FALSE(t.is_node_supported(*addmm));
  CHECK_FALSE(t.is_node_supported(*lin));  // another overload
  CHECK(t.is_node_supported(*gi));
  CHECK(t.is_node_supported(*cond));
  CHECK_FALSE(t.is_node_supported(*x));  // not a call_function
  const epgraph::OperatorSupport f32 = epgraph::supports_dtypes({epgraph::dtype::float32});
  CHECK(f32.is_node_supported(*add));
  CHECK_FALSE(f32.is_node_supported(*lin));  // its output is float16
  const epgraph::OperatorSupport both = epgraph::chain({t, f32});
  const epgraph::OperatorSupport either = epgraph::any_chain({t, f32});
  CHECK(both.is_node_supported(*add));
  CHECK_FALSE(both.is_node_supported(*addmm));
  CHECK(either.is_node_supported(*addmm));
  CHECK_FALSE(either.is_node_supported(*lin));
  CHECK(epgraph::chain({}).is_node_supported(*x));
  CHECK_FALSE(epgraph::any_chain({}).is_node_supported(*x));
  CHECK_FALSE(epgraph::OperatorSupport().is_node_supported(*add));
  const epgraph::OperatorSupport named =
      epgraph::create_op_support([](const epgraph::Node& n) { return n.name() == "addmm"; });
  CHECK(named.is_node_supported(*addmm));
  CHECK_FALSE(named.is_node_supported(*add));
}

TEST_CASE("partitioner: validate_partition refuses a partition that is not convex",
          "[partitioner]") {
  auto g = partitioner_cycle_graph();
  const epgraph::Node* relu = g->find_node("relu_default");
  const epgraph::Node* neg = g->find_node("neg_default");
  const epgraph::Node* add = g->find_node("add_tensor");
  const std::string before = epgraph::to_string(*g);
  CHECK_THROWS_MATCHES(
      epgraph::validate_partition(*g, {add, relu}), epgraph::value_error,
      Catch::Message("validate_partition: the partition {add_tensor, relu_default} is not "
                     "convex: the path relu_default -> neg_default -> add_tensor leaves it after "
                     "'relu_default' and re-enters it at 'add_tensor'"));
  CHECK_NOTHROW(epgraph::validate_partition(*g, {relu, neg, add}));
  CHECK_NOTHROW(epgraph::validate_partition(*g, {relu, neg}));
  CHECK_NOTHROW(epgraph::validate_partition(*g, {}));
  CHECK_THROWS_MATCHES(epgraph::validate_partition(*g, {relu, relu}), epgraph::value_error,
                       Catch::Message("validate_partition: node 'relu_default' is given twice"));
  auto other = partitioner_cycle_graph();
  CHECK_THROWS_MATCHES(
      epgraph::validate_partition(*g, {other->find_node("neg_default")}), epgraph::value_error,
      Catch::Message("validate_partition: node 'neg_default' is not in the graph"));
  CHECK(epgraph::to_string(*g) == before);
}

TEST_CASE("partitioner: every proposed partition is convex", "[partitioner]") {
  auto g = partitioner_split_graph();
  for (const auto& ops :
       {std::vector<std::string>{"torch.ops.aten.split.Tensor", "torch.ops.aten.add.Tensor"},
        std::vector<std::string>{"torch.ops.aten.relu", "torch.ops.aten.add",
                                 "_operator.getitem"}}) {
    const epgraph::CapabilityBasedPartitioner p(*g, epgraph::supports_targets(ops),
                                                partitioner_singles());
    for (const epgraph::Partition& part : p.propose_partitions()) {
      CHECK_NOTHROW(epgraph::validate_partition(
          *g, std::vector<const epgraph::Node*>(part.nodes.begin(), part.nodes.end())));
    }
  }
}

// The cached cycle answers (downstream sets kept per partition, refusals answered by a bit test)
// must give exactly what answering every question by a walk, as torch does, gives. Random DAGs
// whose nodes read one to three earlier values (often far back, so partitions cross each
// other's paths), random supports by node, both option switches.
TEST_CASE("partitioner: cached cycle answers equal the walks torch does", "[partitioner]") {
  std::mt19937 rng(20261204);
  std::size_t merges_seen = 0;
  std::size_t refusals_seen = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto g = std::make_unique<epgraph::Graph>();
    g->set_schema_checks(false);
    std::vector<epgraph::Node*> values{g->placeholder("x"), g->placeholder("y")};
    const int count = 20 + static_cast<int>(rng() % 100);
    std::unordered_set<std::string> supported;
    const std::size_t percent = 30 + rng() % 60;
    for (int i = 0; i < count; ++i) {
      const std::size_t arity = 1 + rng() % 3;
      std::vector<epgraph::Argument> args;
      for (std::size_t a = 0; a < arity; ++a) {
        const std::size_t back = rng() % 4 == 0 ? rng() % values.size() : rng() % 3;
        args.emplace_back(values[values.size() - 1 - std::min(back, values.size() - 1)]);
      }
      const char* target = arity == 1   ? "torch.ops.aten.relu.default"
                           : arity == 2 ? "torch.ops.aten.add.Tensor"
                                        : "torch.ops.aten.addcmul.default";
      epgraph::Node* n = g->call_function(target, std::move(args), {}, "op_" + std::to_string(i));
      if (rng() % 100 < percent) supported.emplace(n->name());
      values.push_back(n);
    }
    g->output({values.back()});
    epgraph::PartitionerOptions options;
    options.allows_single_node_partition = rng() % 2 == 0;
    options.skip_horizontal_fusion = rng() % 4 == 0;
    const epgraph::OperatorSupport support =
        epgraph::create_op_support([&supported](const epgraph::Node& n) {
          return supported.count(std::string(n.name())) != 0;
        });
    const PartitionerLines walked = partitioner_result(
        epgraph::detail::PartitionRun(*g, support, options, /*by_walks=*/true).run());
    const std::vector<epgraph::Partition> cached_parts =
        epgraph::detail::PartitionRun(*g, support, options).run();
    INFO("trial " << trial << ", " << count << " ops, " << supported.size() << " supported");
    REQUIRE(partitioner_result(cached_parts) == walked);
    std::size_t in_parts = 0;
    for (const epgraph::Partition& part : cached_parts) {
      in_parts += part.nodes.size();
      CHECK_NOTHROW(epgraph::validate_partition(
          *g, std::vector<const epgraph::Node*>(part.nodes.begin(), part.nodes.end())));
    }
    if (options.allows_single_node_partition) {
      merges_seen += supported.size() - cached_parts.size();
      refusals_seen += cached_parts.size() > 1 ? 1 : 0;
      CHECK(in_parts == supported.size());
    }
  }
  // The trials exercise both answers: merges, and graphs left in several partitions.
  CHECK(merges_seen > 1000);
  CHECK(refusals_seen > 50);
}

TEST_CASE("partitioner: tags go into custom metadata, nothing else changes", "[partitioner]") {
  auto g = partitioner_cycle_graph();
  epgraph::Node* x = g->find_node("x");
  epgraph::Node* relu = g->find_node("relu_default");
  epgraph::Node* neg = g->find_node("neg_default");
  relu->mutable_meta().other = {{"stack_trace", "line 1"},
                                {"custom", R"({"k": [1, {"s": "}\""}], "delegation_tag": "old"})"}};
  neg->mutable_meta().other = {{"custom", R"({"delegation_tag": "tag7"})"}};
  x->mutable_meta().other = {{"custom", R"({"a": 1})"}};
  const std::string printed = epgraph::to_string(*g);
  const epgraph::CapabilityBasedPartitioner p(
      *g, epgraph::supports_targets({"torch.ops.aten.relu", "torch.ops.aten.add"}),
      partitioner_singles());
  const std::vector<epgraph::Partition> parts = p.propose_partitions();
  REQUIRE(partitioner_result(parts) ==
          PartitionerLines{{0, {"add_tensor"}}, {1, {"relu_default"}}});
  epgraph::tag_partitions(*g, parts);
  using Meta = std::vector<std::pair<std::string, std::string>>;
  CHECK(relu->meta().other ==
        Meta{{"stack_trace", "line 1"},
             {"custom", R"({"k": [1, {"s": "}\""}], "delegation_tag": "tag1"})"}});
  CHECK(neg->meta().other.empty());  // the stale tag went, and with it the empty object
  CHECK(x->meta().other == Meta{{"custom", R"({"a": 1})"}});
  CHECK(g->find_node("add_tensor")->meta().other ==
        Meta{{"custom", R"({"delegation_tag": "tag0"})"}});
  CHECK(epgraph::to_string(*g) == printed);
  // Again: the same texts (idempotent).
  const auto tagged = partitioner_meta(*g);
  epgraph::tag_partitions(*g, parts);
  CHECK(partitioner_meta(*g) == tagged);
  // A custom prefix and key.
  epgraph::tag_partitions(*g, parts, "xnn_", "tag");
  CHECK(g->find_node("add_tensor")->meta().other ==
        Meta{{"custom", R"({"delegation_tag": "tag0", "tag": "xnn_0"})"}});
}

TEST_CASE("partitioner: refused tagging leaves every node as it was", "[partitioner]") {
  auto g = partitioner_cycle_graph();
  epgraph::Node* relu = g->find_node("relu_default");
  epgraph::Node* neg = g->find_node("neg_default");
  epgraph::Node* add = g->find_node("add_tensor");
  neg->mutable_meta().other = {{"custom", R"({"delegation_tag": "tag7"})"}};
  add->mutable_meta().other = {{"custom", "[1, 2]"}};
  const auto before = partitioner_meta(*g);
  const std::string printed = epgraph::to_string(*g);
  std::vector<epgraph::Partition> parts{{0, {add}}, {1, {relu}}};
  CHECK_THROWS_MATCHES(epgraph::tag_partitions(*g, parts), epgraph::value_error,
                       Catch::Message("tag_partitions: node 'add_tensor': its custom metadata is "
                                      "not a JSON object: [1, 2]"));
  CHECK(partitioner_meta(*g) == before);
  add->mutable_meta().other.clear();
  const auto before2 = partitioner_meta(*g);
  parts = {{0, {add, relu}}, {3, {relu}}};
  CHECK_THROWS_MATCHES(
      epgraph::tag_partitions(*g, parts), epgraph::value_error,
      Catch::Message("tag_partitions: node 'relu_default' is in partitions 0 and 3"));
  auto other = partitioner_cycle_graph();
  parts = {{2, {other->find_node("relu_default")}}};
  CHECK_THROWS_MATCHES(
      epgraph::tag_partitions(*g, parts), epgraph::value_error,
      Catch::Message("tag_partitions: node 'relu_default' of partition 2 is not in the graph"));
  CHECK(partitioner_meta(*g) == before2);
  CHECK(epgraph::to_string(*g) == printed);
}

namespace {

// torch.fx's CapabilityBasedPartitioner.propose_partitions (torch 2.13,
// torch/fx/passes/infra/partitioner.py) transliterated line by line, with torch's containers
// (ordered dicts as vectors of keys in insertion order, sets, the full downstream node set of
// every node as _DependencyViewer keeps it): the reference the partitioner's faster bookkeeping
// is compared with. Small graphs only (quadratic memory, a walk per merge attempt).
PartitionerLines partitioner_torch_reference(epgraph::Graph& g,
                                             const epgraph::OperatorSupport& support,
                                             const epgraph::PartitionerOptions& options) {
  std::vector<epgraph::Node*> nodes;
  std::unordered_map<const epgraph::Node*, int> index;
  for (epgraph::Node& n : g.nodes()) {
    index.emplace(&n, static_cast<int>(nodes.size()));
    nodes.push_back(&n);
  }
  const int n_nodes = static_cast<int>(nodes.size());
  std::vector<std::vector<int>> users(nodes.size());
  for (int i = 0; i < n_nodes; ++i) {
    for (const epgraph::Node* u : nodes[static_cast<std::size_t>(i)]->users()) {
      users[static_cast<std::size_t>(i)].push_back(index.at(u));
    }
  }
  // _DependencyViewer: downstreams[node] = users and their downstreams, built in reverse.
  std::vector<std::set<int>> downstreams(nodes.size());
  for (int i = n_nodes - 1; i >= 0; --i) {
    for (int u : users[static_cast<std::size_t>(i)]) {
      downstreams[static_cast<std::size_t>(i)].insert(u);
      downstreams[static_cast<std::size_t>(i)].insert(
          downstreams[static_cast<std::size_t>(u)].begin(),
          downstreams[static_cast<std::size_t>(u)].end());
    }
  }
  std::map<int, std::set<int>> partition_map;
  // torch's assignment dict, indexed by node (-1: no entry); a map cost most of the reference's
  // time at -O0 and under the sanitizers.
  std::vector<int> assignment(nodes.size(), -1);
  const auto assigned = [&assignment](int node) {
    return assignment[static_cast<std::size_t>(node)];
  };
  struct RefPartition {
    std::vector<std::pair<int, int>> nodes;  // (node, node_order) in dict order; -1 for None
  };
  std::vector<int> by_id_keys;  // partitions_by_id's keys in insertion order
  std::map<int, RefPartition> partitions_by_id;
  std::map<int, int> partitions_order;
  std::map<int, std::set<int>> partition_users;
  int new_partition_id = 0;
  const auto downstream_partitions = [&](const std::set<int>& user_nodes,
                                         const std::set<int>& source_ids) {
    // A partition met again adds nothing new to the result (a set): its map is merged once. Same
    // result as torch's loop, which merges it at every node (the reference's main cost). Partition
    // ids are below the node count (at most one new id per node), so flags stand for the sets.
    std::vector<char> in_out(nodes.size(), 0);
    std::vector<char> merged(nodes.size(), 0);
    const auto visit = [&](int path_node) {
      const int id = assigned(path_node);
      if (id < 0 || merged[static_cast<std::size_t>(id)] != 0) return;
      merged[static_cast<std::size_t>(id)] = 1;
      in_out[static_cast<std::size_t>(id)] = 1;
      for (int m : partition_map[id]) in_out[static_cast<std::size_t>(m)] = 1;
    };
    for (int user_node : user_nodes) {
      visit(user_node);  // torch's path: the user node, then its downstream nodes in order
      for (int path_node : downstreams[static_cast<std::size_t>(user_node)]) visit(path_node);
    }
    for (int s : source_ids) in_out[static_cast<std::size_t>(s)] = 0;
    std::set<int> out;
    for (int id = 0; id < n_nodes; ++id) {
      if (in_out[static_cast<std::size_t>(id)] != 0) out.insert(out.end(), id);
    }
    return out;
  };
  const auto maybe_merge_partition = [&](int self_id, int other_id) -> std::pair<int, bool> {
    const auto dfs_iter_find_cycle = [&](const std::set<int>& all_user_nodes) {
      // The nodes of both partitions: torch asks each partition's node dict; one set here.
      std::vector<char> in_either(nodes.size(), 0);
      for (int id : {self_id, other_id}) {
        for (const auto& e : partitions_by_id.at(id).nodes)
          in_either[static_cast<std::size_t>(e.first)] = 1;
      }
      std::vector<char> visited(nodes.size(), 0);  // visited_partition_ids, per user node
      std::vector<int> visited_ids;
      for (int user_node : all_user_nodes) {
        for (int id : visited_ids) visited[static_cast<std::size_t>(id)] = 0;
        visited_ids.clear();
        const auto closes_cycle = [&](int path_node) {
          if (in_either[static_cast<std::size_t>(path_node)] != 0) return true;
          const int partition_id = assigned(path_node);
          if (partition_id < 0 || visited[static_cast<std::size_t>(partition_id)] != 0)
            return false;
          const std::set<int>& p_map = partition_map[partition_id];
          if (p_map.count(self_id) != 0 || p_map.count(other_id) != 0) return true;
          visited[static_cast<std::size_t>(partition_id)] = 1;
          visited_ids.push_back(partition_id);
          return false;
        };
        if (closes_cycle(user_node)) return true;  // the path: the user node, then downstream
        for (int path_node : downstreams[static_cast<std::size_t>(user_node)]) {
          if (closes_cycle(path_node)) return true;
        }
      }
      return false;
    };
    std::set<int> all_user_nodes = partition_users.at(self_id);
    all_user_nodes.insert(partition_users.at(other_id).begin(), partition_users.at(other_id).end());
    for (int id : {self_id, other_id}) {
      for (const auto& e : partitions_by_id.at(id).nodes) all_user_nodes.erase(e.first);
    }
    if (dfs_iter_find_cycle(all_user_nodes)) return {self_id, false};
    int merge_id = self_id;
    int removed_id = other_id;
    if (partitions_by_id.at(self_id).nodes.size() < partitions_by_id.at(other_id).nodes.size()) {
      std::swap(merge_id, removed_id);
    }
    for (const auto& e : partitions_by_id.at(removed_id).nodes) {
      partitions_by_id.at(merge_id).nodes.push_back(e);
      assignment[static_cast<std::size_t>(e.first)] = merge_id;
    }
    partitions_by_id.erase(removed_id);
    by_id_keys.erase(std::find(by_id_keys.begin(), by_id_keys.end(), removed_id));
    partitions_order[merge_id] = std::min(partitions_order[merge_id], partitions_order[removed_id]);
    partitions_order.erase(removed_id);
    std::set<int> merged_map = partition_map[merge_id];
    merged_map.insert(partition_map[removed_id].begin(), partition_map[removed_id].end());
    partition_map[merge_id] = merged_map;
    partition_map.erase(removed_id);
    partition_users[merge_id] = all_user_nodes;
    partition_users.erase(removed_id);
    const std::set<int> down = downstream_partitions(all_user_nodes, {merge_id, removed_id});
    partition_map[merge_id].insert(down.begin(), down.end());
    partition_map[merge_id].erase(merge_id);
    partition_map[merge_id].erase(removed_id);
    return {merge_id, true};
  };
  // merge_single_node(node, node_order, id); id -1 stands for None.
  const auto merge_single_node = [&](int node, int node_order, int id) {
    if (assigned(node) >= 0) {
      auto& v = partitions_by_id.at(assigned(node)).nodes;
      v.erase(std::find_if(v.begin(), v.end(), [&](const auto& e) { return e.first == node; }));
    }
    if (id < 0) {
      assignment[static_cast<std::size_t>(node)] = -1;
    } else if (partitions_by_id.count(id) == 0) {
      assignment[static_cast<std::size_t>(node)] = id;
      partitions_by_id[id].nodes.emplace_back(node, node_order);
      by_id_keys.push_back(id);
      const std::set<int> node_users(users[static_cast<std::size_t>(node)].begin(),
                                     users[static_cast<std::size_t>(node)].end());
      partition_users[id] = node_users;
      const std::set<int> down = downstream_partitions(node_users, {id});
      partition_map[id].insert(down.begin(), down.end());
    } else {
      assignment[static_cast<std::size_t>(node)] = id;
      auto& v = partitions_by_id.at(id).nodes;
      const auto e =
          std::find_if(v.begin(), v.end(), [&](const auto& x) { return x.first == node; });
      if (e == v.end()) {
        v.emplace_back(node, node_order);
      } else {
        e->second = node_order;
      }
    }
  };
  for (int node_order = 0; node_order < n_nodes; ++node_order) {
    const int node = n_nodes - 1 - node_order;
    std::vector<int> merge_candidates;  // an ordered set
    const auto add_candidate = [&](int id) {
      if (std::find(merge_candidates.begin(), merge_candidates.end(), id) == merge_candidates.end())
        merge_candidates.push_back(id);
    };
    bool created_partition = false;
    if (support.is_node_supported(*nodes[static_cast<std::size_t>(node)]) && assigned(node) < 0) {
      const int partition_id = new_partition_id++;
      partitions_order[partition_id] = partition_id;
      merge_single_node(node, node_order, partition_id);
      add_candidate(partition_id);
      created_partition = true;
    }
    if (options.skip_horizontal_fusion) {
      if (created_partition) {
        for (int user : users[static_cast<std::size_t>(node)]) {
          if (assigned(user) >= 0) add_candidate(assigned(user));
        }
      }
    } else {
      std::vector<std::pair<int, int>> sorted;  // (order, id)
      for (const auto& e : partitions_order) sorted.emplace_back(e.second, e.first);
      std::stable_sort(sorted.begin(), sorted.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& e : sorted) add_candidate(e.second);
    }
    if (merge_candidates.size() > 1) {
      int self_id = merge_candidates[0];
      for (std::size_t c = 1; c < merge_candidates.size(); ++c) {
        self_id = maybe_merge_partition(self_id, merge_candidates[c]).first;
      }
    }
  }
  for (auto& e : partitions_by_id) {
    std::stable_sort(e.second.nodes.begin(), e.second.nodes.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
  }
  const auto is_getitem = [&](int node) {
    const epgraph::Node& n = *nodes[static_cast<std::size_t>(node)];
    return n.op() == epgraph::OpCode::call_function &&
           epgraph::qualified_target_name(n) == "_operator.getitem";
  };
  while (true) {
    std::vector<std::pair<int, int>> nodes_reassignment;  // an ordered dict; -1 for None
    for (int node = 0; node < n_nodes; ++node) {
      bool is_tuple_output = true;
      for (int user : users[static_cast<std::size_t>(node)]) {
        if (!is_getitem(user)) {
          is_tuple_output = false;
          break;
        }
      }
      if (!is_tuple_output) continue;
      const int id = assigned(node);
      for (int user : users[static_cast<std::size_t>(node)]) {
        if (assigned(user) != id) {
          const auto e = std::find_if(nodes_reassignment.begin(), nodes_reassignment.end(),
                                      [&](const auto& x) { return x.first == user; });
          if (e == nodes_reassignment.end()) {
            nodes_reassignment.emplace_back(user, id);
          } else {
            e->second = id;
          }
        }
      }
    }
    if (nodes_reassignment.empty()) break;
    for (const auto& e : nodes_reassignment) merge_single_node(e.first, -1, e.second);
  }
  std::set<std::string> non_compute{"torch.ops.aten.view", "_operator.getitem"};
  non_compute.insert(options.non_compute_ops.begin(), options.non_compute_ops.end());
  PartitionerLines out;
  for (int id : by_id_keys) {
    const RefPartition& p = partitions_by_id.at(id);
    if (!options.allows_single_node_partition) {
      int compute_node_count = 0;
      for (const auto& e : p.nodes) {
        const epgraph::Node& n = *nodes[static_cast<std::size_t>(e.first)];
        if (n.op() != epgraph::OpCode::call_function) continue;
        const std::string name = epgraph::qualified_target_name(n);
        if (non_compute.count(name) == 0) ++compute_node_count;
        const auto& doubled = options.allowed_single_node_partition_ops;
        if (std::find(doubled.begin(), doubled.end(), name) != doubled.end()) ++compute_node_count;
      }
      if (compute_node_count <= 1) continue;
    }
    if (p.nodes.empty()) continue;
    std::vector<std::string> names;
    for (const auto& e : p.nodes)
      names.emplace_back(nodes[static_cast<std::size_t>(e.first)]->name());
    out.emplace_back(static_cast<std::size_t>(id), std::move(names));
  }
  return out;
}

// A random DAG: nodes read one to three earlier values (mostly recent ones, a quarter of the
// reads far back, so partitions cross each other's paths; with `residual`, every node also reads
// the value `residual` steps back, a decoder's skip connections), some multi-output nodes read
// through getitems; `percent` of the call_function nodes supported (by name).
std::unique_ptr<epgraph::Graph> partitioner_random_dag(std::mt19937& rng, int count,
                                                       std::size_t percent, int residual,
                                                       std::unordered_set<std::string>& supported) {
  auto g = std::make_unique<epgraph::Graph>();
  g->set_schema_checks(false);
  std::vector<epgraph::Node*> values{g->placeholder("x"), g->placeholder("y")};
  for (int i = 0; i < count; ++i) {
    const std::string name = "op_" + std::to_string(i);
    if (rng() % 12 == 0) {
      epgraph::Node* s =
          g->call_function("torch.ops.aten.split.Tensor", {values.back(), 2}, {}, name);
      if (rng() % 100 < percent) supported.emplace(s->name());
      for (int k = 0; k < 2; ++k) {
        epgraph::Node* gi =
            g->call_function("_operator.getitem", {s, k}, {}, name + "_" + std::to_string(k));
        if (rng() % 100 < percent) supported.emplace(gi->name());
        values.push_back(gi);
      }
      continue;
    }
    const std::size_t arity = 1 + rng() % 3;
    std::vector<epgraph::Argument> args;
    for (std::size_t a = 0; a < arity; ++a) {
      const std::size_t back = rng() % 4 == 0 ? rng() % values.size() : rng() % 3;
      args.emplace_back(values[values.size() - 1 - std::min(back, values.size() - 1)]);
    }
    if (residual > 0 && values.size() > static_cast<std::size_t>(residual)) {
      args.emplace_back(values[values.size() - 1 - static_cast<std::size_t>(residual)]);
    }
    const std::size_t n_args = args.size();
    const char* target = n_args == 1   ? "torch.ops.aten.relu.default"
                         : n_args == 2 ? "torch.ops.aten.add.Tensor"
                         : n_args == 3 ? "torch.ops.aten.addcmul.default"
                                       : "torch.ops.aten.cat.default";
    epgraph::Node* n = g->call_function(target, std::move(args), {}, name);
    if (rng() % 100 < percent) supported.emplace(n->name());
    values.push_back(n);
  }
  std::vector<epgraph::Argument> outs{values.back()};
  if (rng() % 2 == 0) outs.emplace_back(values[values.size() / 2]);
  g->output(std::move(outs));
  return g;
}

}  // namespace

// Seeds of the two comparisons below: all of them in ordinary builds; a third under
// AddressSanitizer, where the transliterated reference (quadratic) took 6 of the 7 minutes of
// CI's sanitizer stage, which looks for memory errors, while the g++ stage compares every seed.
constexpr std::uint32_t partitioner_seeds(std::uint32_t all) {
  return static_cast<std::uint32_t>(epgraph_test::cases_for_build(all, 3));
}

namespace {

// Requires epgraph's partitions of `g` (the nodes named in `supported` supported) to be those of
// torch's algorithm (partitioner_torch_reference), from propose_partitions and, with `walks_too`,
// from the walk-based run as well; returns them.
PartitionerLines require_torch_partitions(epgraph::Graph& g,
                                          const std::unordered_set<std::string>& supported,
                                          const epgraph::PartitionerOptions& options,
                                          bool walks_too) {
  const epgraph::OperatorSupport support = epgraph::create_op_support(
      [&supported](const epgraph::Node& n) { return supported.count(std::string(n.name())) != 0; });
  const PartitionerLines expected = partitioner_torch_reference(g, support, options);
  REQUIRE(partitioner_result(
              epgraph::CapabilityBasedPartitioner(g, support, options).propose_partitions()) ==
          expected);
  if (walks_too) {
    REQUIRE(partitioner_result(
                epgraph::detail::PartitionRun(g, support, options, /*by_walks=*/true).run()) ==
            expected);
  }
  return expected;
}

}  // namespace

// The partitioner against torch's algorithm transliterated (partitioner_torch_reference) on
// random DAGs: many seeds, support densities from sparse to almost everything, both option
// switches, the single-node filter's op lists, getitems of multi-output nodes, and skip
// connections (runs of partitions every new one is tried against).
TEST_CASE("partitioner: equal to torch's algorithm on random DAGs", "[partitioner]") {
  std::size_t merges_seen = 0;
  std::size_t multi_seen = 0;
  const std::uint32_t seeds = partitioner_seeds(2500);
  for (std::uint32_t seed = 1; seed <= seeds; ++seed) {
    std::mt19937 rng(seed * 7919u + 17u);
    const int count = 10 + static_cast<int>(rng() % (seed % 10 == 0 ? 220 : 90));
    const std::size_t percent = std::vector<std::size_t>{10, 30, 50, 70, 85, 95, 100}[rng() % 7];
    const int residual = rng() % 3 == 0 ? static_cast<int>(2 + rng() % 6) : 0;
    std::unordered_set<std::string> supported;
    auto g = partitioner_random_dag(rng, count, percent, residual, supported);
    epgraph::PartitionerOptions options;
    options.allows_single_node_partition = rng() % 2 == 0;
    options.skip_horizontal_fusion = rng() % 4 == 0;
    if (rng() % 4 == 0) options.non_compute_ops = {"torch.ops.aten.relu.default"};
    if (rng() % 4 == 0) options.allowed_single_node_partition_ops = {"torch.ops.aten.add.Tensor"};
    INFO("seed " << seed << ", " << count << " ops, " << supported.size() << " supported, "
                 << percent << "%, residual " << residual);
    const PartitionerLines expected =
        require_torch_partitions(*g, supported, options, /*walks_too=*/true);
    for (const auto& line : expected) {
      if (line.second.size() > 1) ++multi_seen;
    }
    merges_seen += supported.size();
  }
  CHECK(multi_seen > 2000 * seeds / 2500);
  CHECK(merges_seen > 10000 * seeds / 2500);
}

// Larger random DAGs (hundreds of partitions, so that the partition id sets span many words and
// the words every live id of which is in a set are dropped), against the same reference.
TEST_CASE("partitioner: equal to torch's algorithm on larger random DAGs", "[partitioner]") {
  std::size_t most_partitions = 0;
  for (std::uint32_t seed = 1; seed <= partitioner_seeds(24); ++seed) {
    std::mt19937 rng(seed * 104729u + 3u);
    const int count = 300 + static_cast<int>(rng() % 400);
    const std::size_t percent = std::vector<std::size_t>{40, 60, 75, 90}[rng() % 4];
    const int residual = static_cast<int>(rng() % 8);
    std::unordered_set<std::string> supported;
    auto g = partitioner_random_dag(rng, count, percent, residual, supported);
    epgraph::PartitionerOptions options;
    options.allows_single_node_partition = seed % 2 == 0;
    options.skip_horizontal_fusion = seed % 6 == 5;
    INFO("seed " << seed << ", " << count << " ops, " << supported.size() << " supported, "
                 << percent << "%, residual " << residual);
    const PartitionerLines expected =
        require_torch_partitions(*g, supported, options, /*walks_too=*/false);
    most_partitions = std::max(most_partitions, expected.size());
  }
  CHECK(most_partitions > 64);
}

// The partition id sets: words whose live ids are all in are dropped, never past the ids that
// exist (a later id in that word is not in the set), and an erase under the base stores the
// words again.
TEST_CASE("partitioner: id sets drop full low words", "[partitioner]") {
  epgraph::detail::IdBits live;
  epgraph::detail::IdBits set;
  for (std::uint32_t id = 0; id < 140; ++id) live.insert(id);
  live.erase(3);  // merged away: may count as in
  for (std::uint32_t id = 0; id < 140; ++id) {
    if (id != 3 && id != 70) set.insert(id);
  }
  set.compact(live, 140 / 64);  // ids 128..139 exist; 140..191 do not yet
  CHECK(set.base == 1);         // word 1 lacks 70
  CHECK(set.test(3));
  CHECK(!set.test(70));
  set.insert(70);
  set.compact(live, 140 / 64);
  CHECK(set.base == 2);
  CHECK(!set.test(140));  // a later id of the word the set ends in
  CHECK(set.test(139));
  set.erase(5);
  CHECK(set.base == 0);
  CHECK(!set.test(5));
  CHECK(set.test(6));
  CHECK(set.test(100));
  epgraph::detail::IdBits other;
  other.insert(200);
  other.insert_all(set);
  CHECK(other.test(200));
  CHECK(!other.test(5));
  CHECK(other.test(139));
  CHECK(!other.test(150));
}
