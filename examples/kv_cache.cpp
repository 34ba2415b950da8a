// kv_cache: the library walk-through that adds a KV cache to an attention block.
// SPDX-License-Identifier: BSD-3-Clause
//
// kv_cache: add a KV cache to a decoder attention block, entirely in C++.
//
// 1. Builds, in code, the program torch.export (2.13, after run_decompositions({})) produces for
//    a small two-head attention block `forward(x, input_pos)`:
//        q/k/v = Linear(x).view(1, 4, 2, 4).transpose(1, 2)
//        y = scaled_dot_product_attention(q, k, v, is_causal=True)
//        return Linear(y.transpose(1, 2).view(1, 4, 8))
//    (input_pos is not used yet: torch.export keeps unused inputs as placeholders.)
// 2. Adds the cache pair with create_mutable_buffer: placeholders b_k_cache / b_v_cache, their
//    BUFFER specs at the end of the persistent-buffer block, state_dict entries, and
//    BUFFER_MUTATION outputs in front of the user output.
// 3. Rewires the cache update: the new keys and values are written into the caches at
//    input_pos with index_copy (the functional form torch.export gives an in-place
//    `cache.index_copy_(2, input_pos, k)`), attention reads the updated caches, and
//    set_buffer_mutation makes the updated caches the values written back to the buffers.
// 4. Validates (validate_graph_signature, verify) and prints the program before and after.
//
// Usage: kv_cache            (no arguments; exit status 0 on success)

#include <cstdint>
#include <epgraph/epgraph.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/verify.hpp>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using epgraph::Argument;
using epgraph::HostTensor;
using epgraph::Node;
using Program = epgraph::ExportedProgram<HostTensor>;

constexpr std::int64_t kBatch = 1, kSeq = 4, kHeads = 2, kHeadDim = 4, kDim = kHeads * kHeadDim;
constexpr std::int64_t kMaxSeq = 16;

HostTensor weight(double value) {
  return HostTensor::full(epgraph::dtype::float32, {kDim, kDim}, value);
}

// Sets meta["val"] of `node` to a float32 tensor of `sizes`.
void set_val(Node* node, std::vector<std::int64_t> sizes,
             epgraph::dtype type = epgraph::dtype::float32) {
  node->mutable_meta().val = epgraph::tensor_meta_of(HostTensor::zeros(type, std::move(sizes)));
}

Program build_attention() {
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::ordered_dict<HostTensor> state;
  epgraph::ExportGraphSignature sig;
  std::vector<Node*> w;
  for (const char* name : {"wq", "wk", "wv", "wo"}) {
    const std::string target = std::string(name) + ".weight";
    Node* p = g->placeholder("p_" + std::string(name) + "_weight");
    set_val(p, {kDim, kDim});
    sig.input_specs.emplace_back(epgraph::InputKind::PARAMETER,
                                 epgraph::TensorArgument{std::string(p->name())}, target);
    state.insert(target, weight(0.1 * static_cast<double>(w.size() + 1)));
    w.push_back(p);
  }
  Node* x = g->placeholder("x");
  set_val(x, {kBatch, kSeq, kDim});
  Node* input_pos = g->placeholder("input_pos");
  set_val(input_pos, {kSeq}, epgraph::dtype::int64);
  sig.input_specs.emplace_back(epgraph::InputKind::USER_INPUT, epgraph::TensorArgument{"x"});
  sig.input_specs.emplace_back(epgraph::InputKind::USER_INPUT,
                               epgraph::TensorArgument{"input_pos"});

  const Argument heads_shape{kBatch, kSeq, kHeads, kHeadDim};
  std::vector<Node*> qkv;
  for (std::size_t i = 0; i < 3; ++i) {
    Node* linear = g->call_function("torch.ops.aten.linear.default", {x, w[i]});
    Node* view = g->call_function("torch.ops.aten.view.default", {linear, heads_shape});
    Node* t = g->call_function("torch.ops.aten.transpose.int", {view, 1, 2});
    set_val(linear, {kBatch, kSeq, kDim});
    set_val(view, {kBatch, kSeq, kHeads, kHeadDim});
    set_val(t, {kBatch, kHeads, kSeq, kHeadDim});
    qkv.push_back(t);
  }
  Node* sdpa = g->call_function("torch.ops.aten.scaled_dot_product_attention.default",
                                {qkv[0], qkv[1], qkv[2], epgraph::none, 0.0, true});
  Node* t3 = g->call_function("torch.ops.aten.transpose.int", {sdpa, 1, 2});
  Node* view3 = g->call_function("torch.ops.aten.view.default", {t3, Argument{kBatch, kSeq, kDim}});
  Node* out = g->call_function("torch.ops.aten.linear.default", {view3, w[3]});
  set_val(sdpa, {kBatch, kHeads, kSeq, kHeadDim});
  set_val(t3, {kBatch, kSeq, kHeads, kHeadDim});
  set_val(view3, {kBatch, kSeq, kDim});
  set_val(out, {kBatch, kSeq, kDim});
  g->output({out});
  sig.output_specs.emplace_back(epgraph::OutputKind::USER_OUTPUT,
                                epgraph::TensorArgument{std::string(out->name())});
  return Program(std::move(g), std::move(sig), std::move(state));
}

