// epgraph test support: valid exported programs of random shape and random sequences of edits on
// them, checking after every call that a successful edit leaves a program that verify() and
// Graph::lint() accept, and that a failing one leaves the program exactly as it was (snapshot).
// Used by the property tests (choices from a seeded generator) and by the fuzz_edits fuzz target
// (choices from the fuzzer's bytes). Nothing here depends on Catch: problems come back as text.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <epgraph/passes/program_passes.hpp>
#include <epgraph/passes/subgraph_rewriter.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/verify.hpp>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "program_builders.hpp"
#include "snapshot.hpp"

namespace epgraph_test {

/// The unsigned number in environment variable `name` (e.g. EPGRAPH_PROPERTY_SEQUENCES), or
/// `fallback` when it is unset or empty.
inline std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 10);
}

/// A source of choices: a seeded splitmix64 generator (reproducible on every platform: no
/// std::uniform_int_distribution), or the bytes of a fuzz input (0 once they run out).
class Chooser {
 public:
  explicit Chooser(std::uint64_t seed) : state_(seed) {}
  Chooser(const std::uint8_t* data, std::size_t size) : data_(data), size_(size), bytes_(true) {}

  /// A number in [0, n) (0 when n <= 1).
  std::size_t below(std::size_t n) {
    if (n <= 1) return 0;
    if (!bytes_) return static_cast<std::size_t>(next() % n);
    if (pos_ >= size_) {
      exhausted_ = true;
      return 0;
    }
    std::uint64_t v = data_[pos_++];
    if (n > 256 && pos_ < size_) v = (v << 8) | data_[pos_++];
    return static_cast<std::size_t>(v % n);
  }
  /// True with probability `percent`/100.
  bool chance(unsigned percent) { return below(100) < percent; }
  /// True once a byte-driven chooser has run out of bytes.
  [[nodiscard]] bool exhausted() const noexcept { return exhausted_; }

 private:
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  std::uint64_t state_ = 0;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t pos_ = 0;
  bool bytes_ = false;
  bool exhausted_ = false;
};

/// A small float32 tensor of random shape (rank 0..2, sizes 0..3).
inline Tensor random_tensor(Chooser& c) {
  std::vector<std::int64_t> sizes(c.below(3));
  for (auto& s : sizes) s = static_cast<std::int64_t>(c.below(4));
  return tensor(std::move(sizes), static_cast<double>(c.below(5)));
}

