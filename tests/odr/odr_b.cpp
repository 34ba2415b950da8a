// ODR check, part 2 (see odr_common.hpp).
// SPDX-License-Identifier: BSD-3-Clause
#include "odr_common.hpp"

int epgraph_odr_b();

int epgraph_odr_b() { return epgraph_odr_use_headers(); }
