// SubgraphMatcher, replace_pattern and PassManager. The expected matches, replacement records and
// printed graphs come from torch 2.13 itself: tools/gen_fx_toolkit_cases.py builds each graph,
// pattern and replacement with torch.fx, runs torch's SubgraphMatcher.match and
// replace_pattern_with_filters, and writes the graphs (as specs this test rebuilds) and the
// results to tests/data/fx_toolkit_cases.txt. Refused calls are checked for their exact message
// and for leaving the graph exactly as it was (snapshot, namespace counters included).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cstdint>
#include <epgraph/epgraph.hpp>
#include <epgraph/passes/pass_manager.hpp>
#include <epgraph/passes/subgraph_matcher.hpp>
#include <epgraph/passes/subgraph_rewriter.hpp>
#include <memory>
#include <string>
#include <vector>

#include "support/fx_cases.hpp"
#include "support/program_builders.hpp"
#include "support/refusal.hpp"
#include "support/snapshot.hpp"

namespace {

using epgraph::Argument;
using epgraph::ArgumentList;
using epgraph::Graph;
using epgraph::InternalMatch;
using epgraph::Kwargs;
using epgraph::Node;
using epgraph::OpCode;
using epgraph::ReplacedPatterns;
using epgraph::SubgraphMatcher;
using epgraph_test::check_refused;
using epgraph_test::Program;
using epgraph_test::snapshot;

using epgraph_test::build_spec_graph;

std::string value_text(const Argument& v) {
  if (const Node* n = v.node()) return std::string(n->name());
  return epgraph::format_arg(v);
}

std::string matches_text(const std::vector<InternalMatch>& matches) {
  if (matches.empty()) return "no match";
  std::string out;
  for (const InternalMatch& m : matches) {
    if (!out.empty()) out += "\n";
    out += "match";
    for (const auto& kv : m.nodes_map) {
      out += " " + std::string(kv.first->name()) + "=" + value_text(kv.second);
    }
    out += " | placeholders ";
    for (std::size_t i = 0; i < m.placeholder_nodes.size(); ++i) {
      out += (i ? "," : "") + value_text(m.placeholder_nodes[i]);
    }
    out += " | returning ";
    for (std::size_t i = 0; i < m.returning_nodes.size(); ++i) {
      out += (i ? "," : "") + std::string(m.returning_nodes[i]->name());
    }
  }
  return out;
}

std::string replaced_text(const std::vector<ReplacedPatterns>& replaced) {
  if (replaced.empty()) return "none";
  std::string out;
  for (const ReplacedPatterns& r : replaced) {
    if (!out.empty()) out += "\n";
    out += "anchor " + std::string(r.anchor->name()) + " |";
    std::string ph;
    for (const auto& kv : r.nodes_map) {
      ph += (ph.empty() ? "" : " ") + std::string(kv.first->name()) + "=" + value_text(kv.second);
    }
    out += " " + ph + " | erased";
    for (const auto& kv : r.erased) out += " " + std::string(kv.first->name()) + "=" + kv.second;
    out += " | replacements ";
    for (std::size_t i = 0; i < r.replacements.size(); ++i) {
      out += (i ? "," : "") + std::string(r.replacements[i]->name());
    }
  }
  return out;
}

struct Case {
  std::unique_ptr<Graph> graph;
  std::unique_ptr<Graph> pattern;
  std::unique_ptr<Graph> replacement;
};

Case load(const std::string& name) {
  return {build_spec_graph(epgraph_test::fx_case(name + ".graph")),
          build_spec_graph(epgraph_test::fx_case(name + ".pattern")),
          build_spec_graph(epgraph_test::fx_case(name + ".replacement"))};
}

// torch's filter in the generator: keep matches none of whose placeholders matched a placeholder.
bool relu_of_computed(const InternalMatch& m, const Graph&, const Graph&) {
  for (const Argument& v : m.placeholder_nodes) {
    if (v.node() != nullptr && v.node()->op() == OpCode::placeholder) return false;
  }
  return true;
}

Program wrap(std::unique_ptr<Graph> g) { return Program(std::move(g), {}); }

}  // namespace

