// pt2_passes: example graph passes in C++ whose results torch loads and runs.
// SPDX-License-Identifier: BSD-3-Clause
//
// pt2_passes: graph passes written in C++ on programs torch.export produced, one subcommand per
// pass family. Each reads IN (a .pt2 archive saved by torch.export.save), rewrites the program,
// checks it with epgraph::verify and writes OUT (a .pt2 archive torch.export.load reads).
//
//   pt2_passes kv-cache IN.pt2 -o OUT.pt2 [--max-seq 16] [--pos NAME]
//   pt2_passes fold-conv-bn IN.pt2 -o OUT.pt2
//   pt2_passes quantize-linear IN.pt2 -o OUT.pt2 [--scale 0.05] [--zero-point 3]
//   pt2_passes misc-ops IN.pt2 -o OUT.pt2
//   pt2_passes multi-output IN.pt2 -o OUT.pt2
//   pt2_passes custom-op IN.pt2 -o OUT.pt2 [--alpha 0.25]
//   pt2_passes relu-to-clamp IN.pt2 -o OUT.pt2     (replace_pattern)
//   pt2_passes fuse-mul-add IN.pt2 -o OUT.pt2      (replace_pattern + PassManager + DCE)
//   pt2_passes drop-output IN.pt2 -o OUT.pt2       (route_output + eliminate_dead_code)
//   pt2_passes copy-block IN.pt2 -o OUT.pt2        (node_copy)
//   pt2_passes graft IN.pt2 --other OTHER.pt2 -o OUT.pt2 [--nested-targets OLD=NEW,...]
//                                                   (graph_copy of OTHER onto IN's output)
//   pt2_passes inplace-to-functional IN.pt2 -o OUT.pt2   (replace_pattern on an in-place op)
//   pt2_passes unreached-pattern IN.pt2 -o OUT.pt2       (a pattern the matcher refuses)
//   pt2_passes two-outputs IN.pt2 -o OUT.pt2             (replace_pattern, two outputs)
//   pt2_passes recompute-meta IN.pt2 -o OUT.pt2          (propagate_meta: every value epgraph
//                                                         has a rule for, from the placeholders)
//
// Exit status: 0 on success, 1 when epgraph::verify rejects the edited program (nothing is
// written then), 2 on bad usage or input, or when a pass is refused (the exception is printed
// on stderr, nothing is written): a pattern the matcher refuses (unreached-pattern, always), a
// match whose replacement has no valid place (two-outputs). A pattern that matches nothing, or
// matches that are not contained, is no error: "N replaced" with N = 0, exit 0.
//
// Each pass below is written the way one writes it in Python on an ExportedProgram with torch.fx
// and ExecuTorch's backends/transforms/utils.py; the comments name the Python each step mirrors.
// Rules every pass follows:
// - nodes are found by their operator (FX `node.target == torch.ops.aten.x.y`), not by name;
// - every new call_function node gets `meta().val` (FX `node.meta["val"]`, the fake tensor torch
//   would have computed), which the archive writer needs to describe the node's outputs:
//   epgraph::set_inferred_meta(*node) computes it from the arguments' vals as torch's meta
//   functions do; only ops epgraph has no rule for get a hand-written val;
// - arguments are given as torch's Python call would give them (positional, then keyword-only),
//   and Graph::call_function binds them to the operator's schema, refusing a bad call at once.
// tests/interop/test_passes.py runs every pass on a module torch exported and checks in torch
// 2.13 that the result loads, passes torch's verifier and computes the right numbers.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <epgraph/archive/archive.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/ir/bind.hpp>
#include <epgraph/json/nested_graphs.hpp>
#include <epgraph/passes/infer_meta.hpp>
#include <epgraph/passes/pass_manager.hpp>
#include <epgraph/passes/program_passes.hpp>
#include <epgraph/passes/subgraph_rewriter.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/lookup.hpp>
#include <epgraph/program/verify.hpp>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace {

using epgraph::Argument;
using epgraph::ArgumentList;
using epgraph::Graph;
using epgraph::HostTensor;
using epgraph::InputKind;
using epgraph::Node;
using epgraph::NodeValue;
using epgraph::OpCode;
using epgraph::TensorMeta;
using Program = epgraph::ExportedProgram<HostTensor>;

// --- small helpers shared by the passes ---------------------------------------------------------

// FX: [n for n in graph.nodes if n.op == "call_function" and n.target == target]
std::vector<Node*> calls_to(Graph& graph, std::string_view target) {
  std::vector<Node*> out;
  for (Node& n : graph.nodes()) {
    if (n.op() == OpCode::call_function && n.target() == target) out.push_back(&n);
  }
  return out;
}

// FX: node.meta["val"], which must be one tensor.
const TensorMeta& tensor_val(const Node* node) {
  const TensorMeta* t = node->meta().val.tensor();
  if (t == nullptr) {
    throw epgraph::value_error("Node '" + std::string(node->name()) +
                               "' has no tensor meta['val'] (" + node->meta().val.describe() + ")");
  }
  return *t;
}

// The concrete sizes of a tensor value (the passes handle static shapes only).
std::vector<std::int64_t> sizes_of(const Node* node) {
  std::vector<std::int64_t> out;
  for (const epgraph::SymInt& s : tensor_val(node).sizes) {
    const auto* v = std::get_if<std::int64_t>(&s);
    if (v == nullptr) {
      throw epgraph::value_error("Node '" + std::string(node->name()) +
                                 "' has a symbolic size; this pass needs static shapes");
    }
    out.push_back(*v);
  }
  return out;
}

// FX: node = graph.call_function(target, args, kwargs); node.meta["val"] = <its fake result>,
// the val computed by epgraph::set_inferred_meta.
Node* call(Graph& graph, std::string_view target, ArgumentList args, epgraph::Kwargs kwargs = {}) {
  Node* node = graph.call_function(target, std::move(args), std::move(kwargs));
  epgraph::set_inferred_meta(*node);
  return node;
}

// A hand-written val, for ops epgraph::infer_meta has no rule for: a fresh contiguous CPU tensor
// (what torch's meta kernels give a non-view op), FakeTensor(dtype, sizes, contiguous strides).
TensorMeta contiguous_val(epgraph::dtype type, const std::vector<std::int64_t>& sizes) {
  TensorMeta m;
  m.dtype = type;
  for (std::int64_t s : sizes) m.sizes.emplace_back(s);
  for (std::int64_t s : epgraph::contiguous_strides(sizes)) m.strides.emplace_back(s);
  return m;
}

