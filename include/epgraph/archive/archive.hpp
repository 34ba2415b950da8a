// Umbrella header of the optional archive target epgraph::archive (libzip).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// Umbrella header of epgraph's archive layer (.pt2 / .ep zip files): needs libzip (`-lzip`,
/// CMake target epgraph::archive) and epgraph::json (nlohmann_json).

#include "archive_error.hpp"
#include "load.hpp"
#include "pt2_archive.hpp"
#include "save.hpp"
#include "tensor_data.hpp"
#include "zip.hpp"
