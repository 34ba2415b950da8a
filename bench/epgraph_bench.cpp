// epgraph benchmarks: prints one machine-readable line per measurement (see bench/README.md).
// SPDX-License-Identifier: BSD-3-Clause
//
// Timings are the minimum over several repetitions (the machines are shared and noisy); each
// target is checked as a ratio of figures measured in the same run. Memory is counted by the
// replaced global operator new/delete below (bytes the allocator hands out, via
// malloc_usable_size) and, independently, by glibc's mallinfo2 (which also counts malloc's own
// chunk headers).

#include <malloc.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <epgraph/epgraph.hpp>
#include <epgraph/passes/partitioner.hpp>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#ifdef EPGRAPH_BENCH_JSON
#include <epgraph/json/json.hpp>
#ifdef EPGRAPH_BENCH_SIMDJSON
#include <simdjson.h>  // the yardstick of the scale issue's item 3 (libsimdjson-dev), bench only
#endif
#endif

// --- counting allocator ---------------------------------------------------------------------

namespace {

bool g_counting = false;         // count only while a memory figure is being measured
std::int64_t g_live_bytes = 0;   // bytes handed out and not yet freed (malloc_usable_size)
std::int64_t g_requested = 0;    // bytes requested through operator new (never decreases)
std::int64_t g_allocations = 0;  // operator new calls

void* counted_alloc(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  if (g_counting) {
    g_live_bytes += static_cast<std::int64_t>(malloc_usable_size(p));
    g_requested += static_cast<std::int64_t>(n);
    ++g_allocations;
  }
  return p;
}

void counted_free(void* p) noexcept {
  if (p == nullptr) return;
  if (g_counting) g_live_bytes -= static_cast<std::int64_t>(malloc_usable_size(p));
  std::free(p);
}

}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }

namespace {

using epgraph::Argument;
using epgraph::ArgumentList;
using epgraph::Graph;
using epgraph::Node;
using epgraph::OpCode;
using Tensor = epgraph::HostTensor;
using Program = epgraph::ExportedProgram<Tensor>;
using Clock = std::chrono::steady_clock;

// The minimum wall time in seconds of `reps` runs of `run`; `setup` runs before each, untimed.
double min_seconds(int reps, const std::function<void()>& setup, const std::function<void()>& run) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    if (setup) setup();
    const auto t0 = Clock::now();
    run();
    const auto t1 = Clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

void print_line(const std::string& s) {
  std::printf("%s\n", s.c_str());
  std::fflush(stdout);
}

std::string fmt(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

const char* const kAdd = "torch.ops.aten.add.Tensor";

// --- program shapes ----------------------------------------------------------------------------

// `nodes` compute nodes add(prev, p_i) in a chain (FX names add, add_1, ...), `params` parameter
// placeholders p_layer<i>_weight, one user input x, one user output (the last add).
Program chain_program(std::size_t nodes, std::size_t params) {
  auto g = std::make_unique<Graph>();
  epgraph::ExportGraphSignature sig;
  epgraph::ordered_dict<Tensor> sd;
  std::vector<Node*> ps;
  ps.reserve(params);
  for (std::size_t i = 0; i < params; ++i) {
    const std::string name = "p_layer" + std::to_string(i) + "_weight";
    const std::string target = "layer" + std::to_string(i) + ".weight";
    ps.push_back(g->placeholder(name));
    sig.input_specs.emplace_back(epgraph::InputKind::PARAMETER, epgraph::TensorArgument{name},
                                 target);
    sd.insert(target, Tensor::zeros(epgraph::dtype::float32, {1}));
  }
  Node* prev = g->placeholder("x");
  sig.input_specs.emplace_back(epgraph::InputKind::USER_INPUT, epgraph::TensorArgument{"x"});
  for (std::size_t i = 0; i < nodes; ++i) {
    prev = g->call_function(kAdd, {prev, ps.empty() ? prev : ps[i % ps.size()]});
  }
  g->output({prev});
  sig.output_specs.emplace_back(epgraph::OutputKind::USER_OUTPUT,
                                epgraph::TensorArgument{std::string(prev->name())});
  return Program(std::move(g), std::move(sig), std::move(sd));
}

// Figure 1: K successive create_mutable_buffer calls on chain programs of the given (nodes,
// params) shapes, measured in turns (see bench_build); returns ns per call for each shape.
std::vector<double> bench_create_mutable_buffer(
    const std::vector<std::pair<std::size_t, std::size_t>>& shapes, std::size_t calls, int reps) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < calls; ++i) names.push_back("b_cache_" + std::to_string(i));
  std::vector<double> best(shapes.size(), 1e300);
  for (int r = 0; r < reps; ++r) {
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      auto ep = std::make_unique<Program>(chain_program(shapes[k].first, shapes[k].second));
      std::vector<Tensor> data(calls, Tensor::zeros(epgraph::dtype::float32, {1}));
      const double s = min_seconds(1, {}, [&] {
        for (std::size_t i = 0; i < calls; ++i) {
          (void)epgraph::create_mutable_buffer(*ep, names[i], std::move(data[i]));
        }
      });
      if (r == 0) epgraph::verify(*ep);
      best[k] = std::min(best[k], s * 1e9 / static_cast<double>(calls));
    }
  }
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    print_line("bench=create_mutable_buffer nodes=" + std::to_string(shapes[k].first) +
               " params=" + std::to_string(shapes[k].second) + " calls=" + std::to_string(calls) +
               " ns_per_call=" + fmt(best[k]));
  }
  return best;
}

// Figure 2: building a bare graph of N auto-named compute nodes (x, then add, add_1, ...).
// The sizes are measured in turns (small, big, small, big, ...) so that a burst of load on the
// shared machine hits both alike; each keeps its minimum.
std::vector<double> bench_build(const std::vector<std::size_t>& sizes, int reps) {
  std::vector<double> best(sizes.size(), 1e300);
  for (int r = 0; r < reps; ++r) {
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      std::unique_ptr<Graph> g;
      const double s = min_seconds(1, {}, [&] {
        g = std::make_unique<Graph>();
        Node* p = g->placeholder("p_weight");
        Node* prev = g->placeholder("x");
        for (std::size_t i = 0; i < sizes[k]; ++i) prev = g->call_function(kAdd, {prev, p});
        g->output({prev});
      });
      best[k] = std::min(best[k], s);
    }
  }
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    print_line("bench=build nodes=" + std::to_string(sizes[k]) + " seconds=" + fmt(best[k], 4) +
               " ns_per_node=" + fmt(best[k] * 1e9 / static_cast<double>(sizes[k])));
  }
  return best;
}