// The result node of the program's first USER_OUTPUT that is a tensor
// (FX: ep.graph.output_node().args[0][i] for the first user output spec).
Node* first_user_output(Program& ep) {
  const auto& results = *ep.graph().output_node()->args()[0].list();
  const auto& specs = ep.graph_signature().output_specs;
  for (std::size_t i = 0; i < specs.size() && i < results.size(); ++i) {
    Node* n = ep.graph().writable(results[i].node());
    if (specs[i].kind() == epgraph::OutputKind::USER_OUTPUT && n != nullptr &&
        n->meta().val.tensor() != nullptr) {
      return n;
    }
  }
  throw epgraph::value_error("The program has no tensor user output");
}

// Makes the program return `new_value` wherever it returned `old_value` (FX:
// `output_node.replace_input_with(old, new)`). The ExportedProgram renames the output spec.
void route_output(Program& ep, Node* old_value, Node* new_value) {
  ep.graph().output_node()->replace_input_with(old_value, new_value);
}

// A float32 weight's elements (HostTensor holds row-major little-endian bytes; like the archive
// format, this assumes a little-endian host).
std::vector<float> float_data(const HostTensor& t, std::string_view what) {
  if (t.scalar_type() != epgraph::dtype::float32) {
    throw epgraph::value_error(std::string(what) + " is " +
                               std::string(epgraph::dtype_name(t.scalar_type())) +
                               ", this pass folds float32 weights only");
  }
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  std::memcpy(out.data(), t.bytes().data(), t.nbytes());
  return out;
}

// A float32 HostTensor of shape `sizes` holding `values`.
HostTensor float_tensor(const std::vector<float>& values, std::vector<std::int64_t> sizes) {
  std::vector<std::byte> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return HostTensor::from_bytes(epgraph::dtype::float32, std::move(sizes), std::move(bytes));
}

// --- (a) kv-cache -------------------------------------------------------------------------------
//
// Adds a KV cache to an attention exported as `scaled_dot_product_attention(q, k, v)` whose
// program takes the write positions as a user input (`input_pos`, a 1-d int64 tensor):
//
//   k_cache = index_copy(b_k_cache, 2, input_pos, k)    # cache[:, :, input_pos] = k
//   v_cache = index_copy(b_v_cache, 2, input_pos, v)
//   y = scaled_dot_product_attention(q, k_cache, v_cache)
//
// and returns the updated caches as BUFFER_MUTATION outputs, so the runtime (ExecuTorch, or the
// module torch.export.load unlifts) writes them back into the buffers after each call. This is
// what ExecuTorch's examples/models/llama KV-cache source transform produces, done on the graph.
// The attention reads the whole cache (no mask), as the test's Python reference does.

// The user input holding the write positions: the one named `name` when given, else the only
// 1-d int64 user input (FX: [n for n in placeholders if n.name in user_inputs and
// n.meta["val"].dtype == torch.int64 and n.meta["val"].dim() == 1]).
Node* find_positions(Program& ep, const std::string& name) {
  std::vector<Node*> found;
  for (Node& n : ep.graph().placeholders()) {
    const epgraph::InputSpec* s = epgraph::input_spec_for(ep, &n);
    const TensorMeta* t = n.meta().val.tensor();
    if (s != nullptr && s->kind() == InputKind::USER_INPUT && t != nullptr &&
        t->dtype == epgraph::dtype::int64 && t->sizes.size() == 1 &&
        (name.empty() || n.name() == name)) {
      found.push_back(&n);
    }
  }
  if (found.size() != 1) {
    throw epgraph::value_error(
        name.empty() ? "kv-cache expects one 1-d int64 user input (the positions), found " +
                           std::to_string(found.size()) + "; name it with --pos"
                     : "kv-cache expects a 1-d int64 user input named '" + name + "'");
  }
  return found[0];
}

void kv_cache(Program& ep, std::int64_t max_seq, const std::string& pos_name) {
  Graph& graph = ep.graph();

  // 1. The attention and its k/v inputs, found by operator (FX: node.target ==
  //    torch.ops.aten.scaled_dot_product_attention.default; k, v = node.args[1:3]).
  const auto attentions = calls_to(graph, "torch.ops.aten.scaled_dot_product_attention.default");
  if (attentions.size() != 1) {
    throw epgraph::value_error("kv-cache expects one scaled_dot_product_attention node, found " +
                               std::to_string(attentions.size()));
  }
  Node* attention = attentions[0];
  Node* k = graph.writable(attention->args()[1].node());
  Node* v = graph.writable(attention->args()[2].node());
  Node* input_pos = find_positions(ep, pos_name);

  // 2. Zero-filled caches [B, H, max_seq, D] in k's dtype (ExecuTorch:
  //    create_mutable_buffer(ep, "b_k_cache", torch.zeros(B, H, MAX, D))).
  const std::vector<std::int64_t> kv = sizes_of(k);  // [B, H, T, D]
  if (kv.size() != 4 || sizes_of(v) != kv) {
    throw epgraph::value_error("kv-cache expects k and v of equal shape [B, H, T, D]");
  }
  const epgraph::dtype type = tensor_val(k).dtype;
  Node* k_cache = epgraph::create_mutable_buffer(
      ep, "b_k_cache", HostTensor::zeros(type, {kv[0], kv[1], max_seq, kv[3]}));
  Node* v_cache = epgraph::create_mutable_buffer(
      ep, "b_v_cache", HostTensor::zeros(type, {kv[0], kv[1], max_seq, kv[3]}));

  // 3. The cache updates, right before the attention (FX: `with graph.inserting_before(attn):
  //    graph.call_function(torch.ops.aten.index_copy.default, (k_cache, 2, input_pos, k))`).
  //    set_inferred_meta gives each its val (FX: node.meta["val"], here the cache's layout).
  Node* k_updated = nullptr;
  Node* v_updated = nullptr;
  {
    auto at = graph.inserting_before(attention);
    k_updated =
        graph.call_function("torch.ops.aten.index_copy.default", {k_cache, 2, input_pos, k});
    epgraph::set_inferred_meta(*k_updated);
    v_updated =
        graph.call_function("torch.ops.aten.index_copy.default", {v_cache, 2, input_pos, v});
    epgraph::set_inferred_meta(*v_updated);
  }

  // 4. The attention reads the updated caches (FX: attn.replace_input_with(k, k_updated)); its
  //    output keeps q's length, so its val does not change.
  attention->replace_input_with(k, k_updated);
  attention->replace_input_with(v, v_updated);

  // 5. The caches' mutation outputs now return the updated caches
  //    (the BUFFER_MUTATION output spec `index_copy -> k_cache`).
  epgraph::set_buffer_mutation(ep, "k_cache", k_updated);
  epgraph::set_buffer_mutation(ep, "v_cache", v_updated);
  std::cout << "kv-cache: " << k_updated->name() << " -> k_cache, " << v_updated->name()
            << " -> v_cache, read by " << attention->name() << "\n";
}