TEST_CASE("SubgraphMatcher and replace_pattern do what torch.fx does", "[fx][rewrite]") {
  const std::vector<std::string> names = {"rw_relu",        "rw_filter",          "rw_fuse",
                                          "rw_literals",    "rw_ignore_literals", "rw_bind_literal",
                                          "rw_two_outputs", "rw_overlap",         "rw_same_input",
                                          "rw_defaults",    "rw_cycle",           "rw_no_cycle"};
  for (const std::string& name : names) {
    INFO(name);
    Case c = load(name);
    const bool ignore = name == "rw_ignore_literals";
    CHECK(matches_text(SubgraphMatcher(*c.pattern, false, false, true, ignore).match(*c.graph)) ==
          epgraph_test::fx_case(name + ".matches"));
    std::vector<epgraph::MatchFilter> filters;
    if (name == "rw_filter") filters.emplace_back(relu_of_computed);
    const std::vector<ReplacedPatterns> replaced =
        epgraph::replace_pattern(*c.graph, *c.pattern, *c.replacement, filters, ignore);
    CHECK(replaced_text(replaced) == epgraph_test::fx_case(name + ".replaced"));
    CHECK(epgraph::to_string(*c.graph) == epgraph_test::fx_case(name + ".after"));
    c.graph->lint();
    // Pattern and replacement are only read.
    CHECK(epgraph::to_string(*c.pattern) == epgraph::to_string(*load(name).pattern));
    CHECK(epgraph::to_string(*c.replacement) == epgraph::to_string(*load(name).replacement));
  }
}

TEST_CASE("SubgraphMatcher refuses patterns it cannot match", "[fx][rewrite]") {
  Graph empty;
  CHECK_THROWS_WITH(SubgraphMatcher(empty),
                    "SubgraphMatcher cannot be initialized with an empty pattern");
  Graph no_output;
  no_output.placeholder("x");
  CHECK_THROWS_WITH(SubgraphMatcher(no_output), "Pattern graph has no output node");
  Graph dead;
  Node* x = dead.placeholder("x");
  dead.call_function("torch.ops.aten.neg.default", {x}, {}, "neg");
  Node* relu = dead.call_function("torch.ops.aten.relu.default", {x});
  dead.output({relu});
  CHECK_THROWS_AS(SubgraphMatcher(dead), epgraph::value_error);
  CHECK_THROWS_WITH(SubgraphMatcher(dead),
                    "SubgraphMatcher cannot be initialized with an pattern with dead code: node "
                    "'neg' has no users");
  Graph unused;
  Node* a = unused.placeholder("a");
  unused.placeholder("b");
  unused.output({unused.call_function("torch.ops.aten.relu.default", {a})});
  CHECK_THROWS_WITH(SubgraphMatcher(unused),
                    "Pattern placeholder 'b' is unused: it cannot be matched");
  // An impure unused node is not dead code (torch: `not node.is_impure()`), but no returned node
  // reaches it, so a match would leave it out (pytorch/pytorch #104775). Before, this pattern
  // "matched" `relu(x) * 2`, which has no add_, and replace_pattern rewrote it.
  Graph impure;
  Node* p = impure.placeholder("p");
  impure.call_function("torch.ops.aten.add_.Tensor", {p, 1});
  impure.output({impure.call_function("torch.ops.aten.relu.default", {p})});
  CHECK_THROWS_WITH(SubgraphMatcher(impure),
                    "Pattern node 'add_' is reached from no returned node: a match would leave it "
                    "out; return it from the pattern");
  // Returned, it is matched for real: an add_ the relu reads through its result.
  Graph returned;
  Node* q = returned.placeholder("q");
  Node* add_ = returned.call_function("torch.ops.aten.add_.Tensor", {q, 1});
  returned.output({returned.call_function("torch.ops.aten.relu.default", {add_})});
  CHECK(SubgraphMatcher(returned).pattern_anchors().size() == 1);
  CHECK_THROWS_WITH(SubgraphMatcher(returned).match(returned),
                    "Cannot match a pattern against itself");
  Graph target;
  Node* x2 = target.placeholder("x");
  Node* r = target.call_function("torch.ops.aten.relu.default", {x2});
  target.output({target.call_function("torch.ops.aten.mul.Tensor", {r, 2})});
  CHECK(SubgraphMatcher(returned).match(target).empty());  // no add_ in `relu(x) * 2`
}