// Figure 3: heap bytes per compute node of a chain graph (2 node arguments, one user, names
// add_<k> shorter than 16 characters, no metadata). The 100 parameters are created before the
// measurement starts; their user lists, which grow with N, are counted.
void bench_memory(std::size_t nodes, std::size_t params) {
  auto g = std::make_unique<Graph>();
  std::vector<Node*> ps;
  for (std::size_t i = 0; i < params; ++i) {
    ps.push_back(g->placeholder("p_layer" + std::to_string(i) + "_weight"));
  }
  Node* prev = g->placeholder("x");
  const std::size_t before_mi = mallinfo2().uordblks;
  g_live_bytes = 0;
  g_requested = 0;
  g_allocations = 0;
  g_counting = true;
  for (std::size_t i = 0; i < nodes; ++i) prev = g->call_function(kAdd, {prev, ps[i % params]});
  g_counting = false;
  const std::size_t after_mi = mallinfo2().uordblks;
  const double n = static_cast<double>(nodes);
  print_line("bench=memory nodes=" + std::to_string(nodes) + " params=" + std::to_string(params) +
             " bytes_per_node=" + fmt(static_cast<double>(g_live_bytes) / n) +
             " mallinfo2_bytes_per_node=" + fmt(static_cast<double>(after_mi - before_mi) / n) +
             " allocations_per_node=" + fmt(static_cast<double>(g_allocations) / n, 2) +
             " sizeof_node=" + std::to_string(sizeof(Node)) +
             " sizeof_argument=" + std::to_string(sizeof(Argument)) + " target<=128");
  g_counting = false;
}

// Figure 5: lint, verify, clone on chain programs of the given sizes (in turns).
void bench_walks(const std::vector<std::size_t>& sizes, int reps) {
  std::vector<std::unique_ptr<Program>> eps;
  for (std::size_t n : sizes) eps.push_back(std::make_unique<Program>(chain_program(n, 100)));
  const char* const what[] = {"lint", "verify", "clone"};
  std::vector<std::array<double, 3>> best(sizes.size(), {1e300, 1e300, 1e300});
  for (int r = 0; r < reps; ++r) {
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      Program& ep = *eps[k];
      std::unique_ptr<Graph> copy;
      const double t[3] = {min_seconds(1, {}, [&] { ep.graph().lint(); }),
                           min_seconds(1, {}, [&] { epgraph::verify(ep); }),
                           min_seconds(1, {}, [&] { copy = ep.graph().clone(); })};
      for (std::size_t i = 0; i < 3; ++i) best[k][i] = std::min(best[k][i], t[i]);
    }
  }
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const double n = static_cast<double>(eps[k]->graph().size());
      print_line(std::string("bench=") + what[i] + " nodes=" + std::to_string(sizes[k]) +
                 " seconds=" + fmt(best[k][i], 4) + " ns_per_node=" + fmt(best[k][i] * 1e9 / n));
    }
    print_line(std::string("bench=") + what[i] + "_ratio nodes=" + std::to_string(sizes.back()) +
               "/" + std::to_string(sizes.front()) +
               " ratio=" + fmt(best.back()[i] / best.front()[i], 2) + " linear=" +
               fmt(static_cast<double>(sizes.back()) / static_cast<double>(sizes.front()), 0));
  }
}

// Figure 5: replace_all_uses_with on a node with U users (relu(x) read by U neg nodes), swapped
// back and forth between two equivalent nodes.
void bench_rauw(std::size_t users) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.ops.aten.relu.default", {x});
  Node* b = g.call_function("torch.ops.aten.relu.default", {x});
  ArgumentList results;
  for (std::size_t i = 0; i < users; ++i) {
    results.emplace_back(g.call_function("torch.ops.aten.neg.default", {a}));
  }
  g.output(std::move(results));
  const double s = min_seconds(5, {}, [&] {
    (void)a->replace_all_uses_with(b);
    (void)b->replace_all_uses_with(a);
  });
  print_line("bench=replace_all_uses_with users=" + std::to_string(users) + " seconds=" +
             fmt(s / 2, 5) + " ns_per_user=" + fmt(s / 2 * 1e9 / static_cast<double>(users)));
}

#ifdef EPGRAPH_BENCH_JSON

epgraph::TensorMeta meta(std::vector<std::int64_t> sizes) {
  epgraph::TensorMeta m;
  std::int64_t stride = 1;
  std::vector<std::int64_t> strides(sizes.size());
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= sizes[i];
  }
  for (auto s : sizes) m.sizes.emplace_back(s);
  for (auto s : strides) m.strides.emplace_back(s);
  return m;
}