// --- (b) fold-conv-bn ---------------------------------------------------------------------------
//
// Folds an eval-mode batch norm into the convolution that feeds it:
//   w' = w * gamma / sqrt(var + eps)            (per output channel)
//   b' = (b - mean) * gamma / sqrt(var + eps) + beta
// torch.export (training IR, torch 2.13) emits `aten.conv2d.default` +
// `aten.batch_norm.default(..., training=False, ...)`; after run_decompositions() it is
// `aten.convolution.default` + `aten._native_batch_norm_legit_no_training.default` read through
// `operator.getitem(bn, 0)`. Both are handled. Mirrors torch.nn.utils.fusion.fuse_conv_bn_weights
// and ExecuTorch's backends/xnnpack/_passes/fuse_batch_norm_with_conv.py (which also makes the
// fused tensors new PARAMETER placeholders and deletes the old ones).

// The placeholder before which new PARAMETER inputs go so that torch's canonical input order
// (TOKEN < PARAMETER < BUFFER < CONSTANT_TENSOR < CUSTOM_OBJ < USER_INPUT) holds.
Node* after_last_parameter(Program& ep) {
  for (Node& n : ep.graph().placeholders()) {
    const epgraph::InputSpec* s = epgraph::input_spec_for(ep, &n);
    if (s == nullptr || (s->kind() != InputKind::TOKEN && s->kind() != InputKind::PARAMETER)) {
      return &n;
    }
  }
  throw epgraph::value_error("The program has no input after its parameters");
}

// Deletes a weight placeholder that nothing reads any more (ExecuTorch:
// delete_constant_placeholder(ep, node)); a tied weight still read elsewhere is kept.
void delete_if_unused(Program& ep, Node* node) {
  if (node != nullptr && node->users().empty() && epgraph::is_param_node(ep, node)) {
    epgraph::delete_constant_placeholder(ep, node);
  }
}

bool fold_one(Program& ep, Node* bn) {
  Graph& graph = ep.graph();
  // FX: conv = bn.args[0]; it must be a plain 2-d convolution read only by the batch norm.
  Node* conv = graph.writable(bn->args()[0].node());
  if (conv == nullptr || conv->op() != OpCode::call_function || conv->users().size() != 1 ||
      (conv->target() != "torch.ops.aten.conv2d.default" &&
       conv->target() != "torch.ops.aten.convolution.default")) {
    return false;
  }
  // Arguments by name, defaults filled in (FX: node.normalized_arguments(...) /
  // torch.fx.operator_schemas.normalize_function).
  const auto bn_args = epgraph::normalized_arguments(*bn);
  const auto conv_args = epgraph::normalized_arguments(*conv);
  if (bn->target() == "torch.ops.aten.batch_norm.default" &&
      (*bn_args)["training"] != Argument(false)) {
    return false;  // training mode: the statistics are the batch's, nothing to fold
  }
  if (conv->target() == "torch.ops.aten.convolution.default" &&
      (*conv_args)["transposed"] != Argument(false)) {
    return false;
  }
  Node* weight = graph.writable((*conv_args)["weight"].node());
  Node* bias = graph.writable((*conv_args)["bias"].node());   // None when the conv has no bias
  Node* gamma = graph.writable((*bn_args)["weight"].node());  // None for affine=False
  Node* beta = graph.writable((*bn_args)["bias"].node());
  Node* mean = graph.writable((*bn_args)["running_mean"].node());
  Node* var = graph.writable((*bn_args)["running_var"].node());
  const double eps = (*bn_args)["eps"].as<double>();

  // The data (ExecuTorch: get_param_tensor(ep, node)).
  auto data = [&](Node* n, const char* what) -> const HostTensor* {
    if (n == nullptr) return nullptr;
    const HostTensor* t = epgraph::get_param_tensor(ep, n);
    if (t == nullptr) {
      throw epgraph::value_error(std::string(what) + " '" + std::string(n->name()) +
                                 "' is not a weight of the program");
    }
    return t;
  };
  const HostTensor* w_t = data(weight, "conv weight");
  if (w_t == nullptr || mean == nullptr || var == nullptr) return false;
  // Everything is checked before the program changes: a decomposed batch norm may be folded only
  // when nothing reads its saved statistics (getitem 1 and 2).
  const bool decomposed = bn->target() != "torch.ops.aten.batch_norm.default";
  for (Node* user : decomposed ? bn->users() : epgraph::NodeSpan()) {
    if (user->target() != "operator.getitem" ||
        (user->args()[1] != Argument(0) && !user->users().empty())) {
      throw epgraph::value_error("Batch norm '" + std::string(bn->name()) + "' is read by '" +
                                 std::string(user->name()) + "': only its output can be folded");
    }
  }
  const std::vector<float> w = float_data(*w_t, "conv weight");
  const std::vector<float> m = float_data(*data(mean, "running_mean"), "running_mean");
  const std::vector<float> vr = float_data(*data(var, "running_var"), "running_var");
  const std::size_t channels = m.size();
  if (w_t->sizes().empty() || w_t->sizes()[0] != static_cast<std::int64_t>(channels)) {
    throw epgraph::value_error("Conv '" + std::string(conv->name()) + "' does not have " +
                               std::to_string(channels) + " output channels");
  }
  const std::vector<float> b =
      bias ? float_data(*data(bias, "conv bias"), "conv bias") : std::vector<float>(channels, 0.0f);
  const std::vector<float> g = gamma ? float_data(*data(gamma, "bn weight"), "bn weight")
                                     : std::vector<float>(channels, 1.0f);
  const std::vector<float> be =
      beta ? float_data(*data(beta, "bn bias"), "bn bias") : std::vector<float>(channels, 0.0f);

  // The fused weight and bias (torch.nn.utils.fusion.fuse_conv_bn_weights).
  const std::size_t per_channel = w.size() / channels;
  std::vector<float> fused_w(w.size());
  std::vector<float> fused_b(channels);
  for (std::size_t c = 0; c < channels; ++c) {
    const double scale = g[c] / std::sqrt(static_cast<double>(vr[c]) + eps);
    for (std::size_t i = 0; i < per_channel; ++i) {
      fused_w[c * per_channel + i] = static_cast<float>(w[c * per_channel + i] * scale);
    }
    fused_b[c] = static_cast<float>((b[c] - m[c]) * scale + be[c]);
  }

  // Named after the conv module (`p_conv1_fused_weight` for weight target `conv1.weight`; the
  // conv node's name when the weight has no target), like torch names parameter placeholders.
  std::string base(conv->name());
  if (const epgraph::InputSpec* s = epgraph::input_spec_for(ep, weight); s && s->target()) {
    base = *s->target();
    if (base.size() > 7 && base.compare(base.size() - 7, 7, ".weight") == 0)
      base.resize(base.size() - 7);
    for (char& c : base) c = (c == '.') ? '_' : c;
  }

  // New PARAMETER placeholders after the existing parameters (ExecuTorch:
  // `with graph.inserting_before(first_non_parameter): create_constant_placeholder(ep, graph,
  // name, InputKind.PARAMETER, data)`).
  Node* w_node = nullptr;
  Node* b_node = nullptr;
  {
    auto at = graph.inserting_before(after_last_parameter(ep));
    w_node = epgraph::create_constant_placeholder(ep, "p_" + base + "_fused_weight",
                                                  InputKind::PARAMETER,
                                                  float_tensor(fused_w, w_t->sizes()));
    b_node =
        epgraph::create_constant_placeholder(ep, "p_" + base + "_fused_bias", InputKind::PARAMETER,
                                             float_tensor(fused_b, {std::int64_t(channels)}));
  }

  // The conv reads them (FX: conv.args = (x, w_node, b_node, *conv.args[3:])); conv2d may omit
  // its bias argument, so the arguments are rebuilt positionally.
  std::vector<Argument> args = conv->args();
  if (args.size() < 3) args.resize(3);
  args[1] = Argument(w_node);
  args[2] = Argument(b_node);
  conv->set_args(std::move(args));

  // Users of the batch norm's result read the conv instead (FX: bn.replace_all_uses_with(conv),
  // or getitem(bn, 0).replace_all_uses_with(conv) for the decomposed op), then the batch norm
  // and its getitem nodes go (FX: graph.erase_node).
  if (!decomposed) {
    bn->replace_all_uses_with(conv);
  } else {
    for (Node* user : std::vector<Node*>(bn->users())) {  // getitem nodes (checked above)
      if (user->args()[1] == Argument(0)) user->replace_all_uses_with(conv);
      graph.erase_node(user);
    }
  }
  graph.erase_node(bn);

  // The weights nothing reads now (ExecuTorch: delete_constant_placeholder).
  for (Node* n : {weight, bias, gamma, beta, mean, var}) delete_if_unused(ep, n);
  std::cout << "fold-conv-bn: " << conv->name() << " now reads " << w_node->name() << ", "
            << b_node->name() << "\n";
  return true;
}