/// A valid program of random shape, in torch's canonical input order: effect tokens,
/// parameters, persistent buffers, non-persistent buffers, lifted tensor constants, custom
/// objects, user inputs; add/mul/call_torchbind compute nodes; outputs = output tokens, buffer and
/// user-input mutations (in input order), user outputs. Every piece may be absent.
inline Program random_program(Chooser& c) {
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::ExportGraphSignature sig;
  epgraph::ordered_dict<Tensor> sd;
  epgraph::ordered_dict<Program::constant_type> constants;
  std::vector<epgraph::Node*> values;  // tensor-valued nodes
  std::vector<epgraph::Node*> tokens;
  std::vector<epgraph::Node*> objects;
  std::vector<std::pair<epgraph::Node*, std::string>> buffers;  // placeholder, target
  std::vector<epgraph::Node*> user_inputs;

  const std::size_t n_tokens = c.below(3) == 0 ? 1 : 0;
  const std::size_t n_params = c.below(4), n_pbuf = c.below(4), n_npbuf = c.below(3);
  const std::size_t n_const = c.below(3), n_obj = c.below(3) == 0 ? 1 : 0, n_user = c.below(4);
  for (std::size_t i = 0; i < n_tokens; ++i) {
    epgraph::Node* t = g->placeholder("token");
    sig.input_specs.push_back(input_token(std::string(t->name())));
    tokens.push_back(t);
  }
  for (std::size_t i = 0; i < n_params; ++i) {
    const std::string target = "layer" + std::to_string(i) + ".weight";
    Tensor data = random_tensor(c);
    epgraph::Node* n = add_placeholder(*g, "p_layer" + std::to_string(i) + "_weight", data);
    sig.input_specs.push_back(parameter(std::string(n->name()), target));
    sd.insert(target, std::move(data));
    values.push_back(n);
  }
  for (std::size_t i = 0; i < n_pbuf; ++i) {
    const std::string target = "cache" + std::to_string(i);
    Tensor data = random_tensor(c);
    epgraph::Node* n = add_placeholder(*g, "b_" + target, data);
    sig.input_specs.push_back(buffer(std::string(n->name()), target));
    sd.insert(target, std::move(data));
    values.push_back(n);
    buffers.emplace_back(n, target);
  }
  for (std::size_t i = 0; i < n_npbuf; ++i) {
    const std::string target = "npb" + std::to_string(i);
    Tensor data = random_tensor(c);
    epgraph::Node* n = add_placeholder(*g, "b_" + target, data);
    sig.input_specs.push_back(buffer(std::string(n->name()), target, false));
    constants.insert(target, std::move(data));
    values.push_back(n);
    buffers.emplace_back(n, target);
  }
  for (std::size_t i = 0; i < n_const; ++i) {
    const std::string target = "lifted_tensor_" + std::to_string(i);
    Tensor data = random_tensor(c);
    epgraph::Node* n = add_placeholder(*g, "c_" + target, data);
    sig.input_specs.push_back(constant_tensor(std::string(n->name()), target));
    constants.insert(target, std::move(data));
    values.push_back(n);
  }
  for (std::size_t i = 0; i < n_obj; ++i) {
    const std::string target = "obj" + std::to_string(i);
    epgraph::Node* n = g->placeholder(target);
    sig.input_specs.push_back({epgraph::InputKind::CUSTOM_OBJ,
                               epgraph::CustomObjArgument{std::string(n->name()), custom_class},
                               target});
    constants.insert(target, epgraph::ScriptObject{custom_class, {std::byte{7}}});
    objects.push_back(n);
  }
  static constexpr std::array<const char*, 4> user_names = {"x", "y", "z", "add"};
  for (std::size_t i = 0; i < n_user; ++i) {
    epgraph::Node* n = add_placeholder(*g, user_names[i], random_tensor(c));
    sig.input_specs.push_back(user_input(std::string(n->name())));
    values.push_back(n);
    user_inputs.push_back(n);
  }

  auto pick = [&](const std::vector<epgraph::Node*>& pool) { return pool[c.below(pool.size())]; };
  auto compute = [&](const char* target, epgraph::Argument a, epgraph::Argument b,
                     const epgraph::Node* like) {
    epgraph::Node* n = g->call_function(target, {std::move(a), std::move(b)});
    if (like != nullptr) n->mutable_meta().val = like->meta().val;
    values.push_back(n);
    return n;
  };
  const std::size_t n_compute = values.empty() ? 0 : c.below(6);
  for (std::size_t i = 0; i < n_compute; ++i) {
    epgraph::Node* a = pick(values);
    if (c.chance(30)) {
      compute("torch.ops.aten.add.Tensor", a, 1, a);
    } else {
      compute(c.chance(50) ? "torch.ops.aten.add.Tensor" : "torch.ops.aten.mul.Tensor", a,
              pick(values), a);
    }
  }
  for (epgraph::Node* obj : objects) {
    if (!values.empty() && c.chance(70)) {
      epgraph::Node* v = pick(values);
      epgraph::Node* n =
          g->call_function("torch.ops.higher_order.call_torchbind", {obj, "add_tensor", v});
      n->mutable_meta().val = v->meta().val;
      values.push_back(n);
    }
  }

  epgraph::ArgumentList results;
  for (epgraph::Node* t : tokens) {
    epgraph::Argument arg = values.empty() ? epgraph::Argument() : epgraph::Argument(pick(values));
    epgraph::Node* effects = g->call_function("torch.ops.higher_order.with_effects",
                                              {t, "torch.ops.mylib.record.default", arg});
    epgraph::Node* out = g->call_function("operator.getitem", {effects, 0});
    // As torch records it (the token placeholder keeps no metadata: the saver supplies it).
    epgraph::TensorMeta token_meta;
    token_meta.sizes = {epgraph::SymInt{std::int64_t{0}}};
    token_meta.strides = {epgraph::SymInt{std::int64_t{1}}};
    out->mutable_meta().val = token_meta;
    results.emplace_back(out);
    sig.output_specs.push_back(output_token(std::string(out->name())));
  }
  for (const auto& [b, target] : buffers) {
    if (!c.chance(35)) continue;
    epgraph::Node* v = c.chance(30) ? b : compute("torch.ops.aten.add.Tensor", b, 1, b);
    results.emplace_back(v);
    sig.output_specs.push_back(buffer_mutation(std::string(v->name()), target));
  }
  for (epgraph::Node* u : user_inputs) {
    if (!c.chance(20)) continue;
    epgraph::Node* v = compute("torch.ops.aten.add.Tensor", u, 1, u);
    results.emplace_back(v);
    sig.output_specs.push_back(user_input_mutation(std::string(v->name()), std::string(u->name())));
  }
  const std::size_t n_outputs = values.empty() ? 0 : c.below(4);
  for (std::size_t i = 0; i < n_outputs; ++i) {
    epgraph::Node* v = pick(values);
    results.emplace_back(v);
    sig.output_specs.push_back(user_output(std::string(v->name())));
  }
  g->output(std::move(results));
  return Program(std::move(g), std::move(sig), std::move(sd), std::move(constants));
}