// A decoder-only transformer as torch.export + run_decompositions() gives it (shapes only, no
// weights): per layer 9 parameters, a KV-cache pair (mutable buffers written by index_copy), an
// RMSNorm before attention and FFN, q/k/v/o and w1/w2/w3 linears, attention with softmax, 34
// compute nodes. Every node has tensor metadata.
Program transformer_program(std::size_t layers) {
  auto g = std::make_unique<Graph>();
  epgraph::ExportGraphSignature sig;
  const std::int64_t d = 64, seq = 8, cache = 128, heads = 4, hd = 16, ffn = 128;
  auto param = [&](const std::string& target, std::vector<std::int64_t> sizes) {
    std::string name = "p_";
    for (char c : target) name.push_back(c == '.' ? '_' : c);
    Node* n = g->placeholder(name);
    n->mutable_meta().val = meta(std::move(sizes));
    sig.input_specs.emplace_back(epgraph::InputKind::PARAMETER,
                                 epgraph::TensorArgument{std::string(n->name())}, target);
    return n;
  };
  struct Layer {
    Node *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w1, *w2, *w3, *k_cache, *v_cache;
  };
  std::vector<Layer> ls(layers);
  Node* emb = param("tok_embeddings.weight", {1000, d});
  for (std::size_t l = 0; l < layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    ls[l].attn_norm = param(p + "attention_norm.weight", {d});
    ls[l].wq = param(p + "attention.wq.weight", {d, d});
    ls[l].wk = param(p + "attention.wk.weight", {d, d});
    ls[l].wv = param(p + "attention.wv.weight", {d, d});
    ls[l].wo = param(p + "attention.wo.weight", {d, d});
    ls[l].ffn_norm = param(p + "ffn_norm.weight", {d});
    ls[l].w1 = param(p + "feed_forward.w1.weight", {ffn, d});
    ls[l].w2 = param(p + "feed_forward.w2.weight", {d, ffn});
    ls[l].w3 = param(p + "feed_forward.w3.weight", {ffn, d});
  }
  Node* norm_w = param("norm.weight", {d});
  Node* out_w = param("output.weight", {1000, d});
  for (std::size_t l = 0; l < layers; ++l) {
    for (int kv = 0; kv < 2; ++kv) {
      const std::string target =
          "layers." + std::to_string(l) + ".attention.kv_cache." + (kv ? "v_cache" : "k_cache");
      std::string name = "b_";
      for (char c : target) name.push_back(c == '.' ? '_' : c);
      Node* n = g->placeholder(name);
      n->mutable_meta().val = meta({1, heads, cache, hd});
      sig.input_specs.emplace_back(epgraph::InputKind::BUFFER,
                                   epgraph::TensorArgument{std::string(n->name())}, target, true);
      (kv ? ls[l].v_cache : ls[l].k_cache) = n;
    }
  }
  Node* tokens = g->placeholder("tokens");
  tokens->mutable_meta().val = meta({1, seq});
  tokens->mutable_meta().val.tensor()->dtype = epgraph::dtype::int64;
  Node* input_pos = g->placeholder("input_pos");
  input_pos->mutable_meta().val = meta({seq});
  input_pos->mutable_meta().val.tensor()->dtype = epgraph::dtype::int64;
  sig.input_specs.emplace_back(epgraph::InputKind::USER_INPUT, epgraph::TensorArgument{"tokens"});
  sig.input_specs.emplace_back(epgraph::InputKind::USER_INPUT,
                               epgraph::TensorArgument{"input_pos"});

  auto op = [&](const char* target, ArgumentList args, std::vector<std::int64_t> sizes) {
    Node* n = g->call_function(target, std::move(args));
    n->mutable_meta().val = meta(std::move(sizes));
    return n;
  };
  auto rms_norm = [&](Node* x, Node* w) {
    Node* pow = op("torch.ops.aten.pow.Tensor_Scalar", {x, 2}, {1, seq, d});
    Node* mean = op("torch.ops.aten.mean.dim", {pow, ArgumentList{-1}, true}, {1, seq, 1});
    Node* add = op("torch.ops.aten.add.Scalar", {mean, 1e-05}, {1, seq, 1});
    Node* rsqrt = op("torch.ops.aten.rsqrt.default", {add}, {1, seq, 1});
    Node* mul = op("torch.ops.aten.mul.Tensor", {x, rsqrt}, {1, seq, d});
    return op("torch.ops.aten.mul.Tensor", {mul, w}, {1, seq, d});
  };
  auto linear = [&](Node* x, Node* w, std::int64_t out) {
    return op("torch.ops.aten.linear.default", {x, w}, {1, seq, out});
  };
  std::vector<std::pair<Node*, std::string>> mutations;
  Node* h = op("torch.ops.aten.embedding.default", {emb, tokens}, {1, seq, d});
  for (std::size_t l = 0; l < layers; ++l) {
    const Layer& L = ls[l];
    Node* x = rms_norm(h, L.attn_norm);
    Node* q = linear(x, L.wq, d);
    Node* k = linear(x, L.wk, d);
    Node* v = linear(x, L.wv, d);
    Node* qv = op("torch.ops.aten.view.default", {q, ArgumentList{1, seq, heads, hd}},
                  {1, seq, heads, hd});
    Node* kv = op("torch.ops.aten.view.default", {k, ArgumentList{1, heads, seq, hd}},
                  {1, heads, seq, hd});
    Node* vv = op("torch.ops.aten.view.default", {v, ArgumentList{1, heads, seq, hd}},
                  {1, heads, seq, hd});
    Node* kc = op("torch.ops.aten.index_copy.default", {L.k_cache, 2, input_pos, kv},
                  {1, heads, cache, hd});
    Node* vc = op("torch.ops.aten.index_copy.default", {L.v_cache, 2, input_pos, vv},
                  {1, heads, cache, hd});
    mutations.emplace_back(kc, "layers." + std::to_string(l) + ".attention.kv_cache.k_cache");
    mutations.emplace_back(vc, "layers." + std::to_string(l) + ".attention.kv_cache.v_cache");
    Node* kt = op("torch.ops.aten.transpose.int", {kc, 2, 3}, {1, heads, hd, cache});
    Node* scores = op("torch.ops.aten.matmul.default", {qv, kt}, {1, heads, seq, cache});
    Node* scaled = op("torch.ops.aten.mul.Scalar", {scores, 0.25}, {1, heads, seq, cache});
    Node* probs =
        op("torch.ops.aten._softmax.default", {scaled, -1, false}, {1, heads, seq, cache});
    Node* attn = op("torch.ops.aten.matmul.default", {probs, vc}, {1, heads, seq, hd});
    Node* merged = op("torch.ops.aten.view.default", {attn, ArgumentList{1, seq, d}}, {1, seq, d});
    Node* o = linear(merged, L.wo, d);
    Node* h1 = op("torch.ops.aten.add.Tensor", {h, o}, {1, seq, d});
    Node* y = rms_norm(h1, L.ffn_norm);
    Node* a = linear(y, L.w1, ffn);
    Node* silu = op("torch.ops.aten.silu.default", {a}, {1, seq, ffn});
    Node* b = linear(y, L.w3, ffn);
    Node* gated = op("torch.ops.aten.mul.Tensor", {silu, b}, {1, seq, ffn});
    Node* down = linear(gated, L.w2, d);
    h = op("torch.ops.aten.add.Tensor", {h1, down}, {1, seq, d});
  }
  Node* final_norm = rms_norm(h, norm_w);
  Node* logits = linear(final_norm, out_w, 1000);
  ArgumentList results;
  for (const auto& m : mutations) {
    results.emplace_back(m.first);
    sig.output_specs.emplace_back(epgraph::OutputKind::BUFFER_MUTATION,
                                  epgraph::TensorArgument{std::string(m.first->name())}, m.second);
  }
  results.emplace_back(logits);
  sig.output_specs.emplace_back(epgraph::OutputKind::USER_OUTPUT,
                                epgraph::TensorArgument{std::string(logits->name())});
  g->output(std::move(results));
  Program ep(std::move(g), std::move(sig));
  ep.metadata().opset_version = {{"aten", 10}};
  return ep;
}