void fold_conv_bn(Program& ep) {
  std::vector<Node*> bns = calls_to(ep.graph(), "torch.ops.aten.batch_norm.default");
  for (Node* n :
       calls_to(ep.graph(), "torch.ops.aten._native_batch_norm_legit_no_training.default"))
    bns.push_back(n);
  int folded = 0;
  for (Node* bn : bns) {
    // The batch norm module's prefix (`bn.` from `bn.running_mean`), read before the running
    // statistics are deleted: its num_batches_tracked buffer, which only training updates, goes
    // too once the batch norm is folded.
    std::string prefix;
    if (const epgraph::InputSpec* s = epgraph::input_spec_for(ep, bn->args()[3].node())) {
      if (s->target()) {
        const std::string& t = *s->target();  // "bn.running_mean"
        prefix = t.substr(0, t.rfind('.') + 1);
      }
    }
    if (!fold_one(ep, bn)) continue;
    ++folded;
    if (const epgraph::InputSpec* s =
            epgraph::input_spec_by_target(ep, InputKind::BUFFER, prefix + "num_batches_tracked")) {
      delete_if_unused(ep, ep.graph().find_node(s->name()));
    }
  }
  if (folded == 0) throw epgraph::value_error("fold-conv-bn found no conv + eval batch norm");
}

// --- (c) quantize-linear ------------------------------------------------------------------------
//
// Inserts a quantize/dequantize pair (int8, per tensor, fixed scale and zero point) on the input
// of every aten.linear.default, as PT2E quantization (torch.ao.quantization.quantize_pt2e's
// convert_pt2e) represents a quantized activation:
//   q  = quantized_decomposed.quantize_per_tensor(x, scale, zp, -128, 127, torch.int8)
//   dq = quantized_decomposed.dequantize_per_tensor(q, scale, zp, -128, 127, torch.int8)
//   linear(dq, w, b)
// These operators are not aten's: register_quantized_decomposed_schemas() registers their torch
// 2.13 schemas (in Python: `import torch.ao.quantization.fx._decomposed`), and torch must import
// torch.ao.quantization.fx._decomposed before loading the result.
void quantize_linear(Program& ep, double scale, std::int64_t zero_point) {
  epgraph::register_quantized_decomposed_schemas();
  Graph& graph = ep.graph();
  const auto linears = calls_to(graph, "torch.ops.aten.linear.default");
  if (linears.empty()) throw epgraph::value_error("quantize-linear found no aten.linear.default");
  for (Node* linear : linears) {
    const Node* x = linear->args()[0].node();
    auto at = graph.inserting_before(linear);  // FX: with graph.inserting_before(linear):
    Node* q = call(graph, "torch.ops.quantized_decomposed.quantize_per_tensor.default",
                   {x, scale, zero_point, -128, 127, epgraph::dtype::int8});  // val: int8
    Node* dq = call(graph, "torch.ops.quantized_decomposed.dequantize_per_tensor.default",
                    {q, scale, zero_point, -128, 127, epgraph::dtype::int8});  // val: float32
    linear->replace_input_with(x, dq);  // FX: linear.replace_input_with(x, dq)
    std::cout << "quantize-linear: " << linear->name() << " reads " << dq->name() << "("
              << q->name() << "(" << x->name() << "))\n";
  }
}

