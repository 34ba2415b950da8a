// The schema version and limits of torch.export's JSON format as epgraph::json reads and writes it.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>

#include "../version.hpp"

// 1 when epgraph::json links simdjson (defined on the target's interface by CMakeLists.txt).
#ifndef EPGRAPH_JSON_HAS_SIMDJSON
#define EPGRAPH_JSON_HAS_SIMDJSON 0
#endif

namespace epgraph::json {

/// Newest schema major version this reader and writer implement (torch 2.13 writes 8.20).
inline constexpr std::int64_t schema_major = schema_version_major;
/// Schema minor version written by save.
inline constexpr std::int64_t schema_minor = schema_version_minor;

/// Deepest nesting of JSON arrays and objects the loader accepts. Real exported programs nest
/// about 10 levels (each nested control-flow graph adds about 7); the limit keeps the recursive
/// parts of loading and saving (nested graphs, arguments, opaque fields) far from the stack's end.
inline constexpr std::size_t max_json_depth = 512;

}  // namespace epgraph::json