std::size_t compute_nodes(const Graph& g) {
  std::size_t n = 0;
  for (const Node& node : g.nodes()) n += node.op() == OpCode::call_function ? 1 : 0;
  return n;
}

// Figure 4: load and save against nlohmann::json's parse and dump of the same text.
std::array<double, 4> bench_json(std::size_t layers, int reps) {
  const Program built = transformer_program(layers);
  const std::string text = epgraph::json::save_exported_program_to_string(built);
  const std::size_t nodes = compute_nodes(built.graph());
  const double mb = static_cast<double>(text.size()) / 1e6;
  nlohmann::json parsed;
  const double parse = min_seconds(
      reps, [&] { parsed = nullptr; }, [&] { parsed = nlohmann::json::parse(text); });
  std::string dumped;
  const double dump = min_seconds(
      reps, [&] { dumped.clear(); }, [&] { dumped = parsed.dump(); });
  parsed = nullptr;
#ifdef EPGRAPH_BENCH_SIMDJSON
  // simdjson's DOM parse of the same text (the parser reused, as simdjson intends).
  simdjson::dom::parser simd_parser;
  const simdjson::padded_string padded(text);
  bool simd_ok = true;
  const double simd = min_seconds(
      reps, [] {},
      [&] { simd_ok = simd_ok && simd_parser.parse(padded).error() == simdjson::SUCCESS; });
  if (!simd_ok) print_line("bench=json error=simdjson_parse_failed");
#endif
  std::unique_ptr<Program> loaded;
  const double load = min_seconds(
      reps, [&] { loaded.reset(); },
      [&] {
        loaded = std::make_unique<Program>(epgraph::json::load_exported_program_from_string(text));
      });
  epgraph::verify(*loaded, {false});
  // The floor under any reader of this representation: a deep copy of the loaded program
  // (ExportedProgram::clone: every node, name, argument and TensorMeta allocated and linked as a
  // load must allocate and link them), with no text read at all.
  std::unique_ptr<Program> copied;
  const double floor_clone = min_seconds(
      reps, [&] { copied.reset(); }, [&] { copied = std::make_unique<Program>(loaded->clone()); });
  copied.reset();
  // The same load by one ExportedProgramDeserializer (its parser and buffers reused from one
  // load to the next, as simdjson_parse reuses its parser).
  epgraph::json::ExportedProgramDeserializer deserializer;
  const double load_reused = min_seconds(
      reps, [&] { loaded.reset(); },
      [&] { loaded = std::make_unique<Program>(deserializer.deserialize(text)); });
  deserializer.release();
  // The same load with the text parsed by nlohmann's parser (the other backend of the reader;
  // the same as json_load when epgraph::json was built without simdjson).
  const double load_nlohmann = min_seconds(
      reps, [&] { loaded.reset(); },
      [&] {
        loaded = std::make_unique<Program>(epgraph::json::detail::load_program<epgraph::HostTensor>(
            text, epgraph::json::detail::parser_backend::nlohmann));
      });
  std::string saved;
  const double save = min_seconds(
      reps, [&] { saved.clear(); },
      [&] { saved = epgraph::json::save_exported_program_to_string(*loaded); });
  if (nlohmann::json::parse(saved) != nlohmann::json::parse(text)) {
    print_line("bench=json error=round_trip_differs");
  }
  const std::string head =
      " nodes=" + std::to_string(nodes) + " layers=" + std::to_string(layers) + " mb=" + fmt(mb, 2);
  print_line("bench=nlohmann_parse" + head + " seconds=" + fmt(parse, 4) +
             " mb_per_s=" + fmt(mb / parse));
#ifdef EPGRAPH_BENCH_SIMDJSON
  print_line("bench=simdjson_parse" + head + " seconds=" + fmt(simd, 4) +
             " mb_per_s=" + fmt(mb / simd));
  const std::string to_simdjson = " ratio_to_simdjson=" + fmt(load / simd, 2) + " target<=2";
  const std::string reused_to_simdjson =
      " ratio_to_simdjson=" + fmt(load_reused / simd, 2) + " target<=2";
#else
  const std::string to_simdjson = " ratio_to_simdjson=unmeasured(no_simdjson)";
  const std::string reused_to_simdjson = to_simdjson;
#endif
  const std::string backend = epgraph::json::detail::default_parser_backend ==
                                      epgraph::json::detail::parser_backend::simdjson
                                  ? " parser=simdjson"
                                  : " parser=nlohmann";
  print_line("bench=json_load" + head + " seconds=" + fmt(load, 4) + " mb_per_s=" + fmt(mb / load) +
             " ratio_to_parse=" + fmt(load / parse, 2) + to_simdjson + backend);
  print_line("bench=json_load_reused" + head + " seconds=" + fmt(load_reused, 4) +
             " mb_per_s=" + fmt(mb / load_reused) +
             " ratio_to_json_load=" + fmt(load_reused / load, 2) + reused_to_simdjson);
#ifdef EPGRAPH_BENCH_SIMDJSON
  const std::string floor_to_simdjson = " ratio_to_simdjson=" + fmt(floor_clone / simd, 2);
#else
  const std::string floor_to_simdjson = " ratio_to_simdjson=unmeasured(no_simdjson)";
#endif
  print_line("bench=json_load_floor_clone" + head + " seconds=" + fmt(floor_clone, 4) +
             " ratio_to_json_load=" + fmt(floor_clone / load, 2) + floor_to_simdjson);
  print_line("bench=json_load_nlohmann_backend" + head + " seconds=" + fmt(load_nlohmann, 4) +
             " mb_per_s=" + fmt(mb / load_nlohmann) +
             " ratio_to_json_load=" + fmt(load_nlohmann / load, 2));
  print_line("bench=nlohmann_dump" + head + " seconds=" + fmt(dump, 4) +
             " mb_per_s=" + fmt(mb / dump));
  print_line("bench=json_save" + head + " seconds=" + fmt(save, 4) + " mb_per_s=" + fmt(mb / save) +
             " ratio_to_dump=" + fmt(save / dump, 2));
  return {load, save, parse, dump};
}