TEST_CASE("an anchor without candidates gives no match (torch raises KeyError)", "[fx][rewrite]") {
  Case c = load("rw_two_outputs");
  Graph g;
  Node* p = g.placeholder("p");
  Node* q = g.placeholder("q");
  g.output({g.call_function("torch.ops.aten.add.Tensor", {p, q})});  // no mul for anchor b
  CHECK(SubgraphMatcher(*c.pattern).match(g).empty());
}

TEST_CASE("replace_pattern refuses without changing anything", "[fx][rewrite][strong]") {
  SECTION("placeholder count") {
    Case c = load("rw_relu");
    Case two = load("rw_bind_literal");
    Program ep = wrap(std::move(c.graph));
    check_refused<epgraph::value_error>(
        ep, [&] { (void)epgraph::replace_pattern(ep.graph(), *c.pattern, *two.replacement); },
        "Placeholder count mismatch: the pattern has 1 placeholders, the replacement 2");
  }
  SECTION("a pattern node no returned node reaches (pytorch/pytorch #104775)") {
    // `x.add_(1); return relu(x)` against `relu(x) * 2`: before, the add_ was left out of the
    // match and the program computed relu(x + 1) * 2 after the rewrite.
    Case c = load("rw_relu");
    Program ep = wrap(std::move(c.graph));
    Graph pattern;
    Node* x = pattern.placeholder("x");
    pattern.call_function("torch.ops.aten.add_.Tensor", {x, 1});
    pattern.output({pattern.call_function("torch.ops.aten.relu.default", {x})});
    Graph replacement;
    Node* y = replacement.placeholder("x");
    Node* add = replacement.call_function("torch.ops.aten.add.Tensor", {y, 1});
    replacement.output({replacement.call_function("torch.ops.aten.clamp_min.default", {add, 0})});
    check_refused<epgraph::value_error>(
        ep, [&] { (void)epgraph::replace_pattern(ep.graph(), pattern, replacement); },
        "Pattern node 'add_' is reached from no returned node: a match would leave it out; "
        "return it from the pattern");
  }
  SECTION("no place is after the replacement's inputs and before the uses (pytorch #148751)") {
    // Pattern (relu(a), sigmoid(b)); in the graph, b's value `cos` comes after relu's first
    // user `mul`. torch.fx, and epgraph before, put the copies before `mul` and committed
    // "Node 'neg' uses node 'cos' that is defined after it".
    auto build = [](bool cos_first) {
      auto g = std::make_unique<Graph>();
      Node* x = g->placeholder("x");
      Node* y = g->placeholder("y");
      Node* cos = cos_first ? g->call_function("torch.ops.aten.cos.default", {y}) : nullptr;
      Node* relu = g->call_function("torch.ops.aten.relu.default", {x});
      Node* mul = g->call_function("torch.ops.aten.mul.Tensor", {relu, 2});
      if (!cos_first) cos = g->call_function("torch.ops.aten.cos.default", {y});
      Node* sig = g->call_function("torch.ops.aten.sigmoid.default", {cos});
      g->output({mul, sig});
      return g;
    };
    Graph pattern;
    Node* a = pattern.placeholder("a");
    Node* b = pattern.placeholder("b");
    pattern.output({pattern.call_function("torch.ops.aten.relu.default", {a}),
                    pattern.call_function("torch.ops.aten.sigmoid.default", {b})});
    // The replacement returns `ArgumentList{...}`, the pattern a plain list: both are two
    // values (before, the list form counted as one and replace_pattern refused it).
    Graph replacement;
    Node* ra = replacement.placeholder("a");
    Node* rb = replacement.placeholder("b");
    replacement.output(
        {ArgumentList{replacement.call_function("torch.ops.aten.clamp_min.default", {ra, 0}),
                      replacement.call_function("torch.ops.aten.neg.default", {rb})}});
    Program ep = wrap(build(false));
    check_refused<epgraph::value_error>(
        ep, [&] { (void)epgraph::replace_pattern(ep.graph(), pattern, replacement); },
        "Cannot replace the match returning 'relu', 'sigmoid': its replacement must go before "
        "'mul', the first user of a returned node, but reads 'cos', which comes after that; "
        "nothing was changed");
    // With `cos` before `mul` there is a place, and the rewrite happens.
    auto ok = build(true);
    CHECK(epgraph::replace_pattern(*ok, pattern, replacement).size() == 1);
    ok->lint();
    CHECK(epgraph::to_string(*ok) ==
          "graph():\n    %x : [num_users=1] = placeholder[target=x]\n"
          "    %y : [num_users=1] = placeholder[target=y]\n"
          "    %cos : [num_users=1] = call_function[target=torch.ops.aten.cos.default](args = "
          "(%y,), kwargs = {})\n"
          "    %clamp_min : [num_users=1] = call_function[target=torch.ops.aten.clamp_min.default]"
          "(args = (%x, 0), kwargs = {})\n"
          "    %neg : [num_users=1] = call_function[target=torch.ops.aten.neg.default](args = "
          "(%cos,), kwargs = {})\n"
          "    %mul : [num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = "
          "(%clamp_min, 2), kwargs = {})\n"
          "    return (mul, neg)");
  }
  SECTION("returning count") {
    Case c = load("rw_two_outputs");
    Case one = load("rw_bind_literal");
    Program ep = wrap(std::move(c.graph));
    check_refused<epgraph::value_error>(
        ep, [&] { (void)epgraph::replace_pattern(ep.graph(), *c.pattern, *one.replacement); },
        "Returning nodes count mismatch: the pattern returns 2 nodes, the replacement 1 values");
  }
  SECTION("a copy that does not bind, at the second match: the first copy is given back") {
    // sub(p, 3) then sub(sub, q): `clamp_min(x, y)` binds for y = 3, not for y = node q.
    Case c = load("rw_bind_literal");
    auto g = std::make_unique<Graph>();
    Node* p = g->placeholder("p");
    Node* q = epgraph_test::add_placeholder(*g, "q", epgraph_test::tensor({2}));
    Node* s = g->call_function("torch.ops.aten.sub.Tensor", {p, 3}, {}, "sub");
    g->output({g->call_function("torch.ops.aten.sub.Tensor", {s, q})});
    auto replacement = build_spec_graph(
        "x|placeholder||\ny|placeholder||\nclamp_min|torch.ops.aten.clamp_min.default|%x,%y|\n"
        "output|single|%clamp_min|",
        false);
    Program ep = wrap(std::move(g));
    const epgraph_test::Snapshot before = snapshot(ep);
    try {
      (void)epgraph::replace_pattern(ep.graph(), *c.pattern, *replacement);
      FAIL("not refused");
    } catch (const epgraph::value_error& e) {
      CHECK(std::string(e.what()) ==
            "Cannot create node 'clamp_min_1' (torch.ops.aten.clamp_min.default): argument 'min' "
            "expects Scalar, got node 'q' (a tensor); schema: aten::clamp_min(Tensor self, Scalar "
            "min) -> Tensor");
    }
    CHECK(snapshot(ep) == before);
    CHECK(ep.graph().propose_name("clamp_min") == "clamp_min");  // the name was given back
  }
  SECTION("a returned literal") {
    Case c = load("rw_bind_literal");
    auto replacement = build_spec_graph("x|placeholder||\ny|placeholder||\noutput|single|%y|");
    auto g = std::make_unique<Graph>();
    Node* p = g->placeholder("p");
    g->output({g->call_function("torch.ops.aten.sub.Tensor", {p, 3}, {}, "sub")});
    Program ep = wrap(std::move(g));
    check_refused<epgraph::value_error>(
        ep, [&] { (void)epgraph::replace_pattern(ep.graph(), *c.pattern, *replacement); },
        "Cannot replace node 'sub': the replacement returns a value that is not a node");
  }
  SECTION("a pattern returning its placeholder") {
    Case c = load("rw_relu");
    auto pattern = build_spec_graph(
        "x|placeholder||\nrelu|torch.ops.aten.relu.default|%x|\noutput|tuple|%relu,%x|");
    auto replacement = build_spec_graph("x|placeholder||\noutput|tuple|%x,%x|");
    Program ep = wrap(std::move(c.graph));
    check_refused<epgraph::value_error>(
        ep, [&] { (void)epgraph::replace_pattern(ep.graph(), *pattern, *replacement); },
        "Cannot replace a pattern that returns its placeholder 'x'");
  }
  SECTION("a matched node anchoring the insertion point") {
    Case c = load("rw_relu");
    Program ep = wrap(std::move(c.graph));
    auto guard = ep.graph().inserting_after(ep.graph().find_node("relu_1"));
    check_refused<epgraph::runtime_error>(
        ep, [&] { (void)epgraph::replace_pattern(ep.graph(), *c.pattern, *c.replacement); },
        "Cannot erase node 'relu_1' while it anchors an insertion point");
  }
  SECTION("the graph as its own replacement") {
    Case c = load("rw_relu");
    Program ep = wrap(std::move(c.graph));
    check_refused<epgraph::value_error>(
        ep, [&] { (void)epgraph::replace_pattern(ep.graph(), *c.pattern, ep.graph()); },
        "Cannot replace a pattern by the graph itself");
  }
}

