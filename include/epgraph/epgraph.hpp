// Umbrella header of the dependency-free core.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// Umbrella header: the whole dependency-free core. Optional parts (JSON, archives) have their
/// own headers under epgraph/json/ and epgraph/archive/ and are not included here.

#include "argument.hpp"
#include "aten_schemas.hpp"
#include "bind.hpp"
#include "edit.hpp"
#include "error.hpp"
#include "exported_program.hpp"
#include "graph.hpp"
#include "graph_signature.hpp"
#include "infer_meta.hpp"
#include "lookup.hpp"
#include "names.hpp"
#include "node.hpp"
#include "ordered_dict.hpp"
#include "pass_manager.hpp"
#include "passes.hpp"
#include "print.hpp"
#include "registry.hpp"
#include "schema.hpp"
#include "subgraph_matcher.hpp"
#include "subgraph_rewriter.hpp"
#include "tensor.hpp"
#include "value.hpp"
#include "verify.hpp"
#include "version.hpp"