// The same transformer with a dynamic sequence length: every size 8 (the sequence; no other
// dimension is 8) becomes torch 2.13's `Symbol('s0', positive=True, integer=True)` with hint 8,
// as torch.export writes a Dim. Loads of it against loads of the static one (same run): what the
// symbolic sizes cost the loader (their texts are checked with sym::parse, once per text).
void bench_json_dynamic(std::size_t layers, int reps) {
  Program dynamic = transformer_program(layers);
  const std::string static_text = epgraph::json::save_exported_program_to_string(dynamic);
  const epgraph::SymExpr s0{"Symbol('s0', positive=True, integer=True)", 8};
  std::size_t symbolic = 0;
  for (Node& n : dynamic.graph().nodes()) {
    epgraph::TensorMeta* t = n.mutable_meta().val.tensor();
    if (t == nullptr) continue;
    for (epgraph::SymInt& size : t->sizes) {
      const auto* v = std::get_if<std::int64_t>(&size);
      if (v != nullptr && *v == 8) {
        size = s0;
        ++symbolic;
      }
    }
  }
  dynamic.metadata().range_constraints = {epgraph::RangeConstraint{"s0", 2, 1024}};
  const std::string text = epgraph::json::save_exported_program_to_string(dynamic);
  std::unique_ptr<Program> loaded;
  const double load_static = min_seconds(
      reps, [&] { loaded.reset(); },
      [&] {
        loaded = std::make_unique<Program>(
            epgraph::json::load_exported_program_from_string(static_text));
      });
  const double load = min_seconds(
      reps, [&] { loaded.reset(); },
      [&] {
        loaded = std::make_unique<Program>(epgraph::json::load_exported_program_from_string(text));
      });
  print_line("bench=json_load_dynamic nodes=" + std::to_string(compute_nodes(dynamic.graph())) +
             " symbolic_sizes=" + std::to_string(symbolic) + " seconds=" + fmt(load, 4) +
             " static_seconds=" + fmt(load_static, 4) +
             " ratio_to_static=" + fmt(load / load_static, 2));
}

#endif

}  // namespace

// With no argument every figure is measured; `epgraph_bench <word>` measures only the groups
// whose name contains <word> (cmb, build, memory, walks, rauw, json), e.g. for profiling.
// Operator schemas: parsing the whole aten/prims table once (time and the bytes it keeps), and
// creating call_function nodes with the schema check (the default) against without it.
void bench_schemas(std::size_t nodes, int reps) {
  double parse = 1e300;
  std::int64_t bytes = 0;
  for (int r = 0; r < reps; ++r) {
    std::vector<std::string> names;
    g_counting = true;
    const std::int64_t before = g_live_bytes;
    auto registry = std::make_unique<epgraph::OperatorRegistry>();
    const auto t0 = Clock::now();
    epgraph::register_aten_schemas(*registry);
    names = registry->qualified_names();
    for (const std::string& name : names) (void)registry->find(name);
    parse = std::min(parse, std::chrono::duration<double>(Clock::now() - t0).count());
    names = {};
    bytes = g_live_bytes - before;  // what the registry keeps
    registry.reset();
    g_counting = false;
  }
  print_line("bench=schema_table schemas=" + std::to_string(epgraph::aten_schema_count) +
             " parse_all_seconds=" + fmt(parse, 4) + " us_per_schema=" +
             fmt(parse * 1e6 / static_cast<double>(epgraph::aten_schema_count), 2) +
             " bytes=" + std::to_string(bytes) + " bytes_per_schema=" +
             fmt(static_cast<double>(bytes) / static_cast<double>(epgraph::aten_schema_count)));
  double best[2] = {1e300, 1e300};
  for (int r = 0; r < reps; ++r) {
    for (int checked = 0; checked < 2; ++checked) {
      Graph g;
      g.set_schema_checks(checked == 1);
      Node* x = g.placeholder("x");
      Node* p = g.placeholder("p");
      x->mutable_meta().val = meta({4});
      p->mutable_meta().val = meta({4});
      const auto t0 = Clock::now();
      Node* prev = x;
      for (std::size_t i = 0; i < nodes; ++i) prev = g.call_function(kAdd, {prev, p});
      best[checked] =
          std::min(best[checked], std::chrono::duration<double>(Clock::now() - t0).count());
    }
  }
  const double n = static_cast<double>(nodes);
  print_line("bench=create_node_schema nodes=" + std::to_string(nodes) + " checked_ns_per_node=" +
             fmt(best[1] * 1e9 / n) + " unchecked_ns_per_node=" + fmt(best[0] * 1e9 / n) +
             " ratio=" + fmt(best[1] / best[0], 2));
}

// Graph::eliminate_dead_code on `nodes` compute nodes: a chain add(prev, p) whose every other
// node also feeds a dead neg (half the nodes go). The graph is built untimed before each run.
std::vector<double> bench_dce(const std::vector<std::size_t>& sizes, int reps) {
  std::vector<double> out;
  for (std::size_t nodes : sizes) {
    std::unique_ptr<Graph> g;
    std::size_t removed = 0;
    const double s = min_seconds(
        reps,
        [&] {
          g.reset();
          g = std::make_unique<Graph>();
          Node* prev = g->placeholder("x");
          Node* p = g->placeholder("p");
          for (std::size_t i = 0; i < nodes / 2; ++i) {
            prev = g->call_function(kAdd, {prev, p});
            g->call_function("torch.ops.aten.neg.default", {prev});
          }
          g->output({prev});
        },
        [&] {
          const std::size_t before = g->size();
          (void)g->eliminate_dead_code();
          removed = before - g->size();
        });
    print_line("bench=eliminate_dead_code nodes=" + std::to_string(nodes) +
               " removed=" + std::to_string(removed) + " seconds=" + fmt(s, 4) +
               " ns_per_node=" + fmt(s * 1e9 / static_cast<double>(nodes)));
    out.push_back(s);
  }
  return out;
}