// --- (d) misc-ops -------------------------------------------------------------------------------
//
// Routes the first tensor output y [B, N] through operators whose arguments exercise every
// argument form of the schema (optional scalars, int lists, keyword-only dtype/device, Tensor?
// and Tensor?[]):
//   c = clamp(y, None, 6.0)                               # Scalar? min=None
//   h = _to_copy(c, dtype=torch.float16)                  # keyword-only ScalarType?
//   f = _to_copy(h, dtype=torch.float32, device="cpu")    # keyword-only Device?
//   s = sum(f, [1], True)                                 # int[1]? dim, bool keepdim
//   lo = full([B, N], -0.5, dtype=torch.float32, device="cpu")
//   w = where(gt(f, 0.0), f, lo)
//   m = clamp(w, None, s)                                 # Tensor? min=None, Tensor? max
//   idx = arange(N - 1, -1, -1, dtype=torch.int64, device="cpu")
//   r = index(m, [None, idx])                             # Tensor?[] indices
// and returns r instead of y.
void misc_ops(Program& ep) {
  Graph& graph = ep.graph();
  Node* y = first_user_output(ep);
  const std::vector<std::int64_t> shape = sizes_of(y);  // [B, N]
  if (shape.size() != 2 || tensor_val(y).dtype != epgraph::dtype::float32) {
    throw epgraph::value_error("misc-ops expects a 2-d float32 first output");
  }
  const epgraph::Device cpu{"cpu", std::nullopt};
  const auto f32 = epgraph::dtype::float32;
  Node* r = nullptr;
  {
    auto at = graph.inserting_after(y);  // FX: with graph.inserting_after(y): each node follows
    Node* c = call(graph, "torch.ops.aten.clamp.default", {y, epgraph::none, 6.0});
    Node* h =
        call(graph, "torch.ops.aten._to_copy.default", {c}, {{"dtype", epgraph::dtype::float16}});
    Node* f =
        call(graph, "torch.ops.aten._to_copy.default", {h}, {{"dtype", f32}, {"device", cpu}});
    Node* s = call(graph, "torch.ops.aten.sum.dim_IntList", {f, ArgumentList{1}, true});
    Node* lo = call(graph, "torch.ops.aten.full.default", {ArgumentList{shape[0], shape[1]}, -0.5},
                    {{"dtype", f32}, {"device", cpu}, {"pin_memory", false}});
    Node* positive = call(graph, "torch.ops.aten.gt.Scalar", {f, 0.0});
    Node* w = call(graph, "torch.ops.aten.where.self", {positive, f, lo});
    Node* m = call(graph, "torch.ops.aten.clamp.Tensor", {w, epgraph::none, s});
    Node* idx = call(graph, "torch.ops.aten.arange.start_step", {shape[1] - 1, -1, -1},
                     {{"dtype", epgraph::dtype::int64}, {"device", cpu}});
    // infer_meta has no rule for aten.index: its val is written by hand (m[:, idx] is [B, N]).
    r = graph.call_function("torch.ops.aten.index.Tensor", {m, ArgumentList{epgraph::none, idx}});
    r->mutable_meta().val = contiguous_val(f32, shape);
  }
  route_output(ep, y, r);
  std::cout << "misc-ops: output " << y->name() << " -> " << r->name() << "\n";
}

// --- (e) multi-output ---------------------------------------------------------------------------
//
// Routes the first tensor output y [B, N] through multi-output operators, read as torch.export
// reads them: one operator.getitem node per used output, the operator's val a tuple
// (FX: node.meta["val"] = (fake_a, fake_b)), each getitem's val its element:
//   var, mean = var_mean(y, [1], correction=0, keepdim=True)  # (Tensor, Tensor)
//   n = (y - mean) * rsqrt(var + 1e-5)
//   values, indices = max(n, 1, True)       # (Tensor values, Tensor indices)
//   parts = split(n, ceil(N / 2), 1)        # Tensor[]: views of n
//   r = cat(reversed(parts), 1) - values + indices
void multi_output(Program& ep) {
  Graph& graph = ep.graph();
  Node* y = first_user_output(ep);
  const std::vector<std::int64_t> shape = sizes_of(y);
  if (shape.size() != 2 || tensor_val(y).dtype != epgraph::dtype::float32) {
    throw epgraph::value_error("multi-output expects a 2-d float32 first output");
  }
  const std::int64_t rows = shape[0], cols = shape[1];
  const TensorMeta column = contiguous_val(epgraph::dtype::float32, {rows, 1});  // [B, 1]

  // getitem(node, i): its val is node.meta["val"][i]
  auto getitem = [&](Node* node, std::int64_t i) {
    return call(graph, "operator.getitem", {node, i});
  };
  Node* r = nullptr;
  {
    auto at = graph.inserting_after(y);
    // infer_meta has no rule for var_mean, max.dim and split: their tuple vals are written by hand.
    Node* vm = graph.call_function("torch.ops.aten.var_mean.correction", {y, ArgumentList{1}},
                                   {{"correction", 0}, {"keepdim", true}});
    vm->mutable_meta().val = NodeValue::List{column, column};
    Node* var = getitem(vm, 0);
    Node* mean = getitem(vm, 1);
    Node* centered = call(graph, "torch.ops.aten.sub.Tensor", {y, mean});
    Node* var_eps = call(graph, "torch.ops.aten.add.Scalar", {var, 1e-5});
    Node* inv_std = call(graph, "torch.ops.aten.rsqrt.default", {var_eps});
    Node* n = call(graph, "torch.ops.aten.mul.Tensor", {centered, inv_std});

    Node* mx = graph.call_function("torch.ops.aten.max.dim", {n, 1, true});
    mx->mutable_meta().val =
        NodeValue::List{column, contiguous_val(epgraph::dtype::int64, {rows, 1})};
    Node* values = getitem(mx, 0);
    Node* indices = getitem(mx, 1);

    // split returns views of n: each part keeps n's strides, at offset `start` columns.
    const TensorMeta& n_val = tensor_val(n);
    const std::int64_t split_size = (cols + 1) / 2;
    Node* parts = graph.call_function("torch.ops.aten.split.Tensor", {n, split_size, 1});
    NodeValue::List part_vals;
    for (std::int64_t start = 0; start < cols; start += split_size) {
      TensorMeta part = n_val;
      part.sizes[1] = std::min(split_size, cols - start);
      part.storage_offset = start * std::get<std::int64_t>(n_val.strides[1]);
      part_vals.emplace_back(std::move(part));
    }
    parts->mutable_meta().val = part_vals;
    ArgumentList reversed;
    for (std::size_t i = part_vals.size(); i > 0; --i) {
      reversed.emplace_back(getitem(parts, static_cast<std::int64_t>(i - 1)));
    }
    Node* joined = call(graph, "torch.ops.aten.cat.default", {reversed, 1});
    Node* minus_max = call(graph, "torch.ops.aten.sub.Tensor", {joined, values});
    r = call(graph, "torch.ops.aten.add.Tensor", {minus_max, indices});  // float32 + int64: float32
  }
  route_output(ep, y, r);
  std::cout << "multi-output: output " << y->name() << " -> " << r->name() << "\n";
}

// --- (f) custom-op ------------------------------------------------------------------------------
//
// Calls a user operator: its schema is registered as torch.library would define it
// (`torch.library.custom_op("epgraph_test::scale_add", mutates_args=())` on
// `def scale_add(x, y, *, alpha: float = 1.0)`), then
//   r = epgraph_test.scale_add(y, sin(y), alpha=<alpha>)
// replaces the first tensor output y. torch must define the operator (with a fake/meta kernel)
// before loading the result.
void custom_op(Program& ep, double alpha) {
  epgraph::global_registry().register_schema(
      "epgraph_test::scale_add(Tensor x, Tensor y, *, float alpha=1.0) -> Tensor");
  Graph& graph = ep.graph();
  Node* y = first_user_output(ep);
  Node* r = nullptr;
  {
    auto at = graph.inserting_after(y);
    Node* s = call(graph, "torch.ops.aten.sin.default", {y});
    r = graph.call_function("torch.ops.epgraph_test.scale_add.default", {y, s}, {{"alpha", alpha}});
    // infer_meta has no rule for a user operator: the val is written by hand. Its fake kernel
    // returns torch.empty_like(x), which has x's shape, dtype and layout, as sin(x) does.
    r->mutable_meta().val = s->meta().val;
  }
  route_output(ep, y, r);
  std::cout << "custom-op: output " << y->name() << " -> " << r->name() << "\n";
}

