// infer_meta rules of the recurrent layers torch.export keeps whole in its default IR: lstm,
// gru, rnn_tanh and rnn_relu (their `.input` overloads: a padded 3-D input).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

// The output of a recurrent layer over `input` ([seq, batch, features], or [batch, seq,
// features] with batch_first) whose hidden state has `width` features per direction: torch's
// CPU kernel writes it as a contiguous [seq, batch, directions * width] and returns it
// transposed for batch_first (strides [D*W, batch*D*W, 1]).
inline TensorMeta recurrent_output(const Context& ctx, const TensorMeta& input, const SymInt& width,
                                   bool bidirectional, bool batch_first) {
  const SymInt features = ctx.out(ctx.ex(width) * sym::Expr(bidirectional ? 2 : 1));
  const SymInt& seq = input.sizes[batch_first ? 1 : 0];
  const SymInt& batch = input.sizes[batch_first ? 0 : 1];
  TensorMeta out = contiguous_meta(ctx, input.dtype, {seq, batch, features}, input.device);
  if (batch_first) {
    std::swap(out.sizes[0], out.sizes[1]);
    std::swap(out.strides[0], out.strides[1]);
  }
  return out;
}

// Checks what the rules read: a 3-D input and a 3-D hidden state of its batch.
inline void check_recurrent(const Context& ctx, const TensorMeta& input, const TensorMeta& hidden,
                            bool batch_first, const char* name) {
  if (input.sizes.size() != 3) {
    ctx.fail("input must have 3 dimensions, got " + std::to_string(input.sizes.size()));
  }
  if (hidden.sizes.size() != 3) {
    ctx.fail(std::string(name) + " must have 3 dimensions, got " +
             std::to_string(hidden.sizes.size()));
  }
  if (!ctx.equal(hidden.sizes[1], input.sizes[batch_first ? 0 : 1])) {
    ctx.fail(std::string(name) + " " + shape_str(hidden.sizes) +
             " does not have the batch size of the input " + shape_str(input.sizes));
  }
}

// lstm.input(input, hx=[h0, c0], params, has_biases, num_layers, dropout, train, bidirectional,
// batch_first) -> (output, hy, cy): output [seq, batch, D * h0's features] (see
// recurrent_output; h0's features are proj_size when the layer has one), hy and cy contiguous
// of h0's and c0's shapes.
inline NodeValue rule_lstm(const Context& ctx) {
  if (!ctx.has("batch_first")) ctx.cannot("epgraph has no rule for packed sequences (.data)");
  const TensorMeta& input = ctx.tensor("input");
  const std::vector<const TensorMeta*> hx = ctx.tensor_list("hx");
  if (hx.size() != 2)
    ctx.fail("hx must hold two tensors (h0, c0), got " + std::to_string(hx.size()));
  const bool batch_first = ctx.boolean("batch_first");
  check_recurrent(ctx, input, *hx[0], batch_first, "h0");
  check_recurrent(ctx, input, *hx[1], batch_first, "c0");
  TensorMeta out =
      recurrent_output(ctx, input, hx[0]->sizes[2], ctx.boolean("bidirectional"), batch_first);
  TensorMeta hy = contiguous_meta(ctx, input.dtype, hx[0]->sizes, input.device);
  TensorMeta cy = contiguous_meta(ctx, input.dtype, hx[1]->sizes, input.device);
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(std::move(hy)),
                                   NodeValue(std::move(cy))});
}

// gru.input / rnn_tanh.input / rnn_relu.input(input, hx, params, has_biases, num_layers,
// dropout, train, bidirectional, batch_first) -> (output, hy): as lstm without the cell state.
inline NodeValue rule_gru(const Context& ctx) {
  if (!ctx.has("batch_first")) ctx.cannot("epgraph has no rule for packed sequences (.data)");
  const TensorMeta& input = ctx.tensor("input");
  const TensorMeta& hx = ctx.tensor("hx");
  const bool batch_first = ctx.boolean("batch_first");
  check_recurrent(ctx, input, hx, batch_first, "hx");
  TensorMeta out =
      recurrent_output(ctx, input, hx.sizes[2], ctx.boolean("bidirectional"), batch_first);
  TensorMeta hy = contiguous_meta(ctx, input.dtype, hx.sizes, input.device);
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(std::move(hy))});
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
