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

}  // namespace epgraph