// --- (g) FX's editing toolkit: replace_pattern, PassManager, eliminate_dead_code, node_copy ----

// A pattern or replacement graph built in C++ (FX: the graph symbolic_trace makes of a small
// function): placeholders for the inputs, then `body` adds the nodes and returns the results.
template <class Body>
std::unique_ptr<Graph> small_graph(std::initializer_list<const char*> inputs, Body body) {
  auto g = std::make_unique<Graph>();
  std::vector<Node*> in;
  for (const char* name : inputs) in.push_back(g->placeholder(name));
  g->output(body(*g, in));
  return g;
}

// FX: subgraph_rewriter.replace_pattern(gm, lambda x: torch.ops.aten.relu.default(x),
//                                           lambda x: torch.ops.aten.clamp_min.default(x, 0))
void relu_to_clamp(Program& ep) {
  const auto pattern = small_graph({"x"}, [](Graph& g, const std::vector<Node*>& in) {
    return ArgumentList{g.call_function("torch.ops.aten.relu.default", {in[0]})};
  });
  const auto replacement = small_graph({"x"}, [](Graph& g, const std::vector<Node*>& in) {
    return ArgumentList{g.call_function("torch.ops.aten.clamp_min.default", {in[0], 0})};
  });
  // The copies get meta["val"] from infer_meta (clamp_min has a rule).
  const auto replaced = epgraph::replace_pattern(ep.graph(), *pattern, *replacement);
  std::cout << "relu-to-clamp: " << replaced.size() << " relu replaced\n";
}

// FX: subgraph_rewriter.replace_pattern(gm, lambda x: aten.relu(aten.add_(x, 1)),
//                                           lambda x: aten.clamp_min(aten.add(x, 1), 0))
// on a training-IR graph, where in-place ops stay. The matcher refuses a match whose add_ writes
// a tensor that a node outside it reads afterwards, e.g. through a view made before the add_
// (the functional replacement would drop the write that node sees); torch.fx rewrites it anyway.
void inplace_to_functional(Program& ep) {
  const auto pattern = small_graph({"x"}, [](Graph& g, const std::vector<Node*>& in) {
    Node* a = g.call_function("torch.ops.aten.add_.Tensor", {in[0], 1});
    return ArgumentList{g.call_function("torch.ops.aten.relu.default", {a})};
  });
  const auto replacement = small_graph({"x"}, [](Graph& g, const std::vector<Node*>& in) {
    Node* a = g.call_function("torch.ops.aten.add.Tensor", {in[0], 1});
    return ArgumentList{g.call_function("torch.ops.aten.clamp_min.default", {a, 0})};
  });
  const auto replaced = epgraph::replace_pattern(ep.graph(), *pattern, *replacement);
  std::cout << "inplace-to-functional: " << replaced.size() << " replaced\n";
}

// FX: subgraph_rewriter.replace_pattern(gm, pattern, replacement) with
//   def pattern(x):     x.add_(1); return aten.relu(x)        # add_ is not returned
//   def replacement(x): return aten.clamp_min(aten.add(x, 1), 0)
// No returned node reaches the pattern's add_ (relu reads x, not add_'s result), so a match
// could only leave it out and would rewrite `relu(x)` wherever it is, add_ or not. epgraph's
// SubgraphMatcher refuses such a pattern up front, before it looks at the program: the pass
// fails (exit 2, the matcher's message naming the node on stderr) and writes nothing. torch.fx
// 2.13 matches `relu(x) * 2`, which has no add_, then raises KeyError mid-rewrite and leaves the
// graph computing `relu(x + 1) * 2` (pytorch/pytorch #104775). The fix is the pattern's: return
// add_'s result (`relu(x.add_(1))`, the inplace-to-functional pass).
void unreached_pattern(Program& ep) {
  const auto pattern = small_graph({"x"}, [](Graph& g, const std::vector<Node*>& in) {
    (void)g.call_function("torch.ops.aten.add_.Tensor", {in[0], 1});
    return ArgumentList{g.call_function("torch.ops.aten.relu.default", {in[0]})};
  });
  const auto replacement = small_graph({"x"}, [](Graph& g, const std::vector<Node*>& in) {
    Node* a = g.call_function("torch.ops.aten.add.Tensor", {in[0], 1});
    return ArgumentList{g.call_function("torch.ops.aten.clamp_min.default", {a, 0})};
  });
  const auto replaced = epgraph::replace_pattern(ep.graph(), *pattern, *replacement);
  std::cout << "unreached-pattern: " << replaced.size() << " replaced\n";
}

// FX: subgraph_rewriter.replace_pattern(gm, pattern, replacement) with a two-output pattern
//   def pattern(x, y):
//       return aten.relu(x), aten.sigmoid(y)
//   def replacement(x, y):     # sigmoid(y) = 1 / (1 + exp(-y))
//       return aten.clamp_min(x, 0), aten.reciprocal(aten.add(aten.exp(aten.neg(y)), 1))
// The replacement goes before the first user of either matched output, as in torch. Where y is
// computed after that user (`a = relu(x); u = neg(a); z = cos(y); s = sigmoid(z)`), no place is
// after the replacement's inputs and before those uses: epgraph refuses (exit 2, the message
// names the late input, nothing written) where torch.fx 2.13 puts the copies before `neg`,
// ahead of the `cos` they read, and returns a graph that fails lint (pytorch/pytorch #148751).
// Where y comes first, the copies go after y's producer and before `neg`.
void two_outputs(Program& ep) {
  const auto pattern = small_graph({"x", "y"}, [](Graph& g, const std::vector<Node*>& in) {
    Node* r = g.call_function("torch.ops.aten.relu.default", {in[0]});
    Node* s = g.call_function("torch.ops.aten.sigmoid.default", {in[1]});
    return ArgumentList{r, s};
  });
  const auto replacement = small_graph({"x", "y"}, [](Graph& g, const std::vector<Node*>& in) {
    Node* r = g.call_function("torch.ops.aten.clamp_min.default", {in[0], 0});
    Node* n = g.call_function("torch.ops.aten.neg.default", {in[1]});
    Node* e = g.call_function("torch.ops.aten.exp.default", {n});
    Node* d = g.call_function("torch.ops.aten.add.Tensor", {e, 1});
    return ArgumentList{r, g.call_function("torch.ops.aten.reciprocal.default", {d})};
  });
  const auto replaced = epgraph::replace_pattern(ep.graph(), *pattern, *replacement);
  std::cout << "two-outputs: " << replaced.size() << " replaced\n";
}