// stable_topological_sort on `nodes` compute nodes written in reverse order (node i uses node
// i + 1), so that every node moves: torch's algorithm waits and releases along the whole chain.
std::vector<double> bench_sort(const std::vector<std::size_t>& sizes, int reps) {
  std::vector<double> out;
  for (std::size_t nodes : sizes) {
    std::unique_ptr<Graph> g;
    const double s = min_seconds(
        reps,
        [&] {
          g.reset();
          g = std::make_unique<Graph>();
          Node* x = g->placeholder("x");
          Node* p = g->placeholder("p");
          std::vector<Node*> chain;
          chain.reserve(nodes);
          // add(p, p) first, so that set_args only adds an input (no long users() to shrink).
          for (std::size_t i = 0; i < nodes; ++i) chain.push_back(g->call_function(kAdd, {p, p}));
          for (std::size_t i = 0; i + 1 < nodes; ++i) chain[i]->set_args({chain[i + 1], p});
          chain.back()->set_args({x, p});
          g->output({chain.front()});
        },
        [&] { epgraph::stable_topological_sort(*g); });
    print_line("bench=stable_topological_sort nodes=" + std::to_string(nodes) + " seconds=" +
               fmt(s, 4) + " ns_per_node=" + fmt(s * 1e9 / static_cast<double>(nodes)));
    out.push_back(s);
  }
  return out;
}

// propagate_meta(recompute_all) on `nodes` compute nodes over a dynamic dimension: x and p are
// float32[2, s0] (torch 2.13's srepr form, hint 8, s0 in [2, 4096]); the chain alternates
// add(prev, p), relu(prev), mul(prev, 2.0) and a view(prev, [2, sym]) through a sym_size.int node,
// so that every node's value has symbolic sizes and strides to parse, compute and write.
std::vector<double> bench_propagate_meta(const std::vector<std::size_t>& sizes, int reps) {
  std::vector<double> out;
  const epgraph::SymExpr s0{"Symbol('s0', positive=True, integer=True)", 8};
  for (std::size_t nodes : sizes) {
    std::unique_ptr<Program> ep;
    std::size_t computed = 0;
    const double s = min_seconds(
        reps,
        [&] {
          ep.reset();
          auto g = std::make_unique<Graph>();
          epgraph::TensorMeta m;
          m.sizes = {std::int64_t{2}, s0};
          m.strides = {s0, std::int64_t{1}};
          Node* prev = g->placeholder("x");
          prev->mutable_meta().val = m;
          Node* p = g->placeholder("p");
          p->mutable_meta().val = m;
          Node* n = g->call_function("torch.ops.aten.sym_size.int", {prev, 1});
          for (std::size_t i = 1; i < nodes; ++i) {
            switch (i % 4) {
              case 0: prev = g->call_function(kAdd, {prev, p}); break;
              case 1: prev = g->call_function("torch.ops.aten.relu.default", {prev}); break;
              case 2: prev = g->call_function("torch.ops.aten.mul.Tensor", {prev, 2.0}); break;
              default:
                prev = g->call_function("torch.ops.aten.view.default",
                                        {prev, Argument(ArgumentList{2, n})});
                break;
            }
          }
          g->output({prev});
          epgraph::ExportGraphSignature sig;
          sig.input_specs = {{epgraph::InputKind::USER_INPUT, epgraph::TensorArgument{"x"}},
                             {epgraph::InputKind::USER_INPUT, epgraph::TensorArgument{"p"}}};
          sig.output_specs = {{epgraph::OutputKind::USER_OUTPUT,
                               epgraph::TensorArgument{std::string(prev->name())}}};
          epgraph::ProgramMetadata md;
          md.range_constraints = {epgraph::RangeConstraint{"s0", 2, 4096}};
          ep = std::make_unique<Program>(
              std::move(g), std::move(sig), epgraph::ordered_dict<Tensor>{},
              epgraph::ordered_dict<Program::constant_type>{}, std::move(md));
        },
        [&] {
          computed = epgraph::propagate_meta(*ep, epgraph::MetaMode::recompute_all).computed;
        });
    print_line("bench=propagate_meta nodes=" + std::to_string(nodes) +
               " computed=" + std::to_string(computed) + " seconds=" + fmt(s, 4) +
               " ns_per_node=" + fmt(s * 1e9 / static_cast<double>(nodes)));
    out.push_back(s);
  }
  return out;
}

// --- FX toolkit and edits on a transformer with a static KV cache per layer ---------------------