TEST_CASE("replace_pattern on a program: output specs follow, copies get inferred metadata",
          "[fx][rewrite]") {
  auto g = std::make_unique<Graph>();
  Node* x = epgraph_test::add_placeholder(*g, "x", epgraph_test::tensor({2, 3}));
  Node* relu = g->call_function("torch.ops.aten.relu.default", {x}, {}, "relu");
  relu->mutable_meta().val = *x->meta().val.tensor();
  Node* neg = g->call_function("torch.ops.aten.neg.default", {relu}, {}, "neg");
  neg->mutable_meta().val = *x->meta().val.tensor();
  g->output({relu, neg});
  Program ep(std::move(g), epgraph::ExportGraphSignature{{epgraph_test::user_input("x")},
                                                         {epgraph_test::user_output("relu"),
                                                          epgraph_test::user_output("neg")}});
  Case c = load("rw_relu");
  const auto replaced = epgraph::replace_pattern(ep.graph(), *c.pattern, *c.replacement);
  REQUIRE(replaced.size() == 1);
  REQUIRE(ep.graph_signature().output_specs.size() == 2);
  CHECK(ep.graph_signature().output_specs[0].name() == "clamp_min");
  CHECK(ep.graph_signature().output_specs[1].name() == "neg");
  Node* copy = ep.graph().find_node("clamp_min");
  REQUIRE(copy != nullptr);
  REQUIRE(copy->meta().val.tensor() != nullptr);
  CHECK(epgraph_test::describe(*copy->meta().val.tensor()) ==
        epgraph_test::describe(*x->meta().val.tensor()));
  epgraph::verify(ep);
}

