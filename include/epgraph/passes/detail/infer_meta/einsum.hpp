// infer_meta rule of aten.einsum: the equation is parsed and the contraction replayed on
// metadata only, step by step as torch's CompositeImplicit kernel runs it (align every operand
// to "output labels, then contracted labels", contract pairs left to right or along `path`,
// each pair by a multiplication or a batched matmul whose result is a permuted view), so that
// the output's strides are the ones torch's FakeTensor reports, not merely contiguous ones.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cctype>
#include <deque>

#include "pooling.hpp"
#include "shapes.hpp"
#include "views.hpp"

namespace epgraph {
namespace detail {
namespace infer {

namespace einsum_detail {

constexpr int kLabels = 52;         // A-Z then a-z
constexpr int kEllipsis = kLabels;  // the "..." marker in an operand's labels

// A metadata-only tensor of the replay: sizes and strides (storage offset kept apart).
struct Tensor {
  Sizes sizes, strides;
};

inline int label_index(unsigned char c) { return std::isupper(c) != 0 ? c - 'A' : c - 'a' + 26; }

// Whether a size differs from 1, as torch's guard decides it (a symbolic size by its bounds,
// else by its hint).
inline bool not_one(const Context& ctx, const SymInt& s) {
  if (const auto* v = std::get_if<std::int64_t>(&s)) return *v != 1;
  if (const auto d = ctx.decide(sym::ne(ctx.ex(s), sym::Expr(1), ctx.ranges()))) return *d;
  ctx.cannot("einsum needs to know whether the size " + sym_str(s) +
             " is 1, and neither its bounds nor a hint decide it");
}

inline Tensor permuted(const Tensor& t, const std::vector<std::size_t>& perm) {
  Tensor out;
  for (std::size_t d : perm) {
    out.sizes.push_back(t.sizes[d]);
    out.strides.push_back(t.strides[d]);
  }
  return out;
}

// sum(dims, keepdim=True): a new contiguous tensor with the summed dimensions of size 1.
inline Tensor summed_keepdim(const Context& ctx, const Tensor& t,
                             const std::vector<std::size_t>& dims) {
  Tensor out{t.sizes, {}};
  for (std::size_t d : dims) out.sizes[d] = std::int64_t{1};
  out.strides = contiguous_sym_strides(ctx, out.sizes);
  return out;
}

inline TensorMeta as_meta(const Tensor& t, dtype type, const Device& device) {
  return make_meta(type, t.sizes, t.strides, device);
}

// torch's sumproduct_pair with keepdim: left * right summed over `sum_dims`.
inline Tensor sumproduct_pair(const Context& ctx, Tensor left, Tensor right,
                              const std::vector<std::size_t>& sum_dims, dtype type,
                              const Device& device) {
  if (sum_dims.empty()) {
    // at::mul under FakeTensor: with a symbolic size or stride its fast binary path (an operand
    // of the result's shape, all operands contiguous -> contiguous, all channels-last ->
    // channels-last), else torch's reference elementwise strides
    // (compute_elementwise_output_strides), not TensorIterator's
    const TensorMeta l = as_meta(left, type, device), r = as_meta(right, type, device);
    const Sizes shape = broadcast(ctx, {&left.sizes, &right.sizes});
    const bool symbolic = !all_concrete(left.sizes) || !all_concrete(left.strides) ||
                          !all_concrete(right.sizes) || !all_concrete(right.strides);
    if (symbolic) {
      const SymOperand ls{exprs_of(ctx, left.sizes), exprs_of(ctx, left.strides)};
      const SymOperand rs{exprs_of(ctx, right.sizes), exprs_of(ctx, right.strides)};
      auto full = [&](const Sizes& s) {
        for (std::size_t d = 0; d < s.size(); ++d) {
          if (!ctx.equal(s[d], shape[d])) return false;
        }
        return true;
      };
      if (full(left.sizes) || full(right.sizes)) {
        if (contiguous_sym(ctx, ls) && contiguous_sym(ctx, rs)) {
          return Tensor{shape, contiguous_sym_strides(ctx, shape)};
        }
        if (channels_last_sym(ctx, ls) && channels_last_sym(ctx, rs)) {
          return Tensor{shape, channels_last_sym_strides(ctx, shape)};
        }
      }
    }
    return Tensor{shape, elementwise_strides_sym(ctx, shape, {&l, &r})};
  }
  const std::size_t rank = left.sizes.size();
  std::vector<bool> summed(rank, false);
  for (std::size_t d : sum_dims) summed[d] = true;
  std::vector<std::size_t> lro, lo, ro;
  for (std::size_t i = 0; i < rank; ++i) {
    const bool sl = not_one(ctx, left.sizes[i]);
    const bool sr = not_one(ctx, right.sizes[i]);
    if (summed[i]) {
      if (sl && sr) {
        if (!ctx.equal(left.sizes[i], right.sizes[i])) {
          ctx.fail("einsum: non-broadcast dimensions must match (" + sym_str(left.sizes[i]) +
                   " and " + sym_str(right.sizes[i]) + ")");
        }
      } else if (sl) {
        left = summed_keepdim(ctx, left, {i});
      } else if (sr) {
        right = summed_keepdim(ctx, right, {i});
      }
    } else if (sl && sr) {
      if (!ctx.equal(left.sizes[i], right.sizes[i])) {
        ctx.fail("einsum: non-broadcast dimensions must match (" + sym_str(left.sizes[i]) +
                 " and " + sym_str(right.sizes[i]) + ")");
      }
      lro.push_back(i);
    } else if (sl) {
      lo.push_back(i);
    } else {
      ro.push_back(i);
    }
  }
  // torch 2.13 swaps the bmm's operands when every right-only dimension precedes every
  // left-only one, so that the result comes out in the output's order
  if (!lo.empty() && !ro.empty() &&
      *std::max_element(ro.begin(), ro.end()) < *std::min_element(lo.begin(), lo.end())) {
    std::swap(left, right);
    std::swap(lo, ro);
  }
  // bmm's contiguous [lro, lo, ro] result viewed as "lro, lo, 1 per summed dim, ro", then
  // permuted back to the operands' dimension order
  Sizes out_size;
  std::vector<std::size_t> order;
  auto place = [&](const std::vector<std::size_t>& dims, const Tensor* from) {
    for (std::size_t d : dims) {
      out_size.push_back(from != nullptr ? from->sizes[d] : SymInt{std::int64_t{1}});
      order.push_back(d);
    }
  };
  place(lro, &left);
  place(lo, &left);
  place(sum_dims, nullptr);
  place(ro, &right);
  const Tensor flat{out_size, contiguous_sym_strides(ctx, out_size)};
  std::vector<std::size_t> perm(rank);
  for (std::size_t i = 0; i < rank; ++i) perm[order[i]] = i;
  return permuted(flat, perm);
}

// The operands' labels (kEllipsis for "..."), each label's count over all operands, and how many
// dimensions "..." stands for (the most any operand gives it).
struct Labels {
  std::vector<std::vector<int>> of_operand;
  std::array<int, kLabels> count{};
  std::int64_t ell_dims = 0;
};

inline Labels parse_labels(const Context& ctx, const std::string& lhs,
                           const std::vector<const TensorMeta*>& operands) {
  const std::size_t num_ops = operands.size();
  Labels out;
  out.of_operand.resize(num_ops);
  std::size_t cur = 0;
  bool ell_seen = false;
  for (std::size_t i = 0; i < lhs.size(); ++i) {
    const auto c = static_cast<unsigned char>(lhs[i]);
    if (c == ' ') continue;
    if (c == '.') {
      if (ell_seen || i + 2 >= lhs.size() || lhs[i + 1] != '.' || lhs[i + 2] != '.') {
        ctx.fail("einsum(): invalid ellipsis for operand " + std::to_string(cur));
      }
      i += 2;
      out.of_operand[cur].push_back(kEllipsis);
      ell_seen = true;
    } else if (c == ',') {
      if (++cur >= num_ops) {
        ctx.fail("einsum(): fewer operands were provided than specified in the equation");
      }
      ell_seen = false;
    } else if (std::isalpha(c) != 0) {
      out.of_operand[cur].push_back(label_index(c));
    } else {
      ctx.fail("einsum(): invalid subscript given at index " + std::to_string(i) +
               " in the equation string, subscripts must be in [a-zA-Z]");
    }
  }
  if (cur + 1 != num_ops) {
    ctx.fail("einsum(): more operands were provided than specified in the equation");
  }
  for (std::size_t i = 0; i < num_ops; ++i) {
    const auto rank = static_cast<std::int64_t>(operands[i]->sizes.size());
    auto n = static_cast<std::int64_t>(out.of_operand[i].size());
    bool ell = false;
    for (int l : out.of_operand[i]) {
      if (l == kEllipsis) {
        ell = true;
        --n;
      } else {
        ++out.count[static_cast<std::size_t>(l)];
      }
    }
    if (ell) out.ell_dims = std::max(out.ell_dims, rank - n);
    if (ell ? n > rank : n != rank) {
      ctx.fail("einsum(): the number of subscripts in the equation (" + std::to_string(n) +
               (ell ? ") is more than" : ") does not match") + " the number of dimensions (" +
               std::to_string(rank) + ") for operand " + std::to_string(i) +
               (ell ? "" : " and no ellipsis was given"));
    }
  }
  return out;
}

// The aligned dimension order: each label's position, the output labels first (the right side
// of the equation, or without one every label seen once, in order), then the ellipsis (where the
// output puts it), then the contracted labels.
struct Layout {
  std::array<std::int64_t, kLabels> pos{};
  std::int64_t out_dims = 0;  // positions [0, out_dims) are the output's
  std::int64_t ell_at = 0;    // the first ellipsis position
  std::size_t total = 0;
};

inline Layout aligned_layout(const Context& ctx, const std::string& equation,
                             const Labels& labels) {
  Layout out;
  out.pos.fill(-1);
  std::int64_t npos = 0;
  bool ell_out = false;
  const auto arrow = equation.find("->");
  if (arrow == std::string::npos) {
    npos = labels.ell_dims;
    ell_out = true;
    for (std::size_t l = 0; l < kLabels; ++l) {
      if (labels.count[l] == 1) out.pos[l] = npos++;
    }
  } else {
    const std::string rhs = equation.substr(arrow + 2);
    for (std::size_t i = 0; i < rhs.size(); ++i) {
      const auto c = static_cast<unsigned char>(rhs[i]);
      if (c == ' ') continue;
      if (c == '.') {
        if (ell_out || i + 2 >= rhs.size() || rhs[i + 1] != '.' || rhs[i + 2] != '.') {
          ctx.fail("einsum(): invalid ellipsis in the output");
        }
        i += 2;
        out.ell_at = npos;
        npos += labels.ell_dims;
        ell_out = true;
        continue;
      }
      if (std::isalpha(c) == 0) {
        ctx.fail("einsum(): invalid subscript given at index " + std::to_string(arrow + 2 + i) +
                 " in the equation string, subscripts must be in [a-zA-Z]");
      }
      const auto l = static_cast<std::size_t>(label_index(c));
      if (labels.count[l] == 0 || out.pos[l] != -1) {
        ctx.fail(std::string("einsum(): output subscript ") + static_cast<char>(c) +
                 (out.pos[l] != -1 ? " appears more than once in the output"
                                   : " does not appear in the equation for any input operand"));
      }
      out.pos[l] = npos++;
    }
  }
  out.out_dims = npos;
  if (!ell_out) {
    out.ell_at = npos;
    npos += labels.ell_dims;
  }
  for (std::size_t l = 0; l < kLabels; ++l) {
    if (labels.count[l] > 0 && out.pos[l] == -1) out.pos[l] = npos++;
  }
  out.total = static_cast<std::size_t>(npos);
  return out;
}

// What the alignment has seen so far: each label's and each ellipsis dimension's size (1 until a
// size other than 1 comes), and how many operands have a size other than 1 at each position.
struct Seen {
  std::array<SymInt, kLabels> label_size;
  Sizes ell_size;
  std::vector<std::int64_t> dim_count;
};

// Operand `i` aligned to the layout: a repeated label becomes the diagonal (strides summed), a
// missing label an unsqueezed dimension of stride 1, and the dimensions are permuted into the
// aligned order. Refuses sizes that do not broadcast with what `seen` holds.
inline Tensor aligned_operand(const Context& ctx, std::size_t i, const TensorMeta& operand,
                              const std::vector<int>& labels, const Layout& layout,
                              std::int64_t ell_dims, Seen& seen) {
  Tensor op{operand.sizes, operand.strides};
  std::vector<std::int64_t> perm(layout.total, -1);
  std::size_t dim = 0;
  auto note_size = [&](SymInt& known, const SymInt& s, std::size_t at, const std::string& what) {
    if (!not_one(ctx, s)) return;
    if (!ctx.is_one(known) && !ctx.equal(known, s)) {
      ctx.fail("einsum(): " + what + " has size " + sym_str(s) + " for operand " +
               std::to_string(i) + " which does not broadcast with previously seen size " +
               sym_str(known));
    }
    known = s;
    ++seen.dim_count[at];
  };
  for (int l : labels) {
    if (l == kEllipsis) {
      const auto covered = static_cast<std::int64_t>(op.sizes.size()) -
                           (static_cast<std::int64_t>(labels.size()) - 1);
      for (std::int64_t j = ell_dims - covered; j < ell_dims; ++j) {
        const auto at = static_cast<std::size_t>(layout.ell_at + j);
        note_size(seen.ell_size[static_cast<std::size_t>(j)], op.sizes[dim], at,
                  "a dimension covered by ellipsis");
        perm[at] = static_cast<std::int64_t>(dim++);
      }
      continue;
    }
    const auto at = static_cast<std::size_t>(layout.pos[static_cast<std::size_t>(l)]);
    const char name = static_cast<char>(l < 26 ? 'A' + l : 'a' + l - 26);
    if (perm[at] == -1) {
      note_size(seen.label_size[static_cast<std::size_t>(l)], op.sizes[dim], at,
                std::string("subscript ") + name);
      perm[at] = static_cast<std::int64_t>(dim++);
      continue;
    }
    // a repeated label: the diagonal, moved to the first occurrence's place
    const auto prev = static_cast<std::size_t>(perm[at]);
    if (!ctx.equal(op.sizes[dim], op.sizes[prev])) {
      ctx.fail(std::string("einsum(): subscript ") + name + " is repeated for operand " +
               std::to_string(i) + " but the sizes don't match, " + sym_str(op.sizes[dim]) +
               " != " + sym_str(op.sizes[prev]));
    }
    op.strides[prev] = ctx.add(op.strides[prev], op.strides[dim], "the diagonal's stride");
    op.sizes.erase(op.sizes.begin() + static_cast<std::ptrdiff_t>(dim));
    op.strides.erase(op.strides.begin() + static_cast<std::ptrdiff_t>(dim));
  }
  for (std::int64_t& p : perm) {
    if (p == -1) {  // unsqueezed at the end: stride 1
      op.sizes.push_back(std::int64_t{1});
      op.strides.push_back(std::int64_t{1});
      p = static_cast<std::int64_t>(dim++);
    }
  }
  return permuted(op, std::vector<std::size_t>(perm.begin(), perm.end()));
}

// Contracts the aligned operands pair by pair, left to right or along `path` (torch's order):
// dimensions only one side has are summed first, the shared ones by sumproduct_pair. Returns the
// last tensor left.
inline Tensor contract_all(const Context& ctx, std::deque<Tensor> ops,
                           const std::optional<Ints>& path, const Layout& layout,
                           std::vector<std::int64_t>& dim_count, dtype type, const Device& device) {
  const bool integral = is_integral(type);
  std::size_t step = 0;
  while (ops.size() > 1) {
    std::size_t i = 0, j = 1;
    if (path) {
      std::int64_t a = (*path)[step++], b = (*path)[step++];
      if (b < a) std::swap(a, b);
      if (a == b || a < 0 || b >= static_cast<std::int64_t>(ops.size())) {
        ctx.fail("einsum(): invalid contraction (" + std::to_string(a) + ", " + std::to_string(b) +
                 (a == b ? ") cannot contract an operand with itself"
                         : ") operand index is out of bounds"));
      }
      i = static_cast<std::size_t>(a);
      j = static_cast<std::size_t>(b);
    }
    Tensor a = ops[i], b = ops[j];
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(j));
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
    std::vector<std::size_t> sum_dims, a_sum, b_sum;
    for (auto d = static_cast<std::size_t>(layout.out_dims); d < layout.total; ++d) {
      const bool na = not_one(ctx, a.sizes[d]);
      const bool nb = not_one(ctx, b.sizes[d]);
      if (na && nb) {
        if (--dim_count[d] == 1) {
          sum_dims.push_back(d);
          dim_count[d] = 0;
        }
      } else if (dim_count[d] == 1) {
        if (na) {
          a_sum.push_back(d);
          dim_count[d] = 0;
        } else if (nb) {
          b_sum.push_back(d);
          dim_count[d] = 0;
        }
      }
    }
    if (integral && (!a_sum.empty() || !b_sum.empty())) {
      // torch's sum turns an integral operand into int64 here, and its bmm then refuses the pair
      ctx.cannot("einsum of " + std::string(dtype_name(type)) +
                 " operands sums a dimension of one operand first, which epgraph does not infer");
    }
    if (!a_sum.empty()) a = summed_keepdim(ctx, a, a_sum);
    if (!b_sum.empty()) b = summed_keepdim(ctx, b, b_sum);
    Tensor r = sumproduct_pair(ctx, std::move(a), std::move(b), sum_dims, type, device);
    if (path) {
      ops.push_back(std::move(r));
    } else {
      ops.push_front(std::move(r));
    }
  }
  return std::move(ops.front());
}

}  // namespace einsum_detail

// aten.einsum(equation, tensors, *, path=None): the result's sizes and strides as torch 2.13's
// kernel produces them (a view of the operand for a lone permutation or diagonal, a permuted
// bmm result for a contraction, TensorIterator strides for a pure product).
inline NodeValue rule_einsum(const Context& ctx, std::string_view) {
  namespace ed = einsum_detail;
  const std::string& equation = ctx.string("equation");
  const std::vector<const TensorMeta*> operands = ctx.tensor_list("tensors");
  if (operands.empty()) ctx.fail("einsum(): must provide at least one operand");
  const std::size_t num_ops = operands.size();
  const std::optional<Ints> path = ctx.has("path") ? ctx.opt_int_list("path") : std::nullopt;
  if (path) {
    const std::size_t want = num_ops == 1 ? 1 : (num_ops - 1) * 2;
    if (path->size() != want) {
      ctx.fail("einsum(): expected contraction path given in path parameter to have size " +
               std::to_string(want) + " but got " + std::to_string(path->size()));
    }
  }
  const dtype type = operands.front()->dtype;
  for (const TensorMeta* t : operands) {
    if (t->dtype != type) {
      ctx.fail("einsum operands of different dtypes (" + std::string(dtype_name(type)) + " and " +
               std::string(dtype_name(t->dtype)) + ") are not supported");
    }
  }
  const ed::Labels labels =
      ed::parse_labels(ctx, equation.substr(0, equation.find("->")), operands);
  const ed::Layout layout = ed::aligned_layout(ctx, equation, labels);
  ed::Seen seen;
  seen.label_size.fill(std::int64_t{1});
  seen.ell_size.assign(static_cast<std::size_t>(labels.ell_dims), std::int64_t{1});
  seen.dim_count.assign(layout.total, 0);
  std::deque<ed::Tensor> ops;
  for (std::size_t i = 0; i < num_ops; ++i) {
    ops.push_back(ed::aligned_operand(ctx, i, *operands[i], labels.of_operand[i], layout,
                                      labels.ell_dims, seen));
  }
  const Device device = operands.front()->device;
  const ed::Tensor res =
      ed::contract_all(ctx, std::move(ops), path, layout, seen.dim_count, type, device);
  const auto nout = static_cast<std::size_t>(layout.out_dims);
  if (layout.total == nout) {
    TensorMeta out = make_meta(type, res.sizes, res.strides, device);
    // a lone operand without contraction: a view of it (its storage offset)
    if (num_ops == 1) out.storage_offset = operands.front()->storage_offset;
    return out;
  }
  const Sizes out_sizes(res.sizes.begin(), res.sizes.begin() + static_cast<std::ptrdiff_t>(nout));
  if (num_ops == 1) {
    // sum over the contracted dimensions: a new contiguous tensor
    return contiguous_meta(ctx, is_integral(type) ? dtype::int64 : type, out_sizes, device);
  }
  // a view without the (now size-1) contracted dimensions, with the strides FakeTensorMode's
  // reshape gives it
  const auto strides = reshape_view_strides(SymViewOps{ctx}, exprs_of(ctx, res.sizes),
                                            exprs_of(ctx, res.strides), exprs_of(ctx, out_sizes));
  if (!strides) ctx.cannot("the view that drops einsum's contracted dimensions");
  return make_meta(type, out_sizes, sizes_of(ctx, *strides), device);
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