// A decoder stack as torch.export gives one with a static KV cache: per layer four weights and
// two cache buffers (placeholders first, in canonical order), q/k/v linears, two index_copy cache
// writes returned as BUFFER_MUTATION outputs, attention, the output linear, a residual add and a
// relu: 14 nodes, 6 input specs and 2 outputs a layer.
Program kv_transformer(std::size_t layers) {
  auto g = std::make_unique<Graph>();
  g->set_schema_checks(false);  // no values on the placeholders: nothing to check against
  epgraph::ExportGraphSignature sig;
  epgraph::ordered_dict<Tensor> sd;
  std::vector<std::array<Node*, 6>> ph(layers);
  const char* const weights[4] = {"wq", "wk", "wv", "wo"};
  for (int kind = 0; kind < 2; ++kind) {  // all weights, then all caches
    for (std::size_t i = 0; i < layers; ++i) {
      for (int j = 0; j < (kind == 0 ? 4 : 2); ++j) {
        const std::string what = kind == 0 ? weights[j] : (j == 0 ? "k_cache" : "v_cache");
        const std::string target = "l" + std::to_string(i) + "." + what;
        const std::string name = (kind == 0 ? "p_l" : "b_l") + std::to_string(i) + "_" + what;
        ph[i][static_cast<std::size_t>(kind * 4 + j)] = g->placeholder(name);
        sig.input_specs.emplace_back(
            kind == 0 ? epgraph::InputKind::PARAMETER : epgraph::InputKind::BUFFER,
            epgraph::TensorArgument{name}, target, kind == 0 ? std::nullopt : std::optional(true));
        sd.insert(target, Tensor::zeros(epgraph::dtype::float32, {1}));
      }
    }
  }
  Node* h = g->placeholder("x");
  Node* pos = g->placeholder("input_pos");
  for (const char* u : {"x", "input_pos"}) {
    sig.input_specs.emplace_back(epgraph::InputKind::USER_INPUT, epgraph::TensorArgument{u});
  }
  ArgumentList results;
  for (std::size_t i = 0; i < layers; ++i) {
    auto call = [&](const char* op, ArgumentList args) {
      return g->call_function(std::string("torch.ops.aten.") + op, std::move(args));
    };
    Node* q = call("linear.default", {h, ph[i][0]});
    Node* k = call("linear.default", {h, ph[i][1]});
    Node* v = call("linear.default", {h, ph[i][2]});
    Node* kc = call("index_copy.default", {ph[i][4], 2, pos, k});
    Node* vc = call("index_copy.default", {ph[i][5], 2, pos, v});
    Node* a = call("scaled_dot_product_attention.default", {q, kc, vc});
    Node* o = call("linear.default", {a, ph[i][3]});
    h = call("relu.default", {call("add.Tensor", {h, o})});
    for (Node* c : {kc, vc}) {
      results.emplace_back(c);
      sig.output_specs.emplace_back(epgraph::OutputKind::BUFFER_MUTATION,
                                    epgraph::TensorArgument{std::string(c->name())},
                                    "l" + std::to_string(i) + (c == kc ? ".k_cache" : ".v_cache"));
    }
  }
  results.emplace_back(h);
  sig.output_specs.emplace_back(epgraph::OutputKind::USER_OUTPUT,
                                epgraph::TensorArgument{std::string(h->name())});
  g->output(std::move(results));
  g->set_schema_checks(true);
  return Program(std::move(g), std::move(sig), std::move(sd));
}

// Issue 14 item 2: `calls` successive create_mutable_buffer calls on one kv_transformer program
// of about 1k / 10k / 100k / 1M nodes (two BUFFER_MUTATION outputs per layer, so specs and
// outputs grow with the program). The first call after the program is built pays one
// validation and builds the edit lookups (O(placeholders + specs)); it is timed on its own line.
// The ns per call of the calls after it must not grow with the program: 1M/1k ratio <= 1.5. Sizes
// are measured in turns (see bench_build); each keeps its minimum.
void bench_cmb_transformer(int reps) {
  const std::vector<std::size_t> layers = {71, 714, 7143, 71428};
  const std::size_t calls = 1000;
  std::vector<std::string> names;
  for (std::size_t i = 0; i <= calls; ++i) names.push_back("b_new_cache_" + std::to_string(i));
  std::vector<double> best(layers.size(), 1e300);
  std::vector<double> first(layers.size(), 1e300);
  for (int r = 0; r < reps; ++r) {
    for (std::size_t k = 0; k < layers.size(); ++k) {
      Program ep = kv_transformer(layers[k]);
      std::vector<Tensor> data(calls + 1, Tensor::zeros(epgraph::dtype::float32, {1}));
      const double f = min_seconds(
          1, {}, [&] { (void)epgraph::create_mutable_buffer(ep, names[0], std::move(data[0])); });
      const double s = min_seconds(1, {}, [&] {
        for (std::size_t i = 1; i <= calls; ++i) {
          (void)epgraph::create_mutable_buffer(ep, names[i], std::move(data[i]));
        }
      });
      best[k] = std::min(best[k], s * 1e9 / static_cast<double>(calls));
      if (r == 0) epgraph::verify(ep);
      first[k] = std::min(first[k], f * 1e9);
    }
  }
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const std::string shape = " nodes=" + std::to_string(layers[k] * 14 + 3) +
                              " layers=" + std::to_string(layers[k]) +
                              " outputs=" + std::to_string(layers[k] * 2 + 1);
    print_line("bench=cmb_transformer_first_call" + shape + " ns=" + fmt(first[k]));
    print_line("bench=cmb_transformer" + shape + " calls=" + std::to_string(calls) +
               " ns_per_call=" + fmt(best[k]));
  }
  print_line("bench=cmb_transformer_ratio nodes=1000000/1000 ratio=" + fmt(best[3] / best[0], 2) +
             " target<=1.5");
}

// replace_pattern of a 3-node pattern (relu(add(x, linear(a, w))) -> clamp_min(...)) matching
// once per layer of kv_transformer programs of about 10k and 100k nodes.
void bench_replace_pattern(int reps) {
  Graph pattern;
  Graph replacement;
  for (Graph* g : {&pattern, &replacement}) {
    Node* x = g->placeholder("x");
    Node* a = g->placeholder("a");
    Node* w = g->placeholder("w");
    Node* lin = g->call_function("torch.ops.aten.linear.default", {a, w});
    Node* add = g->call_function("torch.ops.aten.add.Tensor", {x, lin});
    g->output({g == &pattern ? g->call_function("torch.ops.aten.relu.default", {add})
                             : g->call_function("torch.ops.aten.clamp_min.default", {add, 0})});
  }
  const std::vector<std::size_t> layers = {715, 7143};
  std::vector<double> best(layers.size(), 1e300);
  for (int r = 0; r < reps; ++r) {
    for (std::size_t k = 0; k < layers.size(); ++k) {
      Program ep = kv_transformer(layers[k]);
      std::size_t replaced = 0;
      const double s = min_seconds(1, {}, [&] {
        replaced = epgraph::replace_pattern(ep.graph(), pattern, replacement).size();
      });
      if (replaced != layers[k]) std::abort();
      best[k] = std::min(best[k], s);
    }
  }
  for (std::size_t k = 0; k < layers.size(); ++k) {
    print_line("bench=replace_pattern nodes=" + std::to_string(layers[k] * 14 + 3) +
               " matches=" + std::to_string(layers[k]) + " seconds=" + fmt(best[k], 4) +
               " us_per_match=" + fmt(best[k] * 1e6 / static_cast<double>(layers[k])));
  }
  print_line("bench=replace_pattern_ratio nodes=100000/10000 ratio=" + fmt(best[1] / best[0], 2) +
             " target<=12");
}

