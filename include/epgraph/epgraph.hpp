// Umbrella header of the dependency-free core.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// Umbrella header: the whole dependency-free core. Optional parts (JSON, archives) have their
/// own headers under epgraph/json/ and epgraph/archive/ and are not included here.

#include "error.hpp"
#include "ir/argument.hpp"
#include "ir/bind.hpp"
#include "ir/graph.hpp"
#include "ir/names.hpp"
#include "ir/node.hpp"
#include "ir/print.hpp"
#include "ir/symbolic.hpp"
#include "ir/tensor.hpp"
#include "ir/value.hpp"
#include "ops/aten_schemas.hpp"
#include "ops/registry.hpp"
#include "ops/schema.hpp"
#include "passes/extract_partition.hpp"
#include "passes/infer_meta.hpp"
#include "passes/outline_partition.hpp"
#include "passes/pass_manager.hpp"
#include "passes/program_passes.hpp"
#include "passes/propagate_meta.hpp"
#include "passes/specialize.hpp"
#include "passes/subgraph_matcher.hpp"
#include "passes/subgraph_rewriter.hpp"
#include "passes/topological_sort.hpp"
#include "program/edit.hpp"
#include "program/exported_program.hpp"
#include "program/graph_signature.hpp"
#include "program/lookup.hpp"
#include "program/ordered_dict.hpp"
#include "program/verify.hpp"
#include "version.hpp"
