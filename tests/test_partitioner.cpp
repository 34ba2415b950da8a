// CapabilityBasedPartitioner, operator support helpers, validate_partition and tag_partitions
// (epgraph/passes/partitioner.hpp). The expected partitions are torch 2.13's: each graph was
// built with torch.fx (same ops, same node names) and given to
// torch.fx.passes.infra.partitioner.CapabilityBasedPartitioner(...).propose_partitions() with
// the same support and options; tests/interop/test_partition.py compares whole exported programs.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/passes/partitioner.hpp>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

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