TEST_CASE("PassManager runs passes until nothing changes", "[fx][passes]") {
  Case c = load("rw_relu");
  Program ep = wrap(std::move(c.graph));
  std::vector<std::string> log;
  epgraph::PassManager<epgraph_test::Tensor> pm(5, true);
  pm.add_checks([&](const Program& p) {
    log.push_back("check");
    p.graph().lint();
  });
  pm.add_pass("relu_to_clamp_min", [&](Program& p) {
    log.push_back("relu_to_clamp_min");
    return !epgraph::replace_pattern(p.graph(), *c.pattern, *c.replacement).empty();
  });
  pm.add_pass("dce", [&](Program& p) {
    log.push_back("dce");
    return epgraph::eliminate_dead_code(p);
  });
  CHECK(pm.pass_names() == std::vector<std::string>{"relu_to_clamp_min", "dce"});
  CHECK(pm(ep));
  CHECK(log == std::vector<std::string>{"check", "relu_to_clamp_min", "check", "dce", "check",
                                        "relu_to_clamp_min", "check", "dce", "check"});
  CHECK(epgraph::to_string(ep.graph()) == epgraph_test::fx_case("rw_relu.after"));
  log.clear();
  CHECK_FALSE(pm(ep));  // nothing left to change: one round
  CHECK(log.size() == 5);
}