// A PassManager (torch.fx.passes.infra.pass_manager.PassManager) running two passes until
// nothing changes, verifying the program after each: fuse `mul(a, b) + c` into
// `addcmul(c, a, b)` (replace_pattern), then dead-code elimination.
void fuse_mul_add(Program& ep) {
  const auto pattern = small_graph({"a", "b", "c"}, [](Graph& g, const std::vector<Node*>& in) {
    Node* m = g.call_function("torch.ops.aten.mul.Tensor", {in[0], in[1]});
    return ArgumentList{g.call_function("torch.ops.aten.add.Tensor", {m, in[2]})};
  });
  const auto replacement = small_graph({"a", "b", "c"}, [](Graph& g, const std::vector<Node*>& in) {
    return ArgumentList{g.call_function("torch.ops.aten.addcmul.default", {in[2], in[0], in[1]})};
  });
  std::size_t fused = 0;
  epgraph::PassManager<HostTensor> pm(/*steps=*/4, /*run_checks_after_each_pass=*/true);
  pm.add_pass("fuse_mul_add", [&](Program& p) {
    const std::size_t n = epgraph::replace_pattern(p.graph(), *pattern, *replacement).size();
    fused += n;
    return n > 0;
  });
  pm.add_pass("eliminate_dead_code", [](Program& p) { return epgraph::eliminate_dead_code(p); });
  const bool changed = pm(ep);
  std::cout << "fuse-mul-add: " << fused << " fused, changed " << changed << "\n";
}

// Makes the program's last user output return what its first returns, then removes what only
// the old value needed (FX: output_node.replace_input_with(old, new);
// ep.graph.eliminate_dead_code()). The output count stays: the program's pytree out_spec
// (module_call_graph) is passed through, not rewritten.
void drop_output(Program& ep) {
  const auto& results = *ep.graph().output_node()->args()[0].list();
  const auto& specs = ep.graph_signature().output_specs;
  if (specs.empty() || specs.back().kind() != epgraph::OutputKind::USER_OUTPUT ||
      results.back().node() == nullptr) {
    throw epgraph::value_error("The program's last output is not a user output node");
  }
  Node* old_value = ep.graph().writable(results.back().node());
  const std::string dropped(old_value->name());
  route_output(ep, old_value, first_user_output(ep));
  const std::size_t before = ep.graph().size();
  const bool changed = epgraph::eliminate_dead_code(ep);
  std::cout << "drop-output: dropped " << dropped << ", " << before - ep.graph().size()
            << " dead nodes removed (changed " << changed << ")\n";
}

// Runs the block between the user input and the first user output a second time on its own
// result: y = block(block(x)). FX: for n in block: env[n] = graph.node_copy(n, lambda a: env.get(a,
// a)), with env[x] = y; then output_node.replace_input_with(y, env[y]).
void copy_block(Program& ep) {
  Graph& graph = ep.graph();
  Node* x = nullptr;
  for (const epgraph::InputSpec& s : ep.graph_signature().input_specs) {
    if (s.kind() == InputKind::USER_INPUT) {
      x = graph.find_node(s.name());
      break;
    }
  }
  Node* y = first_user_output(ep);
  if (x == nullptr) throw epgraph::value_error("The program has no user input");
  std::vector<Node*> block;  // the compute nodes from x's first user to y, in order
  for (Node* n = x; n != y;) {
    n = n->next();
    if (n->op() == OpCode::call_function) block.push_back(n);
  }
  std::unordered_map<const Node*, Node*> env = {{x, y}};
  Node* last = y;
  auto at = graph.inserting_after(y);
  for (Node* n : block) {
    last = graph.node_copy(*n, [&](const Node* a) {
      const auto it = env.find(a);
      return Argument(it == env.end() ? a : it->second);
    });
    env[n] = last;
  }
  route_output(ep, y, last);
  std::cout << "copy-block: " << block.size() << " nodes copied, output " << y->name() << " -> "
            << last->name() << "\n";
}

// "true_graph_0=then_graph,false_graph_0=else_graph" -> {{"true_graph_0", "then_graph"}, ...}.
epgraph::NestedGraphTargets parse_nested_targets(const std::string& text) {
  epgraph::NestedGraphTargets out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw epgraph::value_error("Bad --nested-targets item '" + item + "' (want OLD=NEW)");
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
    start = end + 1;
  }
  return out;
}

// Runs the program `other` (one user input, no weights) on this program's first user output:
// out = other(ep(x)). FX: with graph.inserting_before(output): r = graph.graph_copy(other.graph,
// {other's x: y}); output_node.replace_input_with(y, r[0]). Nested graphs the two programs both
// name (the branches `true_graph_0`/`false_graph_0` of two torch.cond calls) are kept apart:
// graph_copy gives the copies fresh targets (`true_graph_1`), or the `nested_targets` given;
// torch.fx's graph_copy keeps the names, so the copied cond would call this program's branches.
void graft(Program& ep, const std::string& other_path, const epgraph::NestedGraphTargets& names) {
  const Program other = epgraph::archive::load_archive<HostTensor>(other_path);
  const auto& specs = other.graph_signature().input_specs;
  if (specs.size() != 1 || specs[0].kind() != InputKind::USER_INPUT) {
    throw epgraph::value_error("graft: '" + other_path +
                               "' must have exactly one input, a user input");
  }
  Graph& graph = ep.graph();
  Node* y = first_user_output(ep);
  std::unordered_map<const Node*, Node*> remap = {{other.graph().find_node(specs[0].name()), y}};
  Argument copied;
  {
    auto at = graph.inserting_before(graph.output_node());
    copied = graph.graph_copy(other.graph(), remap, names);
  }
  const ArgumentList* results = copied.list();
  Node* last =
      results != nullptr && !results->empty() ? graph.writable(results->front().node()) : nullptr;
  if (last == nullptr) {
    throw epgraph::value_error("graft: '" + other_path + "' does not return a tensor first");
  }
  route_output(ep, y, last);
  std::cout << "graft: " << remap.size() - 1 << " nodes copied, output " << y->name() << " -> "
            << last->name() << "; nested graphs:";
  for (const Node& n : graph.nodes()) {
    if (n.op() == OpCode::get_attr) std::cout << " " << n.name() << "=" << n.target();
  }
  std::cout << "\n";
}

// --- command line -------------------------------------------------------------------------------

