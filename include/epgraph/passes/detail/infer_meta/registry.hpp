// infer_meta's rule table: every operator bound to its rule function, and the helpers
// infer_meta's entry point uses (the target's parts, the error prefix, builtin schemas).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "backward.hpp"
#include "data_dependent.hpp"
#include "einsum.hpp"
#include "elementwise.hpp"
#include "factories.hpp"
#include "indexing.hpp"
#include "linalg.hpp"
#include "norm.hpp"
#include "pooling.hpp"
#include "recurrent.hpp"
#include "reductions.hpp"
#include "shape_ops.hpp"
#include "spectral.hpp"
#include "sym_ops.hpp"
#include "views.hpp"

namespace epgraph {
namespace detail {
namespace infer {

// The quantized_decomposed schema of `qualified_name` when it is not in the global registry.
inline const FunctionSchema* builtin_schema(std::string_view qualified_name) {
  static const std::vector<FunctionSchema> schemas = [] {
    std::vector<FunctionSchema> v;
    for (const char* text : quantized_decomposed_schema_texts) v.push_back(parse_schema(text));
    return v;
  }();
  for (const FunctionSchema& s : schemas) {
    if (s.qualified_name() == qualified_name) return &s;
  }
  return nullptr;
}

// Runs `f`, giving an error of the symbolic arithmetic (an overflow, a division by zero) the
// node's prefix.
template <class F>
NodeValue guarded(const Context& ctx, F f) {
  try {
    return f();
  } catch (const value_error& e) {
    const std::string what = e.what();
    if (::epgraph::detail::starts_with(what, "Cannot infer the metadata of node")) throw;
    ctx.fail(what);
  }
}

// `torch.ops.<ns>.<op>.<overload>` -> ("<ns>.<op>", "<overload>"), or empty.
inline std::pair<std::string, std::string> split_target(std::string_view target) {
  constexpr std::string_view prefix = "torch.ops.";
  if (target.substr(0, prefix.size()) != prefix) return {};
  target.remove_prefix(prefix.size());
  const auto dot1 = target.find('.');
  if (dot1 == std::string_view::npos) return {};
  const auto dot2 = target.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) return {};
  return {std::string(target.substr(0, dot2)), std::string(target.substr(dot2 + 1))};
}

// One function per rule, `NodeValue (const Context&, std::string_view op)` (`op` is the
// operator's name without namespace or overload, "reshape"), and one table from the operator to
// it: adding an op is one line in a register_* function below, a new rule its function and that
// line.

using RuleFn = NodeValue (*)(const Context&, std::string_view);

template <Rule R>
NodeValue elementwise_rule(const Context& ctx, std::string_view) {
  return rule_elementwise(ctx, R);
}

template <Rule R>
NodeValue reduction_rule(const Context& ctx, std::string_view) {
  return rule_reduction(ctx, R);
}

template <Rule R>
NodeValue softmax_rule(const Context& ctx, std::string_view) {
  return rule_softmax(ctx, R);
}

template <Rule R>
NodeValue factory_rule(const Context& ctx, std::string_view) {
  return rule_factory(ctx, R);
}

// Adapts a rule function that does not need the op's name.
template <auto F>
NodeValue plain_rule(const Context& ctx, std::string_view) {
  return F(ctx);
}

using RuleTable = std::unordered_map<std::string, RuleFn>;

// Binds each `aten.<name>` of `names` to `fn`.
inline void add_aten(RuleTable& t, std::initializer_list<const char*> names, RuleFn fn) {
  for (const char* name : names) t.emplace(std::string("aten.") + name, fn);
}

inline void register_pointwise_rules(RuleTable& t) {
  add_aten(t, {"neg",         "relu",       "gelu",  "silu",           "sign",         "floor",
               "ceil",        "round",      "trunc", "frac",           "hardtanh",     "hardswish",
               "hardsigmoid", "leaky_relu", "elu",   "relu6",          "mish",         "softplus",
               "bitwise_not", "positive",   "sgn",   "_conj_physical", "conj_physical"},
           &elementwise_rule<Rule::unary_same>);
  add_aten(t, {"clone"}, &rule_clone);
  add_aten(t, {"exp",    "exp2",       "expm1",  "log",     "log1p", "log2",  "log10", "sqrt",
               "rsqrt",  "sigmoid",    "tanh",   "sin",     "cos",   "tan",   "asin",  "acos",
               "atan",   "sinh",       "cosh",   "asinh",   "acosh", "atanh", "erf",   "erfc",
               "erfinv", "reciprocal", "lgamma", "digamma", "sinc",  "logit"},
           &elementwise_rule<Rule::unary_float>);
  add_aten(t, {"abs"}, &elementwise_rule<Rule::unary_abs>);
  add_aten(t, {"angle"}, &elementwise_rule<Rule::unary_angle>);
  add_aten(t, {"logical_not", "isnan", "isinf", "isfinite", "isneginf", "isposinf"},
           &elementwise_rule<Rule::unary_bool>);
  add_aten(t,
           {"add", "sub", "rsub", "mul", "maximum", "minimum", "fmax", "fmin", "remainder", "fmod",
            "floor_divide", "bitwise_and", "bitwise_or", "bitwise_xor"},
           &elementwise_rule<Rule::binary>);
  add_aten(t, {"__and__", "__or__", "__xor__"}, &elementwise_rule<Rule::binary>);
  add_aten(t, {"square"}, &rule_square);
  add_aten(t, {"atan2"}, &elementwise_rule<Rule::binary_float>);
  add_aten(t, {"pow"}, &elementwise_rule<Rule::binary_pow>);
  add_aten(t, {"div"}, &elementwise_rule<Rule::div>);
  add_aten(t, {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"},
           &elementwise_rule<Rule::compare>);
  add_aten(t, {"where"}, &rule_where);
  add_aten(t, {"addcmul", "addcdiv"}, &elementwise_rule<Rule::pointwise3>);
  add_aten(t, {"clamp", "clamp_min", "clamp_max", "clip"}, &elementwise_rule<Rule::clamp>);
}

inline void register_view_rules(RuleTable& t) {
  add_aten(t, {"view", "_unsafe_view", "reshape"}, &rule_view_op);
  add_aten(t, {"permute"}, &plain_rule<rule_permute>);
  add_aten(t, {"transpose"}, &rule_transpose);
  add_aten(t, {"t"}, &rule_t);
  add_aten(t, {"unsqueeze"}, &plain_rule<rule_unsqueeze>);
  add_aten(t, {"squeeze"}, &plain_rule<rule_squeeze>);
  add_aten(t, {"expand"}, &plain_rule<rule_expand>);
  add_aten(t, {"slice"}, &plain_rule<rule_slice>);
  add_aten(t, {"narrow"}, &plain_rule<rule_narrow>);
  add_aten(t, {"select"}, &plain_rule<rule_select>);
  add_aten(t, {"flatten"}, &plain_rule<rule_flatten>);
  add_aten(t, {"view_as_real"}, &plain_rule<rule_view_as_real>);
  add_aten(t, {"real", "imag"}, &rule_real_imag);
  add_aten(t, {"_conj"}, &rule_conj_view);
  add_aten(t, {"view_as_complex"}, &plain_rule<rule_view_as_complex>);
  add_aten(t, {"unfold"}, &plain_rule<rule_unfold>);
  add_aten(t, {"contiguous"}, &plain_rule<rule_contiguous>);
  add_aten(t, {"alias", "detach", "lift_fresh"}, &rule_alias);
  add_aten(t, {"cat"}, &plain_rule<rule_cat>);
  add_aten(t, {"stack"}, &plain_rule<rule_stack>);
  add_aten(t, {"index_copy", "index_put", "lift_fresh_copy"}, &rule_self_like);
  add_aten(t, {"copy", "slice_scatter", "select_scatter"}, &rule_self_strided);
  add_aten(t, {"index_select"}, &plain_rule<rule_index_select>);
  add_aten(t, {"embedding"}, &plain_rule<rule_embedding>);
  add_aten(t, {"_embedding_bag", "_embedding_bag_forward_only"}, &rule_embedding_bag);
  add_aten(t, {"split", "chunk"}, &rule_split);
  add_aten(t, {"split_with_sizes"}, &rule_split_with_sizes);
  add_aten(t, {"unbind"}, &rule_unbind);
  add_aten(t, {"unflatten"}, &rule_unflatten);
  add_aten(t, {"expand_as"}, &rule_expand_as);
  add_aten(t, {"type_as"}, &rule_type_as);
  add_aten(t, {"repeat"}, &rule_repeat);
  add_aten(t, {"repeat_interleave"}, &rule_repeat_interleave);
  add_aten(t, {"flip", "fill"}, &rule_self_like);
  add_aten(t, {"as_strided"}, &rule_as_strided);
  add_aten(t, {"diagonal"}, &rule_diagonal);
  add_aten(t,
           {"roll", "tril", "triu", "scatter", "scatter_add", "scatter_reduce", "index_add",
            "masked_fill"},
           &rule_self_contiguous);
}

inline void register_compute_rules(RuleTable& t) {
  add_aten(t, {"convolution_backward"}, &rule_convolution_backward);
  add_aten(t, {"native_layer_norm_backward"}, &rule_layer_norm_backward);
  add_aten(t, {"native_group_norm_backward"}, &rule_group_norm_backward);
  add_aten(t, {"embedding_dense_backward"}, &rule_embedding_dense_backward);
  add_aten(t, {"avg_pool2d_backward", "max_pool2d_with_indices_backward"}, &rule_pool2d_backward);
  add_aten(t, {"_adaptive_avg_pool2d_backward"}, &rule_adaptive_avg_pool2d_backward);
  add_aten(t, {"_fft_r2c", "_fft_c2r", "_fft_c2c"}, &rule_fft);
  add_aten(t,
           {"fft_fft", "fft_ifft", "fft_rfft", "fft_irfft", "fft_hfft", "fft_ihfft", "fft_fft2",
            "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft2", "fft_rfftn", "fft_irfft2",
            "fft_irfftn", "fft_hfft2", "fft_hfftn", "fft_ihfft2", "fft_ihfftn"},
           &rule_fft_function);
  add_aten(t, {"fft_fftshift", "fft_ifftshift"}, &rule_fftshift);
  add_aten(t, {"fft_fftfreq", "fft_rfftfreq"}, &rule_fftfreq);
  add_aten(t, {"stft"}, &rule_stft);
  add_aten(t, {"istft"}, &rule_istft);
  add_aten(t, {"linear"}, &plain_rule<rule_linear>);
  add_aten(t, {"mm", "bmm"}, &rule_mm_op);
  add_aten(t, {"matmul"}, &plain_rule<rule_matmul>);
  add_aten(t, {"addmm", "baddbmm"}, &rule_addmm_op);
  add_aten(t,
           {"convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
            "conv_transpose3d"},
           &plain_rule<rule_convolution>);
  add_aten(t, {"_native_batch_norm_legit_no_training"}, &plain_rule<rule_batch_norm>);
  add_aten(t, {"native_layer_norm"}, &plain_rule<rule_layer_norm>);
  add_aten(t, {"layer_norm"}, &rule_layer_norm_op);
  add_aten(t, {"batch_norm"}, &rule_batch_norm_op);
  add_aten(t, {"scaled_dot_product_attention"}, &rule_sdpa);
  add_aten(t, {"dropout"}, &rule_dropout);
  add_aten(t, {"cumsum", "cumprod"}, &rule_cumulative);
  add_aten(t, {"cummax", "cummin"}, &rule_cummax);
  add_aten(t, {"logsumexp"}, &rule_logsumexp);
  add_aten(t, {"masked_scatter"}, &rule_masked_scatter);
  add_aten(t, {"gather"}, &rule_gather);
  add_aten(t, {"adaptive_avg_pool2d", "_adaptive_avg_pool2d"}, &rule_adaptive_avg_pool2d);
  add_aten(t, {"max_pool2d", "max_pool2d_with_indices"}, &rule_max_pool2d);
  add_aten(t, {"avg_pool2d"}, &rule_avg_pool2d);
  add_aten(t, {"avg_pool3d"}, &rule_avg_pool3d);
  add_aten(t, {"max_pool3d", "max_pool3d_with_indices"}, &rule_max_pool3d);
  add_aten(t, {"max_pool1d"}, &rule_max_pool1d);
  add_aten(t, {"_adaptive_avg_pool3d"}, &rule_adaptive_avg_pool3d);
  add_aten(t, {"pixel_shuffle", "pixel_unshuffle"}, &rule_pixel_shuffle);
  add_aten(t,
           {"native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_functional"},
           &rule_batch_norm_stats);
  add_aten(t, {"native_group_norm", "group_norm"}, &rule_group_norm);
  add_aten(t, {"instance_norm"}, &rule_instance_norm);
  add_aten(t, {"einsum"}, &rule_einsum);
  add_aten(t, {"native_dropout"}, &rule_native_dropout);
  add_aten(t, {"var", "std", "var_mean", "std_mean"}, &rule_variance);
  add_aten(t, {"prod"}, &rule_prod);
  add_aten(t, {"argmax", "argmin"}, &rule_argmax);
  add_aten(t, {"linalg_vector_norm"}, &rule_vector_norm);
  add_aten(t, {"topk"}, &rule_topk);
  add_aten(t, {"sort"}, &rule_sort);
  add_aten(t, {"index"}, &rule_index);
  add_aten(t,
           {"constant_pad_nd", "pad", "reflection_pad1d", "reflection_pad2d", "reflection_pad3d",
            "replication_pad1d", "replication_pad2d", "replication_pad3d"},
           &rule_pad);
  add_aten(t, {"max", "min"}, &rule_max);
  add_aten(t,
           {"upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d",
            "_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d",
            "upsample_linear1d", "upsample_bilinear2d", "upsample_bicubic2d",
            "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa", "upsample_trilinear3d"},
           &rule_upsample);
  add_aten(t, {"grid_sampler", "grid_sampler_2d", "grid_sampler_3d"}, &rule_grid_sampler);
  add_aten(t, {"im2col"}, &rule_im2col);
  add_aten(t, {"col2im"}, &rule_col2im);
  add_aten(t, {"cdist", "_cdist_forward"}, &rule_cdist);
  add_aten(t, {"pdist", "_pdist_forward"}, &rule_pdist);
  add_aten(t, {"sum"}, &reduction_rule<Rule::sum>);
  add_aten(t, {"mean"}, &reduction_rule<Rule::mean>);
  add_aten(t, {"amax", "amin"}, &reduction_rule<Rule::amax>);
  add_aten(t, {"any", "all"}, &rule_any);
  add_aten(t, {"softmax", "log_softmax"}, &softmax_rule<Rule::softmax>);
  add_aten(t, {"_softmax", "_log_softmax"}, &softmax_rule<Rule::private_softmax>);
}

inline void register_factory_and_sym_rules(RuleTable& t) {
  add_aten(t, {"_to_copy", "to"}, &rule_to_op);
  add_aten(t, {"full"}, &factory_rule<Rule::full>);
  add_aten(t, {"zeros", "ones", "empty", "rand", "randn"}, &factory_rule<Rule::zeros>);
  add_aten(t, {"randperm"}, &rule_randperm);
  add_aten(t, {"scalar_tensor"}, &factory_rule<Rule::scalar_tensor>);
  add_aten(t,
           {"hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"},
           &rule_window);
  add_aten(t, {"zeros_like", "ones_like", "empty_like", "full_like"}, &plain_rule<rule_like>);
  add_aten(t, {"new_ones", "new_zeros", "new_empty", "new_full"}, &rule_new_factory);
  add_aten(t, {"empty_strided"}, &rule_empty_strided);
  add_aten(t, {"arange"}, &plain_rule<rule_arange>);
  t.emplace("quantized_decomposed.quantize_per_tensor", &rule_quantize_op);
  t.emplace("quantized_decomposed.dequantize_per_tensor", &rule_quantize_op);
  t.emplace("quantized_decomposed.quantize_per_channel", &rule_quantize_per_channel_op);
  t.emplace("quantized_decomposed.dequantize_per_channel", &rule_quantize_per_channel_op);
  add_aten(t, {"sym_size", "sym_stride"}, &rule_sym_size);
  add_aten(t, {"sym_numel"}, &rule_sym_numel);
  add_aten(t, {"lstm"}, &plain_rule<rule_lstm>);
  add_aten(t, {"gru", "rnn_tanh", "rnn_relu"}, &plain_rule<rule_gru>);
  add_aten(t, {"nonzero", "argwhere"}, &plain_rule<rule_nonzero>);
  add_aten(t, {"nonzero_numpy"}, &plain_rule<rule_nonzero_tuple>);
  add_aten(t, {"item", "_local_scalar_dense"}, &plain_rule<rule_item>);
  add_aten(t, {"sym_storage_offset"}, &rule_sym_storage_offset);
  add_aten(t,
           {"_assert_tensor_metadata", "sym_constrain_range", "sym_constrain_range_for_size",
            "_assert_async"},
           &rule_none);
  add_aten(t, {"_assert_scalar"}, &rule_assert_scalar);
}

// The rule of each operator, keyed "namespace.name" ("aten.add"), every overload alike.
inline const RuleTable& rule_table() {
  static const RuleTable table = [] {
    RuleTable t;
    register_pointwise_rules(t);
    register_view_rules(t);
    register_compute_rules(t);
    register_factory_and_sym_rules(t);
    return t;
  }();
  return table;
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