TEST_CASE("PassManager names the failing pass and the passes before it", "[fx][passes]") {
  Program ep = epgraph_test::plain_program();
  epgraph::PassManager<epgraph_test::Tensor> pm;
  pm.add_pass("first", [](Program&) { return false; });
  pm.add_pass("second", [](Program&) { return false; });
  pm.add_pass("boom", [](Program&) -> bool { throw epgraph::value_error("boom!"); });
  try {
    (void)pm(ep);
    FAIL("not thrown");
  } catch (const epgraph::pass_error& e) {
    CHECK(e.pass() == "boom");
    CHECK(std::string(e.what()) ==
          "An error occurred when running the 'boom' pass after the following passes: "
          "['first', 'second']: boom!");
    CHECK_THROWS_AS(std::rethrow_if_nested(e), epgraph::value_error);
  }
  // The default check is verify(): a pass that breaks the signature is named.
  epgraph::PassManager<epgraph_test::Tensor> checked(1, true);
  checked.add_pass("break_signature", [](Program& p) {
    p.graph_signature().input_specs.push_back(epgraph_test::user_input("ghost"));
    return true;
  });
  try {
    (void)checked(ep);
    FAIL("not thrown");
  } catch (const epgraph::pass_error& e) {
    CHECK(e.pass() == "break_signature");
    CHECK_THAT(e.what(), Catch::StartsWith("An error occurred when running the 'break_signature' "
                                           "pass after the following passes: []: Exported "
                                           "program verification failed:"));
    CHECK_THAT(e.what(), Catch::Contains("ghost"));
    CHECK(std::string(e.what()).find('\n') == std::string::npos);  // one line, as torch's
    try {
      std::rethrow_if_nested(e);
    } catch (const epgraph::verification_error& cause) {
      // The nested cause keeps its list, one problem per line.
      CHECK(cause.violations().size() >= 1);
      CHECK(std::string(e.what()).find(cause.violations().front()) != std::string::npos);
    }
  }
  // torch checks once before the first pass even without run_checks_after_each_pass: a check
  // set with add_checks runs then (and only then); the default (verify) does not run.
  std::vector<std::string> log;
  epgraph::PassManager<epgraph_test::Tensor> once;
  once.add_checks([&](const Program&) { log.push_back("check"); });
  once.add_pass("a", [&](Program&) {
    log.push_back("a");
    return false;
  });
  CHECK_FALSE(once(ep));
  CHECK(log == std::vector<std::string>{"check", "a"});
  epgraph::PassManager<epgraph_test::Tensor> unchecked;
  unchecked.add_pass("a", [](Program&) { return false; });
  ep.graph_signature().input_specs.push_back(epgraph_test::user_input("ghost2"));
  CHECK_FALSE(unchecked(ep));  // verify is not run: the broken signature passes through
  CHECK_THROWS_WITH(epgraph::PassManager<epgraph_test::Tensor>(0),
                    "PassManager steps must be at least 1, got 0");
  CHECK_THROWS_WITH(pm.add_pass("empty", {}), "Pass 'empty' has no callable");
}

TEST_CASE("a pattern placeholder may stand for a list argument", "[fx][rewrite][list]") {
  // Pattern placeholders carry no value, so the schema checks take them where a list is
  // expected (`SymInt[] size`, `Tensor[] tensors`) as they take them where a tensor is; the
  // matcher binds them to the graph's list literal and the copies get that list. Before, the
  // pattern could not be built: "argument 'size' expects SymInt[], got node 'size'" (torch.fx
  // does not check patterns). A node whose value is known is still no list.
  SECTION("expand(x, size) -> expand_copy(x, size)") {
    Graph pattern;
    Node* px = pattern.placeholder("x");
    Node* psize = pattern.placeholder("size");
    pattern.output({pattern.call_function("torch.ops.aten.expand.default", {px, psize})});
    Graph replacement;
    Node* rx = replacement.placeholder("x");
    Node* rsize = replacement.placeholder("size");
    replacement.output(
        {replacement.call_function("torch.ops.aten.expand_copy.default", {rx, rsize})});

    Graph g;
    Node* a = epgraph_test::add_placeholder(g, "a", epgraph_test::tensor({1, 3}));
    Node* e = g.call_function("torch.ops.aten.expand.default",
                              {a, ArgumentList{std::int64_t{2}, std::int64_t{3}}});
    g.output({e});
    const auto replaced = epgraph::replace_pattern(g, pattern, replacement);
    REQUIRE(replaced.size() == 1);
    CHECK(replaced[0].nodes_map.size() == 2);
    CHECK(replaced[0].nodes_map[1].second ==
          Argument(ArgumentList{std::int64_t{2}, std::int64_t{3}}));
    CHECK(epgraph_test::node_names(g) == std::vector<std::string>{"a", "expand_copy", "output"});
    const Node* copy = g.find_node("expand_copy");
    REQUIRE(copy != nullptr);
    CHECK(copy->args()[0] == Argument(a));
    CHECK(copy->args()[1] == Argument(ArgumentList{std::int64_t{2}, std::int64_t{3}}));
    g.lint();
    // A node with a tensor value is refused where the list goes.
    CHECK_THROWS_WITH(g.call_function("torch.ops.aten.expand.default", {a, a}),
                      Catch::Contains("argument 'size' expects SymInt[], got node 'a' (a tensor"));
  }
  SECTION("relu(cat(tensors)) -> clamp_min(cat(tensors), 0)") {
    Graph pattern;
    Node* pts = pattern.placeholder("tensors");
    Node* pcat = pattern.call_function("torch.ops.aten.cat.default", {pts});
    pattern.output({pattern.call_function("torch.ops.aten.relu.default", {pcat})});
    Graph replacement;
    Node* rts = replacement.placeholder("tensors");
    Node* rcat = replacement.call_function("torch.ops.aten.cat.default", {rts});
    replacement.output(
        {replacement.call_function("torch.ops.aten.clamp_min.default", {rcat, std::int64_t{0}})});

    Graph g;
    Node* a = epgraph_test::add_placeholder(g, "a", epgraph_test::tensor({2}));
    Node* b = epgraph_test::add_placeholder(g, "b", epgraph_test::tensor({3}));
    Node* cat =
        g.call_function("torch.ops.aten.cat.default", ArgumentList{Argument(ArgumentList{a, b})});
    Node* relu = g.call_function("torch.ops.aten.relu.default", {cat});
    g.output({relu});
    const auto replaced = epgraph::replace_pattern(g, pattern, replacement);
    REQUIRE(replaced.size() == 1);
    CHECK(epgraph_test::node_names(g) ==
          std::vector<std::string>{"a", "b", "cat_1", "clamp_min", "output"});
    const Node* copy = g.find_node("cat_1");
    REQUIRE(copy != nullptr);
    CHECK(copy->args()[0] == Argument(ArgumentList{a, b}));
    CHECK(a->users().size() == 1);
    CHECK(a->users()[0] == copy);
    g.lint();
  }
}