int usage() {
  std::cerr
      << "usage:\n"
         "  pt2_passes kv-cache IN.pt2 -o OUT.pt2 [--max-seq N] [--pos NAME]\n"
         "  pt2_passes fold-conv-bn IN.pt2 -o OUT.pt2\n"
         "  pt2_passes quantize-linear IN.pt2 -o OUT.pt2 [--scale S] [--zero-point Z]\n"
         "  pt2_passes misc-ops IN.pt2 -o OUT.pt2\n"
         "  pt2_passes multi-output IN.pt2 -o OUT.pt2\n"
         "  pt2_passes custom-op IN.pt2 -o OUT.pt2 [--alpha A]\n"
         "  pt2_passes relu-to-clamp|fuse-mul-add|drop-output|copy-block|recompute-meta IN.pt2 -o "
         "OUT.pt2\n"
         "  pt2_passes graft IN.pt2 --other OTHER.pt2 -o OUT.pt2 [--nested-targets "
         "OLD=NEW,...]\n"
         "  pt2_passes inplace-to-functional|unreached-pattern|two-outputs IN.pt2 -o "
         "OUT.pt2\n"
         "exit: 0 done (\"N replaced\", N may be 0), 1 verify rejected the result, 2 bad "
         "usage or input, or the pass refused (a pattern error, a replacement with no valid "
         "place: the error on stderr); nothing is written unless 0\n";
  return 2;
}

// recompute-meta: recomputes the value of every node epgraph can compute from the placeholders'
// values with propagate_meta (torch's FakeTensorProp), nested graphs included; the nodes it
// cannot compute (no rule for their op, a cond inside a cond's branch) keep torch's value.
// Prints "recompute-meta: C of N values recomputed (U kept: epgraph cannot compute them)".
void recompute_meta(Program& ep) {
  // nested graphs (cond's branches, map's body) are recomputed too: made Graphs of the program
  // from their records, and saved from them
  (void)epgraph::json::materialize_nested_graphs(ep);
  const epgraph::MetaReport check = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  if (check.uncomputed.empty()) {
    // every value recomputed in place: a data-dependent node keeps the unbacked symbol torch
    // named, or the replacement torch's stored value shows (`s77 + 1` for an item that an
    // asserted equality solved)
    const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
    std::cout << "recompute-meta: " << r.computed << " of " << r.nodes
              << " values recomputed (0 kept)\n";
    return;
  }
  // the nodes without a rule keep their value; the others are forgotten and filled in
  std::unordered_set<std::string> kept;
  for (const epgraph::MetaDifference& d : check.uncomputed) kept.insert(d.node);
  auto forget = [&](Graph& g, const std::string& scope) {
    for (Node& n : g.nodes()) {
      if (n.op() != OpCode::call_function) continue;
      if (kept.count(scope + std::string(n.name())) != 0) continue;
      n.mutable_meta().val.reset();
    }
  };
  forget(ep.graph(), "");
  // a nested graph called by a kept node (a cond whose branches disagree) keeps its values too:
  // the fill below does not enter it
  std::unordered_set<std::string> called_by_kept;
  for (const Node& n : ep.graph().nodes()) {
    if (n.op() != OpCode::call_function || kept.count(std::string(n.name())) == 0) continue;
    for (const Argument& a : n.args()) {
      if (a.node() != nullptr && a.node()->op() == OpCode::get_attr) {
        called_by_kept.emplace(a.node()->target());
      }
    }
  }
  for (const auto& [target, nested] : ep.nested_graphs()) {
    if (called_by_kept.count(target) == 0) forget(*nested, target + ".");
  }
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset);
  std::cout << "recompute-meta: " << r.computed << " of " << r.nodes << " values recomputed ("
            << kept.size() << " kept: epgraph cannot compute them)\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string pass = argv[1];
  const std::string in = argv[2];
  std::string out;
  std::map<std::string, std::string> options;  // "--max-seq" -> "16"
  for (int i = 3; i < argc; i += 2) {
    if (i + 1 >= argc) return usage();
    if (std::string(argv[i]) == "-o") {
      out = argv[i + 1];
    } else {
      options[argv[i]] = argv[i + 1];
    }
  }
  if (out.empty()) return usage();
  const std::map<std::string, std::vector<std::string>> known = {
      {"kv-cache", {"--max-seq", "--pos"}},
      {"fold-conv-bn", {}},
      {"quantize-linear", {"--scale", "--zero-point"}},
      {"misc-ops", {}},
      {"multi-output", {}},
      {"custom-op", {"--alpha"}},
      {"relu-to-clamp", {}},
      {"fuse-mul-add", {}},
      {"drop-output", {}},
      {"copy-block", {}},
      {"graft", {"--other", "--nested-targets"}},
      {"inplace-to-functional", {}},
      {"unreached-pattern", {}},
      {"two-outputs", {}},
      {"recompute-meta", {}}};
  const auto it = known.find(pass);
  if (it == known.end()) return usage();
  for (const auto& kv : options) {
    if (std::find(it->second.begin(), it->second.end(), kv.first) == it->second.end()) {
      return usage();
    }
  }
  auto option = [&](const std::string& name, const std::string& fallback) {
    const auto o = options.find(name);
    return o == options.end() ? fallback : o->second;
  };
  // Whole-text numbers: "16x" is refused (std::stoll alone would read 16).
  auto to_int = [](const std::string& text) {
    std::size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size()) throw epgraph::value_error("Bad integer '" + text + "'");
    return static_cast<std::int64_t>(v);
  };
  auto to_double = [](const std::string& text) {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size()) throw epgraph::value_error("Bad number '" + text + "'");
    return v;
  };
  try {
    Program ep = epgraph::archive::load_archive<HostTensor>(in);
    if (pass == "kv-cache") {
      kv_cache(ep, to_int(option("--max-seq", "16")), option("--pos", ""));
    } else if (pass == "fold-conv-bn") {
      fold_conv_bn(ep);
    } else if (pass == "quantize-linear") {
      quantize_linear(ep, to_double(option("--scale", "0.05")),
                      to_int(option("--zero-point", "3")));
    } else if (pass == "misc-ops") {
      misc_ops(ep);
    } else if (pass == "multi-output") {
      multi_output(ep);
    } else if (pass == "custom-op") {
      custom_op(ep, to_double(option("--alpha", "0.25")));
    } else if (pass == "relu-to-clamp") {
      relu_to_clamp(ep);
    } else if (pass == "fuse-mul-add") {
      fuse_mul_add(ep);
    } else if (pass == "drop-output") {
      drop_output(ep);
    } else if (pass == "inplace-to-functional") {
      inplace_to_functional(ep);
    } else if (pass == "unreached-pattern") {
      unreached_pattern(ep);
    } else if (pass == "two-outputs") {
      two_outputs(ep);
    } else if (pass == "copy-block") {
      copy_block(ep);
    } else if (pass == "recompute-meta") {
      recompute_meta(ep);
    } else {
      if (option("--other", "").empty()) return usage();
      graft(ep, option("--other", ""), parse_nested_targets(option("--nested-targets", "")));
    }
    try {
      epgraph::verify(ep);
    } catch (const epgraph::verification_error& e) {
      std::cout << e.what() << "\n";
      return 1;
    }
    epgraph::archive::save_archive(ep, out);
    std::cout << pass << ": " << in << " -> " << out << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
