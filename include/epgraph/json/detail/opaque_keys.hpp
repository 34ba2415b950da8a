// Keys of ProgramMetadata::opaque that the JSON reader writes and the writer reads back.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (both directions).

#include <string_view>

namespace epgraph::json::detail {

// ProgramMetadata::opaque key of the schema version of a file newer than 8.20 (its JSON text,
// `{"major":8,"minor":21}`): save writes that version back. Not a field of the document.
inline constexpr std::string_view kKeptSchemaVersion = "json.schema_version";

}  // namespace epgraph::json::detail