void print(const char* title, const Program& ep) {
  std::cout << "===== " << title << " =====\n"
            << ep.graph() << epgraph::to_string(ep.graph_signature()) << "state_dict:";
  for (const auto& entry : ep.state_dict()) std::cout << ' ' << entry.first;
  std::cout << "\n\n";
}

// Writes `fresh` (keys or values, [B, H, S, D]) into `cache` at positions `input_pos` of
// dimension 2 just before `before`, and returns the updated cache.
Node* update_cache(Program& ep, Node* before, Node* cache, Node* input_pos, Node* fresh) {
  auto at = ep.graph().inserting_before(before);
  Node* updated =
      ep.graph().call_function("torch.ops.aten.index_copy.default", {cache, 2, input_pos, fresh});
  set_val(updated, {kBatch, kHeads, kMaxSeq, kHeadDim});
  return updated;
}

}  // namespace

int main() {
  try {
    Program ep = build_attention();
    epgraph::verify(ep);
    print("torch.export program", ep);

    // The cache pair: [batch, heads, max_seq, head_dim], zero-initialized.
    const auto cache_shape = std::vector<std::int64_t>{kBatch, kHeads, kMaxSeq, kHeadDim};
    Node* k_cache = epgraph::create_mutable_buffer(
        ep, "b_k_cache", HostTensor::zeros(epgraph::dtype::float32, cache_shape));
    Node* v_cache = epgraph::create_mutable_buffer(
        ep, "b_v_cache", HostTensor::zeros(epgraph::dtype::float32, cache_shape));
    epgraph::validate_graph_signature(ep);

    // Attention reads the caches updated with this step's keys and values.
    epgraph::Graph& g = ep.graph();
    Node* sdpa = g.find_node("scaled_dot_product_attention");
    Node* input_pos = g.find_node("input_pos");
    Node* k = g.find_node("transpose_1");
    Node* v = g.find_node("transpose_2");
    Node* k_updated = update_cache(ep, sdpa, k_cache, input_pos, k);
    Node* v_updated = update_cache(ep, sdpa, v_cache, input_pos, v);
    sdpa->replace_input_with(k, k_updated);
    sdpa->replace_input_with(v, v_updated);
    // With a cache, queries attend to every cached position; a real model would pass a mask built
    // from input_pos instead of is_causal.
    sdpa->update_arg(5, false);

    // The updated caches are what the program writes back to the buffers.
    epgraph::set_buffer_mutation(ep, "k_cache", k_updated);
    epgraph::set_buffer_mutation(ep, "v_cache", v_updated);

    epgraph::validate_graph_signature(ep);
    epgraph::verify(ep);
    print("with KV cache", ep);
    std::cout << "b_k_cache is a mutable buffer: " << std::boolalpha
              << epgraph::is_mutable_buffer(ep, k_cache)
              << "; written back from: " << epgraph::buffer_mutation_value(ep, "k_cache")->name()
              << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kv_cache: " << e.what() << "\n";
    return 1;
  }
}