/// What one run of random edits did.
struct EditStats {
  std::size_t calls = 0;
  std::size_t succeeded = 0;
  std::size_t failed = 0;
  std::size_t round_trips = 0;
};

/// A save/load round trip check: returns "" when fine, else what went wrong.
using RoundTrip = std::function<std::string(const Program&)>;

namespace detail {

inline std::vector<epgraph::Node*> all_nodes(epgraph::Graph& g) {
  std::vector<epgraph::Node*> out;
  for (epgraph::Node* n = g.first_node(); n != nullptr; n = n->next()) out.push_back(n);
  return out;
}

inline std::size_t position(const epgraph::Graph& g, const epgraph::Node* node) {
  std::size_t i = 0;
  for (const epgraph::Node* n = g.first_node(); n != nullptr; n = n->next(), ++i) {
    if (n == node) return i;
  }
  return i;
}

// A graph of one call like `x` (same target and literals) whose node inputs are placeholders (one
// per distinct input), returning it; with `extra_input`, one more unused-by-the-call placeholder
// is returned too (so the pattern and the replacement disagree). Schema checks are off: the
// pattern's inputs have no values.
inline std::unique_ptr<epgraph::Graph> one_node_pattern(const epgraph::Node& x, bool extra_input) {
  auto g = std::make_unique<epgraph::Graph>();
  g->set_schema_checks(false);
  std::vector<std::pair<const epgraph::Node*, epgraph::Node*>> inputs;
  std::function<epgraph::Argument(const epgraph::Argument&)> map =
      [&](const epgraph::Argument& a) -> epgraph::Argument {
    if (const epgraph::Node* n = a.node()) {
      for (const auto& kv : inputs) {
        if (kv.first == n) return epgraph::Argument(kv.second);
      }
      inputs.emplace_back(n, g->placeholder("in" + std::to_string(inputs.size())));
      return epgraph::Argument(inputs.back().second);
    }
    if (const epgraph::ArgumentList* l = a.list()) {
      epgraph::ArgumentList out;
      for (const epgraph::Argument& e : *l) out.push_back(map(e));
      return epgraph::Argument(std::move(out));
    }
    return a;
  };
  epgraph::ArgumentList args;
  for (const epgraph::Argument& a : x.args()) args.push_back(map(a));
  epgraph::Kwargs kwargs;
  for (const auto& kv : x.kwargs()) kwargs.emplace_back(kv.first, map(kv.second));
  epgraph::Node* call = g->call_function(x.target(), std::move(args), std::move(kwargs));
  if (extra_input) g->placeholder("extra");
  g->output({call});
  return g;
}

inline bool is_expected_error(const std::exception& e) {
  return dynamic_cast<const epgraph::value_error*>(&e) != nullptr ||
         dynamic_cast<const epgraph::runtime_error*>(&e) != nullptr;
}

}  // namespace detail

