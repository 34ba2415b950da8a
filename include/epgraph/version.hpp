// epgraph: read, edit, validate and write torch.export exported programs from C++.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// The single source of epgraph's version. CMake reads these three lines.
#define EPGRAPH_VERSION_MAJOR 0
#define EPGRAPH_VERSION_MINOR 1
#define EPGRAPH_VERSION_PATCH 0

namespace epgraph {

/// The serialization schema version of torch.export that this release writes
/// (torch/_export/serde/schema.yaml, SCHEMA_VERSION).
inline constexpr int schema_version_major = 8;

}  // namespace epgraph
