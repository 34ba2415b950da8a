// State targets that ep.module() cannot register: module_attribute_in.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// torch builds `ep.module()` (torch/export/_unlift.py) by registering every parameter, buffer
/// and constant of the program on a torch.fx.GraphModule under its target, walking a dotted
/// target's prefix through submodules (`_assign_attr`, torch/export/unflatten.py). A target
/// component that names an attribute the module already has (`forward`, `training`, `to`,
/// `graph`, `_modules`, ...) cannot be registered: torch raises KeyError("attribute 'forward'
/// already exists") when the module is built, although torch.export.save, torch.export.load
/// and torch's verifier accept the program. epgraph refuses such targets where it makes them
/// (create_mutable_buffer, create_constant_placeholder) and reports them in verify.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string_view>

#include "detail/module_attribute_table.hpp"

namespace epgraph {

/// The first dot-separated component of state target `target` (a state_dict or constants key,
/// such as `layers.0.attn.k_cache`) that names an attribute the module `ep.module()` builds
/// already has at that depth, or nullopt when every component is free. The first component is
/// checked against the root module's attributes (a GraphModule: `forward`, `graph`, `code`,
/// `meta`, `training`, ...), the others against those of a plain torch.nn.Module (the
/// submodules torch makes on the way: `forward`, `training`, `to`, ...). The lists are torch
/// 2.13's (tools/gen_module_attributes.py, which checks that register_buffer refuses each).
/// The returned view points into `target`. Throws nothing. O(components * log 160).
/// Mirrors the check in torch.nn.Module.register_buffer / register_parameter
/// (torch/nn/modules/module.py: "attribute '<name>' already exists"), applied ahead of time.
[[nodiscard]] inline std::optional<std::string_view> module_attribute_in(
    std::string_view target) noexcept {
  bool root = true;
  while (true) {
    const std::size_t dot = target.find('.');
    const std::string_view part = target.substr(0, dot);
    const bool taken = root ? std::binary_search(detail::root_module_attributes.begin(),
                                                 detail::root_module_attributes.end(), part)
                            : std::binary_search(detail::nested_module_attributes.begin(),
                                                 detail::nested_module_attributes.end(), part);
    if (taken) return part;
    if (dot == std::string_view::npos) return std::nullopt;
    target.remove_prefix(dot + 1);
    root = false;
  }
}

/// Whether state targets `a` and `b` cannot both be registered on the module ep.module() builds:
/// one is the other followed by a dot and more (`lin` and `lin.weight`), so its last component
/// would be both a tensor attribute and the submodule the other is registered in. torch's
/// loader and verifier accept such a program; building its module fails ("Node lin_weight
/// target lin.weight references nonexistent attribute weight of lin"). Throws nothing.
/// O(length of the shorter).
/// Mirrors, ahead of time, the walk of torch's `_assign_attr` (torch/export/unflatten.py) through
/// a dotted target's submodules, which fails on a component that is a tensor.
[[nodiscard]] inline bool module_paths_clash(std::string_view a, std::string_view b) noexcept {
  if (a.size() == b.size()) return false;
  const std::string_view shorter = a.size() < b.size() ? a : b;
  const std::string_view longer = a.size() < b.size() ? b : a;
  return longer.substr(0, shorter.size()) == shorter && longer[shorter.size()] == '.';
}

/// Whether state target `target` falls on the root-level submodule `submodule` (a nested graph
/// the program registers under a get_attr target, e.g. `true_graph_0`): the target is the
/// submodule's name (torch: KeyError "attribute 'true_graph_0' already exists") or lies inside
/// it (`true_graph_0.w` would become an attribute of the branch's module). Throws nothing.
/// O(length of `submodule`).
/// Mirrors, ahead of time, torch.nn.Module.register_module / register_buffer's "attribute
/// already exists" check (torch/nn/modules/module.py) when ep.module() registers both.
[[nodiscard]] inline bool falls_on_submodule(std::string_view target,
                                             std::string_view submodule) noexcept {
  if (target.substr(0, submodule.size()) != submodule) return false;
  return target.size() == submodule.size() || target[submodule.size()] == '.';
}

}  // namespace epgraph
