// epgraph's version (the one place it is defined; CMake reads it).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// The single source of epgraph's version. CMake reads these three lines.
#define EPGRAPH_VERSION_MAJOR 0
#define EPGRAPH_VERSION_MINOR 1
#define EPGRAPH_VERSION_PATCH 0

namespace epgraph {

/// The serialization schema version of torch.export that this release reads and writes
/// (torch/_export/serde/schema.yaml, SCHEMA_VERSION; torch 2.13 writes 8.20). The one definition:
/// epgraph::json::schema_major / schema_minor are these.
inline constexpr int schema_version_major = 8;
inline constexpr int schema_version_minor = 20;

}  // namespace epgraph