/// Applies up to `steps` random edits (fewer when a byte chooser runs out) to `ep`, checking
/// each. Returns "" when every check held, otherwise a description of the first problem (and
/// stops). `round_trip`, when set, is one of the operations.
inline std::string run_random_edits(Program& ep, Chooser& c, std::size_t steps,
                                    const RoundTrip& round_trip = {}, EditStats* stats = nullptr) {
  using epgraph::InputKind;
  using epgraph::Node;
  EditStats local;
  EditStats& st = stats ? *stats : local;
  static const std::unique_ptr<epgraph::Graph> foreign_graph = [] {
    auto g = std::make_unique<epgraph::Graph>();
    g->placeholder("x");
    return g;
  }();
  Node* const foreign = foreign_graph->first_node();
  static constexpr std::array<const char*, 32> name_pool = {"",
                                                            " ",
                                                            "\t",
                                                            "b_",
                                                            "b-",
                                                            "x",
                                                            "x_1",
                                                            "b_cache0",
                                                            "cache0",
                                                            "b_k",
                                                            "k",
                                                            "0_cache",
                                                            "b_0",
                                                            "p_layer0_weight",
                                                            "layer0.weight",
                                                            "lifted_tensor_0",
                                                            "c_lifted_tensor_0",
                                                            "obj0",
                                                            "token",
                                                            "output",
                                                            "add",
                                                            "add_1",
                                                            "b_npb0",
                                                            "npb0",
                                                            "new",
                                                            "new_1",
                                                            "b_new",
                                                            "a.b",
                                                            "_",
                                                            "b__",
                                                            "b_x",
                                                            "getitem"};
  static constexpr std::array<InputKind, 6> kinds = {
      InputKind::PARAMETER,  InputKind::BUFFER, InputKind::CONSTANT_TENSOR,
      InputKind::USER_INPUT, InputKind::TOKEN,  InputKind::CUSTOM_OBJ};

  for (std::size_t step = 0; step < steps && !c.exhausted(); ++step) {
    const std::vector<Node*> nodes = detail::all_nodes(ep.graph());
    auto pick_node = [&]() -> Node* {
      const std::size_t r = c.below(100);
      if (r < 3) return nullptr;
      if (r < 6) return foreign;
      return nodes[c.below(nodes.size())];
    };
    auto pick_name = [&]() -> std::string {
      const std::size_t r = c.below(10);
      if (r < 3) return std::string(nodes[c.below(nodes.size())]->name());
      if (r < 4) return "n" + std::to_string(c.below(20));
      return name_pool[c.below(name_pool.size())];
    };
    const std::size_t op = c.below(round_trip ? 15 : 14);
    std::string what;               // the call, for messages
    bool must_fail = false;         // a deliberately invalid call
    std::function<void()> call;     // the edit itself
    bool order_is_callers = false;  // create_constant_placeholder: the caller picks the position
    int guard_mode = 0;  // 0: none, 1: inserting_before(anchor), 2: inserting_after(anchor)
    Node* guard_anchor = nullptr;

    switch (op) {
      case 0: {  // create_mutable_buffer
        const std::string name = pick_name();
        Tensor data = random_tensor(c);
        what = "create_mutable_buffer('" + name + "')";
        must_fail = epgraph::detail::is_blank(name) ||
                    epgraph::find_requested_placeholder(ep.graph(), name) != nullptr;
        call = [&ep, name, data] {
          Node* n = epgraph::create_mutable_buffer(ep, name, data);
          if (!epgraph::is_mutable_buffer(ep, n)) throw std::logic_error("not a mutable buffer");
        };
        break;
      }
      case 1: {  // create_constant_placeholder at a random insertion point
        const std::string name = pick_name();
        const InputKind kind = kinds[c.below(c.chance(70) ? 3 : kinds.size())];
        const std::size_t p = c.below(3);
        std::optional<bool> persistent;
        if (p > 0) persistent = p == 1;
        const std::size_t where = c.below(3);
        Node* anchor = nodes[c.below(nodes.size())];
        order_is_callers = true;
        guard_mode = static_cast<int>(where);
        guard_anchor = anchor;
        what = "create_constant_placeholder('" + name + "', " +
               std::string(epgraph::kind_name(kind)) + ", persistent " +
               (persistent ? (*persistent ? "true" : "false") : "unset") + ") " +
               (where == 0
                    ? std::string("at the default point")
                    : std::string(where == 1 ? "before " : "after ") + std::string(anchor->name()));
        const bool shared = epgraph::find_requested_placeholder(ep.graph(), name) != nullptr;
        must_fail = epgraph::detail::is_blank(name) ||
                    (!shared &&
                     (kind == InputKind::USER_INPUT || kind == InputKind::TOKEN ||
                      kind == InputKind::CUSTOM_OBJ || (kind == InputKind::BUFFER && !persistent)));
        Tensor data = random_tensor(c);
        call = [&ep, name, kind, data, persistent, shared] {
          const std::size_t before = ep.graph().num_placeholders();
          Node* n = epgraph::create_constant_placeholder(ep, name, kind, data, persistent);
          if (n == nullptr || n->op() != epgraph::OpCode::placeholder) {
            throw std::logic_error("did not return a placeholder");
          }
          if (ep.graph().num_placeholders() != before + (shared ? 0 : 1)) {
            throw std::logic_error("wrong number of placeholders afterwards");
          }
          const epgraph::InputSpec* spec = epgraph::input_spec_for(ep, n);
          if (!shared && (spec == nullptr || spec->kind() != kind)) {
            throw std::logic_error("the new input spec has the wrong kind");
          }
        };
        break;
      }
      case 2: {  // delete_constant_placeholder
        Node* n = pick_node();
        what = "delete_constant_placeholder(" +
               (n ? std::string(n->name()) + (n == foreign ? " (foreign)" : "") : "null") + ")";
        must_fail = n == nullptr || n == foreign || !n->users().empty() ||
                    n->op() != epgraph::OpCode::placeholder;
        call = [&ep, n] {
          const std::size_t size = ep.graph().size();
          epgraph::delete_constant_placeholder(ep, n);
          if (ep.graph().size() != size - 1) throw std::logic_error("node count did not drop");
        };
        break;
      }
      case 3: {  // erase_node: compute nodes, or anything with users, or an insertion anchor
        Node* n = pick_node();
        if (n != nullptr && n != foreign && n->users().empty() &&
            (n->op() == epgraph::OpCode::placeholder || n->op() == epgraph::OpCode::output)) {
          // Erasing an unused placeholder or the output node breaks the signature by design
          // (Graph::erase_node is not signature-aware): anchor a guard on it instead, so the
          // erase must fail.
          guard_mode = c.chance(50) ? 1 : 2;
          guard_anchor = n;
        }
        what = "erase_node(" +
               (n ? std::string(n->name()) + (n == foreign ? " (foreign)" : "") : "null") +
               (guard_mode ? ") with a guard on it" : ")");
        must_fail = n == nullptr || n == foreign || !n->users().empty() || guard_mode != 0;
        call = [&ep, n] { ep.graph().erase_node(n); };
        break;
      }
      case 4: {  // replace_all_uses_with
        Node* old = nodes[c.below(nodes.size())];
        Node* rep = pick_node();
        const std::size_t filter = c.below(3);  // all users, all but output, output only
        std::function<bool(Node*)> cb;
        if (filter == 1) cb = [](Node* u) { return u->op() != epgraph::OpCode::output; };
        if (filter == 2) cb = [](Node* u) { return u->op() == epgraph::OpCode::output; };
        bool uses_itself = false;
        bool out_of_order = false;
        if (rep != nullptr && rep != foreign && rep != old) {
          const std::size_t at = detail::position(ep.graph(), rep);
          for (Node* u : old->users()) {
            if (cb && !cb(u)) continue;
            if (u == rep) uses_itself = true;
            if (detail::position(ep.graph(), u) <= at) out_of_order = true;
          }
        }
        // A replacement defined after a user would break topological order: FX does not check
        // that (nor does epgraph), so such calls are not made.
        if (out_of_order && !uses_itself) continue;
        what = std::string(old->name()) + ".replace_all_uses_with(" +
               (rep ? std::string(rep->name()) + (rep == foreign ? " (foreign)" : "") : "null") +
               (filter == 0   ? ")"
                : filter == 1 ? ", not output)"
                              : ", output only)");
        must_fail = rep == nullptr || rep == foreign || uses_itself;
        call = [old, rep, cb] { (void)old->replace_all_uses_with(rep, cb); };
        break;
      }
      case 5: {  // set_buffer_mutation
        std::vector<std::string> targets;
        for (const auto& s : ep.graph_signature().input_specs) {
          if (s.target()) targets.push_back(*s.target());
        }
        targets.emplace_back("no_such_buffer");
        const std::string target = targets[c.below(targets.size())];
        Node* n = pick_node();
        what = "set_buffer_mutation('" + target + "', " +
               (n ? std::string(n->name()) + (n == foreign ? " (foreign)" : "") : "null") + ")";
        must_fail = n == nullptr || n == foreign || n->op() == epgraph::OpCode::output;
        call = [&ep, target, n] { epgraph::set_buffer_mutation(ep, target, n); };
        break;
      }
      case 6: {  // rename_node
        Node* n = pick_node();
        const std::string name = pick_name();
        what = "rename_node(" +
               (n ? std::string(n->name()) + (n == foreign ? " (foreign)" : "") : "null") + ", '" +
               name + "')";
        must_fail = n == nullptr || n == foreign;
        call = [&ep, n, name] { ep.graph().rename_node(n, name); };
        break;
      }
      case 7: {  // clone: equal snapshot, and keep editing the copy
        what = "clone()";
        Program copy = ep.clone();
        if (snapshot(copy) != snapshot(ep)) return "clone() differs from the original";
        ep = std::move(copy);
        ++st.calls;
        ++st.succeeded;
        continue;
      }
      case 8: {  // set_param_tensor on a random node
        Node* n = pick_node();
        Tensor data = random_tensor(c);
        what = "set_param_tensor(" + (n ? std::string(n->name()) : "null") + ")";
        call = [&ep, n, data] { epgraph::set_param_tensor(ep, n, data); };
        break;
      }
      case 9: {  // Node::prepend / append of a non-placeholder (moving placeholders reorders
                 // the inputs against the signature, so only refused placeholder moves are made).
        // Not in sequences that save and reload: torch's format writes a getitem as an output of
        // the node it reads, so a node moved between the two comes back after the getitem (found
        // by fuzz_edits; the reloaded program is equivalent but not node-for-node the same).
        if (round_trip) continue;
        Node* x = pick_node();
        Node* anchor = nodes[c.below(nodes.size())];
        const bool before = c.chance(50);
        Node* const prev = before ? anchor->prev() : anchor;
        Node* const next = before ? anchor : anchor->next();
        const bool ours = x != nullptr && x != foreign;
        const bool no_op = ours && (x == anchor || x == prev || x == next);
        if (ours && !no_op && x->op() == epgraph::OpCode::placeholder &&
            (prev == nullptr || prev->op() == epgraph::OpCode::placeholder)) {
          continue;
        }
        what = std::string(anchor->name()) + (before ? ".prepend(" : ".append(") +
               (x ? std::string(x->name()) + (x == foreign ? " (foreign)" : "") : "null") + ")";
        must_fail = !ours || (!no_op && (x->op() == epgraph::OpCode::placeholder ||
                                         x->op() == epgraph::OpCode::output ||
                                         (prev && prev->op() == epgraph::OpCode::output) ||
                                         (next && next->op() == epgraph::OpCode::placeholder)));
        call = [x, anchor, before] { before ? anchor->prepend(x) : anchor->append(x); };
        break;
      }
      case 10: {  // eliminate_dead_code on the program, sometimes under an insertion guard
        guard_mode = static_cast<int>(c.below(3));
        guard_anchor = nodes[c.below(nodes.size())];
        what = "eliminate_dead_code(program)" +
               (guard_mode ? std::string(" with a guard on ") + std::string(guard_anchor->name())
                           : std::string());
        call = [&ep] {
          const std::size_t size = ep.graph().size();
          const bool changed = epgraph::eliminate_dead_code(ep);
          if (changed != (ep.graph().size() < size)) throw std::logic_error("wrong result");
          if (epgraph::eliminate_dead_code(ep)) throw std::logic_error("not a fixed point");
        };
        break;
      }
      case 11: {  // stable_topological_sort: the programs are sorted, so nothing may move
        what = "stable_topological_sort()";
        call = [&ep] {
          const std::string before = epgraph::to_string(ep.graph());
          epgraph::stable_topological_sort(ep.graph());
          if (epgraph::to_string(ep.graph()) != before) {
            throw std::logic_error("moved nodes of a sorted graph");
          }
        };
        break;
      }
      case 12: {  // node_copy of a compute node (copying a placeholder adds an input the
                  // signature lacks) or of the output node (refused: a second output)
        Node* x = nodes[c.below(nodes.size())];
        if (x->op() == epgraph::OpCode::placeholder) continue;
        // A second getitem of the same tuple index cannot be saved (torch's serializer merges
        // such duplicates into one value; epgraph's saver refuses them, with the reason), so
        // sequences that save and reload do not make one.
        if (round_trip && x->target() == "operator.getitem") continue;
        what = "node_copy(" + std::string(x->name()) + ")";
        must_fail = x->op() == epgraph::OpCode::output;
        call = [&ep, x] {
          Node* copy = ep.graph().node_copy(*x);
          if (copy->target() != x->target() || copy->args() != x->args()) {
            throw std::logic_error("the copy differs");
          }
        };
        break;
      }
      case 13: {  // replace_pattern: a one-node pattern of an add/mul of the program (its
                  // literals kept, its inputs as placeholders) replaced by the same call, which
                  // rewrites every occurrence; or refused: a replacement with an extra input
        Node* x = nodes[c.below(nodes.size())];
        if (x->op() != epgraph::OpCode::call_function ||
            (x->target() != "torch.ops.aten.add.Tensor" &&
             x->target() != "torch.ops.aten.mul.Tensor")) {
          continue;
        }
        must_fail = c.chance(25);
        auto pattern = detail::one_node_pattern(*x, false);
        auto replacement = detail::one_node_pattern(*x, must_fail);
        what = std::string("replace_pattern(") + std::string(x->name()) +
               (must_fail ? ", with an extra input)" : ")");
        call = [&ep, p = std::shared_ptr<epgraph::Graph>(std::move(pattern)),
                r = std::shared_ptr<epgraph::Graph>(std::move(replacement))] {
          const std::size_t size = ep.graph().size();
          // The generator's values need not agree with the shapes (infer_meta may refuse them):
          // a copy that got none takes the value of the node it replaced, as a pass would.
          std::map<std::string, epgraph::NodeValue, std::less<>> vals;
          for (const Node& n : ep.graph().nodes()) vals.emplace(n.name(), n.meta().val);
          const auto replaced = epgraph::replace_pattern(ep.graph(), *p, *r);
          for (const epgraph::ReplacedPatterns& rp : replaced) {
            Node* copy = rp.replacements.at(0);
            if (!copy->meta().val.has_value()) {
              copy->mutable_meta().val = vals.at(rp.erased.at(0).second);
            }
          }
          if (replaced.empty() || ep.graph().size() != size) {
            throw std::logic_error(
                "wrong result: no match of the node's own pattern, or nodes lost");
          }
        };
        break;
      }
      default: {  // save/load round trip
        ++st.round_trips;
        std::string problem = round_trip(ep);
        if (!problem.empty()) return "round trip: " + problem;
        continue;
      }
    }

    ++st.calls;
    if (env_number("EPGRAPH_EDIT_TRACE", 0) != 0) std::fprintf(stderr, "edit: %s\n", what.c_str());
    // create_constant_placeholder puts the node where the caller says (as upstream does), so it
    // may break torch's canonical input order, which verify() reports: such a result is checked
    // to have only that violation, for the new node, and then undone from this copy.
    std::optional<Program> backup;
    if (order_is_callers) backup.emplace(ep.clone());
    Snapshot before;
    bool failed = false;
    // Runs the call (under the insertion guard, if any); "" or the problem.
    auto attempt = [&]() -> std::string {
      before = snapshot(ep);
      try {
        call();
      } catch (const std::logic_error& e) {
        if (!detail::is_expected_error(e)) return what + ": wrong result: " + e.what();
        failed = true;
      } catch (const std::exception& e) {
        if (!detail::is_expected_error(e)) {
          return what + ": threw an unexpected exception type: " + e.what();
        }
        failed = true;
      }
      if (failed) {
        const Snapshot after = snapshot(ep);
        if (after != before) {
          std::ostringstream os;
          os << what << " failed but changed the program.\nbefore:\n"
             << before << "\nafter:\n"
             << after;
          return os.str();
        }
      }
      return "";
    };
    std::string problem;
    if (guard_mode == 1) {
      auto at = ep.graph().inserting_before(guard_anchor);
      problem = attempt();
    } else if (guard_mode == 2) {
      auto at = ep.graph().inserting_after(guard_anchor);
      problem = attempt();
    } else {
      problem = attempt();
    }
    if (!problem.empty()) return problem;
    if (failed) {
      ++st.failed;
      continue;
    }
    ++st.succeeded;
    if (must_fail) return what + " succeeded but must fail";
    try {
      // At the strict level: no edit may add a departure from the canonical input order
      // (create_constant_placeholder at a caller's position may; see `backup`).
      epgraph::VerifyOptions strict;
      strict.level = epgraph::VerifyLevel::canonical_order;
      epgraph::verify(ep, strict);
      ep.graph().lint();
    } catch (const epgraph::violations_error& e) {
      if (backup && !e.violations().empty()) {
        // The new placeholder is the one placeholder the backup does not have.
        std::string added;
        for (const Node& n : ep.graph().placeholders()) {
          if (backup->graph().find_node(n.name()) == nullptr) added = std::string(n.name());
        }
        bool only_order = !added.empty();
        for (const std::string& v : e.violations()) {
          const bool order = v.find("inputs must be ordered") != std::string::npos ||
                             v.find("must come before non-persistent") != std::string::npos;
          only_order = only_order && order && v.find("'" + added + "'") != std::string::npos;
        }
        if (only_order) {
          ep = std::move(*backup);
          continue;
        }
      }
      std::ostringstream os;
      os << what << " succeeded but left an invalid program: " << e.what() << "\nbefore:\n"
         << before << "\nafter:\n"
         << snapshot(ep);
      return os.str();
    }
  }
  return "";
}

/// Generates a program, checks that it verifies, and runs `steps` random edits on it; "" or the
/// first problem.
inline std::string run_random_sequence(Chooser& c, std::size_t steps,
                                       const RoundTrip& round_trip = {},
                                       EditStats* stats = nullptr) {
  Program ep = random_program(c);
  try {
    epgraph::VerifyOptions strict;  // generated programs keep the canonical input order
    strict.level = epgraph::VerifyLevel::canonical_order;
    epgraph::verify(ep, strict);
  } catch (const epgraph::violations_error& e) {
    return std::string("generated program does not verify: ") + e.what() + "\n" +
           epgraph::to_string(ep.graph()) + epgraph::to_string(ep.graph_signature());
  }
  if (round_trip) {
    std::string problem = round_trip(ep);
    if (!problem.empty()) return "round trip of the generated program: " + problem;
  }
  return run_random_edits(ep, c, steps, round_trip, stats);
}

}  // namespace epgraph_test