// Issue 30: CapabilityBasedPartitioner::propose_partitions on kv_transformer programs of about
// 100k and 1M nodes (the sizes; three turns each, minimum kept), for two supports: the
// linear family (four partitions a layer, which must not merge across the layer's unsupported
// nodes: torch tries every new one against every older one) and every operator but
// scaled_dot_product_attention (one unsupported node per layer in the middle of a chain).
void bench_partition(int reps) {
  // The issue asks for a ratio <= 15 between 1M and 100k nodes (bench/README.md has the
  // history: 100k nodes took 26 s before the candidate runs were answered at once).
  std::vector<std::size_t> layers = {7142, 71428};
  // EPGRAPH_BENCH_PARTITION_LAYERS=71,714 (two sizes in layers, about 14 nodes each) picks
  // other sizes, e.g. 1k/10k or 10k/100k nodes.
  if (const char* env = std::getenv("EPGRAPH_BENCH_PARTITION_LAYERS")) {
    const std::string text = env;
    const std::size_t comma = text.find(',');
    if (comma != std::string::npos) {
      layers = {static_cast<std::size_t>(std::stoul(text.substr(0, comma))),
                static_cast<std::size_t>(std::stoul(text.substr(comma + 1)))};
    }
  }
  struct Support {
    const char* name;
    epgraph::OperatorSupport support;
  };
  const epgraph::OperatorSupport sdpa =
      epgraph::supports_targets({"torch.ops.aten.scaled_dot_product_attention"});
  const std::vector<Support> supports = {
      {"linear", epgraph::supports_targets({"torch.ops.aten.linear"})},
      {"all_but_sdpa", epgraph::create_op_support([sdpa](const Node& n) {
         return n.op() == epgraph::OpCode::call_function && !sdpa.is_node_supported(n);
       })}};
  for (const Support& s : supports) {
    std::vector<double> best(layers.size(), 1e300);
    std::vector<std::size_t> found(layers.size(), 0);
    for (int r = 0; r < reps; ++r) {
      for (std::size_t k = 0; k < layers.size(); ++k) {
        Program ep = kv_transformer(layers[k]);
        const epgraph::CapabilityBasedPartitioner p(ep.graph(), s.support);
        const double t = min_seconds(3, {}, [&] { found[k] = p.propose_partitions().size(); });
        best[k] = std::min(best[k], t);
      }
    }
    for (std::size_t k = 0; k < layers.size(); ++k) {
      const std::size_t nodes = layers[k] * 14 + 3;
      print_line(std::string("bench=partition support=") + s.name +
                 " nodes=" + std::to_string(nodes) + " partitions=" + std::to_string(found[k]) +
                 " seconds=" + fmt(best[k], 4) +
                 " ns_per_node=" + fmt(best[k] * 1e9 / static_cast<double>(nodes)));
    }
    print_line(std::string("bench=partition_ratio support=") + s.name +
               " nodes=" + std::to_string(layers[1] * 14 + 3) + "/" +
               std::to_string(layers[0] * 14 + 3) + " ratio=" + fmt(best[1] / best[0], 2) +
               " target<=15" + (best[1] / best[0] <= 15 ? "" : "(not_met)"));
  }
}

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  auto want = [&](const char* group) { return std::string(group).find(only) != std::string::npos; };
  const auto t0 = Clock::now();
  if (want("cmb")) {
    const std::vector<double> ns = bench_create_mutable_buffer(
        {{1000, 100}, {10000, 100}, {100000, 100}, {1000000, 100}, {100000, 10}, {100000, 1000}},
        1000, 3);
    print_line("bench=create_mutable_buffer_ratio nodes=1000000/1000 params=100 ratio=" +
               fmt(ns[3] / ns[0], 2) + " target<=1.5");
  }
  if (want("build")) {
    const std::vector<double> s = bench_build({10000, 100000, 1000000}, 4);
    print_line("bench=build_ratio nodes=1000000/100000 ratio=" + fmt(s[2] / s[1], 2) +
               " target<=12");
  }
  if (want("memory")) bench_memory(1000000, 100);
  if (want("walks")) {
    bench_walks({100000, 1000000}, 3);
  }
  if (want("rauw")) {
    for (std::size_t u : {std::size_t{1000}, std::size_t{10000}, std::size_t{100000}})
      bench_rauw(u);
  }
  if (want("schema")) bench_schemas(100000, 3);
  if (want("dce")) {
    const std::vector<double> s = bench_dce({100000, 1000000}, 3);
    print_line("bench=eliminate_dead_code_ratio nodes=1000000/100000 ratio=" + fmt(s[1] / s[0], 2) +
               " target<=12");
  }
  if (want("topo_sort")) {
    const std::vector<double> s = bench_sort({100000, 1000000}, 3);
    print_line("bench=stable_topological_sort_ratio nodes=1000000/100000 ratio=" +
               fmt(s[1] / s[0], 2) + " target<=12");
  }
  if (want("propagate_meta")) {
    const std::vector<double> s = bench_propagate_meta({100000, 1000000}, 3);
    print_line("bench=propagate_meta_ratio nodes=1000000/100000 ratio=" + fmt(s[1] / s[0], 2) +
               " target<=12");
  }
  if (want("cmb_transformer")) bench_cmb_transformer(5);
  if (want("replace_pattern")) bench_replace_pattern(2);
  if (want("partition")) bench_partition(1);
#ifdef EPGRAPH_BENCH_JSON
  if (want("json")) {
    // The same number of repetitions for both sizes: a minimum over more runs is biased low.
    const auto small = bench_json(10000 / 34, 3);
    const auto big = bench_json(100000 / 34, 3);
    print_line("bench=json_load_ratio nodes=100000/10000 ratio=" + fmt(big[0] / small[0], 2) +
               " target<=12");
    print_line("bench=json_save_ratio nodes=100000/10000 ratio=" + fmt(big[1] / small[1], 2) +
               " target<=12");
    // How the baselines themselves scale on the same texts (for reading the two lines above).
    print_line("bench=nlohmann_parse_ratio nodes=100000/10000 ratio=" + fmt(big[2] / small[2], 2));
    print_line("bench=nlohmann_dump_ratio nodes=100000/10000 ratio=" + fmt(big[3] / small[3], 2));
    bench_json_dynamic(10000 / 34, 3);
  }
#endif
  print_line("bench=total seconds=" +
             fmt(std::chrono::duration<double>(Clock::now() - t0).count(), 1));
  return 0;
}