TEST_CASE("ReplacedPatterns carries the erased nodes' metadata", "[fx][rewrite][meta]") {
  // torch keeps the erased Node objects, whose meta a Python pass copies to the replacement
  // nodes; epgraph copies each erased node's metadata into erased_meta (order of `erased`).
  Graph pattern;
  Node* px = pattern.placeholder("x");
  pattern.output({pattern.call_function("torch.ops.aten.relu.default", {px})});
  Graph replacement;
  Node* rx = replacement.placeholder("x");
  replacement.output(
      {replacement.call_function("torch.ops.aten.clamp_min.default", {rx, std::int64_t{0}})});

  Graph g;
  Node* x = epgraph_test::add_placeholder(g, "x", epgraph_test::tensor({2}));
  Node* relu = g.call_function("torch.ops.aten.relu.default", {x});
  relu->mutable_meta().other = {{"stack_trace", "File \"m.py\", line 3, in forward"},
                                {"nn_module_stack", "L__self__,,m.M"}};
  relu->mutable_meta().val = *x->read_meta().val.tensor();
  Node* relu_1 = g.call_function("torch.ops.aten.relu.default", {relu});
  relu_1->mutable_meta().other = {{"stack_trace", "File \"m.py\", line 4, in forward"}};
  g.output({relu_1});
  const auto replaced = epgraph::replace_pattern(g, pattern, replacement);
  REQUIRE(replaced.size() == 2);
  std::vector<std::string> erased;
  std::vector<std::string> traces;
  for (const ReplacedPatterns& r : replaced) {
    REQUIRE(r.erased_meta.size() == r.erased.size());
    for (std::size_t i = 0; i < r.erased.size(); ++i) {
      erased.push_back(r.erased[i].second);
      traces.push_back(r.erased_meta[i].other.at(0).second);
    }
    // What a pass does with it: the copy takes the matched node's entries.
    REQUIRE(r.replacements.size() == 1);
    r.replacements[0]->mutable_meta().other = r.erased_meta.back().other;
  }
  CHECK(erased == std::vector<std::string>{"relu", "relu_1"});
  CHECK(traces == std::vector<std::string>{"File \"m.py\", line 3, in forward",
                                           "File \"m.py\", line 4, in forward"});
  CHECK(replaced[0].erased_meta[0].other.size() == 2);
  CHECK(replaced[0].erased_meta[0].val.tensor() != nullptr);
  const Node* clamp = g.find_node("clamp_min");
  REQUIRE(clamp != nullptr);
  CHECK(clamp->read_meta().other.at(1).second == "L__self__,,m.M");
}
