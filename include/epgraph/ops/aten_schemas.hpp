// The aten:: and prims:: operator schemas of torch 2.13.0: their count, version, and a way to add
// them to a registry of your own. global_registry() holds them from its first use.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <string_view>

#include "detail/aten_schema_table.hpp"
#include "registry.hpp"

namespace epgraph {

/// The torch version the table was generated from (tools/gen_aten_schemas.py).
inline constexpr std::string_view aten_schemas_torch_version =
    detail::aten_schema_texts_torch_version;
/// Number of schemas in the table (aten:: and prims:: overloads).
inline constexpr std::size_t aten_schema_count = detail::aten_schema_text_count;

/// Adds every aten:: and prims:: schema of torch 2.13.0 to `registry` (parsed on first lookup);
/// names already registered keep their schema. global_registry() does this itself on first use,
/// so calling it for the global registry changes nothing; it is for a registry the caller made.
/// Arguments: `registry`, the registry to fill (default: global_registry()).
/// Errors: std::bad_alloc (strong guarantee: nothing is added then).
/// Complexity: O(n log n) for n = aten_schema_count.
/// Mirrors: the dispatcher's schema table (`torch._C._jit_get_all_schemas()`).
inline void register_aten_schemas(OperatorRegistry& registry = global_registry()) {
  registry.register_static(detail::aten_schema_texts, aten_schema_count);
}

}  // namespace epgraph
