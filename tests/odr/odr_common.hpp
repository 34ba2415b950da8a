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

// Uses a graph. Returns 0. (What breaks the link is a non-inline function, member function,
// explicit specialization or variable defined in a header: those are emitted by every translation
// unit that includes the header, used or not. Taking the address of the I/O templates here, as
// this file once did, only made each unit generate the readers and writers: about 27 of the
// test's 56 compile-seconds in CI, and no link error it could add.)
inline int epgraph_odr_use_headers() {
  epgraph::Graph g;
  static_cast<void>(g);
  return 0;
}
