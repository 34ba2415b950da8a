// Compiled mode's switches for the core's non-template functions. Header-only (the default), their
// definitions come with the headers and are `inline`. In compiled mode (CMake option
// EPGRAPH_COMPILED, target epgraph::compiled, which defines EPGRAPH_COMPILED=1) a header gives only
// their declarations and src/compiled.cpp defines them once, not inline, so a file that calls them
// compiles neither them nor what they use.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#if defined(EPGRAPH_COMPILED) && EPGRAPH_COMPILED
#define EPGRAPH_DETAIL_CORE_INLINE
#if defined(EPGRAPH_DETAIL_BUILDING_COMPILED)
#define EPGRAPH_DETAIL_CORE_DEFINITIONS 1  // src/compiled.cpp
#else
#define EPGRAPH_DETAIL_CORE_DEFINITIONS 0  // a user's file: declarations only
#endif
#else
#define EPGRAPH_DETAIL_CORE_INLINE inline
#define EPGRAPH_DETAIL_CORE_DEFINITIONS 1
#endif
