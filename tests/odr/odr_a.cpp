// ODR check, part 1 (see odr_common.hpp).
// SPDX-License-Identifier: BSD-3-Clause
#include "odr_common.hpp"

int epgraph_odr_b();

int main() { return epgraph_odr_use_headers() + epgraph_odr_b(); }
