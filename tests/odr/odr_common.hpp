// ODR check: what both translation units of the ODR test include and use. The umbrella header
// (and, when EPGRAPH_ODR_IO is defined, the JSON and archive headers) lands in two translation
// units of one program: a non-inline function or variable defined in a header breaks the link.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <epgraph/epgraph.hpp>
#ifdef EPGRAPH_ODR_IO
#include <epgraph/archive/archive.hpp>
#include <epgraph/json/json.hpp>
#endif

// Uses a graph and, with the I/O headers, instantiates templates both translation units share
// (without running them). Returns 0.
inline int epgraph_odr_use_headers() {
  epgraph::Graph g;
  static_cast<void>(g);
#ifdef EPGRAPH_ODR_IO
  auto* save = &epgraph::json::save_exported_program_to_string<epgraph::HostTensor>;
  auto* load = &epgraph::archive::load_archive<epgraph::HostTensor>;
  static_cast<void>(save);
  static_cast<void>(load);
#endif
  return 0;
}
