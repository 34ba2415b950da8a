// Umbrella header of the optional JSON target epgraph::json (nlohmann_json).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// Umbrella header of the optional JSON part (target epgraph::json, needs nlohmann_json):
/// load_exported_program / save_exported_program and the TensorMeta helpers.

#include "deserialize.hpp"
#include "deserializer.hpp"
#include "error.hpp"
#include "load.hpp"
#include "nested_graphs.hpp"
#include "save.hpp"
#include "serialize.hpp"
#include "tensor_meta.hpp"
