// epgraph: read, edit, validate and write torch.export exported programs from C++.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// Umbrella header of the optional JSON part (target epgraph::json, needs nlohmann_json):
/// load_exported_program / save_exported_program and the TensorMeta helpers.

#include "deserialize.hpp"
#include "error.hpp"
#include "serialize.hpp"
#include "tensor_meta.hpp"
